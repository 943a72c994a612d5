package publish_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestALateReadingWhileTheFastPathPublishes: the window [12:00, 12:01) of
// north (3 turbines, 90 slots) has N-001's 30 readings, sent at 12:01:01,
// and N-002's reading of 12:00:00, sent at 12:01:40 (late enough to mark
// the turbine-window, N-002 × 12:00). At 12:02:00 the fast path publishes
// it, and N-002's reading of 12:00:02 (the same turbine-window: its mark
// is already there) is committed
//
//   - between the fast path's computation and its publication,
//   - just after the publication,
//   - or while the fast path computes and publishes: the reading's write
//     transaction is open (its rows and its mark written, not committed)
//     all the while.
//
// The fast row has 31 slots received (the late reading could not be read
// by it); the reading's mark survives, the drain's correction writes the
// final row with 32 (revision 1), and reconciliation measures the
// divergence exactly: (32 − 31) / 32 = 31.25 per mille, above the 30 per
// mille threshold, so one divergence alert.
func TestALateReadingWhileTheFastPathPublishes(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"BetweenComputeAndPublish", "AfterPublication", "WhileComputing"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			late := noon.Add(2 * time.Second)
			var b *pipelinetest.Pipeline
			var p *publish.Publisher
			var sent, published atomic.Int32
			var hookErr atomic.Value
			hooks := &ingest.Hooks{BeforeCommit: func(shard string, _ ingest.Lane) error {
				if when != "WhileComputing" || shard != "s1" || sent.Load() == 0 || published.Load() != 0 {
					return nil
				}
				// Inside the late reading's write transaction.
				n, _, err := p.PublishFarm(ctx, "north")
				if err == nil && n == 0 {
					err = fmt.Errorf("the fast path published nothing at 12:02:00")
				}
				published.Store(1)
				return err
			}}
			b = setup(t, pipelinetest.WindowFleet, pipelinetest.Options{Hooks: hooks})
			p = b.PublisherWith(2 * time.Minute)
			switch when {
			case "BetweenComputeAndPublish":
				p.AfterCompute = func(farm string) error {
					if farm != "north" || !sent.CompareAndSwap(0, 1) {
						return nil
					}
					return b.SendAt("N-002", late)
				}
			case "AfterPublication":
				p.OnPublish = func(w publish.Published) {
					if w.FarmID == "north" && w.WindowStart.Equal(noon) && sent.CompareAndSwap(0, 1) {
						if err := b.SendAt("N-002", late); err != nil {
							hookErr.Store(err)
						}
					}
				}
			}
			b.Clock.Set(noon.Add(61 * time.Second))
			for k := 0; k < 30; k++ {
				b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
			}
			b.Clock.Set(noon.Add(100 * time.Second))
			b.ReadingsAt(t, noon, "N-002")
			if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window WHERE turbine_id = 'N-002' AND window_start <= $1 AND window_end > $1`, noon); n != 1 {
				t.Fatalf("%d marks of N-002 × 12:00 before publication, want 1", n)
			}

			b.Clock.Set(noon.Add(2 * time.Minute))
			if when == "WhileComputing" {
				sent.Store(1)
				testdb.Must(t, b.SendAt("N-002", late), "the late reading")
			} else {
				_, err := p.PublishDue(ctx)
				testdb.Must(t, err, "publish")
			}
			if err, _ := hookErr.Load().(error); err != nil {
				t.Fatal(err)
			}
			if sent.Load() == 0 || (when == "WhileComputing" && published.Load() == 0) {
				t.Fatalf("the late reading was not sent while publishing (sent %d, published inside it %d)", sent.Load(), published.Load())
			}
			fast, ok := b.Window(t, "north", noon, "fast")
			if !ok || fast.Received != 31 || fast.Expected != 90 {
				t.Fatalf("fast row %+v (published %v), want 31 of 90 received (the late reading not in it)", fast, ok)
			}
			if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window WHERE turbine_id = 'N-002' AND window_start <= $1 AND window_end > $1`, noon); n != 1 {
				t.Fatalf("%d marks of N-002 × 12:00 after publication, want 1 (the late reading's)", n)
			}

			if res := b.DrainNow(t); res.Enqueued != 1 {
				t.Fatalf("drain: %+v, want 1 job", res)
			}
			b.WaitJobs(t)
			final, ok := b.Window(t, "north", noon, "final")
			if !ok || final.Received != 32 || final.Revision != 1 {
				t.Fatalf("final row %+v (exists %v), want received 32, revision 1", final, ok)
			}
			var fastRec, finalRec int64
			var pm float64
			err := b.Env.Control.QueryRow(ctx,
				`SELECT fast_received, final_received, received_divergence_pm FROM reconciliation_pm WHERE farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon).
				Scan(&fastRec, &finalRec, &pm)
			testdb.Must(t, err, "reconciliation")
			if fastRec != 31 || finalRec != 32 || pm != 31.25 {
				t.Fatalf("reconciliation fast %d final %d divergence %.3f‰, want 31 / 32 / 31.25‰", fastRec, finalRec, pm)
			}
			if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE kind = 'divergence' AND farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon); n != 1 {
				t.Fatalf("%d divergence alerts for the window, want 1", n)
			}
			if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window WHERE window_start <= $1 AND window_end > $1`, noon); n != 0 {
				t.Fatalf("%d marks of window 12:00 left after the correction, want 0", n)
			}
		})
	}
}

// TestTwoPublishersAtOnce: two fast paths (two processes) publish at
// 12:02:00 at once. A computes north's window 12:00 (N-001's 30 readings)
// and is held before publishing; N-002's reading of 12:00:10 then commits
// (marking the window); B starts while A is held. Each window is
// published once (2 windows due, 2 publications between A and B, one
// fast row each), north's by A without the late reading, and the
// reading's mark survives B: the drain's correction writes the final row
// with it (31), and reconciliation measures 1000 × 1/31 = 32.258 per
// mille. (Were B to compute north too, it would absorb that mark; A's
// publication from the older snapshot would then stand with nothing left
// to correct it.)
func TestTwoPublishersAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	aHeld, releaseA := make(chan struct{}), make(chan struct{})
	bHeld, releaseB := make(chan struct{}), make(chan struct{})
	hold := func(held, release chan struct{}) func(string) error {
		var once atomic.Bool
		return func(farm string) error {
			if farm == "north" && once.CompareAndSwap(false, true) {
				close(held)
				<-release
			}
			return nil
		}
	}
	var publications atomic.Int32
	count := func(publish.Published) { publications.Add(1) }
	pa, pb := b.PublisherWith(2*time.Minute), b.PublisherWith(2*time.Minute)
	pa.AfterCompute, pa.OnPublish = hold(aHeld, releaseA), count
	pb.AfterCompute, pb.OnPublish = hold(bHeld, releaseB), count

	b.Clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	b.Clock.Set(noon.Add(2 * time.Minute))
	type result struct {
		sum publish.Summary
		err error
	}
	aDone, bDone := make(chan result, 1), make(chan result, 1)
	go func() { s, err := pa.PublishDue(ctx); aDone <- result{s, err} }()
	<-aHeld
	testdb.Must(t, b.SendAt("N-002", noon.Add(10*time.Second)), "the late reading")
	go func() { s, err := pb.PublishDue(ctx); bDone <- result{s, err} }()
	var rb result
	bFinished := false
	select {
	case rb = <-bDone:
		bFinished = true
	case <-bHeld:
	}
	close(releaseA)
	ra := <-aDone
	if !bFinished {
		close(releaseB)
		rb = <-bDone
	}
	testdb.Must(t, ra.err, "publisher A")
	testdb.Must(t, rb.err, "publisher B")
	if n := publications.Load(); n != 2 || ra.sum.Windows+rb.sum.Windows != 2 {
		t.Fatalf("%d publications (A %d windows, B %d), want 2: north's and south's 12:00, once each", n, ra.sum.Windows, rb.sum.Windows)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast'`); n != 2 {
		t.Fatalf("%d fast rows, want 2", n)
	}
	if w, _ := b.Window(t, "north", noon, "fast"); w.Received != 30 {
		t.Fatalf("north's fast row received %d, want 30 (A's snapshot, before the late reading)", w.Received)
	}
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	if w, ok := b.Window(t, "north", noon, "final"); !ok || w.Received != 31 || w.Revision != 1 {
		t.Fatalf("north's final row %+v (exists %v), want received 31, revision 1: the late reading corrected", w, ok)
	}
	var pm float64
	err := b.Env.Control.QueryRow(ctx, `SELECT received_divergence_pm FROM reconciliation_pm WHERE farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon).Scan(&pm)
	testdb.Must(t, err, "reconciliation")
	if pm != 32.258 {
		t.Fatalf("divergence %.3f per mille, want 32.258", pm)
	}
}

// TestPublishingOnAPoolOfOneConnection: the fast path publishes two farms,
// four at a time, through a control pool of one connection: each farm's
// publication holds its lock's connection and takes no other, so it
// finishes (holding one while waiting for another would wait forever).
func TestPublishingOnAPoolOfOneConnection(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	cfg, err := pgxpool.ParseConfig(b.Env.ControlDSN)
	testdb.Must(t, err, "pool config")
	cfg.MaxConns = 1
	one, err := pgxpool.NewWithConfig(context.Background(), cfg)
	testdb.Must(t, err, "pool")
	t.Cleanup(one.Close)
	p := b.PublisherWith(2 * time.Minute)
	p.Control, p.Parallel = one, 4
	b.Clock.Set(noon.Add(2 * time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sum, err := p.PublishDue(ctx)
	testdb.Must(t, err, "publish on one connection")
	if sum.Windows != 2 {
		t.Fatalf("%d windows published, want 2 (north's and south's 12:00)", sum.Windows)
	}
}
