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
	// Partitions lays out partitions from yesterday to PartitionsAhead
	// days after Now and applies retention (RetentionDays > 0).
	Partitions      bool
	Now             time.Time
	PartitionsAhead int
	RetentionDays   int
	// MaxShardConns sizes each shard's pool.
	MaxShardConns int32
}

// Result says what provisioning did and holds the shard pools it opened
// (the caller closes them).
type Result struct {
	Schema schema.Result
	Apply  *fleet.ApplyResult
	Shards *fleet.Shards
}

// Provision runs every step in order.
func Provision(ctx context.Context, reg *fleet.Registry, opts Options) (Result, error) {
	var res Result
	var err error
	if res.Schema, err = schema.MigrateControl(ctx, reg.Pool); err != nil {
		return res, err
	}
	if opts.Plan != nil {
		applied, err := reg.Apply(ctx, opts.Source, opts.Plan)
		if err != nil {
			return res, err
		}
		res.Apply = &applied
	}
	if res.Shards, err = reg.OpenShards(ctx, opts.MaxShardConns); err != nil {
		return res, err
	}
	if err := res.Shards.Migrate(ctx); err != nil {
		res.Shards.Close()
		return res, err
	}
	if opts.Partitions {
		if err := Partitions(ctx, reg.Pool, res.Shards, opts.Now, opts.PartitionsAhead, opts.RetentionDays); err != nil {
			res.Shards.Close()
			return res, err
		}
	}
	return res, nil
}

// Partitions lays out every shard's partitions from yesterday to `ahead`
// days after now and applies retention (farm-local days, see
// partition.RetentionHorizon). The partitions job runs it hourly.
func Partitions(ctx context.Context, control *pgxpool.Pool, shards *fleet.Shards, now time.Time, ahead, retentionDays int) error {
	horizon, err := partition.RetentionHorizon(ctx, control, now, retentionDays)
	if err != nil {
		return err
	}
	for _, name := range shards.Names() {
		if _, err := partition.Maintain(ctx, shards.Pool(name), now, ahead, horizon); err != nil {
			return fmt.Errorf("shard %s partitions: %w", name, err)
		}
	}
	return nil
}
