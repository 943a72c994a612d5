package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/schema"
)

// ApplyResult is what an apply changed (PlanText lists it) and what the
// registry holds after it.
type ApplyResult struct {
	// Source names the file applied.
	Source   string
	Shards   int64
	Farms    int64
	Turbines int64
	// Retired is how many turbines are marked decommissioned because they
	// are no longer in the file (their history is kept).
	Retired int64
	// NewlyRetired is how many this apply retired.
	NewlyRetired int64
	// RuleChanges says, per farm whose rules in force changed, from what
	// to what.
	RuleChanges []RuleChange
	// EffectiveFrom is the instant the apply's versions start.
	EffectiveFrom time.Time
	// Changes are the farms and turbines the apply adds, changes and
	// retires, each with the rolled-up days it changes.
	Changes []Change
	// NewShards are the shards the registry did not know; FleetChanges the
	// fleet-wide settings that change (reject rules, a shard repointed).
	NewShards    []string
	FleetChanges []string
	// New is how many turbines the registry did not know.
	New int
	// Reopened is every rolled-up farm-day the apply changed (--reopen),
	// to recompute.
	Reopened []FarmDay
	// Moves are the turbine moves between shards the apply started
	// (turbine_move), each to be worked by a move_turbine job (a dry run's
	// have no id).
	Moves []Move
	// Resumed are moves under way, to the shard the file gives, that had
	// no job working them (cancelled, discarded, deleted): the apply
	// queued one, which goes on from the step the move committed.
	Resumed []Move
}

// ChangesClosedDaysError is an apply refused because it would change
// farm-days already rolled up, without --reopen.
type ChangesClosedDaysError struct {
	Changes []Change
}

func (e *ChangesClosedDaysError) Error() string {
	var b strings.Builder
	var all []FarmDay
	shown := 0
	for _, c := range e.Changes {
		if len(c.Days) == 0 {
			continue
		}
		all = append(all, c.Days...)
		if shown++; shown <= 20 {
			fmt.Fprintf(&b, "\n  %s changes %d rolled-up day(s): %s", c.What, len(c.Days), dayList(c.Days, 10))
		}
	}
	if shown > 20 {
		fmt.Fprintf(&b, "\n  … and %d more changes", shown-20)
	}
	days := dedupe(all)
	return fmt.Sprintf("fleet apply refused: it would change %d farm-day(s) already rolled up (%s):%s\n"+
		"nothing was changed; apply with --reopen to recompute those days with the new registry, or give --effective-from after them",
		len(days), dayList(days, 10), b.String())
}

// dayList names up to max days, then how many more.
func dayList(days []FarmDay, max int) string {
	var names []string
	for i, d := range days {
		if i == max {
			names = append(names, fmt.Sprintf("… and %d more", len(days)-max))
			break
		}
		names = append(names, d.String())
	}
	return strings.Join(names, ", ")
}

// RuleChange is a farm whose rules in force changed.
type RuleChange struct {
	FarmID   string
	From, To Rules
}

// Registry is the control database seen as the fleet registry.
type Registry struct {
	Pool       *pgxpool.Pool
	ControlDSN string
	// Now is the registry's clock: an apply's default effective instant.
	Now func() time.Time
	// Since, when set, is when a turbine new to the registry without
	// commissioned_at entered service, instead of the apply's effective
	// instant (a test fixture's fleet, there long before its readings).
	Since time.Time
}

// Apply checks the plan against the database (time zones Postgres knows,
// turbines that would change farms), creates and migrates the shard databases,
// then upserts the registry in one transaction. Re-applying is idempotent.
func (r *Registry) Apply(ctx context.Context, source string, plan *Plan) (ApplyResult, error) {
	return r.ApplyWith(ctx, source, plan, ApplyOptions{})
}

// ApplyWith is Apply from opts.EffectiveFrom: new versions of every changed
// fact from then, refused (with nothing changed) when they would change a
// farm-day already rolled up, unless opts.Reopen, or retire a farm or
// turbine in service that the file does not name, unless
// opts.RetireMissing.
func (r *Registry) ApplyWith(ctx context.Context, source string, plan *Plan, opts ApplyOptions) (ApplyResult, error) {
	at, err := r.effectiveFrom(source, opts.EffectiveFrom)
	if err != nil {
		return ApplyResult{}, err
	}
	opts.EffectiveFrom = &at
	if err := r.preflight(ctx, source, plan, opts); err != nil {
		return ApplyResult{}, err
	}
	// Before any shard database is created: the transaction decides again
	// under the lock.
	if !opts.RetireMissing {
		placements, err := controldb.New(r.Pool).TurbinePlacements(ctx)
		if err != nil {
			return ApplyResult{}, err
		}
		if missing := missingOf(source, at, placements, plan); missing != nil {
			// Refused: with the rolled-up days it would change too, if any.
			if _, err := r.dryRun(ctx, source, plan, opts); err != nil {
				return ApplyResult{}, err
			}
			return ApplyResult{}, missing
		}
	}
	for _, s := range plan.Shards {
		dsn, dbName, err := r.shardDSN(s.Name, s.DSN)
		if err != nil {
			return ApplyResult{}, err
		}
		if s.DSN == "" {
			if err := pgserver.EnsureDatabase(ctx, r.ControlDSN, dbName); err != nil {
				return ApplyResult{}, fmt.Errorf("shard %s: %w", s.Name, err)
			}
		}
		if err := migrateShard(ctx, s.Name, dsn); err != nil {
			return ApplyResult{}, err
		}
	}

	var res ApplyResult
	err = pgx.BeginFunc(ctx, r.Pool, func(tx pgx.Tx) error {
		qtx := controldb.New(tx)
		// One apply at a time: each decides its versions from the last.
		if err := qtx.AdvisoryXactLockKey(ctx, ApplyLock); err != nil {
			return err
		}
		// A shard change is a move (internal/move): the apply records it and
		// its job switches the turbine's shard once the readings are copied,
		// so the registry keeps the current shard until then. Decided under
		// the lock the switch takes too: an apply never writes back the
		// shard a move has just switched away from.
		d, err := r.decide(ctx, qtx, source, plan, opts)
		if err != nil {
			return err
		}
		if err := d.refusal(opts); err != nil {
			return err
		}
		res = d.res
		plan, vp := d.plan, d.vp
		if err := qtx.FleetRulesPut(ctx, plan.Rules.fleetParams(plan.Rejects)); err != nil {
			return fmt.Errorf("fleet rules: %w", err)
		}
		for _, s := range plan.Shards {
			_, dbName, _ := r.shardDSN(s.Name, s.DSN)
			if err := qtx.ShardUpsert(ctx, controldb.ShardUpsertParams{Name: s.Name, Dsn: nullable(s.DSN), Database: dbName}); err != nil {
				return fmt.Errorf("shard %s: %w", s.Name, err)
			}
		}
		for _, f := range plan.Farms {
			p := controldb.FarmUpsertParams{ID: f.ID, Name: f.Name, Timezone: f.Timezone, CadenceSeconds: int32(f.CadenceSeconds)}
			f.Rules.overrideParams(&p)
			if err := qtx.FarmUpsert(ctx, p); err != nil {
				return fmt.Errorf("farm %s: %w", f.ID, err)
			}
		}
		params := make([]controldb.TurbineUpsertParams, len(plan.Turbines))
		keep := make([]string, len(plan.Turbines))
		for i, t := range plan.Turbines {
			params[i] = controldb.TurbineUpsertParams{
				ID: t.ID, FarmID: t.FarmID, ShardName: t.Shard, CadenceSeconds: int32(t.CadenceSeconds),
				CommissionedAt: vp.commissioned[t.ID], DecommissionedAt: t.DecommissionedAt,
			}
			keep[i] = t.ID
		}
		var batchErr error
		qtx.TurbineUpsert(ctx, params).Exec(func(i int, err error) {
			if err != nil && batchErr == nil {
				batchErr = fmt.Errorf("turbine %s: %w", params[i].ID, err)
			}
		})
		if batchErr != nil {
			return batchErr
		}
		retired, err := qtx.TurbineRetire(ctx, controldb.TurbineRetireParams{Now: at, KeepIds: keep})
		if err != nil {
			return err
		}
		res.NewlyRetired = retired
		applyID, err := vp.write(ctx, qtx, plan.Hash, res.Reopened, len(d.moves) > 0)
		if err != nil {
			return err
		}
		if res.Moves, err = startMoves(ctx, qtx, d.moves, applyID, r.now()); err != nil {
			return err
		}
		if opts.OnMoves != nil && len(res.Moves) > 0 {
			if _, err := opts.OnMoves(ctx, tx, res.Moves); err != nil {
				return fmt.Errorf("queue the moves: %w", err)
			}
		}
		if opts.OnMoves != nil && len(d.underway) > 0 {
			if res.Resumed, err = opts.OnMoves(ctx, tx, d.underway); err != nil {
				return fmt.Errorf("queue the moves under way: %w", err)
			}
		}
		counts, err := qtx.FleetCounts(ctx)
		if err != nil {
			return err
		}
		res.Shards, res.Farms, res.Turbines, res.Retired = counts.Shards, counts.Farms, counts.Turbines, counts.Retired
		return nil
	})
	if err != nil {
		return ApplyResult{}, err
	}
	return res, nil
}

// effectiveFrom is the instant an apply's versions start: given's, else the
// registry's clock; refused before MinEffectiveFrom or in the future.
func (r *Registry) effectiveFrom(source string, given *time.Time) (time.Time, error) {
	now := r.now()
	at := now
	if given != nil {
		at = *given
		if err := CheckEffectiveFrom(at); err != nil {
			return at, &ValidationError{Source: source, Problems: []string{err.Error()}}
		}
	}
	if at.After(now) {
		return at, &ValidationError{Source: source, Problems: []string{fmt.Sprintf(
			"--effective-from %s is in the future (now %s); apply the file at that time",
			at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))}}
	}
	return at, nil
}

// preflight is what an apply checks before it creates anything: the file
// against the database (check), and shards it would repoint.
func (r *Registry) preflight(ctx context.Context, source string, plan *Plan, opts ApplyOptions) error {
	q := controldb.New(r.Pool)
	if err := r.check(ctx, q, source, plan); err != nil {
		return err
	}
	if opts.RepointShards {
		return nil
	}
	moved, err := r.repointed(ctx, q, plan)
	if err != nil {
		return err
	}
	if len(moved) > 0 {
		v := &ValidationError{Source: source}
		for _, m := range moved {
			v.Problems = append(v.Problems, m.problem())
		}
		return v
	}
	return nil
}

// farmRules reads the rules in force per farm.
func farmRules(ctx context.Context, q *controldb.Queries) (map[string]Rules, error) {
	rows, err := q.FarmRulesList(ctx)
	if err != nil {
		return nil, fmt.Errorf("farm rules: %w", err)
	}
	out := make(map[string]Rules, len(rows))
	for _, r := range rows {
		out[r.FarmRule.FarmID] = RulesFromRow(r.FarmRule)
	}
	return out, nil
}

func (r *Registry) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// zoneCheckDays is how far from today fleet apply compares Go's and
// Postgres's day bounds of a farm's zone.
const zoneCheckDays = 400

// check validates what only the database can: zones Postgres knows (the
// rollups compute local days in SQL), turbines that would change farms, and
// shard changes of a turbine already moving elsewhere.
func (r *Registry) check(ctx context.Context, q *controldb.Queries, source string, plan *Plan) error {
	var problems []string
	for i, f := range plan.Farms {
		if err := q.TimezoneCheck(ctx, f.Timezone); err != nil {
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "22023" { // invalid_parameter_value
				return err
			}
			problems = append(problems, fmt.Sprintf("farms[%d] (%s).timezone: unknown time zone %q (not in the database's time zone files)", i, f.ID, f.Timezone))
			continue
		}
		// Every farm-local day is bounded the same by Go (marks, the drain,
		// the schedule) and by Postgres (rollups, views), or the zone is
		// refused: 400 days back and forth from today.
		first := localday.DateOf(r.now().UTC()).AddDays(-zoneCheckDays)
		dis, err := localday.Check(ctx, q, f.Timezone, first, 2*zoneCheckDays+1)
		if err != nil {
			return err
		}
		if dis != nil {
			problems = append(problems, fmt.Sprintf("farms[%d] (%s).timezone: %v; use a region name (such as Europe/Paris) on which they agree", i, f.ID, dis))
		}
	}
	if dsnProblems := r.checkShards(plan); len(dsnProblems) > 0 {
		problems = append(problems, dsnProblems...)
	}
	existing, err := q.TurbinePlacements(ctx)
	if err != nil {
		return err
	}
	open, err := openMoves(ctx, q)
	if err != nil {
		return err
	}
	current := make(map[string]controldb.TurbinePlacementsRow, len(existing))
	for _, t := range existing {
		current[t.ID] = t
	}
	for _, t := range plan.Turbines {
		prev, ok := current[t.ID]
		if !ok {
			continue
		}
		if mv, ok := open[t.ID]; ok && t.Shard != mv.ToShard && t.Shard != prev.ShardName {
			problems = append(problems, fmt.Sprintf("turbine %q: shard %s, but it is moving from shard %s to %s (move %d, %s); wait until `orchestrator fleet moves` says done, then apply", t.ID, t.Shard, mv.FromShard, mv.ToShard, mv.ID, mv.State))
		}
		if prev.FarmID != t.FarmID {
			problems = append(problems, fmt.Sprintf("turbine %q: farm %s, but it is registered to farm %s and its history counts there; moving a turbine between farms is not supported (retire it and register a new id)", t.ID, t.FarmID, prev.FarmID))
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Source: source, Problems: problems}
	}
	return nil
}

// checkShards checks what depends on the control database's name: a shard
// without a DSN becomes database <control>_<shard>, and Postgres truncates
// names longer than 63 bytes (two shards could then share a database).
func (r *Registry) checkShards(plan *Plan) []string {
	var problems []string
	controlDB, err := pgserver.DatabaseName(r.ControlDSN)
	if err != nil {
		return []string{fmt.Sprintf("control database connection string: %v", err)}
	}
	for i, s := range plan.Shards {
		if s.DSN != "" {
			continue
		}
		if name := controlDB + "_" + s.Name; len(name) > MaxDatabaseName {
			problems = append(problems, fmt.Sprintf("shards[%d].name: %q makes database name %q of %d bytes; Postgres allows %d (shorten the shard name or give it a dsn)",
				i, s.Name, name, len(name), MaxDatabaseName))
		}
	}
	return problems
}

// shardDSN resolves a shard's connection string and database name. A shard
// without a DSN is database <control db>_<shard> on the control server.
func (r *Registry) shardDSN(name, dsn string) (string, string, error) {
	if dsn != "" {
		db, err := pgserver.DatabaseName(dsn)
		if err != nil {
			return "", "", fmt.Errorf("shard %s: dsn: %w", name, err)
		}
		return dsn, db, nil
	}
	controlDB, err := pgserver.DatabaseName(r.ControlDSN)
	if err != nil {
		return "", "", err
	}
	dbName := controlDB + "_" + name
	full, err := pgserver.WithDatabase(r.ControlDSN, dbName)
	return full, dbName, err
}

func migrateShard(ctx context.Context, name, dsn string) error {
	cfg, err := shardPoolConfig(name, dsn)
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("shard %s: %w", name, err)
	}
	defer pool.Close()
	if _, err := schema.MigrateShard(ctx, pool); err != nil {
		return fmt.Errorf("shard %s: %w", name, err)
	}
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// IsValidation reports whether err is a fleet-file problem, or an apply
// refused for the days it would change or what it would retire (exit
// code 2).
func IsValidation(err error) bool {
	var v *ValidationError
	var c *ChangesClosedDaysError
	var m *RetiresMissingError
	return errors.As(err, &v) || errors.As(err, &c) || errors.As(err, &m)
}
