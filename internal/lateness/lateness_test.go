package lateness_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/lateness"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// rulesFleet is Ardnave Point on 100 turbines over s1-s3 with the farm's
// own lane threshold and early tolerance, so the test proves they are read
// from farm_rules rather than the defaults (60 s, 2 s).
const rulesFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}]
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    rules: {lane_threshold: 45s, early_tolerance: 1500ms}
    turbines:
      - {prefix: AP-, from: 1, to: 34, shard: s1}
      - {prefix: AP-, from: 101, to: 133, shard: s2}
      - {prefix: AP-, from: 201, to: 233, shard: s3}
`

const (
	laneThreshold  = 45 * time.Second
	earlyTolerance = 1500 * time.Millisecond
	// offsetTolerance bounds the estimator's bias: an estimate is never
	// above the true offset and at most this below it (the median
	// 10-minute window's smallest delay, ~10 ms for 300 readings with
	// delays uniform in 0-3 s).
	offsetTolerance = 50 * time.Millisecond
)

// testDelay is the known delay mixture: prompt, a retry tail, a rare
// half-hour backlog.
var testDelay = []simulate.DelayComponent{
	{Weight: 0.96, Kind: "uniform", Param: 3 * time.Second},
	{Weight: 0.035, Kind: "exp", Param: 40 * time.Second},
	{Weight: 0.005, Kind: "exp", Param: 30 * time.Minute},
}

// load ingests dec through the real ingest pipeline at the fixed time now.
func load(t *testing.T, env *testdb.Env, now time.Time, dec reading.Decoder) ingest.Summary {
	t.Helper()
	ctx := context.Background()
	in := pipelinetest.Ingestor(t, env, func() time.Time { return now }, ingest.DefaultConfig(), nil)
	sum, err := in.Ingest(ctx, t.Name(), dec)
	testdb.Must(t, err, "ingest")
	return sum
}

// handBuilt is one reading written by hand.
type handBuilt struct {
	turbine            string
	recorded, received time.Time
}

func loadHandBuilt(t *testing.T, env *testdb.Env, now time.Time, rows []handBuilt) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":1}`+"\n",
			r.turbine, r.recorded.Format(time.RFC3339Nano), r.received.Format(time.RFC3339Nano))
	}
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(b.String()))
	testdb.Must(t, err, "decoder")
	if sum := load(t, env, now, dec); sum.Accepted != int64(len(rows)) || sum.Rejected != 0 {
		t.Fatalf("hand-built readings: accepted %d rejected %d, want %d and 0", sum.Accepted, sum.Rejected, len(rows))
	}
}

func instant(t *testing.T, name string, at time.Time) lateness.Bound {
	t.Helper()
	b, err := lateness.ParseBound(name, at.Format(time.RFC3339))
	testdb.Must(t, err, "bound %s", name)
	return b
}

// exact is the nearest-rank q-quantile (rank ceil(q*n)) of sorted lags in
// µs, q given in thousandths so the rank is integer arithmetic.
func exact(sorted []int64, permille int64) int64 {
	n := int64(len(sorted))
	rank := (permille*n + 999) / 1000
	return sorted[rank-1]
}

// checkQuantiles compares a reported series with the exact quantiles of
// the same lags (µs): each reported quantile must be at or above the exact
// one and within the stated resolution (1 ms within ±10 s, 1 % of the lag
// beyond); min and max must be exact.
func checkQuantiles(t *testing.T, series string, got *lateness.Quantiles, lagsUS []int64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no quantiles reported, want those of %d readings", series, len(lagsUS))
	}
	sorted := slices.Clone(lagsUS)
	slices.Sort(sorted)
	for _, c := range []struct {
		name     string
		permille int64
		got      float64
	}{{"p50", 500, got.P50}, {"p95", 950, got.P95}, {"p99", 990, got.P99}, {"p99.9", 999, got.P999}} {
		want := float64(exact(sorted, c.permille)) / 1000
		width := 1.0
		if want < -10_000 || want >= 10_000 {
			width = 0.01 * math.Abs(want)
		}
		if c.got < want-1e-6 || c.got-want > width+1e-6 {
			t.Errorf("%s %s = %.3f ms, want the exact %.3f ms or at most %.3f ms above it", series, c.name, c.got, want, width)
		}
	}
	if want := float64(sorted[0]) / 1000; math.Abs(got.Min-want) > 1e-6 {
		t.Errorf("%s min = %.3f ms, want exactly %.3f ms", series, got.Min, want)
	}
	if want := float64(sorted[len(sorted)-1]) / 1000; math.Abs(got.Max-want) > 1e-6 {
		t.Errorf("%s max = %.3f ms, want exactly %.3f ms", series, got.Max, want)
	}
}

// TestMeasureArdnave loads an hour of simulated Ardnave Point readings
// (100 turbines over s1-s3, clock offsets from simulate.ClockOffsets, the
// known delay mixture testDelay) plus two glitching timestamps, and checks
// every number of the report against the same rows: the quantiles (within
// the stated resolution), the lanes' and early counts (exactly), every
// turbine's offset estimate (within offsetTolerance below the truth, the
// glitching turbine included), the 10 worst named in order, and the
// recommendation.
func TestMeasureArdnave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, rulesFleet)
	var turbines []string
	shardOf := map[string]string{}
	for _, tb := range env.Plan.Turbines {
		if tb.FarmID == "ardnave-point" {
			turbines = append(turbines, tb.ID)
			shardOf[tb.ID] = tb.Shard
		}
	}
	const seed = 8
	offsets := simulate.ClockOffsets(turbines, seed)
	from := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	cfg, err := simulate.FarmConfig(env.Plan, "ardnave-point", from.Add(-time.Minute), to.Add(time.Minute), seed)
	testdb.Must(t, err, "simulate config")
	cfg.Offsets, cfg.Delay = offsets, testDelay

	// The turbine with the smallest |offset| also sends two readings
	// stamped 60 s ahead, in two of its six windows: a minimum-lag
	// estimator would call its clock 60 s fast.
	glitchy := slices.MinFunc(turbines, func(a, b string) int { return cmp.Compare(offsets[a].Abs(), offsets[b].Abs()) })
	var glitches []handBuilt
	for _, at := range []time.Time{from.Add(15*time.Minute + time.Second), from.Add(35*time.Minute + time.Second)} {
		glitches = append(glitches, handBuilt{glitchy, at, at.Add(-60 * time.Second)})
	}
	// Another turbine sends two readings exactly on the rules' edges: lag
	// 45 s is still live, lag -1.5 s is not yet early.
	edgy := slices.MinFunc(slices.DeleteFunc(slices.Clone(turbines), func(id string) bool { return id == glitchy }),
		func(a, b string) int { return cmp.Compare(offsets[a].Abs(), offsets[b].Abs()) })
	for _, c := range []struct {
		at  time.Duration
		lag time.Duration
	}{{5*time.Minute + time.Second, laneThreshold}, {5*time.Minute + 3*time.Second, -earlyTolerance}} {
		glitches = append(glitches, handBuilt{edgy, from.Add(c.at), from.Add(c.at + c.lag)})
	}

	// What the report must say, from the same rows.
	var all, live, backfill, delays []int64
	lagOf := map[string][]int64{}
	early, earlyTurbines := int64(0), map[string]bool{}
	keep := func(turbine string, recorded, received time.Time, delay time.Duration) {
		if recorded.Before(from) || !recorded.Before(to) {
			return
		}
		lag := received.Sub(recorded).Microseconds()
		all = append(all, lag)
		if lag <= laneThreshold.Microseconds() {
			live = append(live, lag)
		} else {
			backfill = append(backfill, lag)
		}
		if lag < -earlyTolerance.Microseconds() {
			early++
			earlyTurbines[turbine] = true
		}
		lagOf[turbine] = append(lagOf[turbine], lag)
		delays = append(delays, delay.Microseconds())
	}
	_, err = simulate.Generate(cfg, func(r *reading.Reading) error {
		keep(r.TurbineID, r.RecordedAt, r.ReceivedAt, r.ReceivedAt.Sub(r.RecordedAt.Add(-offsets[r.TurbineID])))
		return nil
	})
	testdb.Must(t, err, "generate")
	if n := len(all); n != 100*1800 {
		t.Fatalf("the hour holds %d simulated readings by recorded_at, want 180000 (100 turbines x 1800)", n)
	}
	for _, g := range glitches {
		keep(g.turbine, g.recorded, g.received, 0)
	}
	delays = delays[:len(delays)-len(glitches)] // hand-built readings are not network delay

	now := time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC)
	dec, wait := simulate.Stream(ctx, cfg)
	sum := load(t, env, now, dec)
	st, err := wait()
	testdb.Must(t, err, "stream")
	if sum.Accepted != st.Readings || sum.Rejected != 0 {
		t.Fatalf("ingest accepted %d rejected %d, want all %d simulated readings and 0", sum.Accepted, sum.Rejected, st.Readings)
	}
	loadHandBuilt(t, env, now, glitches)

	m := &lateness.Measurer{Control: env.Control, Shards: env.Shards}
	rep, err := m.Measure(ctx, "ardnave-point", instant(t, "--from", from), instant(t, "--to", to))
	testdb.Must(t, err, "measure")

	t.Run("Rules", func(t *testing.T) {
		if rep.LaneThresholdMS != 45_000 || rep.EarlyToleranceMS != 1_500 {
			t.Fatalf("rules = %d ms / %d ms, want the farm's 45000 / 1500 from farm_rules", rep.LaneThresholdMS, rep.EarlyToleranceMS)
		}
		if !slices.Equal(rep.Shards, []string{"s1", "s2", "s3"}) || rep.Partial || len(rep.ShardsFailed) != 0 {
			t.Fatalf("shards %v failed %v partial %v, want s1 s2 s3, none failed, not partial", rep.Shards, rep.ShardsFailed, rep.Partial)
		}
	})
	t.Run("Quantiles", func(t *testing.T) {
		if rep.Readings != 180_004 {
			t.Fatalf("readings = %d, want 180004 (180000 simulated + 4 by hand)", rep.Readings)
		}
		checkQuantiles(t, "all", rep.LagMS, all)
		checkQuantiles(t, "live", rep.Lanes.Live.LagMS, live)
		checkQuantiles(t, "backfill", rep.Lanes.Backfill.LagMS, backfill)
	})
	t.Run("Lanes", func(t *testing.T) {
		if rep.Lanes.Live.Readings != int64(len(live)) || rep.Lanes.Backfill.Readings != int64(len(backfill)) {
			t.Fatalf("lanes live %d backfill %d, want %d and %d (lag <= 45 s)", rep.Lanes.Live.Readings, rep.Lanes.Backfill.Readings, len(live), len(backfill))
		}
		if len(backfill) < 2000 {
			t.Fatalf("test data: only %d backfill readings, want thousands for the lane to mean something", len(backfill))
		}
	})
	t.Run("Early", func(t *testing.T) {
		if rep.Early.Readings != early || rep.Early.Turbines != len(earlyTurbines) {
			t.Fatalf("early = %d readings from %d turbines, want %d from %d (lag < -1.5 s)", rep.Early.Readings, rep.Early.Turbines, early, len(earlyTurbines))
		}
		if early < 1000 {
			t.Fatalf("test data: only %d early readings", early)
		}
	})
	t.Run("Resolution", func(t *testing.T) {
		r := rep.Resolution
		if r.FineWidthMS != 1 || r.FineLimitMS != 10_000 || r.CoarseRelativeWidth > 0.01 || r.CoarseRelativeWidth < 0.0099 || r.OuterLimitMS < 86_400_000_000 {
			t.Fatalf("resolution = %+v, want 1 ms to ±10000 ms, then <= 1 %% wide, to at least 1000 days", r)
		}
	})

	// Every turbine's estimate, through a measurer that names them all.
	everyone, err := (&lateness.Measurer{Control: env.Control, Shards: env.Shards, Worst: 1000}).Measure(ctx, "ardnave-point", instant(t, "--from", from), instant(t, "--to", to))
	testdb.Must(t, err, "measure every turbine")
	estimate := map[string]float64{}
	for _, tb := range everyone.Turbines.Worst {
		estimate[tb.ID] = tb.ClockOffsetMS
	}
	t.Run("Offsets", func(t *testing.T) {
		if everyone.Turbines.Measured != 100 || len(estimate) != 100 {
			t.Fatalf("measured %d turbines, named %d, want 100 and 100", everyone.Turbines.Measured, len(estimate))
		}
		for _, id := range turbines {
			trueMS := float64(offsets[id].Microseconds()) / 1000
			if got := estimate[id]; got > trueMS+1e-6 || trueMS-got > float64(offsetTolerance.Milliseconds()) {
				t.Errorf("%s: estimated offset %.3f ms, true %.3f ms: want at most %d ms below it, never above", id, got, trueMS, offsetTolerance.Milliseconds())
			}
		}
	})
	t.Run("WorstNamed", func(t *testing.T) {
		truth := slices.Clone(turbines)
		slices.SortFunc(truth, func(a, b string) int {
			return cmp.Or(cmp.Compare(offsets[b].Abs(), offsets[a].Abs()), cmp.Compare(a, b))
		})
		// The ranking is only well defined if the estimates cannot reorder
		// neighbours: the true |offsets| around rank 10 differ by more than
		// the tolerance.
		for i := 0; i < 10; i++ {
			if offsets[truth[i]].Abs()-offsets[truth[i+1]].Abs() <= offsetTolerance {
				t.Fatalf("test data: ranks %d and %d are within %s", i+1, i+2, offsetTolerance)
			}
		}
		var named []string
		for _, tb := range rep.Turbines.Worst {
			named = append(named, tb.ID)
			if tb.Readings != 1800 || tb.Windows != 6 { // no hand-built reading is among them
				t.Errorf("%s: %d readings in %d windows, want 1800 in 6", tb.ID, tb.Readings, tb.Windows)
			}
			if tb.Shard != shardOf[tb.ID] {
				t.Errorf("%s named on shard %s, want %s", tb.ID, tb.Shard, shardOf[tb.ID])
			}
			var e int64
			for _, lag := range lagOf[tb.ID] {
				if lag < -earlyTolerance.Microseconds() {
					e++
				}
			}
			if tb.Early != e {
				t.Errorf("%s: %d early readings, want %d", tb.ID, tb.Early, e)
			}
		}
		if !slices.Equal(named, truth[:10]) {
			t.Fatalf("worst 10 named %v, want %v (by true |offset|)", named, truth[:10])
		}
		if slices.Contains(named, glitchy) {
			t.Fatalf("%s (true offset %s, two glitches 60 s ahead) is named among the worst: the estimator followed the glitches", glitchy, offsets[glitchy])
		}
	})
	t.Run("CorrectedAndRecommendation", func(t *testing.T) {
		var corrected []int64
		for id, lags := range lagOf {
			est := int64(math.Round(estimate[id] * 1000))
			for _, lag := range lags {
				corrected = append(corrected, lag+est)
			}
		}
		checkQuantiles(t, "corrected", rep.CorrectedLagMS, corrected)
		if rep.RecommendedAllowedLatenessS == nil {
			t.Fatal("no recommendation")
		}
		got := *rep.RecommendedAllowedLatenessS
		if want := int32(5 * math.Ceil(rep.CorrectedLagMS.P99/5000)); got != want {
			t.Fatalf("recommended %d s, want %d s: the smallest multiple of 5 s at or above the corrected p99 %.3f ms", got, want, rep.CorrectedLagMS.P99)
		}
		// Against the truth: the p99 of the simulated network delays,
		// which the corrected lags equal up to the estimator's bias.
		slices.Sort(delays)
		p99 := float64(exact(delays, 990)) / 1e6
		want := int32(5 * math.Ceil(p99/5))
		if p99-offsetTolerance.Seconds() <= float64(want-5) || p99*1.01 > float64(want) {
			t.Fatalf("test data: true delay p99 %.3f s is too close to a multiple of 5 s to check against", p99)
		}
		if got != want {
			t.Fatalf("recommended %d s, want %d s from the true delay p99 %.3f s", got, want, p99)
		}
		if !strings.Contains(rep.RecommendationReason, fmt.Sprintf("%d s is the smallest positive multiple of 5 s", want)) {
			t.Fatalf("reason %q does not state the rule's result", rep.RecommendationReason)
		}
	})
	t.Run("Text", func(t *testing.T) {
		var b strings.Builder
		testdb.Must(t, rep.WriteText(&b), "write text")
		for _, want := range []string{"Lateness of ardnave-point", "(all answered)", "live lane when lag <= 45.000 s", truthFirst(rep),
			fmt.Sprintf("recommended allowed lateness: %d s", *rep.RecommendedAllowedLatenessS), "estimator:", "resolution: lag buckets 1 ms wide"} {
			if !strings.Contains(b.String(), want) {
				t.Fatalf("text output lacks %q:\n%s", want, b.String())
			}
		}
	})
}

func truthFirst(rep *lateness.Report) string {
	if len(rep.Turbines.Worst) == 0 {
		return "(no turbine)"
	}
	return "  " + rep.Turbines.Worst[0].ID + "  "
}

// partialSetup loads ten readings on each of AP-001 (s1), AP-150 (s2) and
// AP-250 (s3), lags 1 s to 10 s.
func partialSetup(t *testing.T) (*testdb.Env, lateness.Bound, lateness.Bound) {
	env := testdb.New(t, testdb.ArdnaveFleet)
	from := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	var rows []handBuilt
	for _, id := range []string{"AP-001", "AP-150", "AP-250"} {
		for i := 1; i <= 10; i++ {
			at := from.Add(time.Duration(2*i) * time.Second)
			rows = append(rows, handBuilt{id, at, at.Add(time.Duration(i) * time.Second)})
		}
	}
	loadHandBuilt(t, env, from.Add(24*time.Hour), rows)
	return env, instant(t, "--from", from), instant(t, "--to", from.Add(time.Hour))
}

// TestMeasureShardUnreachable: a shard whose server cannot be reached is
// named, the report is partial, and the other shards' readings are still
// reported (20 of the 30).
func TestMeasureShardUnreachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, from, to := partialSetup(t)
	testdb.Exec(t, env.Control, `UPDATE shard SET dsn = 'postgres://galewatch@127.0.0.1:1/galewatch_gone' WHERE name = 's2'`)
	shards, err := env.Registry.OpenShards(ctx, 2)
	testdb.Must(t, err, "open shards")
	defer shards.Close()

	rep, err := (&lateness.Measurer{Control: env.Control, Shards: shards}).Measure(ctx, "ardnave-point", from, to)
	testdb.Must(t, err, "measure")
	if !rep.Partial || len(rep.ShardsFailed) != 1 || rep.ShardsFailed[0].Shard != "s2" || rep.ShardsFailed[0].Error == "" {
		t.Fatalf("partial %v, failed %+v: want partial with s2 failed and its error", rep.Partial, rep.ShardsFailed)
	}
	if rep.Readings != 20 || rep.Turbines.Measured != 2 || rep.LagMS == nil || rep.LagMS.Max != 10_000 {
		t.Fatalf("readings %d from %d turbines (max lag %+v), want 20 from 2 (AP-001, AP-250), max 10000 ms", rep.Readings, rep.Turbines.Measured, rep.LagMS)
	}
	if got := []string{rep.Turbines.Worst[0].ID, rep.Turbines.Worst[1].ID}; !slices.Equal(got, []string{"AP-001", "AP-250"}) {
		t.Fatalf("turbines named %v, want AP-001 and AP-250", got)
	}
	var b strings.Builder
	testdb.Must(t, rep.WriteText(&b), "write text")
	if !strings.Contains(b.String(), "PARTIAL: 1 of 3 shard(s) did not answer") || !strings.Contains(b.String(), "shard s2: ") {
		t.Fatalf("text output does not say it is partial and name s2:\n%s", b.String())
	}
	if !strings.Contains(rep.RecommendationReason, "PARTIAL: without shard(s) s2") {
		t.Fatalf("recommendation reason %q does not say it lacks s2", rep.RecommendationReason)
	}
}

// TestMeasureShardTimeout: a shard that does not answer within its timeout
// (its readings table locked) is named with the timeout, within seconds,
// while the other two are reported (20 of the 30 readings).
func TestMeasureShardTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, from, to := partialSetup(t)
	tx, err := env.Shards.Pool("s3").Begin(ctx)
	testdb.Must(t, err, "begin")
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `LOCK TABLE readings IN ACCESS EXCLUSIVE MODE`)
	testdb.Must(t, err, "lock s3 readings")

	start := time.Now()
	rep, err := (&lateness.Measurer{Control: env.Control, Shards: env.Shards, ShardTimeout: 2 * time.Second}).Measure(ctx, "ardnave-point", from, to)
	testdb.Must(t, err, "measure")
	const hang = 30 * time.Second // normal 2.1 s (the shard timeout); 30 s catches a hang
	if took := time.Since(start); took > hang {
		t.Fatalf("measure took %s with a 2 s shard timeout: it hung", took)
	}
	if !rep.Partial || len(rep.ShardsFailed) != 1 || rep.ShardsFailed[0].Shard != "s3" || !strings.Contains(rep.ShardsFailed[0].Error, "no answer within 2s") {
		t.Fatalf("partial %v, failed %+v: want s3 failed with \"no answer within 2s\"", rep.Partial, rep.ShardsFailed)
	}
	if rep.Readings != 20 || rep.Turbines.Measured != 2 {
		t.Fatalf("readings %d from %d turbines, want 20 from 2 (s1, s2)", rep.Readings, rep.Turbines.Measured)
	}
}

// TestMeasureDayBoundsAndErrors: a YYYY-MM-DD bound is that farm-local
// day's start as the control database computes it, across a clock change
// (29 March 2026 in London is 23 hours); bad input is an error naming it.
func TestMeasureDayBoundsAndErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		testdb.Must(t, err, "parse")
		return v
	}
	var rows []handBuilt
	for _, s := range []string{
		"2026-03-28T23:30:00Z", // 28 March 23:30 GMT
		"2026-03-29T00:30:00Z", // 29 March 00:30 GMT
		"2026-03-29T22:30:00Z", // 29 March 23:30 BST
		"2026-03-29T23:30:00Z", // 30 March 00:30 BST
	} {
		rows = append(rows, handBuilt{"AP-001", at(s), at(s).Add(time.Second)})
	}
	loadHandBuilt(t, env, at("2026-04-01T00:00:00Z"), rows)
	m := &lateness.Measurer{Control: env.Control, Shards: env.Shards}
	bound := func(name, text string) lateness.Bound {
		b, err := lateness.ParseBound(name, text)
		testdb.Must(t, err, "bound")
		return b
	}

	rep, err := m.Measure(ctx, "ardnave-point", bound("--from", "2026-03-29"), bound("--to", "2026-03-30"))
	testdb.Must(t, err, "measure the day")
	if !rep.From.Equal(at("2026-03-29T00:00:00Z")) || !rep.To.Equal(at("2026-03-29T23:00:00Z")) || rep.Readings != 2 {
		t.Fatalf("29 March: [%s, %s) with %d readings, want [2026-03-29T00:00Z, 2026-03-29T23:00Z) with 2",
			rep.From.UTC().Format(time.RFC3339), rep.To.UTC().Format(time.RFC3339), rep.Readings)
	}
	rep, err = m.Measure(ctx, "ardnave-point", bound("--from", "2026-03-29T00:30:00Z"), bound("--to", "2026-03-30"))
	testdb.Must(t, err, "measure instant to day")
	if rep.Readings != 2 {
		t.Fatalf("[00:30Z, 30 March start): %d readings, want 2 (both ends inclusive-exclusive)", rep.Readings)
	}
	rep, err = m.Measure(ctx, "ardnave-point", bound("--from", "2026-03-01"), bound("--to", "2026-03-02"))
	testdb.Must(t, err, "measure an empty day")
	if rep.Readings != 0 || rep.LagMS != nil || rep.RecommendedAllowedLatenessS != nil || rep.Turbines.Measured != 0 {
		t.Fatalf("empty day: %d readings, lag %v, recommendation %v, %d turbines: want 0, none, none, 0",
			rep.Readings, rep.LagMS, rep.RecommendedAllowedLatenessS, rep.Turbines.Measured)
	}

	if _, err := m.Measure(ctx, "nowhere-point", bound("--from", "2026-03-29"), bound("--to", "2026-03-30")); !errors.Is(err, lateness.ErrUnknownFarm) || !strings.Contains(err.Error(), `"nowhere-point"`) {
		t.Fatalf("unknown farm: %v, want ErrUnknownFarm naming it", err)
	}
	if _, err := m.Measure(ctx, "ardnave-point", bound("--from", "2026-03-30"), bound("--to", "2026-03-29T23:00:00Z")); !errors.Is(err, lateness.ErrEmptyRange) ||
		!strings.Contains(err.Error(), "--to 2026-03-29T23:00:00Z") || !strings.Contains(err.Error(), "--from 2026-03-30") {
		t.Fatalf("--to at --from: %v, want ErrEmptyRange naming both", err)
	}
	for _, c := range []struct{ name, text, want string }{
		{"--from", "2026-13-01", `--from "2026-13-01" is neither`},
		{"--to", "yesterday", `--to "yesterday" is neither`},
		{"--to", "", "--to is required"},
		{"--from", "2026-08-01 10:00", `--from "2026-08-01 10:00" is neither`},
	} {
		if _, err := lateness.ParseBound(c.name, c.text); !errors.Is(err, lateness.ErrBadBound) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseBound(%s, %q) = %v, want an error containing %q", c.name, c.text, err, c.want)
		}
	}
}
