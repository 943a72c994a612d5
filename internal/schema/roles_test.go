package schema_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

const rolesFleet = `
shards: [{name: s1}]
farms:
  - id: north
    timezone: UTC
    turbines: [{prefix: N-, from: 1, to: 2, shard: s1}]
`

var rolesDay = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// asRole runs f in a transaction as role (SET LOCAL ROLE), rolled back
// unless commit.
func asRole(pool *pgxpool.Pool, role string, commit bool, f func(pgx.Tx) error) error {
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+role); err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return err
	}
	if commit {
		return tx.Commit(ctx)
	}
	return nil
}

// text runs a query returning one text value, as role.
func text(pool *pgxpool.Pool, role, sql string, args ...any) (string, error) {
	var s string
	err := asRole(pool, role, false, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), sql, args...).Scan(&s)
	})
	return s, err
}

// exec runs a statement as role, rolled back.
func exec(pool *pgxpool.Pool, role, sql string, args ...any) error {
	return asRole(pool, role, false, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), sql, args...)
		return err
	})
}

func denied(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42501" // insufficient_privilege
}

// grants lists what the database grants role, table by table and column
// by column: "relation privilege" or "relation(column) privilege", sorted.
func grants(t *testing.T, pool *pgxpool.Pool, role string) string {
	t.Helper()
	var s string
	err := pool.QueryRow(context.Background(), `
		SELECT coalesce(string_agg(g, ', ' ORDER BY g), '')
		FROM (SELECT c.relname || ' ' || x.privilege_type AS g
		      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		      CROSS JOIN LATERAL aclexplode(c.relacl) x
		      WHERE n.nspname = current_schema() AND x.grantee = $1::regrole
		      UNION ALL
		      SELECT c.relname || '(' || a.attname || ') ' || x.privilege_type
		      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		      CROSS JOIN LATERAL aclexplode(a.attacl) x
		      WHERE n.nspname = current_schema() AND x.grantee = $1::regrole
		      UNION ALL
		      SELECT p.proname || ' ' || x.privilege_type
		      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		      CROSS JOIN LATERAL aclexplode(p.proacl) x
		      WHERE n.nspname = current_schema() AND x.grantee = $1::regrole) AS all_grants`, role).Scan(&s)
	testdb.Must(t, err, "grants of %s", role)
	return s
}

// TestReportingRole: galewatch_reporting reads farm_day, the other rollup
// views and the report, the refused lines without their raw text; it
// cannot read readings (on a shard, nor a partition directly), raw text,
// shard DSNs or River's tables, and cannot write anything. A person's login
// made a member of it, as docs/dba.md ("Roles") says, runs the report.
func TestReportingRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, rolesFleet)
	shardPool := env.Shards.Pool("s1")
	const role = "galewatch_reporting"
	testdb.Exec(t, env.Control, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early, computed_at)
		VALUES ('N-001', $1, 'north', 's1', 43200, 43200, 43200, 0, 0, $2), ('N-002', $1, 'north', 's1', 43200, 21600, 21600, 0, 0, $2)`,
		rolesDay, rolesDay.Add(25*time.Hour))
	// s1's marks drained through the end of August (else every day with
	// rows would wait for that: shard not drained).
	testdb.Exec(t, env.Control, `INSERT INTO shard_drain (shard_name, drained_through, shard_clock_at, marks_read) VALUES ('s1', '2026-09-01', '2026-09-01', 0)`)
	testdb.Exec(t, env.Control, `INSERT INTO ingest_reject (source, line, raw, reason) VALUES ('test', 7, '{"turbine_id":"X-9"}', 'unknown turbine "X-9"')`)
	_, err := sharddb.New(shardPool).ReadingsEnsurePartition(ctx, rolesDay)
	testdb.Must(t, err, "partition")
	testdb.Exec(t, shardPool, `INSERT INTO readings VALUES ('N-001', $1, $1, true, 1, 1)`, rolesDay.Add(time.Hour))

	for _, tc := range []struct{ name, sql, want string }{
		{"FarmDay", `SELECT received::text || ' ' || availability::text FROM farm_day WHERE farm_id = 'north' AND day = '2026-08-01'`, "64800 0.750000"},
		{"FarmMonth", `SELECT days::text || ' ' || pending::text FROM farm_month WHERE farm_id = 'north'`, "1 false"},
		{"Report", `SELECT status || ' ' || available::text FROM report_monthly_availability('north', '2026-08', '2026-09-01') WHERE scope = 'month'`, "provisional 64800"},
		{"RejectReason", `SELECT line::text || ' ' || reason FROM ingest_reject`, `7 unknown turbine "X-9"`},
		{"Registry", `SELECT count(*)::text || ' ' || min(name) FROM shard`, "1 s1"},
		{"RiverHelper", `SELECT rollup_day_unfinished('north', '2026-08-01')::text`, "false"},
		{"Provenance", `SELECT count(*)::text FROM day_provenance`, "0"},
		{"Drain", `SELECT shard_name || ' ' || marks_read::text || ' ' || (SELECT count(*) FROM dirty_mark_settling)::text FROM shard_drain`, "s1 0 0"},
		{"DayStatus", `SELECT status FROM farm_day_status('north', '2026-08-01', '2026-09-01')`, "incomplete"},
		{"ContractYear", `SELECT status || ' ' || first_day::text FROM report_contract_year('north', '2026', '2026-09-01') WHERE scope = 'year'`, "provisional 2026-01-01"},
	} {
		t.Run("Reads"+tc.name, func(t *testing.T) {
			got, err := text(env.Control, role, tc.sql)
			if err != nil || got != tc.want {
				t.Fatalf("%s as %s: %q, %v; want %q", tc.sql, role, got, err, tc.want)
			}
		})
	}

	var riverTables []string
	rows, err := env.Control.Query(ctx, `SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname LIKE 'river%' ORDER BY 1`)
	testdb.Must(t, err, "river tables")
	riverTables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	testdb.Must(t, err, "river tables")
	if len(riverTables) < 4 {
		t.Fatalf("River's tables: %v, want River's migrations applied", riverTables)
	}
	refused := []struct{ pool, sql string }{
		{"control", `SELECT raw FROM ingest_reject`},
		{"control", `SELECT raw_bytes FROM ingest_reject`},
		{"control", `SELECT * FROM ingest_reject`},
		{"control", `SELECT dsn FROM shard`},
		{"control", `SELECT * FROM goose_db_version`},
		{"control", `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early, computed_at) VALUES ('N-001', '2026-08-02', 'north', 's1', 1, 1, 1, 0, 0, now())`},
		{"control", `UPDATE turbine_day SET received = 0`},
		{"control", `DELETE FROM rollup_pending`},
		{"control", `TRUNCATE alert`},
		{"control", `UPDATE farm SET timezone = 'UTC'`},
		{"control", `CREATE TABLE mine (x int)`},
		{"shard", `SELECT count(*) FROM readings`},
		{"shard", `SELECT count(*) FROM readings_p20260801`},
		{"shard", `SELECT count(*) FROM dirty_mark`},
		{"shard", `INSERT INTO readings VALUES ('N-002', '2026-08-01 02:00Z', now(), true, 1, 1)`},
	}
	for _, table := range riverTables {
		refused = append(refused, struct{ pool, sql string }{"control", "SELECT count(*) FROM " + table})
	}
	t.Run("Refused", func(t *testing.T) {
		for _, r := range refused {
			pool := env.Control
			if r.pool == "shard" {
				pool = shardPool
			}
			if err := exec(pool, role, r.sql); !denied(err) {
				t.Errorf("%s on the %s as %s: %v, want permission denied", r.sql, r.pool, role, err)
			}
		}
	})

	// Nothing it holds is more than reading, on either database.
	t.Run("OnlyReads", func(t *testing.T) {
		for name, pool := range map[string]*pgxpool.Pool{"control": env.Control, "shard": shardPool} {
			var writes string
			err := pool.QueryRow(ctx, `
				SELECT coalesce(string_agg(c.relname, ', '), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'S')
				  AND (CASE WHEN c.relkind = 'S' THEN has_sequence_privilege($1, c.oid, 'USAGE, UPDATE')
				            ELSE has_table_privilege($1, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
				                 OR has_any_column_privilege($1, c.oid, 'INSERT, UPDATE, REFERENCES') END)`, role).Scan(&writes)
			testdb.Must(t, err, "write privileges")
			if writes != "" {
				t.Errorf("%s on the %s database may write: %s", role, name, writes)
			}
			if name == "shard" {
				if g := grants(t, pool, role); g != "" {
					t.Errorf("the shard grants %s: %s, want nothing", role, g)
				}
			}
		}
		g := grants(t, env.Control, role)
		for _, e := range strings.Split(g, ", ") {
			if strings.HasPrefix(e, "ingest_reject(raw)") || strings.HasPrefix(e, "ingest_reject(raw_bytes)") || strings.HasPrefix(e, "ingest_reject ") || strings.HasPrefix(e, "shard(dsn)") ||
				strings.HasPrefix(e, "shard ") || (strings.HasPrefix(e, "river_") && !strings.HasSuffix(e, " EXECUTE")) ||
				!(strings.HasSuffix(e, " SELECT") || strings.HasSuffix(e, " EXECUTE")) {
				t.Errorf("control grants %s %q (all: %s)", role, e, g)
			}
		}
		if !strings.Contains(g, "ingest_reject(reason) SELECT") || !strings.Contains(g, "report_monthly_availability EXECUTE") || !strings.Contains(g, "farm_day SELECT") {
			t.Errorf("control grants to %s: %s; want farm_day, the report and the reasons of refused lines", role, g)
		}
	})

	// A person's login, made a member as docs/dba.md ("Roles") says, runs the report
	// through the Go API the web page uses.
	t.Run("MemberLogin", func(t *testing.T) {
		var b [4]byte
		_, _ = rand.Read(b[:])
		login, password := "gwt_alice_"+hex.EncodeToString(b[:]), "s3cret-"+hex.EncodeToString(b[:])
		testdb.Exec(t, env.Control, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s' IN ROLE galewatch_reporting`, login, password))
		t.Cleanup(func() { _, _ = env.Control.Exec(context.Background(), "DROP ROLE IF EXISTS "+login) })
		cfg, err := pgxpool.ParseConfig(env.ControlDSN)
		testdb.Must(t, err, "dsn")
		cfg.ConnConfig.User, cfg.ConnConfig.Password = login, password
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		testdb.Must(t, err, "connect as %s", login)
		defer pool.Close()
		m, err := report.MonthlyAt(ctx, pool, "north", "2026-08", time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))
		testdb.Must(t, err, "report as %s", login)
		if m.Days[0].Available == nil || *m.Days[0].Available != 64800 || m.Status != report.StatusProvisional || len(m.HeldBack) != 31 {
			t.Fatalf("report as %s: 1 August available %v, %s with %d days held back; want 64800, provisional, 31 (1 August incomplete, 2-31 August: no rollup)",
				login, m.Days[0].Available, m.Status, len(m.HeldBack))
		}
		if _, err := pool.Exec(ctx, `DELETE FROM turbine_day`); !denied(err) {
			t.Fatalf("DELETE as %s: %v, want permission denied", login, err)
		}
	})
}

// TestIngestRole: galewatch_ingest runs the ingest writer's own statements
// on a shard (COPY into readings, the de-duplicating insert from the
// staging table, the mark merge, dirty windows, the partition check) and
// holds exactly the privileges they need: it cannot read readings' values
// (their key, yes: ON CONFLICT on the key and RETURNING it need that),
// change or delete a reading or a mark, touch the rollup tables, create a
// partition, or do anything on the control database.
func TestIngestRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, rolesFleet)
	shardPool := env.Shards.Pool("s1")
	const role = "galewatch_ingest"
	_, err := sharddb.New(shardPool).ReadingsEnsurePartition(ctx, rolesDay)
	testdb.Must(t, err, "partition")

	cols := []string{"turbine_id", "recorded_at", "received_at", "available", "power_kw", "wind_ms"}
	reading := func(id string, minute int) []any {
		at := rolesDay.Add(time.Duration(minute) * time.Minute)
		return []any{id, at, at.Add(2 * time.Second), true, float32(1), float32(5)}
	}
	mark := sharddb.DirtyMarkUpsertParams{FarmID: "north", Day: rolesDay, TurbineIds: []string{"N-001"},
		FirstRecordedAt: rolesDay, LastRecordedAt: rolesDay.Add(time.Minute), Readings: 2, WrittenAt: rolesDay.Add(time.Hour)}
	window := sharddb.DirtyWindowInsertParams{FarmID: "north", MarkedAt: rolesDay.Add(time.Hour), Days: []time.Time{rolesDay},
		TurbineIds: []string{"N-001"}, WindowStarts: []time.Time{rolesDay}, WindowEnds: []time.Time{rolesDay.Add(time.Minute)}, Windows: []int32{1}}
	err = asRole(shardPool, role, true, func(tx pgx.Tx) error {
		q := sharddb.New(tx)
		if _, err := q.ReadingsEnsurePartition(ctx, rolesDay); err != nil {
			return fmt.Errorf("partition check: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"readings"}, cols, pgx.CopyFromRows([][]any{reading("N-001", 0), reading("N-001", 1)})); err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		if err := q.ReadingsStagingCreate(ctx); err != nil {
			return fmt.Errorf("staging: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"readings_staging"}, cols, pgx.CopyFromRows([][]any{reading("N-001", 1), reading("N-002", 1)})); err != nil {
			return fmt.Errorf("copy staging: %w", err)
		}
		inserted, err := q.ReadingsInsertFromStaging(ctx)
		if err != nil {
			return fmt.Errorf("insert from staging: %w", err)
		}
		if len(inserted) != 1 || inserted[0].TurbineID != "N-002" {
			return fmt.Errorf("insert from staging returned %+v, want N-002 only (N-001's reading was a duplicate)", inserted)
		}
		for i := 0; i < 2; i++ { // the second mark merges into the first; the second window mark is a row of its own
			if err := q.DirtyMarkUpsert(ctx, mark); err != nil {
				return fmt.Errorf("mark %d: %w", i, err)
			}
			if err := q.DirtyWindowInsert(ctx, window); err != nil {
				return fmt.Errorf("dirty window %d: %w", i, err)
			}
		}
		return nil
	})
	testdb.Must(t, err, "the ingest writer's statements as %s", role)
	if n := testdb.Int(t, shardPool, `SELECT count(*) FROM readings`); n != 3 {
		t.Fatalf("%d readings stored as %s, want 3", n, role)
	}
	if n := testdb.Int(t, shardPool, `SELECT readings * 10 + version FROM dirty_mark WHERE farm_id = 'north'`); n != 42 {
		t.Fatalf("mark: readings*10+version = %d, want 42 (two marks of 2 readings merged, version 2)", n)
	}
	if n := testdb.Int(t, shardPool, `SELECT count(*) FROM dirty_window`); n != 2 {
		t.Fatalf("%d dirty window rows, want 2 (append-only: each batch's mark is its own row)", n)
	}

	next := rolesDay.AddDate(0, 0, 1)
	for _, r := range []struct{ pool, sql string }{
		{"shard", `SELECT * FROM readings`},
		{"shard", `SELECT received_at FROM readings`},
		{"shard", `SELECT available FROM readings`},
		{"shard", `SELECT power_kw, wind_ms FROM readings`},
		{"shard", `SELECT count(*) FROM readings_p20260801`},
		{"shard", `UPDATE readings SET available = false`},
		{"shard", `DELETE FROM readings`},
		{"shard", `TRUNCATE readings`},
		{"shard", `DELETE FROM dirty_mark`},
		{"shard", `DELETE FROM dirty_window`},
		{"shard", `UPDATE dirty_mark SET farm_id = 'south'`},
		{"shard", `UPDATE dirty_window SET window_start = window_start + interval '1 minute'`},
		{"shard", `SELECT count(*) FROM turbine_window`},
		{"shard", `INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available, beyond_cadence, out_of_service, late, early, computed_at) VALUES ('N-001', now(), now(), 'north', '2026-08-01', 1, 1, 1, 0, 0, 0, 0, now())`},
		{"shard", `SELECT readings_ensure_partition('` + next.Format(time.DateOnly) + `')`},
		{"shard", `SELECT readings_drop_partitions_before('2026-09-01')`},
		{"control", `SELECT count(*) FROM turbine_day`},
		{"control", `SELECT count(*) FROM farm_day`},
		{"control", `INSERT INTO ingest_reject (source, line, raw, reason) VALUES ('x', 1, 'x', 'x')`},
		{"control", `INSERT INTO rollup_pending (farm_id, day, shard_name, job_id, requested_at) VALUES ('north', '2026-08-01', 's1', 1, now())`},
	} {
		pool := env.Control
		if r.pool == "shard" {
			pool = shardPool
		}
		if err := exec(pool, role, r.sql); !denied(err) {
			t.Errorf("%s on the %s as %s: %v, want permission denied", r.sql, r.pool, role, err)
		}
	}

	want := "dirty_mark INSERT, dirty_mark(day) SELECT, dirty_mark(farm_id) SELECT, dirty_mark(first_recorded_at) SELECT, " +
		"dirty_mark(first_recorded_at) UPDATE, dirty_mark(last_recorded_at) SELECT, dirty_mark(last_recorded_at) UPDATE, " +
		"dirty_mark(readings) SELECT, dirty_mark(readings) UPDATE, dirty_mark(turbine_ids) SELECT, dirty_mark(turbine_ids) UPDATE, " +
		"dirty_mark(updated_at) SELECT, dirty_mark(updated_at) UPDATE, dirty_mark(version) SELECT, dirty_mark(version) UPDATE, " +
		"dirty_window INSERT, " +
		"readings INSERT, readings(recorded_at) SELECT, readings(turbine_id) SELECT, readings_staging SELECT, turbine_fence SELECT"
	if got := grants(t, shardPool, role); got != want {
		t.Fatalf("the shard grants %s:\n%s\nwant exactly\n%s", role, got, want)
	}
	if got := grants(t, env.Control, role); got != "" {
		t.Fatalf("the control database grants %s: %s, want nothing", role, got)
	}
	// A partition created later grants nothing to anyone: the role writes
	// through readings, where the partition's own privileges are not checked.
	_, err = sharddb.New(shardPool).ReadingsEnsurePartition(ctx, next)
	testdb.Must(t, err, "a later partition")
	if n := testdb.Int(t, shardPool, `SELECT count(*) FROM pg_class WHERE relname = 'readings_p20260802' AND relacl IS NULL`); n != 1 {
		t.Fatal("the new partition carries grants, want none")
	}
	err = asRole(shardPool, role, false, func(tx pgx.Tx) error {
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"readings"}, cols, pgx.CopyFromRows([][]any{reading("N-001", 24*60+5)}))
		return err
	})
	testdb.Must(t, err, "copy into a later partition as %s", role)
}

// TestRolesDownKeepsASharedRole: a database's Down revokes its own grants
// and leaves a role that others still use (here, a member login: dropping
// the group would silently take a person's access away); Up grants again.
func TestRolesDownKeepsASharedRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, role string
		fsys       fs.FS
		before     int64
		migrate    func(context.Context, *pgxpool.Pool) (schema.Result, error)
	}{
		{"Control", "galewatch_reporting", control.FS, 10, schema.MigrateControl},
		{"Shard", "galewatch_ingest", shard.FS, 6, schema.MigrateShard},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := testdb.Pool(t, testdb.NewDatabase(t))
			_, err := tc.migrate(ctx, pool)
			testdb.Must(t, err, "migrate")
			var b [4]byte
			_, _ = rand.Read(b[:])
			member := "gwt_member_" + hex.EncodeToString(b[:])
			testdb.Exec(t, pool, fmt.Sprintf("CREATE ROLE %s NOLOGIN IN ROLE %s", member, tc.role))
			t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+member) })

			db := stdlib.OpenDBFromPool(pool)
			defer db.Close()
			p, err := goose.NewProvider(goose.DialectPostgres, db, tc.fsys)
			testdb.Must(t, err, "goose")
			_, err = p.DownTo(ctx, tc.before)
			testdb.Must(t, err, "down to %d", tc.before)
			if g := grants(t, pool, tc.role); g != "" {
				t.Fatalf("after Down the database still grants %s: %s", tc.role, g)
			}
			if n := testdb.Int(t, pool, `SELECT count(*) FROM pg_roles WHERE rolname = $1`, tc.role); n != 1 {
				t.Fatalf("%s was dropped while %s is a member of it", tc.role, member)
			}
			if tc.name == "Control" {
				if n := testdb.Int(t, pool, `SELECT count(*) FROM pg_proc WHERE proname = 'rollup_day_unfinished' AND NOT prosecdef AND proconfig IS NULL`); n != 1 {
					t.Fatal("rollup_day_unfinished is not back to SECURITY INVOKER without settings")
				}
			}
			_, err = tc.migrate(ctx, pool)
			testdb.Must(t, err, "migrate again")
			if g := grants(t, pool, tc.role); g == "" {
				t.Fatalf("after Up again the database grants %s nothing", tc.role)
			}
		})
	}
}
