package window

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// ShardWork is what one shard computation of windows did.
type ShardWork struct {
	Windows  int64 // turbine_window rows written
	RowsRead int64 // readings counted
	Sums     []sharddb.FarmWindowSumsRow
	// SumsDiffered is, when the day's farm_window_sum rows were rebuilt,
	// how many of them differed from turbine_window (a bug: 0 expected),
	// and FirstDiffered the first such window.
	SumsDiffered  int64
	FirstDiffered time.Time
	// NotWhole lists the windows, of those whose sums were asked for, that
	// the shard does not have a turbine_window row of for every turbine of
	// the farm here (set by a correction only; see SplitWhole).
	NotWhole []time.Time
}

// SplitWhole splits a shard's sums into those of windows it has whole (at
// least wholeAt turbine_window rows summed, all of the window: of the
// farm's current grid; every window when wholeAt is 0) and the starts of
// the others.
//
// A correction recomputes the turbine-windows its marks name, and must
// fill in every turbine of a window this shard has not computed whole yet
// (the fast path did not publish it, or a job that died between its
// control and shard commits left a part on the control database whose
// rows do not exist here), or the part would sum a window short of the
// turbines it had. After a window rule change, a turbine's row of the old
// grid can start where a window of the new one starts (12:00-12:01 beside
// 12:00-12:10): the sum counts it, but its length is not the window's, so
// the window is not whole either, and filling it in recomputes that
// turbine's row on the new grid. The sums the window statement returns
// say it, as the statement left them, in the same transaction: no read
// before the compute (a whole day's query, for every correction).
func SplitWhole(sums []sharddb.FarmWindowSumsRow, wholeAt int) ([]sharddb.FarmWindowSumsRow, []time.Time) {
	if wholeAt <= 0 {
		return sums, nil
	}
	short := func(s sharddb.FarmWindowSumsRow) bool {
		// the sum's window_end is its last writer's: this grid's
		return int(s.Turbines) < wholeAt || s.SpanS != int64(s.Turbines)*int64(s.WindowEnd.Sub(s.WindowStart)/time.Second)
	}
	i := slices.IndexFunc(sums, short)
	if i < 0 {
		return sums, nil // the usual case: nothing copied
	}
	whole := slices.Clone(sums[:i])
	var out []time.Time
	for _, s := range sums[i:] {
		if short(s) {
			out = append(out, s.WindowStart)
		} else {
			whole = append(whole, s)
		}
	}
	return whole, out
}

// Compute computes the pairs' turbine_window rows on a shard (inside
// the caller's shard transaction, after WindowLock) and returns the
// shard's sums of the given windows. With rebuildSums (closing a day), the
// day's farm_window_sum rows are first rebuilt from turbine_window and the
// windows that differed counted.
func Compute(ctx context.Context, sq *sharddb.Queries, g Grid, turbines []Turbine, rules fleet.Rules, pairs Pairs, sumWindows []int, rebuildSums bool, now time.Time) (ShardWork, error) {
	var w ShardWork
	// The sums of the windows just written, as the upsert left them.
	written := map[int64]sharddb.FarmWindowSumsRow{}
	if len(pairs) > 0 {
		if g.Contract.KeyAvailable == 0 || g.Contract.KeyMissing == 0 {
			// a zero key would count every slot in no category
			return w, fmt.Errorf("compute windows of %s %s: the grid has no contract (GridOfDay)", g.FarmID, g.Day.Format(time.DateOnly))
		}
		rows, err := sq.TurbineWindowUpsert(ctx, pairs.UpsertParams(g, turbines, rules, now))
		if err != nil {
			return w, fmt.Errorf("compute windows: %w", err)
		}
		for _, r := range rows {
			w.Windows, w.RowsRead = r.Windows, r.RowsRead
			written[r.WindowStart.Unix()] = sharddb.FarmWindowSumsRow{
				WindowStart: r.WindowStart, WindowEnd: r.WindowEnd, Day: r.Day, Turbines: r.Turbines, Expected: r.Expected, Received: r.Received,
				Available: r.Available, Late: r.Late, Readings: r.Readings, SpanS: r.SpanS, ShardXid: r.ShardXid,
			}
		}
	}
	if rebuildSums {
		res, err := sq.FarmWindowSumRebuild(ctx, sharddb.FarmWindowSumRebuildParams{FarmID: g.FarmID, Day: g.Day, DayStart: g.Start, DayEnd: g.End})
		if err != nil {
			return w, fmt.Errorf("rebuild window sums: %w", err)
		}
		w.SumsDiffered, w.FirstDiffered = res.Differed, res.FirstWindow
		written = nil // the rebuild may have changed them
	}
	if len(sumWindows) > 0 {
		starts := make([]time.Time, 0, len(sumWindows))
		sums := make([]sharddb.FarmWindowSumsRow, 0, len(sumWindows))
		for _, i := range sumWindows {
			s, _ := g.Bounds(i)
			starts = append(starts, s)
			if r, ok := written[s.Unix()]; ok {
				sums = append(sums, r)
			}
		}
		if len(sums) < len(starts) {
			// Some window was not written here (closing a day sums every
			// window; only the missing ones were computed): read them all.
			var err error
			if sums, err = sq.FarmWindowSums(ctx, sharddb.FarmWindowSumsParams{FarmID: g.FarmID, WindowStarts: starts}); err != nil {
				return w, fmt.Errorf("window sums: %w", err)
			}
		}
		w.Sums = sums
	}
	return w, nil
}

// PartParams turns a shard's sums into the control database's part upsert.
func PartParams(farm, shard string, sums []sharddb.FarmWindowSumsRow, computedAt time.Time) controldb.FarmWindowPartUpsertParams {
	p := controldb.FarmWindowPartUpsertParams{FarmID: farm, ShardName: shard, ComputedAt: computedAt}
	for _, s := range sums {
		p.ShardXid = s.ShardXid
		p.WindowStarts = append(p.WindowStarts, s.WindowStart)
		p.WindowEnds = append(p.WindowEnds, s.WindowEnd)
		p.Days = append(p.Days, s.Day)
		p.Expected = append(p.Expected, s.Expected)
		p.Received = append(p.Received, s.Received)
		p.Available = append(p.Available, s.Available)
		p.Late = append(p.Late, s.Late)
		p.Readings = append(p.Readings, s.Readings)
	}
	return p
}
