package testdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

// A test database is cloned from a template migrated once per schema
// version (CREATE DATABASE ... TEMPLATE, as River's riverdbtest reuses its
// migrated schemas): migrating a control database and River's tables costs
// seconds, cloning one a fraction of that. A template's name carries a hash
// of the migrations it holds, so a changed migration builds a new template
// and a stale one is never cloned.
const (
	templateControl = "control"
	templateShard   = "shard"
)

var (
	templatesMu sync.Mutex
	templates   = map[string]string{} // kind -> template database name, per test binary
)

// templateName is gwt_tpl_<kind>_<hash of the kind's migrations (and River's, for control)>.
func templateName(kind string) (string, error) {
	h := sha256.New()
	fsys := shard.FS
	if kind == templateControl {
		fsys = control.FS
		// River's migrations, by their text: a library's test binary
		// carries no module versions in its build info (a main package's
		// does), so hashing River's version built a template per kind of
		// binary.
		m, err := rivermigrate.New(riverpgxv5.New(nil), nil)
		if err != nil {
			return "", err
		}
		for _, v := range m.AllVersions() {
			fmt.Fprintf(h, "river %d %s\n", v.Version, v.SQLUp)
		}
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return "gwt_tpl_" + kind + "_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// template returns the template database of kind on the server behind
// maint, building it when this schema version has none. Several test
// binaries may build at once: each migrates a database of its own and
// renames it into place; the loser of the rename drops its copy.
func template(t testing.TB, maint, kind string) string {
	t.Helper()
	name, err := templateOf(maint, kind)
	Must(t, err, "template %s", kind)
	return name
}

func templateOf(maint, kind string) (string, error) {
	templatesMu.Lock()
	defer templatesMu.Unlock()
	if name, ok := templates[kind]; ok {
		return name, nil
	}
	name, err := templateName(kind)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	present, err := databaseExists(ctx, maint, name)
	if err != nil {
		return "", fmt.Errorf("look for template %s: %w", name, err)
	}
	if !present {
		if err := buildTemplate(ctx, maint, kind, name); err != nil {
			return "", fmt.Errorf("build template %s: %w", name, err)
		}
	}
	templates[kind] = name
	return name, nil
}

func buildTemplate(ctx context.Context, maint, kind, name string) error {
	build := fmt.Sprintf("gwt_tplbuild_%s_%s", kind, randomHex(5))
	if err := pgserver.EnsureDatabase(ctx, maint, build); err != nil {
		return err
	}
	dsn, err := pgserver.WithDatabase(maint, build)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	if kind == templateControl {
		_, err = schema.MigrateControl(ctx, pool)
	} else {
		_, err = schema.MigrateShard(ctx, pool)
	}
	pool.Close()
	if err != nil {
		_ = pgserver.DropDatabase(ctx, maint, build)
		return err
	}
	conn, err := pgx.Connect(ctx, maint)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// Nobody connects to a template: a session in it would make every clone
	// fail ("source database is being accessed by other users").
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{build}.Sanitize()+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{build}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize()); err != nil {
		_ = pgserver.DropDatabase(ctx, maint, build)
		if strings.Contains(err.Error(), "already exists") {
			return nil // another test binary built it meanwhile
		}
		return err
	}
	// The build time, so that stale templates are dropped only once no test
	// binary of another schema version (another branch on a shared
	// DATABASE_URL) can still be cloning them.
	_, _ = conn.Exec(ctx, "COMMENT ON DATABASE "+pgx.Identifier{name}.Sanitize()+" IS "+quote(templateComment+time.Now().UTC().Format(time.RFC3339)))
	dropStaleTemplates(ctx, conn, kind, name)
	return nil
}

const templateComment = "galewatch test template, built "

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// dropStaleTemplates drops this kind's templates of other schema versions
// (a migration changed since they were built) that are more than a day old.
func dropStaleTemplates(ctx context.Context, conn *pgx.Conn, kind, keep string) {
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database
		WHERE starts_with(datname, $1) AND datname <> $2
		  AND coalesce(substr(shobj_description(oid, 'pg_database'), length($3) + 1), '') < to_char(now() AT TIME ZONE 'UTC' - interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`,
		"gwt_tpl_"+kind+"_", keep, templateComment)
	if err != nil {
		return
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, db := range stale {
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize())
	}
}

func databaseExists(ctx context.Context, maint, name string) (bool, error) {
	conn, err := maintPool(maint)
	if err != nil {
		return false, err
	}
	var present bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&present)
	return present, err
}

// cloneDatabase creates database name as a copy of the template of kind.
func cloneDatabase(t testing.TB, maint, kind, name string) {
	t.Helper()
	tpl := template(t, maint, kind)
	ctx := context.Background()
	conn, err := maintPool(maint)
	Must(t, err, "connect to clone %s", name)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tpl}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // dropped by hand since: build it again
		templatesMu.Lock()
		delete(templates, kind)
		templatesMu.Unlock()
		tpl = template(t, maint, kind)
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tpl}.Sanitize())
	}
	Must(t, err, "create %s from %s", name, tpl)
}

// A fixture is a database some tests read and none should build alone (30
// days of windows, a month of readings): built once per test binary into a
// clone of the control template, then cloned for each test that asks, as
// the templates are. A clone carries the fixture's statistics (ANALYZE),
// so a test of plans sees what the builder analysed.
var (
	fixturesMu sync.Mutex
	fixtures   = map[string]string{} // key -> fixture database, per test binary
)

// Fixture returns the DSN of the test's own copy of the fixture key: a
// migrated control database into which build wrote (once per test binary,
// the first caller's build; key names what build writes). The copy is
// dropped like the test's other databases.
func Fixture(t testing.TB, key string, build func(ctx context.Context, pool *pgxpool.Pool) error) string {
	t.Helper()
	maint := MaintenanceDSN(t)
	sweepOnce(maint)
	name := databaseName(t)
	cloneFrom(t, maint, fixture(t, maint, key, build), name)
	t.Cleanup(func() {
		if os.Getenv("GALEWATCH_KEEP_TEST_DBS") == "" {
			markDone(maint, []string{name})
		}
	})
	dsn, err := pgserver.WithDatabase(maint, name)
	Must(t, err, "fixture copy DSN")
	return dsn
}

func fixture(t testing.TB, maint, key string, build func(ctx context.Context, pool *pgxpool.Pool) error) string {
	t.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if name, ok := fixtures[key]; ok {
		return name
	}
	ctx := context.Background()
	name := "gwt_fix_" + strings.ToLower(sanitize(key)) + "_" + randomHex(5)
	cloneDatabase(t, maint, templateControl, name)
	dsn, err := pgserver.WithDatabase(maint, name)
	Must(t, err, "fixture DSN")
	pool := Pool(t, dsn)
	Must(t, build(ctx, pool), "build fixture %s", key)
	pool.Close()
	conn, err := maintPool(maint)
	Must(t, err, "connect to seal fixture %s", key)
	// No session may stay in a database being cloned.
	_, err = conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH ALLOW_CONNECTIONS false")
	Must(t, err, "seal fixture %s", key)
	// Done from the start: the next sweep after this binary drops it.
	markDone(maint, []string{name})
	fixtures[key] = name
	return name
}

// cloneFrom creates database name as a copy of database tpl.
func cloneFrom(t testing.TB, maint, tpl, name string) {
	t.Helper()
	ctx := context.Background()
	conn, err := maintPool(maint)
	Must(t, err, "connect to clone %s", name)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tpl}.Sanitize())
	Must(t, err, "create %s from %s", name, tpl)
}
