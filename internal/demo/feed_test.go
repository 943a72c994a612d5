package demo_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/demo"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

const feedFleet = `
shards: [{name: s1}]
farms:
  - id: f1
    name: Farm One
    timezone: UTC
    turbines:
      - {prefix: F-, from: 1, to: 200, shard: s1}
`

// TestFeedDoesNotWaitForItsLateReadings: a tick of the
// live feed delivers its prompt readings and returns while its late ones
// (more than the lane threshold behind their recorded_at: the backfill
// lane) are held in the backfill writer, as they were behind the story's
// delivery in `make run`; they are stored once the writer goes on.
func TestFeedDoesNotWaitForItsLateReadings(t *testing.T) {
	t.Parallel()
	const hang = 30 * time.Second // each wait here takes milliseconds
	ctx := context.Background()
	start := time.Date(2026, 8, 4, 9, 0, 0, 0, time.UTC)
	var now atomic.Pointer[time.Time]
	setNow := func(at time.Time) { now.Store(&at) }
	setNow(start.Add(10 * time.Minute))
	held, release := make(chan struct{}), make(chan struct{})
	var armed, first atomic.Bool
	hooks := &ingest.Hooks{BeforeBackfillBatch: func(string) {
		if armed.Load() && first.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
	}}
	env := testdb.New(t, feedFleet)
	in := pipelinetest.Ingestor(t, env, func() time.Time { return *now.Load() }, ingest.DefaultConfig(), hooks)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	f, err := demo.NewFeed(env.Plan, 1, start, in)
	testdb.Must(t, err, "feed")

	// Ten minutes at once, the writer free: a history with a late tail.
	testdb.Must(t, f.Step(ctx, *now.Load()), "first step")
	f.Wait()
	before := f.Stats()

	// The next tick, with the backfill writer held at its first batch.
	armed.Store(true)
	next := now.Load().Add(2 * time.Second)
	setNow(next)
	stepped := make(chan error, 1)
	go func() { stepped <- f.Step(ctx, next) }()
	select {
	case err := <-stepped:
		testdb.Must(t, err, "second step")
	case <-time.After(hang):
		t.Fatal("the feed's tick waited for its late readings' backfill write")
	}
	select {
	case <-held:
	case <-time.After(hang):
		t.Fatal("the tick's late readings never reached the backfill writer")
	}
	mid := f.Stats()
	prompt := mid.Delivered - before.Delivered
	if stored := testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM readings`); prompt == 0 || stored != mid.Delivered || mid.Ingest.Accepted != mid.Delivered {
		t.Fatalf("with the late readings held: %d readings stored, %d delivered (%d this tick), %d accepted; want this tick's prompt readings stored and answered", stored, mid.Delivered, prompt, mid.Ingest.Accepted)
	}
	if mid.Delivered+mid.Waiting != mid.Generated {
		t.Fatalf("stats %+v: delivered + waiting != generated", mid)
	}

	close(release)
	released = true
	f.Wait()
	end := f.Stats()
	late := end.Delivered - mid.Delivered
	if stored := testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM readings`); late == 0 || stored != end.Delivered || end.Ingest.Accepted != end.Delivered || end.Ingest.Backfill-mid.Ingest.Backfill != late {
		t.Fatalf("once the writer went on: %d stored, %d delivered (%d late), %+v; want the late readings stored, in the backfill lane", stored, end.Delivered, late, end.Ingest)
	}
	if end.Delivered+end.Waiting != end.Generated || end.Errors != 0 {
		t.Fatalf("stats %+v: want delivered + waiting = generated, no error", end)
	}
}

// TestFeedResendsWhatFailed: a delivery whose write fails (here the first
// batch's commit) is not lost: the feed re-sends its failed lines in
// the background, as a real sender re-sends what was not acknowledged, and
// every generated reading is stored exactly once.
func TestFeedResendsWhatFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Date(2026, 8, 4, 9, 0, 0, 0, time.UTC)
	now := start.Add(2 * time.Minute)
	var failOnce atomic.Bool
	failOnce.Store(true)
	hooks := &ingest.Hooks{BeforeCommit: func(string, ingest.Lane) error {
		if failOnce.CompareAndSwap(true, false) {
			// As the write bound on a busy machine fails it.
			return &pgconn.PgError{Code: "57014", Message: "injected: canceling statement due to statement timeout"}
		}
		return nil
	}}
	env := testdb.New(t, feedFleet)
	in := pipelinetest.Ingestor(t, env, func() time.Time { return now }, ingest.DefaultConfig(), hooks)
	f, err := demo.NewFeed(env.Plan, 1, start, in)
	testdb.Must(t, err, "feed")

	if err := f.Step(ctx, now); err == nil {
		t.Fatal("the step whose write failed returned no error")
	}
	f.Wait()
	st := f.Stats()
	stored := testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM readings`)
	if st.Errors != 1 || st.Resent == 0 || st.Ingest.Failed != 0 || stored != st.Delivered || st.Ingest.Accepted != st.Delivered || st.Delivered+st.Waiting != st.Generated {
		t.Fatalf("after a failed write: %d stored, stats %+v; want 1 delivery not fully stored, its lines re-sent and stored (accepted = delivered = stored), none failed", stored, st)
	}
	// 200 turbines, one reading per 2 s, slots from 09:00:00 to 09:01:58.
	if st.Generated != 200*60 {
		t.Fatalf("generated %d readings, want 12,000 (200 turbines × 60 slots)", st.Generated)
	}
}
