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
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/window"
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

func (c *Computer) recompute(ctx context.Context, tx, stx pgx.Tx, req Request) (Result, error) {
	q := controldb.New(tx)
	// The lock is taken before the shard snapshot opens and released by the
	// commit after the writes: the newer snapshot always writes last.
	if err := q.AdvisoryXactLockKey(ctx, req.key()); err != nil {
		return Result{}, fmt.Errorf("lock: %w", err)
	}
	// Claim any dirty request before the snapshot: marks that reach the
	// control database after this point get a job of their own (which
	// waits on the lock).
	_, err := q.RollupPendingClaim(ctx, controldb.RollupPendingClaimParams{FarmID: req.FarmID, Day: req.Day, ShardName: req.Shard})
	claimed := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Result{}, fmt.Errorf("claim: %w", err)
	}
	if req.Reason == ReasonDirty && req.Attempt <= 1 && !claimed {
		// Another recompute claimed this request after its marks' rows
		// had committed, so its snapshot holds them.
		return Result{Skipped: true}, nil
	}
	farm, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: req.FarmID, Day: req.Day})
	if err != nil {
		return Result{}, fmt.Errorf("farm: %w", err)
	}
	rules := fleet.RulesFromRow(farm.FarmRule)
	rows, err := q.TurbineRollupList(ctx, controldb.TurbineRollupListParams{FarmID: req.FarmID, ShardName: req.Shard})
	if err != nil {
		return Result{}, fmt.Errorf("turbines: %w", err)
	}
	turbines := window.TurbinesOf(rows)
	// A retry does the same work as a first attempt, so that the rows a
	// day ends with do not depend on whether a job was retried (a killed
	// worker, a shard that failed): only the marks decide.
	full := req.Reason == ReasonManual
	if len(turbines) == 0 {
		return Result{Full: full}, nil
	}
	now := c.Now()
	g := window.Grid{FarmID: req.FarmID, Day: req.Day, Start: farm.DayStart, End: farm.DayEnd, Window: rules.Window}
	closed := g.Closed(now, rules.AllowedLateness) // windows past the watermark: the only ones recomputed and given final rows
	// turbine_day rows are written only once every window of the day is
	// past the watermark: a day adds up from all its windows.
	dayEnded := closed == g.Len()
	if !dayEnded {
		if closed, err = leaveToFastPath(ctx, q, g, closed); err != nil {
			return Result{}, err
		}
	}
	// A dirty recompute corrects the windows its marks name; the close of a
	// day (scheduled, manual) also fills in any window never computed.
	// Either takes only windows past the watermark: a window not yet there
	// is the fast path's to compute (it absorbs their marks).
	closeDay := req.Reason != ReasonDirty
	claimBefore, _ := g.Bounds(closed)
	if closed == g.Len() {
		claimBefore = farm.DayEnd
	}

	sq := sharddb.New(stx)
	if err := sq.WindowLock(ctx, sharddb.WindowLockParams{FarmID: req.FarmID, Day: req.Day}); err != nil {
		return Result{}, fmt.Errorf("shard %s: window lock: %w", req.Shard, err)
	}
	allIDs := make([]string, len(turbines))
	for i, t := range turbines {
		allIDs[i] = t.ID
	}
	if empty, err := emptyDay(ctx, q, sq, farm, allIDs); err != nil {
		return Result{}, fmt.Errorf("shard %s: %w", req.Shard, err)
	} else if empty {
		return Result{Full: full}, nil
	}
	pairs := window.Pairs{}
	dirty, err := sq.DirtyWindowClaim(ctx, sharddb.DirtyWindowClaimParams{
		FarmID: req.FarmID, Day: req.Day, Before: claimBefore, DayStart: farm.DayStart, WindowS: int32(rules.Window / time.Second),
	})
	if err != nil {
		return Result{}, fmt.Errorf("shard %s: claim dirty windows: %w", req.Shard, err)
	}
	for _, d := range dirty {
		for w := d.FirstWindow; w <= d.LastWindow; w++ {
			pairs.Add(d.TurbineID, int(w))
		}
	}
	claimedPairs := pairs.Len()
	ids := allIDs
	if !closeDay {
		// A correction writes turbine_day rows only for the turbines its
		// marks name.
		ids = pairs.Turbines()
	}
	missing := func(turbines []string, first, last int) error {
		if err := addMissing(ctx, sq, g, turbines, first, last, nil, pairs); err != nil {
			return fmt.Errorf("shard %s: %w", req.Shard, err)
		}
		return nil
	}
	offGrid := func() error {
		if _, err := sq.TurbineWindowOffGridDelete(ctx, sharddb.TurbineWindowOffGridDeleteParams{
			FarmID: req.FarmID, Day: req.Day, TurbineIds: ids, DayStart: farm.DayStart, WindowS: int32(rules.Window / time.Second), DayEnd: farm.DayEnd,
		}); err != nil {
			return fmt.Errorf("shard %s: off-grid windows: %w", req.Shard, err)
		}
		return nil
	}
	var finalWindows []int
	wholeAt := 0 // a correction: the turbines a window it writes must have here
	offGridAfter := false
	switch {
	case full:
		if err := offGrid(); err != nil {
			return Result{}, err
		}
		pairs.AddRange(turbines, 0, closed)
		finalWindows = rangeOf(0, closed)
	case closeDay:
		// Fill in every window past the watermark that was never computed
		// (the fast path was away, or a turbine was added), so the day
		// adds up from its windows.
		if err := offGrid(); err != nil {
			return Result{}, err
		}
		if err := missing(ids, 0, closed-1); err != nil {
			return Result{}, err
		}
		finalWindows = rangeOf(0, closed)
	default:
		// A correction: the marked turbine-windows, plus, in the windows it
		// touches that this shard has not computed whole yet (the fast path
		// did not publish them), every turbine of the farm on the shard, so
		// each window's part is whole. Which windows those are, the window
		// statement's sums say (window.SplitWhole); they are filled in after it
		// (fillWhole), before any of their control writes.
		wholeAt = len(allIDs)
		// Final rows only for the touched windows (whole once filled in).
		finalWindows = pairs.Windows()
		if dayEnded && len(ids) > 0 {
			// The day is past the watermark: its turbine_day rows for these
			// turbines are rewritten, so every window of theirs must exist,
			// and none of another grid: the off-grid rows are deleted after
			// the windows are computed, before the day is added up (below;
			// the upsert never writes a row off the grid, and one on a grid
			// start with another end is missing here, so the order does not
			// matter, and the delete runs while the control database writes
			// the last range).
			offGridAfter = true
			// Turbines whose marks already name every window are
			// recomputed whole: nothing to look for.
			var partial []string
			for _, id := range ids {
				if len(pairs[id]) < closed {
					partial = append(partial, id)
				}
			}
			if len(partial) > 0 {
				if err := missing(partial, 0, closed-1); err != nil {
					return Result{}, err
				}
			}
		}
	}
	// The control side's window writes: this shard's parts, final rows and
	// their reconciliation. A large correction writes each range of its
	// windows there while the shard computes the next (overlapped, below),
	// inside a savepoint that is undone if retention has cut the day; any
	// other recompute writes them once the shard's reads are done.
	var ranges [][]int
	if !closeDay {
		ranges = overlapRanges(pairs.Windows())
	}
	wq := q
	var sp pgx.Tx
	if len(ranges) > 0 {
		if sp, err = tx.Begin(ctx); err != nil {
			return Result{}, fmt.Errorf("savepoint: %w", err)
		}
		wq = controldb.New(sp)
	}
	ww := &windowWriter{q: wq, farm: req.FarmID, shard: req.Shard, day: req.Day, now: now, jobID: req.JobID}
	var work window.ShardWork
	wait := func() error { return nil }
	sessions := 0
	if len(ranges) > 0 {
		// The ranges planned once per connection, not once a range
		// (docs/design.md); custom plans again after them.
		if err := sq.PlanGeneric(ctx); err != nil {
			return Result{}, fmt.Errorf("shard %s: generic plans: %w", req.Shard, err)
		}
		work, wait, sessions, err = computeOverlapped(ctx, sq, c.helperPool(req.Shard, pairs.Len()), g, turbines, rules, pairs, finalWindows, ranges, wholeAt, now, ww)
	} else if work, err = window.Compute(ctx, sq, g, turbines, rules, pairs, finalWindows, closeDay, now); err == nil {
		work.Sums, work.NotWhole = window.SplitWhole(work.Sums, wholeAt)
	}
	if err != nil {
		return Result{}, fmt.Errorf("shard %s: %w", req.Shard, err)
	}
	if len(ranges) > 0 {
		if err := sq.PlanCustom(ctx); err != nil {
			_ = wait()
			return Result{}, fmt.Errorf("shard %s: custom plans: %w", req.Shard, err)
		}
	}
	var dayRows []sharddb.TurbineDayFromWindowsRow
	var lost sharddb.ReadingsDayLostRow
	var fillSums []sharddb.FarmWindowSumsRow
	err = func() (ferr error) {
		// The last range's control writes run on meanwhile: waited for
		// whatever happens here, so that no statement is left running on
		// the control transaction.
		defer func() {
			if werr := wait(); werr != nil && ferr == nil {
				ferr = werr
			}
		}()
		if len(work.NotWhole) > 0 {
			fill, err := fillWhole(ctx, sq, g, turbines, allIDs, rules, work.NotWhole, now)
			if err != nil {
				return fmt.Errorf("shard %s: %w", req.Shard, err)
			}
			work.Windows += fill.Windows
			work.RowsRead += fill.RowsRead
			fillSums = fill.Sums
		}
		if offGridAfter {
			if err := offGrid(); err != nil {
				return err
			}
		}
		if dayEnded && len(ids) > 0 {
			if dayRows, err = sq.TurbineDayFromWindows(ctx, sharddb.TurbineDayFromWindowsParams{
				DayStart: farm.DayStart, DayEnd: farm.DayEnd, FarmID: req.FarmID, Day: req.Day, TurbineIds: ids,
			}); err != nil {
				return fmt.Errorf("shard %s: day from windows: %w", req.Shard, err)
			}
		}
		// Has retention cut the day? Asked in the same shard transaction as
		// the reads: the compute's locks on the partitions it read make a
		// concurrent DROP wait until the check has run, and a DROP that
		// came first has recorded itself by then (same transaction as the
		// DROP).
		if lost, err = sq.ReadingsDayLost(ctx, farm.DayStart); err != nil {
			return fmt.Errorf("shard %s: retention: %w", req.Shard, err)
		}
		return nil
	}()
	if err != nil {
		return Result{}, err
	}
	if len(fillSums) > 0 {
		// The windows filled in: written after the others (with their
		// days' reconciliation), inside the savepoint of an overlapped
		// correction; a correction written at once writes them with the rest.
		if len(ranges) > 0 {
			if err := ww.write(ctx, fillSums, true); err != nil {
				return Result{}, err
			}
		} else {
			work.Sums = append(work.Sums, fillSums...)
			slices.SortFunc(work.Sums, func(a, b sharddb.FarmWindowSumsRow) int { return a.WindowStart.Compare(b.WindowStart) })
		}
	}
	res := Result{Full: full, Windows: work.Windows, Claimed: claimedPairs, RowsRead: work.RowsRead, Ranges: len(ranges), Sessions: sessions}
	if work.SumsDiffered > 0 {
		// The maintained sums drifted from turbine_window: rebuilt (the
		// parts written below are right), and a bug to find.
		msg := fmt.Sprintf("BUG: %s shard %s: farm_window_sum differed from turbine_window in %d windows (first %s); rebuilt",
			req.key(), req.Shard, work.SumsDiffered, work.FirstDiffered.UTC().Format(time.RFC3339))
		res.Alarms = append(res.Alarms, msg)
		detail, _ := json.Marshal(map[string]any{"windows_differed": work.SumsDiffered, "first_window": work.FirstDiffered})
		if err := q.AlertRaise(ctx, controldb.AlertRaiseParams{
			Kind: "window_sum", FarmID: req.FarmID, Scope: "day", PeriodStart: farm.DayStart, Day: req.Day, RaisedAt: now,
			Detail: detail, Message: msg,
		}); err != nil {
			return Result{}, fmt.Errorf("raise alarm: %w", err)
		}
	}
	if lost.Lost {
		// Overwriting the stored rows would replace good counts with
		// partial ones. Commit the claim (nothing can serve the request),
		// undo any window written on the control side, roll the shard
		// back, and say why.
		if sp != nil {
			if err := sp.Rollback(ctx); err != nil {
				return Result{}, fmt.Errorf("roll back to the savepoint: %w", err)
			}
		}
		return Result{Ranges: len(ranges), Refused: fmt.Errorf("%w: shard %s keeps readings from %s on, and the farm-local day %s starts before that; its stored rows are kept as they are",
			ErrReadingsDropped, req.Shard, lost.DroppedBefore.UTC().Format(time.RFC3339), req.Day.Format(time.DateOnly))}, nil
	}
	if sp != nil {
		if err := sp.Commit(ctx); err != nil {
			return Result{}, fmt.Errorf("release the savepoint: %w", err)
		}
		ww.q = q
	}
	if c.AfterCompute != nil {
		c.AfterCompute(req)
	}
	if err := faultpoint.Reached(ctx, faultpoint.RollupBeforeControlCommit, req.Reason+" "+req.key()); err != nil {
		return Result{}, err
	}

	// The control side: parts, final rows, reconciliation (unless written
	// overlapped above), alerts, and the day's turbine_day rows once it has
	// ended. Closing the day first deletes what the control database holds
	// of it on another grid (a window rule changed under it): the close
	// rewrites every window of the day on its grid, so nothing is lost. A
	// correction leaves the old grid's other final rows as they are until
	// then (deleting them would leave those windows with no final row).
	if closeDay {
		if _, err := ww.offGrid(ctx, g); err != nil {
			return Result{}, err
		}
	}
	if len(ranges) == 0 {
		if err := ww.write(ctx, work.Sums, true); err != nil {
			return Result{}, err
		}
	}
	if err := ww.finish(ctx); err != nil {
		return Result{}, err
	}
	res.FinalWindows = ww.final
	if dayEnded && len(dayRows) > 0 {
		n, err := c.writeDay(ctx, q, req, dayRows, now)
		if err != nil {
			return Result{}, err
		}
		res.Turbines = n
		alarms, err := c.checkDay(ctx, q, req, farm.DayStart, now, closeDay)
		if err != nil {
			return Result{}, err
		}
		res.Alarms = append(res.Alarms, alarms...)
	}
	return res, nil
}

// helperMaxPairs is the largest correction, in turbine-windows, that may
// take a helper session: ten turbines' days.
const helperMaxPairs = 10 * 1440

// helperPool returns the pool a large correction may take a helper session
// from (computeOverlapped), or nil. A helper buys a correction's latency
// with the second core, so it is taken only when that core is likely free:
// for a correction of at most helperMaxPairs turbine-windows (a larger one
// is a replay's, throughput work whose jobs already run side by side), and
// only while no other connection of this process's shard pools is in use
// (no ingest, fast path or other job working). Measured: the soak's live
// windows were published 5.17 s late at p99 (limit 5 s) when every
// correction of its replay took a helper, against 2.0-4.7 s without.
func (c *Computer) helperPool(shard string, pairs int) *pgxpool.Pool {
	if pairs > helperMaxPairs || c.Shards.InUse() > 1 {
		return nil
	}
	return c.Shards.Pool(shard)
}

// emptyDay says a farm-day has nothing to count on this shard: no turbine
// of the farm was in service any time that day, and the shard holds no
// reading recorded in it and no window row of it. Its recompute writes
// nothing (it would write a turbine_window row of zeros for every turbine
// and window: 1,440 a turbine, 2.2 million for a farm of 1,555 turbines,
// 31 s of a 2-core machine). That is every farm's yesterday when a new
// fleet starts (serve rolls up yesterday on start) and every day of a
// retired farm. A day with a reading (out of service: a commissioning
// date corrected after the fact) or a row (written before such a
// correction) is recomputed as before, so its rows are rewritten.
func emptyDay(ctx context.Context, q *controldb.Queries, sq *sharddb.Queries, farm controldb.FarmDayGetRow, turbines []string) (bool, error) {
	inService, err := q.FarmInServiceOnDay(ctx, controldb.FarmInServiceOnDayParams{FarmID: farm.ID, DayStart: farm.DayStart, DayEnd: farm.DayEnd})
	if err != nil || inService {
		return false, err
	}
	has, err := sq.FarmDayHasRows(ctx, sharddb.FarmDayHasRowsParams{FarmID: farm.ID, DayStart: farm.DayStart, DayEnd: farm.DayEnd, TurbineIds: turbines})
	if err != nil {
		return false, fmt.Errorf("rows of the day: %w", err)
	}
	return has != nil && !*has, nil
}

// fillWhole computes, in the given windows (on the grid; ones a correction
// found this shard does not have whole), the turbine_window rows of every
// turbine of the farm here that has none, and returns the windows' sums as
// the statement leaves them.
func fillWhole(ctx context.Context, sq *sharddb.Queries, g window.Grid, turbines []window.Turbine, ids []string, rules fleet.Rules, short []time.Time, now time.Time) (window.ShardWork, error) {
	windows := make([]int, len(short))
	in := make(map[int]bool, len(short))
	for i, w := range short {
		windows[i] = g.Before(w) // w is on the grid: its index
		in[windows[i]] = true
	}
	slices.Sort(windows)
	fill := window.Pairs{}
	if err := addMissing(ctx, sq, g, ids, windows[0], windows[len(windows)-1], func(w int) bool { return in[w] }, fill); err != nil {
		return window.ShardWork{}, err
	}
	work, err := window.Compute(ctx, sq, g, turbines, rules, fill, windows, false, now)
	if err != nil {
		return window.ShardWork{}, fmt.Errorf("fill in windows: %w", err)
	}
	return work, nil
}

// addMissing adds to into the windows in [first, last] of the given
// turbines that have no turbine_window row on the farm's current grid (all
// of them, or those keep accepts).
func addMissing(ctx context.Context, sq *sharddb.Queries, g window.Grid, turbines []string, first, last int, keep func(int) bool, into window.Pairs) error {
	rows, err := sq.TurbineWindowMissing(ctx, sharddb.TurbineWindowMissingParams{
		TurbineIds: turbines, FirstWindow: int32(first), LastWindow: int32(last),
		DayEnd: g.End, DayStart: g.Start, WindowS: int32(g.Window / time.Second),
	})
	if err != nil {
		return fmt.Errorf("missing windows: %w", err)
	}
	for _, m := range rows {
		if keep == nil || keep(int(m.WindowIndex)) {
			into.Add(m.TurbineID, int(m.WindowIndex))
		}
	}
	return nil
}

// leaveToFastPath returns how many of the first closed windows (past the
// watermark) of a day in progress a recompute may take: those before the
// farm's latest fast window. The ones after it are the fast path's, which
// publishes them in order and absorbs their marks; a recompute that took
// one first would write its final row, and a window with a final row is
// never published (it would be missing from the fast path's record, seen
// with several processes racing: a correction run before the fast path's
// round). Their marks stay for the fast path; a window it will never
// publish (past its catch-up) is taken once a later window is published,
// or by the day's close. A farm never published is not held back.
func leaveToFastPath(ctx context.Context, q *controldb.Queries, g window.Grid, closed int) (int, error) {
	through, err := q.FarmWindowFastThrough(ctx, g.FarmID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return closed, nil
	case err != nil:
		return 0, fmt.Errorf("fast path's progress: %w", err)
	}
	return min(closed, g.Before(through)), nil
}

func rangeOf(from, to int) []int {
	out := make([]int, 0, max(0, to-from))
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// writeDay upserts the day's turbine_day rows, added up from its windows.
func (c *Computer) writeDay(ctx context.Context, q *controldb.Queries, req Request, rows []sharddb.TurbineDayFromWindowsRow, now time.Time) (int, error) {
	up := controldb.TurbineDayUpsertParams{
		Day: req.Day, FarmID: req.FarmID, ShardName: req.Shard, ComputedAt: now, JobID: req.JobID,
	}
	for _, r := range rows {
		up.TurbineIds = append(up.TurbineIds, r.TurbineID)
		up.Expected = append(up.Expected, r.Expected)
		up.Received = append(up.Received, r.Received)
		up.Available = append(up.Available, r.Available)
		up.Late = append(up.Late, r.Late)
		up.Early = append(up.Early, r.Early)
		up.BeyondCadence = append(up.BeyondCadence, r.BeyondCadence)
		up.OutOfService = append(up.OutOfService, r.OutOfService)
		up.MinLagMs = append(up.MinLagMs, r.MinLagMs)
		up.MaxLagMs = append(up.MaxLagMs, r.MaxLagMs)
		up.LastReceivedAt = append(up.LastReceivedAt, r.LastReceivedAt)
		up.SilentHours = append(up.SilentHours, intArrayLiteral(r.SilentHours))
	}
	n, err := q.TurbineDayUpsert(ctx, up)
	if err != nil {
		return 0, fmt.Errorf("upsert turbine_day: %w", err)
	}
	return int(n), nil
}

// intArrayLiteral writes a Postgres integer[] literal ({1,2,3}).
func intArrayLiteral(v []int32) string {
	b := []byte{'{'}
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, '}'))
}

// checkDay runs the day's checks once its turbine_day rows are written: the
// bug alarm (the shard's final window parts against its turbine_day rows,
// two groupings of the same windows) and, when closing the day, the
// completeness alert (received short of expected by more than the farm's
// threshold, naming the silent turbines and hours).
func (c *Computer) checkDay(ctx context.Context, q *controldb.Queries, req Request, dayStart, now time.Time, closeDay bool) ([]string, error) {
	if !closeDay {
		// A correction of an ended day: the checks belong to its close.
		return nil, nil
	}
	var alarms []string
	sum, err := q.FarmWindowPartSumCheck(ctx, controldb.FarmWindowPartSumCheckParams{FarmID: req.FarmID, Day: req.Day, ShardName: req.Shard})
	if err != nil {
		return nil, fmt.Errorf("window sum check: %w", err)
	}
	if sum.WindowsExpected != sum.DaysExpected || sum.WindowsReceived != sum.DaysReceived || sum.WindowsAvailable != sum.DaysAvailable {
		msg := fmt.Sprintf("BUG: %s shard %s: the day's final windows add up to expected/received/available %d/%d/%d but its turbine_day rows to %d/%d/%d",
			req.key(), req.Shard, sum.WindowsExpected, sum.WindowsReceived, sum.WindowsAvailable, sum.DaysExpected, sum.DaysReceived, sum.DaysAvailable)
		alarms = append(alarms, msg)
		detail, _ := json.Marshal(sum)
		if err := q.AlertRaise(ctx, controldb.AlertRaiseParams{
			Kind: "window_sum", FarmID: req.FarmID, Scope: "day", PeriodStart: dayStart, Day: req.Day, RaisedAt: now,
			Detail: detail, Message: msg,
		}); err != nil {
			return nil, fmt.Errorf("raise alarm: %w", err)
		}
	}
	// Compared and raised in SQL, as the divergence alert is.
	if _, err := q.AlertCompletenessRaise(ctx, controldb.AlertCompletenessRaiseParams{FarmID: req.FarmID, Day: req.Day, RaisedAt: now}); err != nil {
		return nil, fmt.Errorf("raise completeness alert: %w", err)
	}
	return alarms, nil
}
