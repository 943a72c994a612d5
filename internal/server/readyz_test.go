package server_test

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

// latestMigration is the highest version among the embedded files
// (NNNNN_name.sql), read from the file names, not through goose.
func latestMigration(t *testing.T, fsys fs.FS) int {
	t.Helper()
	names, err := fs.Glob(fsys, "*.sql")
	testdb.Must(t, err, "glob")
	latest := 0
	for _, n := range names {
		v, err := strconv.Atoi(strings.SplitN(n, "_", 2)[0])
		testdb.Must(t, err, "version of %s", n)
		latest = max(latest, v)
	}
	return latest
}

// TestReadyz: 200 while the control database and every shard answer at
// this build's migrations; 503 naming the part (by name only) when a
// shard's migrations are behind, the control database's are ahead,
// River's are behind, a shard is unreachable, or a shard was registered
// after the server opened its shards.
func TestReadyz(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}, {name: s2}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}, {id: T-2, shard: s2}]}]\n")
	ctx := context.Background()
	c, s := latestMigration(t, control.FS), latestMigration(t, shard.FS)
	ok := func(v int) string {
		return fmt.Sprintf(`{"status":"ok","migrations":{"applied":%d,"latest":%d}}`, v, v)
	}
	cfg := server.DefaultConfig()
	url := serve(t, server.New(env.Control, env.Shards, cfg), cfg)
	check := func(t *testing.T, url string, wantCode int, want string) {
		t.Helper()
		code, body := get(t, url+"/readyz")
		if code != wantCode || strings.TrimSpace(body) != want {
			t.Fatalf("readyz: %d %s\nwant %d %s", code, body, wantCode, want)
		}
	}

	t.Run("Ready", func(t *testing.T) {
		check(t, url, 200, fmt.Sprintf(`{"status":"ready","control":%s,"shards":{"s1":%s,"s2":%s}}`, ok(c), ok(s), ok(s)))
	})

	t.Run("ShardMigrationsBehind", func(t *testing.T) {
		pool := env.Shards.Pool("s1")
		db := stdlib.OpenDBFromPool(pool)
		defer db.Close()
		p, err := goose.NewProvider(goose.DialectPostgres, db, shard.FS)
		testdb.Must(t, err, "goose")
		_, err = p.Down(ctx)
		testdb.Must(t, err, "goose down on s1")
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":%s,"shards":{"s1":{"status":"migrations_behind","migrations":{"applied":%d,"latest":%d,"missing":[%d]}},"s2":%s},`+
			"\"not_ready\":[\"shard s1: migrations behind: at %d, this build needs %d (run `orchestrator migrate`)\"]}", ok(c), s-1, s, s, ok(s), s-1, s))
		_, err = schema.MigrateShard(ctx, pool)
		testdb.Must(t, err, "migrate s1 again")
		check(t, url, 200, fmt.Sprintf(`{"status":"ready","control":%s,"shards":{"s1":%s,"s2":%s}}`, ok(c), ok(s), ok(s)))
	})

	// A lower migration missing (applied out of order, or its record lost)
	// while the highest is this build's latest: not ready, naming it. Before
	// the sets were compared, max(version_id) = latest read as ready.
	t.Run("ControlMissesALowerMigration", func(t *testing.T) {
		testdb.Exec(t, env.Control, `DELETE FROM goose_db_version WHERE version_id = 3`)
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":{"status":"migrations_behind","migrations":{"applied":%d,"latest":%d,"missing":[3]}},"shards":{"s1":%s,"s2":%s},`+
			"\"not_ready\":[\"control: migrations behind: 3 not applied, below the applied %d (out of order: `orchestrator migrate` will not apply it)\"]}", c, c, ok(s), ok(s), c))
		testdb.Exec(t, env.Control, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (3, true)`)
		check(t, url, 200, fmt.Sprintf(`{"status":"ready","control":%s,"shards":{"s1":%s,"s2":%s}}`, ok(c), ok(s), ok(s)))
	})

	// A version applied that this build does not know, below its latest
	// (another branch's migration; the control set has no 00014): not
	// ready either.
	t.Run("ControlHasAnUnknownMigration", func(t *testing.T) {
		testdb.Exec(t, env.Control, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (14, true)`)
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":{"status":"migrations_ahead","migrations":{"applied":%d,"latest":%d,"unknown":[14]}},"shards":{"s1":%s,"s2":%s},`+
			`"not_ready":["control: migrations ahead: 14 applied, which this build does not know (another build migrated it)"]}`, c, c, ok(s), ok(s)))
		testdb.Exec(t, env.Control, `DELETE FROM goose_db_version WHERE version_id = 14`)
	})

	t.Run("ControlMigrationsAhead", func(t *testing.T) {
		testdb.Exec(t, env.Control, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`)
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":{"status":"migrations_ahead","migrations":{"applied":99999,"latest":%d,"unknown":[99999]}},"shards":{"s1":%s,"s2":%s},`+
			`"not_ready":["control: migrations ahead: at 99999, this build knows %d (a newer build migrated it)"]}`, c, ok(s), ok(s), c))
		testdb.Exec(t, env.Control, `DELETE FROM goose_db_version WHERE version_id = 99999`)
	})

	t.Run("RiverMigrationsBehind", func(t *testing.T) {
		m, err := rivermigrate.New(riverpgxv5.New(env.Control), nil)
		testdb.Must(t, err, "rivermigrate")
		down, err := m.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{MaxSteps: 1})
		testdb.Must(t, err, "river down")
		v := down.Versions[0].Version
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":{"status":"river_migrations_behind","migrations":{"applied":%d,"latest":%d}},"shards":{"s1":%s,"s2":%s},`+
			`"not_ready":["control: River migrations behind (Unapplied migrations: [%d])"]}`, c, c, ok(s), ok(s), v))
		_, err = schema.MigrateControl(ctx, env.Control)
		testdb.Must(t, err, "migrate control again")
		check(t, url, 200, fmt.Sprintf(`{"status":"ready","control":%s,"shards":{"s1":%s,"s2":%s}}`, ok(c), ok(s), ok(s)))
	})

	t.Run("ShardRegisteredAfterStart", func(t *testing.T) {
		testdb.Exec(t, env.Control, `INSERT INTO shard (name, database) VALUES ('s3', 'elsewhere')`)
		defer testdb.Exec(t, env.Control, `DELETE FROM shard WHERE name = 's3'`)
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":%s,"shards":{"s1":%s,"s2":%s,"s3":{"status":"not_open"}},`+
			`"not_ready":["shard s3: registered after this process started: restart it to serve the shard"]}`, ok(c), ok(s), ok(s)))
	})

	t.Run("ShardUnreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		testdb.Must(t, err, "listen")
		dead := ln.Addr().String()
		ln.Close()
		testdb.Exec(t, env.Control, `UPDATE shard SET dsn = $1 WHERE name = 's2'`, "postgres://galewatch@"+dead+"/galewatch_s2?connect_timeout=1")
		defer testdb.Exec(t, env.Control, `UPDATE shard SET dsn = NULL WHERE name = 's2'`)
		shards, err := env.Registry.OpenShards(ctx, 2)
		testdb.Must(t, err, "open shards")
		defer shards.Close()
		cfg := server.DefaultConfig()
		url := serve(t, server.New(env.Control, shards, cfg), cfg)
		check(t, url, 503, fmt.Sprintf(`{"status":"not_ready","control":%s,"shards":{"s1":%s,"s2":{"status":"unreachable"}},"not_ready":["shard s2: unreachable"]}`, ok(c), ok(s)))
	})

	t.Run("BehindTheToken", func(t *testing.T) {
		cfg := server.DefaultConfig()
		cfg.Token = testToken
		url := serve(t, server.New(env.Control, env.Shards, cfg), cfg)
		if code, body := get(t, url+"/readyz"); code != 401 || strings.Contains(body, "status") {
			t.Errorf("readyz without the token: %d %q, want 401", code, body)
		}
		if code, _ := get(t, url+"/readyz", "Authorization", "Bearer "+testToken); code != 200 {
			t.Errorf("readyz with the token: %d, want 200", code)
		}
		if code, _ := get(t, url+"/healthz"); code != 200 {
			t.Errorf("healthz without the token: %d, want 200", code)
		}
	})
}
