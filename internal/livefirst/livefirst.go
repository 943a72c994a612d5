// Package livefirst keeps a shard for live readings while they are behind,
// across processes. A process whose live writes to a shard wait (a body
// waiting for admission, a shared write that could not take all that was
// queued, a batch queued longer than Behind) raises the shard's Signal: it
// holds a shared advisory lock on the shard's database (LivePressureHold)
// until no live work has waited for Hold. Writers of replayed readings in
// any process (ingest's backfill writer, a move's copy) call Wait before
// each batch: it returns once no process holds the lock. A replay thus
// takes what live leaves, whoever runs it; a replay alone never waits.
package livefirst

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/sharddb"
)

// Hold is how long a shard stays signalled after live work last waited:
// long enough that a replay does not resume between two live bodies of a
// backlog, short enough that it resumes within a second of live catching up.
const Hold = time.Second

// Behind is how long a live batch may wait in its writer's queue before
// live counts as behind (a write of the shared batch ahead of it takes
// tens of milliseconds).
const Behind = 250 * time.Millisecond

// Poll is how often a waiting replay asks again.
const Poll = 100 * time.Millisecond

// AskTimeout bounds one question to a shard (a healthy one answers in a
// millisecond): a hung shard must not hold a replay's writer before the
// write that would fail within its own bound.
const AskTimeout = time.Second

// Signal is one shard's live-pressure signal in this process.
type Signal struct {
	shard string
	pool  *pgxpool.Pool
	kick  chan struct{}
	log   *slog.Logger
}

// NewSignal returns the signal of the shard behind pool; Run holds it.
func NewSignal(shard string, pool *pgxpool.Pool) *Signal {
	return &Signal{shard: shard, pool: pool, kick: make(chan struct{}, 1), log: slog.Default()}
}

// Raise says live work on the shard waits now. It never blocks.
func (s *Signal) Raise() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Run holds the shard's lock while Raise is called, Hold past the last
// call, until stop is closed or ctx ends.
func (s *Signal) Run(ctx context.Context, stop <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-s.kick:
		}
		conn, err := s.pool.Acquire(ctx)
		if err != nil {
			s.log.Warn("live first: cannot signal the shard", "shard", s.shard, "err", err)
			continue
		}
		if err := sharddb.New(conn).LivePressureHold(ctx); err != nil {
			s.log.Warn("live first: cannot signal the shard", "shard", s.shard, "err", err)
			conn.Release()
			continue
		}
		timer := time.NewTimer(Hold)
		for held := true; held; {
			select {
			case <-s.kick:
				timer.Reset(Hold)
			case <-timer.C:
				held = false
			case <-stop:
				held = false
			case <-ctx.Done():
				held = false
			}
		}
		timer.Stop()
		// A connection still holding the lock must not go back to the
		// pool: it would signal for as long as it lives.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		released, err := sharddb.New(conn).LivePressureRelease(rctx)
		cancel()
		if err != nil || !released {
			_ = conn.Conn().Close(context.Background())
		}
		conn.Release()
	}
}

// Held says some process signals live pressure on the shard behind pool
// (asked within AskTimeout).
func Held(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, AskTimeout)
	defer cancel()
	return sharddb.New(pool).LivePressureHeld(ctx)
}

// Wait returns once no process signals live pressure on the shard behind
// pool (asking every Poll), with how long it waited. An error asking is
// returned at once: a replay is never held back by a signal it cannot read.
func Wait(ctx context.Context, pool *pgxpool.Pool) (time.Duration, error) {
	start := time.Now()
	for {
		held, err := Held(ctx, pool)
		if err != nil || !held {
			return time.Since(start), err
		}
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-time.After(Poll):
		}
	}
}

// Signals are a process's signals, one per shard; nil signals nothing.
type Signals struct {
	by   map[string]*Signal
	stop chan struct{}
}

// NewSignals returns a signal for each named shard (pool gives its pool;
// a shard without one is left out). Run holds them.
func NewSignals(names []string, pool func(string) *pgxpool.Pool) *Signals {
	s := &Signals{by: map[string]*Signal{}, stop: make(chan struct{})}
	for _, n := range names {
		if p := pool(n); p != nil {
			s.by[n] = NewSignal(n, p)
		}
	}
	return s
}

// Raise says live work on shard waits now (serve's live ingest behind, a
// publication of due windows running). It never blocks.
func (s *Signals) Raise(shard string) {
	if s == nil {
		return
	}
	if sig := s.by[shard]; sig != nil {
		sig.Raise()
	}
}

// Run holds each shard's signal while it is raised, until ctx ends.
func (s *Signals) Run(ctx context.Context) {
	done := make(chan struct{})
	n := 0
	for _, sig := range s.by {
		n++
		go func() { sig.Run(ctx, s.stop); done <- struct{}{} }()
	}
	for range n {
		<-done
	}
}

// RangeWait is the most a correction waits between two of its ranges:
// it holds its farm-day's window lock then, which that farm's own
// publication needs.
const RangeWait = 2 * time.Second

// WaitAtMost is Wait for at most max: a writer holding locks others may
// need waits no longer than that. Running out of max is no error.
func WaitAtMost(ctx context.Context, pool *pgxpool.Pool, max time.Duration) (time.Duration, error) {
	bounded, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	waited, err := Wait(bounded, pool)
	if err != nil && ctx.Err() == nil && bounded.Err() != nil {
		err = nil
	}
	return waited, err
}
