package window_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/window"
)

// TestCalendarIsTheSQLCalendar: across zone and window changes the mark
// rule's calendar (ingest's routes, Calendar.GridOf) cuts every day as
// FarmDayGet does. The farm moves from London to Kathmandu (+05:45, 10 min
// windows) in the day holding 2 August 14:00 UTC, then to New York (1 h
// windows) in the day holding 5 August 03:00 UTC (by Kathmandu's
// calendar): 2 August starts at London's midnight and ends at Kathmandu's,
// 5 August starts at Kathmandu's and ends at New York's. Every day from
// 31 July to 7 August, at its first, middle and last instant.
func TestCalendarIsTheSQLCalendar(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const base = `
shards: [{name: s1}]
farms:
  - {id: f, timezone: Europe/London, turbines: [{id: T1, shard: s1}]}
`
	env := testdb.New(t, base)
	apply := func(yaml string, at time.Time) {
		t.Helper()
		plan, err := fleet.Parse("edit", strings.NewReader(yaml))
		testdb.Must(t, err, "parse")
		reg := *env.Registry
		reg.Now = func() time.Time { return at }
		_, err = reg.Apply(ctx, "edit", plan)
		testdb.Must(t, err, "apply at %s", at)
	}
	apply(strings.Replace(base, "timezone: Europe/London,", "timezone: Asia/Kathmandu, rules: {window: 10m},", 1), time.Date(2026, 8, 2, 14, 0, 0, 0, time.UTC))
	apply(strings.Replace(base, "timezone: Europe/London,", "timezone: America/New_York, rules: {window: 1h},", 1), time.Date(2026, 8, 5, 3, 0, 0, 0, time.UTC))
	routes, err := ingest.LoadRoutes(ctx, env.Control, time.Date(2026, 8, 6, 0, 0, 0, 0, time.UTC), 0)
	testdb.Must(t, err, "routes")
	cal := routes.Lookup("T1").Calendar
	if len(cal) != 3 {
		t.Fatalf("calendar has %d versions, want 3", len(cal))
	}
	q := controldb.New(env.Control)
	hours := map[string]float64{}
	for d := time.Date(2026, 7, 31, 0, 0, 0, 0, time.UTC); !d.After(time.Date(2026, 8, 7, 0, 0, 0, 0, time.UTC)); d = d.AddDate(0, 0, 1) {
		day, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: "f", Day: d})
		testdb.Must(t, err, "FarmDayGet %s", d)
		for _, at := range []time.Time{day.DayStart, day.DayStart.Add(day.DayEnd.Sub(day.DayStart) / 2), day.DayEnd.Add(-time.Nanosecond)} {
			g, v := window.GridOfCalendar(cal, at)
			if !g.Day.Equal(d) || !g.Start.Equal(day.DayStart) || !g.End.Equal(day.DayEnd) || g.Window != time.Duration(day.WindowS)*time.Second || v.Window != g.Window {
				t.Fatalf("Calendar.GridOf(%s) = day %s [%s, %s) of %s; FarmDayGet says %s [%s, %s) of %d s",
					at, g.Day.Format(time.DateOnly), g.Start, g.End, g.Window, d.Format(time.DateOnly), day.DayStart, day.DayEnd, day.WindowS)
			}
		}
		hours[d.Format(time.DateOnly)] = day.DayEnd.Sub(day.DayStart).Hours()
	}
	// The transition days: London's midnight to Kathmandu's (24 h less
	// the 4 h 45 min between them), Kathmandu's to New York's (24 h plus
	// 9 h 45 min); every other day 24 h.
	for day, want := range map[string]float64{"2026-08-01": 24, "2026-08-02": 19.25, "2026-08-03": 24, "2026-08-04": 24, "2026-08-05": 33.75, "2026-08-06": 24} {
		if hours[day] != want {
			t.Fatalf("%s is %v h, want %v", day, hours[day], want)
		}
	}
}
