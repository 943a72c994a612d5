package rollup_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

var (
	london = mustZone("Europe/London")
	noon   = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
)

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// bundle is the pipeline harness with this package's readers on it.
type bundle struct{ *pipelinetest.Pipeline }

// setup starts the pipeline on fleetYAML at 03:00 on Sunday 2 August 2026
// (London), the night after the ardnave-saturday scenario's Saturday.
func setup(t testing.TB, fleetYAML string, opts pipelinetest.Options) *bundle {
	t.Helper()
	opts.At = time.Date(2026, 8, 2, 3, 0, 0, 0, london)
	return &bundle{pipelinetest.New(t, testdb.New(t, fleetYAML), opts)}
}

func (b *bundle) farmAvailability(t testing.TB, farm, day string) string {
	t.Helper()
	var pct string
	err := b.Env.Control.QueryRow(context.Background(),
		`SELECT to_char(100 * availability, 'FM990.00') FROM farm_day WHERE farm_id = $1 AND day = $2`, farm, day).Scan(&pct)
	testdb.Must(t, err, "farm_day %s %s", farm, day)
	return pct
}

func (b *bundle) marks(t testing.TB, shard string) int64 {
	t.Helper()
	return testdb.Int(t, b.Env.Shards.Pool(shard), `SELECT count(*) FROM dirty_mark`)
}

// ardnaveSampleFleet is Ardnave Point cut to 20 of its turbines, split
// over three shards as in the demo fleet, with the four the story stops
// (simulate.ArdnaveStopped): every turbine's counts are the story's, the
// farm's are over 20. The farm's 75.85 % then 98.67 % on all 300 go
// through the pipeline in internal/demo's TestStoryOnTheClock (at 60 s);
// the 13 M readings at 2 s are a volume, measured by make bench-rollup.
const ardnaveSampleFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}]
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    turbines:
      - {prefix: AP-, from: 5, to: 9, shard: s1}
      - {prefix: AP-, from: 121, to: 125, shard: s2}
      - {prefix: AP-, from: 203, to: 207, shard: s3}
      - {prefix: AP-, from: 286, to: 290, shard: s3}
`

// TestArdnaveSaturday is the ardnave-saturday scenario: the Saturday rolled
// up with the hole, the hole replayed on Tuesday, the drain recomputing
// exactly that.
// On 20 turbines, 4 stopped: 16 × 33,210 / 20 × 43,200 = 61.50 % with the
// hole, 16 × 43,200 / 20 × 43,200 = 80.00 % after the replay.
func TestArdnaveSaturday(t *testing.T) {
	t.Parallel()
	b := setup(t, ardnaveSampleFleet, pipelinetest.Options{})
	day, err := simulate.Scenario("ardnave-saturday", b.Env.Plan, simulate.PhaseDay, 1)
	testdb.Must(t, err, "scenario")

	// Saturday's data as it stood (the simulated day includes a few
	// readings whose arrival was delayed into Monday by the delay
	// mixture's 4-hour tail, so it is loaded on Monday afternoon: ingest
	// refuses a received_at more than a day ahead of its own clock).
	b.Clock.Set(time.Date(2026, 8, 3, 17, 0, 0, 0, london))
	b.Load(t, day)
	b.DrainNow(t) // the marks of the load itself (written after the day ended)
	b.WaitJobs(t)
	b.Enqueue(t, "ardnave-point", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "AP-005", "2026-08-01"); got.Expected != 43_200 || got.Received != 33_210 || got.Available != 33_210 {
		t.Fatalf("AP-005 with the hole: %+v, want expected 43200, received 33210, available 33210", got)
	}
	for _, id := range simulate.ArdnaveStopped() {
		if got := b.TurbineDay(t, id, "2026-08-01"); got.Received != 33_210 || got.Available != 0 {
			t.Fatalf("%s (stopped) with the hole: %+v, want received 33210, available 0", id, got)
		}
	}
	if got := b.farmAvailability(t, "ardnave-point", "2026-08-01"); got != "61.50" {
		t.Fatalf("farm availability with the hole = %s %%, want 61.50 %%", got)
	}

	// Tuesday: the hole is replayed.
	b.Clock.Set(time.Date(2026, 8, 4, 11, 0, 0, 0, london))
	replay, err := simulate.Scenario("ardnave-saturday", b.Env.Plan, simulate.PhaseReplay, 1)
	testdb.Must(t, err, "scenario")
	sum := b.Load(t, replay)
	if sum.Accepted != 20*9_990 || sum.DirtyMarks != 3 {
		t.Fatalf("replay: %+v, want %d accepted and 3 marks", sum, 20*9_990)
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		if n := b.marks(t, s); n != 1 {
			t.Fatalf("after the replay %s has %d dirty marks, want exactly 1", s, n)
		}
	}
	if res := b.DrainNow(t); res.Enqueued != 3 || res.Deleted != 3 {
		t.Fatalf("drain: %+v, want 3 jobs enqueued and 3 marks deleted", res)
	}
	b.WaitJobs(t)
	for _, id := range []string{"AP-005", "AP-125", "AP-290"} {
		if got := b.TurbineDay(t, id, "2026-08-01"); got.Received != 43_200 || got.Available != 43_200 || got.Late == 0 {
			t.Fatalf("%s after the drain: %+v, want received and available 43200 with late readings", id, got)
		}
	}
	if got := b.farmAvailability(t, "ardnave-point", "2026-08-01"); got != "80.00" {
		t.Fatalf("farm availability after the replay = %s %%, want 80.00 %%", got)
	}

	// Replayed again: nothing new, no marks, no change.
	before := b.TurbineDay(t, "AP-005", "2026-08-01")
	sum = b.Load(t, replay)
	if sum.Accepted != 0 || sum.DirtyMarks != 0 {
		t.Fatalf("second replay: %+v, want 0 accepted and 0 marks", sum)
	}
	if res := b.DrainNow(t); res.Marks != 0 {
		t.Fatalf("second replay left %d marks, want 0", res.Marks)
	}
	if after := b.TurbineDay(t, "AP-005", "2026-08-01"); after != before {
		t.Fatalf("AP-005 changed after an all-duplicate replay: %+v → %+v", before, after)
	}
}

// TestDeadRadioCountsAgainstTheFarm: one of 100 turning turbines sends
// nothing all day. A ratio over what arrived would say 100 %; the calendar
// says 99.00 %. (Cadence 60 s keeps the test small; the arithmetic is the
// same at 2 s and 300 turbines.)
func TestDeadRadioCountsAgainstTheFarm(t *testing.T) {
	t.Parallel()
	const fleetYAML = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: dunmore
    name: Dunmore
    timezone: Europe/London
    cadence_seconds: 60
    turbines:
      - {prefix: DM-, from: 1, to: 50, shard: s1}
      - {prefix: DM-, from: 51, to: 100, shard: s2}
`
	b := setup(t, fleetYAML, pipelinetest.Options{})
	sc, err := simulate.FarmConfig(b.Env.Plan, "dunmore", time.Date(2026, 8, 4, 0, 0, 0, 0, london), time.Date(2026, 8, 5, 0, 0, 0, 0, london), 3)
	testdb.Must(t, err, "config")
	sc.ExactClocks = true
	sc.DeadRadios = []string{"DM-011"}
	b.Clock.Set(time.Date(2026, 8, 5, 3, 0, 0, 0, london)) // the day has been received
	b.Load(t, sc)
	b.Enqueue(t, "dunmore", "2026-08-04", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "DM-011", "2026-08-04"); got.Expected != 1_440 || got.Received != 0 {
		t.Fatalf("DM-011 (dead radio): %+v, want expected 1440 and received 0 (a row, not a gap)", got)
	}
	if got := b.farmAvailability(t, "dunmore", "2026-08-04"); got != "99.00" {
		t.Fatalf("farm availability = %s %%, want 99.00 %% (99 of 100 turbines)", got)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT turbines FROM farm_day WHERE farm_id = 'dunmore' AND day = '2026-08-04'`); n != 100 {
		t.Fatalf("farm_day counts %d turbines, want 100", n)
	}
}

func TestExpectedFollowsTheLocalCalendar(t *testing.T) {
	t.Parallel()
	const fleetYAML = `
shards: [{name: s1}]
farms:
  - id: ardnave-point
    timezone: Europe/London
    turbines:
      - {prefix: AP-, from: 1, to: 2, shard: s1}
      - {id: AP-301, shard: s1, commissioned_at: 2026-10-25T12:00:00Z}
`
	b := setup(t, fleetYAML, pipelinetest.Options{})
	// A day gets its turbine_day rows once every window of it is past the
	// watermark: the clock is after the last day asked for.
	b.Clock.Set(time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		day      string
		turbine  string
		expected int64
	}{
		{"2026-10-25", "AP-001", 45_000}, // clocks go back: a 25-hour day
		{"2026-03-29", "AP-001", 41_400}, // clocks go forward: a 23-hour day
		{"2026-08-01", "AP-002", 43_200},
		{"2026-10-25", "AP-301", 21_600}, // commissioned 12:00 UTC (GMT by then): 12 h of the day left
		{"2026-10-24", "AP-301", 0},      // not yet in service
	} {
		b.Enqueue(t, "ardnave-point", tc.day, rollup.ReasonManual, jobs.PriorityManual)
		b.WaitJobs(t)
		if got := b.TurbineDay(t, tc.turbine, tc.day); got.Expected != tc.expected || got.Received != 0 {
			t.Fatalf("%s on %s: %+v, want expected %d, received 0", tc.turbine, tc.day, got, tc.expected)
		}
	}
}

// rows returns the counts of a farm-day, without the bookkeeping columns.
func rows(t testing.TB, b *bundle, farm, day string) string {
	t.Helper()
	var s string
	err := b.Env.Control.QueryRow(context.Background(), `
		SELECT string_agg(format('%s:%s/%s/%s/%s/%s/%s/%s/%s', turbine_id, expected, received, available, late, early, min_lag_ms, max_lag_ms, last_received_at), ',' ORDER BY turbine_id)
		FROM turbine_day WHERE farm_id = $1 AND day = $2`, farm, day).Scan(&s)
	testdb.Must(t, err, "rows")
	return s
}

func TestRecomputeIsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{})
	sc, err := simulate.FarmConfig(b.Env.Plan, "kilmore-sands", time.Date(2026, 8, 1, 10, 0, 0, 0, london), time.Date(2026, 8, 1, 11, 0, 0, 0, london), 5)
	testdb.Must(t, err, "config")
	b.Load(t, sc)
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	req := rollup.Request{FarmID: "kilmore-sands", Day: day, Shard: "s4", Reason: rollup.ReasonManual}

	var first string
	for i := 0; i < 4; i++ {
		res, err := b.Computer.Recompute(context.Background(), req)
		testdb.Must(t, err, "recompute %d", i)
		if res.Turbines != 10 || !res.Full {
			t.Fatalf("run %d: %+v, want 10 turbines, full", i, res)
		}
		got := rows(t, b, "kilmore-sands", "2026-08-01")
		if i == 0 {
			first = got
			if n := testdb.Int(t, b.Env.Control, `SELECT sum(received) FROM turbine_day WHERE farm_id = 'kilmore-sands'`); n != 10*1800 {
				t.Fatalf("received over the farm = %d, want %d", n, 10*1800)
			}
		} else if got != first {
			t.Fatalf("run %d changed the rows", i)
		}
	}

	// Two workers racing on the same farm-day.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = b.Computer.Recompute(context.Background(), req) }()
	}
	wg.Wait()
	testdb.Must(t, errors.Join(errs...), "racing recomputes")
	if got := rows(t, b, "kilmore-sands", "2026-08-01"); got != first {
		t.Fatal("racing recomputes left different rows")
	}
}

// TestBackfillDuringARunningRollup: a replay commits (and is drained) while
// a recompute of the same farm-day is held between its shard read and its
// write. Once the queue drains, the replay is counted, in the day's rows
// and in its final windows (TestALateReadingWhileTheFastPathPublishes is
// the same for a fast-path publication).
func TestBackfillDuringARunningRollup(t *testing.T) {
	t.Parallel()
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	var armed atomic.Bool
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{WorkersPerShard: 2, AfterCompute: func(r rollup.Request) {
		if r.Shard == "s4" && armed.Load() {
			once.Do(func() { close(held); <-release })
		}
	}})
	hour := func(h int) time.Time { return time.Date(2026, 8, 1, h, 0, 0, 0, london) }
	sc, err := simulate.FarmConfig(b.Env.Plan, "kilmore-sands", hour(10), hour(11), 9)
	testdb.Must(t, err, "config")
	sc.ExactClocks = true
	b.Load(t, sc)
	b.DrainNow(t)
	b.WaitJobs(t)

	armed.Store(true)
	ids := b.Enqueue(t, "kilmore-sands", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	<-held // the scheduled recompute has read the shard and not yet written

	late, err := simulate.FarmConfig(b.Env.Plan, "kilmore-sands", hour(14), hour(14).Add(10*time.Minute), 9)
	testdb.Must(t, err, "config")
	late.ExactClocks = true
	sum := b.Load(t, late)
	if sum.Accepted != 10*300 || sum.DirtyMarks != 1 {
		t.Fatalf("late load: %+v, want %d accepted and 1 mark", sum, 10*300)
	}
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain while the rollup is held: %+v, want 1 new job (the running one cannot see the new rows)", res)
	}
	close(release)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "KS-001", "2026-08-01"); got.Received != 1800+300 {
		t.Fatalf("KS-001 after the queue drained: received %d, want %d (the held job's stale write must not win)", got.Received, 1800+300)
	}
	// The windows too: the held close wrote every window's final row from
	// its snapshot (14:00 to 14:10 empty), the backfill's correction then
	// rewrote the ten it touched: 10 turbines × 30 slots each, revision 2.
	for i := 0; i < 10; i++ {
		start := hour(14).Add(time.Duration(i) * time.Minute)
		if w, ok := b.Window(t, "kilmore-sands", start, "final"); !ok || w.Received != 10*30 || w.Expected != 10*30 || w.Revision != 2 {
			t.Fatalf("final window %s after the queue drained: %+v (exists %v), want received 300 of 300, revision 2", start.Format("15:04"), w, ok)
		}
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT sum(received) FROM farm_window WHERE farm_id = 'kilmore-sands' AND day = '2026-08-01' AND path = 'final'`); n != 10*(1800+300) {
		t.Fatalf("the day's final windows add up to %d received, want %d (its turbine_day rows)", n, 10*(1800+300))
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE kind = 'window_sum'`); n != 0 {
		t.Fatalf("%d window_sum bug alarms, want 0", n)
	}
	job, err := b.Client.JobGet(context.Background(), ids[0])
	testdb.Must(t, err, "job")
	if job.State != rivertype.JobStateCompleted {
		t.Fatalf("held job state %s, want completed", job.State)
	}
}

// TestOneDirtyTurbineRecomputesOnlyItself: a replay of one turbine's hour
// rewrites that turbine's row and leaves the farm's other rows alone.
func TestOneDirtyTurbineRecomputesOnlyItself(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{})
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, london)
	sc, err := simulate.FarmConfig(b.Env.Plan, "kilmore-sands", day, day.Add(time.Hour), 2)
	testdb.Must(t, err, "config")
	sc.ExactClocks = true
	b.Load(t, sc)
	b.DrainNow(t)
	b.WaitJobs(t)
	b.Enqueue(t, "kilmore-sands", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.WaitJobs(t)
	before := b.TurbineDay(t, "KS-002", "2026-08-01")

	b.Clock.Set(time.Date(2026, 8, 4, 9, 0, 0, 0, london))
	one := sc
	one.Turbines = nil
	for _, tb := range sc.Turbines {
		if tb.ID == "KS-001" {
			one.Turbines = append(one.Turbines, tb)
		}
	}
	one.From, one.To = day.Add(5*time.Hour), day.Add(6*time.Hour)
	b.Load(t, one)
	res := b.DrainNow(t)
	if res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "KS-001", "2026-08-01"); got.Received != 3600 {
		t.Fatalf("KS-001 received %d, want 3600", got.Received)
	}
	if after := b.TurbineDay(t, "KS-002", "2026-08-01"); after.ComputedAt != before.ComputedAt {
		t.Fatalf("KS-002 was recomputed (computed_at %s → %s); only KS-001 was dirty", before.ComputedAt, after.ComputedAt)
	}
}

// TestDirtyRecomputesRunFirst: with one worker per shard, a dirty job
// enqueued after scheduled ones runs before them.
func TestDirtyRecomputesRunFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{WorkersPerShard: 1, NoStart: true})
	for _, day := range []string{"2026-07-28", "2026-07-29", "2026-07-30"} {
		b.Enqueue(t, "kilmore-sands", day, rollup.ReasonSchedule, jobs.PrioritySchedule)
	}
	b.Enqueue(t, "kilmore-sands", "2026-07-31", rollup.ReasonManual, jobs.PriorityDirty)
	b.StartJobs(t)
	// Completion events may arrive in batches; order by when each job started.
	var started []*rivertype.JobRow
	for len(started) < 4 {
		select {
		case ev := <-b.Events:
			if ev.Job.Kind == "rollup_day" {
				started = append(started, ev.Job)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("only %d jobs completed", len(started))
		}
	}
	sort.Slice(started, func(i, j int) bool { return started[i].AttemptedAt.Before(*started[j].AttemptedAt) })
	if first := dayOf(started[0]); first != "2026-07-31" {
		t.Fatalf("first job to run was %s (priority %d), want the priority-1 job for 2026-07-31", first, started[0].Priority)
	}
}

func dayOf(j *rivertype.JobRow) string {
	var args jobs.RollupDayArgs
	if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
		panic(err)
	}
	return args.Day
}

// TestShardDown: a shard refusing connections only delays its own farms;
// its jobs retry and complete once it is back.
func TestShardDown(t *testing.T) {
	t.Parallel()
	// Retries a second apart: the Kilmore job keeps failing until s4 is
	// back, which waits for Ardnave's three jobs; at 100 ms apart a loaded
	// machine used up its 25 attempts before that.
	b := setup(t, testdb.SmallFleet, pipelinetest.Options{Retry: time.Second})
	maint := testdb.MaintenanceDSN(t)
	s4 := testdb.Pool(t, maint)
	s4db := b.Env.Shards.Pool("s4").Config().ConnConfig.Database
	testdb.Exec(t, s4, fmt.Sprintf(`ALTER DATABASE %q ALLOW_CONNECTIONS false`, s4db))
	testdb.Exec(t, s4, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, s4db)
	b.Env.Shards.Pool("s4").Reset()

	// A dirty request for the down shard: its job fails, and the request
	// must survive the failure (the claim rolls back with it).
	testdb.Exec(t, b.Env.Control, `INSERT INTO rollup_pending (farm_id, day, shard_name, turbine_ids, job_id, requested_at) VALUES ('kilmore-sands', '2026-08-01', 's4', '{KS-001}', 0, now())`)
	ks := b.Enqueue(t, "kilmore-sands", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	ap := b.Enqueue(t, "ardnave-point", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	done := map[int64]bool{}
	failed := false
	for !(done[ap[0]] && done[ap[1]] && done[ap[2]] && failed) {
		select {
		case ev := <-b.Events:
			if ev.Kind == river.EventKindJobCompleted {
				done[ev.Job.ID] = true
			}
			if ev.Kind == river.EventKindJobFailed && ev.Job.ID == ks[0] {
				failed = true
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("waiting for Ardnave to complete and Kilmore to fail: done %v failed %v", done, failed)
		}
	}
	if done[ks[0]] {
		t.Fatal("the Kilmore job completed while its shard was down")
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM rollup_pending WHERE shard_name = 's4'`); n != 1 {
		t.Fatalf("the dirty request for s4 after a failed attempt: %d rows, want 1 (the claim rolled back)", n)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'ardnave-point'`); n != 12 {
		t.Fatalf("Ardnave rows while s4 is down: %d, want 12", n)
	}

	testdb.Exec(t, s4, fmt.Sprintf(`ALTER DATABASE %q ALLOW_CONNECTIONS true`, s4db))
	b.WaitJobs(t)
	job, err := b.Client.JobGet(context.Background(), ks[0])
	testdb.Must(t, err, "job")
	if job.State != rivertype.JobStateCompleted || job.Attempt < 2 {
		t.Fatalf("Kilmore job: state %s after %d attempts, want completed after a retry", job.State, job.Attempt)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'kilmore-sands'`); n != 10 {
		t.Fatalf("Kilmore rows after s4 returned: %d, want 10", n)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM rollup_pending`); n != 0 {
		t.Fatalf("%d requests left after s4 returned, want 0 (claimed by the completed job)", n)
	}
}
