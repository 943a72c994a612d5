package rollup_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestRetriedDirtyJobDoesTheSameWork: a dirty job whose first attempt
// committed its control side (the request claimed) and died before its
// shard commit (the process killed) is retried. The retry recomputes the
// marks still on the shard, and writes exactly what the first attempt
// would have: KS-003's row and the 11 windows its replay touched. Before,
// a retry recomputed every turbine and closed the day (140 rows, 1,440
// final windows), so a run with a crash ended with rows a clean run does
// not have (found by the kill -9 fault test).
func TestRetriedDirtyJobDoesTheSameWork(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{NoStart: true})
	b.replayTurbine(t, "KS-003", 0) // 14:00-14:10 on 1 August, arriving the next night: marks
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	// The first attempt's committed claim.
	testdb.Exec(t, b.Env.Control, `DELETE FROM rollup_pending`)
	if n := testdb.Int(t, b.Env.Shards.Pool("s4"), `SELECT count(*) FROM dirty_window`); n == 0 {
		t.Fatal("no dirty windows on s4 before the retry")
	}
	res, err := b.Computer.Recompute(context.Background(), rollup.Request{
		FarmID: "kilmore-sands", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Shard: "s4", Reason: rollup.ReasonDirty, Attempt: 2,
	})
	testdb.Must(t, err, "retry")
	if res.Skipped || res.Full {
		t.Fatalf("retry: %+v, want the marked windows recomputed (not skipped, not the whole day)", res)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'kilmore-sands'`); n != 1 {
		t.Fatalf("%d turbine_day rows after the retry, want 1 (KS-003, the only turbine marked)", n)
	}
	if got := b.TurbineDay(t, "KS-003", "2026-08-01"); got.Received != 300 || got.Expected != 43_200 {
		t.Fatalf("KS-003 after the retry: %+v, want expected 43200, received 300", got)
	}
	var windows, received int64
	testdb.Must(t, b.Env.Control.QueryRow(context.Background(),
		`SELECT count(*), coalesce(sum(received), 0) FROM farm_window WHERE farm_id = 'kilmore-sands' AND path = 'final'`).Scan(&windows, &received), "final windows")
	if windows != 11 || received != 300 {
		t.Fatalf("final windows after the retry: %d windows, %d received; want 11 and 300, as a first attempt writes", windows, received)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s4"), `SELECT count(*) FROM dirty_window`); n != 0 {
		t.Fatalf("%d dirty windows left on s4 after the retry, want 0", n)
	}
}

// TestRecomputeAfterAFailedShardCommitSumsWholeParts: a correction of
// north's 14:00 window (N-001's readings arriving late) commits its control
// side, whose part of the window counts all three turbines of the shard
// (it had no part, so it filled the other two in), and its shard commit
// fails (a worker killed between the two commits). The next recompute
// finds the part on the control database but not the turbine_window rows
// it stood for on the shard. It asks the shard which windows it has whole,
// fills this one in again, and the final row counts the three turbines: 90
// slots expected, N-001's 30 received. It used to trust the part and sum
// N-001 alone: 30 expected (found by the kill -9 and stopped-shard fault
// tests; a shard transaction id cannot tell, since a server that crashed
// may give an unlogged id again).
func TestRecomputeAfterAFailedShardCommitSumsWholeParts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{NoStart: true})
	two := time.Date(2026, 8, 1, 14, 0, 0, 0, time.UTC)
	b.Clock.Set(two.Add(2 * time.Hour)) // the day is still open; the window long past its watermark
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, two.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	killed := errors.New("killed between the commits")
	b.Computer.BetweenCommits = func(rollup.Request) error { return killed }
	req := rollup.Request{FarmID: "north", Day: two, Shard: "s1", Reason: rollup.ReasonDirty, Attempt: 1}
	if _, err := b.Computer.Recompute(ctx, req); !errors.Is(err, killed) {
		t.Fatalf("first attempt: %v, want it killed between its commits", err)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT expected FROM farm_window_part WHERE farm_id = 'north' AND window_start = $1`, two); n != 90 {
		t.Fatalf("the part the first attempt committed: expected %d, want 90", n)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM turbine_window`); n != 0 {
		t.Fatalf("%d turbine_window rows after the shard side rolled back, want 0", n)
	}
	b.Computer.BetweenCommits = nil
	req.Attempt = 2
	res, err := b.Computer.Recompute(ctx, req)
	testdb.Must(t, err, "retry")
	if res.Skipped {
		t.Fatalf("retry: %+v, want the marks recomputed", res)
	}
	w, ok := b.Window(t, "north", two, "final")
	if !ok || w.Expected != 90 || w.Received != 30 {
		t.Fatalf("north's final 14:00 window after the retry: %+v (exists %v); want 90 expected, 30 received", w, ok)
	}
}
