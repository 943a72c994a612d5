package rollup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// sumDrift counts the farm windows of north on s1 whose farm_window_sum row
// differs from a fresh sum of turbine_window, their lengths (span_s)
// included (rows summing to nothing are allowed to stay as zeros).
func sumDrift(t testing.TB, b *bundle) int64 {
	t.Helper()
	return testdb.Int(t, b.Env.Shards.Pool("s1"), `
		WITH truth AS (
			SELECT window_start, count(*)::int AS turbines, sum(expected)::bigint AS expected, sum(received)::bigint AS received,
			       sum(available)::bigint AS available, sum(late)::bigint AS late,
			       sum(received + beyond_cadence + out_of_service)::bigint AS readings,
			       sum(extract(epoch FROM window_end - window_start))::bigint AS span_s
			FROM turbine_window WHERE farm_id = 'north' GROUP BY window_start)
		SELECT count(*) FROM truth t FULL JOIN (SELECT * FROM farm_window_sum WHERE farm_id = 'north') k USING (window_start)
		WHERE (t.window_start IS NULL AND (k.turbines <> 0 OR k.span_s <> 0))
		   OR (t.window_start IS NOT NULL AND (t.turbines, t.expected, t.received, t.available, t.late, t.readings, t.span_s)
		       IS DISTINCT FROM (k.turbines, k.expected, k.received, k.available, k.late, k.readings, k.span_s))`)
}

// partDrift counts the windows of north whose part from s1 on the control
// database differs from s1's farm_window_sum row (the sums a recompute or
// the fast path hands to the control database: returned by the upsert
// itself, or read afterwards when closing a day), and returns how many
// parts it compared.
func partDrift(t testing.TB, b *bundle) (differ, parts int) {
	t.Helper()
	ctx := context.Background()
	type sum struct{ expected, received, available, late, readings int64 }
	read := func(pool interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}, sql string) map[time.Time]sum {
		rows, err := pool.Query(ctx, sql)
		testdb.Must(t, err, "read sums")
		out := map[time.Time]sum{}
		for rows.Next() {
			var w time.Time
			var s sum
			testdb.Must(t, rows.Scan(&w, &s.expected, &s.received, &s.available, &s.late, &s.readings), "scan")
			out[w.UTC()] = s
		}
		testdb.Must(t, rows.Err(), "rows")
		return out
	}
	kept := read(b.Env.Shards.Pool("s1"), `SELECT window_start, expected, received, available, late, readings FROM farm_window_sum WHERE farm_id = 'north' AND turbines > 0`)
	sent := read(b.Env.Control, `SELECT window_start, expected, received, available, late, readings FROM farm_window_part WHERE farm_id = 'north' AND shard_name = 's1'`)
	for w, p := range sent {
		if kept[w] != p {
			differ++
		}
	}
	return differ, len(sent)
}

// TestWindowSumsKeptInStep: the shard's farm-window sums, kept by every
// write of turbine_window (fast path, corrections, the close of the day, a
// window rule changed under a computed day, then a correction and a
// recompute on the new grid), always equal a fresh sum of
// turbine_window; and what they feed is right: the final 12:00 window holds
// 90 expected and 31 received.
func TestWindowSumsKeptInStep(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	ctx := context.Background()
	b.Clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	b.Clock.Set(noon.Add(2 * time.Minute))
	_, err := b.PublisherWith(2 * time.Minute).PublishDue(ctx)
	testdb.Must(t, err, "publish")
	if n := sumDrift(t, b); n != 0 {
		t.Fatalf("after publication: %d windows drifted, want 0", n)
	}
	if d, n := partDrift(t, b); d != 0 || n != 1 {
		t.Fatalf("after publication: %d of %d parts differ from the shard's sums, want 0 of 1 (the 12:00 window)", d, n)
	}
	// A late reading of N-002 in the published window: a correction.
	b.Clock.Set(noon.Add(5 * time.Minute))
	b.ReadingsAt(t, noon.Add(10*time.Second), "N-002")
	b.DrainNow(t)
	b.WaitJobs(t)
	if n := sumDrift(t, b); n != 0 {
		t.Fatalf("after the correction: %d windows drifted, want 0", n)
	}
	if d, n := partDrift(t, b); d != 0 || n < 1 {
		t.Fatalf("after the correction: %d of %d parts differ from the shard's sums, want 0 (of the 12:00 window and any published since)", d, n)
	}
	final, ok := b.Window(t, "north", noon, "final")
	if !ok || final.Expected != 90 || final.Received != 31 {
		t.Fatalf("final 12:00 window %+v (present %v), want expected 90, received 31", final, ok)
	}
	// The day closes: every window of every turbine computed and summed.
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	b.Clock.Set(day.Add(26 * time.Hour))
	res, err := b.Computer.Recompute(ctx, rollup.Request{FarmID: "north", Day: day, Shard: "s1", Reason: rollup.ReasonSchedule})
	testdb.Must(t, err, "close the day")
	if len(res.Alarms) != 0 {
		t.Fatalf("closing the day raised %v, want no alarm", res.Alarms)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM farm_window_sum WHERE farm_id = 'north' AND day = '2026-08-01' AND turbines = 3`); n != 1440 {
		t.Fatalf("%d windows of the day summed over 3 turbines, want 1440", n)
	}
	if d, n := partDrift(t, b); d != 0 || n != 1440 {
		t.Fatalf("after closing the day: %d of %d parts differ from the shard's sums, want 0 of 1440", d, n)
	}
	// The window rule changes to 10 minutes, and a late reading of N-003
	// arrives before any recompute on the new grid: its correction computes
	// N-003's 144 windows of 10 minutes and deletes its 1,440 rows of 1
	// minute (those off the new grid; the others it overwrote), taking
	// them out of the sums.
	// (By hand, on the version that governs the day too, as an apply
	// reopening it would.)
	testdb.Exec(t, b.Env.Control, `UPDATE farm SET window_s = 600 WHERE id = 'north'`)
	testdb.Exec(t, b.Env.Control, `UPDATE farm_version SET window_s = 600 WHERE farm_id = 'north'`)
	b.ReadingsAt(t, noon.Add(20*time.Second), "N-003")
	b.DrainNow(t)
	b.WaitJobs(t)
	if n := sumDrift(t, b); n != 0 {
		t.Fatalf("after a correction on the new grid: %d windows drifted, want 0", n)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM turbine_window WHERE turbine_id = 'N-003' AND day = '2026-08-01' AND window_end - window_start = interval '10 minutes'`); n != 144 {
		t.Fatalf("N-003 has %d windows of 10 minutes after its correction, want 144", n)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM turbine_window WHERE turbine_id = 'N-003' AND day = '2026-08-01' AND window_end - window_start <> interval '10 minutes'`); n != 0 {
		t.Fatalf("N-003 has %d windows of another grid after its correction, want 0", n)
	}
	if got := b.TurbineDay(t, "N-003", "2026-08-01"); got.Received != 1 || got.Expected != 43_200 {
		t.Fatalf("N-003's day after its correction: %+v, want 43200 expected, 1 received", got)
	}
	// The correction's final row is its marked window, now 10 minutes of
	// every turbine (filled in: 3 turbines x 300 slots); the old grid's
	// other final rows wait for the day to be closed again.
	if final, ok := b.Window(t, "north", noon, "final"); !ok || final.Expected != 900 || final.Received != 32 {
		t.Fatalf("final 12:00 window after the correction %+v (present %v), want expected 900, received 32", final, ok)
	}
	// A manual recompute removes the other turbines' 1-minute rows (and
	// takes them out of the sums) and writes 144 each.
	res, err = b.Computer.Recompute(ctx, rollup.Request{FarmID: "north", Day: day, Shard: "s1", Reason: rollup.ReasonManual})
	testdb.Must(t, err, "recompute on the new grid")
	// Neither the shard's sums nor the control database's day check (parts
	// against turbine_day) finds anything: no part of the old grid is left.
	if len(res.Alarms) != 0 {
		t.Fatalf("recompute on the new grid raised %q, want no alarm", res.Alarms)
	}
	controlGrid(t, b, "after the recompute on the new grid")
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE farm_id = 'north' AND kind = 'window_sum'`); n != 0 {
		t.Fatalf("%d window_sum alerts, want 0", n)
	}
	// The fast row published on the old grid stays (what was published),
	// and is not measured against the final row of the 10-minute window
	// that starts with it.
	if fast, ok := b.Window(t, "north", noon, "fast"); !ok || fast.Expected != 90 {
		t.Fatalf("fast 12:00 window %+v (present %v), want the one published, expected 90", fast, ok)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM reconciliation WHERE farm_id = 'north' AND scope = 'window' AND day = '2026-08-01'`); n != 0 {
		t.Fatalf("%d windows reconciled, want 0 (the only fast row is of the old grid)", n)
	}
	if n := sumDrift(t, b); n != 0 {
		t.Fatalf("after the grid change: %d windows drifted, want 0", n)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM farm_window_sum WHERE farm_id = 'north' AND day = '2026-08-01' AND turbines > 0`); n != 144 {
		t.Fatalf("%d windows with rows after the grid change, want 144", n)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT sum(received) FROM farm_window_sum WHERE farm_id = 'north' AND day = '2026-08-01'`); n != 32 {
		t.Fatalf("received over the day's sums = %d, want 32 (N-001's 30, N-002's and N-003's late one each)", n)
	}
}

// TestWindowSumDriftIsAlarmedAndRebuilt: a farm_window_sum row that no
// longer equals its turbine_window rows (here made so by hand) is found
// when the day is closed, rebuilt before it feeds a part, and raised as a
// window_sum alarm naming the window.
func TestWindowSumDriftIsAlarmedAndRebuilt(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	b.Clock.Set(day.Add(26 * time.Hour))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	req := rollup.Request{FarmID: "north", Day: day, Shard: "s1", Reason: rollup.ReasonManual}
	_, err := b.Computer.Recompute(ctx, req)
	testdb.Must(t, err, "first close")
	testdb.Exec(t, b.Env.Shards.Pool("s1"), `UPDATE farm_window_sum SET received = received + 5 WHERE farm_id = 'north' AND window_start = $1`, noon)
	if n := sumDrift(t, b); n != 1 {
		t.Fatalf("%d windows drifted after the corruption, want 1", n)
	}
	res, err := b.Computer.Recompute(ctx, req)
	testdb.Must(t, err, "second close")
	if len(res.Alarms) != 1 || !strings.Contains(res.Alarms[0], "differed from turbine_window in 1 windows (first 2026-08-01T12:00:00Z)") {
		t.Fatalf("alarms %q, want one naming 1 window, the first 2026-08-01T12:00:00Z", res.Alarms)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE kind = 'window_sum' AND farm_id = 'north' AND day = '2026-08-01'`); n != 1 {
		t.Fatalf("%d window_sum alerts, want 1", n)
	}
	if n := sumDrift(t, b); n != 0 {
		t.Fatalf("%d windows drifted after the rebuild, want 0", n)
	}
	final, ok := b.Window(t, "north", noon, "final")
	if !ok || final.Received != 30 {
		t.Fatalf("final 12:00 window %+v (present %v), want received 30 (the rebuilt sum, not 35)", final, ok)
	}
}

// controlGrid checks that north's 2026-08-01 on the control database is on
// the 10-minute grid only: 144 parts from s1 and 144 final rows, none of
// another length, and the finals' received add up to the day's 32
// readings (N-001's 30, N-002's and N-003's late one each).
func controlGrid(t testing.TB, b *bundle, when string) {
	t.Helper()
	for _, c := range []struct {
		what, sql string
		want      int64
	}{
		{"s1's parts", `SELECT count(*) FROM farm_window_part WHERE farm_id = 'north' AND day = '2026-08-01' AND shard_name = 's1'`, 144},
		{"parts of another length", `SELECT count(*) FROM farm_window_part WHERE farm_id = 'north' AND day = '2026-08-01' AND window_end - window_start <> interval '10 minutes'`, 0},
		{"final rows", `SELECT count(*) FROM farm_window WHERE farm_id = 'north' AND day = '2026-08-01' AND path = 'final'`, 144},
		{"final rows of another length", `SELECT count(*) FROM farm_window WHERE farm_id = 'north' AND day = '2026-08-01' AND path = 'final' AND window_end - window_start <> interval '10 minutes'`, 0},
		{"received over the final rows", `SELECT coalesce(sum(received), 0) FROM farm_window WHERE farm_id = 'north' AND day = '2026-08-01' AND path = 'final'`, 32},
	} {
		if n := testdb.Int(t, b.Env.Control, c.sql); n != c.want {
			t.Fatalf("%s: %s = %d, want %d", when, c.what, n, c.want)
		}
	}
}
