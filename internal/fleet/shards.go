package fleet

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/schema"
)

// Shards holds one connection pool per registered shard. Pools connect
// lazily, so an unreachable shard fails only the work that needs it.
type Shards struct {
	pools   map[string]*pgxpool.Pool
	names   []string
	targets map[string]target // what each shard's pool connects to, to name it in errors (Name)
}

// OpenShards opens a pool for every shard in the registry.
func (r *Registry) OpenShards(ctx context.Context, maxConns int32) (*Shards, error) {
	rows, err := controldb.New(r.Pool).ShardList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list shards: %w", err)
	}
	s := &Shards{pools: map[string]*pgxpool.Pool{}, targets: map[string]target{}}
	for _, row := range rows {
		dsn := ""
		if row.Dsn != nil {
			dsn = *row.Dsn
			if dsnHasPassword(dsn) {
				// Someone wrote it there by hand: refuse rather than use a
				// password every DBA can read.
				s.Close()
				return nil, fmt.Errorf("shard %s: its DSN in the shard table carries a password; remove it (UPDATE shard SET dsn = ...) and give the password in %s, PGPASSWORD or a pgpass file", row.Name, PasswordEnv(row.Name))
			}
		}
		full, _, err := r.shardDSN(row.Name, dsn)
		if err != nil {
			s.Close()
			return nil, err
		}
		cfg, err := shardPoolConfig(row.Name, full)
		if err != nil {
			s.Close()
			return nil, err
		}
		if maxConns > 0 {
			cfg.MaxConns = maxConns
		}
		// The rollup statement reads a whole farm-day or one turbine's day
		// depending on its arguments: plan it for the arguments every time
		// (planning is microseconds against a scan of seconds).
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
		// No JIT (unless the DSN asks for it): the window statement
		// (TurbineWindowUpsert, the fast path's and every correction's)
		// is estimated at a thousand windows per turbine run (a
		// generate_series over columns), so Postgres compiles it with full
		// optimisation, for a second, to do milliseconds of work: a fleet's
		// publications every minute would spend most of a core compiling
		// (BENCHMARKS.md, "Measurements behind the code").
		if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
			cfg.ConnConfig.RuntimeParams["jit"] = "off"
		}
		// An unreachable shard should fail fast, not hang whoever asked.
		if cfg.ConnConfig.ConnectTimeout == 0 {
			cfg.ConnConfig.ConnectTimeout = 5 * time.Second
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("shard %s: %w", row.Name, err)
		}
		s.pools[row.Name] = pool
		s.names = append(s.names, row.Name)
		s.targets[row.Name] = targetOf(&cfg.ConnConfig.Config)
	}
	sort.Strings(s.names)
	return s, nil
}

// shardPoolConfig parses a shard's connection string and sets its password
// from GALEWATCH_SHARD_<NAME>_PASSWORD when that is set; otherwise pgx's own
// lookup (PGPASSWORD, the pgpass file, a passfile parameter) applies. The
// registry never holds a password.
func shardPoolConfig(name, dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message may quote the connection string: say which shard
		// and leave the string out.
		return nil, fmt.Errorf("shard %s: the connection string does not parse", name)
	}
	if pw := os.Getenv(PasswordEnv(name)); pw != "" {
		cfg.ConnConfig.Password = pw
	}
	return cfg, nil
}

// target is where a connection goes: what pgconn.ConnectError carries.
type target struct {
	host, database, user string
	port                 uint16
}

func targetOf(c *pgconn.Config) target {
	return target{host: c.Host, database: c.Database, user: c.User, port: c.Port}
}

// SameTarget reports whether two connection configurations reach the same
// database as the same user.
func SameTarget(a, b *pgconn.Config) bool { return targetOf(a) == targetOf(b) }

// Name names the shard a connection configuration is for ("shard s2"), or
// "" when it is no shard's or more than one's.
func (s *Shards) Name(c *pgconn.Config) string {
	want, found := targetOf(c), ""
	for _, name := range s.names {
		if s.targets[name] == want {
			if found != "" {
				return ""
			}
			found = name
		}
	}
	if found == "" {
		return ""
	}
	return "shard " + found
}

// Pool returns the pool of shard name, or nil if it is not registered.
func (s *Shards) Pool(name string) *pgxpool.Pool { return s.pools[name] }

// InUse is how many connections of this process's shard pools are in use
// now (acquired), over every shard.
func (s *Shards) InUse() int {
	n := 0
	for _, p := range s.pools {
		n += int(p.Stat().AcquiredConns())
	}
	return n
}

// Names lists the shards in name order.
func (s *Shards) Names() []string { return s.names }

// Migrate applies the shard migrations to every shard.
func (s *Shards) Migrate(ctx context.Context) error {
	for _, name := range s.names {
		if _, err := schema.MigrateShard(ctx, s.pools[name]); err != nil {
			return fmt.Errorf("shard %s: %w", name, err)
		}
	}
	return nil
}

// MigrateReachable applies the shard migrations to every shard that
// answers within reach, and names the others with their error instead of
// failing: a process that starts while one shard's server is down or hangs
// still serves the other shards (the skipped one's work fails until it
// answers, and /readyz says whether its migrations are behind). A shard
// that answers is migrated with no bound (a migration may take long).
func (s *Shards) MigrateReachable(ctx context.Context, reach time.Duration) (map[string]error, error) {
	skipped := map[string]error{}
	for _, name := range s.names {
		pctx, cancel := context.WithTimeout(ctx, reach)
		err := s.pools[name].Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return skipped, ctx.Err()
			}
			skipped[name] = err
			continue
		}
		if _, err := schema.MigrateShard(ctx, s.pools[name]); err != nil {
			return skipped, fmt.Errorf("shard %s: %w", name, err)
		}
	}
	return skipped, nil
}

// Close closes every pool.
func (s *Shards) Close() {
	for _, p := range s.pools {
		p.Close()
	}
}
