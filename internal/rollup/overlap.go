package rollup

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/window"
)

// A large correction is computed on the shard in ranges of windows, one
// after the other, and each range's control writes (parts, final rows,
// reconciliation) run while the shard computes the next. Only the last
// range's control writes are not overlapped, so the ranges shrink: each
// is overlapShrink of the one before, as long as the last keeps
// overlapMinWindows windows, and there are at most overlapMaxRanges of
// them. One turbine's day (1,440 windows) is 4 ranges (614, 399, 259,
// 168 windows). The shrink is what the control database's writes of a
// window cost against the shard's compute of it, so the next range's
// compute covers this one's writes (the runs that chose 0.65:
// BENCHMARKS.md, "Measurements behind the code"). A correction too small
// to split (under 280 windows) is written after the shard's reads: the
// extra statements would cost more than the overlap saves.
const (
	overlapMinWindows = 110
	overlapMaxRanges  = 4
	overlapShrink     = 0.65
)

// overlapRanges splits the sorted windows a correction writes into the
// ranges computed one after the other (each a run of the list), or nil
// when the correction is too small to be split.
func overlapRanges(windows []int) [][]int {
	n := len(windows)
	for k := overlapMaxRanges; k >= 2; k-- {
		// sizes first, first*shrink, ..., first*shrink^(k-1), adding up to n
		first := float64(n) * (1 - overlapShrink) / (1 - math.Pow(overlapShrink, float64(k)))
		if first*math.Pow(overlapShrink, float64(k-1)) < overlapMinWindows {
			continue
		}
		out := make([][]int, 0, k)
		from, size := 0, first
		for r := 0; r < k; r++ {
			to := from + int(math.Round(size))
			if r == k-1 {
				to = n
			}
			out = append(out, windows[from:to])
			from, size = to, size*overlapShrink
		}
		return out
	}
	return nil
}

// computeOverlapped computes the pairs' windows on the shard range by range
// (window.Compute each) and hands each range's sums of finalWindows to w on
// the control database, which writes them, one range after the other,
// while the shard computes the next ones. It returns the shard's work and a
// function that waits for the last control writes, still running; it has
// always waited for the others, error or not. The sums of windows the
// shard does not have whole (fewer than wholeAt turbines; 0: no such test)
// are not written: they are returned in the work's NotWhole, for the
// caller to fill in.
//
// The ranges are taken in order by the caller's shard transaction and, if
// pool gives a second session before they run out, by a helper
// transaction on it as well: one correction then computes on two cores
// (docs/design.md, "Large corrections"). The helper writes only its own
// ranges' turbine_window rows and farm_window_sum rows (its windows are no
// other range's), reads the readings at a snapshot taken after the
// caller's claim of the marks, and commits before computeOverlapped
// returns: before the control database commits (the parts written there
// from its sums then exist on the shard) and before the caller's
// statements that read its rows (the fill-in, the day's sums). If the
// recompute fails after that commit, the marks stay (they are the caller
// transaction's) and the next recompute repeats the work, finding the same
// rows: the helper changes nothing a recompute's outcome depends on. It
// takes no window lock: the caller's, held to its own commit, keeps every
// other writer of the farm-day out until then. sessions says how many
// transactions computed ranges (1 or 2).
func computeOverlapped(ctx context.Context, sq *sharddb.Queries, pool *pgxpool.Pool, g window.Grid, turbines []window.Turbine, rules fleet.Rules, pairs window.Pairs,
	finalWindows []int, ranges [][]int, wholeAt int, now time.Time, w *windowWriter) (total window.ShardWork, wait func() error, sessions int, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	var (
		mu   sync.Mutex
		next int
	)
	take := func() ([]int, bool) {
		mu.Lock()
		started := next > 0
		mu.Unlock()
		// Between ranges a correction waits, briefly, while live ingest or
		// the fast path wait on the shard (internal/livefirst): bounded,
		// since it holds the farm-day's window lock.
		if started && pool != nil {
			_, _ = livefirst.WaitAtMost(ctx, pool, livefirst.RangeWait)
		}
		mu.Lock()
		defer mu.Unlock()
		if next == len(ranges) || ctx.Err() != nil {
			return nil, false
		}
		next++
		return ranges[next-1], true
	}
	// The control writes: one range's after the other, in the order the
	// shard sessions finish them; the day's reconciliation with the last.
	out := make(chan []sharddb.FarmWindowSumsRow, len(ranges))
	written := inBackground(func() error {
		for k := range ranges {
			var sums []sharddb.FarmWindowSumsRow
			select {
			case sums = <-out:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			if err := w.write(ctx, sums, k == len(ranges)-1); err != nil {
				cancel(err)
				return err
			}
		}
		return nil
	})
	compute := func(q *sharddb.Queries, r []int) error {
		from, to := r[0], r[len(r)-1]
		var sums []int
		for _, i := range finalWindows {
			if i >= from && i <= to {
				sums = append(sums, i)
			}
		}
		work, err := window.Compute(ctx, q, g, turbines, rules, pairs.Within(from, to), sums, false, now)
		if err != nil {
			cancel(err)
			return err
		}
		whole, short := window.SplitWhole(work.Sums, wholeAt)
		mu.Lock()
		total.Windows += work.Windows
		total.RowsRead += work.RowsRead
		total.Sums = append(total.Sums, whole...)
		total.NotWhole = append(total.NotWhole, short...)
		mu.Unlock()
		out <- whole
		return nil
	}
	// The helper: a second session, if the pool has one to give before the
	// ranges run out (it never waits for one once they have: a pool every
	// connection of which is a job waiting for its helper must not stall).
	acquire, stopAcquiring := context.WithCancel(ctx)
	defer stopAcquiring()
	var helped bool
	helper := inBackground(func() error {
		if pool == nil {
			return nil
		}
		// No second core for a correction while live work waits on the shard.
		if held, err := livefirst.Held(ctx, pool); err != nil || held {
			return nil
		}
		conn, err := pool.Acquire(acquire)
		if err != nil {
			return nil // none to be had: the caller's transaction computes every range
		}
		defer conn.Release()
		fail := func(what string, err error) error {
			err = fmt.Errorf("helper session: %s: %w", what, err)
			cancel(err)
			return err
		}
		// A session that cannot begin (a connection gone stale in the pool)
		// helps with nothing: the caller's transaction computes every range.
		tx, err := conn.Begin(ctx)
		if err != nil {
			return nil
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		hq := sharddb.New(tx)
		if err := hq.PlanGeneric(ctx); err != nil {
			return nil
		}
		r, ok := take()
		if !ok {
			return nil
		}
		helped = true
		for ; ok; r, ok = take() {
			if err := compute(hq, r); err != nil {
				return err
			}
		}
		if context.Cause(ctx) != nil {
			return nil // the caller's error, or the control writes'
		}
		// Retention's cut, asked as the caller asks it after its own reads:
		// a day that lost readings is refused (the caller's check sees the
		// same record, made before this one), so nothing is committed here.
		lost, err := hq.ReadingsDayLost(ctx, g.Start)
		if err != nil {
			return fail("retention", err)
		}
		if lost.Lost {
			return nil
		}
		if err := tx.Commit(ctx); err != nil {
			return fail("commit", err)
		}
		return nil
	})
	for r, ok := take(); ok; r, ok = take() {
		if compute(sq, r) != nil {
			break
		}
	}
	stopAcquiring()
	_ = helper() // its errors are the context's cause
	if err := context.Cause(ctx); err != nil {
		// The first failure: a range's (either session's), the helper's
		// commit, a control write, or the job's own context.
		cancel(err)
		_ = written()
		return total, func() error { return nil }, 0, err
	}
	sessions = 1
	if helped {
		sessions = 2
	}
	return total, func() error {
		defer cancel(nil)
		return written()
	}, sessions, nil
}

// inBackground runs f in a goroutine and returns a function that waits for
// it and returns its error (each call the same).
func inBackground(f func() error) func() error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() { err = <-done })
		return err
	}
}
