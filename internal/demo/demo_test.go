package demo_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/demo"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// storyFleet is the demo fleet's Ardnave Point (300 turbines over three
// shards, four of them stopped in the story) reporting every 60 s instead
// of 2 s, in 5-minute windows instead of 1-minute ones: the story's hole
// 05:58–11:31 is whole minutes, so every count keeps its ratio to the real
// day (33,210 of 43,200 slots per turbine become 1,107 of 1,440) while the
// day is 432,000 readings in 86,400 turbine-windows instead of 12,960,000
// in 432,000. Kilmore Sands, 14 turbines at the fleet's 2 s and 1-minute
// windows, is the rest of the live feed.
const storyFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}]
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    cadence_seconds: 60
    rules: {window: 5m}
    turbines:
      - {prefix: AP-, from: 1, to: 100, shard: s1}
      - {prefix: AP-, from: 101, to: 200, shard: s2}
      - {prefix: AP-, from: 201, to: 300, shard: s3}
  - id: kilmore-sands
    name: Kilmore Sands
    timezone: Europe/Dublin
    turbines:
      - {prefix: KS-, from: 1, to: 14, shard: s3}
`

// contractFleet is storyFleet with fleet/demo.yaml's contract and power
// curve for Ardnave Point.
const contractFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}]
models:
  - name: GW-3.6
    curve: [[3, 0], [3.5, 33.6], [4, 78.3], [4.5, 135.7], [5, 207.4], [5.5, 295], [6, 400], [6.5, 524.1],
            [7, 668.8], [7.5, 835.7], [8, 1026.5], [8.5, 1242.6], [9, 1485.7], [9.5, 1757.4], [10, 2059.3],
            [10.5, 2392.9], [11, 2759.8], [11.5, 3161.6], [12, 3600], [24.99, 3600]]
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    cadence_seconds: 60
    rules: {window: 5m}
    model: GW-3.6
    contract: {name: Ardnave TSA, warranty_pct: 97, cut_in_ms: 3, cut_out_ms: 25, excluded: [out_of_environmental_spec]}
    turbines:
      - {prefix: AP-, from: 1, to: 100, shard: s1}
      - {prefix: AP-, from: 101, to: 200, shard: s2}
      - {prefix: AP-, from: 201, to: 300, shard: s3}
  - id: kilmore-sands
    name: Kilmore Sands
    timezone: Europe/Dublin
    turbines:
      - {prefix: KS-, from: 1, to: 14, shard: s3}
`

// makeRunFleet is contractFleet as `make run` leaves it: Ardnave Point in
// service from the fleet's apply at from (so the demo back-fills it from
// its Saturday); Kilmore Sands, in service long before, has the days
// before the demo without a reading, as on a second `make run`.
func makeRunFleet(t *testing.T, from time.Time) *testdb.Env {
	t.Helper()
	env := testdb.New(t, contractFleet)
	plan := *env.Plan
	plan.Turbines = slices.Clone(plan.Turbines)
	for i := range plan.Turbines {
		if plan.Turbines[i].FarmID == simulate.ArdnaveFarm {
			plan.Turbines[i].CommissionedAt = &from
		}
	}
	_, err := env.Registry.ApplyWith(context.Background(), "test: make run's apply", &plan, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply Ardnave Point from %s", from)
	return env
}

// speed: one wall second is this many seconds on the demo's clock.
const speed = 10

// pipeline is what `serve` runs, on a test database, on clock: the ingest
// pipeline and a River client with every worker and the periodic jobs
// (fast path and drain), their periods scaled to the clock. The nightly
// rollups are left out (the story's day is never "yesterday",
// DefaultSaturday); a test rolls up yesterday itself, as serve does at
// start.
func startPipeline(t *testing.T, env *testdb.Env, clock *demo.ScaledClock) *pipelinetest.Pipeline {
	t.Helper()
	return pipelinetest.New(t, env, pipelinetest.Options{Now: clock.Now,
		// A live batch waits for more readings this long on the ingest
		// clock: scaled, or every batch would be a few readings.
		Ingest: func(c *ingest.Config) { c.FlushInterval *= speed },
		// The periodic jobs run as serve's, the drain twice as often (in
		// simulated time): a day is final only once a drain has read its
		// announced marks, and at 10× a drain's own wall time is seconds
		// of simulated time.
		Jobs: func(c *jobs.Config) {
			c.Periodic = true
			c.DrainEvery, c.PublishEvery = clock.Wall(2500*time.Millisecond), clock.Wall(2*time.Second)
		}})
}

// syncBuffer is the narration, written by the demo's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStoryOnTheClock plays `make run` on a test database at 10× the wall
// clock: the live feed from the window in progress, the Ardnave Saturday on
// the most recent Saturday before yesterday (the farm back-filled from it),
// its day phase at once and its replay two minutes later, and serve's
// rollup of every farm's yesterday at start. Nothing but the demo and the
// pipeline's own jobs runs: the farm-day reads 75.85 % after the day phase
// and 98.67 %, final, after the replay, and so does the status page's
// first screen, rendered in headless Chromium at both phases; the live
// feed's windows are published at the count its simulated time allows.
func TestStoryOnTheClock(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("headless Chromium is needed for this test: apt-get install chromium (`make test` installs it when it can)")
	}
	start := time.Now().UTC().Truncate(time.Minute)
	clock := demo.NewScaledClock(start, speed)
	p := startPipeline(t, makeRunFleet(t, start), clock)

	var out syncBuffer
	events := make(chan demo.Event, 4)
	// Each phase waits for the test to render the page before the story
	// goes on, so the page shows that phase.
	resume := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	cfg := demo.DefaultConfig()
	cfg.Plan, cfg.Registry, cfg.Clock, cfg.Out, cfg.URL = p.Env.Plan, p.Env.Registry, clock, &out, "http://127.0.0.1:0"
	cfg.OnEvent = func(e demo.Event) {
		events <- e
		select {
		case <-resume:
		case <-ctx.Done():
		}
	}
	// On a busy machine a rollup can take a while; the test's own timeout
	// below is what fails it.
	cfg.Patience = 4 * time.Hour
	d, err := demo.New(cfg, p.Env.Control, p.In)
	testdb.Must(t, err, "demo")
	story, begun := d.Story(), d.Start()
	london, _ := time.LoadLocation("Europe/London")
	if want := demo.DefaultSaturday(start, london); story.Day != want || story.Day.UTC().Weekday() != time.Saturday {
		t.Fatalf("story placed on %s, want %s, a Saturday", story.Day, want)
	}
	// The feed starts with each farm's window in progress: Ardnave Point's
	// 5 minutes, Kilmore Sands' minute; every farm is fed from the later.
	ardnaveFrom, kilmoreFrom := begun.Truncate(5*time.Minute), begun.Truncate(time.Minute)
	if d.FeedFrom() != kilmoreFrom || d.Feed().Stats().Through != ardnaveFrom {
		t.Fatalf("feed from %s (every farm from %s), want Ardnave Point from %s, every farm from %s",
			d.Feed().Stats().Through.Format(time.TimeOnly), d.FeedFrom().Format(time.TimeOnly), ardnaveFrom.Format(time.TimeOnly), kilmoreFrom.Format(time.TimeOnly))
	}
	// serve rolls up every farm's yesterday when it starts: Ardnave Point's
	// is in service (back-filled) and the demo sends nothing for it.
	yesterday := localday.Of(begun, london).AddDays(-1)
	for _, f := range p.Env.Plan.Farms {
		_, err := jobs.EnqueueFarmDay(ctx, p.Env.Control, p.Client, f.ID, yesterday.String(), rollup.ReasonSchedule, jobs.PrioritySchedule)
		testdb.Must(t, err, "roll up %s %s", f.ID, yesterday)
	}
	// The status page as serve --demo serves it.
	srv := server.New(p.Env.Control, p.Env.Shards, server.DefaultConfig())
	srv.Now = clock.Now
	srv.Demo = &server.Demo{Farm: story.Farm, Day: story.Day, FeedFrom: d.FeedFrom()}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	month := story.Day.UTC().Format("2006-01")
	landing := ts.URL + "/?month=" + month
	// What the story must read, from the scenario's arithmetic.
	afterDay := demo.Counts{Expected: 432_000, Received: 332_100, Available: 327_672}
	final := demo.Counts{Expected: 432_000, Received: 432_000, Available: 426_240}
	if story.AfterDay != afterDay || story.Final != final || story.DayReadings != 332_100 || story.ReplayReadings != 99_900 {
		t.Fatalf("story expects %+v then %+v from %d + %d readings; want %+v then %+v from 332,100 + 99,900",
			story.AfterDay, story.Final, story.DayReadings, story.ReplayReadings, afterDay, final)
	}

	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var runErr error
	stop := sync.OnceFunc(func() { cancel(); runErr = <-done })
	defer func() {
		stop()
		t.Logf("narration:\n%s", out.String())
	}()
	next := func(what string) demo.Event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(5 * time.Minute):
			stop()
			t.Fatalf("no %s after 5 minutes (wall); the demo returned %v", what, runErr)
		}
		return demo.Event{}
	}

	// The day as the link delivered it: 75.85 %.
	day := next("day phase")
	if day.Phase != simulate.PhaseDay || day.Ingest == nil {
		t.Fatalf("first event %+v, want the day phase, ingested", day)
	}
	// A busy machine can time a write out behind a recompute of the same
	// day; the demo re-sends the failed lines, and what was stored then
	// counts as a duplicate. Stored exactly once either way.
	if s := day.Ingest; s.Accepted != 332_100 || (day.Attempts == 1 && (s.Duplicate != 0 || s.DirtyMarks != 3)) || s.Rejected != 0 || s.Failed != 0 {
		t.Fatalf("day phase ingest in %d attempt(s): %+v, want 332,100 accepted, no reject or failure (in one attempt: no duplicate, 3 farm-day-shards marked)", day.Attempts, *s)
	}
	// When it was due, not when a busy machine got to it: the clock runs
	// 20× the wall, so any scheduling delay shows 20-fold.
	if !day.Due.Equal(begun) || day.Delivered.Before(day.Due) {
		t.Fatalf("day phase due at +%s, delivered at +%s; want due at once (DayAfter 0), delivered not before", day.Due.Sub(begun), day.Delivered.Sub(begun))
	}
	// Incomplete by the report's rule (the status page's and the monthly
	// report's): ended, rolled up after it closed, nothing pending, but a
	// quarter of its slots without a reading, over the farm's 10 ‰: a day
	// that looks settled, named incomplete.
	if !day.AsExpected || day.Seen.Counts != afterDay || !day.Seen.Settled() || day.Seen.Status != report.StatusIncomplete || day.Seen.Source != "turbine_day" {
		t.Fatalf("after the day phase the farm-day reads %+v, want %+v from turbine_day, settled, incomplete by the report's rule", day.Seen, afterDay)
	}
	if got := pct2(day.Seen.Availability()); got != "75.85" {
		t.Fatalf("availability after the day phase %s %%, want 75.85 %%", got)
	}
	// Every window shown is on the final path and nothing is pending. Only
	// completeness (1,107 of 1,440 slots per turbine: 76.88 %) says a
	// quarter is missing. The windows shown are the 222 of 288 with readings, and
	// 11:25-11:30, empty, which the first reading after the hole (11:31)
	// marks because a slot may count towards the window before its own:
	// the other 65 inside 05:58–11:31 have no row. 300 turbines × 5 slots
	// × 223 = 334,500 expected: 97.96 %, nearly the streaming answer.
	if o := day.Seen; o.Path != "final" || story.Windows != 288 || o.Windows != 223 || o.FinalWindows != 223 || pct2(o.Completeness()) != "76.88" {
		t.Fatalf("day phase provenance: %+v, want path final with 223 of 288 windows shown, all final, completeness 76.88 %%", o)
	}
	if shown := (demo.Counts{Expected: 334_500, Received: 332_100, Available: 327_672}); day.Seen.Shown != shown || pct2(shown.Availability()) != "97.96" {
		t.Fatalf("day phase windows shown sum to %+v, want %+v (97.96 %%)", day.Seen.Shown, shown)
	}
	// The first screen now: the story's day on top, 75.85 %, incomplete.
	dom := chromium(t, landing, "demo-day-phase")
	for _, s := range []string{`<span class="badge incomplete" id="demo-status">incomplete</span>`, `<span class="v" id="demo-availability">75.85 %</span>`,
		`<span class="v" id="demo-completeness">76.88 %</span>`} {
		if !strings.Contains(panelOf(t, dom), s) {
			t.Errorf("after the day phase the demo's panel lacks %q: %s", s, panelOf(t, dom))
		}
	}
	beforeFeed(t, ts.URL, d.FeedFrom())
	resume <- struct{}{}

	// The replay, two minutes after start: 98.67 %, final.
	replay := next("replay")
	if replay.Phase != simulate.PhaseReplay || replay.Ingest == nil {
		t.Fatalf("second event %+v, want the replay, ingested", replay)
	}
	if !replay.Due.Equal(begun.Add(2*time.Minute)) || replay.Delivered.Before(replay.Due) {
		t.Fatalf("replay due at +%s, delivered at +%s; want due at +2m, delivered not before", replay.Due.Sub(begun), replay.Delivered.Sub(begun))
	}
	if s := replay.Ingest; s.Accepted != 99_900 || (replay.Attempts == 1 && (s.Duplicate != 0 || s.DirtyMarks != 3)) || s.Rejected != 0 || s.Failed != 0 || s.Backfill != 99_900 {
		t.Fatalf("replay ingest in %d attempt(s): %+v, want 99,900 accepted, all backfill lane (in one attempt: no duplicate, 3 farm-day-shards marked)", replay.Attempts, *s)
	}
	if o := replay.Seen; !replay.AsExpected || o.Counts != final || o.Shown != final || !o.Final() || o.Windows != 288 || o.FinalWindows != 288 {
		t.Fatalf("after the replay the farm-day reads %+v, want %+v both ways, final with 288 of 288 windows final", o, final)
	}
	if got := pct2(replay.Seen.Availability()); got != "98.67" {
		t.Fatalf("availability after the replay %s %%, want 98.67 %%", got)
	}
	firstScreen(t, chromium(t, landing, "demo-replayed"), story, yesterday, localday.Of(clock.Now(), london) == yesterday.AddDays(1))
	resume <- struct{}{}

	// The live feed: let it run to 11 minutes (faster: the story is told),
	// stop the clock and count the windows published. The feed started
	// with the demo; a farm's window [w, w+window) is due once w + window +
	// 60 s of allowed lateness has passed, and is then published once: by
	// the fast path, or, when a correction of its late readings came first,
	// by the final path only (at 10-60× the wall clock the fast path's wall
	// latency is many simulated seconds, so that race is common here).
	clock.SetSpeed(3 * speed)
	for clock.Now().Before(begun.Add(11 * time.Minute)) {
		time.Sleep(clock.Wall(10 * time.Second))
	}
	end := clock.Freeze()
	for _, f := range []struct {
		farm   string
		window time.Duration
	}{{"ardnave-point", 5 * time.Minute}, {"kilmore-sands", time.Minute}} {
		first := begun.Truncate(f.window) // the window in progress at start, fed whole
		due := int64(0)
		for w := first; !w.Add(f.window + time.Minute).After(end); w = w.Add(f.window) {
			due++
		}
		got := waitCount(t, p, due, `SELECT count(*) FROM window_provenance WHERE farm_id = $1 AND window_start >= $2`, f.farm, first)
		fast := testdb.Int(t, p.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = $1 AND path = 'fast' AND window_start >= $2`, f.farm, first)
		t.Logf("%s: %d of %d windows due by %s published, %d of them by the fast path", f.farm, got, due, end.Format(time.TimeOnly), fast)
		if got != due || due < 1 || fast > due {
			t.Errorf("%s: %d windows published from %s to %s (%s of feed), %d by the fast path; want %d (at least 1), at most that many fast",
				f.farm, got, first.Format(time.TimeOnly), end.Format(time.TimeOnly), end.Sub(begun), fast, due)
		}
	}
	// Kilmore's windows: 14 turbines × 30 slots expected each, and readings
	// stored in every one the feed had delivered by its last step (the
	// tiles move; at 30× the feed's last step can trail the frozen clock,
	// and a window published before its readings arrived waits for its
	// correction, so the readings are counted on the shard).
	if n := testdb.Int(t, p.Env.Control, `SELECT count(*) FROM window_provenance WHERE farm_id = 'kilmore-sands' AND window_start >= $1 AND expected <> 420`, kilmoreFrom); n != 0 {
		t.Errorf("%d of Kilmore Sands' windows do not have expected 420 (14 turbines × 30 slots)", n)
	}
	fed := d.Feed().Stats().LastStep.Add(-10 * time.Second).Truncate(time.Minute)
	if n := testdb.Int(t, p.Env.Shards.Pool("s3"), `SELECT count(*) FROM generate_series($1::timestamptz, $2::timestamptz - interval '1 minute', interval '1 minute') w
		WHERE NOT EXISTS (SELECT 1 FROM readings r WHERE r.turbine_id LIKE 'KS-%' AND r.recorded_at >= w - interval '45 s' AND r.recorded_at < w + interval '1 minute' + interval '45 s')`, kilmoreFrom, fed); n != 0 || !fed.After(kilmoreFrom) {
		t.Errorf("%d of Kilmore Sands' windows from %s to %s have no reading stored", n, kilmoreFrom.Format(time.TimeOnly), fed.Format(time.TimeOnly))
	}
	stop()
	if runErr != nil {
		t.Fatalf("demo: %v", runErr)
	}
	st := d.Feed().Stats()
	// Every slot of every turbine before the last step, each reading
	// either delivered or still on its way; every delivered one stored.
	slots := func(first time.Time, step time.Duration) int64 {
		return int64((st.LastStep.Sub(first) + step - 1) / step)
	}
	if want := 14*slots(kilmoreFrom, 2*time.Second) + 300*slots(ardnaveFrom, time.Minute); st.Generated != want || st.Delivered+st.Waiting != st.Generated {
		t.Errorf("feed generated %d (delivered %d, waiting %d) up to %s, want %d = 14 × %d + 300 × %d, all delivered or waiting",
			st.Generated, st.Delivered, st.Waiting, st.LastStep.Format(time.TimeOnly), want, slots(kilmoreFrom, 2*time.Second), slots(ardnaveFrom, time.Minute))
	}
	if s := st.Ingest; s.Accepted != st.Delivered || s.Duplicate != 0 || s.Rejected != 0 || s.Failed != 0 || st.PerSecond != 12 {
		t.Errorf("feed ingest %+v for %d delivered at %v/s (%d deliveries not fully stored, %d readings re-sent, last error %q), want all accepted at 12/s (14/2 s + 300/60 s)",
			s, st.Delivered, st.PerSecond, st.Errors, st.Resent, st.LastError)
	}
	// Again: the replay re-sent counts as duplicates and changes nothing,
	// and a second demo on the same day finds the story played and
	// delivers nothing.
	// Each step its own hang deadline (in CI, beside the other packages,
	// one shared minute ran out before the second demo spoke).
	ctx2, cancel2 := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel2()
	again, err := story.Phase(ctx2, p.In, simulate.PhaseReplay, clock.Now(), nil)
	if err != nil || again.Accepted != 0 || again.Duplicate != 99_900 || again.DirtyMarks != 0 {
		t.Fatalf("the replay re-sent: %+v (%v), want 0 accepted, 99,900 duplicates, no mark", again, err)
	}
	// (On the frozen clock, once a drain has read the replay's announced
	// marks, the report no longer holds the day back as "shard not drained".)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		o, err := story.Observe(ctx2, p.Env.Control, clock.Now())
		testdb.Must(t, err, "observe")
		if o.Final() || time.Now().After(deadline) {
			break
		}
	}
	var out2 syncBuffer
	events2 := make(chan demo.Event, 1)
	cfg2 := cfg
	cfg2.NoFeed, cfg2.Out, cfg2.OnEvent = true, &out2, func(e demo.Event) { events2 <- e }
	d2, err := demo.New(cfg2, p.Env.Control, p.In)
	testdb.Must(t, err, "second demo")
	ctx3, cancel3 := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel3()
	go func() { _ = d2.Run(ctx3) }()
	select {
	case e := <-events2:
		if e.Phase != "played" || e.Ingest != nil || !e.AsExpected || e.Seen.Counts != final {
			t.Fatalf("second demo: %+v, want the story found played (final, %+v), nothing ingested", e, final)
		}
	case <-ctx3.Done():
		t.Fatalf("second demo said nothing in %s:\n%s", testdb.Hang, out2.String())
	}
	if !strings.Contains(out2.String(), "an earlier run played all of it on this day") {
		t.Errorf("second demo's narration does not say the story was played:\n%s", out2.String())
	}
	for _, want := range []string{"75.85 % incomplete: information unavailable (99,900 of 432,000 slots without a reading, 23.13 %", "98.67 % final (expected 432,000", "delivering the replay of 05:58-11:31"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("narration lacks %q", want)
		}
	}
}

// waitCount polls a count until it reaches want (the pipeline's periodic
// jobs catch up with a frozen clock; on a busy machine a farm's shards can
// time out a round or two) or 2 wall minutes pass.
func waitCount(t *testing.T, p *pipelinetest.Pipeline, want int64, sql string, args ...any) int64 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := testdb.Int(t, p.Env.Control, sql, args...)
		if got >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func pct2(rate float64) string { return fmt.Sprintf("%.2f", 100*rate) }

// firstScreen checks the status page's first screen after the replay (the
// story's month): the demo's panel, on top, reads the story's Saturday as
// the story says, and names yesterday, which serve rolled up and the demo
// sent nothing for; Ardnave Point's fleet row counts that day, and says so.
// sameDay: the clock is still on the day after yesterday (its today's
// windows before the feed are the demo's gap too).
func firstScreen(t *testing.T, dom string, story *demo.Story, yesterday localday.Date, sameDay bool) {
	t.Helper()
	panel := panelOf(t, dom)
	if i, j := strings.Index(dom, `id="demo"`), strings.Index(dom, `id="fleet"`); i < 0 || j < i {
		t.Errorf("the demo's panel is not above the fleet table (at %d and %d)", i, j)
	}
	for _, s := range []string{
		fmt.Sprintf(`<a href="/farms/ardnave-point/days/%s">Ardnave Point, Saturday %s</a>`, story.Day, story.Day),
		`<span class="badge final" id="demo-status">final</span>`, `<span class="v" id="demo-availability">98.67 %</span>`,
		`<span class="v" id="demo-completeness">100.00 %</span>`, `<span class="v" id="demo-contractual">98.67 %</span>`,
		`<span class="v" id="demo-production">98.83 %</span>`, `<span class="v" id="demo-lost" title="full_performance 14.045; forced_outage 142.285">142.285</span>`,
		"<b>" + yesterday.String() + "</b> has no reading at all",
	} {
		if !strings.Contains(panel, s) {
			t.Errorf("after the replay the demo's panel lacks %q: %s", s, panel)
		}
	}
	if gap := "no reading at all, nor today's windows before the feed"; sameDay && !strings.Contains(panel, gap) {
		t.Errorf("after the replay the demo's panel lacks %q: %s", gap, panel)
	}
	// The story's month: its Saturday, and yesterday when it falls in it
	// (serve rolled it up; the demo sent nothing for it), the only other
	// day rolled up. The contract counts yesterday's every slot as
	// unavailable (information unavailable): 426,240 of 432,000 + 300
	// turbines × yesterday's minutes (1,440: 49.33 %); the row says so, and
	// does not call that below the warranty.
	row := rowOf(t, dom, "fleet-ardnave-point")
	want := []string{`<span class="badge provisional">provisional</span>`, `<td class="num production">98.83 %</td>`, `<td class="num lost">142.285</td>`}
	if yesterday.UTC().Month() == story.Day.UTC().Month() {
		from, to := localday.Bounds(yesterday, story.Location)
		contractual := 100 * 426_240 / float64(432_000+300*int64(to.Sub(from)/time.Minute))
		want = append(want, fmt.Sprintf(`<td class="num contractual">%.2f %% <span class="badge incomplete">no data</span><div class="sub no-reading">no reading at all: <span class="nowrap">%s</span></div></td>`, contractual, yesterday),
			"information unavailable: "+yesterday.String())
	} else {
		want = append(want, `<td class="num contractual">98.67 %</td>`)
	}
	for _, s := range want {
		if !strings.Contains(row, s) {
			t.Errorf("after the replay Ardnave Point's fleet row lacks %q: %s", s, row)
		}
	}
	if strings.Contains(row, "below") {
		t.Errorf("after the replay Ardnave Point's fleet row says below its warranty: %s", row)
	}
	// Kilmore Sands, in service long before the demo, has yesterday rolled
	// up with no reading too: no data, 0.00 % by the default contract.
	if yesterday.UTC().Month() == story.Day.UTC().Month() {
		row := rowOf(t, dom, "fleet-kilmore-sands")
		if want := `<td class="num contractual">0.00 % <span class="badge incomplete">no data</span><div class="sub no-reading">no reading at all: <span class="nowrap">` + yesterday.String(); !strings.Contains(row, want) || strings.Contains(row, "below") {
			t.Errorf("after the replay Kilmore Sands' fleet row lacks %q or says below: %s", want, row)
		}
	}
}

// panelOf is the demo's panel in a rendered page.
func panelOf(t *testing.T, dom string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<section class="card demo" id="demo">.*?</section>`).FindString(dom)
	if m == "" {
		t.Fatalf("no demo panel (<section id=\"demo\">) on the page: %.600s", dom)
	}
	return m
}

func rowOf(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr[^>]*\bid="` + regexp.QuoteMeta(id) + `".*?</tr>`).FindString(dom)
	if m == "" {
		t.Fatalf("no <tr id=%q> on the page", id)
	}
	return m
}

// beforeFeed checks Ardnave Point's tile on its farm page: a window that
// ended by the time the feed feeds every farm is labelled as before it
// (the demo sent nothing for it), any later one is not.
func beforeFeed(t *testing.T, base string, from time.Time) {
	t.Helper()
	resp, err := http.Get(base + "/farms/ardnave-point")
	testdb.Must(t, err, "farm page")
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	testdb.Must(t, err, "farm page")
	m := regexp.MustCompile(`<span class="v" data-end="([^"]+)">`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the farm page has no published window in its tile: %.400s", b)
	}
	end, err := time.Parse(time.RFC3339, string(m[1]))
	testdb.Must(t, err, "window end")
	labelled := bytes.Contains(b, []byte("before the demo's live feed"))
	if want := !end.After(from); labelled != want {
		t.Errorf("tile window ending %s, the feed from %s: labelled before the feed %v, want %v: %s", end.Format(time.TimeOnly), from.Format(time.TimeOnly), labelled, want,
			regexp.MustCompile(`(?s)<div class="facts tile".*?</div>\s*</div>`).Find(b))
	}
}

// chromium renders url in headless Chromium at 1,400 × 1,000: its DOM, and
// a screenshot in $GALEWATCH_ARTIFACTS, else test-artifacts/, as name.png.
func chromium(t *testing.T, url, name string) string {
	t.Helper()
	dir := os.Getenv("GALEWATCH_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(testdb.RepoRoot(t), "test-artifacts")
	}
	testdb.Must(t, os.MkdirAll(dir, 0o755), "artifacts folder")
	shot := filepath.Join(dir, name+".png")
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--hide-scrollbars",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--virtual-time-budget=20000",
		"--dump-dom", "--window-size=1400,1000", "--screenshot="+shot, url)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (%v bytes)", shot, err, st)
	}
	t.Logf("screenshot: %s", shot)
	return string(dom)
}
