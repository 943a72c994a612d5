package testdb

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/provision"
)

// ControlServerName is the named cluster that holds the control databases
// of NewSeparate (the shards' clusters are named after the shards).
const ControlServerName = "control"

// Separate is a test's databases on separate Postgres servers, as
// production runs them: the control database on a cluster of its own and
// each shard's database on its own cluster (one postmaster per shard, own
// port, socket and password file). The fault tests stop, kill and hang
// those servers one at a time.
type Separate struct {
	*Env
	// ControlServer holds the control database; Servers the shards', by
	// shard name.
	ControlServer *pgserver.Server
	Servers       map[string]*pgserver.Server
}

// NewSeparate starts (or reuses) one named cluster per shard of fleetYAML
// and one for the control database, in the test home (pgserver.Named:
// home/servers/<shard>, home/servers/control), creates this test's
// databases on them (dropped when it ends), points each shard's dsn at its
// own server, and provisions everything as New does.
//
// The clusters are shared by every test that uses them, so a test that
// stops or hangs one must not run in parallel with another such test; each
// server is resumed and started again before the test's databases are
// dropped. It needs the embedded default: with DATABASE_URL set it skips.
func NewSeparate(t testing.TB, fleetYAML string) *Separate {
	t.Helper()
	if os.Getenv("DATABASE_URL") != "" {
		t.Skip("DATABASE_URL is set: separate servers are started by the embedded default only")
	}
	plan, err := fleet.Parse("test", strings.NewReader(fleetYAML))
	if err != nil {
		t.Fatal(err)
	}
	home := Home(t)
	sep := &Separate{ControlServer: pgserver.Named(home, ControlServerName), Servers: map[string]*pgserver.Server{}}
	all := []*pgserver.Server{sep.ControlServer}
	for _, s := range plan.Shards {
		if s.Name == ControlServerName {
			t.Fatalf("testdb: shard name %q is the control server's", s.Name)
		}
		sep.Servers[s.Name] = pgserver.Named(home, s.Name)
		all = append(all, sep.Servers[s.Name])
	}
	if err := upAll(all); err != nil {
		t.Fatalf("start separate servers: %v", err)
	}
	name := databaseName(t)
	ctx := context.Background()
	t.Cleanup(func() {
		if os.Getenv("GALEWATCH_KEEP_TEST_DBS") != "" {
			return
		}
		// The test may have left a server stopped or paused.
		if err := upAll(all); err != nil {
			t.Logf("restart separate servers to drop the test's databases: %v", err)
			return
		}
		for _, s := range all {
			maint := s.URL("postgres")
			for _, db := range databasesOf(maint, name) {
				_ = pgserver.DropDatabase(context.Background(), maint, db)
			}
		}
	})
	if err := pgserver.EnsureDatabase(ctx, sep.ControlServer.URL("postgres"), name); err != nil {
		t.Fatal(err)
	}
	for i, s := range plan.Shards {
		server := sep.Servers[s.Name]
		db := name + "_" + s.Name
		if err := pgserver.EnsureDatabase(ctx, server.URL("postgres"), db); err != nil {
			t.Fatal(err)
		}
		// Over TCP, as a remote server is reached: a server that hangs then
		// looks as it would in production (connections wait, where a full
		// unix socket backlog refuses them at once).
		plan.Shards[i].DSN = server.TCPURL(db)
	}
	dsn := sep.ControlServer.TCPURL(name)
	pool := Pool(t, dsn)
	env := &Env{ControlDSN: dsn, Control: pool, Registry: &fleet.Registry{Pool: pool, ControlDSN: dsn, Since: FleetSince}, Plan: plan}
	res, err := provision.Provision(ctx, env.Registry, provision.Options{Plan: plan, MaxShardConns: 10, Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.Shards.Close)
	env.Shards = res.Shards
	sep.Env = env
	return sep
}

// OwnServers makes the test the owner of servers for its run, as the soak
// owns its five: any of them running is stopped now, so it starts again
// as a child of this process (in its cgroup, with nothing of an earlier
// run in memory), and each is stopped when the test ends, passed or failed
// (t.Fatal, a panic in the test's goroutine), after the cleanups
// registered later, such as NewSeparate's dropping of the test's
// databases. Call it before the servers are started.
func OwnServers(t testing.TB, servers ...*pgserver.Server) {
	t.Helper()
	if err := downAll(servers); err != nil {
		t.Fatalf("stop the test's servers before it starts them: %v", err)
	}
	t.Cleanup(func() {
		if err := downAll(servers); err != nil {
			t.Errorf("stop the test's servers: %v", err)
		}
	})
}

// downAll resumes (a paused server answers no shutdown) and stops every
// server, in parallel; a stopped one is left as it is.
func downAll(servers []*pgserver.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			_ = s.Resume() // not running, or not paused: nothing to do
			errs[i] = s.Down(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// upAll resumes (a paused server answers nothing) and starts every server,
// in parallel.
func upAll(servers []*pgserver.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			_ = s.Resume() // not running, or not paused: nothing to do
			errs[i] = s.Up(ctx)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
