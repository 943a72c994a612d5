package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/jackc/pgx/v5"
)

// TestControlWritesReadTheirWindows: a recompute's writes on the control
// database (the final rows of its windows from their parts, and the
// reconciliation of fast against final) read the rows of the windows and
// the day they touch, not the farm's history. With 30 days of windows and
// parts (3 shards) analysed, writing one day's 1,440 final rows and
// reconciling them reads no row of farm_window or farm_window_part by a
// sequential scan; before, both were planned as scans of every row the
// farm had (129,600 parts, 86,400 windows: 49 and 60 ms, growing by the
// day).
func TestControlWritesReadTheirWindows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Pool(t, testdb.NewDatabase(t))
	_, err := schema.MigrateControl(ctx, pool)
	testdb.Must(t, err, "migrate control")
	first := time.Date(2026, 7, 1, 23, 0, 0, 0, time.UTC) // local midnight of 2 July, Europe/London
	testdb.Exec(t, pool, `INSERT INTO farm (id, name, timezone) VALUES ('f', 'F', 'Europe/London')`)
	for _, s := range []string{"s1", "s2", "s3"} {
		testdb.Exec(t, pool, `INSERT INTO shard (name, database) VALUES ($1, 'unused_' || $1)`, s)
	}
	testdb.Exec(t, pool, `
		INSERT INTO farm_window_part (farm_id, window_start, shard_name, window_end, day, expected, received, available, late, readings, shard_xid, computed_at)
		SELECT 'f', $1::timestamptz + m * interval '1 minute', 's' || s, $1::timestamptz + (m + 1) * interval '1 minute',
		       date '2026-07-02' + m / 1440, 30, 30, 30, 0, 30, 1, now()
		FROM generate_series(0, 30 * 1440 - 1) AS m, generate_series(1, 3) AS s`, first)
	testdb.Exec(t, pool, `
		INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late, readings, computed_at, complete_through, revision)
		SELECT 'f', $1::timestamptz + m * interval '1 minute', p, $1::timestamptz + (m + 1) * interval '1 minute',
		       date '2026-07-02' + m / 1440, 90, 90, 90, 0, 90, now(), now(), 1
		FROM generate_series(0, 30 * 1440 - 1) AS m, unnest(ARRAY['fast', 'final']) AS p`, first)
	testdb.Exec(t, pool, `ANALYZE farm_window_part`)
	testdb.Exec(t, pool, `ANALYZE farm_window`)

	// The 19th day: 2026-07-20.
	starts := make([]time.Time, 1440)
	for i := range starts {
		starts[i] = first.Add(time.Duration(18*1440+i) * time.Minute)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		written, err := q.FarmWindowFinalWrite(ctx, controldb.FarmWindowFinalWriteParams{FarmID: "f", WindowStarts: starts, ComputedAt: time.Now()})
		if err != nil {
			return err
		}
		if err := q.ReconcileWindows(ctx, controldb.ReconcileWindowsParams{FarmID: "f", WindowStarts: starts, MeasuredAt: time.Now()}); err != nil {
			return err
		}
		var seqParts, seqWindows, reconciled int64
		if err := tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_returned('farm_window_part'::regclass),
			pg_stat_get_xact_tuples_returned('farm_window'::regclass), (SELECT count(*) FROM reconciliation)`).Scan(&seqParts, &seqWindows, &reconciled); err != nil {
			return err
		}
		if len(written) != 1440 || written[0].Revision != 2 {
			t.Fatalf("final write: %d rows (first %+v), want 1440 at revision 2", len(written), written[0])
		}
		if reconciled != 1441 {
			t.Fatalf("%d reconciliation rows, want 1441 (1,440 windows and their day)", reconciled)
		}
		if seqParts != 0 || seqWindows != 0 {
			t.Fatalf("rows read by sequential scan: %d of farm_window_part, %d of farm_window; want 0 and 0", seqParts, seqWindows)
		}
		return nil
	})
	testdb.Must(t, err, "control writes")
}
