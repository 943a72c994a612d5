package simulate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
)

// scenarios are named, reproducible incidents from the source story; named
// so tests, demos and bug reports all mean the same run.
var scenarios = map[string]func(plan *fleet.Plan, phase string, seed uint64) (Config, error){
	"ardnave-saturday": ardnaveSaturday,
}

// Scenarios lists the known scenario names, sorted, for help text and errors.
func Scenarios() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Scenario builds the Config of a named scenario against plan. phase splits
// it into the deliveries ingest sees ("day" now, "replay" days later); see
// Config.Phase.
func Scenario(name string, plan *fleet.Plan, phase string, seed uint64) (Config, error) {
	build, ok := scenarios[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(Scenarios(), ", "))
	}
	phase, err := NormalizePhase(phase)
	if err != nil {
		return Config{}, fmt.Errorf("scenario %s: %w", name, err)
	}
	cfg, err := build(plan, phase, seed)
	if err != nil {
		return Config{}, fmt.Errorf("scenario %s: %w", name, err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("scenario %s: %w", name, err)
	}
	return cfg, nil
}

// ardnaveStopped are the turbines stopped all of the Ardnave Saturday.
var ardnaveStopped = []string{"AP-007", "AP-123", "AP-205", "AP-288"}

// ardnaveSaturday is Saturday 1 August 2026 at Ardnave Point: four machines
// down for maintenance all day, the link down 05:40–13:10, and the writer
// losing 05:58–11:31 of the backlog, which is recovered from the turbines
// and replayed on Tuesday morning. Clocks are exact so the expected counts
// per local window are exact too.
func ardnaveSaturday(plan *fleet.Plan, phase string, seed uint64) (Config, error) {
	const farm = "ardnave-point"
	var loc *time.Location
	for _, f := range plan.Farms {
		if f.ID == farm {
			var err error
			if loc, err = time.LoadLocation(f.Timezone); err != nil {
				return Config{}, fmt.Errorf("farm %s: %w", farm, err)
			}
		}
	}
	if loc == nil {
		return Config{}, fmt.Errorf("farm %q is not in the fleet plan", farm)
	}
	at := func(day, h, m int) time.Time { return time.Date(2026, time.August, day, h, m, 0, 0, loc) }
	cfg, err := FarmConfig(plan, farm, at(1, 0, 0), at(2, 0, 0), seed)
	if err != nil {
		return Config{}, err
	}
	cfg.ExactClocks = true
	cfg.Offsets = nil
	cfg.Stopped = slices.Clone(ardnaveStopped)
	cfg.Outages = []Outage{{
		From: at(1, 5, 40), To: at(1, 13, 10),
		LostFrom: at(1, 5, 58), LostTo: at(1, 11, 31),
		ReplayAt: at(4, 10, 0),
	}}
	cfg.Phase = phase
	return cfg, nil
}

// FarmConfig is a plain run of one farm: its turbines, its zone, the default
// delay mixture and skewed clocks. Clock offsets are computed over the whole
// fleet and then restricted to the farm, so the same turbine has the same
// offset whichever farm or window is generated.
func FarmConfig(plan *fleet.Plan, farmID string, from, to time.Time, seed uint64) (Config, error) {
	var spec *fleet.FarmSpec
	for i := range plan.Farms {
		if plan.Farms[i].ID == farmID {
			spec = &plan.Farms[i]
			break
		}
	}
	if spec == nil {
		return Config{}, fmt.Errorf("unknown farm %q (not in the fleet plan)", farmID)
	}
	loc, err := time.LoadLocation(spec.Timezone)
	if err != nil {
		return Config{}, fmt.Errorf("farm %s: timezone: %w", farmID, err)
	}
	all := make([]string, 0, len(plan.Turbines))
	var ts []fleet.Turbine
	for _, t := range plan.Turbines {
		all = append(all, t.ID)
		if t.FarmID == farmID {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return Config{}, fmt.Errorf("farm %q has no turbines in the fleet plan", farmID)
	}
	slices.SortFunc(ts, func(a, b fleet.Turbine) int { return cmp.Compare(a.ID, b.ID) })
	fleetOffsets := ClockOffsets(all, seed)
	offsets := make(map[string]time.Duration, len(ts))
	for _, t := range ts {
		offsets[t.ID] = fleetOffsets[t.ID]
	}
	return Config{
		Turbines: ts,
		Location: loc,
		From:     from,
		To:       to,
		Seed:     seed,
		Offsets:  offsets,
		Delay:    slices.Clone(DefaultDelay),
	}, nil
}
