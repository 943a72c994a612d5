package drain_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestDrainDoesNotWaitForASlowShard: shard s1 is stuck (its dirty_mark
// table is locked by another session, as a shard under a long lock or a
// slow disk would be). A drain must still turn shard s4's mark into a
// request and a job while s1's part waits out its own timeout.
// marksBehindALock is the Ardnave fleet with a mark of 1 August on s1 and
// on s4, s1's dirty_mark locked (ACCESS EXCLUSIVE) by the returned
// transaction until it is rolled back or the test ends: a shard whose
// drain hangs beside one that answers.
func marksBehindALock(t *testing.T) (*testdb.Env, pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	for _, s := range []struct{ shard, farm, turbine string }{{"s1", "ardnave-point", "AP-001"}, {"s4", "kilmore-sands", "KS-001"}} {
		testdb.Exec(t, env.Shards.Pool(s.shard), `INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings)
			VALUES ($1, '2026-08-01', ARRAY[$2], '2026-08-01T10:00:00Z', '2026-08-01T10:00:00Z', 1)`, s.farm, s.turbine)
	}
	lock, err := env.Shards.Pool("s1").Begin(ctx)
	testdb.Must(t, err, "begin")
	t.Cleanup(func() { _ = lock.Rollback(ctx) })
	_, err = lock.Exec(ctx, `LOCK TABLE dirty_mark IN ACCESS EXCLUSIVE MODE`)
	testdb.Must(t, err, "lock s1's marks")
	return env, lock
}

// enqueuer inserts rollup_day jobs through a stopped River client of a
// pipeline on env: the jobs wait, so a test reads what the drain left.
func enqueuer(t *testing.T, env *testdb.Env) drain.Enqueue {
	t.Helper()
	return jobs.RollupDayEnqueue(pipelinetest.New(t, env, pipelinetest.Options{NoStart: true}).Client)
}

func TestDrainDoesNotWaitForASlowShard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, lock := marksBehindALock(t)

	enqueue := enqueuer(t, env)
	// s1 stays stuck until the lock is released, however slow the machine:
	// its timeout is no bound here.
	d := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: func() time.Time { return time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC) }, ShardTimeout: testdb.Hang}
	type result struct {
		res drain.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := d.DrainImmediate(ctx, enqueue)
		done <- result{res, err}
	}()
	// s4's request appears while s1 is still stuck: a drain that waited for
	// s1 first would never drain s4.
	const hang = 30 * time.Second // normal 0.1 s; 30 s catches a hang
	deadline := time.Now().Add(hang)
	for testdb.Int(t, env.Control, `SELECT count(*) FROM rollup_pending WHERE shard_name = 's4'`) == 0 {
		select {
		case r := <-done:
			t.Fatalf("the drain ended (%+v, %v) before s4's request appeared", r.res, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("s4's mark was not drained after %v while s1 was stuck: the drain hung on the stuck shard", hang)
		}
		time.Sleep(20 * time.Millisecond) // polling a row, not waiting for time to pass
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM rollup_pending WHERE shard_name = 's1'`); n != 0 {
		t.Fatalf("s1 has %d requests while its marks are locked, want 0", n)
	}
	testdb.Must(t, lock.Rollback(ctx), "release s1")
	r := <-done
	testdb.Must(t, r.err, "drain")
	if r.res.Enqueued != 2 || r.res.Deleted != 2 {
		t.Fatalf("drain: %+v, want 2 jobs enqueued and 2 marks deleted once s1 was released", r.res)
	}
}

// TestDrainsDoNotDoubleEnqueue: a periodic drain and an immediate one (as
// `work --until-idle` beside `serve` makes) running at once turn each mark
// into exactly one job: one drain per shard at a time.
func TestDrainsDoNotDoubleEnqueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	for day := 1; day <= 20; day++ {
		testdb.Exec(t, env.Shards.Pool("s4"), `INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, created_at, updated_at)
			VALUES ('kilmore-sands', make_date(2026, 8, $1::int), ARRAY['KS-001'], '2026-08-01T10:00:00Z', '2026-08-01T10:00:00Z', 1, '2026-08-25T00:00:00Z', '2026-08-25T00:00:00Z')`, day)
	}
	enqueue := enqueuer(t, env)
	now := func() time.Time { return time.Date(2026, 8, 25, 1, 0, 0, 0, time.UTC) } // every mark settled long ago
	d := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: now}
	errs := make(chan error, 2)
	go func() { _, err := d.Drain(ctx, enqueue); errs <- err }()
	go func() { _, err := d.DrainImmediate(ctx, enqueue); errs <- err }()
	testdb.Must(t, <-errs, "drain")
	testdb.Must(t, <-errs, "drain")
	// Whatever one of them skipped, a further drain finds nothing new.
	_, err := d.Drain(ctx, enqueue)
	testdb.Must(t, err, "drain again")
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day'`); n != 20 {
		t.Fatalf("%d rollup_day jobs for 20 marks drained by two drains at once, want 20", n)
	}
}

// TestSkewedMarkIsNotHeldBack: a mark stamped by a writer whose clock is
// ten minutes ahead of the drainer's cannot be judged as settling; it is
// drained at once rather than held for ten minutes.
func TestSkewedMarkIsNotHeldBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	testdb.Exec(t, env.Shards.Pool("s4"), `INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, created_at, updated_at)
		VALUES ('kilmore-sands', '2026-08-01', ARRAY['KS-001'], '2026-08-01T10:00:00Z', '2026-08-01T10:00:00Z', 1, '2026-08-03T12:10:00Z', '2026-08-03T12:10:00Z')`)
	d := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: func() time.Time { return time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC) }}
	res, err := d.Drain(ctx, enqueuer(t, env))
	testdb.Must(t, err, "drain")
	if res.Enqueued != 1 || res.Deferred != 0 {
		t.Fatalf("drain of a mark from a clock 10 min ahead: %+v, want it enqueued, not deferred", res)
	}
}

// TestDrainRecordsHowFarItRead: every drain of a shard records, in the
// control transaction of its requests, how far it read the shard's marks
// (shard_drain: the drainer's clock before the read) and the marks it left
// to settle (dirty_mark_settling); a shard whose drain fails keeps what it
// had, so the monthly report holds its farms' days back.
func TestDrainRecordsHowFarItRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	enqueue := enqueuer(t, env)
	// A burst on s4 that started 5 s before the first drain.
	testdb.Exec(t, env.Shards.Pool("s4"), `INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, created_at, updated_at)
		VALUES ('kilmore-sands', '2026-08-01', ARRAY['KS-001'], '2026-08-01T10:00:00Z', '2026-08-01T10:00:00Z', 1, '2026-08-02T11:59:55Z', '2026-08-02T11:59:55Z')`)
	drained := func() string {
		var s string
		testdb.Must(t, env.Control.QueryRow(ctx, `SELECT coalesce(string_agg(shard_name || ' ' || to_char(drained_through AT TIME ZONE 'UTC', 'HH24:MI:SS') || ' ' || marks_read, ', ' ORDER BY shard_name), '') FROM shard_drain`).Scan(&s), "shard_drain")
		return s
	}
	settling := func() string {
		var s string
		testdb.Must(t, env.Control.QueryRow(ctx, `SELECT coalesce(string_agg(farm_id || ' ' || day || ' ' || shard_name || ' ' || to_char(marked_at AT TIME ZONE 'UTC', 'HH24:MI:SS'), ', '), '') FROM dirty_mark_settling`).Scan(&s), "settling")
		return s
	}

	d := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: func() time.Time { return time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC) }}
	res, err := d.Drain(ctx, enqueue)
	testdb.Must(t, err, "drain at 12:00")
	if res.Deferred != 1 || res.Enqueued != 0 {
		t.Fatalf("drain at 12:00: %+v, want the mark left to settle", res)
	}
	if got := drained(); got != "s1 12:00:00 0, s2 12:00:00 0, s3 12:00:00 0, s4 12:00:00 1" {
		t.Errorf("shard_drain after 12:00: %q, want every shard drained through 12:00, s4 with its mark read", got)
	}
	if got := settling(); got != "kilmore-sands 2026-08-01 s4 11:59:55" {
		t.Errorf("settling after 12:00: %q, want kilmore-sands' mark on s4", got)
	}

	// At 12:01 s1 is stuck (its marks locked): its drain fails within its
	// timeout and s1 stays drained through 12:00; s4's mark has settled and
	// becomes a request, and is no longer settling.
	lock, err := env.Shards.Pool("s1").Begin(ctx)
	testdb.Must(t, err, "begin")
	defer lock.Rollback(ctx)
	_, err = lock.Exec(ctx, `LOCK TABLE dirty_mark IN ACCESS EXCLUSIVE MODE`)
	testdb.Must(t, err, "lock s1's marks")
	d.Now = func() time.Time { return time.Date(2026, 8, 2, 12, 1, 0, 0, time.UTC) }
	d.ShardTimeout = time.Second
	res, err = d.Drain(ctx, enqueue)
	if err == nil || res.Enqueued != 1 || res.Deleted != 1 {
		t.Fatalf("drain at 12:01 with s1 stuck: %+v, %v; want s4's mark enqueued and deleted, and s1's failure", res, err)
	}
	if got := drained(); got != "s1 12:00:00 0, s2 12:01:00 0, s3 12:01:00 0, s4 12:01:00 1" {
		t.Errorf("shard_drain after 12:01: %q, want s1 still at 12:00, the others at 12:01", got)
	}
	if got := settling(); got != "" {
		t.Errorf("settling after 12:01: %q, want none", got)
	}
}

// TestADrainPassesOnlyTheAnnouncementsItsReadSawFinished: a writer
// announces its marks on the control database before it commits them
// (dirty_mark_announced, keyed by its shard transaction). A drain whose
// read of the shard began while that transaction was open neither reads
// its mark nor passes its announcement, so the day stays pending, whatever
// the clocks say; the drain after the commit reads the mark and passes the
// announcement in the control transaction that records it. A writer that
// rolled back is passed too. An id at or past the read's xmax is not: a
// writer can be open above every transaction completed when the read began
// (on a quiet shard server, the usual case).
func TestADrainPassesOnlyTheAnnouncementsItsReadSawFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	at := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	write := func(day string) (pgx.Tx, int64) {
		t.Helper()
		tx, err := env.Shards.Pool("s1").Begin(ctx)
		testdb.Must(t, err, "begin")
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		d, err := time.Parse(time.DateOnly, day)
		testdb.Must(t, err, "day")
		q := sharddb.New(tx)
		testdb.Must(t, q.DirtyMarkUpsert(ctx, sharddb.DirtyMarkUpsertParams{FarmID: "f", Day: d, TurbineIds: []string{"T-1"},
			FirstRecordedAt: d, LastRecordedAt: d, Readings: 1, WrittenAt: at}), "mark %s", day)
		xact, err := q.DirtyMarkXact(ctx)
		testdb.Must(t, err, "xact")
		testdb.Must(t, controldb.New(env.Control).DirtyMarkAnnounce(ctx, controldb.DirtyMarkAnnounceParams{
			ShardName: "s1", Xact: xact, MarkedAt: at, FarmIds: []string{"f"}, Days: []time.Time{d}}), "announce %s", day)
		return tx, xact
	}
	committed, _ := write("2026-08-01")
	rolledBack, _ := write("2026-08-02")
	text := func(sql string, args ...any) string {
		t.Helper()
		var s string
		testdb.Must(t, env.Control.QueryRow(ctx, sql, args...).Scan(&s), "%s", sql)
		return s
	}
	announced := func() string {
		return text(`SELECT coalesce(string_agg(day::text, ' ' ORDER BY day), '') FROM dirty_mark_announced`)
	}
	pending := func(day string) string {
		return text(`SELECT pending::text FROM farm_day_waiting('f', $1)`, day)
	}
	d := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: func() time.Time { return at.Add(time.Hour) }}
	enqueue := enqueuer(t, env)

	res, err := d.DrainImmediate(ctx, enqueue)
	testdb.Must(t, err, "drain while both writers are open")
	if got := announced(); res.Marks != 0 || got != "2026-08-01 2026-08-02" || pending("2026-08-01") != "true" {
		t.Fatalf("drain while the writers are open: %+v, announced %q, 1 August pending %s; want no mark read, both writers' announcements kept (pending)",
			res, got, pending("2026-08-01"))
	}
	testdb.Must(t, committed.Commit(ctx), "commit")
	testdb.Must(t, rolledBack.Rollback(ctx), "roll back")
	if got := announced(); got != "2026-08-01 2026-08-02" {
		t.Fatalf("after the commit and the rollback, before a drain: announced %q, want both kept", got)
	}
	res, err = d.DrainImmediate(ctx, enqueue)
	testdb.Must(t, err, "drain after the commit")
	if got := announced(); res.Marks != 1 || res.Enqueued != 1 || got != "" ||
		testdb.Int(t, env.Control, `SELECT count(*) FROM rollup_pending WHERE farm_id = 'f' AND day = '2026-08-01'`) != 1 {
		t.Fatalf("drain after the commit: %+v, announced %q; want 1 August's mark read and requested, every announcement passed", res, got)
	}
	if pending("2026-08-02") != "false" || pending("2026-08-01") != "true" {
		t.Fatalf("pending: 2 August %s (rolled back: want false), 1 August %s (requested: want true)", pending("2026-08-02"), pending("2026-08-01"))
	}

	// The read's own snapshot judges: ids at and past its xmax are not passed.
	read, err := env.Shards.Pool("s1").BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	testdb.Must(t, err, "begin the read")
	defer func() { _ = read.Rollback(ctx) }()
	var xmax int64
	testdb.Must(t, read.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&xmax), "xmax")
	passed, err := sharddb.New(read).DirtyMarkXactsPassed(ctx, []int64{xmax - 1, xmax, xmax + 1})
	testdb.Must(t, err, "passed")
	if len(passed) != 1 || passed[0] != xmax-1 {
		t.Fatalf("of xmax-1, xmax and xmax+1 (%d) the read passed %v; want only xmax-1 (completed before it)", xmax, passed)
	}
}
