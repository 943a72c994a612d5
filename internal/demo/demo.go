// Package demo tells the Ardnave story on a running pipeline (`serve --demo`,
// which `make run` starts): a live simulated feed of the whole fleet at its
// real rate, ingested continuously so the fast path publishes every farm's
// windows and the tiles move; and the Ardnave Saturday played on the clock
// on a recent Saturday: the day as the link delivered it (the farm-day
// reads 75.85 %), then, a couple of minutes later, the replay of what the
// writer lost (98.67 %, final). The demo only delivers readings, as a farm
// would; the drain, the rollup jobs and the fast path of the process it
// runs in do everything else. It says what to look at and when, and
// reports what it sees.
//
// Its clock and delays are injectable (Config.Clock, DayAfter, ReplayAfter,
// Tick): a test runs the whole story on a ScaledClock in seconds.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/simulate"
)

// Config is the demo's setup.
type Config struct {
	// Plan is the fleet the feed simulates (the fleet file `make run`
	// applies); the story needs its Ardnave Point.
	Plan *fleet.Plan
	// Registry, when set, lets the story put its farm in service from its
	// Saturday when the registry has it start later (a fleet applied
	// today), as a DBA back-fills a farm that existed.
	Registry *fleet.Registry
	// Seed fixes clock offsets and delays.
	Seed uint64
	// Saturday is the farm-local day the story is placed on; zero means
	// DefaultSaturday.
	Saturday localday.Date
	// DayAfter and ReplayAfter are when the day phase and the replay are
	// delivered, after the demo starts. The replay also waits until the
	// day phase has been rolled up, so its number is always seen first.
	DayAfter, ReplayAfter time.Duration
	// Tick is how often the live feed delivers what has arrived.
	Tick time.Duration
	// Report is how often a line says what the live feed did (0: never).
	Report time.Duration
	// Poll is how often the story looks at its farm-day while it waits for
	// the pipeline; Patience is how long it waits before saying what it
	// sees instead of what it expected.
	Poll, Patience time.Duration
	// NoFeed and NoStory leave one half out.
	NoFeed, NoStory bool
	// Clock is the demo's time; it must be the pipeline's too. Nil: the
	// wall clock.
	Clock Clock
	// Out receives the narration (nil: discarded).
	Out io.Writer
	// URL is where the server listens, for the narration.
	URL string
	// OnEvent, if set, sees each phase of the story once it has settled.
	OnEvent func(Event)
}

// DefaultConfig: the story on the default Saturday, day phase at once,
// replay two minutes later; the feed delivers every 2 s and reports every
// minute.
func DefaultConfig() Config {
	return Config{
		Seed: 1, DayAfter: 0, ReplayAfter: 2 * time.Minute, Tick: 2 * time.Second,
		Report: time.Minute, Poll: 2 * time.Second, Patience: 15 * time.Minute,
	}
}

// Event is one phase of the story, once the pipeline has rolled it up (or
// Patience ran out).
type Event struct {
	// Phase is "day" or "replay"; "played" when an earlier run already
	// played the whole story on this day (nothing is delivered).
	Phase string
	// Due is when the phase was scheduled (start + DayAfter or ReplayAfter).
	Due time.Time
	// Delivered is when the phase was ingested; Ingest what ingest said
	// (nil when the phase was already stored and is not delivered again).
	Delivered time.Time
	Ingest    *ingest.Summary
	// Attempts is how many deliveries it took (failed lines are re-sent).
	Attempts int
	// Seen is the farm-day once settled; AsExpected says it reads the
	// story's counts (and, after the replay, is final).
	Seen       Observation
	AsExpected bool
}

// Demo is the feed and the story on one pipeline.
type Demo struct {
	cfg     Config
	control *pgxpool.Pool
	in      *ingest.Ingestor
	start   time.Time
	feed    *Feed
	story   *Story
	out     *printer
}

// New prepares the demo on a running pipeline: control is the control
// database, in the ingest pipeline (running, with the fleet's routes).
// It fails before anything is delivered when the story cannot be told:
// no Ardnave Point in the plan or the registry, or a day the farm's rules
// (max_age) or the retention would refuse.
func New(cfg Config, control *pgxpool.Pool, in *ingest.Ingestor) (*Demo, error) {
	if cfg.Plan == nil {
		return nil, errors.New("demo: no fleet plan")
	}
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	switch {
	case cfg.Tick <= 0:
		return nil, fmt.Errorf("demo: the feed's tick must be positive, got %s", cfg.Tick)
	case cfg.DayAfter < 0 || cfg.ReplayAfter < cfg.DayAfter:
		return nil, fmt.Errorf("demo: the replay (after %s) must come after the day (after %s), both from start", cfg.ReplayAfter, cfg.DayAfter)
	case cfg.Poll <= 0 || cfg.Patience <= 0:
		return nil, fmt.Errorf("demo: poll (%s) and patience (%s) must be positive", cfg.Poll, cfg.Patience)
	}
	d := &Demo{cfg: cfg, control: control, in: in, start: cfg.Clock.Now(), out: &printer{w: cfg.Out, clock: cfg.Clock}}
	if !cfg.NoStory {
		if err := d.placeStory(); err != nil {
			return nil, err
		}
	}
	if !cfg.NoFeed {
		feed, err := NewFeed(cfg.Plan, cfg.Seed, d.start, in)
		if err != nil {
			return nil, err
		}
		d.feed = feed
	}
	return d, nil
}

func (d *Demo) placeStory() error {
	day := d.cfg.Saturday
	if day == (localday.Date{}) {
		for _, f := range d.cfg.Plan.Farms {
			if f.ID == simulate.ArdnaveFarm {
				loc, err := time.LoadLocation(f.Timezone)
				if err != nil {
					return fmt.Errorf("demo: farm %s: %w", f.ID, err)
				}
				day = DefaultSaturday(d.start, loc)
			}
		}
		if day == (localday.Date{}) {
			return fmt.Errorf("demo: the fleet has no farm %q, which the story is about", simulate.ArdnaveFarm)
		}
	}
	story, err := NewStory(d.cfg.Plan, day, d.cfg.Seed)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if !story.End.Before(d.start) {
		return fmt.Errorf("demo: the story's day %s has not ended (it ends %s): give a past day", day, story.End.Format(time.RFC3339))
	}
	// The registry decides what ingest accepts: check the day against the
	// farm's rules there, rather than have every reading rejected.
	route := d.in.Routes().Lookup(story.firstTurbine)
	if route == nil || route.FarmID != story.Farm {
		return fmt.Errorf("demo: the database's fleet has no %s turbine %s: apply the fleet file first (orchestrator fleet apply)", story.Farm, story.firstTurbine)
	}
	if c := route.CommissionedAt; c != nil && c.After(story.Start) {
		if err := d.backfill(story); err != nil {
			return err
		}
		if route = d.in.Routes().Lookup(story.firstTurbine); route == nil || route.CommissionedAt != nil && route.CommissionedAt.After(story.Start) {
			return fmt.Errorf("demo: %s is still not in service on %s after the back-fill", story.Farm, day)
		}
	}
	if age := d.start.Sub(story.Start); age > route.Rules.MaxAge {
		return fmt.Errorf("demo: the story's day %s starts %d days ago, beyond %s's max_age of %d days: ingest would reject every reading; choose a later day or raise rules: max_age",
			day, int(age.Hours()/24), story.Farm, int(route.Rules.MaxAge.Hours()/24))
	}
	if route.KeepFrom != nil && story.Start.Before(*route.KeepFrom) {
		return fmt.Errorf("demo: the story's day %s is older than the retention keeps (%s keeps readings from %s): choose a later day or raise GALEWATCH_RETENTION_DAYS",
			day, story.Farm, route.KeepFrom.UTC().Format(time.RFC3339))
	}
	if w := route.Rules.Window; w > 0 {
		story.Windows = int((story.End.Sub(story.Start) + w - 1) / w)
	}
	d.story = story
	return nil
}

// backfill applies the demo's fleet file with the story farm's turbines
// commissioned at the start of its day (the registry puts a farm applied
// today in service from today, so the Saturday's readings would be
// refused), then reloads ingest's routes. It changes no other farm, and no
// rolled-up day: any it would is reopened and named.
func (d *Demo) backfill(story *Story) error {
	if d.cfg.Registry == nil {
		return fmt.Errorf("demo: %s is in service only from after %s in the registry: apply the fleet with its commissioned_at at or before %s",
			story.Farm, story.Day, story.Start.UTC().Format(time.RFC3339))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan := *d.cfg.Plan
	plan.Turbines = slices.Clone(plan.Turbines)
	start := story.Start
	for i := range plan.Turbines {
		if plan.Turbines[i].FarmID == story.Farm {
			plan.Turbines[i].CommissionedAt = &start
		}
	}
	res, err := d.cfg.Registry.ApplyWith(ctx, "demo back-fill of "+story.Farm, &plan, fleet.ApplyOptions{Reopen: true})
	if err != nil {
		return fmt.Errorf("demo: back-fill %s from %s: %w", story.Farm, story.Day, err)
	}
	d.out.say("%s: in service from %s (its story day) — the registry had it from this fleet's first apply; back-filled as a DBA would\n"+
		"  (fleet apply with commissioned_at; %d rolled-up day(s) reopened). The demo sends nothing for it between that day and the live\n"+
		"  feed, so a day of that gap that gets rolled up (serve's rollup of yesterday) reads no reading at all, and its month counts it\n"+
		"  against the farm, as it would a dead link; the status page says so above its fleet table",
		story.Farm, start.UTC().Format(time.RFC3339), len(res.Reopened))
	// Retention's horizon comes back with the next periodic reload.
	routes, err := ingest.LoadRoutes(ctx, d.control, d.start, 0)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	d.in.SetRoutes(routes)
	return nil
}

// SetURL sets where the server listens, for the narration (before Run).
func (d *Demo) SetURL(url string) { d.cfg.URL = url }

// Story is the story as placed (nil with NoStory).
func (d *Demo) Story() *Story { return d.story }

// Feed is the live feed (nil with NoFeed).
func (d *Demo) Feed() *Feed { return d.feed }

// Start is when the demo's clock started it.
func (d *Demo) Start() time.Time { return d.start }

// FeedFrom is when the live feed feeds every farm (zero with NoFeed,
// Feed.Since): a farm's windows that end by then have no reading from the
// demo (but the story's day), later ones all of theirs.
func (d *Demo) FeedFrom() time.Time {
	if d.feed == nil {
		return time.Time{}
	}
	return d.feed.Since()
}

// Run tells the story until ctx ends: the live feed and its reports in the
// background, the story's phases on the clock. It returns nil when ctx
// ends, or the error that stopped the story.
func (d *Demo) Run(ctx context.Context) error {
	before, seen := fresh, Observation{}
	var err error
	if d.story != nil {
		if before, seen, err = d.survey(ctx); err != nil {
			d.out.say("the story cannot start: %v", err)
			d.story = nil
		}
	}
	d.intro(before)
	var wg sync.WaitGroup
	if d.feed != nil {
		wg.Add(1)
		go func() { defer wg.Done(); d.runFeed(ctx) }()
		if d.cfg.Report > 0 {
			wg.Add(1)
			go func() { defer wg.Done(); d.runReports(ctx) }()
		}
	}
	if d.story != nil {
		err = d.play(ctx, before, seen)
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			err = nil
		}
		if err != nil {
			d.out.say("the story stopped: %v", err)
		}
	}
	<-ctx.Done()
	wg.Wait()
	if d.feed != nil {
		d.feed.Wait()
	}
	return err
}

// runFeed delivers what has arrived every Tick.
func (d *Demo) runFeed(ctx context.Context) {
	var lastErr time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.cfg.Clock.After(d.cfg.Tick):
		}
		if err := d.feed.Step(ctx, d.cfg.Clock.Now()); err != nil && ctx.Err() == nil {
			// Say so, but not every tick while a shard is down.
			if now := d.cfg.Clock.Now(); now.Sub(lastErr) >= time.Minute {
				lastErr = now
				d.out.say("live feed: %v", err)
			}
		}
	}
}

// runReports says every Report what the feed did and what a tile shows.
func (d *Demo) runReports(ctx context.Context) {
	prev := d.feed.Stats()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.cfg.Clock.After(d.cfg.Report):
		}
		cur := d.feed.Stats()
		sum := cur.Ingest
		line := fmt.Sprintf("live feed: %s readings stored in the last %s (%s live lane, %s backfill lane; %s farm-day-shard marks for the drain), %s still on their way",
			provenance.Count(sum.Accepted-prev.Ingest.Accepted), d.cfg.Report, provenance.Count(sum.Live-prev.Ingest.Live), provenance.Count(sum.Backfill-prev.Ingest.Backfill),
			provenance.Count(sum.DirtyMarks-prev.Ingest.DirtyMarks), provenance.Count(cur.Waiting))
		if n := sum.Rejected - prev.Ingest.Rejected; n > 0 {
			line += fmt.Sprintf(", %s rejected (ingest_reject says why)", provenance.Count(n))
		}
		d.out.say("%s", line)
		if tile, err := provenance.Tile(ctx, d.control, simulate.ArdnaveFarm); err == nil {
			before := ""
			if from := d.FeedFrom(); !tile.End.After(from) {
				before = fmt.Sprintf("; before the live feed, from %s: not a measure of the farm", hms(from))
			}
			d.out.say("  %s tile: window %s-%s %s, %s available, %s received (complete through %s%s)",
				simulate.ArdnaveFarm, hm(tile.Start), hm(tile.End), tile.Path, pct(tile.Availability()), pct(tile.Completeness()), hms(tile.CompleteThrough), before)
		}
		prev = cur
	}
}

// wait returns once at (on the demo's clock) has come.
func (d *Demo) wait(ctx context.Context, at time.Time) error {
	for {
		left := at.Sub(d.cfg.Clock.Now())
		if left <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.cfg.Clock.After(left):
		}
	}
}

// printer writes the narration, one line at a time, stamped with the
// demo's clock.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	clock Clock
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text := fmt.Sprintf(format, args...)
	stamp := p.clock.Now().UTC().Format("15:04:05")
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(p.w, "demo %s  %s\n", stamp, line)
	}
}

func pct(rate float64) string                        { return fmt.Sprintf("%.2f %%", 100*rate) }
func hm(t time.Time) string                          { return t.UTC().Format("15:04") }
func hms(t time.Time) string                         { return t.UTC().Format("15:04:05") }
func localHM(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04") }
