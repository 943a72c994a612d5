package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAReplayElsewhereWaitsWhileLiveWaits: serve's ingest (L, which
// signals) has room for one live row on s1 and its write held before the
// commit; a second live body waits for room, so L signals s1. A replay
// through another ingest pipeline (R, as `orchestrator ingest` in another
// process: its own writers, the shard's lock seen through pg_locks) finds
// the signal before its backfill batch and waits: its 20 lines are stored
// only after both live bodies were answered 200, and R says it waited.
func TestAReplayElsewhereWaitsWhileLiveWaits(t *testing.T) {
	t.Parallel()
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	env := testdb.New(t, smallFleet)
	signals := livefirst.NewSignals(env.Shards.Names(), env.Shards.Pool)
	sctx, stopSignals := context.WithCancel(context.Background())
	t.Cleanup(stopSignals)
	go signals.Run(sctx)
	cfg := ingest.DefaultConfig()
	cfg.QueuedRows, cfg.LiveSignals = 1, signals
	l := setupOn(t, env, cfg, &ingest.Hooks{BeforeCommit: func(shard string, _ ingest.Lane) error {
		if shard == "s1" && first.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
		return nil
	}})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	h := ingest.NewHandler(l.in, 4096, 16)
	h.AdmitWait = hang
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	postAsync := func(body string) <-chan int { return postAsync(srv.URL, body) }
	live1 := postAsync(line("T-001", tuesday, tuesday) + "\n")
	select {
	case <-held:
	case <-time.After(hang):
		t.Fatal("the first live body never reached its commit")
	}
	live2 := postAsync(line("T-002", tuesday, tuesday) + "\n")
	s1 := l.env.Shards.Pool("s1")
	for deadline := time.Now().Add(hang); ; runtime.Gosched() {
		on, err := livefirst.Held(context.Background(), s1)
		testdb.Must(t, err, "live pressure")
		if on && h.Waiting() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("live work waits (%d bodies) but s1 is not signalled (%v)", h.Waiting(), on)
		}
	}

	// The replay: T-003's 20 readings of two hours ago, received then too.
	yielding := make(chan struct{})
	var once atomic.Bool
	routes, err := ingest.LoadRoutes(context.Background(), l.env.Control, tuesday, 0)
	testdb.Must(t, err, "routes")
	r := ingest.New(ingest.DefaultConfig(), l.env.Control, l.env.Shards, routes, func() time.Time { return tuesday }, &ingest.Hooks{Yielding: func(string) {
		if once.CompareAndSwap(false, true) {
			close(yielding)
		}
	}})
	r.Start(context.Background())
	t.Cleanup(r.Close)
	var replay strings.Builder
	for i := range 20 {
		at := tuesday.Add(-2*time.Hour + time.Duration(2*i)*time.Second)
		fmt.Fprintln(&replay, line("T-003", at, at))
	}
	replayed := make(chan answer, 1)
	go func() {
		dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(replay.String()))
		if err != nil {
			replayed <- answer{err: err}
			return
		}
		sum, err := r.Ingest(context.Background(), "replay", dec)
		replayed <- answer{sum, err}
	}()
	select {
	case <-yielding:
	case <-time.After(hang):
		t.Fatal("the replay's backfill writer never waited for live")
	}
	if n := l.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-003'`); n != 0 {
		t.Fatalf("the replay stored %d rows while live waited, want 0", n)
	}

	close(release)
	released = true
	got := wait(t, "the replay", replayed)
	for i, ch := range []<-chan int{live1, live2} {
		select {
		case c := <-ch:
			if c != http.StatusOK {
				t.Fatalf("live body %d: %d, want 200", i+1, c)
			}
		default:
			t.Fatalf("the replay finished before live body %d was answered", i+1)
		}
	}
	if got.err != nil || got.sum.Accepted != 20 {
		t.Fatalf("the replay: %+v %v, want 20 accepted", got.sum, got.err)
	}
	if y := r.Yielded(); y < livefirst.Poll {
		t.Fatalf("the replay says it waited %s for live, want at least %s", y, livefirst.Poll)
	}
}

// TestMaxRatePacesReading: at --max-rate 1000, reading 2,560 lines takes
// 2.56 s of the pacer's clock (it sleeps what it is ahead of 1 line per
// ms, looked at every 256 lines), and every line is stored.
func TestMaxRatePacesReading(t *testing.T) {
	t.Parallel()
	cfg := ingest.DefaultConfig()
	cfg.MaxRate = 1000
	b := setup(t, smallFleet, cfg, nil)
	clock := time.Date(2026, 8, 4, 9, 0, 0, 0, time.UTC)
	var slept time.Duration
	b.in.SetPacer(func() time.Time { return clock }, func(d time.Duration) { slept += d; clock = clock.Add(d) })
	var body strings.Builder
	for i := range 2560 {
		at := tuesday.Add(-time.Hour + time.Duration(i/10*2)*time.Second)
		fmt.Fprintln(&body, line(fmt.Sprintf("T-%03d", i%10+1), at, tuesday))
	}
	sum, err := b.ingest(t, reading.NDJSON, body.String())
	testdb.Must(t, err, "paced ingest")
	if sum.Accepted != 2560 {
		t.Fatalf("paced ingest: %+v, want 2560 accepted", sum)
	}
	if slept != 2560*time.Millisecond {
		t.Fatalf("reading 2,560 lines at 1,000 a second slept %s, want 2.56s", slept)
	}
}
