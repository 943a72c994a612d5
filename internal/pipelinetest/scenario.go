// Package pipelinetest is the test harness of the whole pipeline: one
// process's ingestor, publisher, drainer, recompute and River workers on
// one injected clock (Pipeline, Options), and the wiring of a bare
// ingestor (Ingestor). The tests of rollup, publish, report, metrics, demo
// and the orchestrator use it; none wires the pipeline itself.
//
// It also plays one small, deterministic scenario through the
// whole pipeline — ingest, the fast path, the drain, corrections and the
// day's close — on a clock the test moves (time is data), and reads what it
// leaves behind (turbine_day, farm_window fast and final, reconciliation,
// alerts). A run with re-sent deliveries, several senders or several
// orchestrator processes must leave exactly what a clean run of the same
// data leaves.
//
// The scenario: two farms (north, 8 turbines in Europe/London split over
// shards s1 and s2; south, 4 turbines in UTC on s2) send one hour of
// readings, 10:00 to 11:00 UTC on 1 August 2026, with simulated clock
// offsets (simulate.ClockOffsets) and arrival delays (simulate.DefaultDelay:
// 94 % within 5 s, a 90 s tail, a 4-hour tail). They arrive in deliveries: at each of the scenario's clocks, what
// was received before the next one is sent, then the clock moves on and
// the pipeline does what is due (publishes the windows past their
// watermark, drains the marks, runs the corrections). The day is closed at
// 03:00 the next day, as `work --until-idle` closes it.
package pipelinetest

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
)

// Fleet is the scenario's fleet file.
const Fleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: north
    name: North
    timezone: Europe/London
    turbines:
      - {prefix: N-, from: 1, to: 4, shard: s1}
      - {prefix: N-, from: 5, to: 8, shard: s2}
  - id: south
    name: South
    timezone: UTC
    turbines:
      - {prefix: S-, from: 1, to: 4, shard: s2}
`

// Farms are the scenario's farms.
var Farms = []string{"north", "south"}

// Seed drives the simulation (clock offsets and delays).
const Seed = 11

// Day is the day the readings belong to (in both farms' zones).
var Day = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// From and To bound the readings' true times.
var (
	From = time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	To   = time.Date(2026, 8, 1, 11, 0, 0, 0, time.UTC)
)

// Clocks are where the scenario's clock stands, in order: it starts at the
// first; delivery k is sent at Clocks[k] and holds the readings received
// before Clocks[k+1] (the last one: everything left), then the clock moves
// to Clocks[k+1]. The last clock is the next morning, when the day is closed.
//
// They stand 45 s into a minute: a delivery then marks the window that
// ended 45 s before (its end + allowed lateness − margin has passed), which
// the fast path has not published yet (its end + allowed lateness has
// not), so each step has a window that the fast path and a correction
// could both take.
var Clocks = []time.Time{
	at(10, 0), at(10, 20), at(10, 40), at(11, 0), at(11, 20), at(16, 0),
	time.Date(2026, 8, 2, 3, 0, 45, 0, time.UTC),
}

func at(h, m int) time.Time { return time.Date(2026, 8, 1, h, m, 45, 0, time.UTC) }

// Delivery is one batch of readings as a sender sends it.
type Delivery struct {
	// At is the clock when it is sent (the readings were received before
	// Then; the writer's clock is At).
	At, Then time.Time
	// Body is NDJSON, in the order the readings were received.
	Body     []byte
	Readings int
}

// Lines splits the body into n parts of consecutive whole lines (n senders
// sharing one delivery).
func (d Delivery) Lines(n int) [][]byte {
	lines := bytes.SplitAfter(d.Body, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	parts := make([][]byte, n)
	for i := range parts {
		lo, hi := i*len(lines)/n, (i+1)*len(lines)/n
		parts[i] = bytes.Join(lines[lo:hi], nil)
	}
	return parts
}

// Scenario is the deliveries in order.
type Scenario struct {
	Deliveries []Delivery
	Readings   int
}

// NewScenario generates the scenario (the same every time).
func NewScenario(t testing.TB) Scenario {
	t.Helper()
	plan, err := fleet.Parse("pipelinetest", strings.NewReader(Fleet))
	if err != nil {
		t.Fatal(err)
	}
	var all []reading.Reading
	for _, farm := range Farms {
		sc, err := simulate.FarmConfig(plan, farm, From, To, Seed)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := simulate.Generate(sc, func(r *reading.Reading) error { all = append(all, *r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortStableFunc(all, func(a, b reading.Reading) int {
		return cmp.Or(a.ReceivedAt.Compare(b.ReceivedAt), cmp.Compare(a.TurbineID, b.TurbineID), a.RecordedAt.Compare(b.RecordedAt))
	})
	s := Scenario{Readings: len(all)}
	rest := all
	for k := 0; k+1 < len(Clocks); k++ {
		n := len(rest)
		if k+2 < len(Clocks) {
			n, _ = slices.BinarySearchFunc(rest, Clocks[k+1], func(r reading.Reading, t time.Time) int { return r.ReceivedAt.Compare(t) })
		}
		var body bytes.Buffer
		enc := reading.NewEncoder(reading.NDJSON, &body)
		for i := range rest[:n] {
			if err := enc.Encode(&rest[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		s.Deliveries = append(s.Deliveries, Delivery{At: Clocks[k], Then: Clocks[k+1], Body: body.Bytes(), Readings: n})
		rest = rest[n:]
	}
	return s
}
