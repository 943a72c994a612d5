package drain_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestDrainDetachesAStuckShard: with Detach, a drain whose shard s1 is stuck
// (its marks locked, as a hung server would hold them) returns after
// Detach with s4's mark drained and s1 still at it in the background; the
// next drain skips s1 as busy instead of waiting for it again; once s1 is
// released its background drain finishes the job. Without Detach every
// drain lasted the stuck shard's whole timeout, and the next one (one at a
// time) waited behind it: a hung shard delayed every shard's corrections
// by 30 s (found by the hung-shard fault test).
func TestDrainDetachesAStuckShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, lock := marksBehindALock(t)

	enqueue := enqueuer(t, env)
	d := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: func() time.Time { return time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC) },
		ShardTimeout: 30 * time.Second, Detach: 500 * time.Millisecond}
	// s1 cannot finish while its marks are locked, so it is detached however
	// slow the machine; the other shards finish in about 0.1 s, but on a busy
	// machine one may outlast Detach too, so only s1 and s4 are asserted.
	res, err := d.DrainImmediate(ctx, enqueue)
	testdb.Must(t, err, "first drain")
	if !slices.Contains(res.DetachedShards, "s1") {
		t.Fatalf("first drain: %+v; want s1 detached (its marks are locked)", res)
	}
	s4Detached := slices.Contains(res.DetachedShards, "s4")
	if want := 1; !s4Detached && res.Enqueued != want {
		t.Fatalf("first drain: %+v; want s4's mark enqueued (%d job)", res, want)
	}
	deadline := time.Now().Add(30 * time.Second) // catches a hang only
	for testdb.Int(t, env.Control, `SELECT count(*) FROM rollup_pending WHERE shard_name = 's4'`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("s4's mark was not enqueued while s1 was stuck")
		}
		time.Sleep(20 * time.Millisecond) // polling a row
	}
	res, err = d.DrainImmediate(ctx, enqueue)
	testdb.Must(t, err, "second drain")
	if !slices.Contains(res.BusyShards, "s1") || res.Enqueued != 0 {
		t.Fatalf("second drain: %+v; want s1 busy (its first drain still at it), nothing enqueued", res)
	}
	testdb.Must(t, lock.Rollback(ctx), "release s1")
	deadline = time.Now().Add(30 * time.Second)
	for testdb.Int(t, env.Control, `SELECT count(*) FROM rollup_pending WHERE shard_name = 's1'`) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("s1's background drain did not enqueue its mark within 30 s of its release")
		}
		time.Sleep(20 * time.Millisecond) // polling a row
	}
	for testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_mark`) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("s1's mark was not deleted by its background drain")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
