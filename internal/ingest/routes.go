package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/window"
)

// Route is what ingest knows about one turbine: where its readings go and
// what makes one of its readings valid.
type Route struct {
	TurbineID        string
	FarmID           string
	Shard            string
	Location         *time.Location
	CommissionedAt   *time.Time
	DecommissionedAt *time.Time
	// Cadence is the turbine's registered reporting interval.
	Cadence time.Duration
	// Rules are the farm's rules in force (control database, farm_rules).
	Rules fleet.Rules
	// Calendar is the farm's calendar versions: the mark rule cuts a
	// reading's day and windows by the version governing that day.
	Calendar window.Calendar
	// KeepFrom, when set, is the start of the oldest farm-local day
	// retention keeps for the turbine's farm: older readings are refused
	// (their partition may be gone, or about to go).
	KeepFrom *time.Time
}

// Routes is a snapshot of the registry, turbine id → route.
type Routes struct {
	byID     map[string]*Route
	LoadedAt time.Time
	// Rejects say how many refused lines of an input are stored verbatim
	// (fleet_rules, control database).
	Rejects fleet.FleetRulesRejects
}

// LoadRoutes reads the registry from the control database, with each
// farm's retention horizon at now when retentionDays > 0.
func LoadRoutes(ctx context.Context, control *pgxpool.Pool, now time.Time, retentionDays int) (*Routes, error) {
	rows, err := controldb.New(control).TurbineRoutes(ctx)
	if err != nil {
		return nil, fmt.Errorf("load turbine routes: %w", err)
	}
	keep, err := partition.KeepFrom(ctx, control, now, retentionDays)
	if err != nil {
		return nil, err
	}
	rej, err := controldb.New(control).FleetRulesRejects(ctx)
	if err != nil {
		return nil, fmt.Errorf("load reject rules: %w", err)
	}
	zones := map[string]*time.Location{}
	zone := func(name string) (*time.Location, error) {
		loc, ok := zones[name]
		if !ok {
			var err error
			if loc, err = time.LoadLocation(name); err != nil {
				return nil, err
			}
			zones[name] = loc
		}
		return loc, nil
	}
	calendars, err := fleet.Calendars(ctx, controldb.New(control))
	if err != nil {
		return nil, fmt.Errorf("load turbine routes: %w", err)
	}
	r := &Routes{byID: make(map[string]*Route, len(rows)), LoadedAt: now, Rejects: fleet.RejectRulesFromRow(rej)}
	for _, row := range rows {
		loc, err := zone(row.Timezone)
		if err != nil {
			return nil, fmt.Errorf("farm %s: time zone %q: %w", row.FarmID, row.Timezone, err)
		}
		cal := calendars[row.FarmID]
		if len(cal) == 0 {
			return nil, fmt.Errorf("farm %s: no calendar version in the registry", row.FarmID)
		}
		r.byID[row.ID] = &Route{
			TurbineID: row.ID, FarmID: row.FarmID, Shard: row.ShardName, Location: loc, Calendar: cal,
			CommissionedAt: row.CommissionedAt, DecommissionedAt: row.DecommissionedAt,
			Cadence: time.Duration(row.CadenceSeconds) * time.Second,
			Rules:   fleet.RulesFromRow(row.FarmRule),
		}
		if k, ok := keep[row.FarmID]; ok {
			r.byID[row.ID].KeepFrom = &k
		}
	}
	return r, nil
}

// Lookup returns the route of a turbine id, or nil.
func (r *Routes) Lookup(id string) *Route { return r.byID[id] }

// Len is the number of turbines known.
func (r *Routes) Len() int { return len(r.byID) }

// KeepRoutes reloads the registry snapshot every interval until ctx ends,
// so a fleet apply (new turbines, changed rules, a retention horizon that
// moved with the clock) reaches a running ingest; at once when a writer
// met a turbine a move fenced off its shard.
func (in *Ingestor) KeepRoutes(ctx context.Context, control *pgxpool.Pool, now func() time.Time, retentionDays int, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.stale: // a batch met a moved turbine: reload now
		case <-t.C:
			if in.isClosed() { // its owner is closing its pools too
				return
			}
			routes, err := LoadRoutes(ctx, control, now(), retentionDays)
			if err != nil {
				slog.Warn("refresh turbine routes", "err", err)
				continue
			}
			in.SetRoutes(routes)
		}
	}
}
