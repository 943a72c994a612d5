package window_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestDayCloseReadsItsDay: rebuilding a farm-day's window sums when the day
// closes reads that day's rows, not the shard's history, with or without
// statistics. Three days of 20 turbines' windows (86,400 rows) and their
// sums; the middle day's rebuild reads no row of turbine_window or
// farm_window_sum by a sequential scan, and the index entries of that day
// only. It finds the two sums made wrong by hand (one count changed,
// one window with no rows left), puts them right, and leaves the other
// days alone. Before, both tables were read by their day column: a scan of
// every row the shard holds.
func TestDayCloseReadsItsDay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	first := threeDaysOfWindows(t, pool)
	threeDaysOfSums(t, pool, first)
	dayStart := first.Add(24 * time.Hour)
	noon := dayStart.Add(13 * time.Hour)
	// Two wrong sums of the middle day: a count, and a window whose rows
	// are gone.
	testdb.Exec(t, pool, `UPDATE farm_window_sum SET received = 599 WHERE farm_id = 'f' AND window_start = $1`, noon)
	testdb.Exec(t, pool, `DELETE FROM turbine_window WHERE window_start = $1`, noon.Add(time.Minute))

	for _, unanalysed := range []bool{true, false} {
		if !unanalysed {
			testdb.Exec(t, pool, `ANALYZE turbine_window`)
			testdb.Exec(t, pool, `ANALYZE farm_window_sum`)
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if unanalysed {
				if err := testdb.ForgetStatistics(ctx, tx, "turbine_window", "farm_window_sum"); err != nil {
					return err
				}
			}
			res, err := sharddb.New(tx).FarmWindowSumRebuild(ctx, sharddb.FarmWindowSumRebuildParams{
				FarmID: "f", Day: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC), DayStart: dayStart, DayEnd: dayStart.Add(24 * time.Hour),
			})
			if err != nil {
				return err
			}
			seqWindows, idxWindows, err := testdb.TableReads(ctx, tx, "turbine_window")
			if err != nil {
				return err
			}
			seqSums, idxSums, err := testdb.TableReads(ctx, tx, "farm_window_sum")
			if err != nil {
				return err
			}
			wantDiffered := int64(2)
			if !unanalysed {
				wantDiffered = 0 // put right by the first pass
			}
			if res.Differed != wantDiffered || (wantDiffered > 0 && !res.FirstWindow.Equal(noon)) {
				t.Fatalf("unanalysed=%v: %d windows differed, the first %s; want %d, the first %s", unanalysed, res.Differed, res.FirstWindow, wantDiffered, noon)
			}
			if seqWindows != 0 || seqSums != 0 {
				t.Fatalf("unanalysed=%v: rows read by sequential scan: %d of turbine_window, %d of farm_window_sum; want 0 and 0", unanalysed, seqWindows, seqSums)
			}
			// The day's 28,800 window entries (and the dead ones of the rows
			// deleted by hand), counted twice when a bitmap scan reads them;
			// the three days hold 86,400.
			if idxWindows > 58000 || idxSums > 3*1440 {
				t.Fatalf("unanalysed=%v: index entries read: %d of turbine_window (want <= 58000), %d of farm_window_sum (want <= 4320)",
					unanalysed, idxWindows, idxSums)
			}
			t.Logf("unanalysed=%v: index entries read: %d windows, %d sums", unanalysed, idxWindows, idxSums)
			return nil
		})
		testdb.Must(t, err, "rebuild")
	}
	// The middle day's sums are right again; the other days' untouched.
	if n := testdb.Int(t, pool, `SELECT count(*) FROM farm_window_sum WHERE farm_id = 'f' AND day = '2026-08-02' AND received = 600 AND turbines = 20`); n != 1439 {
		t.Fatalf("%d of the middle day's sums hold 20 turbines and 600 received, want 1439 (its 1,440 windows less the one with no rows)", n)
	}
	if n := testdb.Int(t, pool, `SELECT count(*) FROM farm_window_sum WHERE farm_id = 'f' AND window_start = $1`, noon.Add(time.Minute)); n != 0 {
		t.Fatalf("%d sums of the window with no rows left, want 0", n)
	}
	if n := testdb.Int(t, pool, `SELECT count(*) FROM farm_window_sum WHERE farm_id = 'f' AND day <> '2026-08-02'`); n != 2880 {
		t.Fatalf("%d sums of the other days, want 2880", n)
	}
}

// TestMissingWindowsReadTheirRange: the windows of a day with no
// turbine_window row, asked for every turbine when a day closes, are found
// from each turbine's key range of the day, not from the shard's history,
// with or without statistics. Three days of 20 turbines' windows; in the
// middle day, T-03 lost its 12:00 row, T-07's 12:01 row ends a minute late
// (a row of another grid: missing too) and T-09 has an extra row at
// 12:00:30 (off the grid: not a window of the day). Exactly those two
// windows are missing; no row is read by a sequential scan, and no more
// index entries than the day's 28,800. Before, a NOT EXISTS was planned as
// an anti join over the whole table: with 30 days of a 100-turbine farm,
// a sequential scan and an external sort of 4.46 M rows (2.8-4.4 s).
func TestMissingWindowsReadTheirRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	first := threeDaysOfWindows(t, pool)
	dayStart := first.Add(24 * time.Hour)
	noon := dayStart.Add(13 * time.Hour) // 12:00Z, window 780
	testdb.Exec(t, pool, `DELETE FROM turbine_window WHERE turbine_id = 'T-03' AND window_start = $1`, noon)
	testdb.Exec(t, pool, `UPDATE turbine_window SET window_end = window_end + interval '1 minute' WHERE turbine_id = 'T-07' AND window_start = $1`, noon.Add(time.Minute))
	testdb.Exec(t, pool, `
		INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
		                            beyond_cadence, out_of_service, late, early, computed_at)
		VALUES ('T-09', $1, $2, 'f', '2026-08-02', 30, 30, 30, 0, 0, 0, 0, now())`, noon.Add(30*time.Second), noon.Add(90*time.Second))
	ids := make([]string, 20)
	for k := range ids {
		ids[k] = fmt.Sprintf("T-%02d", k+1)
	}
	for _, unanalysed := range []bool{true, false} {
		if !unanalysed {
			testdb.Exec(t, pool, `ANALYZE turbine_window`)
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if unanalysed {
				if err := testdb.ForgetStatistics(ctx, tx, "turbine_window"); err != nil {
					return err
				}
			}
			rows, err := sharddb.New(tx).TurbineWindowMissing(ctx, sharddb.TurbineWindowMissingParams{
				TurbineIds: ids, FirstWindow: 0, LastWindow: 1439, DayStart: dayStart, DayEnd: dayStart.Add(24 * time.Hour), WindowS: 60,
			})
			if err != nil {
				return err
			}
			var got []string
			for _, r := range rows {
				got = append(got, fmt.Sprintf("%s %d", r.TurbineID, r.WindowIndex))
			}
			if fmt.Sprint(got) != "[T-03 780 T-07 781]" {
				t.Fatalf("unanalysed=%v: missing %v, want [T-03 780 T-07 781]", unanalysed, got)
			}
			seq, idx, err := testdb.TableReads(ctx, tx, "turbine_window")
			if err != nil {
				return err
			}
			// The day's 28,800 entries (and the 2 rows changed by hand), counted
			// twice when a bitmap scan reads them; the three days hold 86,400.
			if seq != 0 || idx > 58000 {
				t.Fatalf("unanalysed=%v: %d rows read by sequential scan, %d index entries; want 0 and <= 58000", unanalysed, seq, idx)
			}
			t.Logf("unanalysed=%v: %d index entries read", unanalysed, idx)
			return nil
		})
		testdb.Must(t, err, "missing windows")
	}
}

// threeDaysOfWindows writes 20 turbines' one-minute windows of 1-3 August
// (Europe/London days) for farm f, 30 slots each, all received, and returns
// the first day's start.
func threeDaysOfWindows(t *testing.T, pool *pgxpool.Pool) time.Time {
	first := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC) // local midnight of 1 August, Europe/London
	testdb.Exec(t, pool, `
		INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
		                            beyond_cadence, out_of_service, late, early, computed_at)
		SELECT format('T-%s', lpad(k::text, 2, '0')), $1::timestamptz + w * interval '1 minute', $1::timestamptz + (w + 1) * interval '1 minute',
		       'f', date '2026-08-01' + w / 1440, 30, 30, 30, 0, 0, 0, 0, now()
		FROM generate_series(1, 20) AS k, generate_series(0, 3 * 1440 - 1) AS w`, first)
	return first
}

// threeDaysOfSums writes farm f's window sums of 1-3 August (Europe/London
// days, first the first day's start) as 20 turbines of 30 received slots
// leave them.
func threeDaysOfSums(t *testing.T, pool *pgxpool.Pool, first time.Time) {
	testdb.Exec(t, pool, `
		INSERT INTO farm_window_sum (farm_id, window_start, window_end, day, turbines, expected, received, available, late, readings, span_s)
		SELECT 'f', $1::timestamptz + w * interval '1 minute', $1::timestamptz + (w + 1) * interval '1 minute', date '2026-08-01' + w / 1440,
		       20, 600, 600, 600, 0, 600, 20 * 60
		FROM generate_series(0, 3 * 1440 - 1) AS w`, first)
}
