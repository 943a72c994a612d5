package ingest

import (
	"sort"
	"time"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/localday"
)

// MarkRule decides which inserted readings dirty their farm-day (the exact
// rule, and why it is safe, is in docs/dirty-marks.md).
//
// A reading is dirty when it is written at or after (end of its window −
// Margin), where windows are Window long, counted from the farm-local
// midnight of the reading's day (the last one ends at the day's end, so a
// 23 h or 25 h day is covered). Anything that computes a window or a day
// only after that window (or day) has ended therefore sees every reading
// that did not leave a mark, provided a write transaction lasts less than
// Margin (the writer enforces that with TxTimeout < Margin).
type MarkRule struct {
	Window time.Duration
	Margin time.Duration
}

// localDay is one farm-local day: its calendar date and its bounds.
type localDay struct {
	date       time.Time // the date at UTC midnight (how a DATE arrives from pgx)
	start, end time.Time
}

// dayOf is the farm-local day holding t, bounded as Postgres bounds it
// (internal/localday), so a mark names the day whose rollup counts t.
func dayOf(t time.Time, loc *time.Location) localDay {
	d := localday.Of(t, loc)
	start, end := localday.Bounds(d, loc)
	return localDay{date: d.UTC(), start: start, end: end}
}

func (ld localDay) contains(t time.Time) bool { return !t.Before(ld.start) && t.Before(ld.end) }

// windowEnd is the end of the window holding t (t within ld).
func (r MarkRule) windowEnd(ld localDay, t time.Time) time.Time {
	n := t.Sub(ld.start) / r.Window
	end := ld.start.Add((n + 1) * r.Window)
	if end.After(ld.end) {
		return ld.end
	}
	return end
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

// markSet gathers the marks of one batch. days caches the current local
// day per farm so the common case costs one comparison per row. Each
// reading is judged by its own farm's rule (Route.Rules).
type markSet struct {
	writeTime time.Time
	marks     map[markKey]*markAgg
	days      map[string]localDay
}

func newMarkSet(writeTime time.Time) *markSet {
	return &markSet{writeTime: writeTime, marks: map[markKey]*markAgg{}, days: map[string]localDay{}}
}

// add considers one inserted reading.
func (s *markSet) add(route *Route, recordedAt time.Time) {
	ld, ok := s.days[route.FarmID]
	if !ok || !ld.contains(recordedAt) {
		ld = dayOf(recordedAt, route.Location)
		s.days[route.FarmID] = ld
	}
	rule := MarkRule{Window: route.Rules.Window, Margin: route.Rules.MarkMargin}
	if s.writeTime.Add(rule.Margin).Before(rule.windowEnd(ld, recordedAt)) {
		return // its window is still open: whatever computes it later will see it
	}
	k := markKey{farm: route.FarmID, day: ld.date}
	m := s.marks[k]
	if m == nil {
		m = &markAgg{turbines: map[string]struct{}{}, first: recordedAt, last: recordedAt}
		s.marks[k] = m
	}
	m.turbines[route.TurbineID] = struct{}{}
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
