package window

import (
	"sort"
	"time"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// Pairs is a set of (turbine, window index) to compute.
type Pairs map[string]map[int]struct{}

// Add puts (turbine, window) in the set.
func (p Pairs) Add(turbine string, window int) {
	if p[turbine] == nil {
		p[turbine] = map[int]struct{}{}
	}
	p[turbine][window] = struct{}{}
}

// AddRange puts windows [from, to) of each turbine in the set.
func (p Pairs) AddRange(turbines []Turbine, from, to int) {
	for _, t := range turbines {
		for i := from; i < to; i++ {
			p.Add(t.ID, i)
		}
	}
}

// Len is how many (turbine, window) pairs the set holds.
func (p Pairs) Len() int {
	n := 0
	for _, ws := range p {
		n += len(ws)
	}
	return n
}

// Windows returns the distinct window indexes in the set, sorted.
func (p Pairs) Windows() []int {
	seen := map[int]struct{}{}
	for _, ws := range p {
		for w := range ws {
			seen[w] = struct{}{}
		}
	}
	out := make([]int, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Ints(out)
	return out
}

// Turbines returns the turbines in the set, sorted.
func (p Pairs) Turbines() []string {
	out := make([]string, 0, len(p))
	for t := range p {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// UpsertParams turns the set into the shard statement's runs: per turbine
// span (Turbine), maximal runs of consecutive windows starting in it, each
// read as one key range.
func (p Pairs) UpsertParams(g Grid, turbines []Turbine, rules fleet.Rules, computedAt time.Time) sharddb.TurbineWindowUpsertParams {
	args := sharddb.TurbineWindowUpsertParams{
		DayStart: g.Start, DayEnd: g.End, WindowS: int32(g.Window / time.Second),
		LaneThresholdSeconds: rules.LaneThreshold.Seconds(), EarlyToleranceSeconds: rules.EarlyTolerance.Seconds(),
		FarmID: g.FarmID, Day: g.Day, ComputedAt: computedAt,
		StateCodes: g.Contract.StateCodes, StateKeys: g.Contract.StateKeys, KeyAvailable: g.Contract.KeyAvailable,
		KeyUnavailable: g.Contract.KeyUnavailable, KeyEnvironment: g.Contract.KeyEnvironment,
		CutInMs: g.Contract.CutInMS, CutOutMs: g.Contract.CutOutMS, Curve: g.Curve, KeyMissing: g.Contract.KeyMissing,
		EventTurbines: g.Events.Turbines, EventFrom: g.Events.From, EventTo: g.Events.To, EventKeys: g.Events.Keys,
		Categories: !g.CountsOnly(),
	}
	if args.StateCodes == nil {
		args.StateCodes, args.StateKeys = []string{}, []int32{}
	}
	if args.EventKeys == nil {
		args.EventTurbines, args.EventFrom, args.EventTo, args.EventKeys = []string{}, []time.Time{}, []time.Time{}, []int32{}
	}
	for _, t := range turbines {
		set := p[t.ID]
		if len(set) == 0 {
			continue
		}
		ws := make([]int, 0, len(set))
		for w := range set {
			if start, _ := g.Bounds(w); t.Holds(start) {
				ws = append(ws, w)
			}
		}
		sort.Ints(ws)
		for i := 0; i < len(ws); {
			j := i
			for j+1 < len(ws) && ws[j+1] == ws[j]+1 {
				j++
			}
			args.TurbineIds = append(args.TurbineIds, t.ID)
			args.CadenceSeconds = append(args.CadenceSeconds, t.Cadence)
			args.ServiceFrom = append(args.ServiceFrom, t.ServiceFrom)
			args.ServiceTo = append(args.ServiceTo, t.ServiceTo)
			args.FirstWindow = append(args.FirstWindow, int32(ws[i]))
			args.LastWindow = append(args.LastWindow, int32(ws[j]))
			i = j + 1
		}
	}
	return args
}

// Within returns the pairs whose window lies in [from, to].
func (p Pairs) Within(from, to int) Pairs {
	out := Pairs{}
	for t, ws := range p {
		for w := range ws {
			if w >= from && w <= to {
				out.Add(t, w)
			}
		}
	}
	return out
}
