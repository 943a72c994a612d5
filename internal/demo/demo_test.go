package demo_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/demo"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/report"
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

// speed: one wall second is this many seconds on the demo's clock.
const speed = 10

// pipeline is what `serve` runs, on a test database, on clock: the ingest
// pipeline and a River client with every worker and the periodic jobs
// (fast path and drain), their periods scaled to the clock. The nightly
// rollups are left out: the story's day is never "yesterday"
// (DefaultSaturday), and their run at start (every farm's yesterday)
// would only add work.
func startPipeline(t *testing.T, fleetYAML string, clock *demo.ScaledClock) *pipelinetest.Pipeline {
	t.Helper()
	return pipelinetest.New(t, testdb.New(t, fleetYAML), pipelinetest.Options{Now: clock.Now,
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

// TestStoryOnTheClock plays `make run` on a test database at 20× the wall
// clock: the live feed from the first minute, the Ardnave Saturday on the
// most recent Saturday before yesterday, its day phase at once and its
// replay two minutes later. Nothing but the demo and the pipeline's own
// jobs runs: the farm-day reads 75.85 % after the day phase and 98.67 %,
// final, after the replay; the live feed's windows are published at the
// count its simulated time allows.
func TestStoryOnTheClock(t *testing.T) {
	t.Parallel()
	start := time.Now().UTC().Truncate(time.Minute)
	clock := demo.NewScaledClock(start, speed)
	p := startPipeline(t, storyFleet, clock)

	var out syncBuffer
	events := make(chan demo.Event, 4)
	cfg := demo.DefaultConfig()
	cfg.Plan, cfg.Clock, cfg.Out, cfg.URL = p.Env.Plan, clock, &out, "http://127.0.0.1:0"
	cfg.OnEvent = func(e demo.Event) { events <- e }
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
	// What the story must read, from the scenario's arithmetic.
	afterDay := demo.Counts{Expected: 432_000, Received: 332_100, Available: 327_672}
	final := demo.Counts{Expected: 432_000, Received: 432_000, Available: 426_240}
	if story.AfterDay != afterDay || story.Final != final || story.DayReadings != 332_100 || story.ReplayReadings != 99_900 {
		t.Fatalf("story expects %+v then %+v from %d + %d readings; want %+v then %+v from 332,100 + 99,900",
			story.AfterDay, story.Final, story.DayReadings, story.ReplayReadings, afterDay, final)
	}

	ctx, cancel := context.WithCancel(context.Background())
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
	// quarter of its slots without a reading, over the farm's 10 ‰. The
	// seed story's trap, named.
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
		first := begun.Truncate(f.window)
		if first.Before(begun) {
			first = first.Add(f.window) // the first window the feed covers whole
		}
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
	kilmoreFrom := begun.Truncate(time.Minute).Add(time.Minute)
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
	slots := func(step time.Duration) int64 {
		first := begun.Truncate(step)
		if first.Before(begun) {
			first = first.Add(step)
		}
		return int64((st.LastStep.Sub(first) + step - 1) / step)
	}
	if want := 14*slots(2*time.Second) + 300*slots(time.Minute); st.Generated != want || st.Delivered+st.Waiting != st.Generated {
		t.Errorf("feed generated %d (delivered %d, waiting %d) up to %s, want %d = 14 × %d + 300 × %d, all delivered or waiting",
			st.Generated, st.Delivered, st.Waiting, st.LastStep.Format(time.TimeOnly), want, slots(2*time.Second), slots(time.Minute))
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
