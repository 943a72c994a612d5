package schema_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/testdb"
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

func TestMigrateControlTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	pool := testdb.Pool(t, testdb.NewDatabase(t))
	ctx := context.Background()

	first, err := schema.MigrateControl(ctx, pool)
	testdb.Must(t, err, "first migrate")
	if first.Goose != 2 || first.River != 8 {
		t.Fatalf("first migrate applied goose=%d river=%d, want 2 and 8", first.Goose, first.River)
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
		{"Control", schema.MigrateControl, 2},
		{"Shard", schema.MigrateShard, 2},
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
