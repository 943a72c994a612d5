package soak

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/localday"
)

// Cadence is every soak turbine's reporting interval.
const Cadence = 2 * time.Second

// Window is the fast path's window (the default rule, which the soak keeps).
const Window = time.Minute

// FleetConfig sizes the soak's fleet.
type FleetConfig struct {
	// LiveFarms farms of TurbinesPerFarm turbines, one shard each, dealt
	// round-robin over Shards shards (s1, s2, ...).
	LiveFarms, TurbinesPerFarm, Shards int
	// ReplayTurbines is the replayed farm's size, split evenly over its
	// first ReplayShards shards (as Ardnave Point is over three).
	ReplayTurbines, ReplayShards int
	// Backlog is how long the replayed farm's link was down before T0.
	Backlog time.Duration
}

// DefaultFleetConfig is the design peak (a peak hour three times the
// average of 900 million readings a day, 10,417/s): 40 farms of 1,555
// turbines and a replayed farm of 300, 62,500 turbines at 2 s = 31,250
// readings/s, over four shards, with a 7.5-hour backlog.
func DefaultFleetConfig() FleetConfig {
	return FleetConfig{LiveFarms: 40, TurbinesPerFarm: 1555, Shards: 4, ReplayTurbines: 300, ReplayShards: 3, Backlog: 7*time.Hour + 30*time.Minute}
}

// Farm is one farm of the soak fleet.
type Farm struct {
	ID   string
	Zone string
	Loc  *time.Location
	// Prefix and Digits name turbine i (1-based): Prefix + i zero-padded.
	Prefix string
	Digits int
	// Shards[i-1] is turbine i's shard.
	Shards []string
	// Commissioned is when every turbine of the farm entered service.
	Commissioned time.Time
}

// Turbines is the farm's size.
func (f *Farm) Turbines() int { return len(f.Shards) }

// TurbineID names turbine i (1-based).
func (f *Farm) TurbineID(i int) string { return fmt.Sprintf("%s%0*d", f.Prefix, f.Digits, i) }

// Fleet is the soak's fleet, placed at T0.
type Fleet struct {
	Config FleetConfig
	// T0 is the end of the replayed farm's backlog (and its link's return)
	// and the commissioning of the live farms; a whole minute.
	T0     time.Time
	Shards []string
	// Farms holds the live farms, then the replayed farm (also live from T0).
	Farms []Farm
	// Alone is a farm like the replayed one, in the fleet file but sent
	// nothing live: its backlog is replayed with no live feed beside it, the
	// replay's figures alone.
	Alone *Farm
}

// Replay is the replayed farm.
func (fl *Fleet) Replay() *Farm { return &fl.Farms[len(fl.Farms)-1] }

// Turbines counts every turbine of the fleet.
func (fl *Fleet) Turbines() int {
	n := 0
	for i := range fl.Farms {
		n += fl.Farms[i].Turbines()
	}
	return n
}

// NewFleet builds the fleet for a soak whose backlog ends at t0 (a whole
// minute). Zones are fixed offsets (Etc/GMT±N) chosen from t0 so that
// what a soak of at most an hour after t0 meets is the same whatever the
// hour it runs at: every live farm's local time is between 07:00 and
// 17:00 (no local midnight, no nightly rollup at 02:00, no day closing
// under the live feed), and the replayed farm's is between 03:00 and 04:00,
// so its backlog spans a local midnight: the day before is closed and its
// turbine_day rows can be checked.
func NewFleet(cfg FleetConfig, t0 time.Time) (*Fleet, error) {
	if !t0.Equal(t0.Truncate(time.Minute)) {
		return nil, fmt.Errorf("soak fleet: t0 %s is not a whole minute", t0.Format(time.RFC3339Nano))
	}
	if cfg.LiveFarms < 1 || cfg.TurbinesPerFarm < 1 || cfg.Shards < 1 || cfg.ReplayTurbines < 1 || cfg.ReplayShards < 1 || cfg.ReplayShards > cfg.Shards {
		return nil, fmt.Errorf("soak fleet: bad size %+v", cfg)
	}
	fl := &Fleet{Config: cfg, T0: t0.UTC()}
	for s := 1; s <= cfg.Shards; s++ {
		fl.Shards = append(fl.Shards, fmt.Sprintf("s%d", s))
	}
	for k := 1; k <= cfg.LiveFarms; k++ {
		zone, loc, err := zoneAt(t0, 7+(k-1)%10)
		if err != nil {
			return nil, err
		}
		f := Farm{ID: fmt.Sprintf("live-%02d", k), Zone: zone, Loc: loc, Prefix: fmt.Sprintf("L%02d-", k), Digits: 4, Commissioned: fl.T0}
		shard := fl.Shards[(k-1)%cfg.Shards]
		for range cfg.TurbinesPerFarm {
			f.Shards = append(f.Shards, shard)
		}
		fl.Farms = append(fl.Farms, f)
	}
	zone, loc, err := zoneAt(t0, 3)
	if err != nil {
		return nil, err
	}
	rp := Farm{ID: "replayed", Zone: zone, Loc: loc, Prefix: "RP-", Digits: 3, Commissioned: fl.T0.Add(-cfg.Backlog)}
	for i := range cfg.ReplayTurbines {
		rp.Shards = append(rp.Shards, fl.Shards[i*cfg.ReplayShards/cfg.ReplayTurbines])
	}
	fl.Farms = append(fl.Farms, rp)
	alone := rp
	alone.ID, alone.Prefix = "replayed-alone", "RA-"
	fl.Alone = &alone
	return fl, nil
}

// FarmIDs lists the farms the live feed sends to (Farms'), not Alone.
func (fl *Fleet) FarmIDs() []string {
	ids := make([]string, len(fl.Farms))
	for i := range fl.Farms {
		ids[i] = fl.Farms[i].ID
	}
	return ids
}

// zoneAt is the fixed-offset zone in which t's local hour is hour.
func zoneAt(t time.Time, hour int) (string, *time.Location, error) {
	off := ((hour-t.UTC().Hour())%24 + 24) % 24
	if off > 14 {
		off -= 24
	}
	name := "Etc/GMT"
	switch {
	case off > 0:
		name = fmt.Sprintf("Etc/GMT-%d", off) // Etc/GMT-3 is UTC+3 (POSIX signs)
	case off < 0:
		name = fmt.Sprintf("Etc/GMT+%d", -off)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return "", nil, fmt.Errorf("soak fleet: zone %s: %w", name, err)
	}
	return name, loc, nil
}

// YAML is the fleet file.
func (fl *Fleet) YAML() string {
	var b strings.Builder
	b.WriteString("# The soak's fleet (internal/soak), generated for T0 = " + fl.T0.Format(time.RFC3339) + ".\nshards:\n")
	for _, s := range fl.Shards {
		fmt.Fprintf(&b, "  - name: %s\n", s)
	}
	b.WriteString("farms:\n")
	farms := make([]*Farm, 0, len(fl.Farms)+1)
	for i := range fl.Farms {
		farms = append(farms, &fl.Farms[i])
	}
	if fl.Alone != nil {
		farms = append(farms, fl.Alone)
	}
	for _, f := range farms {
		fmt.Fprintf(&b, "  - id: %s\n    name: Soak %s\n    timezone: %s\n    cadence_seconds: %d\n    turbines:\n", f.ID, f.ID, f.Zone, int(Cadence/time.Second))
		for from := 1; from <= f.Turbines(); {
			to := from
			for to < f.Turbines() && f.Shards[to] == f.Shards[from-1] {
				to++
			}
			fmt.Fprintf(&b, "      - {prefix: %s, from: %d, to: %d, digits: %d, shard: %s, commissioned_at: %s}\n",
				f.Prefix, from, to, f.Digits, f.Shards[from-1], f.Commissioned.Format(time.RFC3339))
			from = to + 1
		}
	}
	return b.String()
}

// WindowStart is the start of the farm's window holding t: windows of
// Window from farm-local midnight (the default window rule), as the
// control database cuts them.
func (f *Farm) WindowStart(t time.Time) time.Time {
	start, _ := localday.Bounds(localday.Of(t, f.Loc), f.Loc)
	return start.Add(t.Sub(start).Truncate(Window))
}

// Moving is the fleet with turbines 1..n of live farm i on shard to: the
// fleet file an operator applies to move them (fl is unchanged).
func (fl *Fleet) Moving(i, n int, to string) *Fleet {
	moved := *fl
	moved.Farms = slices.Clone(fl.Farms)
	f := &moved.Farms[i]
	f.Shards = slices.Clone(f.Shards)
	for k := 0; k < min(n, len(f.Shards)); k++ {
		f.Shards[k] = to
	}
	return &moved
}
