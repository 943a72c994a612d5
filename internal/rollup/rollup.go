// Package rollup is the farm-day recompute: for one farm-local day of one
// farm's turbines on one shard, it claims the request and the marks,
// computes the turbine-windows they name (through the window engine,
// package window), writes the final windows, their reconciliation and the
// day's turbine_day rows (expected, received, available, late, early,
// lags) on the control database. Running it again changes nothing.
//
// Two recomputes of the same farm-day-shard never interleave: each holds a
// transaction advisory lock on the control database from before its shard
// snapshot is opened until its upsert commits, so the one with the newer
// snapshot always writes last (docs/dirty-marks.md, invariant 3).
package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/fleet"
)

// Why a recompute was asked for. Dirty recomputes are drained first.
const (
	ReasonDirty    = "dirty"
	ReasonSchedule = "schedule"
	ReasonManual   = "manual"
)

// Request names one farm-day on one shard.
type Request struct {
	FarmID string
	// Day is the farm-local date (any time of day; only the date counts).
	Day    time.Time
	Shard  string
	Reason string
	// Attempt is the job attempt (1 = first). A retried dirty job does
	// what its first attempt would have, except that it never skips for
	// want of a request: the first attempt may have claimed the request in
	// its committed control transaction and died before its shard commit,
	// leaving the marks on the shard for the retry.
	Attempt int
	// JobID is recorded on the rows; nil outside River.
	JobID *int64
	// Changed, if set, is called in the recompute's control transaction,
	// after its writes, with the starts of the windows whose readings
	// changed (those its claimed marks name), ascending: the
	// stalled-turbine watcher judges them (jobs: a judge_stalls job queued
	// in tx, so that it exists when, and only when, the correction commits).
	Changed func(ctx context.Context, tx pgx.Tx, starts []time.Time) error
}

func (r Request) key() string {
	return r.FarmID + "/" + r.Day.Format(time.DateOnly) + "/" + r.Shard
}

// Result says what a recompute did.
type Result struct {
	// Turbines is how many turbine_day rows were written (0 while the day
	// has not ended: a day in progress has no turbine_day rows).
	Turbines int
	// Full is true when every window of every turbine of the farm on the
	// shard was recomputed from the readings.
	Full bool
	// Windows is how many turbine_window rows were recomputed from the
	// readings; Claimed how many dirty turbine-windows were taken.
	Windows int64
	Claimed int
	// FinalWindows is how many farm windows got a final row (written or
	// rewritten).
	FinalWindows int
	// RowsRead is how many readings the shard statement counted: the
	// recompute's work.
	RowsRead int64
	// Ranges is how many ranges of windows a large correction was computed
	// in, each range's control writes running while the shard computed the
	// next (0: computed at once, written after).
	Ranges int
	// Sessions is how many shard transactions computed those ranges: 2
	// when the correction took a helper session (the ranges then run on
	// two cores; helperPool says when), else 1 (0: no ranges).
	Sessions int
	// Took is the recompute's wall time, from its shard transaction's
	// start to the shard's commit (a job's time less River's).
	Took time.Duration
	// Skipped is true when a dirty request had already been taken by
	// another recompute whose snapshot is newer than the marks: nothing to do.
	Skipped bool
	// Refused is set when the day cannot be recomputed (retention has
	// dropped some of its readings): the stored rows were left as they are
	// and any request for the day was taken, since no job could serve it.
	Refused error
	// Alarms lists the bug alarms raised (a day whose windows do not add up
	// to its turbine_day rows).
	Alarms []string
}

// ErrReadingsDropped says a farm-day's readings are no longer all there.
var ErrReadingsDropped = errors.New("readings dropped by retention")

// Computer recomputes farm-days.
type Computer struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	Now     func() time.Time
	// OnResult, if set, sees every finished recompute (tests and benchmarks
	// add up the work with it).
	OnResult func(Request, Result)
	// AfterCompute, if set, runs after the shard query and before the upsert,
	// with the lock held (tests hold a recompute mid-way with it).
	AfterCompute func(Request)
	// BetweenCommits, if set, runs after the control commit and before the
	// shard commit; an error rolls the shard side back and is returned, as
	// a failed shard commit or a worker killed there would (tests).
	BetweenCommits func(Request) error
}

// Recompute recomputes one farm-day-shard and writes its rows.
//
// The control side (advisory lock, claim of the pending request, every
// write) is one transaction; the shard side (window lock, claim of the dirty
// turbine-windows, turbine_window upserts) another, committed after the
// control one. If the recompute fails anywhere, both claims roll back and
// the request and its marks are still there for the next job; if only the
// shard commit fails, the marks stay and the next recompute repeats the
// same work (never a lost correction).
func (c *Computer) Recompute(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	pool := c.Shards.Pool(req.Shard)
	if pool == nil {
		return Result{}, fmt.Errorf("rollup %s: shard %q is not registered", req.key(), req.Shard)
	}
	stx, err := pool.Begin(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("rollup %s: shard %s: %w", req.key(), req.Shard, err)
	}
	defer func() { _ = stx.Rollback(context.WithoutCancel(ctx)) }()
	var res Result
	err = pgx.BeginFunc(ctx, c.Control, func(tx pgx.Tx) error {
		var err error
		res, err = c.recompute(ctx, tx, stx, req)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("rollup %s: %w", req.key(), err)
	}
	if res.Refused == nil && !res.Skipped {
		if err := faultpoint.Reached(ctx, faultpoint.RollupBetweenCommits, req.Reason+" "+req.key()); err != nil {
			return Result{}, fmt.Errorf("rollup %s: %w", req.key(), err)
		}
		if c.BetweenCommits != nil {
			if err := c.BetweenCommits(req); err != nil {
				return Result{}, fmt.Errorf("rollup %s: %w", req.key(), err)
			}
		}
		if err := stx.Commit(ctx); err != nil {
			return Result{}, fmt.Errorf("rollup %s: commit shard %s (the control side committed; the marks stay and the next recompute repeats this one): %w", req.key(), req.Shard, err)
		}
	}
	res.Took = time.Since(start)
	if c.OnResult != nil {
		c.OnResult(req, res)
	}
	return res, nil
}

// recompute is one recompute inside its two transactions: open the day
// (lock, claims, what the day is), plan the windows by mode (full, close,
// correction), compute them on the shard, then write the control side.
func (c *Computer) recompute(ctx context.Context, tx, stx pgx.Tx, req Request) (Result, error) {
	d, early, err := c.open(ctx, tx, stx, req)
	if err != nil || early != nil {
		if early == nil {
			early = &Result{}
		}
		return *early, err
	}
	var p plan
	switch {
	case d.full:
		p, err = d.planFull(ctx)
	case d.closeDay:
		p, err = d.planClose(ctx)
	default:
		p, err = d.planCorrection(ctx)
	}
	if err != nil {
		return Result{}, err
	}
	s, err := c.computeShard(ctx, d, p)
	if err != nil {
		return Result{}, err
	}
	res := Result{Full: d.full, Windows: s.work.Windows, Claimed: d.claimed, RowsRead: s.work.RowsRead, Ranges: len(s.ranges), Sessions: s.sessions}
	if s.work.SumsDiffered > 0 {
		// The maintained sums drifted from turbine_window: rebuilt (the
		// parts written below are right), and a bug to find.
		msg := fmt.Sprintf("BUG: %s shard %s: farm_window_sum differed from turbine_window in %d windows (first %s); rebuilt",
			req.key(), req.Shard, s.work.SumsDiffered, s.work.FirstDiffered.UTC().Format(time.RFC3339))
		res.Alarms = append(res.Alarms, msg)
		detail, _ := json.Marshal(map[string]any{"windows_differed": s.work.SumsDiffered, "first_window": s.work.FirstDiffered})
		if err := d.q.AlertRaise(ctx, controldb.AlertRaiseParams{
			Kind: "window_sum", FarmID: req.FarmID, Scope: "day", PeriodStart: d.farm.DayStart, Day: req.Day, RaisedAt: d.now,
			Detail: detail, Message: msg,
		}); err != nil {
			return Result{}, fmt.Errorf("raise alarm: %w", err)
		}
	}
	if s.lost.Lost {
		// Overwriting the stored rows would replace good counts with
		// partial ones. Commit the claim (nothing can serve the request),
		// undo any window written on the control side, roll the shard
		// back, and say why.
		if s.sp != nil {
			if err := s.sp.Rollback(ctx); err != nil {
				return Result{}, fmt.Errorf("roll back to the savepoint: %w", err)
			}
		}
		return Result{Ranges: len(s.ranges), Refused: fmt.Errorf("%w: shard %s keeps readings from %s on, and the farm-local day %s starts before that; its stored rows are kept as they are",
			ErrReadingsDropped, req.Shard, s.lost.DroppedBefore.UTC().Format(time.RFC3339), req.Day.Format(time.DateOnly))}, nil
	}
	if s.sp != nil {
		if err := s.sp.Commit(ctx); err != nil {
			return Result{}, fmt.Errorf("release the savepoint: %w", err)
		}
		s.ww.q = d.q
	}
	if c.AfterCompute != nil {
		c.AfterCompute(req)
	}
	if err := faultpoint.Reached(ctx, faultpoint.RollupBeforeControlCommit, req.Reason+" "+req.key()); err != nil {
		return Result{}, err
	}
	if err := c.writeControl(ctx, d, s, &res); err != nil {
		return Result{}, err
	}
	if req.Changed != nil && len(d.changed) > 0 {
		starts := make([]time.Time, len(d.changed))
		for i, w := range d.changed {
			starts[i], _ = d.g.Bounds(w)
		}
		if err := req.Changed(ctx, tx, starts); err != nil {
			return Result{}, fmt.Errorf("stall watcher: %w", err)
		}
	}
	return res, nil
}
