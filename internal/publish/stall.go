package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/window"
)

// Stall is one judgement of the stalled-turbine watcher: Action is
// "raised", "continued" (a stalled window joined the stall, after, before
// or inside it), "cleared", "split" (the windows after a production found
// inside a stall, a stall of their own) or "withdrawn" (a window judged
// again is not stalled). The rule is StallJudge's, the thresholds
// stall_watch's, the windows turbine_stall_window's.
type Stall struct {
	FarmID, TurbineID, Action string
	Window, FirstWindow       time.Time
	Message                   string
}

// stallWatch is windows of one farm-local day to judge, and where the
// farm's turbines are.
type stallWatch struct {
	farm     string
	day      controldb.FarmDayGetRow
	date     time.Time
	shards   []string
	turbines [][]window.Turbine // per shard, as the publication counted them
	windows  []int              // indexes on the day's grid, ascending
	now      time.Time
}

// watch runs the stall watcher on the windows a run published (each day's,
// days in order), after their publication and outside the round's farm
// slot. A failure is logged; it never holds a publication back.
func (p *Publisher) watch(ctx context.Context, watches []*stallWatch) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(p.ShardTimeout, DefaultShardTimeout))
	defer cancel()
	for _, w := range watches {
		if err := p.judge(ctx, w, false); err != nil {
			p.log().Warn("stall watcher", "farm", w.farm, "day", w.date.Format(time.DateOnly), "windows", len(w.windows), "err", err)
		}
	}
}

// JudgeStalls judges the windows starting at starts of one farm-local day
// as the watcher judges a publication's, its verdicts marked late: a
// correction recomputed them from readings that arrived after they were
// published (the judge_stalls job). A start off the day's grid is skipped.
func (p *Publisher) JudgeStalls(ctx context.Context, farm string, date time.Time, starts []time.Time) error {
	q := controldb.New(p.Control)
	day, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: farm, Day: date})
	if err != nil {
		return fmt.Errorf("farm day: %w", err)
	}
	g := window.GridOfDay(day, date)
	var windows []int
	for _, s := range starts {
		if !g.Contains(s) {
			continue
		}
		if b, _ := g.Bounds(g.Holding(s)); b.Equal(s) {
			windows = append(windows, g.Holding(s))
		}
	}
	slices.Sort(windows)
	windows = slices.Compact(windows)
	if len(windows) == 0 {
		return nil
	}
	shards, err := q.FarmShards(ctx, farm)
	if err != nil {
		return err
	}
	turbines, err := turbinesOn(ctx, q, farm, shards, day)
	if err != nil {
		return err
	}
	return p.judge(ctx, &stallWatch{farm: farm, day: day, date: date, shards: shards, turbines: turbines, windows: windows, now: p.Now()}, true)
}

// turbinesOn lists, per shard, the farm's turbines of the day
// (TurbineRollupList), as its windows count them.
func turbinesOn(ctx context.Context, q *controldb.Queries, farm string, shards []string, day controldb.FarmDayGetRow) ([][]window.Turbine, error) {
	out := make([][]window.Turbine, len(shards))
	for i, shard := range shards {
		rows, err := q.TurbineRollupList(ctx, controldb.TurbineRollupListParams{FarmID: farm, ShardName: shard, DayStart: day.DayStart, DayEnd: day.DayEnd})
		if err != nil {
			return nil, fmt.Errorf("turbines on shard %s: %w", shard, err)
		}
		out[i] = window.TurbinesOf(rows)
	}
	return out, nil
}

// stallLockKey serialises the judges of one farm (a publication's watch, a
// correction's job): each places its verdicts among stalls no other changes
// meanwhile.
func stallLockKey(farm string) string { return "galewatch.stall/" + farm }

// judge judges windows of one farm-local day: each shard reads their
// readings per turbine and window in one statement (TurbineWindowStallStats),
// outside any lock; then, holding the farm's stall lock in one control
// transaction, the control database judges them (StallJudge), the shards
// say where each stalled turbine next produced (production), and each
// verdict is placed among the turbine's stalls, window by window in
// ascending order (stallBook).
func (p *Publisher) judge(ctx context.Context, w *stallWatch, late bool) error {
	g := window.GridOfDay(w.day, w.date)
	// runs of consecutive windows: one range scan per turbine and run
	var from, to []time.Time
	for i, k := range w.windows {
		s, e := g.Bounds(k)
		if i > 0 && w.windows[i-1] == k-1 {
			to[len(to)-1] = e
			continue
		}
		from, to = append(from, s), append(to, e)
	}
	stats := make([][]sharddb.TurbineWindowStallStatsRow, len(w.shards))
	errs := make([]error, len(w.shards))
	var wg sync.WaitGroup
	for i, shard := range w.shards {
		pool := p.Shards.Pool(shard)
		if pool == nil || len(w.turbines[i]) == 0 {
			continue
		}
		wg.Go(func() {
			stats[i], errs[i] = sharddb.New(pool).TurbineWindowStallStats(ctx, sharddb.TurbineWindowStallStatsParams{
				DayStart: g.Start, WindowS: int32(g.Window / time.Second), TurbineIds: window.IDs(w.turbines[i]), RangeFrom: from, RangeTo: to})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	arg := controldb.StallJudgeParams{FarmID: w.farm}
	for _, s := range slices.Concat(stats...) {
		start, _ := g.Bounds(int(s.WindowIndex))
		arg.WindowStarts = append(arg.WindowStarts, start)
		arg.TurbineIds = append(arg.TurbineIds, s.TurbineID)
		arg.Received = append(arg.Received, s.Received)
		arg.Available = append(arg.Available, s.Available)
		arg.PowerMaxKw = append(arg.PowerMaxKw, s.PowerMaxKw)
		arg.WindSumMs = append(arg.WindSumMs, s.WindSumMs)
		arg.WindReadings = append(arg.WindReadings, s.WindReadings)
	}
	if len(arg.TurbineIds) == 0 {
		return nil
	}
	var said []Stall
	err := pgx.BeginFunc(ctx, p.Control, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		if err := q.AdvisoryXactLockKey(ctx, stallLockKey(w.farm)); err != nil {
			return err
		}
		verdicts, err := q.StallJudge(ctx, arg)
		if err != nil || len(verdicts) == 0 {
			return err
		}
		var ids []string
		for _, v := range verdicts {
			ids = append(ids, v.TurbineID)
		}
		slices.Sort(ids)
		stalls, err := q.StallsOfTurbines(ctx, slices.Compact(ids))
		if err != nil {
			return err
		}
		produced, err := p.production(ctx, q, w, g, verdicts)
		if err != nil {
			return err
		}
		b := &stallBook{q: q, farm: w.farm, g: g, now: w.now, late: late, stalls: map[string][]controldb.TurbineStall{}}
		for _, s := range stalls {
			b.stalls[s.TurbineID] = append(b.stalls[s.TurbineID], s)
		}
		for _, v := range verdicts {
			var clear *production
			if c, ok := produced[turbineWindow{v.TurbineID, v.WindowStart.UnixNano()}]; ok {
				clear = &c
			}
			if err := b.judge(ctx, v, clear); err != nil {
				return fmt.Errorf("%s in the window from %s: %w", v.TurbineID, v.WindowStart.UTC().Format(time.RFC3339), err)
			}
		}
		said = b.said
		return nil
	})
	if err != nil {
		return err
	}
	for _, s := range said {
		if s.Action != "continued" {
			p.log().Info("stall watcher: "+s.Action, "farm", s.FarmID, "turbine", s.TurbineID, "since", s.FirstWindow, "window", s.Window, "late", late)
		}
		if p.OnStall != nil {
			p.OnStall(s)
		}
	}
	return nil
}

type turbineWindow struct {
	turbine string
	start   int64 // UnixNano
}

// production is the first reading over the power floor after a stalled
// window, and the window holding it: where a stall holding that window
// clears.
type production struct {
	at, window time.Time
}

// farFuture closes the span after a turbine's last stalled window.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// production finds, for each stalled turbine-window of the verdicts, the
// first reading after it with power over the floor, from the readings the
// shards hold whenever they arrived (TurbineFirstProduction): one
// statement per shard, each span between a turbine's stalled windows read
// once (a window's is the next one's when nothing in between produced).
func (p *Publisher) production(ctx context.Context, q *controldb.Queries, w *stallWatch, g window.Grid, verdicts []controldb.StallJudgeRow) (map[turbineWindow]production, error) {
	stalled := map[string][]time.Time{} // ascending: the verdicts are by window
	for _, v := range verdicts {
		if v.Stalled {
			stalled[v.TurbineID] = append(stalled[v.TurbineID], v.WindowStart)
		}
	}
	out := map[turbineWindow]production{}
	if len(stalled) == 0 {
		return out, nil
	}
	floor := float32(verdicts[0].FloorKw)
	type span struct {
		turbine string
		k       int // after the turbine's k-th stalled window
	}
	found := map[span]time.Time{}
	for i, shard := range w.shards {
		pool := p.Shards.Pool(shard)
		if pool == nil {
			continue
		}
		var spans []span
		arg := sharddb.TurbineFirstProductionParams{FloorKw: floor}
		for _, id := range window.IDs(w.turbines[i]) {
			starts := stalled[id]
			for k, s := range starts {
				_, end := g.Bounds(g.Holding(s))
				until := farFuture
				if k+1 < len(starts) {
					if until = starts[k+1]; !end.Before(until) {
						continue // the next window is stalled too
					}
				}
				spans = append(spans, span{id, k})
				arg.TurbineIds, arg.FromT, arg.ToT = append(arg.TurbineIds, id), append(arg.FromT, end), append(arg.ToT, until)
			}
		}
		if len(spans) == 0 {
			continue
		}
		rows, err := sharddb.New(pool).TurbineFirstProduction(ctx, arg)
		if err != nil {
			return nil, fmt.Errorf("shard %s: first production: %w", shard, err)
		}
		for _, r := range rows {
			sp := spans[r.I-1]
			if at, ok := found[sp]; !ok || r.ProducedAt.Before(at) {
				found[sp] = r.ProducedAt
			}
		}
	}
	for id, starts := range stalled {
		var next *production
		for k := len(starts) - 1; k >= 0; k-- {
			if at, ok := found[span{id, k}]; ok {
				start, err := windowHolding(ctx, q, w.day, g, at)
				if err != nil {
					return nil, err
				}
				next = &production{at: at, window: start}
			}
			if next != nil {
				out[turbineWindow{id, starts[k].UnixNano()}] = *next
			}
		}
	}
	return out, nil
}

// windowHolding is the start of the farm's window holding t: on g, or on
// the grid of the farm-local day holding t (FarmDayGet).
func windowHolding(ctx context.Context, q *controldb.Queries, day controldb.FarmDayGetRow, g window.Grid, t time.Time) (time.Time, error) {
	if g.Contains(t) {
		s, _ := g.Bounds(g.Holding(t))
		return s, nil
	}
	loc, err := time.LoadLocation(day.Timezone)
	if err != nil {
		return time.Time{}, fmt.Errorf("farm %s: zone %q: %w", g.FarmID, day.Timezone, err)
	}
	d := localday.Of(t, loc)
	// a zone changed since: the day holding t is next to its date there
	for _, n := range []int{0, -1, 1} {
		date := d.AddDays(n).UTC()
		other, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: g.FarmID, Day: date})
		if err != nil {
			return time.Time{}, fmt.Errorf("farm day %s: %w", date.Format(time.DateOnly), err)
		}
		if og := window.GridOfDay(other, date); og.Contains(t) {
			s, _ := og.Bounds(og.Holding(t))
			return s, nil
		}
	}
	return time.Time{}, fmt.Errorf("farm %s: no day holds %s", g.FarmID, t.UTC().Format(time.RFC3339))
}

// stallBook places verdicts among a farm's stalls, inside the judge's
// control transaction: the stalls of the turbines judged, kept as each
// statement returns them. A stall is a run of a turbine's stalled windows
// (turbine_stall_window) with no reading over the floor between them.
type stallBook struct {
	q      *controldb.Queries
	farm   string
	g      window.Grid
	now    time.Time
	late   bool
	stalls map[string][]controldb.TurbineStall // per turbine, by first window
	said   []Stall
}

func (b *stallBook) put(s controldb.TurbineStall) {
	list := slices.DeleteFunc(b.stalls[s.TurbineID], func(x controldb.TurbineStall) bool { return x.ID == s.ID })
	list = append(list, s)
	slices.SortFunc(list, func(x, y controldb.TurbineStall) int { return x.FirstWindow.Compare(y.FirstWindow) })
	b.stalls[s.TurbineID] = list
}

func (b *stallBook) say(s controldb.TurbineStall, action string, at time.Time) {
	b.said = append(b.said, Stall{FarmID: s.FarmID, TurbineID: s.TurbineID, Action: action, Window: at, FirstWindow: s.FirstWindow, Message: s.Message})
}

// around returns the turbine's latest stall starting at or before t, and
// its first starting after t.
func (b *stallBook) around(turbine string, t time.Time) (before, after *controldb.TurbineStall) {
	list := b.stalls[turbine]
	for i := range list {
		if list[i].FirstWindow.After(t) {
			return before, &list[i]
		}
		before = &list[i]
	}
	return before, nil
}

// openAfter says the stall is open, or cleared at a window after t.
func openAfter(s *controldb.TurbineStall, t time.Time) bool {
	return s.ClearedAt == nil || (s.ClearedWindow != nil && s.ClearedWindow.After(t))
}

// judge places one verdict; clear is where the turbine next produced after
// the window, for a stalled one (nil: not since).
func (b *stallBook) judge(ctx context.Context, v controldb.StallJudgeRow, clear *production) error {
	start := v.WindowStart
	if v.Stalled {
		return b.stalled(ctx, v, clear)
	}
	var n int64
	if v.Recorded {
		var err error
		if n, err = b.q.StallWindowRemove(ctx, controldb.StallWindowRemoveParams{TurbineID: v.TurbineID, WindowStart: start}); err != nil {
			return err
		}
	}
	if before, _ := b.around(v.TurbineID, start); n > 0 && before != nil && !before.LastWindow.Before(start) {
		// judged stalled before, not now: its late readings say otherwise
		rows, err := b.q.StallRefresh(ctx, before.ID)
		if err != nil {
			return err
		}
		gone := *before
		if len(rows) == 0 {
			if err := b.q.StallDelete(ctx, gone.ID); err != nil {
				return err
			}
			b.stalls[v.TurbineID] = slices.DeleteFunc(b.stalls[v.TurbineID], func(x controldb.TurbineStall) bool { return x.ID == gone.ID })
		} else {
			b.put(rows[0])
			gone = rows[0]
		}
		b.say(gone, "withdrawn", start)
	}
	if !v.Produced {
		return nil
	}
	before, _ := b.around(v.TurbineID, start)
	switch {
	case before == nil || !before.FirstWindow.Before(start):
	case before.LastWindow.After(start):
		// It produced inside the stall: the stall ends there, and its
		// windows after are a stall of their own.
		old := *before
		cut, err := b.q.StallCut(ctx, controldb.StallCutParams{JudgedAt: b.now, WindowStart: start, ID: old.ID})
		if err != nil {
			return err
		}
		b.put(cut)
		b.say(cut, "cleared", start)
		split, err := b.q.StallSplitOff(ctx, controldb.StallSplitOffParams{FarmID: old.FarmID, TurbineID: old.TurbineID,
			ClearedAt: old.ClearedAt, ClearedWindow: old.ClearedWindow, Detail: old.Detail, Message: old.Message, After: start, Through: old.LastWindow})
		if err != nil {
			return err
		}
		b.put(split)
		b.say(split, "split", start)
	case openAfter(before, start):
		cleared, err := b.q.StallClear(ctx, controldb.StallClearParams{JudgedAt: b.now, WindowStart: start, ID: before.ID})
		if err != nil {
			return err
		}
		b.put(cleared)
		b.say(cleared, "cleared", start)
	}
	return nil
}

// stalled places a stalled window: recorded once (judging it again changes
// nothing), it joins the stall it lies in or follows with no production
// between, else extends back the next stall when the turbine did not
// produce before it, else raises a stall of its own (cleared at once when
// the turbine produced after it).
func (b *stallBook) stalled(ctx context.Context, v controldb.StallJudgeRow, clear *production) error {
	start := v.WindowStart
	if v.Recorded {
		return nil
	}
	_, end := b.g.Bounds(b.g.Holding(start))
	n, err := b.q.StallWindowAdd(ctx, controldb.StallWindowAddParams{TurbineID: v.TurbineID, WindowStart: start, WindowEnd: end, JudgedAt: b.now, Late: b.late})
	if err != nil || n == 0 {
		return err
	}
	join := func(s *controldb.TurbineStall) (controldb.TurbineStall, error) {
		r, err := b.q.StallJoin(ctx, controldb.StallJoinParams{WindowStart: start, Late: b.late, JudgedAt: b.now, WindowEnd: end,
			Detail: v.Detail, Message: v.Message, ID: s.ID})
		if err != nil {
			return r, err
		}
		b.put(r)
		b.say(r, "continued", start)
		return r, nil
	}
	before, after := b.around(v.TurbineID, start)
	switch {
	case before != nil && (!before.LastWindow.Before(start) || openAfter(before, start)):
		r, err := join(before)
		if err != nil {
			return err
		}
		if clear != nil && r.LastWindow.Equal(start) && (r.ClearedWindow == nil || r.ClearedWindow.After(clear.window)) {
			cleared, err := b.q.StallClear(ctx, controldb.StallClearParams{JudgedAt: b.now, WindowStart: clear.window, ID: r.ID})
			if err != nil {
				return err
			}
			b.put(cleared)
			b.say(cleared, "cleared", clear.window)
		}
	case after != nil && (clear == nil || !clear.at.Before(after.FirstWindow)):
		_, err := join(after)
		return err
	default:
		arg := controldb.StallRaiseParams{FarmID: b.farm, TurbineID: v.TurbineID, WindowStart: start, JudgedAt: b.now,
			Detail: v.Detail, Message: v.Message, Late: b.late, WindowEnd: end}
		if clear != nil {
			arg.ClearedWindow = &clear.window
		}
		r, err := b.q.StallRaise(ctx, arg)
		if err != nil {
			return err
		}
		b.put(r)
		b.say(r, "raised", start)
		if clear != nil {
			b.say(r, "cleared", clear.window)
		}
	}
	return nil
}

func (p *Publisher) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}
