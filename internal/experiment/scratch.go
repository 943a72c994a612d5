package experiment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/provision"
)

// Scratch creates, on the server of serverDSN, a control database of its
// own (galewatch_experiment_<random>) with the experiment's fleet and shard
// databases, provisioned as the orchestrator provisions any; the returned
// function drops them all. The operator's own databases are not touched.
func Scratch(ctx context.Context, serverDSN string, cfg Config) (Env, string, func(), error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "galewatch_experiment_" + hex.EncodeToString(b[:])
	plan, err := fleet.Parse("experiment", strings.NewReader(cfg.FleetYAML()))
	if err != nil {
		return Env{}, name, nil, err
	}
	if err := pgserver.EnsureDatabase(ctx, serverDSN, name); err != nil {
		return Env{}, name, nil, fmt.Errorf("experiment database: %w", err)
	}
	var pool *pgxpool.Pool
	var shards *fleet.Shards
	drop := func() {
		if shards != nil {
			shards.Close()
		}
		if pool != nil {
			pool.Close()
		}
		ctx := context.WithoutCancel(ctx)
		for _, s := range plan.Shards {
			_ = pgserver.DropDatabase(ctx, serverDSN, name+"_"+s.Name)
		}
		_ = pgserver.DropDatabase(ctx, serverDSN, name)
	}
	dsn, err := pgserver.WithDatabase(serverDSN, name)
	if err != nil {
		drop()
		return Env{}, name, nil, err
	}
	if pool, err = pgxpool.New(ctx, dsn); err != nil {
		drop()
		return Env{}, name, nil, err
	}
	res, err := provision.Provision(ctx, &fleet.Registry{Pool: pool, ControlDSN: dsn, Since: scratchSince}, provision.Options{Plan: plan, Source: "experiment", MaxShardConns: 10})
	if err != nil {
		drop()
		return Env{}, name, nil, fmt.Errorf("experiment databases: %w", err)
	}
	shards = res.Shards
	return Env{Control: pool, Shards: shards}, name, drop, nil
}

// scratchSince is when the scratch fleet's turbines entered service: before
// any reading a study writes.
var scratchSince = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
