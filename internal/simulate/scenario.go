package simulate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/localday"
)

// scenarios are named, reproducible incidents the pipeline must count
// right; named so tests, demos and bug reports all mean the same run.
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

// ArdnaveFarm is the farm of the ardnave-saturday scenario.
const ArdnaveFarm = "ardnave-point"

// ardnaveStopped are the turbines stopped all of the Ardnave Saturday.
var ardnaveStopped = []string{"AP-007", "AP-123", "AP-205", "AP-288"}

// ArdnaveStopped lists the turbines stopped all of the Ardnave Saturday.
func ArdnaveStopped() []string { return slices.Clone(ardnaveStopped) }

// ardnaveSaturday is Saturday 1 August 2026 at Ardnave Point: four machines
// down for maintenance all day, the link down 05:40–13:10, and the writer
// losing 05:58–11:31 of the backlog, which is recovered from the turbines
// and replayed on Tuesday morning. Clocks are exact so the expected counts
// per local window are exact too.
func ardnaveSaturday(plan *fleet.Plan, phase string, seed uint64) (Config, error) {
	return ArdnaveSaturdayOn(plan, localday.Date{Year: 2026, Month: time.August, Day: 1}, time.Time{}, phase, seed)
}

// ArdnaveSaturdayOn is the Ardnave Saturday played on another farm-local
// day: the same stopped turbines, link-down period and lost range at the
// same local times of day, so the same counts (a day of 24 hours gives
// 33,210 of 43,200 slots per turbine before the replay). The lost readings
// are replayed at replayAt (plus up to 10 minutes, as any replay); zero
// means the story's Tuesday, 10:00 local three days after day. A demo
// places the story next to today's data this way; the scenario itself is
// day 2026-08-01.
func ArdnaveSaturdayOn(plan *fleet.Plan, day localday.Date, replayAt time.Time, phase string, seed uint64) (Config, error) {
	const farm = ArdnaveFarm
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
	at := func(days, h, m int) time.Time {
		d := day.AddDays(days)
		return time.Date(d.Year, d.Month, d.Day, h, m, 0, 0, loc)
	}
	start, end := localday.Bounds(day, loc)
	cfg, err := FarmConfig(plan, farm, start.In(loc), end.In(loc), seed)
	if err != nil {
		return Config{}, err
	}
	if replayAt.IsZero() {
		replayAt = at(3, 10, 0)
	}
	cfg.ExactClocks = true
	cfg.Offsets = nil
	cfg.Stopped = slices.Clone(ardnaveStopped)
	cfg.Outages = []Outage{{
		From: at(0, 5, 40), To: at(0, 13, 10),
		LostFrom: at(0, 5, 58), LostTo: at(0, 11, 31),
		ReplayAt: replayAt,
	}}
	if cfg.Phase, err = NormalizePhase(phase); err != nil {
		return Config{}, err
	}
	return cfg, cfg.Validate()
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
