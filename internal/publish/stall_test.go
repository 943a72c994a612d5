package publish_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/testdb"
)

// A farm of five turbines over two shards, 1-minute windows.
const stallFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: windy
    timezone: UTC
    turbines:
      - {id: W-1, shard: s1}
      - {id: W-2, shard: s1}
      - {id: W-3, shard: s1}
      - {id: W-4, shard: s2}
      - {id: W-5, shard: s2}
`

// reading is what one turbine reports for a whole window: 30 readings at
// 2 s, each received a second after it was recorded.
type reading struct {
	available   bool
	power, wind float64
}

// TestTheWatcherFlagsAFeatheredTurbineAndNotOneInCalmWind: W-1 reports
// available at 0 kW in 9 m/s while its four neighbours produce 1,500 kW:
// stalled in the first window it does so (12:00, raised at 12:02:00 when
// the window is published, a minute after it ends), still stalled in the
// next (two windows, one stall), cleared in the window it produces again.
// Then in calm wind (farm median 2.5 m/s) W-1 at 0 kW beside neighbours at
// 50 kW is not stalled, nor is W-2 at 0 kW reporting unavailable in 9 m/s,
// nor W-3 at 0 kW in 2.8 m/s of its own (under cut-in) while the farm's
// median is 8 m/s.
func TestTheWatcherFlagsAFeatheredTurbineAndNotOneInCalmWind(t *testing.T) {
	t.Parallel()
	b := setup(t, stallFleet, pipelinetest.Options{})
	ctx := context.Background()
	var seen []string
	p := b.PublisherWith(2 * time.Minute)
	p.OnStall = func(s publish.Stall) {
		seen = append(seen, fmt.Sprintf("%s %s %s", s.Window.Format("15:04"), s.TurbineID, s.Action))
	}
	window := func(start time.Time, turbines map[string]reading) {
		t.Helper()
		b.Clock.Set(start.Add(time.Minute + time.Second))
		var text strings.Builder
		for id, r := range turbines {
			for k := 0; k < 30; k++ {
				at := start.Add(time.Duration(2*k) * time.Second)
				fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%g,"wind_ms":%g}`+"\n",
					id, at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339), r.available, r.power, r.wind)
			}
		}
		b.IngestText(t, text.String())
		b.Clock.Set(start.Add(2 * time.Minute)) // the window's watermark: end + 60 s allowed lateness
		if _, err := p.PublishDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	turning := reading{available: true, power: 1500, wind: 8}
	feathered := reading{available: true, power: 0, wind: 9}
	open := func() string {
		return testdb.Text(t, b.Env.Control, `SELECT coalesce(string_agg(turbine_id || ' ' || to_char(first_window, 'HH24:MI') || '-' || to_char(last_window, 'HH24:MI') || ' ' || windows, ', ' ORDER BY turbine_id), '')
			FROM turbine_stall WHERE cleared_at IS NULL`)
	}

	window(noon, map[string]reading{"W-1": feathered, "W-2": turning, "W-3": turning, "W-4": turning, "W-5": turning})
	if got := open(); got != "W-1 12:00-12:00 1" {
		t.Fatalf("after 12:00: open stalls %q, want W-1 12:00-12:00 1", got)
	}
	raisedAt := testdb.Text(t, b.Env.Control, `SELECT to_char(raised_at, 'HH24:MI:SS') || ' ' || message FROM turbine_stall WHERE turbine_id = 'W-1'`)
	if want := "12:02:00 W-1 stalled: reports available at no more than 0.0 kW in the window from 2026-08-01 12:00:00 UTC while the farm's median wind is 8.0 m/s and 4 of its 4 other turbines produce"; raisedAt != want {
		t.Fatalf("raised: %q, want %q", raisedAt, want)
	}
	window(noon.Add(time.Minute), map[string]reading{"W-1": feathered, "W-2": turning, "W-3": turning, "W-4": turning, "W-5": turning})
	if got := open(); got != "W-1 12:00-12:01 2" {
		t.Fatalf("after 12:01: open stalls %q, want W-1 12:00-12:01 2 (one stall, two windows)", got)
	}
	if m, err := controldb.New(b.Env.Control).StallMetrics(ctx); err != nil || len(m) != 1 || m[0].FarmID != "windy" || m[0].Stalled != 1 {
		t.Fatalf("stall metrics %+v (%v), want windy 1", m, err)
	}
	window(noon.Add(2*time.Minute), map[string]reading{"W-1": {available: true, power: 800, wind: 9}, "W-2": turning, "W-3": turning, "W-4": turning, "W-5": turning})
	if got := open(); got != "" {
		t.Fatalf("after W-1 produced at 12:02: open stalls %q, want none", got)
	}
	if got := testdb.Text(t, b.Env.Control, `SELECT to_char(cleared_window, 'HH24:MI') || ' ' || to_char(cleared_at, 'HH24:MI:SS') FROM turbine_stall WHERE turbine_id = 'W-1'`); got != "12:02 12:04:00" {
		t.Fatalf("W-1's stall cleared %q, want in window 12:02, at 12:04:00", got)
	}

	calm := reading{available: true, power: 50, wind: 2.5}
	window(noon.Add(3*time.Minute), map[string]reading{"W-1": {available: true, power: 0, wind: 2}, "W-2": calm, "W-3": calm, "W-4": calm, "W-5": calm})
	window(noon.Add(4*time.Minute), map[string]reading{"W-1": turning, "W-2": {available: false, power: 0, wind: 9}, "W-3": turning, "W-4": turning, "W-5": turning})
	window(noon.Add(5*time.Minute), map[string]reading{"W-1": turning, "W-2": turning, "W-3": {available: true, power: 0, wind: 2.8}, "W-4": turning, "W-5": turning})
	if got := open(); got != "" {
		t.Fatalf("calm wind, a turbine reporting unavailable, one in a lull of its own: open stalls %q, want none", got)
	}
	if got, want := strings.Join(seen, ", "), "12:00 W-1 raised, 12:01 W-1 continued, 12:02 W-1 cleared"; got != want {
		t.Fatalf("the watcher said %q, want %q", got, want)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_stall`); n != 1 {
		t.Fatalf("%d stalls recorded, want 1 (kept after it cleared)", n)
	}
}
