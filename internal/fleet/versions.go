package fleet

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
)

// ApplyOptions say from when an apply's versions hold and whether it may
// change days already rolled up.
type ApplyOptions struct {
	// EffectiveFrom is the instant the new versions start (nil: the
	// registry's clock). It may not be in the future, nor before
	// MinEffectiveFrom. A farm's calendar and rules change from the
	// farm-local day holding it; a turbine's facts at the instant; a
	// turbine or farm the registry does not know yet is in service from it
	// unless the file gives commissioned_at.
	EffectiveFrom *time.Time
	// Reopen lets the apply change farm-days already rolled up: they are
	// listed (ApplyResult.Reopened) for recompute. Without it such an apply
	// is refused and changes nothing.
	Reopen bool
	// RetireMissing lets the apply retire the farms and turbines in
	// service that the file does not name (out of service from the
	// effective instant, their history kept). Without it such an apply is
	// refused (RetiresMissingError) and changes nothing; a turbine given
	// decommissioned_at in the file is retired either way.
	RetireMissing bool
	// RepointShards lets the apply change the server or database of a
	// shard the registry knows (the DBA has copied its database there);
	// without it such an apply is refused and changes nothing.
	RepointShards bool
	// OnMoves, when set, is called in the apply's transaction with the
	// moves it started, then with the moves under way that the file still
	// asks for: it queues a job for each that has none working it (their
	// jobs are queued with the apply or not at all) and returns those.
	OnMoves func(ctx context.Context, tx pgx.Tx, moves []Move) ([]Move, error)
}

// FarmDay is one farm-local day of one farm.
type FarmDay struct {
	FarmID string
	Day    localday.Date
}

func (d FarmDay) String() string { return d.FarmID + "/" + d.Day.String() }

// Change is one edit an apply makes to the registry, and the rolled-up
// days it changes.
type Change struct {
	Kind ChangeKind
	// Farm is the farm changed, or the turbine's; Turbine is empty for a
	// change of the farm itself.
	Farm, Turbine string
	// Omitted: retired because the file no longer names it.
	Omitted bool
	What    string
	Days    []FarmDay
}

// versionPlan is what an apply writes beside the current rows: the new
// versions, and which rolled-up days they change.
type versionPlan struct {
	at    time.Time
	farms []controldb.FarmVersionInsertParams
	// contracts are the farms' contracts, recorded before the versions
	// that name them
	contracts []controldb.ContractEnsureParams
	models    []controldb.ModelEnsureParams
	turbines  []controldb.TurbineVersionInsertParams
	// commissioned is the service start each turbine's row gets (a new
	// turbine without one in the file: the effective instant; otherwise
	// the file's, else the registry's).
	commissioned map[string]*time.Time
	changes      []Change
	refused      []string
	added        int // turbines the registry did not know
}

// farmFacts is what a farm version says (its name is not a count's
// definition; everything else is).
type farmFacts struct {
	name, zone string
	cadence    int32
	rules      Rules
	contract   string // its hash (DefaultContractHash: none given)
	counting   string // its CountingHash: what sorts slots
	model      string // its model's hash ("": none)
}

// planVersions compares the plan with the versions in force and decides the
// new ones. It reads only.
func (r *Registry) planVersions(ctx context.Context, q *controldb.Queries, plan *Plan, opts ApplyOptions) (*versionPlan, error) {
	vp := &versionPlan{at: *opts.EffectiveFrom, commissioned: map[string]*time.Time{}}
	farms, err := q.FarmVersionCurrent(ctx)
	if err != nil {
		return nil, fmt.Errorf("farm versions: %w", err)
	}
	current := make(map[string]controldb.FarmVersionCurrentRow, len(farms))
	for _, f := range farms {
		current[f.FarmID] = f
	}
	// The days of instants are the registry's: each farm's calendar
	// versions as they stand before this apply.
	calendars, err := Calendars(ctx, q)
	if err != nil {
		return nil, err
	}
	// A new turbine without commissioned_at is in service from start.
	start := vp.at
	if !r.Since.IsZero() {
		start = r.Since
	}
	zones := map[string]*time.Location{}
	var added map[string]string
	for _, f := range plan.Farms {
		loc, err := time.LoadLocation(f.Timezone)
		if err != nil {
			return nil, fmt.Errorf("farm %s: %w", f.ID, err)
		}
		zones[f.ID] = loc
		next := farmFacts{name: f.Name, zone: f.Timezone, cadence: int32(f.CadenceSeconds), rules: plan.FarmRules(f),
			contract: DefaultContractHash, counting: DefaultContractHash}
		if c := plan.Contracts[f.ID]; c != nil {
			next.contract, next.counting = c.Hash(), c.CountingHash()
			vp.contracts = append(vp.contracts, c.params())
		}
		if m := plan.Models[f.ID]; m != nil {
			next.model = m.Hash()
			vp.models = append(vp.models, m.params())
		}
		if next.name == "" {
			next.name = f.ID
		}
		params := next.params(f.ID)
		cur, known := current[f.ID]
		if !known {
			// A new farm's calendar governs every day (its turbines' service
			// intervals say which of them count).
			params.SinceEver = true
			vp.farms = append(vp.farms, params)
			if added == nil {
				added = newFarms(plan, current, start)
			}
			what := "farm " + f.ID + ": new, no turbines"
			if a, ok := added[f.ID]; ok {
				what = "farm " + f.ID + ": new, " + a
			}
			vp.changes = append(vp.changes, Change{Kind: Added, Farm: f.ID, What: what})
			continue
		}
		was := farmFacts{name: cur.Name, zone: cur.Timezone, cadence: cur.CadenceSeconds, rules: RulesFromRow(controldb.FarmRule{
			LaneThresholdMs: cur.LaneThresholdMs, EarlyToleranceMs: cur.EarlyToleranceMs, FutureLimitS: cur.FutureLimitS,
			MaxAgeDays: cur.MaxAgeDays, WindowS: cur.WindowS, MarkMarginS: cur.MarkMarginS, AllowedLatenessS: cur.AllowedLatenessS,
			DivergenceAlertPm: cur.DivergenceAlertPm, CompletenessAlertPm: cur.CompletenessAlertPm,
			PowerMinKw: cur.PowerMinKw, PowerMaxKw: cur.PowerMaxKw, WindMaxMs: cur.WindMaxMs,
		}), contract: cur.ContractHash, counting: cur.ContractCountingHash, model: cur.ModelHash}
		if next == was {
			continue
		}
		// The day in progress at the effective instant, by the calendar in
		// force then: it starts at the old midnight and ends at a new one.
		oldLoc, err := time.LoadLocation(cur.Timezone)
		if err != nil {
			return nil, fmt.Errorf("farm %s: %w", f.ID, err)
		}
		first := localday.Of(vp.at, oldLoc)
		if cal := calendars[f.ID]; len(cal) > 0 {
			first, _, _, _ = cal.DayOf(vp.at)
		}
		if !cur.SinceEver && first.UTC().Before(cur.FirstDay) {
			vp.refused = append(vp.refused, fmt.Sprintf("farm %s: its version in force starts on %s; --effective-from %s is before it (edit from that day on)",
				f.ID, localday.DateOf(cur.FirstDay), vp.at.UTC().Format(time.RFC3339)))
			continue
		}
		params.FirstDay = first.UTC()
		vp.farms = append(vp.farms, params)
		what := fmt.Sprintf("farm %s: %s from farm-local day %s", f.ID, strings.Join(was.diff(next), ", "), first)
		// A name is no count's definition, nor the farm's default cadence
		// (each turbine's version carries the cadence it counts by).
		// Nor are a contract's year start and settlement terms (counting).
		if was.zone == next.zone && was.rules == next.rules && was.counting == next.counting && was.model == next.model {
			vp.changes = append(vp.changes, Change{Kind: Changed, Farm: f.ID, What: what})
			continue
		}
		// The days the new version governs change; no day before them does.
		days, err := rolledUp(ctx, q, f.ID, first, nil)
		if err != nil {
			return nil, err
		}
		vp.changes = append(vp.changes, Change{Kind: Changed, Farm: f.ID, What: what, Days: days})
	}

	turbines, err := q.TurbineVersionCurrent(ctx)
	if err != nil {
		return nil, fmt.Errorf("turbine versions: %w", err)
	}
	known := make(map[string]controldb.TurbineVersionCurrentRow, len(turbines))
	for _, t := range turbines {
		known[t.TurbineID] = t
	}
	inFile := make(map[string]bool, len(plan.Turbines))
	for _, t := range plan.Turbines {
		inFile[t.ID] = true
		loc, cal := zones[t.FarmID], calendars[t.FarmID]
		day := func(at time.Time) localday.Date {
			if len(cal) > 0 {
				d, _, _, _ := cal.DayOf(at)
				return d
			}
			return localday.Of(at, loc)
		}
		v := controldb.TurbineVersionInsertParams{
			TurbineID: t.ID, FarmID: t.FarmID, ShardName: t.Shard, CadenceSeconds: int32(t.CadenceSeconds),
			CommissionedAt: t.CommissionedAt, DecommissionedAt: t.DecommissionedAt, ValidFrom: vp.at,
		}
		cur, ok := known[t.ID]
		if !ok {
			if v.CommissionedAt == nil {
				v.CommissionedAt = &start
			}
			v.SinceEver = true
			vp.commissioned[t.ID] = v.CommissionedAt
			vp.turbines = append(vp.turbines, v)
			vp.added++
			// Any rolled-up day from its commissioning on now counts it.
			days, err := rolledUp(ctx, q, t.FarmID, day(*v.CommissionedAt), nil)
			if err != nil {
				return nil, err
			}
			vp.changes = append(vp.changes, Change{Kind: Added, Farm: t.FarmID, Turbine: t.ID,
				What: fmt.Sprintf("turbine %s: new on shard %s, in service from %s", t.ID, t.Shard, stamp(v.CommissionedAt)), Days: days})
			continue
		}
		if v.CommissionedAt == nil {
			v.CommissionedAt = cur.CommissionedAt // absent in the file: the registry's stands
		}
		vp.commissioned[t.ID] = v.CommissionedAt
		var diffs []string
		var days []FarmDay
		add := func(from localday.Date, to *localday.Date) error {
			got, err := rolledUp(ctx, q, t.FarmID, from, to)
			days = append(days, got...)
			return err
		}
		if cur.CadenceSeconds != v.CadenceSeconds {
			// A window has one cadence: the change starts at the first
			// window boundary of the farm's grid at or after the instant.
			if len(cal) > 0 {
				_, start, end, cv := cal.DayOf(vp.at)
				if off := vp.at.Sub(start) % cv.Window; off != 0 {
					if v.ValidFrom = vp.at.Add(cv.Window - off); v.ValidFrom.After(end) {
						v.ValidFrom = end
					}
				}
			}
			diffs = append(diffs, fmt.Sprintf("cadence %d s → %d s", cur.CadenceSeconds, v.CadenceSeconds))
			if err := add(day(v.ValidFrom), nil); err != nil {
				return nil, err
			}
		}
		if !sameInstant(cur.CommissionedAt, v.CommissionedAt) {
			diffs = append(diffs, fmt.Sprintf("commissioned_at %s → %s", stamp(cur.CommissionedAt), stamp(v.CommissionedAt)))
			lo, hi := span(cur.CommissionedAt, v.CommissionedAt)
			if err := add(dayOr(lo, day, localday.Date{Year: 1900, Month: 1, Day: 1}), ptr(day(*hi))); err != nil {
				return nil, err
			}
		}
		if !sameInstant(cur.DecommissionedAt, v.DecommissionedAt) || !cur.InFleetFile {
			diffs = append(diffs, fmt.Sprintf("decommissioned_at %s → %s", stamp(cur.DecommissionedAt), stamp(v.DecommissionedAt)))
			// NULL is an open end here: the days from the earlier end on.
			lo, hi := span(cur.DecommissionedAt, v.DecommissionedAt)
			if lo == nil {
				lo, hi = hi, nil
			}
			var to *localday.Date
			if hi != nil && lo != nil {
				to = ptr(day(*hi))
			}
			if lo != nil {
				if err := add(day(*lo), to); err != nil {
					return nil, err
				}
			}
		}
		if len(diffs) == 0 {
			continue
		}
		if !cur.SinceEver && v.ValidFrom.Before(cur.ValidFrom) {
			vp.refused = append(vp.refused, fmt.Sprintf("turbine %s: its version in force starts at %s; --effective-from %s is before it",
				t.ID, cur.ValidFrom.UTC().Format(time.RFC3339), vp.at.UTC().Format(time.RFC3339)))
			continue
		}
		vp.turbines = append(vp.turbines, v)
		// Given decommissioned_at in the file, a turbine in service is
		// retired on purpose.
		kind := Changed
		if cur.InFleetFile && cur.DecommissionedAt == nil && v.DecommissionedAt != nil {
			kind = Retired
		}
		vp.changes = append(vp.changes, Change{Kind: kind, Farm: t.FarmID, Turbine: t.ID,
			What: fmt.Sprintf("turbine %s: %s from %s", t.ID, strings.Join(diffs, ", "), v.ValidFrom.UTC().Format(time.RFC3339)), Days: dedupe(days)})
	}
	// Turbines the file no longer names are retired at the effective
	// instant (their history is kept).
	for _, cur := range turbines {
		if inFile[cur.TurbineID] || !cur.InFleetFile {
			continue
		}
		v := controldb.TurbineVersionInsertParams{
			TurbineID: cur.TurbineID, FarmID: cur.FarmID, ShardName: cur.ShardName, CadenceSeconds: cur.CadenceSeconds,
			CommissionedAt: cur.CommissionedAt, DecommissionedAt: cur.DecommissionedAt, ValidFrom: vp.at,
		}
		var days []FarmDay
		if v.DecommissionedAt == nil {
			at := vp.at
			v.DecommissionedAt = &at
			from, err := dayOf(calendars[cur.FarmID], zones, current, cur.FarmID, vp.at)
			if err != nil {
				return nil, err
			}
			if days, err = rolledUp(ctx, q, cur.FarmID, from, nil); err != nil {
				return nil, err
			}
		}
		if !cur.SinceEver && vp.at.Before(cur.ValidFrom) {
			v.ValidFrom = cur.ValidFrom
		}
		vp.turbines = append(vp.turbines, v)
		vp.changes = append(vp.changes, Change{Kind: Retired, Omitted: true, Farm: cur.FarmID, Turbine: cur.TurbineID,
			What: fmt.Sprintf("turbine %s: no longer in the file, out of service from %s", cur.TurbineID, stamp(v.DecommissionedAt)), Days: days})
	}
	return vp, nil
}

// newFarms says, per farm of the plan the registry does not know, what the
// plan lists of it: its turbines, their shards and service start (start
// where the file gives no commissioned_at).
func newFarms(plan *Plan, current map[string]controldb.FarmVersionCurrentRow, start time.Time) map[string]string {
	type farm struct {
		n          int
		shards     []string
		first, end time.Time
	}
	farms := map[string]*farm{}
	for _, t := range plan.Turbines {
		if _, known := current[t.FarmID]; known {
			continue
		}
		f := farms[t.FarmID]
		if f == nil {
			f = &farm{}
			farms[t.FarmID] = f
		}
		from := start
		if t.CommissionedAt != nil {
			from = *t.CommissionedAt
		}
		if f.n == 0 || from.Before(f.first) {
			f.first = from
		}
		if f.n == 0 || from.After(f.end) {
			f.end = from
		}
		f.n++
		if !slices.Contains(f.shards, t.Shard) {
			f.shards = append(f.shards, t.Shard)
		}
	}
	out := make(map[string]string, len(farms))
	for id, f := range farms {
		since := "in service from " + stamp(&f.first)
		if !f.end.Equal(f.first) {
			since = fmt.Sprintf("in service from %s at the earliest, %s at the latest (commissioned_at)", stamp(&f.first), stamp(&f.end))
		}
		word := "shard"
		if len(f.shards) > 1 {
			word = "shards"
		}
		out[id] = fmt.Sprintf("%s on %s %s, %s", count(f.n, "turbine"), word, strings.Join(f.shards, ", "), since)
	}
	return out
}

// reopened is every rolled-up farm-day the plan changes.
func (vp *versionPlan) reopened() []FarmDay {
	var all []FarmDay
	for _, c := range vp.changes {
		all = append(all, c.Days...)
	}
	return dedupe(all)
}

// write records the apply and its versions (after the current rows).
// write records the apply (fleet_apply) and its versions, and returns the
// apply's id; with neither versions nor moves it writes nothing (id 0).
func (vp *versionPlan) write(ctx context.Context, q *controldb.Queries, hash string, reopened []FarmDay, moves bool) (int64, error) {
	if len(vp.farms) == 0 && len(vp.turbines) == 0 && !moves {
		return 0, nil
	}
	names := make([]string, len(reopened))
	for i, d := range reopened {
		names[i] = d.String()
	}
	if hash == "" {
		hash = "a plan built in code"
	}
	id, err := q.FleetApplyInsert(ctx, controldb.FleetApplyInsertParams{FleetHash: hash, EffectiveFrom: vp.at, ReopenedDays: names})
	if err != nil {
		return 0, fmt.Errorf("fleet_apply: %w", err)
	}
	for _, m := range vp.models {
		if _, err := q.ModelEnsure(ctx, m); err != nil {
			return 0, fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	for _, c := range vp.contracts {
		if _, err := q.ContractEnsure(ctx, c); err != nil {
			return 0, fmt.Errorf("contract %s: %w", c.Name, err)
		}
	}
	for _, f := range vp.farms {
		f.ApplyID = id
		if err := q.FarmVersionDeleteDay(ctx, controldb.FarmVersionDeleteDayParams{FarmID: f.FarmID, FirstDay: f.FirstDay, SinceEver: f.SinceEver}); err != nil {
			return 0, fmt.Errorf("farm %s version: %w", f.FarmID, err)
		}
		if err := q.FarmVersionClose(ctx, controldb.FarmVersionCloseParams{FarmID: f.FarmID, FirstDay: f.FirstDay, SinceEver: f.SinceEver}); err != nil {
			return 0, fmt.Errorf("farm %s version: %w", f.FarmID, err)
		}
		if err := q.FarmVersionInsert(ctx, f); err != nil {
			return 0, fmt.Errorf("farm %s version: %w", f.FarmID, err)
		}
	}
	del := make([]controldb.TurbineVersionDeleteAtParams, len(vp.turbines))
	closeAt := make([]controldb.TurbineVersionCloseParams, len(vp.turbines))
	for i := range vp.turbines {
		vp.turbines[i].ApplyID = id
		del[i] = controldb.TurbineVersionDeleteAtParams{TurbineID: vp.turbines[i].TurbineID, ValidFrom: vp.turbines[i].ValidFrom}
		closeAt[i] = controldb.TurbineVersionCloseParams{TurbineID: vp.turbines[i].TurbineID, ValidFrom: vp.turbines[i].ValidFrom}
	}
	var batchErr error
	keep := func(i int, err error) {
		if err != nil && batchErr == nil {
			batchErr = fmt.Errorf("turbine %s version: %w", vp.turbines[i].TurbineID, err)
		}
	}
	q.TurbineVersionDeleteAt(ctx, del).Exec(keep)
	q.TurbineVersionClose(ctx, closeAt).Exec(keep)
	q.TurbineVersionInsert(ctx, vp.turbines).Exec(keep)
	return id, batchErr
}

func (f farmFacts) params(id string) controldb.FarmVersionInsertParams {
	p := controldb.FarmVersionInsertParams{FarmID: id, Name: f.name, Timezone: f.zone, CadenceSeconds: f.cadence, ContractHash: f.contract, ModelHash: f.model}
	r := f.rules
	p.LaneThresholdMs, p.EarlyToleranceMs = int32(r.LaneThreshold.Milliseconds()), int32(r.EarlyTolerance.Milliseconds())
	p.FutureLimitS, p.MaxAgeDays = int32(r.FutureLimit/time.Second), int32(r.MaxAge/(24*time.Hour))
	p.WindowS, p.MarkMarginS, p.AllowedLatenessS = int32(r.Window/time.Second), int32(r.MarkMargin/time.Second), int32(r.AllowedLateness/time.Second)
	p.DivergenceAlertPm, p.CompletenessAlertPm = int32(r.DivergenceAlertPM), int32(r.CompletenessAlertPM)
	p.PowerMinKw, p.PowerMaxKw, p.WindMaxMs = int32(r.PowerMinKW), int32(r.PowerMaxKW), int32(r.WindMaxMS)
	return p
}

// diff names what differs from f to g.
func (f farmFacts) diff(g farmFacts) []string {
	var out []string
	if f.name != g.name {
		out = append(out, fmt.Sprintf("name %q → %q", f.name, g.name))
	}
	if f.zone != g.zone {
		out = append(out, fmt.Sprintf("timezone %s → %s", f.zone, g.zone))
	}
	if f.cadence != g.cadence {
		out = append(out, fmt.Sprintf("cadence %d s → %d s", f.cadence, g.cadence))
	}
	if f.rules != g.rules {
		out = append(out, "rules: "+strings.Join(f.rules.Changes(g.rules), ", "))
	}
	if f.model != g.model {
		out = append(out, fmt.Sprintf("model %s → %s", shortHash(f.model), shortHash(g.model)))
	}
	if f.contract != g.contract {
		terms := ""
		if f.counting == g.counting {
			terms = " (its year start or settlement terms only: no day is recounted)"
		}
		out = append(out, fmt.Sprintf("contract %s → %s%s", shortHash(f.contract), shortHash(g.contract), terms))
	}
	return out
}

// rolledUp is the farm's days in [from, to] (to nil: every later day) that
// have turbine_day rows.
func rolledUp(ctx context.Context, q *controldb.Queries, farm string, from localday.Date, to *localday.Date) ([]FarmDay, error) {
	end := localday.Date{Year: 9999, Month: 12, Day: 31}
	if to != nil {
		end = *to
	}
	days, err := q.FarmDaysRolledUp(ctx, controldb.FarmDaysRolledUpParams{FarmID: farm, FromDay: from.UTC(), ToDay: end.UTC()})
	if err != nil {
		return nil, fmt.Errorf("farm %s: rolled-up days: %w", farm, err)
	}
	out := make([]FarmDay, len(days))
	for i, d := range days {
		out[i] = FarmDay{FarmID: farm, Day: localday.DateOf(d)}
	}
	return out, nil
}

// Calendars is every farm's calendar versions as the registry has them
// (what FarmDayGet cuts days by): fleet apply's days of instants, ingest's
// mark rule.
func Calendars(ctx context.Context, q *controldb.Queries) (map[string]localday.Calendar, error) {
	rows, err := q.FarmVersionList(ctx)
	if err != nil {
		return nil, fmt.Errorf("farm calendars: %w", err)
	}
	out := map[string]localday.Calendar{}
	for _, v := range rows {
		loc, err := time.LoadLocation(v.Timezone)
		if err != nil {
			return nil, fmt.Errorf("farm %s: %w", v.FarmID, err)
		}
		out[v.FarmID] = append(out[v.FarmID], localday.CalendarVersion{
			SinceEver: v.SinceEver, FirstDay: localday.DateOf(v.FirstDay), Start: v.ValidFrom, Location: loc,
			Window: time.Duration(v.WindowS) * time.Second, AllowedLateness: time.Duration(v.AllowedLatenessS) * time.Second,
			MarkMargin: time.Duration(v.MarkMarginS) * time.Second,
		})
	}
	return out, nil
}

// dayOf is the farm-local day holding at: by the registry's calendar, else
// (a farm it does not know) the zone.
func dayOf(cal localday.Calendar, zones map[string]*time.Location, current map[string]controldb.FarmVersionCurrentRow, farm string, at time.Time) (localday.Date, error) {
	if len(cal) > 0 {
		d, _, _, _ := cal.DayOf(at)
		return d, nil
	}
	loc, err := farmZone(zones, current, farm)
	if err != nil {
		return localday.Date{}, err
	}
	return localday.Of(at, loc), nil
}

// farmZone is a farm's zone: the file's, else the registry's.
func farmZone(zones map[string]*time.Location, current map[string]controldb.FarmVersionCurrentRow, farm string) (*time.Location, error) {
	if loc, ok := zones[farm]; ok {
		return loc, nil
	}
	return time.LoadLocation(current[farm].Timezone)
}

func dedupe(days []FarmDay) []FarmDay {
	sort.Slice(days, func(i, j int) bool {
		if days[i].FarmID != days[j].FarmID {
			return days[i].FarmID < days[j].FarmID
		}
		return days[i].Day.UTC().Before(days[j].Day.UTC())
	})
	out := days[:0]
	for i, d := range days {
		if i == 0 || d != days[i-1] {
			out = append(out, d)
		}
	}
	return out
}

// span orders two service bounds, nil first (an open start), for the days
// between them.
func span(a, b *time.Time) (lo, hi *time.Time) {
	switch {
	case a == nil:
		return nil, b
	case b == nil:
		return nil, a
	case a.Before(*b):
		return a, b
	}
	return b, a
}

func dayOr(t *time.Time, day func(time.Time) localday.Date, open localday.Date) localday.Date {
	if t == nil {
		return open
	}
	return day(*t)
}

func sameInstant(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func stamp(t *time.Time) string {
	if t == nil {
		return "none"
	}
	return t.UTC().Format(time.RFC3339)
}

func ptr[T any](v T) *T { return &v }

// shortHash is a contract hash as a change list names it.
func shortHash(hash string) string {
	if hash == "" {
		return "none"
	}
	return hash[:min(12, len(hash))]
}
