package schema_test

import (
	"context"
	"io/fs"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/sql/migrations/control"
	"github.com/galewatch/galewatch/sql/migrations/shard"
)

// snapshot describes a database's schema: every column of every relation
// in public, plus the applied goose versions.
func snapshot(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	err := pool.QueryRow(context.Background(), `
		SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, ordinal_position)
		       || '|' || (SELECT string_agg(version_id::text, ',' ORDER BY version_id) FROM goose_db_version)
		FROM information_schema.columns WHERE table_schema = 'public'`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// migrationFiles counts the goose files embedded in a migration set.
func migrationFiles(t *testing.T, fsys fs.FS) int {
	t.Helper()
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// riverMigrations is how many migrations River v0.51 brings.
const riverMigrations = 8

func TestMigrateControlTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	pool := testdb.Pool(t, testdb.NewDatabase(t))
	ctx := context.Background()

	first, err := schema.MigrateControl(ctx, pool)
	testdb.Must(t, err, "first migrate")
	if want := migrationFiles(t, control.FS); first.Goose != want || first.River != riverMigrations {
		t.Fatalf("first migrate applied goose=%d river=%d, want %d and %d", first.Goose, first.River, want, riverMigrations)
	}
	before := snapshot(t, pool)
	second, err := schema.MigrateControl(ctx, pool)
	testdb.Must(t, err, "second migrate")
	if second.Goose != 0 || second.River != 0 {
		t.Fatalf("second migrate applied goose=%d river=%d, want 0 and 0", second.Goose, second.River)
	}
	if after := snapshot(t, pool); after != before {
		t.Fatalf("schema changed on second migrate:\nbefore %s\nafter  %s", before, after)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		migrate func(context.Context, *pgxpool.Pool) (schema.Result, error)
		want    int
	}{
		{"Control", schema.MigrateControl, migrationFiles(t, control.FS)},
		{"Shard", schema.MigrateShard, migrationFiles(t, shard.FS)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := testdb.NewDatabase(t)
			// Two independent pools: two "processes" racing.
			a, b := testdb.Pool(t, dsn), testdb.Pool(t, dsn)
			var wg sync.WaitGroup
			results := make([]schema.Result, 2)
			errs := make([]error, 2)
			for i, pool := range []*pgxpool.Pool{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = tc.migrate(ctx, pool)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				testdb.Must(t, err, "migrate %d", i)
			}
			if got := results[0].Goose + results[1].Goose; got != tc.want {
				t.Fatalf("the two runs applied %d goose migrations between them, want exactly %d", got, tc.want)
			}
			if n := testdb.Int(t, a, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); n != int64(tc.want) {
				t.Fatalf("goose_db_version has %d applied versions, want %d", n, tc.want)
			}
		})
	}
}

// TestEveryControlColumnIsCommented: DBAs read the control database
// directly, so every table, view and column of ours carries a COMMENT ON.
func TestEveryControlColumnIsCommented(t *testing.T) {
	t.Parallel()
	pool := testdb.Pool(t, testdb.NewDatabase(t))
	_, err := schema.MigrateControl(context.Background(), pool)
	testdb.Must(t, err, "migrate")
	var missing string
	err = pool.QueryRow(context.Background(), `
		SELECT coalesce(string_agg(c.relname || coalesce('.' || a.attname, ''), ', '), '')
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v')
		  AND c.relname NOT LIKE 'river%' AND c.relname <> 'goose_db_version'
		  AND (obj_description(c.oid, 'pg_class') IS NULL OR col_description(c.oid, a.attnum) IS NULL)`).Scan(&missing)
	testdb.Must(t, err, "query comments")
	if missing != "" {
		t.Fatalf("without a COMMENT: %s", missing)
	}
}
