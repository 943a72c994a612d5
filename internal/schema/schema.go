// Package schema applies the project's migrations: the control set and
// River's tables on the control database, the shard set on every shard.
// Applying twice is a no-op; two processes applying at once are serialised.
package schema

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

// riverLockKey serialises River's migrations across processes (goose has its
// own session lock; rivermigrate has none).
const riverLockKey = 0x6761_6c65_7276 // "galerv"

// Result says how many migrations each step applied.
type Result struct {
	Goose int
	River int
}

// MigrateControl applies the control migrations and River's.
func MigrateControl(ctx context.Context, pool *pgxpool.Pool) (Result, error) {
	n, err := gooseUp(ctx, pool, control.FS)
	if err != nil {
		return Result{}, fmt.Errorf("control migrations: %w", err)
	}
	r, err := riverUp(ctx, pool)
	if err != nil {
		return Result{}, fmt.Errorf("river migrations: %w", err)
	}
	return Result{Goose: n, River: r}, nil
}

// MigrateShard applies the shard migrations to one shard database.
func MigrateShard(ctx context.Context, pool *pgxpool.Pool) (Result, error) {
	n, err := gooseUp(ctx, pool, shard.FS)
	if err != nil {
		return Result{}, fmt.Errorf("shard migrations: %w", err)
	}
	return Result{Goose: n}, nil
}

func gooseUp(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS) (int, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return 0, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return 0, err
	}
	res, err := p.Up(ctx)
	return len(res), err
}

func riverUp(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	q := controldb.New(conn)
	if err := q.AdvisoryLock(ctx, riverLockKey); err != nil {
		return 0, err
	}
	defer func() { _ = q.AdvisoryUnlock(context.WithoutCancel(ctx), riverLockKey) }()

	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return 0, err
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return 0, err
	}
	return len(res.Versions), nil
}
