package rollup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/window"
)

// day is one recompute's farm-day-shard as opened: the request, both
// transactions, the farm's rules and grid, its turbines here, and the
// turbine-windows the claimed marks name.
type day struct {
	req      Request
	tx       pgx.Tx
	q        *controldb.Queries // on tx
	sq       *sharddb.Queries   // on the shard transaction
	farm     controldb.FarmDayGetRow
	rules    fleet.Rules
	turbines []window.Turbine
	allIDs   []string
	g        window.Grid
	now      time.Time
	// closed is how many windows are past the watermark (the only ones
	// recomputed and given final rows); dayEnded when that is all of them.
	closed   int
	dayEnded bool
	// full (manual) recomputes every window from the readings; closeDay
	// (scheduled, manual) also fills in any window never computed; else a
	// correction of the marked turbine-windows.
	full, closeDay bool
	pairs          window.Pairs // the turbine-windows to compute
	claimed        int          // of them, how many the marks named
	changed        []int        // the windows the marks name: their readings changed
	ids            []string     // the turbines whose turbine_day rows are rewritten
}

// plan is what a mode decided beyond the pairs: which windows get final
// rows, how many turbines a window a correction writes must have here
// (0: no such test), and whether off-grid rows go after the compute.
type plan struct {
	finalWindows []int
	wholeAt      int
	offGridAfter bool
}

// open takes the lock and the claims and reads what the day is. A non-nil
// Result means the recompute is over (nothing to do).
func (c *Computer) open(ctx context.Context, tx, stx pgx.Tx, req Request) (*day, *Result, error) {
	q := controldb.New(tx)
	// The lock is taken before the shard snapshot opens and released by the
	// commit after the writes: the newer snapshot always writes last.
	if err := q.AdvisoryXactLockKey(ctx, req.key()); err != nil {
		return nil, nil, fmt.Errorf("lock: %w", err)
	}
	// Claim any dirty request before the snapshot: marks that reach the
	// control database after this point get a job of their own (which
	// waits on the lock).
	_, err := q.RollupPendingClaim(ctx, controldb.RollupPendingClaimParams{FarmID: req.FarmID, Day: req.Day, ShardName: req.Shard})
	claimed := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, nil, fmt.Errorf("claim: %w", err)
	}
	if req.Reason == ReasonDirty && req.Attempt <= 1 && !claimed {
		// Another recompute claimed this request after its marks' rows
		// had committed, so its snapshot holds them.
		return nil, &Result{Skipped: true}, nil
	}
	farm, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: req.FarmID, Day: req.Day})
	if err != nil {
		return nil, nil, fmt.Errorf("farm: %w", err)
	}
	rows, err := q.TurbineRollupList(ctx, controldb.TurbineRollupListParams{FarmID: req.FarmID, ShardName: req.Shard, DayStart: farm.DayStart, DayEnd: farm.DayEnd})
	if err != nil {
		return nil, nil, fmt.Errorf("turbines: %w", err)
	}
	d := &day{req: req, tx: tx, q: q, farm: farm, rules: fleet.RulesOfDay(farm), turbines: window.TurbinesOf(rows),
		// A retry does the same work as a first attempt, so that the rows
		// a day ends with do not depend on whether a job was retried (a
		// killed worker, a shard that failed): only the marks decide.
		full: req.Reason == ReasonManual, closeDay: req.Reason != ReasonDirty}
	if len(d.turbines) == 0 {
		return nil, &Result{Full: d.full}, nil
	}
	d.now = c.Now()
	d.g = window.GridOfDay(farm, req.Day)
	d.closed = d.g.Closed(d.now, d.rules.AllowedLateness)
	// turbine_day rows are written only once every window of the day is
	// past the watermark: a day adds up from all its windows.
	d.dayEnded = d.closed == d.g.Len()
	if !d.dayEnded {
		if d.closed, err = leaveToFastPath(ctx, q, d.g, d.closed); err != nil {
			return nil, nil, err
		}
	}
	// A dirty recompute corrects the windows its marks name; the close of a
	// day (scheduled, manual) also fills in any window never computed.
	// Either takes only windows past the watermark: a window not yet there
	// is the fast path's to compute (it absorbs their marks).
	claimBefore, _ := d.g.Bounds(d.closed)
	if d.closed == d.g.Len() {
		claimBefore = farm.DayEnd
	}

	d.sq = sharddb.New(stx)
	if err := d.sq.WindowLock(ctx, sharddb.WindowLockParams{FarmID: req.FarmID, Day: req.Day}); err != nil {
		return nil, nil, fmt.Errorf("shard %s: window lock: %w", req.Shard, err)
	}
	d.allIDs = window.IDs(d.turbines)
	if empty, err := emptyDay(ctx, q, d.sq, farm, d.allIDs); err != nil {
		return nil, nil, fmt.Errorf("shard %s: %w", req.Shard, err)
	} else if empty {
		return nil, &Result{Full: d.full}, nil
	}
	d.pairs = window.Pairs{}
	dirty, err := d.sq.DirtyWindowClaim(ctx, sharddb.DirtyWindowClaimParams{
		FarmID: req.FarmID, Day: req.Day, Before: claimBefore, DayStart: farm.DayStart, WindowS: int32(d.rules.Window / time.Second),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("shard %s: claim dirty windows: %w", req.Shard, err)
	}
	for _, m := range dirty {
		for w := m.FirstWindow; w <= m.LastWindow; w++ {
			d.pairs.Add(m.TurbineID, int(w))
		}
	}
	d.claimed = d.pairs.Len()
	d.changed = d.pairs.Windows()
	d.ids = d.allIDs
	if !d.closeDay {
		// A correction writes turbine_day rows only for the turbines its
		// marks name.
		d.ids = d.pairs.Turbines()
	}
	return d, nil, nil
}

// planFull (manual): every window past the watermark of every turbine,
// recomputed from the readings, after the rows of another grid are gone.
func (d *day) planFull(ctx context.Context) (plan, error) {
	if err := d.offGrid(ctx); err != nil {
		return plan{}, err
	}
	d.pairs.AddRange(d.turbines, 0, d.closed)
	return plan{finalWindows: rangeOf(0, d.closed)}, nil
}

// planClose (scheduled): the marked turbine-windows, and every window past
// the watermark that was never computed (the fast path was away, or a
// turbine was added), so the day adds up from its windows.
func (d *day) planClose(ctx context.Context) (plan, error) {
	if err := d.offGrid(ctx); err != nil {
		return plan{}, err
	}
	if err := d.missing(ctx, d.ids, 0, d.closed-1); err != nil {
		return plan{}, err
	}
	return plan{finalWindows: rangeOf(0, d.closed)}, nil
}

// planCorrection (dirty): the marked turbine-windows, plus, in the windows
// they touch that this shard has not computed whole yet (the fast path did
// not publish them), every turbine of the farm on the shard, so each
// window's part is whole. Which windows those are, the window statement's
// sums say (window.SplitWhole); they are filled in after it (fillWhole),
// before any of their control writes. Final rows only for the touched
// windows (whole once filled in).
func (d *day) planCorrection(ctx context.Context) (plan, error) {
	p := plan{wholeAt: len(d.allIDs), finalWindows: d.pairs.Windows()}
	if !d.dayEnded || len(d.ids) == 0 {
		return p, nil
	}
	// The day is past the watermark: its turbine_day rows for these
	// turbines are rewritten, so every window of theirs must exist, and
	// none of another grid: the off-grid rows are deleted after the
	// windows are computed, before the day is added up (computeShard; the
	// upsert never writes a row off the grid, and one on a grid start with
	// another end is missing here, so the order does not matter, and the
	// delete runs while the control database writes the last range).
	p.offGridAfter = true
	// Turbines whose marks already name every window are recomputed
	// whole: nothing to look for.
	var partial []string
	for _, id := range d.ids {
		if len(d.pairs[id]) < d.closed {
			partial = append(partial, id)
		}
	}
	if len(partial) > 0 {
		if err := d.missing(ctx, partial, 0, d.closed-1); err != nil {
			return plan{}, err
		}
	}
	return p, nil
}

// missing adds the windows in [first, last] of turbines that have no row
// on the current grid to the pairs.
func (d *day) missing(ctx context.Context, turbines []string, first, last int) error {
	if err := addMissing(ctx, d.sq, d.g, turbines, first, last, nil, d.pairs); err != nil {
		return fmt.Errorf("shard %s: %w", d.req.Shard, err)
	}
	return nil
}

// offGrid deletes the shard's turbine_window rows of the day's turbines
// (ids) on another grid than the farm's current one.
func (d *day) offGrid(ctx context.Context) error {
	if _, err := d.sq.TurbineWindowOffGridDelete(ctx, sharddb.TurbineWindowOffGridDeleteParams{
		FarmID: d.req.FarmID, Day: d.req.Day, TurbineIds: d.ids, DayStart: d.farm.DayStart, WindowS: int32(d.rules.Window / time.Second), DayEnd: d.farm.DayEnd,
	}); err != nil {
		return fmt.Errorf("shard %s: off-grid windows: %w", d.req.Shard, err)
	}
	return nil
}

// emptyDay says a farm-day has nothing to count on this shard: no turbine
// of the farm was in service any time that day, and the shard holds no
// reading recorded in it and no window row of it. Its recompute writes
// nothing (it would write a turbine_window row of zeros for every turbine
// and window: 1,440 a turbine, 2.2 million for a farm of 1,555 turbines).
// That is every farm's yesterday when a new fleet starts (serve rolls up
// yesterday on start) and every day of a retired farm. A day with a
// reading (out of service: a commissioning date corrected after the fact)
// or a row (written before such a correction) is recomputed as before, so
// its rows are rewritten.
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
