package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/window"
)

// TestOneTurbineReadsItsKeyRange: the statements a one-turbine correction
// runs over turbine_window (the off-grid delete, the day added up from the
// windows) read that turbine's key range, 1,440 primary-key entries each,
// and none of the farm index, even when the table's statistics say nothing
// yet: right after a farm-day's first rollup wrote its rows, before
// autovacuum had analysed them, the planner took the farm's index and read
// all 20 turbines' 28,800 rows of the day for one turbine (in the
// benchmark, 100 turbines: 30-47 ms instead of 1 ms per statement). The
// window upsert of that turbine's day reads no more of it than its own.
func TestOneTurbineReadsItsKeyRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	dayStart := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC)
	dayEnd := dayStart.Add(24 * time.Hour)
	// 20 turbines x 1,440 one-minute windows of the day, 30 slots each, all
	// received, and their sums.
	testdb.Exec(t, pool, `
		INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
		                            beyond_cadence, out_of_service, late, early, computed_at)
		SELECT format('T-%s', lpad(k::text, 2, '0')), $1::timestamptz + w * interval '1 minute', $1::timestamptz + (w + 1) * interval '1 minute',
		       'f', $2::date, 30, 30, 30, 0, 0, 0, 0, now()
		FROM generate_series(1, 20) AS k, generate_series(0, 1439) AS w`, dayStart, day)
	testdb.Exec(t, pool, `
		INSERT INTO farm_window_sum (farm_id, window_start, window_end, day, turbines, expected, received, available, late, readings, span_s)
		SELECT 'f', $1::timestamptz + w * interval '1 minute', $1::timestamptz + (w + 1) * interval '1 minute', $2::date, 20, 600, 600, 600, 0, 600, 20 * 60
		FROM generate_series(0, 1439) AS w`, dayStart, day)

	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := testdb.ForgetStatistics(ctx, tx, "turbine_window"); err != nil {
			return err
		}
		q := sharddb.New(tx)
		ids := []string{"T-07"}
		if _, err := q.TurbineWindowOffGridDelete(ctx, sharddb.TurbineWindowOffGridDeleteParams{
			FarmID: "f", Day: day, TurbineIds: ids, DayStart: dayStart, DayEnd: dayEnd, WindowS: 60,
		}); err != nil {
			return err
		}
		rows, err := q.TurbineDayFromWindows(ctx, sharddb.TurbineDayFromWindowsParams{DayStart: dayStart, DayEnd: dayEnd, FarmID: "f", Day: day, TurbineIds: ids})
		if err != nil {
			return err
		}
		if len(rows) != 1 || rows[0].Windows != 1440 || rows[0].Expected != 43200 {
			t.Fatalf("day from windows: %+v, want one row of 1440 windows and 43200 expected", rows)
		}
		read := map[string]int64{}
		r, err := tx.Query(ctx, `SELECT i.indexrelid::regclass::text, pg_stat_get_xact_tuples_returned(i.indexrelid) FROM pg_index i WHERE i.indrelid = 'turbine_window'::regclass`)
		if err != nil {
			return err
		}
		for r.Next() {
			var name string
			var n int64
			if err := r.Scan(&name, &n); err != nil {
				return err
			}
			read[name] = n
		}
		if err := r.Err(); err != nil {
			return err
		}
		if read["turbine_window_farm_idx"] != 0 || read["turbine_window_pkey"] != 2*1440 {
			t.Fatalf("index entries read: %v, want 2880 of turbine_window_pkey (1,440 a statement) and none of turbine_window_farm_idx", read)
		}
		// The window upsert of the turbine's whole day (the rows it
		// replaces read by key range, the sums upserted by key): 1,440
		// windows written and summed, still nothing of the farm's index
		// and no sequential scan of either table.
		// the keys of the default contract (control's contract_keys of row 1):
		// full performance rank 12, forced outage 8, out of environmental
		// specification 4; no shard test reads a control database
		g := window.Grid{FarmID: "f", Day: day, Start: dayStart, End: dayEnd, Window: time.Minute,
			Contract: window.Contract{KeyAvailable: 12*16 + 1, KeyUnavailable: 8*16 + 10, KeyEnvironment: 4*16 + 5, KeyMissing: 13*16 + 13}}
		turbines := []window.Turbine{{ID: "T-07", Cadence: 2, ServiceFrom: dayStart, ServiceTo: dayEnd}}
		pairs := window.Pairs{}
		pairs.AddRange(turbines, 0, g.Len())
		all := make([]int, g.Len())
		for i := range all {
			all[i] = i
		}
		work, err := window.Compute(ctx, q, g, turbines, fleet.DefaultRules(), pairs, all, false, dayEnd)
		if err != nil {
			return err
		}
		// T-07 has no readings: each window keeps 600 expected and loses
		// its 30 received.
		if work.Windows != 1440 || len(work.Sums) != 1440 || work.Sums[0].Expected != 600 || work.Sums[0].Received != 570 {
			t.Fatalf("window upsert: %d windows, %d sums (first %+v), want 1440, 1440, 600 expected and 570 received", work.Windows, len(work.Sums), work.Sums[0])
		}
		// (tuples_returned of a table counts the rows its sequential
		// scans read; a bitmap scan's rows count as fetched.)
		var farmIdx, seqTW, seqSums int64
		if err := tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_returned('turbine_window_farm_idx'::regclass),
			pg_stat_get_xact_tuples_returned('turbine_window'::regclass), pg_stat_get_xact_tuples_returned('farm_window_sum'::regclass)`).Scan(&farmIdx, &seqTW, &seqSums); err != nil {
			return err
		}
		if farmIdx != 0 || seqTW != 0 || seqSums != 0 {
			t.Fatalf("after the window upsert: %d entries of turbine_window_farm_idx read, %d rows of turbine_window read by sequential scan, %d of farm_window_sum; want 0, 0, 0", farmIdx, seqTW, seqSums)
		}
		return pgx.ErrTxClosed // roll the statistics back
	})
	if err != pgx.ErrTxClosed {
		testdb.Must(t, err, "statements")
	}
}
