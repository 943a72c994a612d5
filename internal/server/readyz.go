package server

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/schema"
)

// ReadyTimeout bounds /readyz: every part is checked at once, each within it.
const ReadyTimeout = 3 * time.Second

// The states of one part (the control database or a shard) in /readyz.
const (
	partOK               = "ok"
	partUnreachable      = "unreachable"
	partMigrationsBehind = "migrations_behind"
	partMigrationsAhead  = "migrations_ahead"
	partRiverBehind      = "river_migrations_behind"
	partUnreadable       = "migrations_unreadable"
	partNotOpen          = "not_open"
)

// readiness is /readyz's answer.
type readiness struct {
	// Status is "ready" (200) or "not_ready" (503).
	Status  string          `json:"status"`
	Control part            `json:"control"`
	Shards  map[string]part `json:"shards"`
	// NotReady says, one line per part, what is not ready: "shard s2:
	// unreachable". Names only, never a DSN, host or user.
	NotReady []string `json:"not_ready,omitempty"`
}

// part is the state of one database.
type part struct {
	Status string `json:"status"`
	// Migrations is where its goose migrations stand, when it could be read.
	Migrations *schema.Version `json:"migrations,omitempty"`
	problem    string
}

// readyz answers 200 only when the control database and every shard answer
// and their migrations (goose, and River's on the control database) are
// exactly this build's; else 503 naming what is not. A shard registered
// after this process opened its shards is not served by it (ingest and
// rollups fail for it until a restart), so it is not ready either. The
// reasons' details go to the server's log.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
	defer cancel()
	names := s.Shards.Names()
	res := readiness{Status: "ready", Shards: make(map[string]part, len(names))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		p, registered := s.controlReadiness(ctx)
		mu.Lock()
		defer mu.Unlock()
		res.Control = p
		for _, name := range registered {
			if s.Shards.Pool(name) == nil {
				res.Shards[name] = part{Status: partNotOpen, problem: "registered after this process started: restart it to serve the shard"}
			}
		}
	})
	for _, name := range names {
		wg.Go(func() {
			p := s.databaseReadiness(ctx, "shard "+name, s.Shards.Pool(name), schema.ShardVersion)
			mu.Lock()
			defer mu.Unlock()
			res.Shards[name] = p
		})
	}
	wg.Wait()
	if res.Control.problem != "" {
		res.NotReady = append(res.NotReady, "control: "+res.Control.problem)
	}
	for _, name := range slices.Sorted(maps.Keys(res.Shards)) {
		if p := res.Shards[name]; p.problem != "" {
			res.NotReady = append(res.NotReady, "shard "+name+": "+p.problem)
		}
	}
	code := http.StatusOK
	if len(res.NotReady) > 0 {
		res.Status, code = "not_ready", http.StatusServiceUnavailable
	}
	writeJSON(w, code, res)
}

// controlReadiness checks the control database, River's migrations on it,
// and returns the shards it registers.
func (s *Server) controlReadiness(ctx context.Context) (part, []string) {
	p := s.databaseReadiness(ctx, "control", s.Control, schema.ControlVersion)
	if p.Status != partOK {
		return p, nil
	}
	pending, err := schema.RiverPending(ctx, s.Control)
	switch {
	case err != nil:
		s.log.Warn("readyz: River migrations", "err", err)
		return part{Status: partUnreadable, Migrations: p.Migrations, problem: "River's migration state could not be read"}, nil
	case pending != "":
		return part{Status: partRiverBehind, Migrations: p.Migrations, problem: "River migrations behind (" + pending + ")"}, nil
	}
	rows, err := controldb.New(s.Control).ShardList(ctx)
	if err != nil {
		s.log.Warn("readyz: shard registry", "err", err)
		return part{Status: partUnreadable, Migrations: p.Migrations, problem: "the shard registry could not be read"}, nil
	}
	registered := make([]string, len(rows))
	for i, row := range rows {
		registered[i] = row.Name
	}
	return p, registered
}

// versions writes migration versions as "3, 7".
func versions(vs []int64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(s, ", ")
}

// databaseReadiness pings a database and compares its applied migrations
// with this build's, as sets (schema.Version).
func (s *Server) databaseReadiness(ctx context.Context, what string, pool *pgxpool.Pool, version func(context.Context, *pgxpool.Pool) (schema.Version, error)) part {
	if err := pool.Ping(ctx); err != nil {
		s.log.Warn("readyz: "+what, "err", err)
		return part{Status: partUnreachable, problem: "unreachable"}
	}
	v, err := version(ctx, pool)
	if err != nil {
		s.log.Warn("readyz: "+what+" migration version", "err", err)
		return part{Status: partUnreadable, problem: "its migration version could not be read"}
	}
	switch {
	case v.OutOfOrder():
		return part{Status: partMigrationsBehind, Migrations: &v, problem: fmt.Sprintf("migrations behind: %s not applied, below the applied %d (out of order: `orchestrator migrate` will not apply it)", versions(v.Missing), v.Applied)}
	case len(v.Missing) > 0:
		return part{Status: partMigrationsBehind, Migrations: &v, problem: fmt.Sprintf("migrations behind: at %d, this build needs %d (run `orchestrator migrate`)", v.Applied, v.Latest)}
	case v.Applied > v.Latest:
		return part{Status: partMigrationsAhead, Migrations: &v, problem: fmt.Sprintf("migrations ahead: at %d, this build knows %d (a newer build migrated it)", v.Applied, v.Latest)}
	case len(v.Unknown) > 0:
		return part{Status: partMigrationsAhead, Migrations: &v, problem: fmt.Sprintf("migrations ahead: %s applied, which this build does not know (another build migrated it)", versions(v.Unknown))}
	}
	return part{Status: partOK, Migrations: &v}
}
