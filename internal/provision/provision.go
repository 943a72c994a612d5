// Package provision brings the databases to what this code expects, in one
// place: the control migrations and River's, the registry (when a fleet
// file is given: shard databases created and migrated), every registered
// shard's migrations, and the readings partitions ahead of today with
// retention applied. `migrate`, `fleet apply`, `serve`/`work` at start, the
// partitions job and the tests all go through it. Idempotent, and safe to
// run from several processes at once (goose's session lock, an advisory lock
// around River's migrations, advisory-locked partition creation).
package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/schema"
)

// Options says what to provision.
type Options struct {
	// Plan, if set, is applied to the registry (Source names it).
	Plan   *fleet.Plan
	Source string
	// Apply says from when the plan holds and whether it may reopen days.
	Apply fleet.ApplyOptions
	// Partitions lays out partitions from yesterday to PartitionsAhead
	// days after Now and applies retention (RetentionDays > 0).
	Partitions      bool
	Now             time.Time
	PartitionsAhead int
	RetentionDays   int
	// MaxShardConns sizes each shard's pool.
	MaxShardConns int32
	// SkipUnreachable (serve, work, ingest) goes on without a shard that
	// does not answer within 10 s: it is named in Result.Unreachable, its
	// migrations and partitions are left for the next start, and its work
	// fails until it answers. Without it (migrate, fleet apply) such a
	// shard fails provisioning.
	SkipUnreachable bool
}

// ShardReach bounds how long provisioning waits for a shard to answer
// before SkipUnreachable skips it.
const ShardReach = 10 * time.Second

// Result says what provisioning did and holds the shard pools it opened
// (the caller closes them).
type Result struct {
	Schema schema.Result
	Apply  *fleet.ApplyResult
	Shards *fleet.Shards
	// Unreachable names the shards SkipUnreachable skipped, with why.
	Unreachable map[string]error
}

// Provision runs every step in order.
func Provision(ctx context.Context, reg *fleet.Registry, opts Options) (Result, error) {
	var res Result
	var err error
	if res.Schema, err = schema.MigrateControl(ctx, reg.Pool); err != nil {
		return res, err
	}
	if opts.Plan != nil {
		applied, err := reg.ApplyWith(ctx, opts.Source, opts.Plan, opts.Apply)
		if err != nil {
			return res, err
		}
		res.Apply = &applied
	}
	if res.Shards, err = reg.OpenShards(ctx, opts.MaxShardConns); err != nil {
		return res, err
	}
	if opts.SkipUnreachable {
		res.Unreachable, err = res.Shards.MigrateReachable(ctx, ShardReach)
	} else {
		err = res.Shards.Migrate(ctx)
	}
	if err != nil {
		res.Shards.Close()
		return res, err
	}
	if opts.Partitions {
		if err := partitions(ctx, reg.Pool, res.Shards, opts.Now, opts.PartitionsAhead, opts.RetentionDays, res.Unreachable); err != nil {
			res.Shards.Close()
			return res, err
		}
	}
	return res, nil
}

// Partitions lays out every shard's partitions from yesterday to `ahead`
// days after now and applies retention (farm-local days, see
// partition.RetentionHorizon): readings partitions, then the windows of
// the days they held, then refused lines (fleet_rules). The partitions job
// runs it hourly.
func Partitions(ctx context.Context, control *pgxpool.Pool, shards *fleet.Shards, now time.Time, ahead, retentionDays int) error {
	return partitions(ctx, control, shards, now, ahead, retentionDays, nil)
}

func partitions(ctx context.Context, control *pgxpool.Pool, shards *fleet.Shards, now time.Time, ahead, retentionDays int, skip map[string]error) error {
	horizon, err := partition.RetentionHorizon(ctx, control, now, retentionDays)
	if err != nil {
		return err
	}
	cuts, err := partition.WindowCuts(ctx, control, horizon)
	if err != nil {
		return err
	}
	// One budget for every trim of this pass (a backlog goes on at the
	// next); each batch statement ends on its own.
	deadline := time.Now().Add(TrimBudget)
	// Each shard on its own bound: one that is down or hangs must not keep
	// the others from their partitions.
	var errs []error
	trimmed := map[string]map[string]bool{} // shard -> farms whose cut days it no longer holds
	for _, name := range shards.Names() {
		if skip[name] != nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, ShardPartitionsTimeout)
		_, err := partition.Maintain(sctx, shards.Pool(name), now, ahead, horizon)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %s partitions: %w", name, err))
			continue
		}
		if len(cuts) == 0 {
			continue
		}
		// Only after its partitions are dropped: the shard has recorded the
		// cut, so the rollup refuses the days whose windows go here.
		tctx, cancel := context.WithTimeout(ctx, ShardTrimTimeout)
		done, err := partition.TrimShardWindows(tctx, shards.Pool(name), name, cuts, deadline)
		cancel()
		trimmed[name] = done
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %s window retention: %w", name, err))
		}
	}
	// A farm's control rows go once every shard of the farm has lost its
	// own, so no part is left on a shard for a day gone here.
	ready := func(c partition.WindowCut) bool {
		for _, s := range c.Shards {
			if !trimmed[s][c.FarmID] {
				return false
			}
		}
		return true
	}
	if err := partition.TrimControlWindows(ctx, control, cuts, ready, deadline); err != nil {
		errs = append(errs, err)
	}
	if err := partition.TrimRejects(ctx, control, now, deadline); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ShardPartitionsTimeout bounds the partition upkeep of one shard.
const ShardPartitionsTimeout = 15 * time.Second

// TrimBudget bounds the retention deletes of one upkeep pass (between
// batches; the rest waits for the next pass), so a start or an hourly job
// is not held by a backlog (retention just switched on after a year).
const TrimBudget = 20 * time.Second

// ShardTrimTimeout bounds one shard's retention deletes: the budget, and
// the batch running when it ran out.
const ShardTrimTimeout = TrimBudget + 30*time.Second
