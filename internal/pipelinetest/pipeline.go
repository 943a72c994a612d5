package pipelinetest

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// Clock is a test's clock: time is data, moved by the test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock at at.
func NewClock(at time.Time) *Clock { return &Clock{now: at} }

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Set moves the clock.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// Options shape a Pipeline; the zero value is the pipeline of the
// delivery scenario, started, at Clocks[0].
type Options struct {
	// At is where the clock starts (default Clocks[0]).
	At time.Time
	// Now replaces the Clock (a demo's scaled clock); Pipeline.Clock is
	// then nil, and the Driver methods that move it (Start, SetClock,
	// Close) are not for it: the caller's clock moves on its own.
	Now func() time.Time
	// Ingest and Jobs adjust the configurations before anything starts
	// (jobs are never periodic unless Jobs says so: a test drains and
	// publishes explicitly, time being data).
	Ingest func(*ingest.Config)
	Jobs   func(*jobs.Config)
	Hooks  *ingest.Hooks
	// AfterCompute and OnResult are the recompute's test hooks.
	AfterCompute func(rollup.Request)
	OnResult     func(rollup.Request, rollup.Result)
	// WorkersPerShard overrides jobs.Config's (0: its default).
	WorkersPerShard int
	// Retry is the fixed wait before a failed job's next attempt
	// (default 100 ms).
	Retry time.Duration
	// NoStart leaves the River client stopped (StartJobs starts it).
	NoStart bool
}

// Pipeline is the orchestrator in this process, on a test clock: an
// ingestor, the fast path, the drainer and River workers (no periodic
// jobs: the steps publish and drain explicitly, in the order the
// periodic jobs of a real process would run them after the clock moved).
// It is a Driver that sends each delivery once.
type Pipeline struct {
	Env       *testdb.Env
	Clock     *Clock
	Now       func() time.Time
	In        *ingest.Ingestor
	Publisher *publish.Publisher
	Drainer   *drain.Drainer
	Computer  *rollup.Computer
	Mover     *move.Mover
	Client    *river.Client[pgx.Tx]
	// Config and Deps are what Client was made of (RunJobs makes another).
	Config jobs.Config
	Deps   jobs.Deps
	Events <-chan *river.Event
	opts   Options
}

// New starts a pipeline on env (a control database with a fleet applied).
func New(t testing.TB, env *testdb.Env, opts Options) *Pipeline {
	t.Helper()
	p := &Pipeline{Env: env, Now: opts.Now, opts: opts}
	if p.Now == nil {
		at := opts.At
		if at.IsZero() {
			at = Clocks[0]
		}
		p.Clock = NewClock(at)
		p.Now = p.Clock.Now
	}
	p.In = p.NewIngestor(t)
	p.Computer = &rollup.Computer{Control: env.Control, Shards: env.Shards, Now: p.Now, AfterCompute: opts.AfterCompute, OnResult: opts.OnResult}
	p.Drainer = &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: p.Now}
	p.Publisher = &publish.Publisher{Control: env.Control, Shards: env.Shards, Now: p.Now}
	p.Config = jobs.DefaultConfig()
	p.Config.Periodic = false
	p.Config.RetryPolicy = fixedRetry(100 * time.Millisecond)
	if opts.Retry > 0 {
		p.Config.RetryPolicy = fixedRetry(opts.Retry)
	}
	if opts.WorkersPerShard > 0 {
		p.Config.WorkersPerShard = opts.WorkersPerShard
	}
	if opts.Jobs != nil {
		opts.Jobs(&p.Config)
	}
	p.Deps = jobs.Deps{Control: env.Control, Shards: env.Shards, Computer: p.Computer, Drainer: p.Drainer, Publisher: p.Publisher, Now: p.Now}
	p.Mover = &move.Mover{Control: env.Control, Shards: env.Shards, Now: p.Now, Recompute: jobs.RecomputeAfterMove(nil)}
	p.Deps.Mover = p.Mover
	client, err := jobs.NewClient(context.Background(), p.Config, p.Deps)
	testdb.Must(t, err, "river client")
	p.Client = client
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	t.Cleanup(cancel)
	p.Events = events
	if !opts.NoStart {
		p.StartJobs(t)
	}
	return p
}

// StartJobs starts the River client (stopped when the test ends).
func (p *Pipeline) StartJobs(t testing.TB) {
	t.Helper()
	testdb.Must(t, p.Client.Start(context.Background()), "start river")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = p.Client.Stop(ctx)
	})
}

// RunJobs works every job until nothing is left (marks drained, requests
// and queued jobs run: jobs.WaitIdle) on a second client of the same
// configuration, stopped after: what `work --until-idle` does beside a
// Client that only enqueues (Options.NoStart).
func (p *Pipeline) RunJobs(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := jobs.NewClient(ctx, p.Config, p.Deps)
	testdb.Must(t, err, "river client")
	testdb.Must(t, c.Start(ctx), "start river")
	defer func() { _ = c.Stop(context.WithoutCancel(ctx)) }()
	testdb.Must(t, jobs.WaitIdle(ctx, c, p.Env.Control, p.Env.Shards), "wait idle")
}

// NewIngestor starts another ingest pipeline on the same databases and
// clock: what a second process sending readings has.
func (p *Pipeline) NewIngestor(t testing.TB) *ingest.Ingestor {
	t.Helper()
	cfg := ingest.DefaultConfig()
	if p.opts.Ingest != nil {
		p.opts.Ingest(&cfg)
	}
	return Ingestor(t, p.Env, p.Now, cfg, p.opts.Hooks)
}

// Ingestor starts an ingestor of cfg on env's databases with the routes
// as they stand at now(), closed when the test ends.
func Ingestor(t testing.TB, env *testdb.Env, now func() time.Time, cfg ingest.Config, hooks *ingest.Hooks) *ingest.Ingestor {
	t.Helper()
	ctx := context.Background()
	routes, err := ingest.LoadRoutes(ctx, env.Control, now(), 0)
	testdb.Must(t, err, "routes")
	in := ingest.New(cfg, env.Control, env.Shards, routes, now, hooks)
	in.Start(ctx)
	t.Cleanup(in.Close)
	return in
}

type fixedRetry time.Duration

func (f fixedRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Duration(f)) }

// Start runs what a leader runs on start (the drain and yesterday's
// rollup of every farm), then publishes.
func (p *Pipeline) Start(t testing.TB, at time.Time) {
	t.Helper()
	p.Clock.Set(at)
	testdb.Must(t, jobs.EnqueueStartup(context.Background(), p.Env.Control, p.Client, at), "startup jobs")
	p.Settle(t, at)
}

// SetClock moves the clock.
func (p *Pipeline) SetClock(_ testing.TB, at time.Time) { p.Clock.Set(at) }

// Published publishes the windows due.
func (p *Pipeline) Published(t testing.TB, _ time.Time) {
	t.Helper()
	_, err := p.Publisher.PublishDue(context.Background())
	testdb.Must(t, err, "publish")
}

// Settle publishes, drains (letting bursts settle, as the periodic drain
// does) and waits for the recomputes.
func (p *Pipeline) Settle(t testing.TB, at time.Time) {
	t.Helper()
	p.Published(t, at)
	_, err := p.Drainer.Drain(context.Background(), jobs.RollupDayEnqueue(p.Client))
	testdb.Must(t, err, "drain")
	p.WaitJobs(t)
}

// DrainNow drains every shard's marks without letting bursts settle.
func (p *Pipeline) DrainNow(t testing.TB) drain.Result {
	t.Helper()
	res, err := p.Drainer.DrainImmediate(context.Background(), jobs.RollupDayEnqueue(p.Client))
	testdb.Must(t, err, "drain")
	return res
}

// Enqueue enqueues the recompute of a farm-day on each of its shards.
func (p *Pipeline) Enqueue(t testing.TB, farm, day, reason string, priority int) []int64 {
	t.Helper()
	ids, err := jobs.EnqueueFarmDay(context.Background(), p.Env.Control, p.Client, farm, day, reason, priority)
	testdb.Must(t, err, "enqueue %s %s", farm, day)
	return ids
}

// WaitJobs waits, event by event, until no rollup, drain or judge_stalls
// job is queued, running or retrying. Events are River's own; nothing sleeps.
func (p *Pipeline) WaitJobs(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	for {
		res, err := p.Client.JobList(ctx, river.NewJobListParams().
			Kinds(jobs.KindRollupDay, jobs.KindRollupSchedule, jobs.KindDrainDirty, jobs.KindJudgeStalls).
			States(rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled, rivertype.JobStatePending).First(1))
		testdb.Must(t, err, "job list")
		if len(res.Jobs) == 0 {
			return
		}
		select {
		case <-p.Events:
		case <-time.After(3 * time.Minute):
			t.Fatalf("jobs still waiting after 3 minutes: %+v", res.Jobs[0])
		}
	}
}

// Load ingests a simulation and checks it was stored in full.
func (p *Pipeline) Load(t testing.TB, sc simulate.Config) ingest.Summary {
	t.Helper()
	ctx := context.Background()
	dec, wait := simulate.Stream(ctx, sc)
	sum, err := p.In.Ingest(ctx, "test", dec)
	testdb.Must(t, err, "ingest")
	st, err := wait()
	testdb.Must(t, err, "simulate")
	if sum.Accepted+sum.Duplicate != st.Readings {
		t.Fatalf("ingest %+v does not account for %d simulated readings", sum, st.Readings)
	}
	return sum
}

// Deliver sends the delivery once.
func (p *Pipeline) Deliver(t testing.TB, k int, d Delivery) []ingest.Summary {
	t.Helper()
	return []ingest.Summary{Send(t, p.In, d.Body)}
}

// Send ingests an NDJSON body through in.
func Send(t testing.TB, in *ingest.Ingestor, body []byte) ingest.Summary {
	t.Helper()
	sum, err := Ingest(context.Background(), in, body)
	testdb.Must(t, err, "ingest")
	return sum
}

// Ingest ingests an NDJSON body through in (from any goroutine).
func Ingest(ctx context.Context, in *ingest.Ingestor, body []byte) (ingest.Summary, error) {
	dec, err := reading.NewDecoder(reading.NDJSON, bytes.NewReader(body))
	if err != nil {
		return ingest.Summary{}, err
	}
	return in.Ingest(ctx, "pipelinetest", dec)
}

// Close closes the day as `work --until-idle` does: a drain and every
// farm's rollup of yesterday, then everything they lead to.
func (p *Pipeline) Close(t testing.TB, at time.Time) {
	t.Helper()
	p.Clock.Set(at)
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	testdb.Must(t, jobs.EnqueueStartup(ctx, p.Env.Control, p.Client, at), "close: startup jobs")
	testdb.Must(t, jobs.WaitIdle(ctx, p.Client, p.Env.Control, p.Env.Shards), "close: wait idle")
}

// CleanRun is the scenario played once, each delivery sent once, in this
// process: what every other run must leave too.
type CleanRun struct {
	Outcome   Outcome
	Summaries []ingest.Summary // per delivery
}

var clean struct {
	mu  sync.Mutex
	run *CleanRun
}

// Clean plays the clean run (once per test binary) and returns it.
func Clean(t testing.TB) *CleanRun {
	t.Helper()
	clean.mu.Lock()
	defer clean.mu.Unlock()
	if clean.run != nil {
		return clean.run
	}
	sc := NewScenario(t)
	p := New(t, testdb.New(t, Fleet), Options{})
	sums := Play(t, p, sc, false)
	run := &CleanRun{Outcome: Read(t, p.Env.Control)}
	for k, s := range sums {
		run.Summaries = append(run.Summaries, CheckDelivered(t, k, sc.Deliveries[k], 1, s))
		t.Logf("clean run, delivery %d at %s: %d readings (%d live, %d backfill), %d farm-day-shards marked",
			k, sc.Deliveries[k].At.Format("15:04:05"), s[0].Accepted, s[0].Live, s[0].Backfill, s[0].DirtyMarks)
	}
	revisions := map[string]int{}
	for _, r := range run.Outcome[Revisions] {
		revisions[r[strings.LastIndexByte(r, ' ')+1:]]++
	}
	t.Logf("clean run: %d turbine_day rows, %d fast and %d final windows (revisions: %v), %d reconciliation rows, %d alerts",
		run.Outcome.Len(TurbineDays), run.Outcome.Len(Fasts), run.Outcome.Len(Finals), revisions, run.Outcome.Len(Reconciliation), run.Outcome.Len(Alerts))
	clean.run = run
	return run
}
