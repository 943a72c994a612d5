package partition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/testdb"
)

func TestPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

	t.Run("AheadOfTime", func(t *testing.T) {
		_, err := partition.Maintain(ctx, pool, now, 7, nil)
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
		keepFrom := partition.Day(now).AddDate(0, 0, -14)
		dropped, err := partition.Maintain(ctx, pool, now, 7, &keepFrom)
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

// TestRetentionKeepsWholeFarmLocalDays: retention keeps 14 farm-local days
// for every farm. London's oldest kept day starts at 2026-11-15 00:00Z,
// Auckland's (UTC+13) at 2026-11-15 11:00Z, so the horizon is the earlier:
// the partitions of 13 and 14 November go, 15 November (which holds the
// start of both farms' oldest kept day) stays, and the shard remembers
// that readings before 15 November 00:00Z are gone.
func TestRetentionKeepsWholeFarmLocalDays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, `
shards: [{name: s1}]
farms:
  - {id: london, timezone: Europe/London, turbines: [{id: L-1, shard: s1}]}
  - {id: auckland, timezone: Pacific/Auckland, turbines: [{id: A-1, shard: s1}]}
`)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	keep, err := partition.KeepFrom(ctx, env.Control, now, 14)
	testdb.Must(t, err, "keep from")
	if want := time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC); !keep["london"].Equal(want) {
		t.Fatalf("london keeps from %s, want %s", keep["london"].UTC(), want)
	}
	if want := time.Date(2026, 11, 15, 11, 0, 0, 0, time.UTC); !keep["auckland"].Equal(want) {
		t.Fatalf("auckland keeps from %s, want %s", keep["auckland"].UTC(), want)
	}
	horizon, err := partition.RetentionHorizon(ctx, env.Control, now, 14)
	testdb.Must(t, err, "horizon")
	pool := env.Shards.Pool("s1")
	k := partition.NewKeeper(pool)
	for d := 13; d <= 16; d++ {
		testdb.Must(t, k.Ensure(ctx, []time.Time{time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC)}), "partition of %d November", d)
	}
	dropped, err := partition.Maintain(ctx, pool, now, 1, horizon)
	testdb.Must(t, err, "maintain")
	if dropped != 2 {
		t.Fatalf("dropped %d partitions, want 2 (13 and 14 November)", dropped)
	}
	if n := testdb.Int(t, pool, `SELECT count(*) FROM pg_class WHERE relname = 'readings_p20261115'`); n != 1 {
		t.Fatal("the partition of 15 November was dropped: London's oldest kept day starts in it")
	}
	if n := testdb.Int(t, pool, `SELECT extract(epoch FROM dropped_before)::bigint FROM readings_retention`); n != time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC).Unix() {
		t.Fatalf("readings_retention.dropped_before = %d, want 2026-11-15T00:00Z", n)
	}
	if h, err := partition.RetentionHorizon(ctx, env.Control, now, 0); err != nil || h != nil {
		t.Fatalf("retention 0: horizon %v, %v; want nil (keep everything)", h, err)
	}
}

// TestRetentionDayIsTheDayHoldingNow: at 04:30Z on 1 November 2026 Havana's
// clock reads 00:30 on 1 November, but that hour repeats (the clocks fall
// back at 01:00 to midnight) and belongs to 31 October by the day bounds
// used everywhere; so "today" is 31 October and one kept day starts at
// 30 October's start.
func TestRetentionDayIsTheDayHoldingNow(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: havana, timezone: America/Havana, turbines: [{id: H-1, shard: s1}]}]\n")
	keep, err := partition.KeepFrom(context.Background(), env.Control, time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC), 1)
	testdb.Must(t, err, "keep from")
	if want := time.Date(2026, 10, 30, 4, 0, 0, 0, time.UTC); !keep["havana"].Equal(want) {
		t.Fatalf("havana keeps from %s, want %s (the start of 30 October)", keep["havana"].UTC(), want)
	}
}

// TestEnsurePartitionRace: one transaction creates the partition of 3
// August and holds it uncommitted; a second asks for the same day (and
// waits on the first's lock). Once the first commits, the second must
// report the partition as already there (false), not fail with "relation
// already exists"; the day has exactly 1 partition.
func TestEnsurePartitionRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	day := time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)
	first, err := pool.Begin(ctx)
	testdb.Must(t, err, "begin")
	defer func() { _ = first.Rollback(ctx) }()
	var created bool
	testdb.Must(t, first.QueryRow(ctx, `SELECT readings_ensure_partition($1::date)`, day).Scan(&created), "first")
	if !created {
		t.Fatalf("the first transaction did not create the partition")
	}
	second := make(chan error, 1)
	var secondCreated bool
	go func() {
		second <- pool.QueryRow(ctx, `SELECT readings_ensure_partition($1::date)`, day).Scan(&secondCreated)
	}()
	// The second is waiting on the first's lock once it shows in pg_locks.
	for i := 0; ; i++ {
		if testdb.Int(t, pool, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`) == 1 {
			break
		}
		if i == 500 {
			t.Fatalf("the second call never waited on the first")
		}
		time.Sleep(10 * time.Millisecond)
	}
	testdb.Must(t, first.Commit(ctx), "commit first")
	if err := <-second; err != nil {
		t.Fatalf("the second call, after the first committed: %v (want false, no error)", err)
	}
	if secondCreated {
		t.Fatalf("the second call says it created the partition, want false")
	}
	if n := testdb.Int(t, pool, `SELECT count(*) FROM pg_inherits WHERE inhrelid = 'readings_p20260803'::regclass`); n != 1 {
		t.Fatalf("readings_p20260803 attached %d times, want 1", n)
	}
}
