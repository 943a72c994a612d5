package partition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/schema"
	"github.com/galewatch/galewatch/internal/testdb"
)

func TestPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Pool(t, testdb.NewDatabase(t))
	_, err := schema.MigrateShard(ctx, pool)
	testdb.Must(t, err, "migrate shard")
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

	t.Run("AheadOfTime", func(t *testing.T) {
		_, err := partition.Maintain(ctx, pool, now, 7, 0)
		testdb.Must(t, err, "maintain")
		// yesterday, today and 7 days ahead
		if n := testdb.Int(t, pool, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'readings'::regclass`); n != 9 {
			t.Fatalf("partitions = %d, want 9", n)
		}
	})

	t.Run("OnDemandThreeWeeksOld", func(t *testing.T) {
		old := now.AddDate(0, 0, -21)
		k := partition.NewKeeper(pool)
		testdb.Must(t, k.Ensure(ctx, []time.Time{old, old.Add(time.Hour)}), "ensure")
		testdb.Exec(t, pool, `INSERT INTO readings VALUES ('AP-001', $1, $2, true, 1.5, 7.0)`, old, now)
		var part string
		if err := pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM readings WHERE recorded_at = $1`, old).Scan(&part); err != nil {
			t.Fatal(err)
		}
		if part != "readings_p20261108" {
			t.Fatalf("reading landed in %s, want readings_p20261108", part)
		}
	})

	t.Run("KeyRefusesDuplicate", func(t *testing.T) {
		at := now.Add(-time.Hour)
		testdb.Exec(t, pool, `INSERT INTO readings VALUES ('AP-002', $1, $2, true, 1.5, 7.0)`, at, now)
		_, err := pool.Exec(ctx, `INSERT INTO readings VALUES ('AP-002', $1, $2, false, 0, 0)`, at, now.Add(time.Minute))
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("second insert of the same (turbine, recorded_at): err = %v, want unique_violation 23505", err)
		}
		if n := testdb.Int(t, pool, `SELECT count(*) FROM readings WHERE turbine_id = 'AP-002'`); n != 1 {
			t.Fatalf("AP-002 has %d readings, want 1", n)
		}
	})

	t.Run("RetentionDropsWholeOldPartitions", func(t *testing.T) {
		dropped, err := partition.Maintain(ctx, pool, now, 7, 14)
		testdb.Must(t, err, "maintain with retention")
		if dropped != 1 {
			t.Fatalf("dropped %d partitions, want 1 (the 2026-11-08 one)", dropped)
		}
		if n := testdb.Int(t, pool, `SELECT count(*) FROM readings WHERE turbine_id = 'AP-001'`); n != 0 {
			t.Fatalf("the 3-week-old reading survived retention: %d rows", n)
		}
	})

	t.Run("StagingTemplateRefusesWrites", func(t *testing.T) {
		_, err := pool.Exec(ctx, `INSERT INTO public.readings_staging VALUES ('AP-001', now(), now(), true, 0, 0)`)
		if err == nil {
			t.Fatal("insert into the staging template succeeded, want a check violation")
		}
	})
}
