// Package testdb gives each test its own databases on a real Postgres: the
// server behind DATABASE_URL, or else the project's embedded cluster (the
// same pgserver code `make run` uses), started on first use. Databases are
// migrated from the real migrations and dropped when the test ends.
package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/provision"
)

// Hang bounds a step of a test that should take seconds: it only catches
// a hang. Generous on purpose: a second make test beside this one (load
// 16-23 on 2 cores) made steps that take 20-30 s alone run past 3 minutes.
const Hang = 10 * time.Minute

// MaintenanceDSN returns a DSN for the server's maintenance database
// (postgres), starting the embedded cluster when DATABASE_URL is unset.
func MaintenanceDSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("DATABASE_URL"); dsn != "" {
		m, err := pgserver.WithDatabase(dsn, "postgres")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	home := Home(t)
	embeddedMu.Lock()
	defer embeddedMu.Unlock()
	if url, ok := embeddedUp[home]; ok {
		return url
	}
	s := pgserver.New(home)
	s.Settings = testSettings
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Up(ctx); err != nil {
		t.Fatalf("start embedded postgres: %v", err)
	}
	embeddedUp[home] = s.URL("postgres")
	return embeddedUp[home]
}

// testSettings are the test cluster's, after the embedded default's: it is
// discarded when make test ends, never recovered after an OS crash, so
// nothing is forced to disk. Each DROP DATABASE (the experiment command's
// scratch databases) and CREATE DATABASE … STRATEGY FILE_COPY waits for a
// checkpoint, which with fsync flushed up to shared_buffers of the clones
// every other test was writing. No autovacuum: the launcher starts a worker
// in each database every autovacuum_naptime, and make test keeps its ~600
// databases until it ends: an idle cluster of 622 spent a third of a core
// on workers (~31 ms each) that found nothing to do. A test whose plans
// depend on statistics sets them (ANALYZE, ForgetStatistics).
var testSettings = []string{
	"fsync = off",
	"synchronous_commit = off",
	"full_page_writes = off",
	"autovacuum = off",
}

// The embedded cluster is started (or found running) once per test binary.
var (
	embeddedMu sync.Mutex
	embeddedUp = map[string]string{}
)

// Home is the embedded cluster folder: $GALEWATCH_HOME (make test's own,
// .galewatch/test), else .galewatch at the repository root.
func Home(t testing.TB) string {
	if h := os.Getenv("GALEWATCH_HOME"); h != "" {
		return h
	}
	return filepath.Join(RepoRoot(t), ".galewatch")
}

// RepoRoot is the repository's root folder (found by walking up to go.mod).
func RepoRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testdb: no go.mod above the working directory")
		}
		dir = parent
	}
}

// NewDatabase creates an empty database with a unique name and returns its
// DSN; it is dropped (with any <name>_* shard databases) when the test ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "")
}

// newDatabase creates the test's database, empty or cloned from the
// template of kind (templateControl, templateShard).
func newDatabase(t testing.TB, kind string) string {
	t.Helper()
	maint := MaintenanceDSN(t)
	sweepOnce(maint)
	name := databaseName(t)
	ctx := context.Background()
	if kind == "" {
		pool, err := maintPool(maint)
		Must(t, err, "connect to create %s", name)
		_, err = pool.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		Must(t, err, "create %s", name)
	} else {
		cloneDatabase(t, maint, kind, name)
	}
	t.Cleanup(func() {
		if os.Getenv("GALEWATCH_KEEP_TEST_DBS") != "" {
			return
		}
		// The database and every shard database named after it (any
		// shard name: s1, s-1, ...), dropped by the next sweep (sweep.go).
		markDone(maint, databasesOf(maint, name))
	})
	dsn, err := pgserver.WithDatabase(maint, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// The test binary's sessions on each server's maintenance database, kept
// open: creating, cloning and marking a test's databases reuse them. A new
// session costs ~40 ms of server CPU on this kind of machine (fork, start,
// exit), and a run opened about 500 for this alone.
var (
	maintMu    sync.Mutex
	maintPools = map[string]*pgxpool.Pool{}
)

func maintPool(maint string) (*pgxpool.Pool, error) {
	maintMu.Lock()
	defer maintMu.Unlock()
	if p, ok := maintPools[maint]; ok {
		return p, nil
	}
	cfg, err := pgxpool.ParseConfig(maint)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 4
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	maintPools[maint] = p
	return p, nil
}

// databaseName is a unique gwt_* database name for the test.
func databaseName(t testing.TB) string {
	return "gwt_" + strings.ToLower(sanitize(t.Name())) + "_" + randomHex(5)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// databasesOf lists name and the databases named name_<anything>.
func databasesOf(maint, name string) []string {
	ctx := context.Background()
	conn, err := maintPool(maint)
	if err != nil {
		return []string{name}
	}
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname = $1 OR starts_with(datname, $1 || '_')`, name)
	if err != nil {
		return []string{name}
	}
	dbs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return []string{name}
	}
	return dbs
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 24 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Pool opens a pool on dsn, closed when the test ends. Its sessions run
// with jit off, as the orchestrator's and the shards' do (app.go,
// Registry.OpenShards): a test's statements are planned as the pipeline's.
func Pool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 10
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Env is a migrated control database, optionally with a fleet applied and
// its shard databases created and migrated.
type Env struct {
	ControlDSN string
	Control    *pgxpool.Pool
	Registry   *fleet.Registry
	Shards     *fleet.Shards
	Plan       *fleet.Plan
}

// New creates a control database provisioned the way the orchestrator
// provisions one (internal/provision). If fleetYAML is not empty it is
// applied (creating shard databases <control>_<shard>). Partitions are left
// to the writers (created on demand), as in a test nothing is "today".
// The databases are clones: of migrated templates when there is no fleet
// or a shard has a DSN of its own, else of the fleet's provisioned set
// (fleetFixture), built once per test binary.
func New(t testing.TB, fleetYAML string) *Env {
	t.Helper()
	if fleetYAML == "" {
		return provisioned(t, newDatabase(t, templateControl), nil)
	}
	plan, err := fleet.Parse("test", strings.NewReader(fleetYAML))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Shards {
		if s.DSN != "" { // a server of the test's own: provision it here
			return provisioned(t, newDatabase(t, templateControl), plan)
		}
	}
	return fromFleetFixture(t, fleetYAML, plan)
}

// provisioned provisions the migrated control database dsn, applying plan
// when it is not nil (its empty shard databases cloned from the shard
// template first, as fleet.Apply would create them).
func provisioned(t testing.TB, dsn string, plan *fleet.Plan) *Env {
	t.Helper()
	ctx := context.Background()
	pool := Pool(t, dsn)
	env := &Env{ControlDSN: dsn, Control: pool, Registry: &fleet.Registry{Pool: pool, ControlDSN: dsn, Since: FleetSince}, Plan: plan}
	opts := provision.Options{MaxShardConns: 10, Source: "test", Plan: plan}
	if plan != nil {
		control, err := pgserver.DatabaseName(dsn)
		Must(t, err, "control database name")
		maint := MaintenanceDSN(t)
		for _, s := range plan.Shards {
			if s.DSN == "" {
				cloneDatabase(t, maint, templateShard, control+"_"+s.Name)
			}
		}
	}
	res, err := provision.Provision(ctx, env.Registry, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.Shards.Close)
	env.Shards = res.Shards
	return env
}

// A fleet fixture is a control database with a fleet applied and its
// shard databases (<name>_<shard>), provisioned once per test binary and
// fleet, sealed, and cloned for each test that asks for that fleet: a
// provisioning (every database's migrations checked, the fleet applied,
// a dozen sessions) cost ~1.5 core-s, five clones a fraction of that.
var (
	fleetFixturesMu sync.Mutex
	fleetFixtures   = map[string]*fleetFixture{} // sha256 of the fleet file -> fixture
)

type fleetFixture struct {
	once   sync.Once
	name   string // control database; shards are name_<shard>
	shards []string
	err    error
}

func fromFleetFixture(t testing.TB, fleetYAML string, plan *fleet.Plan) *Env {
	t.Helper()
	maint := MaintenanceDSN(t)
	sweepOnce(maint)
	sum := sha256.Sum256([]byte(fleetYAML))
	key := hex.EncodeToString(sum[:])
	fleetFixturesMu.Lock()
	fx, ok := fleetFixtures[key]
	if !ok {
		fx = &fleetFixture{}
		fleetFixtures[key] = fx
	}
	fleetFixturesMu.Unlock()
	fx.once.Do(func() { fx.err = fx.build(maint, key[:12], plan) })
	Must(t, fx.err, "provision the fleet fixture")

	name := databaseName(t)
	cloneFrom(t, maint, fx.name, name)
	for _, s := range fx.shards {
		cloneFrom(t, maint, fx.name+"_"+s, name+"_"+s)
	}
	t.Cleanup(func() {
		if os.Getenv("GALEWATCH_KEEP_TEST_DBS") == "" {
			markDone(maint, databasesOf(maint, name))
		}
	})
	dsn, err := pgserver.WithDatabase(maint, name)
	Must(t, err, "test database DSN")
	ctx := context.Background()
	pool := Pool(t, dsn)
	// The registry names each shard's database, as fleet.Apply wrote it
	// for the fixture's (the DSN itself is derived from the control's name).
	Exec(t, pool, "UPDATE shard SET database = $1 || '_' || name WHERE dsn IS NULL", name)
	env := &Env{ControlDSN: dsn, Control: pool, Registry: &fleet.Registry{Pool: pool, ControlDSN: dsn, Since: FleetSince}, Plan: plan}
	shards, err := env.Registry.OpenShards(ctx, 10)
	Must(t, err, "open the shards")
	t.Cleanup(shards.Close)
	env.Shards = shards
	return env
}

// build provisions the fixture in a t-less way (its failure is reported to
// every test that asks) and seals its databases: no session may stay in a
// database being cloned.
func (fx *fleetFixture) build(maint, key string, plan *fleet.Plan) error {
	ctx := context.Background()
	fx.name = "gwt_fleet_" + key + "_" + randomHex(4)
	conn, err := maintPool(maint)
	if err != nil {
		return err
	}
	tplControl, err := templateOf(maint, templateControl)
	if err != nil {
		return err
	}
	tplShard, err := templateOf(maint, templateShard)
	if err != nil {
		return err
	}
	create := func(name, tpl string) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tpl}.Sanitize())
		return err
	}
	if err := create(fx.name, tplControl); err != nil {
		return err
	}
	all := []string{fx.name}
	// Done from the start, as fixtures are: the next sweep after this
	// binary drops them.
	defer func() { markDone(maint, all) }()
	for _, s := range plan.Shards {
		fx.shards = append(fx.shards, s.Name)
		all = append(all, fx.name+"_"+s.Name)
		if err := create(fx.name+"_"+s.Name, tplShard); err != nil {
			return err
		}
	}
	dsn, err := pgserver.WithDatabase(maint, fx.name)
	if err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	reg := &fleet.Registry{Pool: pool, ControlDSN: dsn, Since: FleetSince}
	res, err := provision.Provision(ctx, reg, provision.Options{MaxShardConns: 10, Source: "test", Plan: plan})
	if res.Shards != nil {
		res.Shards.Close()
	}
	pool.Close()
	if err != nil {
		return err
	}
	for _, db := range all {
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{db}.Sanitize()+" WITH ALLOW_CONNECTIONS false"); err != nil {
			return err
		}
	}
	return nil
}

// FleetSince is when a test's fleet took effect: long before any reading a
// test writes (a fleet applied on the test's day would put its turbines in
// service from that day only). A test of that rule applies with its own
// instant (fleet.ApplyOptions).
var FleetSince = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// DemoFleet returns the contents of fleet/demo.yaml.
func DemoFleet(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot(t), "fleet", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ArdnaveFleet is the demo fleet's shape at the demo's size: Ardnave Point
// (300 turbines) split over three shards, Kilmore Sands (140) on a fourth.
// A rollup of one of its days writes a turbine_window row per turbine and
// minute (633,600), so tests whose claim does not depend on scale use
// SmallFleet.
const ArdnaveFleet = `
shards:
  - name: s1
  - name: s2
  - name: s3
  - name: s4
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    turbines:
      - {prefix: AP-, from: 1, to: 100, shard: s1}
      - {prefix: AP-, from: 101, to: 200, shard: s2}
      - {prefix: AP-, from: 201, to: 300, shard: s3}
  - id: kilmore-sands
    name: Kilmore Sands
    timezone: Europe/Dublin
    turbines:
      - {prefix: KS-, from: 1, to: 140, shard: s4}
`

// SmallFleet is ArdnaveFleet's shape on 12 and 10 turbines: Ardnave Point
// over s1-s3 (AP-001..004, AP-101..104, AP-201..204), Kilmore Sands on s4
// (KS-001..010).
const SmallFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}, {name: s4}]
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    turbines:
      - {prefix: AP-, from: 1, to: 4, shard: s1}
      - {prefix: AP-, from: 101, to: 104, shard: s2}
      - {prefix: AP-, from: 201, to: 204, shard: s3}
  - id: kilmore-sands
    name: Kilmore Sands
    timezone: Europe/Dublin
    turbines:
      - {prefix: KS-, from: 1, to: 10, shard: s4}
`

// Exec runs one statement for a test's own setup or inspection.
func Exec(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// Int runs a query returning one integer.
func Int(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// Text runs a query returning one text value.
func Text(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// Must fails the test on err.
func Must(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// ShardDatabase creates a database of its own for the test, migrated to the
// shard schema (no fleet, no control database), and returns a pool on it.
func ShardDatabase(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return Pool(t, newDatabase(t, templateShard))
}

// ForgetStatistics leaves the planner, inside tx, knowing of the tables
// what it knows of tables nobody has analysed yet (no column statistics,
// no row count): the state right after a day's first rows are written,
// before autovacuum comes. Rolled back with tx.
func ForgetStatistics(ctx context.Context, tx pgx.Tx, tables ...string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM pg_statistic WHERE starelid = ANY ($1::text[]::regclass[])`, tables); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE oid = ANY ($1::text[]::regclass[])`, tables)
	return err
}

// IndexBlocks is how many index pages tx has asked for on table's indexes
// so far (from shared buffers or disk): a range scan reads its leaf pages
// once, an = ANY index condition descends from the root once per element.
func IndexBlocks(ctx context.Context, tx pgx.Tx, table string) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `SELECT coalesce((SELECT sum(pg_stat_get_xact_blocks_fetched(indexrelid)) FROM pg_index WHERE indrelid = $1::regclass), 0)::bigint`,
		table).Scan(&n)
	return n, err
}

// TableReads is what tx has read of table so far: the rows returned by
// sequential scans, and the entries returned by its indexes (a bitmap
// index scan counts each entry twice).
func TableReads(ctx context.Context, tx pgx.Tx, table string) (seqRows, indexEntries int64, err error) {
	err = tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_returned($1::regclass),
		coalesce((SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) FROM pg_index WHERE indrelid = $1::regclass), 0)::bigint`,
		table).Scan(&seqRows, &indexEntries)
	return seqRows, indexEntries, err
}
