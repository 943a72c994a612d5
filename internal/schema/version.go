package schema

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

// Version is where a database's goose migrations stand against the ones
// this build embeds, compared as sets: a database missing a lower version
// (applied out of order, or its row deleted) is not current even when its
// highest version is this build's latest.
type Version struct {
	// Applied is the highest version recorded as applied in the database.
	Applied int64 `json:"applied"`
	// Latest is the highest version this build embeds.
	Latest int64 `json:"latest"`
	// Missing lists the versions this build embeds that the database has
	// not applied, lowest first.
	Missing []int64 `json:"missing,omitempty"`
	// Unknown lists the versions the database has applied that this build
	// does not embed (another build migrated it), lowest first.
	Unknown []int64 `json:"unknown,omitempty"`
}

// Current reports whether the database has applied exactly this build's
// migrations: one missing, the code expects tables it does not have; one
// unknown, another build changed it and this one may not know what.
func (v Version) Current() bool { return len(v.Missing) == 0 && len(v.Unknown) == 0 }

// OutOfOrder reports whether a missing version lies below the highest
// applied one: `migrate` (goose without out-of-order migrations) refuses
// to apply it.
func (v Version) OutOfOrder() bool { return len(v.Missing) > 0 && v.Missing[0] < v.Applied }

// ControlVersion reads the control database's migrations. It only reads:
// no migration is applied and no lock is taken, so it neither waits for
// nor blocks a migration in progress.
func ControlVersion(ctx context.Context, pool *pgxpool.Pool) (Version, error) {
	return gooseVersion(ctx, pool, control.FS)
}

// ShardVersion reads a shard database's migrations (as ControlVersion).
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
	store, err := database.NewStore(database.DialectPostgres, goose.DefaultTablename)
	if err != nil {
		return Version{}, err
	}
	rows, err := store.ListMigrations(ctx, db)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: never migrated
		rows, err = nil, nil
	}
	if err != nil {
		return Version{}, err
	}
	embedded := make([]int64, 0, len(p.ListSources()))
	for _, src := range p.ListSources() {
		embedded = append(embedded, src.Version)
	}
	return compareVersions(embedded, rows), nil
}

// compareVersions compares the embedded versions with goose's rows (newest
// first: a version's first row says whether it is applied now).
func compareVersions(embedded []int64, rows []*database.ListMigrationsResult) Version {
	var v Version
	seen := map[int64]bool{}
	applied := map[int64]bool{}
	for _, r := range rows {
		if seen[r.Version] || r.Version == 0 {
			continue
		}
		seen[r.Version] = true
		if r.IsApplied {
			applied[r.Version] = true
			v.Applied = max(v.Applied, r.Version)
		}
	}
	for _, e := range embedded {
		v.Latest = max(v.Latest, e)
		if !applied[e] {
			v.Missing = append(v.Missing, e)
		}
		delete(applied, e)
	}
	v.Unknown = slices.Sorted(maps.Keys(applied))
	if len(v.Unknown) == 0 {
		v.Unknown = nil
	}
	slices.Sort(v.Missing)
	return v
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
