package schema_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAdvisoryLocksArePipelineOnly: a login that is a member of
// galewatch_reporting or galewatch_ingest cannot call any advisory-lock
// function on the control database or a shard (each of the 21 refused with
// permission denied), so it cannot hold a key the pipeline waits on; the
// pipeline itself migrates again (goose's session lock, River's migration
// lock), takes its own keys, and rolls a day up through River.
func TestAdvisoryLocksArePipelineOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, rolesFleet)
	var super bool
	testdb.Must(t, env.Control.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super), "superuser?")
	if !super {
		t.Fatal("the pipeline's role is not a superuser here, so the migration left the advisory-lock grants to the DBA: run the statements in docs/dba.md (\"Roles\") as a superuser")
	}

	calls := advisoryCalls(t, env.Control)
	if len(calls) != 21 {
		t.Fatalf("advisory-lock functions in pg_catalog: %d %v, want the 21 of Postgres 15", len(calls), calls)
	}
	dbs := map[string]*pgxpool.Pool{"control": env.Control, "shard s1": env.Shards.Pool("s1")}
	for _, group := range []string{"galewatch_reporting", "galewatch_ingest"} {
		pool := memberLogin(t, env.Control, group)
		for where, db := range dbs {
			cfg := db.Config().ConnConfig
			conn := loginTo(t, pool, cfg.Database)
			for _, call := range calls {
				_, err := conn.Exec(ctx, call)
				if !denied(err) {
					t.Errorf("%s member on %s: %s: %v, want permission denied", group, where, call, err)
				}
			}
		}
	}

	// The pipeline: migrations again (both locks), its own keys, a rollup.
	_, err := schema.MigrateControl(ctx, env.Control)
	testdb.Must(t, err, "migrate control again")
	_, err = schema.MigrateShard(ctx, env.Shards.Pool("s1"))
	testdb.Must(t, err, "migrate shard again")
	conn, err := env.Control.Acquire(ctx)
	testdb.Must(t, err, "acquire")
	locked, err := controldb.New(conn).AdvisoryTryLockKey(ctx, "galewatch.publish/north")
	testdb.Must(t, err, "pipeline's own key")
	if !locked {
		t.Fatal("the pipeline could not take its own publication key")
	}
	testdb.Must(t, controldb.New(conn).AdvisoryUnlockKey(ctx, "galewatch.publish/north"), "unlock")
	conn.Release()

	p := pipelinetest.New(t, env, pipelinetest.Options{})
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var body strings.Builder
	for i := range 30 {
		at := day.Add(10*time.Hour + time.Duration(2*i)*time.Second)
		fmt.Fprintf(&body, `{"turbine_id":"N-001","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
			at.Format(time.RFC3339Nano), at.Add(time.Second).Format(time.RFC3339Nano))
	}
	p.Clock.Set(day.Add(10*time.Hour + time.Minute))
	if sum := pipelinetest.Send(t, p.In, []byte(body.String())); sum.Accepted != 30 {
		t.Fatalf("ingest: %+v, want 30 accepted", sum)
	}
	p.Close(t, day.AddDate(0, 0, 2))
	if got := testdb.Int(t, env.Control, `SELECT received FROM turbine_day WHERE turbine_id = 'N-001' AND day = '2026-08-01'`); got != 30 {
		t.Fatalf("turbine_day N-001 1 August received %d, want 30", got)
	}
}

// advisoryCalls is one call of every advisory-lock function in pg_catalog.
func advisoryCalls(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `
		SELECT format('SELECT %s(%s)', p.proname,
		       (SELECT coalesce(string_agg('1::' || format_type(a, NULL), ', '), '') FROM unnest(p.proargtypes) AS a))
		FROM pg_proc p
		WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname LIKE 'pg\_%advisory%'
		ORDER BY 1`)
	testdb.Must(t, err, "advisory functions")
	calls, err := pgx.CollectRows(rows, pgx.RowTo[string])
	testdb.Must(t, err, "advisory functions")
	return calls
}

// memberLogin creates a login role that is a member of group, dropped when
// the test ends, and returns a pool config template for it (on the control
// database).
func memberLogin(t *testing.T, control *pgxpool.Pool, group string) *pgxpool.Config {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	login, password := "gwt_locker_"+hex.EncodeToString(b[:]), "s3cret-"+hex.EncodeToString(b[:])
	testdb.Exec(t, control, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE %s`, login, password, group))
	t.Cleanup(func() { _, _ = control.Exec(context.Background(), "DROP ROLE IF EXISTS "+login) })
	cfg := control.Config().Copy()
	cfg.ConnConfig.User, cfg.ConnConfig.Password = login, password
	return cfg
}

// loginTo connects with cfg's login to database db.
func loginTo(t *testing.T, cfg *pgxpool.Config, db string) *pgx.Conn {
	t.Helper()
	cc := cfg.ConnConfig.Copy()
	cc.Database = db
	// Where the calls are allowed, one login's lock would hold the next
	// login's call for ever: a timeout turns that into an error.
	cc.RuntimeParams["statement_timeout"] = "10s"
	conn, err := pgx.ConnectConfig(context.Background(), cc)
	testdb.Must(t, err, "log in as %s to %s", cc.User, db)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
