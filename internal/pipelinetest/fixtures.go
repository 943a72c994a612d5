package pipelinetest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/testdb"
)

// ControlHistory is the test's copy of a migrated control database holding
// 30 days of farm f's windows (2-31 July, Europe/London): 3 shards' parts
// and a fast and a final row per window, analysed (built once per test
// binary, testdb.Fixture). It returns the first day's start.
func ControlHistory(t *testing.T) (*pgxpool.Pool, time.Time) {
	first := time.Date(2026, 7, 1, 23, 0, 0, 0, time.UTC) // local midnight of 2 July, Europe/London
	dsn := testdb.Fixture(t, "control_history", func(ctx context.Context, pool *pgxpool.Pool) error {
		for _, stmt := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO farm (id, name, timezone) VALUES ('f', 'F', 'Europe/London')`, nil},
			{`INSERT INTO shard (name, database) SELECT s, 'unused_' || s FROM unnest(ARRAY['s1', 's2', 's3']) AS s`, nil},
			{`INSERT INTO farm_window_part (farm_id, window_start, shard_name, window_end, day, expected, received, available, late, readings, shard_xid, computed_at)
			  SELECT 'f', $1::timestamptz + m * interval '1 minute', 's' || s, $1::timestamptz + (m + 1) * interval '1 minute',
			         date '2026-07-02' + m / 1440, 30, 30, 30, 0, 30, 1, now()
			  FROM generate_series(0, 30 * 1440 - 1) AS m, generate_series(1, 3) AS s`, []any{first}},
			{`INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late, readings, computed_at, complete_through, revision)
			  SELECT 'f', $1::timestamptz + m * interval '1 minute', p, $1::timestamptz + (m + 1) * interval '1 minute',
			         date '2026-07-02' + m / 1440, 90, 90, 90, 0, 90, now(), now(), 1
			  FROM generate_series(0, 30 * 1440 - 1) AS m, unnest(ARRAY['fast', 'final']) AS p`, []any{first}},
			{`ANALYZE farm_window_part`, nil},
			{`ANALYZE farm_window`, nil},
		} {
			if _, err := pool.Exec(ctx, stmt.sql, stmt.args...); err != nil {
				return err
			}
		}
		return nil
	})
	return testdb.Pool(t, dsn), first
}
