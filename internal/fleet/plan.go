package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// ChangeKind is what a change does to the fleet, the section of the plan
// that lists it.
type ChangeKind string

const (
	Added   ChangeKind = "added"
	Changed ChangeKind = "changed"
	Retired ChangeKind = "retired"
	// Moved is the plan's section of moves (ApplyResult.Moves), not a
	// Change's kind: a move changes no version until its switch.
	Moved ChangeKind = "moved"
)

// planLines is how many lines a section of the plan lists; the rest are
// counted (--json lists every one).
const planLines = 50

// refusedLines is how many farms and turbines a refusal to retire lists.
const refusedLines = 20

// RetiresMissingError is an apply refused because it would retire farms or
// turbines in service that the file does not name, without RetireMissing.
type RetiresMissingError struct {
	Source string
	At     time.Time
	// Farms are the farms the file does not name that have turbines in
	// service, with how many; Turbines the other turbines it does not name.
	Farms    []MissingFarm
	Turbines []MissingTurbine
}

// MissingFarm is a farm the file does not name, with its turbines in
// service.
type MissingFarm struct {
	ID       string
	Turbines int
}

// MissingTurbine is a turbine in service the file does not name, of a farm
// it names.
type MissingTurbine struct {
	ID, FarmID string
}

// Count is how many turbines in service the apply would retire.
func (e *RetiresMissingError) Count() int {
	n := len(e.Turbines)
	for _, f := range e.Farms {
		n += f.Turbines
	}
	return n
}

func (e *RetiresMissingError) Error() string {
	n := e.Count()
	var lines []string
	for _, f := range e.Farms {
		lines = append(lines, fmt.Sprintf("farm %s (its %s in service)", f.ID, count(f.Turbines, "turbine")))
	}
	for _, t := range e.Turbines {
		lines = append(lines, fmt.Sprintf("turbine %s (farm %s)", t.ID, t.FarmID))
	}
	if len(lines) > refusedLines {
		lines = append(lines[:refusedLines], fmt.Sprintf("… and %d more", len(lines)-refusedLines))
	}
	whole := ""
	if len(e.Farms) > 0 {
		whole = fmt.Sprintf(" (%s entirely)", count(len(e.Farms), "farm"))
	}
	return fmt.Sprintf("fleet apply refused: %s does not name %s in service%s; applying it would retire them "+
		"(out of service from %s):\n  %s\n"+
		"nothing was changed; to retire them, apply with --retire-missing (or give each decommissioned_at in the file); "+
		"to keep them, add them to the file (fleet apply --dry-run shows the whole plan)",
		e.Source, count(n, "turbine"), whole, e.At.UTC().Format(time.RFC3339), strings.Join(lines, "\n  "))
}

// missingOf is the turbines in service at at (in the file, not
// decommissioned by then) that the plan does not name: an apply would
// retire them. Nil when there are none. One whose service ended already
// leaves the file without asking: nothing of it changes.
func missingOf(source string, at time.Time, placements []controldb.TurbinePlacementsRow, plan *Plan) *RetiresMissingError {
	inFile := make(map[string]bool, len(plan.Turbines))
	for _, t := range plan.Turbines {
		inFile[t.ID] = true
	}
	farms := make(map[string]bool, len(plan.Farms))
	for _, f := range plan.Farms {
		farms[f.ID] = true
	}
	e := &RetiresMissingError{Source: source, At: at}
	gone := map[string]int{}
	for _, p := range placements {
		if !p.InFleetFile || inFile[p.ID] || (p.DecommissionedAt != nil && !p.DecommissionedAt.After(at)) {
			continue
		}
		if farms[p.FarmID] {
			e.Turbines = append(e.Turbines, MissingTurbine{ID: p.ID, FarmID: p.FarmID})
			continue
		}
		if gone[p.FarmID] == 0 {
			e.Farms = append(e.Farms, MissingFarm{ID: p.FarmID})
		}
		gone[p.FarmID]++
	}
	if len(e.Farms) == 0 && len(e.Turbines) == 0 {
		return nil
	}
	for i := range e.Farms {
		e.Farms[i].Turbines = gone[e.Farms[i].ID]
	}
	slices.SortFunc(e.Farms, func(a, b MissingFarm) int { return strings.Compare(a.ID, b.ID) })
	return e
}

// decision is what an apply does, decided from the registry as it stands:
// the plan with every turbine on the shard it has now, the moves, the new
// versions, what it would retire, and the result that lists it all.
type decision struct {
	plan            *Plan
	moves, underway []Move
	vp              *versionPlan
	missing         *RetiresMissingError
	res             ApplyResult
}

// decide compares the plan with the registry through q and decides the
// apply. It reads only. A fact the registry may not take (a version before
// the one in force) is a ValidationError.
func (r *Registry) decide(ctx context.Context, q *controldb.Queries, source string, plan *Plan, opts ApplyOptions) (*decision, error) {
	at := *opts.EffectiveFrom
	d := &decision{res: ApplyResult{Source: source, EffectiveFrom: at}}
	var err error
	if d.plan, d.moves, d.underway, err = r.movesOf(ctx, q, plan); err != nil {
		return nil, err
	}
	if d.vp, err = r.planVersions(ctx, q, d.plan, opts); err != nil {
		return nil, err
	}
	if len(d.vp.refused) > 0 {
		return nil, &ValidationError{Source: source, Problems: d.vp.refused}
	}
	placements, err := q.TurbinePlacements(ctx)
	if err != nil {
		return nil, err
	}
	d.missing = missingOf(source, at, placements, plan)
	res := &d.res
	res.Changes, res.Reopened, res.New = d.vp.changes, d.vp.reopened(), d.vp.added
	res.Moves = slices.Clone(d.moves)
	// A turbine with no version (registered before versions were kept) is
	// retired all the same: listed here too.
	inFile := make(map[string]bool, len(plan.Turbines))
	for _, t := range plan.Turbines {
		inFile[t.ID] = true
	}
	listed := map[string]bool{}
	for _, c := range res.Changes {
		if c.Omitted {
			listed[c.Turbine] = true
		}
	}
	for _, p := range placements {
		if p.InFleetFile && !inFile[p.ID] && !listed[p.ID] {
			res.Changes = append(res.Changes, Change{Kind: Retired, Omitted: true, Farm: p.FarmID, Turbine: p.ID,
				What: fmt.Sprintf("turbine %s: no longer in the file, out of service from %s", p.ID, stamp(&at))})
		}
	}
	if d.missing != nil {
		for _, f := range d.missing.Farms {
			res.Changes = append(res.Changes, Change{Kind: Retired, Omitted: true, Farm: f.ID,
				What: fmt.Sprintf("farm %s: no longer in the file: its %s out of service from %s", f.ID, count(f.Turbines, "turbine"), stamp(&at))})
		}
	}
	known, err := q.ShardList(ctx)
	if err != nil {
		return nil, err
	}
	registered := make(map[string]bool, len(known))
	for _, s := range known {
		registered[s.Name] = true
	}
	for _, s := range plan.Shards {
		if !registered[s.Name] {
			res.NewShards = append(res.NewShards, s.Name)
		}
	}
	if opts.RepointShards {
		moved, err := r.repointed(ctx, q, plan)
		if err != nil {
			return nil, err
		}
		for _, m := range moved {
			res.FleetChanges = append(res.FleetChanges, fmt.Sprintf("shard %s: %s → %s (--repoint-shards)", m.name, m.from, m.to))
		}
	}
	rejects, err := q.FleetRulesRejects(ctx)
	if err != nil {
		return nil, fmt.Errorf("fleet rules: %w", err)
	}
	next := plan.Rules.fleetParams(plan.Rejects)
	if rejects.RejectRowsKept != next.RejectRowsKept {
		res.FleetChanges = append(res.FleetChanges, fmt.Sprintf("fleet rules: reject_rows_kept %d → %d", rejects.RejectRowsKept, next.RejectRowsKept))
	}
	if rejects.RejectRetentionDays != next.RejectRetentionDays {
		res.FleetChanges = append(res.FleetChanges, fmt.Sprintf("fleet rules: reject_retention %dd → %dd", rejects.RejectRetentionDays, next.RejectRetentionDays))
	}
	before, err := farmRules(ctx, q)
	if err != nil {
		return nil, err
	}
	for _, f := range plan.Farms {
		if old, ok := before[f.ID]; ok && old != plan.FarmRules(f) {
			res.RuleChanges = append(res.RuleChanges, RuleChange{FarmID: f.ID, From: old, To: plan.FarmRules(f)})
		}
	}
	return d, nil
}

// refusal is why the apply may not go on with opts (nil: it may): farms or
// turbines it would retire without RetireMissing, rolled-up days it would
// change without Reopen; both when both.
func (d *decision) refusal(opts ApplyOptions) error {
	var errs []error
	if d.missing != nil && !opts.RetireMissing {
		errs = append(errs, d.missing)
	}
	if len(d.res.Reopened) > 0 && !opts.Reopen {
		errs = append(errs, &ChangesClosedDaysError{Changes: d.res.Changes})
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &RefusedError{Errs: errs}
}

// RefusedError is an apply refused for more than one reason.
type RefusedError struct {
	Errs []error
}

func (e *RefusedError) Error() string {
	var parts []string
	for _, err := range e.Errs {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "\n")
}

func (e *RefusedError) Unwrap() []error { return e.Errs }

// DryRun is what ApplyWith(ctx, source, plan, opts) would do, decided in
// one read-only transaction: the result lists the plan (PlanText) with
// nothing written, no shard database created and no job queued. The error
// is the one the apply would be refused with, if any, beside the result.
func (r *Registry) DryRun(ctx context.Context, source string, plan *Plan, opts ApplyOptions) (ApplyResult, error) {
	at, err := r.effectiveFrom(source, opts.EffectiveFrom)
	if err != nil {
		return ApplyResult{}, err
	}
	opts.EffectiveFrom = &at
	if err := r.preflight(ctx, source, plan, opts); err != nil {
		return ApplyResult{}, err
	}
	return r.dryRun(ctx, source, plan, opts)
}

// dryRun is DryRun after its checks, opts.EffectiveFrom set.
func (r *Registry) dryRun(ctx context.Context, source string, plan *Plan, opts ApplyOptions) (ApplyResult, error) {
	var d *decision
	err := pgx.BeginTxFunc(ctx, r.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		d, err = r.decide(ctx, controldb.New(tx), source, plan, opts)
		return err
	})
	if err != nil {
		return ApplyResult{}, err
	}
	return d.res, d.refusal(opts)
}

// PlanText is the plan of an apply, as `fleet apply --dry-run` prints it
// before and `fleet apply` after: what it adds, changes, moves and retires
// (farms and turbines), each with the rolled-up farm-days it changes, then
// every such day. It names nothing only the apply knows (move or job ids),
// so the two print the same text.
func (res ApplyResult) PlanText() string {
	// A farm-level change added or retired stands for its turbines' of
	// that kind: they are counted, and their days are the farm's.
	folded := map[ChangeKind]map[string][]FarmDay{Added: {}, Retired: {}}
	for _, c := range res.Changes {
		if f, ok := folded[c.Kind]; ok && c.Turbine == "" && c.Farm != "" {
			f[c.Farm] = nil
		}
	}
	for _, c := range res.Changes {
		if days, ok := folded[c.Kind][c.Farm]; ok && c.Turbine != "" {
			folded[c.Kind][c.Farm] = append(days, c.Days...)
		}
	}
	type section struct {
		kind            ChangeKind
		lines           []string
		counts          []string // what it holds besides farms and turbines
		farms, turbines int
	}
	sections := []*section{{kind: Added}, {kind: Changed}, {kind: Moved}, {kind: Retired}}
	of := map[ChangeKind]*section{}
	for _, s := range sections {
		of[s.kind] = s
	}
	for _, name := range res.NewShards {
		of[Added].lines = append(of[Added].lines, "shard "+name+": new")
	}
	if len(res.NewShards) > 0 {
		of[Added].counts = append(of[Added].counts, count(len(res.NewShards), "shard"))
	}
	of[Changed].lines = append(of[Changed].lines, res.FleetChanges...)
	if len(res.FleetChanges) > 0 {
		of[Changed].counts = append(of[Changed].counts, count(len(res.FleetChanges), "fleet setting"))
	}
	rules := map[string]RuleChange{}
	for _, rc := range res.RuleChanges {
		rules[rc.FarmID] = rc
	}
	for _, c := range res.Changes {
		s := of[c.Kind]
		days := c.Days
		if c.Turbine != "" {
			s.turbines++
			if _, ok := folded[c.Kind][c.Farm]; ok {
				continue
			}
		} else {
			s.farms++
			if more, ok := folded[c.Kind][c.Farm]; ok {
				days = dedupe(append(slices.Clone(days), more...))
			}
		}
		line := c.What + reaches(days)
		if rc, ok := rules[c.Farm]; ok && c.Turbine == "" && c.Kind == Changed {
			if note := rc.Consequence(); note != "" {
				line += "\n    " + note
			}
		}
		s.lines = append(s.lines, line)
	}
	for _, mv := range res.Moves {
		of[Moved].turbines++
		of[Moved].lines = append(of[Moved].lines, fmt.Sprintf("turbine %s: shard %s → %s (its readings are copied while they keep arriving, by a move_turbine job; no count changes)",
			mv.TurbineID, mv.From, mv.To))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "fleet %s from %s: ", res.Source, res.EffectiveFrom.UTC().Format(time.RFC3339))
	var heads []string
	for _, s := range sections {
		parts := slices.Clone(s.counts)
		if s.farms > 0 {
			parts = append(parts, count(s.farms, "farm"))
		}
		if s.turbines > 0 {
			parts = append(parts, count(s.turbines, "turbine"))
		}
		if len(parts) > 0 {
			heads = append(heads, fmt.Sprintf("%s %s", strings.Join(parts, ", "), s.kind))
		}
	}
	if len(heads) == 0 {
		b.WriteString("no change\n")
		return b.String()
	}
	reached := "no rolled-up day changes"
	if len(res.Reopened) > 0 {
		reached = "changes " + count(len(res.Reopened), "rolled-up farm-day")
	}
	fmt.Fprintf(&b, "%s; %s\n", strings.Join(heads, "; "), reached)
	for _, s := range sections {
		if len(s.lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", s.kind)
		for i, l := range s.lines {
			if i == planLines {
				fmt.Fprintf(&b, "  … and %d more (fleet apply --json lists every one)\n", len(s.lines)-planLines)
				break
			}
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if len(res.Reopened) > 0 {
		fmt.Fprintf(&b, "rolled-up farm-days it changes (recomputed with --reopen): %s\n", dayList(res.Reopened, planLines))
	}
	return b.String()
}

// reaches is what a plan line says of the rolled-up days a change reaches.
func reaches(days []FarmDay) string {
	if len(days) == 0 {
		return ""
	}
	return fmt.Sprintf("; changes %s: %s", count(len(days), "rolled-up day"), dayList(days, 10))
}

// count is n things, the noun in the plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
