package rollup_test

import (
	"context"
	"testing"
	"time"

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
	b := setup(t, testdb.ArdnaveFleet, options{noStart: true})
	b.replayTurbine(t, "KS-003", 0) // 14:00-14:10 on 1 August, arriving the next night: marks
	if res := b.drain(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	// The first attempt's committed claim.
	testdb.Exec(t, b.env.Control, `DELETE FROM rollup_pending`)
	if n := testdb.Int(t, b.env.Shards.Pool("s4"), `SELECT count(*) FROM dirty_window`); n == 0 {
		t.Fatal("no dirty windows on s4 before the retry")
	}
	res, err := b.computer.Recompute(context.Background(), rollup.Request{
		FarmID: "kilmore-sands", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Shard: "s4", Reason: rollup.ReasonDirty, Attempt: 2,
	})
	testdb.Must(t, err, "retry")
	if res.Skipped || res.Full {
		t.Fatalf("retry: %+v, want the marked windows recomputed (not skipped, not the whole day)", res)
	}
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'kilmore-sands'`); n != 1 {
		t.Fatalf("%d turbine_day rows after the retry, want 1 (KS-003, the only turbine marked)", n)
	}
	if got := b.turbineDay(t, "KS-003", "2026-08-01"); got.Received != 300 || got.Expected != 43_200 {
		t.Fatalf("KS-003 after the retry: %+v, want expected 43200, received 300", got)
	}
	var windows, received int64
	testdb.Must(t, b.env.Control.QueryRow(context.Background(),
		`SELECT count(*), coalesce(sum(received), 0) FROM farm_window WHERE farm_id = 'kilmore-sands' AND path = 'final'`).Scan(&windows, &received), "final windows")
	if windows != 11 || received != 300 {
		t.Fatalf("final windows after the retry: %d windows, %d received; want 11 and 300, as a first attempt writes", windows, received)
	}
	if n := testdb.Int(t, b.env.Shards.Pool("s4"), `SELECT count(*) FROM dirty_window`); n != 0 {
		t.Fatalf("%d dirty windows left on s4 after the retry, want 0", n)
	}
}
