package ingest

import (
	"sort"
	"time"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/window"
)

// MarkRule decides which inserted readings dirty a window (the exact rule,
// and why it is safe, is in docs/dirty-marks.md).
//
// Windows are Window long, counted from the farm-local midnight of the
// reading's day (the last one ends at the day's end). The fast path
// publishes a window once its end + Lateness has passed, reading what has
// committed by then. A reading may count towards the window in which its
// cadence slot starts, which can be the window before its own (a slot that
// straddles the boundary, or a day's last slot, which runs on to the end of
// service: at most two cadences back). It marks each such window w when it
// is written at or after end(w) + Lateness − Margin: a reading written
// earlier commits (the writer bounds a transaction by TxTimeout < Margin)
// before the window is published, so the publication reads it; anything
// later may be missed by it and is corrected by the mark. Live readings in
// open windows (lag well under Lateness − Margin) do not mark.
type MarkRule struct {
	Window   time.Duration
	Lateness time.Duration
	Margin   time.Duration
}

// markKey is one farm-day; the shard is implicit (marks live on the shard).
type markKey struct {
	farm string
	day  time.Time
}

type markAgg struct {
	turbines    map[string]struct{}
	first, last time.Time
	readings    int64
}

// windowRun is a run of consecutive marked windows of one turbine on one
// farm-local day: [start, end) on the farm's window grid.
type windowRun struct {
	start, end time.Time
}

// turbineRuns are one turbine's marked runs of one farm-local day, the
// last one extended in place while readings come in order.
type turbineRuns struct {
	farm, turbine string
	day           time.Time
	window        time.Duration
	runs          []windowRun
}

// mark adds the window [ws, we): nothing when the last run holds it, the
// last run extended when it follows it, else a new run (merged at the end).
func (t *turbineRuns) mark(ws, we time.Time) {
	if n := len(t.runs); n > 0 {
		last := &t.runs[n-1]
		if !ws.Before(last.start) && ws.Before(last.end) {
			return
		}
		if ws.Equal(last.end) {
			last.end = we
			return
		}
	}
	t.runs = append(t.runs, windowRun{start: ws, end: we})
}

// markSet gathers the marks of one batch: per farm-day (dirty_mark, which
// drives the drain) and per turbine-window (dirty_window, what a correction
// recomputes), the latter as runs of consecutive windows per turbine and
// day (one row per run, not per window). days caches the current local day
// per farm so the common case costs one comparison per row. Each reading is
// judged by its own farm's rule (Route.Rules).
type markSet struct {
	writeTime time.Time
	marks     map[markKey]*markAgg
	windows   map[*Route][]*turbineRuns // per turbine, per day (usually one)
	days      map[string]markDay
	last      map[*Route]lastMark
}

// lastMark is where a turbine's previous marked reading of the batch left
// its marks: its day, that day's runs and the farm-day's aggregate. A
// reading whose windows all lie in the last run changes nothing but the
// aggregate's counts (the common case of a replay: one pointer lookup and
// a few comparisons instead of the window walk and two keyed lookups).
type lastMark struct {
	ld   window.Grid
	runs *turbineRuns
	agg  *markAgg
	key  markKey
}

func newMarkSet(writeTime time.Time) *markSet {
	return &markSet{writeTime: writeTime, marks: map[markKey]*markAgg{}, windows: map[*Route][]*turbineRuns{}, days: map[string]markDay{},
		last: map[*Route]lastMark{}}
}

// markDay is a farm-local day's grid and the mark rule of its version.
type markDay struct {
	grid window.Grid
	rule MarkRule
}

// runsOf returns the route's runs of day ld.
func (s *markSet) runsOf(route *Route, ld window.Grid) *turbineRuns {
	days := s.windows[route]
	for _, t := range days {
		if t.day.Equal(ld.Day) {
			return t
		}
	}
	t := &turbineRuns{farm: route.FarmID, turbine: route.TurbineID, day: ld.Day, window: ld.Window}
	s.windows[route] = append(days, t)
	return t
}

// add considers one inserted reading: marked says it marked its farm-day k.
func (s *markSet) add(route *Route, recordedAt time.Time) (k markKey, marked bool) {
	// The earliest window the reading can count towards: the one holding
	// its slot's start, at most two cadences back (never before the day).
	back := -2 * max(route.Cadence, time.Second)
	if lm, ok := s.last[route]; ok && lm.ld.Contains(recordedAt) {
		from := recordedAt.Add(back)
		if from.Before(lm.ld.Start) {
			from = lm.ld.Start
		}
		// Every window from from's to recordedAt's is in the last run, so
		// marked already (the run holds only windows that met the rule).
		run := lm.runs.runs[len(lm.runs.runs)-1]
		if !from.Before(run.start) && recordedAt.Before(run.end) {
			lm.agg.count(recordedAt)
			return lm.key, true
		}
	}
	// The day and its rules: the farm's calendar version governing it.
	day, ok := s.days[route.FarmID]
	if !ok || !day.grid.Contains(recordedAt) {
		g, v := window.GridOfCalendar(route.Calendar, recordedAt)
		day = markDay{grid: g, rule: MarkRule{Window: v.Window, Lateness: v.AllowedLateness, Margin: v.MarkMargin}}
		s.days[route.FarmID] = day
	}
	ld, rule := day.grid, day.rule
	from := recordedAt.Add(back)
	if from.Before(ld.Start) {
		from = ld.Start
	}
	var runs *turbineRuns
	for ws, we := ld.Bounds(ld.Holding(from)); !ws.After(recordedAt); ws, we = ld.Bounds(ld.Holding(we)) {
		if !s.writeTime.Before(we.Add(rule.Lateness - rule.Margin)) {
			if runs == nil {
				runs = s.runsOf(route, ld)
			}
			runs.mark(ws, we)
			marked = true
		}
		if !we.Before(ld.End) {
			break
		}
	}
	if !marked {
		return markKey{}, false
	}
	k = markKey{farm: route.FarmID, day: ld.Day}
	m := s.marks[k]
	if m == nil {
		m = &markAgg{turbines: map[string]struct{}{}, first: recordedAt, last: recordedAt}
		s.marks[k] = m
	}
	m.turbines[route.TurbineID] = struct{}{}
	m.count(recordedAt)
	s.last[route] = lastMark{ld: ld, runs: runs, agg: m, key: k}
	return k, true
}

// count adds one marked reading of the farm-day.
func (m *markAgg) count(recordedAt time.Time) {
	if recordedAt.Before(m.first) {
		m.first = recordedAt
	}
	if recordedAt.After(m.last) {
		m.last = recordedAt
	}
	m.readings++
}

// params returns the upserts, sorted by (farm, day) so that concurrent
// writers take the mark rows' locks in the same order (no deadlock).
func (s *markSet) params() []sharddb.DirtyMarkUpsertParams {
	out := make([]sharddb.DirtyMarkUpsertParams, 0, len(s.marks))
	for k, m := range s.marks {
		ids := make([]string, 0, len(m.turbines))
		for id := range m.turbines {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		out = append(out, sharddb.DirtyMarkUpsertParams{
			FarmID: k.farm, Day: k.day, TurbineIds: ids,
			FirstRecordedAt: m.first, LastRecordedAt: m.last, Readings: m.readings, WrittenAt: s.writeTime,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].FarmID != out[j].FarmID {
			return out[i].FarmID < out[j].FarmID
		}
		return out[i].Day.Before(out[j].Day)
	})
	return out
}

// windowParams returns the dirty turbine-windows as runs, one insert per
// farm: each turbine-day's runs sorted and merged where they touch or
// overlap, sorted by (farm, day, turbine, start).
func (s *markSet) windowParams() []sharddb.DirtyWindowInsertParams {
	var all []*turbineRuns
	for _, days := range s.windows {
		all = append(all, days...)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.farm != b.farm:
			return a.farm < b.farm
		case !a.day.Equal(b.day):
			return a.day.Before(b.day)
		}
		return a.turbine < b.turbine
	})
	var out []sharddb.DirtyWindowInsertParams
	for i := 0; i < len(all); {
		// Every turbineRuns of one (farm, day, turbine): one route each,
		// or more if the batch held two routes of the same turbine.
		j := i + 1
		for j < len(all) && all[j].farm == all[i].farm && all[j].day.Equal(all[i].day) && all[j].turbine == all[i].turbine {
			j++
		}
		var runs []windowRun
		for _, t := range all[i:j] {
			runs = append(runs, t.runs...)
		}
		sort.Slice(runs, func(a, b int) bool { return runs[a].start.Before(runs[b].start) })
		merged := runs[:1]
		for _, r := range runs[1:] {
			last := &merged[len(merged)-1]
			if !r.start.After(last.end) {
				if r.end.After(last.end) {
					last.end = r.end
				}
				continue
			}
			merged = append(merged, r)
		}
		t := all[i]
		if len(out) == 0 || out[len(out)-1].FarmID != t.farm {
			out = append(out, sharddb.DirtyWindowInsertParams{FarmID: t.farm, MarkedAt: s.writeTime})
		}
		p := &out[len(out)-1]
		for _, r := range merged {
			p.Days = append(p.Days, t.day)
			p.TurbineIds = append(p.TurbineIds, t.turbine)
			p.WindowStarts = append(p.WindowStarts, r.start)
			p.WindowEnds = append(p.WindowEnds, r.end)
			// Every window is t.window long but a day's last, cut at its end.
			p.Windows = append(p.Windows, int32((r.end.Sub(r.start)+t.window-1)/t.window))
		}
		i = j
	}
	return out
}
