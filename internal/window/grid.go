// Package window is the window engine: a farm-local day's window grid,
// the turbines a window counts and their service intervals, and computing
// turbine_window rows on a shard (TurbineWindowUpsert, whose slot rule is
// the shard's slot_start and slot_after) with the shard's sums of them.
// The fast path (publish) and the farm-day recompute (rollup) both
// compute windows through it; ingest's mark rule walks the same grid.
package window

import (
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
)

// Grid is the window grid of one farm-local day: windows of Window from
// the day's start, the last one cut at the day's end. The bounds come from
// the control database (FarmDayGet); this only counts.
type Grid struct {
	FarmID     string
	Day        time.Time // the date (midnight UTC, as pgx gives a DATE)
	Start, End time.Time
	Window     time.Duration
	// Contract sorts the day's slots into categories (computing windows
	// needs one; GridOfDay reads it with the day).
	Contract Contract
	// Curve is the farm's power curve as control's turbine_model.curve_lut
	// holds it (nil: no model, so no potential energy).
	Curve []float64
	// Events are the operator events in force over the day.
	Events Events
}

// Events are a day's operator events as the window statement takes them
// (FarmDayGet): one element per event and turbine ("" = every turbine of
// the farm), each with its category's key under the day's contract.
type Events struct {
	Turbines []string
	From, To []time.Time
	Keys     []int32
}

// Contract is the availability contract governing a day as the window
// statement takes it: control's contract_keys, read by FarmDayGet. A key is
// priority rank * 16 + category id; the rule itself lives there.
type Contract struct {
	ID                                           int64
	StateCodes                                   []string
	StateKeys                                    []int32
	KeyAvailable, KeyUnavailable, KeyEnvironment int32
	// KeyMissing is information unavailable's: a slot without a reading.
	KeyMissing        int32
	CutInMS, CutOutMS *float64
}

// CountsOnly says whether the day's categories follow from its counts
// alone, so TurbineWindowUpsert computes its windows without categories: the
// contract maps no state code and has no wind range, ranks forced outage
// above full performance (a slot with one reading that says unavailable is
// a forced outage, as it is not available), and the farm has no power
// curve (no energy measured) and no operator event covers the day. The
// default contract is one.
func (g Grid) CountsOnly() bool {
	c := g.Contract
	return len(c.StateCodes) == 0 && c.CutInMS == nil && c.CutOutMS == nil && c.KeyUnavailable < c.KeyAvailable && g.Curve == nil &&
		len(g.Events.Keys) == 0
}

// GridOfDay is the grid of the farm-day FarmDayGet read (day is its date),
// with the day's contract and operator events.
func GridOfDay(d controldb.FarmDayGetRow, day time.Time) Grid {
	c := Contract{ID: d.ContractID, StateCodes: d.StateCodes, StateKeys: d.StateKeys,
		KeyAvailable: d.KeyAvailable, KeyUnavailable: d.KeyUnavailable, KeyEnvironment: d.KeyEnvironment, KeyMissing: d.KeyMissing}
	if d.CutInMs != nil {
		v := float64(*d.CutInMs)
		c.CutInMS = &v
	}
	if d.CutOutMs != nil {
		v := float64(*d.CutOutMs)
		c.CutOutMS = &v
	}
	return Grid{FarmID: d.ID, Day: day, Start: d.DayStart, End: d.DayEnd, Window: time.Duration(d.WindowS) * time.Second, Contract: c, Curve: d.Curve,
		Events: Events{Turbines: d.EventTurbines, From: d.EventFrom, To: d.EventTo, Keys: d.EventKeys}}
}

// GridOf is the grid of the farm-local day holding t in loc, the day
// bounded as Postgres bounds it (localday) and cut into windows of w: how
// ingest's mark rule finds the windows a reading can count towards. The
// recompute takes its bounds from FarmDayGet; TestGridIsTheSQLGrid keeps
// the two the same.
func GridOf(t time.Time, loc *time.Location, w time.Duration) Grid {
	d := localday.Of(t, loc)
	start, end := localday.Bounds(d, loc)
	return Grid{Day: d.UTC(), Start: start, End: end, Window: w}
}

// Contains says whether t lies in the day.
func (g Grid) Contains(t time.Time) bool { return !t.Before(g.Start) && t.Before(g.End) }

// Holding is the index of the window holding t (t within the day).
func (g Grid) Holding(t time.Time) int { return int(t.Sub(g.Start) / g.Window) }

// Len is the number of windows in the day.
func (g Grid) Len() int {
	return int((g.End.Sub(g.Start) + g.Window - 1) / g.Window)
}

// Bounds returns window i's start and end.
func (g Grid) Bounds(i int) (time.Time, time.Time) {
	s := g.Start.Add(time.Duration(i) * g.Window)
	e := s.Add(g.Window)
	if e.After(g.End) {
		e = g.End
	}
	return s, e
}

// Closed is how many windows of the day have passed the watermark at now
// (end + lateness <= now): only those get final rows.
func (g Grid) Closed(now time.Time, lateness time.Duration) int {
	n := 0
	for i := 0; i < g.Len(); i++ {
		if _, e := g.Bounds(i); e.Add(lateness).After(now) {
			break
		}
		n++
	}
	return n
}

// Before is how many windows of the day start before t.
func (g Grid) Before(t time.Time) int {
	if !t.After(g.Start) {
		return 0
	}
	return min(g.Len(), int((t.Sub(g.Start)+g.Window-1)/g.Window))
}

// Starts returns the starts of windows [from, to).
func (g Grid) Starts(from, to int) []time.Time {
	out := make([]time.Time, 0, to-from)
	for i := from; i < to; i++ {
		s, _ := g.Bounds(i)
		out = append(out, s)
	}
	return out
}
