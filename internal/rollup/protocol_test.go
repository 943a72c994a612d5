package rollup_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// replayTurbine loads ten minutes of one Kilmore turbine at 14:00 on 1 August.
func (b *bundle) replayTurbine(t testing.TB, id string, minute int) {
	t.Helper()
	sc, err := simulate.FarmConfig(b.Env.Plan, "kilmore-sands", time.Date(2026, 8, 1, 14, minute, 0, 0, london), time.Date(2026, 8, 1, 14, minute+10, 0, 0, london), 4)
	testdb.Must(t, err, "config")
	sc.ExactClocks = true
	for _, tb := range sc.Turbines {
		if tb.ID == id {
			sc.Turbines = append(sc.Turbines[:0:0], tb)
			break
		}
	}
	if sum := b.Load(t, sc); sum.Accepted != 300 || sum.DirtyMarks != 1 {
		t.Fatalf("replay of %s: %+v, want 300 accepted and 1 mark", id, sum)
	}
}

// TestTwoReplaysWhileARecomputeIsRunning: while a recompute holds the lock,
// one turbine's replay is drained (its job starts and waits on the lock),
// then another turbine's. Neither replay may be lost: the second request
// widens the first instead of replacing it.
func TestTwoReplaysWhileARecomputeIsRunning(t *testing.T) {
	t.Parallel()
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	var armed atomic.Bool
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{WorkersPerShard: 3, AfterCompute: func(r rollup.Request) {
		if r.Shard == "s4" && armed.Load() && r.Reason == rollup.ReasonSchedule {
			once.Do(func() { close(held); <-release })
		}
	}})
	armed.Store(true)
	b.Enqueue(t, "kilmore-sands", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	<-held

	b.replayTurbine(t, "KS-001", 0)
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("first drain: %+v, want 1 job", res)
	}
	// Wait until the first dirty job is running (blocked on the lock, its
	// request not yet claimed): that is the window the second drain hits.
	waitRunning(t, b, 2)
	b.replayTurbine(t, "KS-002", 20)
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("second drain: %+v, want 1 new job (the first has started)", res)
	}
	close(release)
	b.WaitJobs(t)
	for _, id := range []string{"KS-001", "KS-002"} {
		if got := b.TurbineDay(t, id, "2026-08-01"); got.Received != 300 {
			t.Fatalf("%s received %d after the queue drained, want 300 (its replay)", id, got.Received)
		}
	}
}

// waitRunning waits, event by event, until n rollup_day jobs are running.
func waitRunning(t *testing.T, b *bundle, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		got := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND state = 'running'`)
		if got >= int64(n) {
			return
		}
		select {
		case <-b.Events:
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("fewer than %d rollup_day jobs running after a minute", n)
}

// TestOpenDayMarkCorrectsItsWindowsNow: readings dirtying a day that is
// still going are corrected at once, window by window (a final row for
// each window they landed in), while the day itself gets no turbine_day
// rows until every window of it is past the watermark; then its close
// writes them, added up from the windows.
func TestOpenDayMarkCorrectsItsWindowsNow(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{})
	b.Clock.Set(time.Date(2026, 8, 1, 16, 0, 0, 0, london)) // Saturday afternoon: the day is open
	b.replayTurbine(t, "KS-003", 0)                         // 14:00-14:10 readings arriving at 16:00
	res := b.DrainNow(t)
	if res.Enqueued != 1 || res.OpenDays != 1 || res.Deleted != 1 {
		t.Fatalf("drain: %+v, want 1 job for an open day and the mark deleted", res)
	}
	b.WaitJobs(t)
	var windows, received int64
	err := b.Env.Control.QueryRow(context.Background(),
		`SELECT count(*), coalesce(sum(received), 0) FROM farm_window WHERE farm_id = 'kilmore-sands' AND path = 'final'`).Scan(&windows, &received)
	testdb.Must(t, err, "final windows")
	// 11: the 10 one-minute windows the replay landed in, and the one
	// before them (a reading marks the window its slot may start in, up to
	// two cadences back: the mark rule does not repeat the slot rule).
	if windows != 11 || received != 300 {
		t.Fatalf("final windows after the correction: %d windows, %d received; want 11 windows, 300 received", windows, received)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'kilmore-sands' AND day = '2026-08-01'`); n != 0 {
		t.Fatalf("%d turbine_day rows for a day still in progress, want none", n)
	}
	// The day ends (Europe/Dublin: 23:00Z) and its watermark passes; its
	// close writes the day, added up from its windows.
	b.Clock.Set(time.Date(2026, 8, 2, 0, 5, 0, 0, time.UTC))
	b.Enqueue(t, "kilmore-sands", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "KS-003", "2026-08-01"); got.Received != 300 || got.Expected != 43_200 {
		t.Fatalf("KS-003 on the closed day: %+v, want expected 43200, received 300", got)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'kilmore-sands' AND day = '2026-08-01' AND path = 'final'`); n != 1440 {
		t.Fatalf("%d final windows for the closed day, want 1440", n)
	}
}

// TestCancelledJobsRequestIsAdopted: an operator cancels a waiting dirty
// job; the next drain gives its request a new job.
func TestCancelledJobsRequestIsAdopted(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{NoStart: true})
	b.replayTurbine(t, "KS-005", 0)
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	id := testdb.Int(t, b.Env.Control, `SELECT job_id FROM rollup_pending`)
	_, err := b.Client.JobCancel(context.Background(), id)
	testdb.Must(t, err, "cancel")
	if res := b.DrainNow(t); res.Orphans != 1 {
		t.Fatalf("drain after the cancel: %+v, want 1 orphaned request adopted", res)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM rollup_pending p JOIN river_job j ON j.id = p.job_id WHERE j.state = 'available'`); n != 1 {
		t.Fatalf("requests with a runnable job after the drain: %d, want 1", n)
	}
	b.StartJobs(t)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "KS-005", "2026-08-01"); got.Received != 300 {
		t.Fatalf("KS-005 received %d, want 300", got.Received)
	}
}

// TestAMarkAWriterHoldsIsNotClaimedUnderIt: a late reading of N-001 at
// 14:00:00 on 1 August marks its turbine-window and commits. A second one,
// at 14:00:02, marks the same turbine-window again (a row of its own: marks
// are append-only); while its transaction is still open (its reading and
// mark invisible to anyone else), a full recompute of the farm-day claims
// the day's marks and reads the readings. The recompute takes the first
// mark only, so the drain's next recompute counts the second reading: 2
// slots, not 1.
func TestAMarkAWriterHoldsIsNotClaimedUnderIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	at := time.Date(2026, 8, 1, 14, 0, 0, 0, time.UTC)
	var armed atomic.Bool
	var b *bundle
	var recomputed rollup.Result
	hooks := &ingest.Hooks{BeforeCommit: func(shard string, _ ingest.Lane) error {
		if shard != "s1" || !armed.CompareAndSwap(true, false) {
			return nil
		}
		var err error
		recomputed, err = b.Computer.Recompute(ctx, rollup.Request{FarmID: "north", Day: day, Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
		return err
	}}
	b = setup(t, pipelinetest.WindowFleet, pipelinetest.Options{Hooks: hooks})
	b.Clock.Set(time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC)) // the day has ended: every reading of it marks

	b.ReadingsAt(t, at, "N-001")
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window WHERE turbine_id = 'N-001' AND window_start <= $1 AND window_end > $1`, at); n != 1 {
		t.Fatalf("%d marks of N-001's 14:00 window after its first reading, want 1", n)
	}
	armed.Store(true)
	b.ReadingsAt(t, at.Add(2*time.Second), "N-001")
	if armed.Load() || recomputed.Windows == 0 {
		t.Fatalf("the recompute did not run inside the second write (armed %v, result %+v)", armed.Load(), recomputed)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window WHERE turbine_id = 'N-001' AND window_start <= $1 AND window_end > $1`, at); n != 1 {
		t.Fatalf("%d marks of N-001's 14:00 window after a recompute claimed the day under the second write, want 1 (the writer's)", n)
	}
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "N-001", "2026-08-01"); got.Received != 2 {
		t.Fatalf("N-001 received %d slots after the drain's recompute, want 2 (both readings)", got.Received)
	}
}

// TestAWriterDoesNotWaitOnAClaim: a late reading of N-001 at 14:00:00 on 1
// August marks its turbine-window. A recompute of the farm-day claims that
// mark and is held after its computation (its transaction open, the claimed
// mark deleted but not committed). A second late reading of the same
// turbine-window is then ingested: it must commit while the recompute is
// still held (before, its mark updated the claimed row and waited for the
// recompute to end, past ingest's 20 s bound behind a long recompute).
// Released, the recompute has counted 1 slot; the second reading's mark
// is there, and the drain's recompute counts 2.
func TestAWriterDoesNotWaitOnAClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	at := time.Date(2026, 8, 1, 14, 0, 0, 0, time.UTC)
	held, release := make(chan struct{}), make(chan struct{})
	var hold atomic.Bool
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Computer.AfterCompute = func(rollup.Request) {
		if hold.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
	}
	b.Clock.Set(time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC)) // the day has ended: every reading of it marks
	b.ReadingsAt(t, at, "N-001")

	hold.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := b.Computer.Recompute(ctx, rollup.Request{FarmID: "north", Day: day, Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
		done <- err
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the recompute ended before it was held: %v", err)
	}
	sent := make(chan error, 1)
	go func() { sent <- b.SendAt("N-001", at.Add(2*time.Second)) }()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatalf("the second reading, sent while the recompute holds the claimed mark: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatalf("the second reading's write waited more than 10 s on the held recompute (want: it never waits on a claim)")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("recompute: %v", err)
	}
	if got := b.TurbineDay(t, "N-001", "2026-08-01"); got.Received != 1 {
		t.Fatalf("N-001 received %d slots after the held recompute, want 1 (its snapshot predates the second reading)", got.Received)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window WHERE turbine_id = 'N-001' AND window_start <= $1 AND window_end > $1`, at); n != 1 {
		t.Fatalf("%d marks of N-001's 14:00 window after the held recompute, want 1 (the second reading's)", n)
	}
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "N-001", "2026-08-01"); got.Received != 2 {
		t.Fatalf("N-001 received %d slots after the drain's recompute, want 2 (both readings)", got.Received)
	}
}

// TestDirtyWindowRunsSplitOnClaim: a run of 10 marked windows of T-1,
// [10:00, 10:10) UTC on 1 August (day start 2026-07-31 23:00 UTC, 60-s
// windows), is claimed by a recompute up to 10:04: it takes windows
// 660–663 (10:00–10:03) and writes back [10:04, 10:10) with 6 windows. The
// fast path then absorbs [10:05, 10:07): 1 run taken, leaving [10:04,
// 10:05) with 1 window and [10:07, 10:10) with 3, same marked_at.
func TestDirtyWindowRunsSplitOnClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.ShardDatabase(t)
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	dayStart := time.Date(2026, 7, 31, 23, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return time.Date(2026, 8, 1, 10, m, 0, 0, time.UTC) }
	marked := time.Date(2026, 8, 2, 9, 0, 0, 0, time.UTC)
	q := sharddb.New(pool)
	testdb.Must(t, q.DirtyWindowInsert(ctx, sharddb.DirtyWindowInsertParams{FarmID: "f", MarkedAt: marked, Days: []time.Time{day},
		TurbineIds: []string{"T-1"}, WindowStarts: []time.Time{at(0)}, WindowEnds: []time.Time{at(10)}, Windows: []int32{10}}), "insert")
	runs := func() string {
		rows, err := pool.Query(ctx, `SELECT to_char(window_start AT TIME ZONE 'UTC', 'HH24:MI'), to_char(window_end AT TIME ZONE 'UTC', 'HH24:MI'), windows, marked_at = $1 FROM dirty_window ORDER BY window_start`, marked)
		testdb.Must(t, err, "runs")
		var out []string
		for rows.Next() {
			var s, e string
			var n int
			var same bool
			testdb.Must(t, rows.Scan(&s, &e, &n, &same), "scan")
			out = append(out, fmt.Sprintf("%s–%s %d %v", s, e, n, same))
		}
		return fmt.Sprint(out)
	}
	var claimed []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := sharddb.New(tx).DirtyWindowClaim(ctx, sharddb.DirtyWindowClaimParams{FarmID: "f", Day: day, Before: at(4), DayStart: dayStart, WindowS: 60})
		for _, r := range rows {
			claimed = append(claimed, fmt.Sprintf("%s %d-%d", r.TurbineID, r.FirstWindow, r.LastWindow))
		}
		return err
	})
	testdb.Must(t, err, "claim")
	if fmt.Sprint(claimed) != "[T-1 660-663]" {
		t.Fatalf("claimed %v, want T-1's windows 660-663 (10:00-10:03)", claimed)
	}
	if got := runs(); got != "[10:04–10:10 6 true]" {
		t.Fatalf("after the claim: %s, want [10:04–10:10 6 true]", got)
	}
	n, err := q.DirtyWindowClaimRange(ctx, sharddb.DirtyWindowClaimRangeParams{FarmID: "f", Day: day, FromT: at(5), ToT: at(7), WindowS: 60})
	testdb.Must(t, err, "claim range")
	if n != 1 {
		t.Fatalf("the fast path took %d runs, want 1", n)
	}
	if got := runs(); got != "[10:04–10:05 1 true 10:07–10:10 3 true]" {
		t.Fatalf("after the fast path's claim: %s, want [10:04–10:05 1 true 10:07–10:10 3 true]", got)
	}
}
