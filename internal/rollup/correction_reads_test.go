package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestWholeWindowsReadTheirSpan: a correction asks which of its windows
// this shard does not have whole (FarmWindowsNotWhole) with one range scan of
// farm_window_sum's key over the windows' span, not one descent of the
// index per window. Three days of sums (4,320 windows); the middle day's
// 1,440 windows are asked, two of them short of a turbine. It returns
// those two, reading the day's index entries from their leaf pages (at
// most 50 index pages) and no row by a sequential scan, with or without
// statistics. With the list as an index condition (= ANY), it read every
// sum the farm has here (4,320 index entries unanalysed, a sequential scan
// once analysed), and on the benchmark's shard with a month of history it
// descended the index once per window: 4-6 ms of a one-turbine
// correction's 80.
func TestWholeWindowsReadTheirSpan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	first := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC) // local midnight of 1 August, Europe/London
	threeDaysOfSums(t, pool, first)
	dayStart := first.Add(24 * time.Hour)
	noon := dayStart.Add(13 * time.Hour)
	testdb.Exec(t, pool, `UPDATE farm_window_sum SET turbines = 19 WHERE farm_id = 'f' AND window_start IN ($1, $2)`, noon, noon.Add(time.Minute))
	starts := make([]time.Time, 1440)
	for i := range starts {
		starts[i] = dayStart.Add(time.Duration(i) * time.Minute)
	}
	for _, unanalysed := range []bool{true, false} {
		if !unanalysed {
			testdb.Exec(t, pool, `ANALYZE farm_window_sum`)
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if unanalysed {
				if err := testdb.ForgetStatistics(ctx, tx, "farm_window_sum"); err != nil {
					return err
				}
			}
			// The backend's counters hold what it has not yet reported,
			// earlier transactions included: the statement's reads are the
			// difference.
			pages0, err := testdb.IndexBlocks(ctx, tx, "farm_window_sum")
			if err != nil {
				return err
			}
			seq0, idx0, err := testdb.TableReads(ctx, tx, "farm_window_sum")
			if err != nil {
				return err
			}
			notWhole, err := sharddb.New(tx).FarmWindowsNotWhole(ctx, sharddb.FarmWindowsNotWholeParams{FarmID: "f", WindowStarts: starts, Turbines: 20})
			if err != nil {
				return err
			}
			if len(notWhole) != 2 || !notWhole[0].Equal(noon) || !notWhole[1].Equal(noon.Add(time.Minute)) {
				t.Fatalf("unanalysed=%v: windows not whole %v, want %s and %s (19 of 20 turbines each)", unanalysed, notWhole, noon, noon.Add(time.Minute))
			}
			seq, idx, err := testdb.TableReads(ctx, tx, "farm_window_sum")
			if err != nil {
				return err
			}
			pages, err := testdb.IndexBlocks(ctx, tx, "farm_window_sum")
			if err != nil {
				return err
			}
			seq, idx, pages = seq-seq0, idx-idx0, pages-pages0
			// The day's 1,440 entries (and the next one), twice if a bitmap
			// scan reads them; the leaf pages that hold them, and the path
			// to the first.
			if seq != 0 || idx > 2*1441 || pages > 50 {
				t.Fatalf("unanalysed=%v: %d rows read by sequential scan, %d index entries, %d index pages; want 0, <= 2882, <= 50",
					unanalysed, seq, idx, pages)
			}
			t.Logf("unanalysed=%v: %d index entries, %d index pages", unanalysed, idx, pages)
			return nil
		})
		testdb.Must(t, err, "whole windows")
	}
}
