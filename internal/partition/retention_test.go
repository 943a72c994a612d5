package partition_test

import (
	"context"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestWindowCutsFollowTheReadingsCut: retention of 14 days at 15:00Z on 29
// November keeps London from 15 November 00:00Z, New York from 15 November
// 05:00Z and Auckland (UTC+13) from 15 November 11:00Z; the readings' cut is
// the UTC midnight at or before the earliest, 15 November 00:00Z. Each
// farm's windows are cut before its first day that starts at or after it:
// London 15 November (00:00Z), New York 15 November (05:00Z: its 14
// November started at 05:00Z on the 14th, in a dropped partition), Auckland
// 16 November (11:00Z on the 15th: its 15 November started at 11:00Z on the
// 14th). No farm loses a day its retention keeps.
func TestWindowCutsFollowTheReadingsCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, `
shards: [{name: s1}, {name: s2}]
farms:
  - {id: london, timezone: Europe/London, turbines: [{id: L-1, shard: s1}, {id: L-2, shard: s2}]}
  - {id: new-york, timezone: America/New_York, turbines: [{id: NY-1, shard: s2}]}
  - {id: auckland, timezone: Pacific/Auckland, turbines: [{id: A-1, shard: s1}]}
`)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	horizon, err := partition.RetentionHorizon(ctx, env.Control, now, 14)
	testdb.Must(t, err, "horizon")
	keep, err := partition.KeepFrom(ctx, env.Control, now, 14)
	testdb.Must(t, err, "keep from")
	cuts, err := partition.WindowCuts(ctx, env.Control, horizon)
	testdb.Must(t, err, "cuts")
	want := map[string]struct {
		day, from, shards string
	}{
		"auckland": {"2026-11-16", "2026-11-15T11:00:00Z", "[s1]"},
		"london":   {"2026-11-15", "2026-11-15T00:00:00Z", "[s1 s2]"},
		"new-york": {"2026-11-15", "2026-11-15T05:00:00Z", "[s2]"},
	}
	if len(cuts) != len(want) {
		t.Fatalf("%d cuts, want %d: %+v", len(cuts), len(want), cuts)
	}
	for _, c := range cuts {
		w := want[c.FarmID]
		got := struct{ day, from, shards string }{c.KeepDay.Format(time.DateOnly), c.KeepFrom.UTC().Format(time.RFC3339), sprint(c.Shards)}
		if got != w {
			t.Errorf("%s: cut %+v, want %+v", c.FarmID, got, w)
		}
		if c.KeepFrom.After(keep[c.FarmID]) {
			t.Errorf("%s: windows cut up to %s, after the day its retention keeps from (%s)", c.FarmID, c.KeepFrom.UTC(), keep[c.FarmID].UTC())
		}
	}
	if cuts, err := partition.WindowCuts(ctx, env.Control, nil); err != nil || cuts != nil {
		t.Fatalf("no retention: cuts %v, %v; want none", cuts, err)
	}
}

func sprint(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

// TestWindowTrimReadsItsRange: a shard holds 3 days of 1-minute windows of
// farms a and b, 10 turbines each (86,400 turbine_window rows). Cutting a's
// first day deletes exactly its 14,400 rows, read through
// turbine_window_farm_idx (no row read by a sequential scan, at most one
// index entry per row deleted and one to stop, twice if read through a
// bitmap), whether the planner has the
// table's statistics or none (right after a load); a's other days and all of
// b's stay.
func TestWindowTrimReadsItsRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	first := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	testdb.Exec(t, pool, `INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
		beyond_cadence, out_of_service, late, early, computed_at)
		SELECT f || '-' || t, w, w + interval '1 minute', f, (w AT TIME ZONE 'UTC')::date, 30, 30, 30, 0, 0, 0, 0, w
		FROM unnest(ARRAY['a', 'b']) AS f, generate_series(1, 10) AS t,
		     generate_series($1::timestamptz, $1::timestamptz + interval '3 days' - interval '1 minute', interval '1 minute') AS w`, first)
	testdb.Exec(t, pool, `ANALYZE turbine_window`)
	cut := first.AddDate(0, 0, 1)
	for _, forget := range []bool{false, true} {
		tx, err := pool.Begin(ctx)
		testdb.Must(t, err, "begin")
		defer func() { _ = tx.Rollback(ctx) }()
		if forget {
			testdb.Must(t, testdb.ForgetStatistics(ctx, tx, "turbine_window"), "forget statistics")
		}
		// A session's counts not yet flushed include its earlier
		// transactions' (the previous round's count): the trim's are the
		// difference.
		seq0, entries0, err := testdb.TableReads(ctx, tx, "turbine_window")
		testdb.Must(t, err, "reads")
		n, err := sharddb.New(tx).TurbineWindowTrim(ctx, sharddb.TurbineWindowTrimParams{FarmID: "a", KeepFrom: cut, MaxRows: partition.TrimBatch})
		testdb.Must(t, err, "trim")
		seq, entries, err := testdb.TableReads(ctx, tx, "turbine_window")
		testdb.Must(t, err, "reads")
		seq, entries = seq-seq0, entries-entries0
		var left, aKept, b int64
		testdb.Must(t, tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE farm_id = 'a' AND window_start < $1),
			count(*) FILTER (WHERE farm_id = 'a' AND window_start >= $1), count(*) FILTER (WHERE farm_id = 'b') FROM turbine_window`, cut).
			Scan(&left, &aKept, &b), "count")
		if n != 14_400 || left != 0 || aKept != 28_800 || b != 43_200 {
			t.Fatalf("statistics forgotten %v: deleted %d, a's first day left %d, a's other days %d, b %d; want 14400, 0, 28800, 43200", forget, n, left, aKept, b)
		}
		// A bitmap index scan counts each entry twice.
		if seq != 0 || entries > 2*(n+1) {
			t.Fatalf("statistics forgotten %v: the trim read %d rows sequentially and %d index entries; want 0 and at most %d", forget, seq, entries, 2*(n+1))
		}
		testdb.Must(t, tx.Rollback(ctx), "rollback")
	}
}
