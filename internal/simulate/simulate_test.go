package simulate_test

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
)

const (
	slotsPerDay   = 43_200 // 24 h at 2 s
	lostSlots     = 9_990  // 05:58–11:31 local at 2 s
	daySlots      = slotsPerDay - lostSlots
	apTurbines    = 300
	fleetTurbines = 1_240
)

var stoppedIDs = []string{"AP-007", "AP-123", "AP-205", "AP-288"}

func demoPlan(tb testing.TB) *fleet.Plan {
	tb.Helper()
	plan, err := fleet.ReadFile("../../fleet/demo.yaml")
	if err != nil {
		tb.Fatalf("read demo fleet: %v", err)
	}
	return plan
}

func london(tb testing.TB) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation("Europe/London")
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func scenario(tb testing.TB, phase string, seed uint64) simulate.Config {
	tb.Helper()
	cfg, err := simulate.Scenario("ardnave-saturday", demoPlan(tb), phase, seed)
	if err != nil {
		tb.Fatalf("scenario: %v", err)
	}
	return cfg
}

func TestScenarioWindow(t *testing.T) {
	cfg := scenario(t, "day", 1)
	wantFrom := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC)
	wantTo := time.Date(2026, 8, 1, 23, 0, 0, 0, time.UTC)
	if !cfg.From.Equal(wantFrom) || !cfg.To.Equal(wantTo) {
		t.Fatalf("window = %s..%s, want %s..%s", cfg.From.UTC(), cfg.To.UTC(), wantFrom, wantTo)
	}
	if len(cfg.Turbines) != apTurbines || !cfg.ExactClocks {
		t.Fatalf("turbines = %d, exact clocks = %v; want %d, true", len(cfg.Turbines), cfg.ExactClocks, apTurbines)
	}
}

// TestScenarioDay checks the phase a live ingest sees on the Saturday itself.
func TestScenarioDay(t *testing.T) {
	loc := london(t)
	cfg := scenario(t, "day", 1)
	at := func(h, m int) time.Time { return time.Date(2026, 8, 1, h, m, 0, 0, loc) }
	linkDown, linkUp := at(5, 40), at(13, 10)
	lostFrom, lostTo := at(5, 58), at(11, 31)
	stopped := map[string]bool{}
	for _, id := range stoppedIDs {
		stopped[id] = true
	}

	unavailable := map[string]int64{}
	var prevT time.Time
	var prevID string
	var early, earlyLate, inLost, arrivedWhileDown, badOrder, badValues int64
	st, err := simulate.Generate(cfg, func(r *reading.Reading) error {
		if !r.Available {
			unavailable[r.TurbineID]++
			if r.PowerKW != 0 {
				badValues++
			}
		}
		if r.PowerKW < 0 || r.WindMS < 0 || math.IsNaN(float64(r.PowerKW)) || math.IsNaN(float64(r.WindMS)) {
			badValues++
		}
		ts := r.RecordedAt
		switch c := ts.Compare(prevT); {
		case c < 0, c == 0 && r.TurbineID <= prevID:
			badOrder++
		}
		prevT, prevID = ts, r.TurbineID
		if !ts.Before(lostFrom) && ts.Before(lostTo) {
			inLost++
		}
		if !ts.Before(linkDown) && ts.Before(lostFrom) {
			early++
			if r.ReceivedAt.Before(linkUp) {
				earlyLate++
			}
		}
		if !r.ReceivedAt.Before(linkDown) && r.ReceivedAt.Before(linkUp) {
			arrivedWhileDown++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(apTurbines * daySlots); st.Readings != want {
		t.Errorf("readings = %d, want %d (300 × 33,210)", st.Readings, want)
	}
	if len(st.PerTurbine) != apTurbines {
		t.Errorf("per-turbine entries = %d, want %d", len(st.PerTurbine), apTurbines)
	}
	for id, n := range st.PerTurbine {
		if n != daySlots {
			t.Errorf("%s: %d readings, want %d", id, n, daySlots)
		}
	}
	if len(unavailable) != len(stoppedIDs) {
		t.Errorf("turbines with available=false = %v, want exactly %v", unavailable, stoppedIDs)
	}
	for _, id := range stoppedIDs {
		if unavailable[id] != daySlots {
			t.Errorf("%s: %d readings with available=false, want %d", id, unavailable[id], daySlots)
		}
	}
	if want := int64(len(stoppedIDs) * daySlots); st.Stopped != want {
		t.Errorf("stats.Stopped = %d, want %d", st.Stopped, want)
	}
	if inLost != 0 {
		t.Errorf("%d readings recorded in the lost range 05:58–11:31, want 0 in phase day", inLost)
	}
	if want := int64(apTurbines * 18 * 30); early != want {
		t.Errorf("readings recorded 05:40–05:58 = %d, want %d", early, want)
	}
	if earlyLate != 0 {
		t.Errorf("%d readings recorded 05:40–05:58 arrived before the link returned at 13:10, want 0", earlyLate)
	}
	if arrivedWhileDown != 0 {
		t.Errorf("%d readings arrived while the link was down, want 0", arrivedWhileDown)
	}
	// Held: everything taken while the link was down and not lost
	// (05:40–05:58 and 11:31–13:10 = 117 min = 1,053,000 readings), plus
	// readings taken before 05:40 whose arrival fell inside the outage:
	// per turbine 0.005·(4 h/2 s)·(1−e^(−340/240))·(1−e^(−450/240)) ≈ 23.1
	// from the backlog tail, 0.055·45 ≈ 2.5 from the retry tail and 0.75
	// from the last two slots' 0–5 s delays: ≈ 26.3 × 300 ≈ 7,900.
	heldTaken := int64(apTurbines * 117 * 30)
	if extra := st.Held - heldTaken; extra < 7_400 || extra > 8_400 {
		t.Errorf("held = %d = %d taken while down + %d deferred, want ≈7,900 deferred (7,400–8,400)", st.Held, heldTaken, extra)
	}
	if st.Replayed != 0 {
		t.Errorf("replayed = %d in phase day, want 0", st.Replayed)
	}
	if badOrder != 0 || badValues != 0 {
		t.Errorf("%d readings out of slot/id order, %d with bad power/wind; want 0 and 0", badOrder, badValues)
	}
}

// TestScenarioReplay checks the Tuesday delivery of the lost backlog.
func TestScenarioReplay(t *testing.T) {
	loc := london(t)
	cfg := scenario(t, "replay", 1)
	lostFrom := time.Date(2026, 8, 1, 5, 58, 0, 0, loc)
	lostTo := time.Date(2026, 8, 1, 11, 31, 0, 0, loc)
	var notTuesday, outside int64
	st, err := simulate.Generate(cfg, func(r *reading.Reading) error {
		if y, m, d := r.ReceivedAt.In(loc).Date(); y != 2026 || m != time.August || d != 4 {
			notTuesday++
		}
		if r.RecordedAt.Before(lostFrom) || !r.RecordedAt.Before(lostTo) {
			outside++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(apTurbines * lostSlots); st.Readings != want || st.Replayed != want {
		t.Errorf("readings = %d, replayed = %d; want %d (300 × 9,990) each", st.Readings, st.Replayed, want)
	}
	for id, n := range st.PerTurbine {
		if n != lostSlots {
			t.Errorf("%s: %d readings, want %d", id, n, lostSlots)
		}
	}
	if want := int64(len(stoppedIDs) * lostSlots); st.Stopped != want {
		t.Errorf("stats.Stopped = %d, want %d", st.Stopped, want)
	}
	if notTuesday != 0 {
		t.Errorf("%d replayed readings received outside 2026-08-04 local, want 0", notTuesday)
	}
	if outside != 0 {
		t.Errorf("%d replayed readings recorded outside 05:58–11:31, want 0", outside)
	}
}

type snapshot struct {
	id                 string
	recorded, received time.Time
	available          bool
	power, wind        float32
}

func firstN(t *testing.T, cfg simulate.Config, n int) ([]snapshot, simulate.Stats) {
	t.Helper()
	var out []snapshot
	st, err := simulate.Generate(cfg, func(r *reading.Reading) error {
		if len(out) < n {
			out = append(out, snapshot{r.TurbineID, r.RecordedAt, r.ReceivedAt, r.Available, r.PowerKW, r.WindMS})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

func TestDeterminism(t *testing.T) {
	a, sa := firstN(t, scenario(t, "all", 7), 1000)
	b, sb := firstN(t, scenario(t, "all", 7), 1000)
	if len(a) != 1000 || !slices.Equal(a, b) {
		t.Fatalf("same seed: first 1000 readings differ (got %d and %d readings)", len(a), len(b))
	}
	if sa.Readings != sb.Readings || sa.Stopped != sb.Stopped || sa.Held != sb.Held || sa.Replayed != sb.Replayed || !maps.Equal(sa.PerTurbine, sb.PerTurbine) {
		t.Fatalf("same seed: totals differ: %+v vs %+v", sa, sb)
	}
	if want := int64(apTurbines * slotsPerDay); sa.Readings != want || sa.Replayed != apTurbines*lostSlots {
		t.Fatalf("phase all: readings = %d, replayed = %d; want %d and %d", sa.Readings, sa.Replayed, want, apTurbines*lostSlots)
	}

	c, _ := firstN(t, scenario(t, "all", 8), 1000)
	same := 0
	for i := range a {
		if a[i].received.Equal(c[i].received) {
			same++
		}
	}
	if same > 10 {
		t.Fatalf("seeds 7 and 8: %d of 1000 arrival times identical, want at most 10", same)
	}
}

// TestPhasesAgree checks a reading has the same arrival whichever phase or
// window produced it, which is what lets day and replay be loaded separately.
func TestPhasesAgree(t *testing.T) {
	loc := london(t)
	all := scenario(t, "all", 3)
	day := scenario(t, "day", 3)
	for _, c := range []*simulate.Config{&all, &day} {
		c.From = time.Date(2026, 8, 1, 5, 30, 0, 0, loc)
		c.To = time.Date(2026, 8, 1, 6, 5, 0, 0, loc)
	}
	wantAll, _ := firstN(t, all, math.MaxInt)
	// Day phase in two windows must equal "all" minus the lost readings.
	mid := time.Date(2026, 8, 1, 5, 45, 1, 0, loc) // not slot-aligned on purpose
	first, second := day, day
	first.To, second.From = mid, mid.Add(time.Second)
	p1, _ := firstN(t, first, math.MaxInt)
	p2, _ := firstN(t, second, math.MaxInt)
	got := append(p1, p2...)
	lostFrom := time.Date(2026, 8, 1, 5, 58, 0, 0, loc)
	var want []snapshot
	for _, s := range wantAll {
		if s.recorded.Before(lostFrom) {
			want = append(want, s)
		}
	}
	if wantN := apTurbines * 28 * 30; len(want) != wantN || !slices.Equal(got, want) {
		t.Fatalf("day phase in two windows: %d readings, want the %d non-lost readings of phase all, identical", len(got), wantN)
	}
}

func TestClockOffsetQuantiles(t *testing.T) {
	plan := demoPlan(t)
	ids := make([]string, 0, len(plan.Turbines))
	for _, tb := range plan.Turbines {
		ids = append(ids, tb.ID)
	}
	if len(ids) != fleetTurbines {
		t.Fatalf("demo fleet has %d turbines, want %d", len(ids), fleetTurbines)
	}
	offs := simulate.ClockOffsets(ids, 42)
	if len(offs) != fleetTurbines {
		t.Fatalf("%d offsets, want %d", len(offs), fleetTurbines)
	}
	var abs []float64
	pos, neg := 0, 0
	for _, d := range offs {
		abs = append(abs, math.Abs(d.Seconds()))
		if d > 0 {
			pos++
		} else if d < 0 {
			neg++
		}
	}
	slices.Sort(abs)
	q := func(p float64) float64 { return abs[int(p*float64(len(abs)))] }
	if m := q(0.5); m < 0.3 || m > 0.5 {
		t.Errorf("median |offset| = %.3f s, want 0.3–0.5 s (measured: 0.4)", m)
	}
	if p := q(0.95); p < 1.7 || p > 2.6 {
		t.Errorf("p95 |offset| = %.3f s, want 1.7–2.6 s (measured: 2.1)", p)
	}
	if p := q(0.99); p < 7 || p > 13 {
		t.Errorf("p99 |offset| = %.3f s, want 7–13 s (measured: 9.6)", p)
	}
	if mx := abs[len(abs)-1]; mx > 41 || mx < 20 {
		t.Errorf("max |offset| = %.3f s, want 20–41 s (measured worst: 41)", mx)
	}
	if pos < 500 || neg < 500 {
		t.Errorf("signs: %d positive, %d negative; want at least 500 of each of 1,240", pos, neg)
	}

	rev := slices.Clone(ids)
	slices.Reverse(rev)
	again := simulate.ClockOffsets(rev, 42)
	other := simulate.ClockOffsets(ids, 43)
	differ := 0
	for id, d := range offs {
		if again[id] != d {
			t.Fatalf("%s: offset %s with ids reversed, %s in order; want identical", id, again[id], d)
		}
		if other[id] != d {
			differ++
		}
	}
	if differ < 1000 {
		t.Errorf("seeds 42 and 43: %d of 1,240 offsets differ, want at least 1,000", differ)
	}
}

// TestSkewedClocks checks recorded_at carries each turbine's offset.
func TestSkewedClocks(t *testing.T) {
	plan := demoPlan(t)
	from := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	cfg, err := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(2*time.Second), 5)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tb := range plan.Turbines {
		ids = append(ids, tb.ID)
	}
	want := simulate.ClockOffsets(ids, 5)
	n, nonzero := 0, 0
	_, err = simulate.Generate(cfg, func(r *reading.Reading) error {
		n++
		got := r.RecordedAt.Sub(from)
		if got != want[r.TurbineID] {
			t.Errorf("%s: recorded_at - t = %s, want fleet-wide offset %s", r.TurbineID, got, want[r.TurbineID])
		}
		if got != 0 {
			nonzero++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != apTurbines || nonzero < apTurbines-5 {
		t.Fatalf("%d readings (%d with a non-zero offset), want %d (nearly all non-zero)", n, nonzero, apTurbines)
	}
}

func TestDelayMixture(t *testing.T) {
	plan := demoPlan(t)
	from := time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)
	// 300 turbines × 3,334 slots ≈ 1M draws.
	cfg, err := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(3334*2*time.Second), 11)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ExactClocks = true
	var n, over60, within5 int64
	_, err = simulate.Generate(cfg, func(r *reading.Reading) error {
		n++
		d := r.ReceivedAt.Sub(r.RecordedAt)
		if d < 0 {
			t.Fatalf("%s at %s: negative delay %s", r.TurbineID, r.RecordedAt, d)
		}
		if d > time.Minute {
			over60++
		}
		if d <= 5*time.Second {
			within5++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 300*3334 {
		t.Fatalf("draws = %d, want %d", n, 300*3334)
	}
	// P(d > 60 s) = 0.055·e^(−60/90) + 0.005·e^(−60/14400) ≈ 0.0332.
	wantOver := 0.055*math.Exp(-60.0/90) + 0.005*math.Exp(-60.0/14400)
	if f := float64(over60) / float64(n); math.Abs(f-wantOver) > 0.003 {
		t.Errorf("fraction of delays > 60 s = %.4f, want %.4f ± 0.003", f, wantOver)
	}
	// P(d ≤ 5 s) = 0.94 + 0.055·(1−e^(−5/90)) + 0.005·(1−e^(−5/14400)) ≈ 0.9430.
	wantWithin := 0.94 + 0.055*(1-math.Exp(-5.0/90)) + 0.005*(1-math.Exp(-5.0/14400))
	if f := float64(within5) / float64(n); math.Abs(f-wantWithin) > 0.003 {
		t.Errorf("fraction of delays ≤ 5 s = %.4f, want %.4f ± 0.003", f, wantWithin)
	}
}

func TestDeadRadios(t *testing.T) {
	plan := demoPlan(t)
	from := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	cfg, err := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DeadRadios = []string{"AP-010", "AP-250"}
	var fromDead int64
	st, err := simulate.Generate(cfg, func(r *reading.Reading) error {
		if r.TurbineID == "AP-010" || r.TurbineID == "AP-250" {
			fromDead++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fromDead != 0 || st.PerTurbine["AP-010"] != 0 || st.PerTurbine["AP-250"] != 0 {
		t.Errorf("dead radios emitted %d readings (stats %d, %d), want 0", fromDead, st.PerTurbine["AP-010"], st.PerTurbine["AP-250"])
	}
	if want := int64(298 * 1800); st.Readings != want {
		t.Errorf("readings = %d, want %d (298 live turbines × 1,800 slots)", st.Readings, want)
	}
}

// TestMixedCadence checks slots stay aligned per turbine when cadences
// differ, and the output stays in time order.
func TestMixedCadence(t *testing.T) {
	from := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	cfg := simulate.Config{
		Turbines: []fleet.Turbine{
			{ID: "B", CadenceSeconds: 3}, {ID: "A", CadenceSeconds: 2}, {ID: "C", CadenceSeconds: 10},
		},
		From: from, To: from.Add(time.Minute), ExactClocks: true,
	}
	var got []string
	st, err := simulate.Generate(cfg, func(r *reading.Reading) error {
		if r.RecordedAt.Sub(from) < 7*time.Second {
			got = append(got, r.TurbineID+r.RecordedAt.Sub(from).String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A0s", "B0s", "C0s", "A2s", "B3s", "A4s", "A6s", "B6s"}
	if !slices.Equal(got, want) {
		t.Errorf("first 7 s = %v, want %v", got, want)
	}
	if st.PerTurbine["A"] != 30 || st.PerTurbine["B"] != 20 || st.PerTurbine["C"] != 6 {
		t.Errorf("per turbine = %v, want A 30, B 20, C 6", st.PerTurbine)
	}
}

func TestNoPerReadingAllocs(t *testing.T) {
	plan := demoPlan(t)
	from := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	allocs := func(d time.Duration) float64 {
		cfg, err := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(d), 1)
		if err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(3, func() {
			if _, err := simulate.Generate(cfg, func(*reading.Reading) error { return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
	short, long := allocs(time.Minute), allocs(time.Hour) // 9,000 vs 540,000 readings
	if long != short {
		t.Fatalf("allocations: %.0f for 1 minute, %.0f for 1 hour; want equal (none per reading)", short, long)
	}
}

func TestEmitErrorStops(t *testing.T) {
	cfg := scenario(t, "all", 1)
	stop := errors.New("stop")
	n := 0
	st, err := simulate.Generate(cfg, func(*reading.Reading) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 5 || st.Readings != 5 {
		t.Fatalf("err = %v after %d calls, stats %d; want stop after 5 and 5", err, n, st.Readings)
	}
}

func TestErrors(t *testing.T) {
	plan := demoPlan(t)
	from := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		{"unknown scenario", func() error {
			_, err := simulate.Scenario("ardnave-sunday", plan, "all", 1)
			return err
		}(), []string{`"ardnave-sunday"`, "ardnave-saturday"}},
		{"bad phase", func() error {
			_, err := simulate.Scenario("ardnave-saturday", plan, "night", 1)
			return err
		}(), []string{`"night"`, "day", "replay"}},
		{"farm missing from plan", func() error {
			_, err := simulate.Scenario("ardnave-saturday", &fleet.Plan{}, "day", 1)
			return err
		}(), []string{"ardnave-point"}},
		{"unknown farm", func() error {
			_, err := simulate.FarmConfig(plan, "nowhere-moor", from, from.Add(time.Hour), 1)
			return err
		}(), []string{`"nowhere-moor"`}},
		{"unknown stopped turbine", func() error {
			cfg, _ := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(time.Hour), 1)
			cfg.Stopped = []string{"AP-999"}
			_, err := simulate.Generate(cfg, func(*reading.Reading) error { return nil })
			return err
		}(), []string{`"AP-999"`}},
		{"bad delay kind", func() error {
			cfg, _ := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(time.Hour), 1)
			cfg.Delay = []simulate.DelayComponent{{Weight: 1, Kind: "gamma", Param: time.Second}}
			_, err := simulate.Generate(cfg, func(*reading.Reading) error { return nil })
			return err
		}(), []string{`"gamma"`}},
		{"to before from", func() error {
			cfg, _ := simulate.FarmConfig(plan, "ardnave-point", from, from.Add(-time.Hour), 1)
			_, err := simulate.Generate(cfg, func(*reading.Reading) error { return nil })
			return err
		}(), []string{"before"}},
	} {
		if tc.err == nil {
			t.Errorf("%s: no error, want one mentioning %v", tc.name, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(tc.err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tc.name, tc.err, w)
			}
		}
	}
}

// BenchmarkGenerateFarmDay is one farm-day of the Ardnave Saturday, phase
// all: 300 turbines × 43,200 slots = 12,960,000 readings per op.
func BenchmarkGenerateFarmDay(b *testing.B) {
	cfg := scenario(b, "all", 1)
	var total int64
	for b.Loop() {
		st, err := simulate.Generate(cfg, func(*reading.Reading) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		if st.Readings != apTurbines*slotsPerDay {
			b.Fatalf("readings = %d, want %d", st.Readings, apTurbines*slotsPerDay)
		}
		total += st.Readings
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "readings/s")
}
