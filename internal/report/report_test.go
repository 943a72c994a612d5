package report_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/fastpath"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// One farm in Europe/London over two shards, one reading an hour (so a
// month is about 2,000 readings) and 1-hour windows: N-001 and N-002 on s1,
// N-003 on s2 from 16 October (local midnight). October 2026 has the 25-hour
// day: 25 October, when the clocks go back.
const fleetYAML = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: north
    name: North
    timezone: Europe/London
    cadence_seconds: 3600
    rules: {window: 1h}
    turbines:
      - {prefix: N-, from: 1, to: 2, shard: s1}
      - {id: N-003, shard: s2, commissioned_at: 2026-10-15T23:00:00Z}
`

var london = mustZone("Europe/London")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

type bundle struct {
	env   *testdb.Env
	clock *clock
	in    *ingest.Ingestor
	cfg   jobs.Config
	deps  jobs.Deps
	// inserter enqueues and drains but never works a job, so a request
	// stays pending until runJobs.
	inserter *river.Client[pgx.Tx]
}

func setup(t *testing.T, now time.Time) *bundle {
	t.Helper()
	ctx := context.Background()
	env := testdb.New(t, fleetYAML)
	b := &bundle{env: env, clock: &clock{now: now}}
	routes, err := ingest.LoadRoutes(ctx, env.Control, now, 0)
	testdb.Must(t, err, "routes")
	b.in = ingest.New(ingest.DefaultConfig(), env.Control, env.Shards, routes, b.clock.Now, nil)
	b.in.Start(ctx)
	t.Cleanup(b.in.Close)
	computer := &rollup.Computer{Control: env.Control, Shards: env.Shards, Now: b.clock.Now}
	drainer := &jobs.Drainer{Control: env.Control, Shards: env.Shards, Now: b.clock.Now}
	b.cfg = jobs.DefaultConfig()
	b.cfg.Periodic = false
	b.deps = jobs.Deps{Control: env.Control, Shards: env.Shards, Computer: computer, Drainer: drainer, Now: b.clock.Now}
	b.inserter, err = jobs.NewClient(ctx, b.cfg, b.deps)
	testdb.Must(t, err, "river client")
	return b
}

// runJobs works every job until nothing is left: marks drained, requests
// and queued jobs run (jobs.WaitIdle).
func (b *bundle) runJobs(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := jobs.NewClient(ctx, b.cfg, b.deps)
	testdb.Must(t, err, "river client")
	testdb.Must(t, c.Start(ctx), "start river")
	defer func() { _ = c.Stop(context.WithoutCancel(ctx)) }()
	testdb.Must(t, jobs.WaitIdle(ctx, c, b.env.Control, b.env.Shards), "wait idle")
}

func (b *bundle) drain(t *testing.T) {
	t.Helper()
	_, err := b.deps.Drainer.DrainImmediate(context.Background(), b.inserter)
	testdb.Must(t, err, "drain")
}

// readings ingests one reading per turbine and hour [from, to) of the
// farm-local day, recorded 5 s into the hour, received 2 s later (or at
// receivedAt when given: a replay).
func (b *bundle) readings(t *testing.T, day time.Time, from, to int, available func(turbine string, day time.Time) bool, receivedAt time.Time, turbines ...string) {
	t.Helper()
	var text strings.Builder
	start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, london)
	end := start.AddDate(0, 0, 1)
	for h := from; h < to; h++ {
		rec := start.Add(time.Duration(h)*time.Hour + 5*time.Second)
		if !rec.Before(end) {
			break
		}
		recv := rec.Add(2 * time.Second)
		if !receivedAt.IsZero() {
			recv = receivedAt
		}
		for _, id := range turbines {
			fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":1,"wind_ms":5}`+"\n",
				id, rec.UTC().Format(time.RFC3339), recv.UTC().Format(time.RFC3339), available(id, day))
		}
	}
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(text.String()))
	testdb.Must(t, err, "decoder")
	sum, err := b.in.Ingest(context.Background(), "test", dec)
	testdb.Must(t, err, "ingest")
	if sum.Rejected != 0 || sum.Failed != 0 || sum.Duplicate != 0 {
		t.Fatalf("ingest %s: %+v, want every reading accepted", day.Format(time.DateOnly), sum)
	}
}

func (b *bundle) month(t *testing.T, month string) report.Month {
	t.Helper()
	m, err := report.MonthlyAt(context.Background(), b.env.Control, "north", month, b.clock.Now())
	testdb.Must(t, err, "report %s", month)
	return m
}

func val[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// counts is "expected/received/available availability completeness" of a row.
func counts(d report.Day) string {
	return fmt.Sprintf("%v/%v/%v %v %v", val(d.Expected), val(d.Received), val(d.Available), val(d.Availability), val(d.Completeness))
}

func heldBack(m report.Month) string {
	var s []string
	for _, h := range m.HeldBack {
		s = append(s, h.Day+": "+h.Reason)
	}
	return strings.Join(s, " | ")
}

// TestMonthIsFinalOnlyOnceEveryDayIsRolledUpAfterItsReadings is the rule
// of the report through the real pipeline (ingest, dirty marks, the drain,
// River rollup_day jobs), and the month total from summed counts.
//
// October: N-001 always available; N-002 unavailable 1-15 October; N-003
// from 16 October, available; N-001 silent on 7 October 10:00-13:00 until
// a replay on 5 November. Expected: 48 a day to the 15th, 72 from the
// 16th, 75 on the 25-hour 25 October: 1875.
func TestMonthIsFinalOnlyOnceEveryDayIsRolledUpAfterItsReadings(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	available := func(id string, day time.Time) bool { return !(id == "N-002" && day.Day() <= 15) }
	for d := 1; d <= 31; d++ {
		day := time.Date(2026, 10, d, 0, 0, 0, 0, london)
		ids := []string{"N-001", "N-002"}
		if d >= 16 {
			ids = append(ids, "N-003")
		}
		if d == 7 {
			b.readings(t, day, 0, 10, available, time.Time{}, "N-001")
			b.readings(t, day, 13, 24, available, time.Time{}, "N-001")
			ids = ids[1:]
		}
		b.readings(t, day, 0, 25, available, time.Time{}, ids...)
	}

	// Stored, not rolled up: every ended day is held back, and the month
	// says so in one line.
	m := b.month(t, "2026-10")
	if m.Status != report.StatusProvisional || len(m.Days) != 31 || len(m.HeldBack) != 31 || m.HeldBack[0].Reason != "no rollup" ||
		m.Total.Why != "no rollup: 2026-10-01..2026-10-31" || m.Total.Expected != nil {
		t.Fatalf("before any rollup: %s, %d days, held back %s, total %s (%s); want provisional, 31 days each held back by no rollup, no counts",
			m.Status, len(m.Days), heldBack(m), counts(m.Total), m.Total.Why)
	}

	// The drain turns the load's marks into rollup_day jobs; once they have
	// run, every day is rolled up after it closed and nothing is pending.
	b.runJobs(t)
	m = b.month(t, "2026-10")
	if m.Status != report.StatusFinal || len(m.HeldBack) != 0 || m.Total.Status != report.StatusFinal || m.Total.Why != "" {
		t.Fatalf("after the rollup: %s, held back %s (%s); want final", m.Status, heldBack(m), m.Total.Why)
	}
	if got := counts(m.Total); got != "1875/1872/1512 0.8064 0.9984" {
		t.Fatalf("October total %s, want 1875/1872/1512 0.8064 0.9984", got)
	}
	if got := counts(m.Days[6]); got != "48/45/21 0.4375 0.9375" {
		t.Fatalf("7 October %s, want 48/45/21 (N-001 silent 3 hours)", got)
	}
	if got := counts(m.Days[24]); m.Days[24].Day != "2026-10-25" || got != "75/75/75 1 1" {
		t.Fatalf("%s %s, want 2026-10-25 75/75/75 (a 25-hour day, three turbines)", m.Days[24].Day, got)
	}
	d := m.Days[0]
	if d.Source != "turbine_day" || d.Path != "final" || d.Pending || *d.Turbines != 2 || *d.RegisteredTurbines != 2 ||
		!d.ComputedAt.Equal(b.clock.Now()) || !d.CompleteThrough.Equal(b.clock.Now()) {
		t.Fatalf("1 October: %+v; want turbine_day, final, 2 of 2 turbines, computed and complete through %s", d, b.clock.Now())
	}

	// The replay of 7 October's silent hours, on 5 November. Until the
	// drain carries its marks to the control database, the report cannot
	// see them (they are on the shard; the drain runs every 5 s and
	// settles a burst within a minute): the documented limit.
	b.clock.Set(time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC))
	b.readings(t, time.Date(2026, 10, 7, 0, 0, 0, 0, london), 10, 13, available, b.clock.Now(), "N-001")
	if m = b.month(t, "2026-10"); m.Status != report.StatusFinal {
		t.Fatalf("marks not yet drained: %s (%s), want final (the control database does not see a shard's marks)", m.Status, heldBack(m))
	}
	// Drained: the request waits for its job, and names the day and why.
	b.drain(t)
	m = b.month(t, "2026-10")
	if m.Status != report.StatusProvisional || len(m.HeldBack) != 1 ||
		m.HeldBack[0] != (report.HeldBack{Day: "2026-10-07", Reason: "readings arrived after the rollup (recompute requested 2026-11-05 10:00:00 UTC)"}) ||
		m.Total.Why != "readings arrived after the rollup: 2026-10-07" || !m.Days[6].Pending || !m.Total.Pending || m.Days[5].Pending {
		t.Fatalf("after the drain: %s, held back %s (%s), 7 October pending %v; want provisional, held back by 7 October only",
			m.Status, heldBack(m), m.Total.Why, m.Days[6].Pending)
	}
	if got := counts(m.Total); got != "1875/1872/1512 0.8064 0.9984" {
		t.Fatalf("total while the recompute waits %s, want the numbers as they were", got)
	}
	// Its job runs: final, with the replayed hours.
	b.runJobs(t)
	m = b.month(t, "2026-10")
	if m.Status != report.StatusFinal || len(m.HeldBack) != 0 || m.Days[6].Pending {
		t.Fatalf("after the recompute: %s, held back %s; want final", m.Status, heldBack(m))
	}
	if got := counts(m.Total); got != "1875/1875/1515 0.808 1" {
		t.Fatalf("October total %s, want 1875/1875/1515 0.808 1", got)
	}

	// The total is available / expected over the month (1515 / 1875 =
	// 80.80 %), not the mean of the daily rates: fifteen days at 50 % over
	// 48 slots and sixteen at 100 % over 72 or 75 average 23.5 / 31 =
	// 75.81 %.
	var sum float64
	for _, d := range m.Days {
		sum += *d.Availability
	}
	mean := sum / float64(len(m.Days))
	if *m.Total.Availability != 0.808 || math.Abs(mean-0.758065) > 5e-7 {
		t.Fatalf("total availability %v and mean of the days %.6f, want 0.808000 from the summed counts (the mean would be 0.758065)",
			*m.Total.Availability, mean)
	}

	// A rollup_day job queued for a day (here a manual one) holds it back
	// until it has run.
	_, err := jobs.EnqueueFarmDay(context.Background(), b.env.Control, b.inserter, "north", "2026-10-20", rollup.ReasonManual, jobs.PriorityManual)
	testdb.Must(t, err, "enqueue")
	if m = b.month(t, "2026-10"); heldBack(m) != "2026-10-20: recompute pending" || !m.Days[19].Pending {
		t.Fatalf("with a job queued for 20 October: held back %s, want 2026-10-20: recompute pending", heldBack(m))
	}
	b.runJobs(t)
	if m = b.month(t, "2026-10"); m.Status != report.StatusFinal {
		t.Fatalf("after the manual recompute: %s (%s), want final", m.Status, heldBack(m))
	}

	// Judged on 20 October at noon, the days from the 20th have not ended.
	m, err = report.MonthlyAt(context.Background(), b.env.Control, "north", "2026-10", time.Date(2026, 10, 20, 12, 0, 0, 0, london))
	testdb.Must(t, err, "report on 20 October")
	if len(m.HeldBack) != 12 || m.HeldBack[0] != (report.HeldBack{Day: "2026-10-20", Reason: "not ended"}) ||
		m.Total.Why != "not ended: 2026-10-20..2026-10-31" {
		t.Fatalf("on 20 October: held back %s (%s), want 12 days, 20-31 October not ended", heldBack(m), m.Total.Why)
	}

	// Rows the registry says are short (a shard's rows missing), and rows
	// computed before the day closed (its end + the allowed lateness, 60 s:
	// a reading could still land unmarked), e.g. written when the farm's
	// allowed lateness was shorter. Hand-made from the stored rows.
	testdb.Exec(t, b.env.Control, `DELETE FROM turbine_day WHERE turbine_id = 'N-002' AND day = '2026-10-12'`)
	testdb.Exec(t, b.env.Control, `UPDATE turbine_day SET computed_at = '2026-10-11 23:00:30+00' WHERE turbine_id = 'N-001' AND day = '2026-10-11'`)
	m = b.month(t, "2026-10")
	want := "2026-10-11: rolled up before the day closed (computed 2026-10-11 23:00:30 UTC, closed 2026-10-11 23:01:00 UTC) | " +
		"2026-10-12: turbines missing (rolled up 1 of 2)"
	if got := heldBack(m); got != want || m.Total.Why != "turbines missing: 2026-10-12; rolled up before the day closed: 2026-10-11" {
		t.Fatalf("held back %s (%s), want %s", got, m.Total.Why, want)
	}
}

// TestMonthInProgress: a day in progress shows the sum of the windows the
// fast path has published (path fast), ended days without rows are "no
// rollup", and bad input is an error naming what was wrong.
func TestMonthInProgress(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 11, 30, 11, 30, 0, 0, time.UTC))
	always := func(string, time.Time) bool { return true }
	b.readings(t, time.Date(2026, 11, 30, 0, 0, 0, 0, london), 0, 11, always, time.Time{}, "N-001", "N-002", "N-003")
	// At 12:05 the windows up to 12:00 are past the watermark (end + 60 s).
	b.clock.Set(time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC))
	p := &fastpath.Publisher{Control: b.env.Control, Shards: b.env.Shards, Now: b.clock.Now, CatchUp: 24 * time.Hour}
	_, err := p.PublishDue(context.Background())
	testdb.Must(t, err, "publish")

	m := b.month(t, "2026-11")
	today := m.Days[29]
	if today.Day != "2026-11-30" || today.Source != "farm_window" || today.Path != "fast" || counts(today) != "36/33/33 0.916667 0.916667" ||
		today.Status != report.StatusProvisional || today.Why != "not ended" || !today.ComputedAt.Equal(b.clock.Now()) ||
		!today.CompleteThrough.Equal(time.Date(2026, 11, 30, 12, 4, 0, 0, time.UTC)) {
		t.Fatalf("30 November: %+v %s; want the 12 windows published (36 slots, 33 received), fast, not ended", today, counts(today))
	}
	// The fast path caught up on the last 24 hours: 29 November from 13:00
	// is published too (silent: received 0), still without its rollup.
	yesterday := m.Days[28]
	if counts(yesterday) != "33/0/0 0 0" || yesterday.Source != "farm_window" || yesterday.Why != "no rollup" || m.Days[27].Expected != nil {
		t.Fatalf("29 November: %+v %s; want its 11 windows published (33 slots, none received), no rollup", yesterday, counts(yesterday))
	}
	if m.Status != report.StatusProvisional || len(m.HeldBack) != 30 || m.Total.Why != "not ended: 2026-11-30; no rollup: 2026-11-01..2026-11-29" ||
		counts(m.Total) != "69/33/33 0.478261 0.478261" || m.Total.Source != "farm_window" || m.Total.Path != "fast" {
		t.Fatalf("November: %s, %d held back (%s), total %s %s/%s", m.Status, len(m.HeldBack), m.Total.Why, counts(m.Total), m.Total.Source, m.Total.Path)
	}

	for _, tc := range []struct {
		farm, month string
		want        error
		message     string
	}{
		{"nope", "2026-11", report.ErrUnknownFarm, `farm "nope": no such farm (SELECT id FROM farm lists them)`},
		{"", "2026-11", report.ErrUnknownFarm, "farm: none given"},
		{"\xff", "2026-11", report.ErrUnknownFarm, `farm "\xff": no such farm`},
		{"no\x00rth", "2026-11", report.ErrUnknownFarm, `no such farm`},
		{"north", "2026-13", report.ErrBadMonth, `month "2026-13": want a calendar month as YYYY-MM, e.g. 2026-08`},
		{"north", "2026-8", report.ErrBadMonth, `month "2026-8"`},
		{"north", "2026-11-01", report.ErrBadMonth, `month "2026-11-01"`},
		{"north", "", report.ErrBadMonth, `month ""`},
		{"north", "\xff\xfe", report.ErrBadMonth, `want a calendar month`},
	} {
		_, err := report.MonthlyAt(context.Background(), b.env.Control, tc.farm, tc.month, b.clock.Now())
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("report %q %q: %v, want %v saying %q", tc.farm, tc.month, err, tc.want, tc.message)
		}
	}
}
