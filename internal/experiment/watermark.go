// Package experiment runs the watermark study through the real
// pipeline: real Postgres, real ingest, the fast path, dirty marks, the
// drain and River rollup_day jobs, with the clock simulated.
//
// How events map to readings: one event is one reading of one turbine in
// one cadence slot. A window of W seconds holds EventsPerWindow events:
// EventsPerWindow / (W / cadence) turbines each report once per slot, at
// the slot's start (exact clocks). Each event's delay (received_at −
// recorded_at) is drawn from the design's delay mixture, the one
// simulate.DefaultDelay holds: 0.94 U(0, 5 s), 0.055 Exp(mean 90 s), 0.005
// Exp(mean 4 h). Because every slot holds exactly one reading, a window's
// received count is its number of events that have arrived, and the final
// count is EventsPerWindow.
//
// The same events go to one farm per allowed lateness (0, 15, 60, 120,
// 300 s by default), each farm's rule in the control database, so one run
// measures the divergence at publication for every lateness; corrections,
// open divergence and correction times are reported for the farm at the
// default lateness (60 s).
package experiment

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/rollup"
)

// Config sizes the experiment.
type Config struct {
	Seed            uint64
	Windows         int           // windows of events (the model's: 120)
	EventsPerWindow int           // events per window (the model's: 2,000)
	Window          time.Duration // window length (60 s)
	Cadence         time.Duration // turbine cadence (3 s: 20 slots a window)
	Lateness        []time.Duration
	Horizons        []time.Duration // open divergence measured this long after each window's close
	// Start is the first window's start (UTC midnight of a day).
	Start time.Time
	// Progress, if set, receives a line now and then.
	Progress func(string)
}

// DefaultConfig is the study as designed.
func DefaultConfig() Config {
	return Config{
		Seed: 1, Windows: 120, EventsPerWindow: 2000, Window: time.Minute, Cadence: 3 * time.Second,
		Lateness: []time.Duration{0, 15 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute},
		Horizons: []time.Duration{time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour},
		Start:    time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
	}
}

// Check refuses a size the experiment cannot run: no window, or events
// that do not fill the window's slots evenly (20 at a 3 s cadence and 60 s
// windows) on at least one turbine per shard.
func (c Config) Check() error {
	slots := int(c.Window / c.Cadence)
	if c.Windows < 1 || c.EventsPerWindow < 2*slots || c.EventsPerWindow%slots != 0 {
		return fmt.Errorf("windows must be at least 1 and events per window a multiple of %d (%d slots a window) of at least %d (a turbine on each of the two shards), got %d and %d",
			slots, slots, 2*slots, c.Windows, c.EventsPerWindow)
	}
	return nil
}

// The study's reference figures, printed beside ours: an in-memory model
// that draws 120 windows × 2,000 events from the same mixture and counts
// the share arriving after end + the lateness (at publication) or still
// missing some hours after close (open: what a batch rescan leaves); its
// batch path rescans 12 hours every 6, so with the stream's one read each
// row is read 3.00 times (modelRatio).
var (
	modelAtPublication = map[time.Duration]float64{0: 82.46, 15 * time.Second: 37.42, time.Minute: 24.67, 2 * time.Minute: 13.32, 5 * time.Minute: 5.37}
	modelOpen          = map[time.Duration]float64{time.Hour: 2.962, 6 * time.Hour: 1.046, 12 * time.Hour: 0.287, 24 * time.Hour: 0}
	modelRatio         = 3.00
)

// DefaultLateness is the farm whose corrections are reported.
const DefaultLateness = time.Minute

// FarmID names the farm of one allowed lateness.
func FarmID(l time.Duration) string { return fmt.Sprintf("exp-l%d", int(l/time.Second)) }

func (c Config) turbines() int {
	return c.EventsPerWindow / int(c.Window/c.Cadence)
}

// FleetYAML is the experiment's fleet: one farm per allowed lateness, in
// UTC, its turbines split over two shards.
func (c Config) FleetYAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "shards: [{name: s1}, {name: s2}]\nfarms:\n")
	n := c.turbines()
	for i, l := range c.Lateness {
		fmt.Fprintf(&b, "  - id: %s\n    timezone: UTC\n    cadence_seconds: %d\n    rules: {window: %s, allowed_lateness: %s}\n    turbines:\n",
			FarmID(l), int(c.Cadence/time.Second), c.Window, l)
		fmt.Fprintf(&b, "      - {prefix: E%d-, from: 1, to: %d, shard: s1}\n", i, n/2)
		fmt.Fprintf(&b, "      - {prefix: E%d-, from: %d, to: %d, shard: s2}\n", i, n/2+1, n)
	}
	return b.String()
}

// Env is where the experiment runs: a provisioned control database with
// the fleet of FleetYAML applied.
type Env struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
}

// PublicationResult is the divergence of the fast rows of one lateness.
type PublicationResult struct {
	LatenessS          int     `json:"lateness_s"`
	DivergencePerMille float64 `json:"divergence_per_mille"`
	ModelPerMille      float64 `json:"model_per_mille"`
	MedianPublishLagMs int64   `json:"median_publish_lag_ms"`
}

// OpenResult is the divergence still open some time after close.
type OpenResult struct {
	HoursAfterClose        float64 `json:"hours_after_close"`
	DivergencePerMille     float64 `json:"divergence_per_mille"`
	NotArrivedPerMille     float64 `json:"not_arrived_per_mille"`
	ModelBatchScanPerMille float64 `json:"model_batch_scan_per_mille"`
}

// CorrectionResult is arrival → correction of the readings that arrived
// after their window's publication.
type CorrectionResult struct {
	LateReadings int     `json:"late_readings"`
	Uncorrected  int     `json:"uncorrected"`
	P50S         float64 `json:"p50_s"`
	P99S         float64 `json:"p99_s"`
	MaxS         float64 `json:"max_s"`
}

// WorkResult is the rows read by every path per row ingested.
type WorkResult struct {
	RowsIngested  int64   `json:"rows_ingested"`
	FastRowsRead  int64   `json:"fast_rows_read"`
	FinalRowsRead int64   `json:"final_rows_read"`
	CloseRowsRead int64   `json:"close_rows_read"`
	Ratio         float64 `json:"total_work_ratio"`
	ModelRatio    float64 `json:"model_total_work_ratio"`
}

// Result is what the experiment measured.
type Result struct {
	Seed                    uint64              `json:"seed"`
	Windows                 int                 `json:"windows"`
	EventsPerWindow         int                 `json:"events_per_window"`
	EventsToReadings        string              `json:"events_to_readings"`
	DivergenceAtPublication []PublicationResult `json:"divergence_at_publication"`
	OpenDivergence          []OpenResult        `json:"open_divergence_after_close"`
	ArrivalToCorrection     CorrectionResult    `json:"arrival_to_correction"`
	TotalWork               WorkResult          `json:"total_work"`
	TotalWorkRatio          float64             `json:"total_work_ratio"`
	FinalExact              bool                `json:"final_counts_exact"`
	SimulatedHours          float64             `json:"simulated_hours"`
	WallSeconds             float64             `json:"wall_seconds"`
	Ticks                   int                 `json:"ticks"`
	Drains                  int                 `json:"drains"`
	Recomputes              int                 `json:"recomputes"`
}

type event struct {
	window  int
	turbine int
	at      time.Time // recorded_at: the slot's start
	arrival time.Time
}

// delay draws from the study's lateness mixture.
func delay(r *rand.Rand) time.Duration {
	u := r.Float64()
	switch {
	case u < 0.94:
		return time.Duration(r.Float64() * float64(5*time.Second))
	case u < 0.995:
		return time.Duration(r.ExpFloat64() * float64(90*time.Second))
	default:
		return time.Duration(r.ExpFloat64() * float64(4*time.Hour))
	}
}

// events draws every event, sorted by arrival.
func (c Config) events() []event {
	r := rand.New(rand.NewPCG(c.Seed, 0x6761_6c65))
	slots := int(c.Window / c.Cadence)
	var out []event
	for w := 0; w < c.Windows; w++ {
		for t := 0; t < c.turbines(); t++ {
			for k := 0; k < slots; k++ {
				at := c.Start.Add(time.Duration(w)*c.Window + time.Duration(k)*c.Cadence)
				out = append(out, event{window: w, turbine: t, at: at, arrival: at.Add(delay(r))})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].arrival.Before(out[j].arrival) })
	return out
}

// clock is the simulated clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// records feeds readings to ingest.
type records struct {
	recs []reading.Record
	i    int
}

func (r *records) Next() (*reading.Record, error) {
	if r.i == len(r.recs) {
		return nil, io.EOF
	}
	r.i++
	return &r.recs[r.i-1], nil
}

// Run runs the experiment on env (provisioned with cfg.FleetYAML()).
func Run(ctx context.Context, env Env, cfg Config) (Result, error) {
	began := time.Now()
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	evs := cfg.events()
	res := Result{Seed: cfg.Seed, Windows: cfg.Windows, EventsPerWindow: cfg.EventsPerWindow,
		EventsToReadings: fmt.Sprintf("one event = one reading of one of %d turbines (cadence %s, %d slots a %s window), recorded at its slot's start with an exact clock; delay = received_at - recorded_at from the mixture 0.94 U(0,5s) + 0.055 Exp(90s) + 0.005 Exp(4h); the same events go to one farm per allowed lateness",
			cfg.turbines(), cfg.Cadence, int(cfg.Window/cfg.Cadence), cfg.Window)}

	// The control statements run as the orchestrator runs them: with jit
	// off (cmd/orchestrator/app.go). A pool that leaves jit to the server
	// (the scratch databases', a test's) JIT-compiles FarmWindowsDue on
	// every publication: most of a small run's wall time, and none of the
	// pipeline's.
	if pc := env.Control.Config(); pc.ConnConfig.RuntimeParams["jit"] == "" {
		pc.ConnConfig.RuntimeParams["jit"] = "off"
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return res, err
		}
		defer pool.Close()
		env.Control = pool
	}
	q := controldb.New(env.Control)
	clk := &clock{now: cfg.Start}
	routes, err := ingest.LoadRoutes(ctx, env.Control, clk.Now(), 0)
	if err != nil {
		return res, err
	}
	in := ingest.New(ingest.DefaultConfig(), env.Control, env.Shards, routes, clk.Now, nil)
	in.Start(ctx)
	defer in.Close()

	work := map[string]*WorkResult{}
	for _, l := range cfg.Lateness {
		work[FarmID(l)] = &WorkResult{}
	}
	published := map[string]map[int64]time.Time{} // farm → window start (unix s) → publication
	for _, l := range cfg.Lateness {
		published[FarmID(l)] = map[int64]time.Time{}
	}
	// CatchUp is set before each run to reach back exactly to cfg.Start:
	// every experiment window is published however far the clock jumped,
	// and none of the empty windows before it (a fixed 48 h would publish
	// 2,880 empty windows a farm first).
	pub := &publish.Publisher{Control: env.Control, Shards: env.Shards, Now: clk.Now, MaxWindows: 100_000,
		OnPublish: func(p publish.Published) {
			work[p.FarmID].FastRowsRead += p.RowsRead
			published[p.FarmID][p.WindowStart.Unix()] = p.PublishedAt
		}}
	closing := false
	computer := &rollup.Computer{Control: env.Control, Shards: env.Shards, Now: clk.Now,
		OnResult: func(req rollup.Request, r rollup.Result) {
			if closing {
				work[req.FarmID].CloseRowsRead += r.RowsRead
			} else {
				work[req.FarmID].FinalRowsRead += r.RowsRead
			}
			res.Recomputes++
		}}
	drainer := &drain.Drainer{Control: env.Control, Shards: env.Shards, Now: clk.Now}
	jcfg := jobs.DefaultConfig()
	jcfg.Periodic = false
	client, err := jobs.NewClient(ctx, jcfg, jobs.Deps{Control: env.Control, Shards: env.Shards, Computer: computer, Drainer: drainer, Now: clk.Now})
	if err != nil {
		return res, err
	}
	if err := client.Start(ctx); err != nil {
		return res, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	}()
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()

	// Publication due times (every farm), in order.
	var due []time.Time
	for w := 0; w < cfg.Windows; w++ {
		end := cfg.Start.Add(time.Duration(w+1) * cfg.Window)
		for _, l := range cfg.Lateness {
			due = append(due, end.Add(l))
		}
	}
	slices.SortFunc(due, func(a, b time.Time) int { return a.Compare(b) })

	// Measurements of the default farm's open divergence.
	type measure struct {
		at      time.Time
		window  int
		horizon int
	}
	var measures []measure
	for w := 0; w < cfg.Windows; w++ {
		end := cfg.Start.Add(time.Duration(w+1) * cfg.Window)
		for h, d := range cfg.Horizons {
			measures = append(measures, measure{at: end.Add(d), window: w, horizon: h})
		}
	}
	slices.SortFunc(measures, func(a, b measure) int { return a.at.Compare(b.at) })
	openMissing := make([]int64, len(cfg.Horizons))
	notArrived := make([]int64, len(cfg.Horizons))
	windowEvents := make([][]event, cfg.Windows)
	for _, e := range evs {
		windowEvents[e.window] = append(windowEvents[e.window], e)
	}

	// Final-row history of the default farm: window → (computed_at, received).
	defFarm := FarmID(DefaultLateness)
	type write struct {
		at       time.Time
		received int64
	}
	finals := map[int64][]write{} // window start (unix s) → final writes
	recordFinals := func() error {
		rows, err := q.FarmWindowFinalsWrittenAt(ctx, controldb.FarmWindowFinalsWrittenAtParams{FarmID: defFarm, ComputedAt: clk.Now()})
		for _, r := range rows {
			finals[r.WindowStart.Unix()] = append(finals[r.WindowStart.Unix()], write{at: clk.Now(), received: r.Received})
		}
		return err
	}

	ids := func(farmIdx, turbine int) string {
		return fmt.Sprintf("E%d-%03d", farmIdx, turbine+1)
	}
	tick := time.Second
	next := 0
	marksPending := false
	lastDrain := time.Time{}
	t := cfg.Start
	lastProgress := time.Now()
	var tIngest, tPublish, tDrain, tJobs time.Duration
	mark := time.Now()
	lap := func(d *time.Duration) { now := time.Now(); *d += now.Sub(mark); mark = now }
	for next < len(evs) || marksPending || len(due) > 0 || len(measures) > 0 {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		clk.now = t
		res.Ticks++
		// 1. Measurements due by now (state before this tick's arrivals).
		for len(measures) > 0 && !measures[0].at.After(t) {
			m := measures[0]
			measures = measures[1:]
			p, err := provenance.Window(ctx, env.Control, defFarm, cfg.Start.Add(time.Duration(m.window)*cfg.Window))
			best := int64(0)
			if err == nil {
				best = p.Received
			}
			openMissing[m.horizon] += int64(cfg.EventsPerWindow) - best
			for _, e := range windowEvents[m.window] {
				if e.arrival.After(m.at) {
					notArrived[m.horizon]++
				}
			}
		}
		mark = time.Now()
		// 2. Arrivals by now, to every farm.
		var recs []reading.Record
		for next < len(evs) && !evs[next].arrival.After(t) {
			e := evs[next]
			next++
			for i := range cfg.Lateness {
				recs = append(recs, reading.Record{Line: int64(len(recs) + 1), Reading: reading.Reading{
					TurbineID: ids(i, e.turbine), RecordedAt: e.at, ReceivedAt: e.arrival, Available: true, PowerKW: 1, WindMS: 5}})
			}
		}
		if len(recs) > 0 {
			sum, err := in.Ingest(ctx, "experiment", &records{recs: recs})
			if err != nil {
				return res, fmt.Errorf("ingest at %s: %w", t.Format(time.RFC3339), err)
			}
			if sum.Accepted != int64(len(recs)) {
				return res, fmt.Errorf("ingest at %s: %+v, want %d accepted", t.Format(time.RFC3339), sum, len(recs))
			}
			for k := range work {
				work[k].RowsIngested += int64(len(recs) / len(cfg.Lateness))
			}
			if sum.DirtyMarks > 0 {
				marksPending = true
			}
		}
		lap(&tIngest)
		// 3. The fast path, when a window is due.
		if len(due) > 0 && !due[0].After(t) {
			pub.CatchUp = t.Sub(cfg.Start)
			if _, err := pub.PublishDue(ctx); err != nil {
				return res, err
			}
			for len(due) > 0 && !due[0].After(t) {
				due = due[1:]
			}
		}
		lap(&tPublish)
		// 4. The periodic drain (every 5 s while marks wait), then its jobs.
		if marksPending && t.Sub(lastDrain) >= 5*time.Second {
			lastDrain = t
			res.Drains++
			d, err := drainer.Drain(ctx, jobs.RollupDayEnqueue(client))
			if err != nil {
				return res, err
			}
			lap(&tDrain)
			if d.Deferred == 0 && d.Marks == d.Deleted {
				marksPending = false
			}
			if d.Enqueued > 0 {
				if err := waitJobs(ctx, client, events); err != nil {
					return res, err
				}
				if err := recordFinals(); err != nil {
					return res, err
				}
			}
			lap(&tJobs)
		}
		if time.Since(lastProgress) > 10*time.Second {
			lastProgress = time.Now()
			progress(fmt.Sprintf("experiment: simulated %s, %d of %d events arrived, %d recomputes (wall: ingest %s, publish %s, drain %s, jobs %s)",
				t.Sub(cfg.Start).Round(time.Second), next, len(evs), res.Recomputes,
				tIngest.Round(time.Millisecond), tPublish.Round(time.Millisecond), tDrain.Round(time.Millisecond), tJobs.Round(time.Millisecond)))
		}
		// 5. Next tick: a second later, or straight to the next thing that
		// happens when nothing is going on.
		nt := t.Add(tick)
		if !marksPending {
			jump := time.Time{}
			consider := func(x time.Time) {
				if jump.IsZero() || x.Before(jump) {
					jump = x
				}
			}
			if next < len(evs) {
				consider(evs[next].arrival.Truncate(time.Second).Add(time.Second))
			}
			if len(due) > 0 {
				consider(due[0])
			}
			if len(measures) > 0 {
				consider(measures[0].at)
			}
			if jump.After(nt) {
				nt = jump
			}
		}
		t = nt
	}

	progress(fmt.Sprintf("experiment: simulated %s, done: %d ticks, %d drains, %d recomputes (wall: ingest %s, publish %s, drain %s, jobs %s)",
		t.Sub(cfg.Start).Round(time.Second), res.Ticks, res.Drains, res.Recomputes,
		tIngest.Round(time.Millisecond), tPublish.Round(time.Millisecond), tDrain.Round(time.Millisecond), tJobs.Round(time.Millisecond)))
	// Close the day (the nightly rollup): its work is counted too.
	closing = true
	clk.now = cfg.Start.Add(25 * time.Hour)
	if t.After(clk.now) {
		clk.now = t
	}
	day := cfg.Start.Format(time.DateOnly)
	var closeIDs []int64
	for _, l := range cfg.Lateness {
		ids, err := jobs.EnqueueFarmDay(ctx, env.Control, client, FarmID(l), day, rollup.ReasonSchedule, jobs.PrioritySchedule)
		if err != nil {
			return res, err
		}
		closeIDs = append(closeIDs, ids...)
	}
	if gaveUp, err := jobs.Wait(ctx, client, closeIDs, 100*time.Millisecond, nil); err != nil || len(gaveUp) > 0 {
		return res, fmt.Errorf("closing the day: %v %v", gaveUp, err)
	}

	// Divergence at publication, per lateness.
	for _, l := range cfg.Lateness {
		farm := FarmID(l)
		var missing, total int64
		var lags []int64
		for w := 0; w < cfg.Windows; w++ {
			start := cfg.Start.Add(time.Duration(w) * cfg.Window)
			fast, err := q.FarmWindowFastGet(ctx, controldb.FarmWindowFastGetParams{FarmID: farm, WindowStart: start})
			if err != nil {
				return res, fmt.Errorf("fast row %s %s: %w", farm, start.Format(time.RFC3339), err)
			}
			missing += int64(cfg.EventsPerWindow) - fast.Received
			total += int64(cfg.EventsPerWindow)
			end := start.Add(cfg.Window)
			lags = append(lags, published[farm][start.Unix()].Sub(end.Add(l)).Milliseconds())
		}
		slices.Sort(lags)
		res.DivergenceAtPublication = append(res.DivergenceAtPublication, PublicationResult{
			LatenessS: int(l / time.Second), DivergencePerMille: 1000 * float64(missing) / float64(total),
			ModelPerMille: modelAtPublication[l], MedianPublishLagMs: lags[len(lags)/2],
		})
	}
	total := float64(cfg.Windows * cfg.EventsPerWindow)
	for h, d := range cfg.Horizons {
		res.OpenDivergence = append(res.OpenDivergence, OpenResult{
			HoursAfterClose: d.Hours(), DivergencePerMille: 1000 * float64(openMissing[h]) / total,
			NotArrivedPerMille: 1000 * float64(notArrived[h]) / total, ModelBatchScanPerMille: modelOpen[d],
		})
	}
	// Arrival → correction for the default farm's readings that arrived
	// after their window's publication.
	var delays []float64
	for _, e := range evs {
		start := cfg.Start.Add(time.Duration(e.window) * cfg.Window)
		pubAt, ok := published[defFarm][start.Unix()]
		if !ok || !e.arrival.After(pubAt) {
			continue
		}
		res.ArrivalToCorrection.LateReadings++
		corrected := false
		for _, wr := range finals[start.Unix()] {
			if !wr.at.Before(e.arrival) {
				delays = append(delays, wr.at.Sub(e.arrival).Seconds())
				corrected = true
				break
			}
		}
		if !corrected {
			res.ArrivalToCorrection.Uncorrected++
		}
	}
	if len(delays) > 0 {
		slices.Sort(delays)
		q := func(p float64) float64 { return delays[min(len(delays)-1, int(math.Ceil(p*float64(len(delays))))-1)] }
		res.ArrivalToCorrection.P50S, res.ArrivalToCorrection.P99S, res.ArrivalToCorrection.MaxS = q(0.5), q(0.99), delays[len(delays)-1]
	}
	// Every farm's final counts are exact.
	res.FinalExact = true
	for _, l := range cfg.Lateness {
		n, err := q.FarmWindowsFinalReceived(ctx, controldb.FarmWindowsFinalReceivedParams{
			FarmID: FarmID(l), Received: int64(cfg.EventsPerWindow), FromT: cfg.Start, ToT: cfg.Start.Add(time.Duration(cfg.Windows) * cfg.Window)})
		if err != nil {
			return res, err
		}
		if n != int64(cfg.Windows) {
			res.FinalExact = false
		}
	}
	wr := work[defFarm]
	wr.Ratio = float64(wr.FastRowsRead+wr.FinalRowsRead+wr.CloseRowsRead) / float64(wr.RowsIngested)
	wr.ModelRatio = modelRatio
	res.TotalWork = *wr
	res.TotalWorkRatio = wr.Ratio
	res.SimulatedHours = clk.now.Sub(cfg.Start).Hours()
	res.WallSeconds = time.Since(began).Seconds()
	return res, nil
}

// waitJobs waits until no rollup_day job is available, running or retrying.
func waitJobs(ctx context.Context, client *river.Client[pgx.Tx], events <-chan *river.Event) error {
	for {
		res, err := client.JobList(ctx, river.NewJobListParams().Kinds(jobs.KindRollupDay).
			States(rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStatePending).First(1))
		if err != nil {
			return err
		}
		if len(res.Jobs) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-events:
		case <-time.After(20 * time.Millisecond):
		}
	}
}
