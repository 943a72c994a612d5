package rollup

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/window"
)

// shardOutcome is what the shard side of a recompute left for the control
// side: the windows' work and sums, how a large correction was split, the
// writer (whose control writes may have begun, inside sp), the day's rows
// added up from its windows, and whether retention has cut the day.
type shardOutcome struct {
	work     window.ShardWork
	ranges   [][]int
	sessions int
	ww       *windowWriter
	sp       pgx.Tx // the savepoint of an overlapped correction's control writes
	dayRows  []sharddb.TurbineDayFromWindowsRow
	lost     sharddb.ReadingsDayLostRow
}

// computeShard computes the plan's windows on the shard. The control
// side's window writes (this shard's parts, final rows and their
// reconciliation) are the windowWriter's: a large correction writes each
// range of its windows there while the shard computes the next
// (computeOverlapped), inside a savepoint that is undone if retention has
// cut the day; any other recompute writes them once the shard's reads are
// done (writeControl).
func (c *Computer) computeShard(ctx context.Context, d *day, p plan) (s shardOutcome, err error) {
	req := d.req
	if !d.closeDay {
		s.ranges = overlapRanges(d.pairs.Windows())
	}
	wq := d.q
	if len(s.ranges) > 0 {
		if s.sp, err = d.tx.Begin(ctx); err != nil {
			return s, fmt.Errorf("savepoint: %w", err)
		}
		wq = controldb.New(s.sp)
	}
	s.ww = &windowWriter{q: wq, farm: req.FarmID, shard: req.Shard, day: req.Day, now: d.now, jobID: req.JobID}
	wait := func() error { return nil }
	if len(s.ranges) > 0 {
		// The ranges planned once per connection, not once a range
		// (docs/design.md); custom plans again after them.
		if err := d.sq.PlanGeneric(ctx); err != nil {
			return s, fmt.Errorf("shard %s: generic plans: %w", req.Shard, err)
		}
		s.work, wait, s.sessions, err = computeOverlapped(ctx, d.sq, c.helperPool(req.Shard, d.pairs.Len()), d.g, d.turbines, d.rules, d.pairs, p.finalWindows, s.ranges, p.wholeAt, d.now, s.ww)
	} else if s.work, err = window.Compute(ctx, d.sq, d.g, d.turbines, d.rules, d.pairs, p.finalWindows, d.closeDay, d.now); err == nil {
		s.work.Sums, s.work.NotWhole = window.SplitWhole(s.work.Sums, p.wholeAt)
	}
	if err != nil {
		return s, fmt.Errorf("shard %s: %w", req.Shard, err)
	}
	if len(s.ranges) > 0 {
		if err := d.sq.PlanCustom(ctx); err != nil {
			_ = wait()
			return s, fmt.Errorf("shard %s: custom plans: %w", req.Shard, err)
		}
	}
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
		if len(s.work.NotWhole) > 0 {
			fill, err := fillWhole(ctx, d.sq, d.g, d.turbines, d.allIDs, d.rules, s.work.NotWhole, d.now)
			if err != nil {
				return fmt.Errorf("shard %s: %w", req.Shard, err)
			}
			s.work.Windows += fill.Windows
			s.work.RowsRead += fill.RowsRead
			fillSums = fill.Sums
		}
		if p.offGridAfter {
			if err := d.offGrid(ctx); err != nil {
				return err
			}
		}
		if d.dayEnded && len(d.ids) > 0 {
			if s.dayRows, err = d.sq.TurbineDayFromWindows(ctx, sharddb.TurbineDayFromWindowsParams{
				DayStart: d.farm.DayStart, DayEnd: d.farm.DayEnd, FarmID: req.FarmID, Day: req.Day, TurbineIds: d.ids,
			}); err != nil {
				return fmt.Errorf("shard %s: day from windows: %w", req.Shard, err)
			}
		}
		// Has retention cut the day? Asked in the same shard transaction as
		// the reads: the compute's locks on the partitions it read make a
		// concurrent DROP wait until the check has run, and a DROP that
		// came first has recorded itself by then (same transaction as the
		// DROP).
		if s.lost, err = d.sq.ReadingsDayLost(ctx, d.farm.DayStart); err != nil {
			return fmt.Errorf("shard %s: retention: %w", req.Shard, err)
		}
		return nil
	}()
	if err != nil {
		return s, err
	}
	if len(fillSums) > 0 {
		// The windows filled in: written after the others (with their
		// days' reconciliation), inside the savepoint of an overlapped
		// correction; a correction written at once writes them with the rest.
		if len(s.ranges) > 0 {
			if err := s.ww.write(ctx, fillSums, true); err != nil {
				return s, err
			}
		} else {
			s.work.Sums = append(s.work.Sums, fillSums...)
			slices.SortFunc(s.work.Sums, func(a, b sharddb.FarmWindowSumsRow) int { return a.WindowStart.Compare(b.WindowStart) })
		}
	}
	return s, nil
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
// (no ingest, fast path or other job working): a replay whose every
// correction took a helper made the soak's live windows late
// (BENCHMARKS.md, "Measurements behind the code").
func (c *Computer) helperPool(shard string, pairs int) *pgxpool.Pool {
	if pairs > helperMaxPairs || c.Shards.InUse() > 1 {
		return nil
	}
	return c.Shards.Pool(shard)
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
