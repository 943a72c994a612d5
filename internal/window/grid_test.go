package window_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/window"
)

// gridFleet: one farm per zone and window length, one turbine each. The
// windows are chosen not to divide the day (7 and 25 minutes: the last
// window is cut at the day's end) or to divide it (1 h).
const gridFleet = `
shards: [{name: s1}]
farms:
  - {id: london-7m, timezone: Europe/London, rules: {window: 7m}, turbines: [{id: L7, shard: s1}]}
  - {id: london-1h, timezone: Europe/London, rules: {window: 1h}, turbines: [{id: L60, shard: s1}]}
  - {id: lordhowe-25m, timezone: Australia/Lord_Howe, rules: {window: 25m}, turbines: [{id: LH25, shard: s1}]}
  - {id: kathmandu-7m, timezone: Asia/Kathmandu, rules: {window: 7m}, turbines: [{id: K7, shard: s1}]}
`

// TestGridIsTheSQLGrid: the Go grid (GridOf, which ingest's mark rule
// walks) is the SQL grid, window for window, on the control database (the
// windows FarmWindowsDue gives the fast path, the bounds FarmDayGet gives a
// recompute) and on the shard (the turbine_window rows TurbineWindowUpsert
// writes for a whole day), over the 23- and 25-hour days in London, Lord
// Howe's half-hour shifts (23.5 and 24.5 hours) and a +05:45 zone.
func TestGridIsTheSQLGrid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, gridFleet)
	q := controldb.New(env.Control)
	sq := sharddb.New(env.Shards.Pool("s1"))
	cases := []struct {
		farm, turbine string
		day           string
		hours         float64 // the day's length
		windows       int     // how many windows it has
	}{
		{"london-7m", "L7", "2026-03-29", 23, 198},       // 1,380 min / 7 = 197.1
		{"london-7m", "L7", "2026-10-25", 25, 215},       // 1,500 / 7 = 214.3
		{"london-7m", "L7", "2026-08-01", 24, 206},       // 1,440 / 7 = 205.7
		{"london-1h", "L60", "2026-03-29", 23, 23},       //
		{"london-1h", "L60", "2026-10-25", 25, 25},       //
		{"lordhowe-25m", "LH25", "2026-10-04", 23.5, 57}, // 1,410 / 25 = 56.4
		{"lordhowe-25m", "LH25", "2026-04-05", 24.5, 59}, // 1,470 / 25 = 58.8
		{"kathmandu-7m", "K7", "2026-08-01", 24, 206},
	}
	for _, c := range cases {
		t.Run(c.farm+" "+c.day, func(t *testing.T) {
			day, err := time.Parse(time.DateOnly, c.day)
			testdb.Must(t, err, "day")
			farm, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: c.farm, Day: day})
			testdb.Must(t, err, "FarmDayGet")
			loc, err := time.LoadLocation(farm.Timezone)
			testdb.Must(t, err, "zone")
			rules := fleet.RulesOfDay(farm)
			// Any instant of the day gives the same grid: its first, a
			// middle one and its last.
			var g window.Grid
			for _, at := range []time.Time{farm.DayStart, farm.DayStart.Add(farm.DayEnd.Sub(farm.DayStart) / 2), farm.DayEnd.Add(-time.Nanosecond)} {
				g = window.GridOf(at, loc, rules.Window)
				if !g.Day.Equal(day) || !g.Start.Equal(farm.DayStart) || !g.End.Equal(farm.DayEnd) {
					t.Fatalf("GridOf(%s) = day %s [%s, %s), FarmDayGet says %s [%s, %s)", at, g.Day, g.Start, g.End, c.day, farm.DayStart, farm.DayEnd)
				}
			}
			if h := g.End.Sub(g.Start).Hours(); h != c.hours || g.Len() != c.windows {
				t.Fatalf("the day is %v h in %d windows, want %v h in %d", h, g.Len(), c.hours, c.windows)
			}
			want := make([]string, g.Len())
			for i := range want {
				s, e := g.Bounds(i)
				if g.Holding(s) != i || g.Holding(e.Add(-time.Nanosecond)) != i {
					t.Fatalf("window %d [%s, %s) is not the window holding its own instants", i, s, e)
				}
				want[i] = fmt.Sprintf("%s %s", s.UTC().Format(time.RFC3339), e.UTC().Format(time.RFC3339))
			}

			// The control database: the windows due to the fast path once
			// the whole day is past its watermark.
			due, err := q.FarmWindowsDue(ctx, controldb.FarmWindowsDueParams{FarmID: c.farm, StartFrom: g.Start,
				Now: g.End.Add(rules.AllowedLateness), MaxWindows: int32(g.Len() + 10)})
			testdb.Must(t, err, "FarmWindowsDue")
			var control []string
			for _, w := range due {
				if w.Day.Equal(day) {
					control = append(control, fmt.Sprintf("%s %s", w.WindowStart.UTC().Format(time.RFC3339), w.WindowEnd.UTC().Format(time.RFC3339)))
				}
			}
			same(t, "FarmWindowsDue", control, want)

			// The shard: a whole day of one turbine's windows, computed.
			pairs := window.Pairs{}
			turbines := []window.Turbine{{ID: c.turbine, Cadence: 2, ServiceFrom: g.Start.AddDate(-1, 0, 0), ServiceTo: g.End.AddDate(1, 0, 0)}}
			pairs.AddRange(turbines, 0, g.Len())
			g.FarmID = c.farm
			g.Contract = window.GridOfDay(farm, day).Contract
			if _, err := window.Compute(ctx, sq, g, turbines, rules, pairs, nil, false, g.End); err != nil {
				t.Fatalf("compute: %v", err)
			}
			rows, err := env.Shards.Pool("s1").Query(ctx, `SELECT window_start, window_end FROM turbine_window WHERE turbine_id = $1 AND day = $2 ORDER BY window_start`, c.turbine, day)
			testdb.Must(t, err, "turbine_window")
			var shard []string
			for rows.Next() {
				var s, e time.Time
				testdb.Must(t, rows.Scan(&s, &e), "scan")
				shard = append(shard, fmt.Sprintf("%s %s", s.UTC().Format(time.RFC3339), e.UTC().Format(time.RFC3339)))
			}
			testdb.Must(t, rows.Err(), "turbine_window")
			same(t, "TurbineWindowUpsert", shard, want)
		})
	}
}

func same(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s cut %d windows, the Go grid %d (first %v, last %v; want %v, %v)", what, len(got), len(want), first(got), last(got), want[0], want[len(want)-1])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s window %d is %s, the Go grid's %s", what, i, got[i], want[i])
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return s[0]
}

func last(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return s[len(s)-1]
}
