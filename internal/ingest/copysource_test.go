package ingest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestCopyColumnsMatchSchema: the writer's hand-listed COPY columns are
// exactly the columns of readings and of the staging template, in table
// order, and a batch written through copySource (both targets) reads back
// field for field — so the list cannot drift from the migrations unseen.
func TestCopyColumnsMatchSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	pool := env.Shards.Pool("s1")
	for _, table := range []string{"readings", "readings_staging"} {
		rows, err := pool.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`, table)
		testdb.Must(t, err, "columns of %s", table)
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		testdb.Must(t, err, "columns of %s", table)
		if !slices.Equal(cols, readingsColumns) {
			t.Fatalf("%s has columns %v; the writer copies %v", table, cols, readingsColumns)
		}
	}

	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	testdb.Exec(t, pool, `SELECT readings_ensure_partition($1::date)`, day)
	batch := []row{
		{TurbineID: "AP-001", RecordedAt: day.Add(2 * time.Second), ReceivedAt: day.Add(3500 * time.Millisecond), Available: true, PowerKw: 1234.5, WindMs: 9.25, State: "RUN 12"},
		{TurbineID: "AP-002", RecordedAt: day.Add(4 * time.Second), ReceivedAt: day.Add(7 * time.Hour), Available: false, PowerKw: -3.5, WindMs: 0.5},
	}
	// Both paths store every column, and no state as '' (not NULL: an index
	// entry with a NULL is 8 bytes longer).
	readBack := func(path string) {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state FROM readings ORDER BY turbine_id`)
		testdb.Must(t, err, "read back")
		got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
		testdb.Must(t, err, "read back")
		if len(got) != 2 {
			t.Fatalf("%s: read back %d rows, want 2", path, len(got))
		}
		for i := range batch {
			g, w := got[i], batch[i]
			if g.TurbineID != w.TurbineID || !g.RecordedAt.Equal(w.RecordedAt) || !g.ReceivedAt.Equal(w.ReceivedAt) || g.Available != w.Available || g.PowerKw != w.PowerKw || g.WindMs != w.WindMs || g.State != w.State {
				t.Errorf("%s: row %d read back as %+v, want %+v", path, i, g, w)
			}
		}
		var nulls, empty int
		testdb.Must(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state IS NULL), count(*) FILTER (WHERE state = '') FROM readings`).Scan(&nulls, &empty), "nulls")
		if nulls != 0 || empty != 1 {
			t.Errorf("%s: %d readings with a NULL state and %d with '', want 0 and 1 (the one without a state)", path, nulls, empty)
		}
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := sharddb.New(tx).ReadingsStagingCreate(ctx); err != nil {
			return err
		}
		if n, err := tx.CopyFrom(ctx, stagingTable, readingsColumns, newCopySource(batch)); err != nil || n != 2 {
			t.Errorf("staging copy: %d rows, %v; want 2", n, err)
		}
		inserted, err := sharddb.New(tx).ReadingsInsertFromStaging(ctx)
		if len(inserted) != 2 {
			t.Errorf("moved %d staged rows, want 2", len(inserted))
		}
		return err
	})
	testdb.Must(t, err, "staging path")
	readBack("staging")
	testdb.Exec(t, pool, `DELETE FROM readings`)
	n, err := pool.CopyFrom(ctx, readingsTable, readingsColumns, newCopySource(batch))
	testdb.Must(t, err, "copy")
	if n != 2 {
		t.Fatalf("copied %d rows, want 2", n)
	}
	readBack("copy")
}
