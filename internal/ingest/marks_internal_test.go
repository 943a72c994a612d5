package ingest

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/window"
)

// TestMarksAreRuns: one batch, written the next day (every reading marks),
// of turbine T-1's readings every 2 s over 10:00:00–10:09:58 UTC on
// 1 August (London: 11:00–11:10 local) sent in reverse order, plus one
// reading at 10:30:00 and one of the day before. The marks are runs of
// consecutive windows, one row each: [09:59, 10:10) with 11 windows (the
// first reading may count towards the window two cadences back),
// [10:29, 10:31) with 2, and the previous day's [10:29, 10:31) with 2.
// T-2, marked only in the window of 10:05, is a run of 2 windows too.
func TestMarksAreRuns(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	rules := fleet.Rules{Window: time.Minute, AllowedLateness: time.Minute, MarkMargin: 30 * time.Second}
	cal := window.Calendar{{SinceEver: true, Location: london, Window: rules.Window, AllowedLateness: rules.AllowedLateness, MarkMargin: rules.MarkMargin}}
	t1 := &Route{TurbineID: "T-1", FarmID: "f", Location: london, Cadence: 2 * time.Second, Rules: rules, Calendar: cal}
	t2 := &Route{TurbineID: "T-2", FarmID: "f", Location: london, Cadence: 2 * time.Second, Rules: rules, Calendar: cal}
	at := func(day, h, m, s int) time.Time { return time.Date(2026, 8, day, h, m, s, 0, time.UTC) }
	s := newMarkSet(at(2, 12, 0, 0))
	for i := 299; i >= 0; i-- {
		s.add(t1, at(1, 10, 0, 0).Add(time.Duration(i)*2*time.Second))
	}
	s.add(t1, at(1, 10, 30, 0))
	s.add(t1, at(1, 10, 30, 0).AddDate(0, 0, -1))
	s.add(t2, at(1, 10, 5, 0))
	params := s.windowParams()
	if len(params) != 1 {
		t.Fatalf("%d inserts, want 1 (one farm)", len(params))
	}
	p := params[0]
	var got []string
	for i := range p.TurbineIds {
		got = append(got, fmt.Sprintf("%s %s %s–%s %d", p.TurbineIds[i], p.Days[i].Format("01-02"),
			p.WindowStarts[i].UTC().Format("15:04"), p.WindowEnds[i].UTC().Format("15:04"), p.Windows[i]))
	}
	want := "[T-1 07-31 10:29–10:31 2 T-1 08-01 09:59–10:10 11 T-1 08-01 10:29–10:31 2 T-2 08-01 10:04–10:06 2]"
	if fmt.Sprint(got) != want {
		t.Fatalf("runs %v\nwant %s", got, want)
	}
}

// TestMarksMatchTheRule: 20,000 readings of 3 turbines of two farms (one of
// them whose day starts at 03:00Z), in random order and in order, across
// three local days, written at a time when only some of their windows are
// past end + lateness − margin. The windows the runs cover, and each
// farm-day's turbines, first and last reading and count, are exactly what
// the rule gives reading by reading (a naive walk of every window each
// reading may count towards): the shortcut for a reading whose windows are
// all in its turbine's last run changes nothing.
func TestMarksMatchTheRule(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	santiago, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	rules := fleet.Rules{Window: time.Minute, AllowedLateness: 10 * time.Minute, MarkMargin: 30 * time.Second}
	calendar := func(loc *time.Location) window.Calendar {
		return window.Calendar{{SinceEver: true, Location: loc, Window: rules.Window, AllowedLateness: rules.AllowedLateness, MarkMargin: rules.MarkMargin}}
	}
	routes := []*Route{
		{TurbineID: "A-1", FarmID: "a", Location: london, Cadence: 2 * time.Second, Rules: rules, Calendar: calendar(london)},
		{TurbineID: "A-2", FarmID: "a", Location: london, Cadence: 5 * time.Second, Rules: rules, Calendar: calendar(london)},
		{TurbineID: "S-1", FarmID: "s", Location: santiago, Cadence: 2 * time.Second, Rules: rules, Calendar: calendar(santiago)},
	}
	base := time.Date(2026, 9, 5, 20, 0, 0, 0, time.UTC)
	writeTime := base.Add(30 * time.Hour) // windows of the last ~4 h are not yet marked
	rng := rand.New(rand.NewPCG(1, 2))
	type reading struct {
		route *Route
		at    time.Time
	}
	var readings []reading
	for i := 0; i < 20000; i++ {
		readings = append(readings, reading{routes[rng.IntN(len(routes))], base.Add(time.Duration(rng.Int64N(int64(34 * time.Hour))))})
	}
	ordered := append([]reading(nil), readings...)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].at.Before(ordered[j].at) })

	// The rule, reading by reading.
	type dayKey struct {
		farm string
		day  string
	}
	type agg struct {
		turbines    map[string]bool
		first, last time.Time
		n           int64
	}
	wantWindows := map[string]bool{}
	wantDays := map[dayKey]*agg{}
	for _, r := range readings {
		ld := window.GridOf(r.at, r.route.Location, rules.Window)
		rule := MarkRule{Window: rules.Window, Lateness: rules.AllowedLateness, Margin: rules.MarkMargin}
		from := r.at.Add(-2 * r.route.Cadence)
		if from.Before(ld.Start) {
			from = ld.Start
		}
		marked := false
		for ws, we := ld.Bounds(ld.Holding(from)); !ws.After(r.at); ws, we = ld.Bounds(ld.Holding(we)) {
			if !writeTime.Before(we.Add(rule.Lateness - rule.Margin)) {
				wantWindows[fmt.Sprintf("%s %s %s", r.route.TurbineID, ld.Day.Format(time.DateOnly), ws.UTC().Format(time.RFC3339))] = true
				marked = true
			}
			if !we.Before(ld.End) {
				break
			}
		}
		if !marked {
			continue
		}
		k := dayKey{r.route.FarmID, ld.Day.Format(time.DateOnly)}
		a := wantDays[k]
		if a == nil {
			a = &agg{turbines: map[string]bool{}, first: r.at, last: r.at}
			wantDays[k] = a
		}
		a.turbines[r.route.TurbineID] = true
		a.first = minTime(a.first, r.at)
		a.last = maxTime(a.last, r.at)
		a.n++
	}

	for name, input := range map[string][]reading{"random order": readings, "in order": ordered} {
		s := newMarkSet(writeTime)
		for _, r := range input {
			s.add(r.route, r.at)
		}
		gotWindows := map[string]bool{}
		for _, p := range s.windowParams() {
			for i := range p.TurbineIds {
				n := 0
				for ws := p.WindowStarts[i]; ws.Before(p.WindowEnds[i]); ws = ws.Add(rules.Window) {
					gotWindows[fmt.Sprintf("%s %s %s", p.TurbineIds[i], p.Days[i].Format(time.DateOnly), ws.UTC().Format(time.RFC3339))] = true
					n++
				}
				if int32(n) != p.Windows[i] {
					t.Fatalf("%s: run %s %s–%s says %d windows, holds %d", name, p.TurbineIds[i], p.WindowStarts[i], p.WindowEnds[i], p.Windows[i], n)
				}
			}
		}
		if len(wantWindows) < 1000 || len(wantWindows) == 3*34*60 {
			t.Fatalf("the rule marks %d windows: the test should mark many but not all", len(wantWindows))
		}
		for w := range wantWindows {
			if !gotWindows[w] {
				t.Fatalf("%s: window %s not marked (%d marked, %d by the rule)", name, w, len(gotWindows), len(wantWindows))
			}
		}
		for w := range gotWindows {
			if !wantWindows[w] {
				t.Fatalf("%s: window %s marked, not by the rule", name, w)
			}
		}
		got := s.params()
		if len(got) != len(wantDays) {
			t.Fatalf("%s: %d farm-day marks, want %d", name, len(got), len(wantDays))
		}
		for _, p := range got {
			a := wantDays[dayKey{p.FarmID, p.Day.Format(time.DateOnly)}]
			if a == nil || len(p.TurbineIds) != len(a.turbines) || !p.FirstRecordedAt.Equal(a.first) || !p.LastRecordedAt.Equal(a.last) || p.Readings != a.n {
				t.Fatalf("%s: mark %s %s: %d turbines, %s–%s, %d readings; want %+v", name, p.FarmID, p.Day.Format(time.DateOnly),
					len(p.TurbineIds), p.FirstRecordedAt, p.LastRecordedAt, p.Readings, a)
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
