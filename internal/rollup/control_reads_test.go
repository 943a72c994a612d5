package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestControlWritesReadTheirWindows: a recompute's writes on the control
// database (the final rows of its windows from their parts, and the
// reconciliation of fast against final) read the rows of the windows and
// the day they touch, not the farm's history, both when the tables are
// analysed and when the planner knows nothing of them yet (a control
// database freshly loaded, as in the benchmark). With 30 days of windows and
// parts (3 shards), writing one day's 1,440 final rows and reconciling them
// reads no row of farm_window or farm_window_part by a sequential scan, and
// index entries of the day's rows only. Before, both were planned as scans of every row the
// farm had (129,600 parts, 86,400 windows, growing by the day); a probe per
// window, tried first, was planned as a scan per window without statistics.
func TestControlWritesReadTheirWindows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, first := pipelinetest.ControlHistory(t)
	var err error

	// The 19th day: 2026-07-20.
	starts := make([]time.Time, 1440)
	for i := range starts {
		starts[i] = first.Add(time.Duration(18*1440+i) * time.Minute)
	}
	for i, unanalysed := range []bool{false, true} {
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if unanalysed {
				if err := testdb.ForgetStatistics(ctx, tx, "farm_window", "farm_window_part"); err != nil {
					return err
				}
			}
			q := controldb.New(tx)
			written, err := q.FarmWindowFinalWrite(ctx, controldb.FarmWindowFinalWriteParams{FarmID: "f", WindowStarts: starts, ComputedAt: time.Now()})
			if err != nil {
				return err
			}
			if err := q.ReconciliationWrite(ctx, controldb.ReconciliationWriteParams{FarmID: "f", WindowStarts: starts, WithDays: true, MeasuredAt: time.Now()}); err != nil {
				return err
			}
			seqParts, idxParts, err := testdb.TableReads(ctx, tx, "farm_window_part")
			if err != nil {
				return err
			}
			seqWindows, idxWindows, err := testdb.TableReads(ctx, tx, "farm_window")
			if err != nil {
				return err
			}
			var reconciled, dayWindows int64
			if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM reconciliation),
				(SELECT windows FROM reconciliation WHERE scope = 'day' AND day = '2026-07-20')`).Scan(&reconciled, &dayWindows); err != nil {
				return err
			}
			if len(written) != 1440 || written[0].Revision != int32(2+i) {
				t.Fatalf("unanalysed=%v: final write: %d rows (first %+v), want 1440 at revision %d", unanalysed, len(written), written[0], 2+i)
			}
			if reconciled != 1441 || dayWindows != 1440 {
				t.Fatalf("unanalysed=%v: %d reconciliation rows, the day's of %d windows; want 1441 (1,440 windows and their day) and 1440",
					unanalysed, reconciled, dayWindows)
			}
			if seqParts != 0 || seqWindows != 0 {
				t.Fatalf("unanalysed=%v: rows read by sequential scan: %d of farm_window_part, %d of farm_window; want 0 and 0", unanalysed, seqParts, seqWindows)
			}
			// Index entries: the day's 4,320 parts, counted twice when read
			// by a bitmap scan (8,640); of farm_window, three range reads of
			// the day's 2,880 rows (and their dead versions) and the
			// upserts' key probes: at most 8 x 2,880 = 23,040, against the
			// 86,400 rows of the farm's history.
			if idxParts > 2*4320 || idxWindows > 8*2880 {
				t.Fatalf("unanalysed=%v: index entries read: %d of farm_window_part (want <= 8640), %d of farm_window (want <= 23040)",
					unanalysed, idxParts, idxWindows)
			}
			t.Logf("unanalysed=%v: index entries read: %d parts, %d windows", unanalysed, idxParts, idxWindows)
			return nil
		})
		testdb.Must(t, err, "control writes")
	}
}

// TestARangeReconcilesItsWindowsOnly: a correction written in ranges
// reconciles each range's windows without re-reading their day, and the
// day once, with its last range. 100 windows of the 19th day without the
// day: 100 window rows, no day row, at most 800 index entries of
// farm_window (the windows' 200 rows, read twice, and counted twice by a
// bitmap scan), against the day's 2,880. Then the next 40 with the day: 40
// more window rows and the day's row, over all 1,440 of its windows.
func TestARangeReconcilesItsWindowsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, first := pipelinetest.ControlHistory(t)
	noon := first.Add(time.Duration(18*1440+13*60) * time.Minute) // 2026-07-20, 13:00 local
	starts := func(from, n int) []time.Time {
		out := make([]time.Time, n)
		for i := range out {
			out[i] = noon.Add(time.Duration(from+i) * time.Minute)
		}
		return out
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		_, idx0, err := testdb.TableReads(ctx, tx, "farm_window")
		if err != nil {
			return err
		}
		if err := q.ReconciliationWrite(ctx, controldb.ReconciliationWriteParams{FarmID: "f", WindowStarts: starts(0, 100), MeasuredAt: time.Now()}); err != nil {
			return err
		}
		_, idx, err := testdb.TableReads(ctx, tx, "farm_window")
		if err != nil {
			return err
		}
		var windows, days int64
		count := func() error {
			return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE scope = 'window'), count(*) FILTER (WHERE scope = 'day') FROM reconciliation`).Scan(&windows, &days)
		}
		if err := count(); err != nil {
			return err
		}
		if windows != 100 || days != 0 || idx-idx0 > 800 {
			t.Fatalf("100 windows without the day: %d window rows, %d day rows, %d index entries of farm_window; want 100, 0, <= 800", windows, days, idx-idx0)
		}
		t.Logf("100 windows without the day: %d index entries of farm_window", idx-idx0)
		if err := q.ReconciliationWrite(ctx, controldb.ReconciliationWriteParams{FarmID: "f", WindowStarts: starts(100, 40), WithDays: true, MeasuredAt: time.Now()}); err != nil {
			return err
		}
		if err := count(); err != nil {
			return err
		}
		var dayWindows int64
		if err := tx.QueryRow(ctx, `SELECT windows FROM reconciliation WHERE scope = 'day' AND day = '2026-07-20'`).Scan(&dayWindows); err != nil {
			return err
		}
		if windows != 140 || days != 1 || dayWindows != 1440 {
			t.Fatalf("40 more with the day: %d window rows, %d day rows over %d windows; want 140, 1, 1440", windows, days, dayWindows)
		}
		return nil
	})
	testdb.Must(t, err, "reconcile")
}

// TestOffGridDeleteReadsItsDay: what closing a day deletes of another grid
// on the control database (FarmWindowPartOffGridDelete) reads the day's key
// range (a day either side), never the farm's 30 days of history (windows,
// parts and measurements), analysed or not; on the day's own grid it deletes nothing, and on a grid of 10
// minutes it deletes the shard's 1,440 parts of 1 minute, the day's 1,440
// final rows and their 1,440 window measurements and the day's (none of
// them is of a 10-minute window), and leaves the fast rows and the other
// shards' parts.
func TestOffGridDeleteReadsItsDay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, first := pipelinetest.ControlHistory(t)
	dayStart := first.Add(18 * 24 * time.Hour) // 2026-07-20, Europe/London (summer time all month)
	day := time.Date(2026, 7, 20, 0, 0, 0, 0, time.UTC)
	// every window of the 30 days measured, and their days: 43,230 rows
	starts := make([]time.Time, 30*1440)
	for i := range starts {
		starts[i] = first.Add(time.Duration(i) * time.Minute)
	}
	testdb.Must(t, controldb.New(pool).ReconciliationWrite(ctx, controldb.ReconciliationWriteParams{FarmID: "f", WindowStarts: starts, WithDays: true, MeasuredAt: time.Now()}), "measure the month")
	testdb.Exec(t, pool, `ANALYZE reconciliation`)

	for _, c := range []struct {
		windowS                        int32
		parts, finals, reconciliations int64
	}{{60, 0, 0, 0}, {600, 1440, 1440, 1441}} {
		for _, unanalysed := range []bool{false, true} {
			tx, err := pool.Begin(ctx)
			testdb.Must(t, err, "begin")
			if unanalysed {
				testdb.Must(t, testdb.ForgetStatistics(ctx, tx, "farm_window", "farm_window_part", "reconciliation"), "forget statistics")
			}
			// The session's counts not yet flushed (Postgres sends them at
			// most once a second) show in the xact counters too: the
			// statement's reads are the difference.
			seqParts0, idxParts0, err := testdb.TableReads(ctx, tx, "farm_window_part")
			testdb.Must(t, err, "reads")
			seqWindows0, idxWindows0, err := testdb.TableReads(ctx, tx, "farm_window")
			testdb.Must(t, err, "reads")
			seqMeasured0, _, err := testdb.TableReads(ctx, tx, "reconciliation")
			testdb.Must(t, err, "reads")
			del, err := controldb.New(tx).FarmWindowPartOffGridDelete(ctx, controldb.FarmWindowPartOffGridDeleteParams{
				FarmID: "f", ShardName: "s1", Day: day, DayStart: dayStart, DayEnd: dayStart.Add(24 * time.Hour), WindowS: c.windowS,
			})
			testdb.Must(t, err, "off-grid delete")
			seqParts, idxParts, err := testdb.TableReads(ctx, tx, "farm_window_part")
			testdb.Must(t, err, "reads")
			seqWindows, idxWindows, err := testdb.TableReads(ctx, tx, "farm_window")
			testdb.Must(t, err, "reads")
			seqMeasured, _, err := testdb.TableReads(ctx, tx, "reconciliation")
			testdb.Must(t, err, "reads")
			seqParts, idxParts, seqWindows, idxWindows, seqMeasured = seqParts-seqParts0, idxParts-idxParts0, seqWindows-seqWindows0, idxWindows-idxWindows0, seqMeasured-seqMeasured0
			var fast, otherParts int64
			testdb.Must(t, tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM farm_window WHERE day = '2026-07-20' AND path = 'fast'),
				(SELECT count(*) FROM farm_window_part WHERE day = '2026-07-20' AND shard_name <> 's1')`).Scan(&fast, &otherParts), "count")
			testdb.Must(t, tx.Rollback(ctx), "roll back")
			if del.Parts != c.parts || del.Finals != c.finals || del.Reconciliations != c.reconciliations {
				t.Fatalf("window %d s, unanalysed=%v: deleted %+v; want %d parts, %d finals, %d reconciliations",
					c.windowS, unanalysed, del, c.parts, c.finals, c.reconciliations)
			}
			if fast != 1440 || otherParts != 2880 {
				t.Fatalf("window %d s, unanalysed=%v: %d fast rows and %d parts of s2 and s3 left; want 1440 and 2880", c.windowS, unanalysed, fast, otherParts)
			}
			if seqParts != 0 || seqWindows != 0 || seqMeasured != 0 {
				t.Fatalf("window %d s, unanalysed=%v: rows read by sequential scan: %d of farm_window_part, %d of farm_window, %d of reconciliation; want 0, 0 and 0",
					c.windowS, unanalysed, seqParts, seqWindows, seqMeasured)
			}
			// The three days' 12,960 parts and 8,640 windows of the key
			// range (counted twice by a bitmap scan, and again with the
			// dead versions of the rows just deleted), and the probes of the
			// window measurements (both rows of a window): measured 30,240
			// and 31,680 at most (unanalysed, 10 minutes), against the
			// history's 129,600 parts and 86,400 windows.
			if idxParts > 3*12960 || idxWindows > 4*8640 {
				t.Fatalf("window %d s, unanalysed=%v: index entries read: %d of farm_window_part (want <= 38880), %d of farm_window (want <= 34560)",
					c.windowS, unanalysed, idxParts, idxWindows)
			}
			t.Logf("window %d s, unanalysed=%v: index entries read: %d parts, %d windows", c.windowS, unanalysed, idxParts, idxWindows)
		}
	}
}
