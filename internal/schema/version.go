package schema

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

// Version is where a database's goose migrations stand against the ones
// this build embeds.
type Version struct {
	// Applied is the highest version recorded in the database.
	Applied int64 `json:"applied"`
	// Latest is the highest version this build embeds.
	Latest int64 `json:"latest"`
}

// Current reports whether the database is at exactly this build's latest
// version: behind, the code expects tables it does not have; ahead, a newer
// build migrated it and this one may not know what changed.
func (v Version) Current() bool { return v.Applied == v.Latest }

// ControlVersion reads the control database's migration version. It only
// reads: no migration is applied and no lock is taken, so it neither
// waits for nor blocks a migration in progress.
func ControlVersion(ctx context.Context, pool *pgxpool.Pool) (Version, error) {
	return gooseVersion(ctx, pool, control.FS)
}

// ShardVersion reads a shard database's migration version (as ControlVersion).
func ShardVersion(ctx context.Context, pool *pgxpool.Pool) (Version, error) {
	return gooseVersion(ctx, pool, shard.FS)
}

func gooseVersion(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS) (Version, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return Version{}, err
	}
	applied, latest, err := p.GetVersions(ctx)
	return Version{Applied: applied, Latest: latest}, err
}

// RiverPending says which of River's migrations are not applied to the
// control database ("" when none).
func RiverPending(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return "", err
	}
	res, err := m.Validate(ctx, nil)
	if err != nil || res.OK {
		return "", err
	}
	return strings.Join(res.Messages, "; "), nil
}
