// Package simulate produces the telemetry a farm's turbines would have sent
// between two instants, so ingest, lateness handling and availability numbers
// can be exercised end to end without real turbines.
//
// Every random quantity (arrival delay, drain and replay delays) is a pure
// function of (seed, turbine id, slot time) rather than the next draw of a
// shared generator. That is what makes the output independent of phase,
// window and fleet composition: a reading has the same received_at whether it
// is generated in phase "all" or "day", for a whole day or for one hour, with
// or without a dead radio next to it. It also keeps the hot loop free of
// allocation and state, so a farm-day (13M readings) streams in well under a
// second of generator time.
package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/reading"
)

// DelayComponent is one part of the arrival-delay mixture. Real links are
// mostly prompt with a retry tail and a rare multi-hour backlog; a mixture of
// a few simple shapes reproduces that without fitting a distribution.
type DelayComponent struct {
	// Weight is relative; the weights of a mixture need not sum to 1.
	Weight float64
	// Kind is "uniform" (0..Param) or "exp" (exponential with mean Param).
	Kind  string
	Param time.Duration
}

// Outage is a period when the farm's link is down. Turbines buffer in flash
// while it is down, so nothing is lost by the outage itself; the optional
// lost range models the writer dropping part of that backlog, which the
// operator later recovers from the turbines and replays.
type Outage struct {
	// From, To bound the link-down period [From, To). Readings taken in it,
	// and readings whose normal arrival would fall in it, arrive at To plus
	// a drain delay (uniform 0..120 s).
	From, To time.Time
	// LostFrom, LostTo bound the readings [LostFrom, LostTo) the writer
	// dropped; zero means none were lost. They are absent from phase "day"
	// and are the only readings of phase "replay", arriving at ReplayAt
	// plus uniform 0..10 min.
	LostFrom, LostTo time.Time
	ReplayAt         time.Time
}

// Config describes one simulation run of one farm.
type Config struct {
	// Turbines is the farm's turbines. Output is in id order whatever the
	// order here (Generate sorts a copy), so callers need not pre-sort.
	Turbines []fleet.Turbine
	// Location is the farm's zone; scenarios use it to place local times.
	// Generate itself works in absolute time and ignores it.
	Location *time.Location
	// From, To bound the true slot times: t = From + k*cadence, From <= t < To.
	From, To time.Time
	Seed     uint64
	// ExactClocks makes recorded_at the true slot time. When false, each
	// turbine's clock is off by a fixed amount (Offsets, or ClockOffsets of
	// the run's turbines when Offsets is nil), as real turbine clocks are.
	ExactClocks bool
	// Offsets overrides the per-turbine clock offsets. FarmConfig fills it
	// from the whole fleet so a farm's offsets are a slice of the fleet-wide
	// distribution rather than the distribution squeezed into one farm.
	Offsets map[string]time.Duration
	// Delay is the arrival-delay mixture; nil means DefaultDelay.
	Delay []DelayComponent
	// Stopped turbines report available=false (and no power) for the whole
	// run: they are stopped, not silent.
	Stopped []string
	// DeadRadios send nothing at all.
	DeadRadios []string
	Outages    []Outage
	// Phase is "" or "all" (everything), "day" (all but lost ranges) or
	// "replay" (only lost ranges), so a day and its later replay can be fed
	// to ingest as two separate deliveries.
	Phase string
}

// DefaultDelay is the arrival-delay mixture the pipeline is designed for
// (the watermark and the correction horizon were sized on it): 94% within
// 5 s, a 5.5% retry tail with a 90 s mean, and 0.5% multi-hour backlog.
var DefaultDelay = []DelayComponent{
	{Weight: 0.94, Kind: "uniform", Param: 5 * time.Second},
	{Weight: 0.055, Kind: "exp", Param: 90 * time.Second},
	{Weight: 0.005, Kind: "exp", Param: 4 * time.Hour},
}

// Phases accepted by Config.Phase and Scenario.
const (
	PhaseAll    = "all"
	PhaseDay    = "day"
	PhaseReplay = "replay"
)

// Stats counts what a run emitted, so callers can check a load against it
// without re-reading the output.
type Stats struct {
	// Readings is every reading emitted.
	Readings int64
	// Stopped is the emitted readings with available=false.
	Stopped int64
	// Held is the emitted readings delivered at an outage's end (taken
	// while the link was down, or due to arrive while it was).
	Held int64
	// Replayed is the emitted readings from lost ranges.
	Replayed int64
	// PerTurbine is readings per turbine id, including zeros for dead
	// radios and turbines out of commission.
	PerTurbine map[string]int64
}

const (
	drainMax  = 120 * time.Second
	replayMax = 10 * time.Minute
)

// turbineState is everything the hot loop needs about one turbine,
// precomputed so the loop does arithmetic only.
type turbineState struct {
	id                   string
	key                  uint64
	cad                  int64 // ns
	off                  int64 // ns
	stopped              bool
	activeFrom, activeTo int64 // unix ns, [from, to)
	scale, gust          float64
	cosP, sinP           float64
	count                int64
}

type outageNs struct {
	from, to         int64
	lostFrom, lostTo int64
	replayAt         int64
}

type mixComponent struct {
	cum  float64 // cumulative weight fraction (upper bound of u)
	exp  bool
	unit float64 // µs: uniform upper bound or exponential mean
}

// NormalizePhase maps "" to "all" and rejects unknown phases, so every entry
// point spells the error the same way.
func NormalizePhase(phase string) (string, error) {
	switch phase {
	case "", PhaseAll:
		return PhaseAll, nil
	case PhaseDay, PhaseReplay:
		return phase, nil
	}
	return "", fmt.Errorf("unknown phase %q (want all, day or replay)", phase)
}

// Validate reports the first thing wrong with c, so scenarios and CLIs can
// fail before any output is written.
func (c *Config) Validate() error {
	_, err := c.prepare()
	return err
}

type prepared struct {
	ts                   []turbineState
	outs                 []outageNs
	mix                  []mixComponent
	from, to, step       int64
	uniform              bool
	wantNormal, wantLost bool
	dailyPhase           float64
	perTurbineIDs        []string
}

func (c *Config) prepare() (*prepared, error) {
	phase, err := NormalizePhase(c.Phase)
	if err != nil {
		return nil, err
	}
	if c.From.IsZero() || c.To.IsZero() {
		return nil, errors.New("from and to must both be set")
	}
	if c.To.Before(c.From) {
		return nil, fmt.Errorf("to %s is before from %s", c.To.Format(time.RFC3339), c.From.Format(time.RFC3339))
	}
	p := &prepared{
		from:       c.From.UnixNano(),
		to:         c.To.UnixNano(),
		wantNormal: phase != PhaseReplay,
		wantLost:   phase != PhaseDay,
		dailyPhase: 2 * math.Pi * unitFloat(mix64(c.Seed^0x6461696c79)),
	}

	delay := c.Delay
	if delay == nil {
		delay = DefaultDelay
	}
	if p.mix, err = buildMixture(delay); err != nil {
		return nil, err
	}

	ts := slices.Clone(c.Turbines)
	slices.SortFunc(ts, func(a, b fleet.Turbine) int { return cmp.Compare(a.ID, b.ID) })
	known := make(map[string]bool, len(ts))
	for _, t := range ts {
		if t.ID == "" {
			return nil, errors.New("turbine with empty id")
		}
		if known[t.ID] {
			return nil, fmt.Errorf("turbine %q listed twice", t.ID)
		}
		if t.CadenceSeconds <= 0 {
			return nil, fmt.Errorf("turbine %q: cadence_seconds %d must be positive", t.ID, t.CadenceSeconds)
		}
		known[t.ID] = true
	}
	stopped, err := idSet("stopped", c.Stopped, known)
	if err != nil {
		return nil, err
	}
	dead, err := idSet("dead radio", c.DeadRadios, known)
	if err != nil {
		return nil, err
	}

	offsets := c.Offsets
	if !c.ExactClocks && offsets == nil {
		ids := make([]string, len(ts))
		for i, t := range ts {
			ids[i] = t.ID
		}
		offsets = ClockOffsets(ids, c.Seed)
	}

	seedKey := mix64(c.Seed ^ 0x74757262696e65)
	step := 0
	for _, t := range ts {
		p.perTurbineIDs = append(p.perTurbineIDs, t.ID)
		if dead[t.ID] {
			continue
		}
		st := turbineState{
			id:         t.ID,
			key:        mix64(idHash(t.ID) ^ seedKey),
			cad:        int64(t.CadenceSeconds) * int64(time.Second),
			stopped:    stopped[t.ID],
			activeFrom: math.MinInt64,
			activeTo:   math.MaxInt64,
		}
		if !c.ExactClocks {
			off, ok := offsets[t.ID]
			if !ok {
				return nil, fmt.Errorf("no clock offset for turbine %q", t.ID)
			}
			st.off = int64(off)
		}
		if t.CommissionedAt != nil {
			st.activeFrom = t.CommissionedAt.UnixNano()
		}
		if t.DecommissionedAt != nil {
			st.activeTo = t.DecommissionedAt.UnixNano()
		}
		// Per-turbine wind: a share of the farm's wind plus its own gusts,
		// phase-shifted so neighbours are correlated but not identical.
		h := mix64(st.key ^ 0x77696e64)
		st.scale = 0.85 + 0.3*unitFloat(h)
		h = mix64(h)
		st.gust = 0.5 + unitFloat(h)
		h = mix64(h)
		st.sinP, st.cosP = math.Sincos(2 * math.Pi * unitFloat(h))
		p.ts = append(p.ts, st)
		step = gcd(step, t.CadenceSeconds)
	}
	if step == 0 {
		step = 1
	}
	p.step = int64(step) * int64(time.Second)
	p.uniform = true
	for _, st := range p.ts {
		if st.cad != p.step {
			p.uniform = false
		}
	}

	for i, o := range c.Outages {
		if o.From.IsZero() || o.To.IsZero() || !o.To.After(o.From) {
			return nil, fmt.Errorf("outage %d: link-down period %s..%s is empty", i, o.From.Format(time.RFC3339), o.To.Format(time.RFC3339))
		}
		on := outageNs{from: o.From.UnixNano(), to: o.To.UnixNano()}
		if !o.LostFrom.IsZero() || !o.LostTo.IsZero() {
			if o.LostFrom.IsZero() || o.LostTo.IsZero() || !o.LostTo.After(o.LostFrom) {
				return nil, fmt.Errorf("outage %d: lost range %s..%s is empty", i, o.LostFrom.Format(time.RFC3339), o.LostTo.Format(time.RFC3339))
			}
			if o.LostFrom.Before(o.From) || o.LostTo.After(o.To) {
				return nil, fmt.Errorf("outage %d: lost range %s..%s is outside the link-down period %s..%s", i,
					o.LostFrom.Format(time.RFC3339), o.LostTo.Format(time.RFC3339), o.From.Format(time.RFC3339), o.To.Format(time.RFC3339))
			}
			if o.ReplayAt.Before(o.To) {
				return nil, fmt.Errorf("outage %d: replay_at %s is before the link returns at %s", i, o.ReplayAt.Format(time.RFC3339), o.To.Format(time.RFC3339))
			}
			on.lostFrom, on.lostTo, on.replayAt = o.LostFrom.UnixNano(), o.LostTo.UnixNano(), o.ReplayAt.UnixNano()
		}
		p.outs = append(p.outs, on)
	}
	return p, nil
}

func buildMixture(delay []DelayComponent) ([]mixComponent, error) {
	if len(delay) == 0 {
		return nil, errors.New("delay mixture is empty")
	}
	var total float64
	for i, d := range delay {
		if !(d.Weight >= 0) || math.IsInf(d.Weight, 0) {
			return nil, fmt.Errorf("delay[%d]: weight %v must be a finite non-negative number", i, d.Weight)
		}
		switch d.Kind {
		case "uniform":
			if d.Param < 0 {
				return nil, fmt.Errorf("delay[%d]: uniform upper bound %s is negative", i, d.Param)
			}
		case "exp":
			if d.Param <= 0 {
				return nil, fmt.Errorf("delay[%d]: exp mean %s must be positive", i, d.Param)
			}
		default:
			return nil, fmt.Errorf("delay[%d]: unknown kind %q (want uniform or exp)", i, d.Kind)
		}
		total += d.Weight
	}
	if total <= 0 {
		return nil, errors.New("delay mixture weights sum to zero")
	}
	out := make([]mixComponent, len(delay))
	var cum float64
	for i, d := range delay {
		cum += d.Weight
		out[i] = mixComponent{cum: cum / total, exp: d.Kind == "exp", unit: float64(d.Param / time.Microsecond)}
	}
	out[len(out)-1].cum = 2 // catch rounding: the last component takes the rest
	return out, nil
}

func idSet(what string, ids []string, known map[string]bool) (map[string]bool, error) {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !known[id] {
			return nil, fmt.Errorf("%s turbine %q is not among the run's turbines", what, id)
		}
		set[id] = true
	}
	return set, nil
}

// Generate streams the run's readings to emit, slot by slot (every turbine's
// reading for one slot time before the next), turbines in id order. The
// Reading passed to emit is reused between calls, so emit must copy what it
// keeps; that reuse is what keeps a farm-day free of per-reading allocation.
// An error from emit stops the run and is returned with the counts so far.
func Generate(cfg Config, emit func(*reading.Reading) error) (Stats, error) {
	var st Stats
	p, err := cfg.prepare()
	if err != nil {
		return st, err
	}
	err = p.run(&st, emit)
	st.PerTurbine = make(map[string]int64, len(p.perTurbineIDs))
	for _, id := range p.perTurbineIDs {
		st.PerTurbine[id] = 0
	}
	for i := range p.ts {
		st.PerTurbine[p.ts[i].id] = p.ts[i].count
	}
	return st, err
}

func (p *prepared) run(st *Stats, emit func(*reading.Reading) error) error {
	var r reading.Reading
	outs := p.outs
	for t := p.from; t < p.to; t += p.step {
		lost, cover := -1, -1
		for j := range outs {
			o := &outs[j]
			if t >= o.from && t < o.to {
				cover = j
				if t >= o.lostFrom && t < o.lostTo {
					lost = j
				}
				break
			}
		}
		if lost >= 0 && !p.wantLost || lost < 0 && !p.wantNormal {
			continue
		}
		trueTime := time.Unix(0, t).UTC()
		secs := float64(t) / 1e9
		base := 9 + 3*math.Sin(2*math.Pi*math.Mod(secs, 86400)/86400+p.dailyPhase)
		gs, gc := math.Sincos(2 * math.Pi * math.Mod(secs, 900) / 900)
		rel := t - p.from
		for i := range p.ts {
			tb := &p.ts[i]
			if !p.uniform && rel%tb.cad != 0 || t < tb.activeFrom || t >= tb.activeTo {
				continue
			}
			x := tb.key + uint64(t)*0x9e3779b97f4a7c15
			var arr int64
			held := false
			switch {
			case lost >= 0:
				arr = outs[lost].replayAt + uniformUs(mix64(x^0x7265706c6179), replayMax)
			case cover >= 0:
				arr = outs[cover].to + uniformUs(mix64(x^0x647261696e), drainMax)
				held = true
			default:
				arr = t + p.delay(x)
			}
			// Nothing arrives while a link is down: an arrival due then
			// waits for the link like the readings taken during it.
			for range outs {
				moved := false
				for j := range outs {
					if arr >= outs[j].from && arr < outs[j].to {
						arr = outs[j].to + uniformUs(mix64(x^0x647261696e), drainMax)
						moved = true
					}
				}
				if !moved {
					break
				}
				held = lost < 0
			}

			r.TurbineID = tb.id
			if tb.off == 0 {
				r.RecordedAt = trueTime
			} else {
				r.RecordedAt = time.Unix(0, t+tb.off).UTC()
			}
			r.ReceivedAt = time.Unix(0, arr).UTC()
			w := base*tb.scale + tb.gust*(gs*tb.cosP+gc*tb.sinP)
			if w < 0 {
				w = 0
			}
			r.WindMS = float32(math.Round(w*100) / 100)
			if tb.stopped {
				r.Available = false
				r.PowerKW = 0
				st.Stopped++
			} else {
				r.Available = true
				r.PowerKW = float32(math.Round(powerCurve(w)*10) / 10)
			}
			if lost >= 0 {
				st.Replayed++
			} else if held {
				st.Held++
			}
			st.Readings++
			tb.count++
			if err := emit(&r); err != nil {
				return err
			}
		}
	}
	return nil
}

// delay draws one arrival delay from the mixture, keyed on x.
func (p *prepared) delay(x uint64) int64 {
	u := unitFloat(mix64(x))
	v := unitFloat(mix64(x ^ 0x64656c6179))
	for i := range p.mix {
		c := &p.mix[i]
		if u < c.cum {
			var us float64
			if c.exp {
				us = -c.unit * math.Log(1-v)
			} else {
				us = c.unit * v
			}
			return int64(us) * int64(time.Microsecond)
		}
	}
	return 0 // unreachable: the last component's cum is 2
}

// powerCurve is a generic 3.6 MW machine: cubic from cut-in (3 m/s) to rated
// (12 m/s), flat to cut-out (25 m/s).
func powerCurve(w float64) float64 {
	const rated, cutIn, ratedAt, cutOut = 3600.0, 3.0, 12.0, 25.0
	switch {
	case w < cutIn || w >= cutOut:
		return 0
	case w >= ratedAt:
		return rated
	}
	return rated * (w*w*w - cutIn*cutIn*cutIn) / (ratedAt*ratedAt*ratedAt - cutIn*cutIn*cutIn)
}

// uniformUs is a uniform delay in [0, max), whole microseconds so times
// survive a round trip through Postgres timestamptz unchanged.
func uniformUs(h uint64, upper time.Duration) int64 {
	return int64(unitFloat(h)*float64(upper/time.Microsecond)) * int64(time.Microsecond)
}

// mix64 is the SplitMix64 finalizer: a cheap bijective scrambler good enough
// to turn (seed, turbine, time) keys into independent-looking uniforms.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// unitFloat maps h to [0, 1) using its top 53 bits.
func unitFloat(h uint64) float64 { return float64(h>>11) * 0x1p-53 }

func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
