package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/provision"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/schema"
)

// Config is everything the orchestrator reads from its environment.
type Config struct {
	// Home is the embedded cluster's folder ($GALEWATCH_HOME, default .galewatch).
	Home string
	// DatabaseURL is the control database ($DATABASE_URL); empty = embedded default.
	DatabaseURL string
	// RetentionDays drops readings partitions older than this many days
	// ($GALEWATCH_RETENTION_DAYS; 0 = keep everything).
	RetentionDays int
	// PartitionsAhead is how many days of partitions exist ahead of today.
	PartitionsAhead int
	// Ingest sizes and times the write pipeline (never what a count means:
	// those rules live in the control database, from the fleet file).
	Ingest ingest.Config
}

// retiredRuleEnv are environment variables that once set rules defining
// stored counts. They are refused, not ignored: an operator who sets one
// expects it to act.
var retiredRuleEnv = []string{"GALEWATCH_LANE_THRESHOLD", "GALEWATCH_EARLY_TOLERANCE", "GALEWATCH_FUTURE_LIMIT", "GALEWATCH_MAX_AGE"}

// checkRetiredEnv fails when one of retiredRuleEnv is set.
func checkRetiredEnv() error {
	for _, name := range retiredRuleEnv {
		if os.Getenv(name) != "" {
			return fmt.Errorf("%s is no longer read: the rules that define stored counts live in the control database, set by the fleet file (rules:, or a farm's rules:); see farm_rules", name)
		}
	}
	return nil
}

// ConfigFromEnv reads Config from the environment.
func ConfigFromEnv() Config {
	c := Config{Home: pgserver.DefaultHome(), DatabaseURL: os.Getenv("DATABASE_URL"), PartitionsAhead: 7, Ingest: ingest.DefaultConfig()}
	if v, err := strconv.Atoi(os.Getenv("GALEWATCH_RETENTION_DAYS")); err == nil && v > 0 {
		c.RetentionDays = v
	}
	return c
}

// Main is the program: configuration, the clock, and connections opened on
// first use. End-to-end tests build one and run its commands in-process.
type Main struct {
	Config Config
	Now    func() time.Time
	// MoveGrace, when set, replaces move.DefaultGrace, a move's wait from
	// its switch to its fence (tests: a few seconds).
	MoveGrace time.Duration

	controlDSN  string
	control     *pgxpool.Pool
	shards      *fleet.Shards
	provisioned *schema.Result  // set once provisioned in this process
	retired     []*fleet.Shards // replaced by a later provisioning; closed by Close
	// unreachable names the shards skipped at start (Migrate), with why.
	unreachable map[string]error
	// live is this process's live-first signals (LiveSignals).
	live *livefirst.Signals
}

// LiveSignals returns (once) this process's live-first signals, one per
// shard, held while raised until ctx ends: serve's live ingest and the fast
// path raise them; replays and corrections everywhere wait on them.
func (m *Main) LiveSignals(ctx context.Context) (*livefirst.Signals, error) {
	if m.live != nil {
		return m.live, nil
	}
	shards, err := m.Shards(ctx)
	if err != nil {
		return nil, err
	}
	m.live = livefirst.NewSignals(shards.Names(), shards.Pool)
	go m.live.Run(ctx)
	return m.live, nil
}

// NewMain returns a Main configured from the environment.
func NewMain() *Main {
	return &Main{Config: ConfigFromEnv(), Now: time.Now}
}

// Control opens (once) the control database pool, starting the embedded
// cluster when DATABASE_URL is unset.
func (m *Main) Control(ctx context.Context) (*pgxpool.Pool, error) {
	if m.control != nil {
		return m.control, nil
	}
	dsn := m.Config.DatabaseURL
	if dsn == "" {
		var err error
		if dsn, err = embeddedControlURL(ctx, m.Config.Home); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("control database: %w", err)
	}
	// River, the drains, ingest's routes and the API share 24 connections;
	// the fast path holds one for each farm it publishes at once.
	cfg.MaxConns = 24 + publish.DefaultParallel
	// The control database answers small queries (a farm's due windows, a
	// month of days) whose row estimates, built on generate_series, look
	// large enough to JIT-compile (FarmWindowsDue, asked for every farm
	// each minute, a hundred times slower with it). JIT never pays for
	// itself here: the heavy aggregates run on shards.
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("control database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("control database: %w", err)
	}
	m.controlDSN, m.control = dsn, pool
	return pool, nil
}

func embeddedControlURL(ctx context.Context, home string) (string, error) {
	return embeddedURL(ctx, pgserver.New(home), pgserver.ControlDatabase)
}

// embeddedURL starts (or confirms) an embedded cluster, creates database db
// on it if missing and returns its URL.
func embeddedURL(ctx context.Context, s *pgserver.Server, db string) (string, error) {
	if err := s.Up(ctx); err != nil {
		return "", err
	}
	if err := pgserver.EnsureDatabase(ctx, s.URL("postgres"), db); err != nil {
		return "", err
	}
	return s.URL(db), nil
}

// Registry returns the fleet registry on the control database.
func (m *Main) Registry(ctx context.Context) (*fleet.Registry, error) {
	pool, err := m.Control(ctx)
	if err != nil {
		return nil, err
	}
	return &fleet.Registry{Pool: pool, ControlDSN: m.controlDSN, Now: m.Now}, nil
}

// Shards opens (once) a pool per registered shard.
func (m *Main) Shards(ctx context.Context) (*fleet.Shards, error) {
	if m.shards != nil {
		return m.shards, nil
	}
	reg, err := m.Registry(ctx)
	if err != nil {
		return nil, err
	}
	s, err := reg.OpenShards(ctx, 12)
	if err != nil {
		return nil, err
	}
	m.shards = s
	return s, nil
}

// Migrate provisions everything (internal/provision): control and River
// migrations, every registered shard's migrations, partitions ahead and
// retention. With plan it applies a fleet file first.
func (m *Main) Migrate(ctx context.Context) (schema.Result, error) {
	if m.provisioned != nil {
		return *m.provisioned, nil // once per process: the pools handed out stay open
	}
	res, err := m.provision(ctx, nil, "")
	if err != nil {
		return res.Schema, err
	}
	m.unreachable = res.Unreachable
	for _, name := range slices.Sorted(maps.Keys(res.Unreachable)) {
		fmt.Fprintf(os.Stderr, "orchestrator: shard %s does not answer (%v): going on without it; its work fails until it answers, and its migrations wait for the next start\n", name, res.Unreachable[name])
	}
	return res.Schema, nil
}

func (m *Main) provision(ctx context.Context, plan *fleet.Plan, source string) (provision.Result, error) {
	return m.provisionWith(ctx, plan, source, fleet.ApplyOptions{})
}

// provisionWith is provision applying plan with opts.
func (m *Main) provisionWith(ctx context.Context, plan *fleet.Plan, source string, opts fleet.ApplyOptions) (provision.Result, error) {
	reg, err := m.Registry(ctx)
	if err != nil {
		return provision.Result{}, err
	}
	res, err := provision.Provision(ctx, reg, provision.Options{
		Plan: plan, Source: source, Apply: opts, Partitions: true, Now: m.Now(),
		PartitionsAhead: m.Config.PartitionsAhead, RetentionDays: m.Config.RetentionDays, MaxShardConns: 12,
		// A process that starts while a shard is down serves the others;
		// a fleet apply must reach every shard.
		SkipUnreachable: plan == nil,
	})
	if err != nil {
		return res, err
	}
	// The shards as they are now (a fleet apply may have added some). Pools
	// handed out before stay open until Close.
	if m.shards != nil {
		m.retired = append(m.retired, m.shards)
	}
	m.shards, m.provisioned = res.Shards, &res.Schema
	return res, nil
}

func (m *Main) maintainPartitions(ctx context.Context, shards *fleet.Shards) error {
	return provision.Partitions(ctx, m.control, shards, m.Now(), m.Config.PartitionsAhead, m.Config.RetentionDays)
}

// Close releases every connection.
func (m *Main) Close() {
	if m.shards != nil {
		m.shards.Close()
		m.shards = nil
	}
	for _, s := range m.retired {
		s.Close()
	}
	m.retired = nil
	if m.control != nil {
		m.control.Close()
		m.control = nil
	}
}
