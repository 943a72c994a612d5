package window_test

import (
	"context"
	"errors"
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
	dayPartitions(t, q, time.Date(2026, 7, 25, 0, 0, 0, 0, time.UTC), 12)
	dayStart := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC) // local midnight of 1 August, Europe/London
	dayEnd := dayStart.Add(24 * time.Hour)
	testdb.Exec(t, pool, `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms)
		SELECT 'T-01', $1::timestamptz + k * interval '2 seconds', $1::timestamptz + k * interval '2 seconds' + interval '1 second', true, 1000, 8
		FROM generate_series(0, 43199) AS k`, dayStart)
	params := sharddb.TurbineWindowUpsertParams{
		DayStart: dayStart, DayEnd: dayEnd, TurbineIds: []string{"T-01"}, CadenceSeconds: []int32{2},
		ServiceFrom: []time.Time{dayStart}, ServiceTo: []time.Time{dayEnd}, FirstWindow: []int32{0}, LastWindow: []int32{1439},
		WindowS: 60, LaneThresholdSeconds: 60, EarlyToleranceSeconds: 2, FarmID: "f", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), ComputedAt: dayEnd,
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

// TestAGenericCorrectionReadsItsKeyRanges: a large correction's window
// statement runs a generic plan (PlanGeneric), made once per connection
// and kept, so it must read key ranges whatever the statistics said when
// it was made. Three days of windows of 20 turbines and their sums
// (threeDaysOfWindows, threeDaysOfSums), and five turbines' readings of
// the first day; with the planner knowing nothing of
// turbine_window, farm_window_sum and the readings partitions, one
// turbine's day on a generic plan reads no row of them by a sequential
// scan, that turbine's 43,200 readings and at most 5,764 index entries of
// turbine_window (its day's 1,440 rows, replaced and probed: 4,060 here,
// 3,760 on the custom plan, of the 86,400 the table holds), and counts what
// the custom plan does.
func TestAGenericCorrectionReadsItsKeyRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	q := sharddb.New(pool)
	dayStart := threeDaysOfWindows(t, pool) // local midnight of 1 August, Europe/London
	threeDaysOfSums(t, pool, dayStart)
	dayEnd := dayStart.Add(24 * time.Hour)
	dayPartitions(t, q, time.Date(2026, 7, 30, 0, 0, 0, 0, time.UTC), 4)
	testdb.Exec(t, pool, `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms)
		SELECT format('T-%s', lpad(k::text, 2, '0')), $1::timestamptz + s * interval '2 seconds', $1::timestamptz + s * interval '2 seconds' + interval '1 second',
		       true, 1000, 8
		FROM generate_series(1, 5) AS k, generate_series(0, 43199) AS s`, dayStart)
	tables := []string{"turbine_window", "farm_window_sum", "readings_p20260731", "readings_p20260801"}
	params := sharddb.TurbineWindowUpsertParams{
		DayStart: dayStart, DayEnd: dayEnd, TurbineIds: []string{"T-01"}, CadenceSeconds: []int32{2},
		ServiceFrom: []time.Time{dayStart}, ServiceTo: []time.Time{dayEnd}, FirstWindow: []int32{0}, LastWindow: []int32{1439},
		WindowS: 60, LaneThresholdSeconds: 60, EarlyToleranceSeconds: 2, FarmID: "f", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), ComputedAt: dayEnd,
	}
	var counted [2][]sharddb.TurbineWindowUpsertRow
	rolledBack := errors.New("rolled back")
	for i, generic := range []bool{false, true} {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if err := testdb.ForgetStatistics(ctx, tx, tables...); err != nil {
				return err
			}
			sq := sharddb.New(tx)
			if generic {
				if err := sq.PlanGeneric(ctx); err != nil {
					return err
				}
			}
			seq0, idx0 := map[string]int64{}, map[string]int64{}
			for _, tb := range tables {
				s, x, err := testdb.TableReads(ctx, tx, tb)
				if err != nil {
					return err
				}
				seq0[tb], idx0[tb] = s, x
			}
			rows, err := sq.TurbineWindowUpsert(ctx, params)
			if err != nil {
				return err
			}
			counted[i] = rows
			for _, tb := range tables {
				s, x, err := testdb.TableReads(ctx, tx, tb)
				if err != nil {
					return err
				}
				s, x = s-seq0[tb], x-idx0[tb]
				t.Logf("generic=%v %s: %d rows by sequential scan, %d index entries", generic, tb, s, x)
				if s != 0 {
					t.Fatalf("generic=%v: %d rows of %s read by a sequential scan; want 0", generic, s, tb)
				}
				if tb == "turbine_window" && x > 4*1441 {
					t.Fatalf("generic=%v: %d index entries of turbine_window; want <= 5,764 (the turbine's day read a few ways, of 86,400 rows)", generic, x)
				}
			}
			return rolledBack
		})
		if !errors.Is(err, rolledBack) {
			testdb.Must(t, err, "windows")
		}
	}
	if len(counted[1]) != 1440 || counted[1][0].RowsRead != 43200 || counted[1][0].Windows != 1440 {
		t.Fatalf("generic plan: %d sums, first %+v; want 1,440 windows from 43,200 readings", len(counted[1]), counted[1][0])
	}
	for w := range counted[0] {
		counted[0][w].ShardXid, counted[1][w].ShardXid = 0, 0 // each its transaction's
		if counted[0][w] != counted[1][w] {
			t.Fatalf("window %d: custom plan %+v, generic %+v", w, counted[0][w], counted[1][w])
		}
	}
}

// dayPartitions creates the readings partitions of n UTC days from first.
func dayPartitions(t *testing.T, q *sharddb.Queries, first time.Time, n int) {
	t.Helper()
	for d := 0; d < n; d++ {
		_, err := q.ReadingsEnsurePartition(context.Background(), first.AddDate(0, 0, d))
		testdb.Must(t, err, "partition")
	}
}
