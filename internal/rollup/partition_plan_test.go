package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestWindowsPlanTheirDayPartitions: the window statement of one turbine's
// day plans and locks the readings partitions of that day only (2 for a
// London summer day: it spans two UTC days), not every partition retention
// keeps (12 here). The turbine's readings range comes from the run's
// windows, computed inside the statement, so only the day's bounds, passed
// as arguments, let the planner drop the other partitions; without them
// each statement planned all of them: +3 ms a statement with 62
// partitions, four statements in a one-turbine correction.
func TestWindowsPlanTheirDayPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	q := sharddb.New(pool)
	first := time.Date(2026, 7, 25, 0, 0, 0, 0, time.UTC)
	for d := 0; d < 12; d++ {
		_, err := q.ReadingsEnsurePartition(ctx, first.AddDate(0, 0, d))
		testdb.Must(t, err, "partition")
	}
	dayStart := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC) // local midnight of 1 August, Europe/London
	dayEnd := dayStart.Add(24 * time.Hour)
	testdb.Exec(t, pool, `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms)
		SELECT 'T-01', $1::timestamptz + k * interval '2 seconds', $1::timestamptz + k * interval '2 seconds' + interval '1 second', true, 1000, 8
		FROM generate_series(0, 43199) AS k`, dayStart)
	params := sharddb.TurbineWindowUpsertParams{
		DayStart: dayStart, DayEnd: dayEnd, TurbineIds: []string{"T-01"}, CadenceSeconds: []int32{2},
		ServiceFrom: []time.Time{dayStart}, ServiceTo: []time.Time{dayEnd}, FirstWindow: []int32{0}, LastWindow: []int32{1439},
		WindowS: 60, LaneThresholdSeconds: 60, EarlyToleranceSeconds: 2, FarmID: "f", Day: dayStart, ComputedAt: dayEnd,
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := sharddb.New(tx).TurbineWindowUpsert(ctx, params)
		if err != nil {
			return err
		}
		if len(rows) != 1440 || rows[0].Windows != 1440 || rows[0].RowsRead != 43200 {
			t.Fatalf("wrote %d sums, first %+v; want 1,440 windows from 43,200 readings", len(rows), rows[0])
		}
		var locked []string
		if err := tx.QueryRow(ctx, `
			SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
			FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE l.pid = pg_backend_pid() AND c.relkind = 'r' AND c.relname LIKE 'readings_p%'`).Scan(&locked); err != nil {
			return err
		}
		if len(locked) != 2 || locked[0] != "readings_p20260731" || locked[1] != "readings_p20260801" {
			t.Fatalf("the statement locked partitions %v; want readings_p20260731 and readings_p20260801 (the day's, of 12)", locked)
		}
		return nil
	})
	testdb.Must(t, err, "windows")
}
