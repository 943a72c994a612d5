package report_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// One farm in Europe/London over two shards, one reading an hour (so a
// month is about 2,000 readings) and 1-hour windows: N-001 and N-002 on s1,
// N-003 on s2 from 16 October (local midnight). October 2026 has the 25-hour
// day: 25 October, when the clocks go back; March 2026 the 23-hour day, 29
// March. Farm east has one turbine, E-1 on s2, in service from 29 October.
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
  - id: east
    name: East
    timezone: Europe/London
    cadence_seconds: 3600
    rules: {window: 1h}
    turbines:
      - {id: E-1, shard: s2, commissioned_at: 2026-10-29T00:00:00Z}
`

var london = mustZone("Europe/London")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// bundle is the pipeline harness whose River client only enqueues (a
// request stays pending until runJobs works it).
type bundle struct{ *pipelinetest.Pipeline }

func setup(t *testing.T, now time.Time) *bundle {
	t.Helper()
	return &bundle{pipelinetest.New(t, testdb.New(t, fleetYAML), pipelinetest.Options{At: now, NoStart: true})}
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
	sum, err := b.In.Ingest(context.Background(), "test", dec)
	testdb.Must(t, err, "ingest")
	if sum.Rejected != 0 || sum.Failed != 0 || sum.Duplicate != 0 {
		t.Fatalf("ingest %s: %+v, want every reading accepted", day.Format(time.DateOnly), sum)
	}
}

func (b *bundle) month(t *testing.T, month string) report.Month {
	t.Helper()
	return b.farmMonth(t, "north", month)
}

func (b *bundle) farmMonth(t *testing.T, farm, month string) report.Month {
	t.Helper()
	m, err := report.MonthlyAt(context.Background(), b.Env.Control, farm, month, b.Clock.Now())
	testdb.Must(t, err, "report %s %s", farm, month)
	return m
}

// drainSettling drains as the periodic drain does: a burst of marks is
// left on its shard until it settles.
func (b *bundle) drainSettling(t *testing.T) {
	t.Helper()
	_, err := b.Drainer.Drain(context.Background(), jobs.RollupDayEnqueue(b.Client))
	testdb.Must(t, err, "drain")
}

// text reads one text value from the control database.
func (b *bundle) text(t *testing.T, sql string, args ...any) string {
	t.Helper()
	var s string
	testdb.Must(t, b.Env.Control.QueryRow(context.Background(), sql, args...).Scan(&s), "%s", sql)
	return s
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
	const why7 = "information unavailable (3 of 48 slots without a reading, 6.25 %, over the farm's 10 ‰; until the readings arrive or the day is accepted: orchestrator day accept)"
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
	// Every day is final but 7 October: 3 of its 48 slots have no reading
	// (62.5 ‰, over the farm's 10 ‰), so it is incomplete, and the month
	// with it.
	b.RunJobs(t)
	m = b.month(t, "2026-10")
	if m.Status != report.StatusIncomplete || len(m.HeldBack) != 1 || m.HeldBack[0] != (report.HeldBack{Day: "2026-10-07", Reason: why7}) ||
		m.Days[6].Status != report.StatusIncomplete || m.Days[5].Status != report.StatusFinal || m.Total.Why != "information unavailable: 2026-10-07" {
		t.Fatalf("after the rollup: %s, held back %s (%s), 7 October %s; want incomplete, held back by 7 October only (%s)", m.Status, heldBack(m), m.Total.Why, m.Days[6].Status, why7)
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
		!d.ComputedAt.Equal(b.Clock.Now()) || !d.CompleteThrough.Equal(b.Clock.Now()) {
		t.Fatalf("1 October: %+v; want turbine_day, final, 2 of 2 turbines, computed and complete through %s", d, b.Clock.Now())
	}

	// 31 October rolled up again 90 s after it ended (it closed at its end
	// + the allowed lateness, 60 s), then the farm's allowed lateness raised
	// to an hour: the day stays final, since each row records when its day
	// counted as closed when it was written (turbine_day.closed_at). Judged
	// against today's lateness, it would read "rolled up before the day
	// closed (computed 2026-11-01 00:01:30 UTC, closed 2026-11-01 01:00:00 UTC)".
	b.Clock.Set(time.Date(2026, 11, 1, 0, 1, 30, 0, time.UTC))
	_, err := jobs.EnqueueFarmDay(context.Background(), b.Env.Control, b.Client, "north", "2026-10-31", rollup.ReasonManual, jobs.PriorityManual)
	testdb.Must(t, err, "enqueue")
	b.RunJobs(t)
	b.Clock.Set(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	testdb.Exec(t, b.Env.Control, `UPDATE farm SET allowed_lateness_s = 3600 WHERE id = 'north'`)
	if m = b.month(t, "2026-10"); m.Status != report.StatusIncomplete || len(m.HeldBack) != 1 || m.Days[30].Status != report.StatusFinal ||
		!m.Days[30].ComputedAt.Equal(time.Date(2026, 11, 1, 0, 1, 30, 0, time.UTC)) {
		t.Fatalf("after raising the allowed lateness: %s, held back %s, 31 October computed %v; want incomplete (7 October only), 31 October final, computed 2026-11-01 00:01:30",
			m.Status, heldBack(m), m.Days[30].ComputedAt)
	}
	if got := b.text(t, `SELECT min(closed_at)::text FROM turbine_day WHERE farm_id = 'north' AND day = '2026-10-31'`); got != "2026-11-01 00:01:00+00" {
		t.Errorf("31 October's closed_at: %s, want 2026-11-01 00:01:00+00 (its end + the 60 s then in force)", got)
	}
	testdb.Exec(t, b.Env.Control, `UPDATE farm SET allowed_lateness_s = NULL WHERE id = 'north'`)

	// The replay of 7 October's silent hours, on 5 November at 10:00:05,
	// after a drain at 10:00:00. Its mark is on the shard, announced on the
	// control database before it committed (dirty_mark_announced); judged
	// in that same second, no drain has read it: 7 October is held back and
	// pending, by the report and by the windows as shown (provenance_pending),
	// and no other day is.
	b.Clock.Set(time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC))
	b.DrainNow(t)
	if m = b.month(t, "2026-10"); m.Status != report.StatusIncomplete {
		t.Fatalf("drained at 10:00:00: %s (%s), want incomplete (7 October)", m.Status, heldBack(m))
	}
	b.Clock.Set(time.Date(2026, 11, 5, 10, 0, 5, 0, time.UTC))
	b.readings(t, time.Date(2026, 10, 7, 0, 0, 0, 0, london), 10, 13, available, b.Clock.Now(), "N-001")
	m = b.month(t, "2026-10")
	if m.Status != report.StatusProvisional || len(m.HeldBack) != 1 ||
		m.HeldBack[0] != (report.HeldBack{Day: "2026-10-07", Reason: "shard not drained (marked on s1 at 2026-11-05 10:00:05 UTC, not drained yet)"}) ||
		m.Total.Why != "shard not drained: 2026-10-07" || !m.Days[6].Pending || !m.Total.Pending || m.Days[5].Pending {
		t.Fatalf("marks not yet drained: %s, held back %s (%s), 7 October pending %v; want provisional, 7 October held back (shard not drained) and pending",
			m.Status, heldBack(m), m.Total.Why, m.Days[6].Pending)
	}
	if got := counts(m.Days[6]); got != "48/45/21 0.4375 0.9375" {
		t.Fatalf("7 October before the drain %s, want the numbers as they were", got)
	}
	if got := b.text(t, `SELECT provenance_pending('north', '2026-10-07')::text`); got != "true" {
		t.Errorf("provenance_pending (day_provenance, window_provenance) of 7 October before the drain: %s, want true", got)
	}
	// The periodic drain reads the mark but lets the burst settle (written
	// at 10:00:05, quiet for under 10 s at 10:00:06): it stays on the shard,
	// and the control database records it as settling. Only its day is
	// held back now.
	b.Clock.Set(time.Date(2026, 11, 5, 10, 0, 6, 0, time.UTC))
	b.drainSettling(t)
	m = b.month(t, "2026-10")
	if m.Status != report.StatusProvisional || len(m.HeldBack) != 1 ||
		m.HeldBack[0] != (report.HeldBack{Day: "2026-10-07", Reason: "readings arrived after the rollup (marked on s1 at 2026-11-05 10:00:05 UTC, settling)"}) ||
		!m.Days[6].Pending || m.Days[5].Pending {
		t.Fatalf("mark settling: %s, held back %s, 7 October pending %v; want provisional, held back by 7 October only", m.Status, heldBack(m), m.Days[6].Pending)
	}
	// Drained: the request waits for its job, and names the day and why.
	b.Clock.Set(time.Date(2026, 11, 5, 10, 0, 20, 0, time.UTC))
	b.DrainNow(t)
	m = b.month(t, "2026-10")
	if m.Status != report.StatusProvisional || len(m.HeldBack) != 1 ||
		m.HeldBack[0] != (report.HeldBack{Day: "2026-10-07", Reason: "readings arrived after the rollup (recompute requested 2026-11-05 10:00:20 UTC)"}) ||
		m.Total.Why != "readings arrived after the rollup: 2026-10-07" || !m.Days[6].Pending || !m.Total.Pending || m.Days[5].Pending {
		t.Fatalf("after the drain: %s, held back %s (%s), 7 October pending %v; want provisional, held back by 7 October only",
			m.Status, heldBack(m), m.Total.Why, m.Days[6].Pending)
	}
	if got := counts(m.Total); got != "1875/1872/1512 0.8064 0.9984" {
		t.Fatalf("total while the recompute waits %s, want the numbers as they were", got)
	}
	// Its job runs: final, with the replayed hours.
	b.RunJobs(t)
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
	_, err = jobs.EnqueueFarmDay(context.Background(), b.Env.Control, b.Client, "north", "2026-10-20", rollup.ReasonManual, jobs.PriorityManual)
	testdb.Must(t, err, "enqueue")
	if m = b.month(t, "2026-10"); heldBack(m) != "2026-10-20: recompute pending" || !m.Days[19].Pending {
		t.Fatalf("with a job queued for 20 October: held back %s, want 2026-10-20: recompute pending", heldBack(m))
	}
	b.RunJobs(t)
	if m = b.month(t, "2026-10"); m.Status != report.StatusFinal {
		t.Fatalf("after the manual recompute: %s (%s), want final", m.Status, heldBack(m))
	}

	// Judged on 20 October at noon, the days from the 20th have not ended.
	m, err = report.MonthlyAt(context.Background(), b.Env.Control, "north", "2026-10", time.Date(2026, 10, 20, 12, 0, 0, 0, london))
	testdb.Must(t, err, "report on 20 October")
	if len(m.HeldBack) != 12 || m.HeldBack[0] != (report.HeldBack{Day: "2026-10-20", Reason: "not ended"}) ||
		m.Total.Why != "not ended: 2026-10-20..2026-10-31" {
		t.Fatalf("on 20 October: held back %s (%s), want 12 days, 20-31 October not ended", heldBack(m), m.Total.Why)
	}

	// Rows the registry says are short (a shard's rows missing), and rows
	// computed before the day closed (its end + the allowed lateness, 60 s:
	// a reading could still land unmarked), e.g. written when the farm's
	// allowed lateness was shorter. Hand-made from the stored rows.
	testdb.Exec(t, b.Env.Control, `DELETE FROM turbine_day WHERE turbine_id = 'N-002' AND day = '2026-10-12'`)
	testdb.Exec(t, b.Env.Control, `UPDATE turbine_day SET computed_at = '2026-10-11 23:00:30+00' WHERE turbine_id = 'N-001' AND day = '2026-10-11'`)
	m = b.month(t, "2026-10")
	want := "2026-10-11: rolled up before the day closed (computed 2026-10-11 23:00:30 UTC, closed 2026-10-11 23:01:00 UTC) | " +
		"2026-10-12: turbines missing (rolled up 1 of 2)"
	if got := heldBack(m); got != want || m.Total.Why != "turbines missing: 2026-10-12; rolled up before the day closed: 2026-10-11" {
		t.Fatalf("held back %s (%s), want %s", got, m.Total.Why, want)
	}

	// farm_day and farm_month say what the report says, by the same rule
	// (farm_day_status), judged now (the database's clock, weeks after the
	// last drain: nothing was stored since, so that holds nothing back).
	// farm_day.computed_after_day_end once compared with the day's end
	// alone and called 11 October's row (30 s after its end) final.
	const why11 = "rolled up before the day closed (computed 2026-10-11 23:00:30 UTC, closed 2026-10-11 23:01:00 UTC)"
	if got := b.text(t, `SELECT computed_after_day_end::text || ' ' || status || ' ' || why FROM farm_day WHERE farm_id = 'north' AND day = '2026-10-11'`); got != "false provisional "+why11 {
		t.Errorf("farm_day 11 October: %q, want false provisional %s", got, why11)
	}
	if got := b.text(t, `SELECT why FROM report_monthly_availability('north', '2026-10') WHERE day = '2026-10-11'`); got != why11 {
		t.Errorf("the report judged now, 11 October: %q, want %s", got, why11)
	}
	if got := b.text(t, `SELECT turbines_in_service::text || '/' || registered_turbines::text || ' ' || status || ' ' || array_to_string(held_back, ', ') FROM farm_day WHERE farm_id = 'north' AND day = '2026-10-12'`); got != "1/2 provisional turbines missing" {
		t.Errorf("farm_day 12 October: %q, want 1/2 provisional turbines missing", got)
	}
	const monthWhy = "turbines missing: 2026-10-12; rolled up before the day closed: 2026-10-11"
	if got := b.text(t, `SELECT all_turbines_rolled_up::text || ' ' || computed_after_days_end::text || ' ' || status || ' ' || why FROM farm_month WHERE farm_id = 'north' AND month = '2026-10-01'`); got != "false false provisional "+monthWhy {
		t.Errorf("farm_month October: %q, want false false provisional %s", got, monthWhy)
	}
}

// TestADayMissingAFifthOfItsReadingsIsIncompleteUntilAcceptedOrItsDataArrives:
// October for N-001 and N-002 (48 slots a day), with N-001 silent on 3
// October from 00:00 to 10:00 local: 10 of 48 slots without a reading
// (20.83 %). Rolled up and settled, that day is incomplete, and the month
// with it; an operator's acceptance makes it final with who, when and why
// on the report, and holds only while no more slots are missing; the
// readings arriving make it final on its own.
func TestADayMissingAFifthOfItsReadingsIsIncompleteUntilAcceptedOrItsDataArrives(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()
	always := func(string, time.Time) bool { return true }
	third := time.Date(2026, 10, 3, 0, 0, 0, 0, london)
	for d := 1; d <= 31; d++ {
		day := time.Date(2026, 10, d, 0, 0, 0, 0, london)
		if d == 3 {
			b.readings(t, day, 10, 25, always, time.Time{}, "N-001")
			b.readings(t, day, 0, 25, always, time.Time{}, "N-002")
			continue
		}
		ids := []string{"N-001", "N-002"}
		if d >= 16 {
			ids = append(ids, "N-003")
		}
		b.readings(t, day, 0, 25, always, time.Time{}, ids...)
	}
	b.RunJobs(t)
	const why3 = "information unavailable (10 of 48 slots without a reading, 20.83 %, over the farm's 10 ‰; " +
		"until the readings arrive or the day is accepted: orchestrator day accept)"
	m := b.month(t, "2026-10")
	if d := m.Days[2]; m.Status != report.StatusIncomplete || d.Status != report.StatusIncomplete || d.Why != why3 ||
		counts(d) != "48/38/38 0.791667 0.791667" || heldBack(m) != "2026-10-03: "+why3 || m.Total.Why != "information unavailable: 2026-10-03" {
		t.Fatalf("rolled up: month %s (%s), 3 October %s %s (%s); want incomplete, 3 October incomplete 48/38/38 (%s)",
			m.Status, m.Total.Why, d.Status, counts(d), d.Why, why3)
	}
	if got := b.text(t, `SELECT status || ' ' || array_to_string(held_back, ',') FROM farm_day WHERE farm_id = 'north' AND day = '2026-10-03'`); got != "incomplete information unavailable" {
		t.Errorf("farm_day 3 October: %q, want incomplete information unavailable", got)
	}
	if got := b.text(t, `SELECT status FROM farm_month WHERE farm_id = 'north' AND month = '2026-10-01'`); got != "incomplete" {
		t.Errorf("farm_month October: %q, want incomplete", got)
	}

	// Refused: an unknown farm, a final day, a day without its rollup
	// (provisional), and no note.
	for _, c := range []struct {
		farm, day, note string
		want            error
		says            string
	}{
		{"nowhere", "2026-10-03", "x", report.ErrUnknownFarm, `"nowhere"`},
		{"north", "2026-10-04", "x", report.ErrNotIncomplete, "north 2026-10-04 is final (nothing holds it back)"},
		{"north", "2026-11-01", "x", report.ErrNotIncomplete, "north 2026-11-01 is provisional (no rollup)"},
		{"north", "2026-10-03", "  ", nil, "--note"},
	} {
		d, _ := time.Parse(time.DateOnly, c.day)
		_, err := report.Accept(ctx, b.Env.Control, c.farm, localday.DateOf(d), c.note, b.Clock.Now())
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("accept %s %s %q: %v, want %v saying %s", c.farm, c.day, c.note, err, c.want, c.says)
		}
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_day_acceptance`); n != 0 {
		t.Fatalf("%d acceptances after the refusals, want 0", n)
	}

	// Accepted: final, with the note on the day and in the month's why.
	a, err := report.Accept(ctx, b.Env.Control, "north", localday.DateOf(third), "N-001's logger was replaced that morning; nothing recorded", b.Clock.Now())
	testdb.Must(t, err, "accept 3 October")
	if a.Expected != 48 || a.Received != 38 || a.By == "" {
		t.Fatalf("acceptance %+v, want 48 expected, 38 received, by the database user", a)
	}
	note := fmt.Sprintf("accepted with 10 of 48 slots without a reading by %s at %s: N-001's logger was replaced that morning; nothing recorded",
		a.By, a.At.UTC().Format("2006-01-02 15:04:05")+" UTC")
	m = b.month(t, "2026-10")
	if d := m.Days[2]; m.Status != report.StatusFinal || d.Status != report.StatusFinal || d.Why != note || len(m.HeldBack) != 0 ||
		m.Total.Why != note+": 2026-10-03" || counts(d) != "48/38/38 0.791667 0.791667" {
		t.Fatalf("accepted: month %s (%s), 3 October %s (%s); want final, the note %q", m.Status, m.Total.Why, d.Status, d.Why, note)
	}
	if _, err := report.Accept(ctx, b.Env.Control, "north", localday.DateOf(third), "again", b.Clock.Now()); !errors.Is(err, report.ErrNotIncomplete) {
		t.Errorf("accepting a day already accepted: %v, want ErrNotIncomplete", err)
	}

	// The acceptance covers 10 missing slots, not 11 (a reading lost since,
	// here by hand): incomplete again.
	testdb.Exec(t, b.Env.Control, `UPDATE turbine_day SET received = received - 1, available = available - 1 WHERE turbine_id = 'N-002' AND day = '2026-10-03'`)
	if m = b.month(t, "2026-10"); m.Days[2].Status != report.StatusIncomplete || m.Status != report.StatusIncomplete {
		t.Fatalf("11 missing after accepting 10: 3 October %s, month %s; want incomplete", m.Days[2].Status, m.Status)
	}
	testdb.Exec(t, b.Env.Control, `UPDATE turbine_day SET received = received + 1, available = available + 1 WHERE turbine_id = 'N-002' AND day = '2026-10-03'`)

	// The readings arrive (a replay on 5 November): recomputed, the day is
	// final because nothing is missing, and no longer carries the note.
	// Sent in two batches (two transactions announced on s1), not yet
	// drained: provisional, s1 named once.
	b.Clock.Set(time.Date(2026, 11, 5, 10, 0, 0, 0, time.UTC))
	b.readings(t, third, 0, 5, always, b.Clock.Now(), "N-001")
	b.readings(t, third, 5, 10, always, b.Clock.Now(), "N-001")
	if got := heldBack(b.month(t, "2026-10")); !strings.HasPrefix(got, "2026-10-03: shard not drained (marked on s1 at 2026-11-05 10:00:00 UTC, not drained yet)") {
		t.Fatalf("replay not drained: held back %q, want 3 October: shard not drained (marked on s1 at …), s1 once", got)
	}
	b.Clock.Set(time.Date(2026, 11, 5, 10, 0, 20, 0, time.UTC))
	b.DrainNow(t)
	b.RunJobs(t)
	m = b.month(t, "2026-10")
	if d := m.Days[2]; m.Status != report.StatusFinal || d.Status != report.StatusFinal || d.Why != "" || counts(d) != "48/48/48 1 1" {
		t.Fatalf("after the replay: month %s, 3 October %s %s (%s); want final 48/48/48 with nothing to say", m.Status, d.Status, counts(d), d.Why)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_day_acceptance WHERE farm_id = 'north' AND day = '2026-10-03'`); n != 1 {
		t.Errorf("%d acceptances of 3 October kept, want 1 (never deleted)", n)
	}
}

// TestAnAcceptanceNoteIsText: day accept refuses a note that would not
// print as typed (an escape sequence, a C1 control, a bidi override, a
// line break, 120 KB), naming the code point and its byte offset, and so
// does the control database for a row written by hand; a note stored before
// the rule reaches the CSV and Markdown reports with each such character
// written as its code point, never raw. 3 October: N-001 silent 00:00-10:00,
// 10 of 48 slots without a reading, incomplete.
func TestAnAcceptanceNoteIsText(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()
	always := func(string, time.Time) bool { return true }
	third := time.Date(2026, 10, 3, 0, 0, 0, 0, london)
	b.readings(t, third, 10, 25, always, time.Time{}, "N-001")
	b.readings(t, third, 0, 25, always, time.Time{}, "N-002")
	b.RunJobs(t)
	if d := b.month(t, "2026-10").Days[2]; d.Status != report.StatusIncomplete {
		t.Fatalf("3 October %s (%s), want incomplete", d.Status, d.Why)
	}
	for _, c := range []struct{ note, says string }{
		{"logger\x1b[2J replaced", "--note: U+001B at byte 6 is a control character (C0, DEL or C1)"},
		{"logger replaced\u0085", "--note: U+0085 at byte 15 is a control character"},
		{"logger \u202edecalper", "--note: U+202E at byte 7 is a bidi control"},
		{"logger\u200b replaced", "--note: U+200B at byte 6 is a zero-width character"},
		{"logger replaced\nnothing recorded", "--note: U+000A at byte 15 is a tab or line break (operator text is one line)"},
		{strings.Repeat("x", 120<<10), "--note: 122880 bytes; at most 2000"},
	} {
		_, err := report.Accept(ctx, b.Env.Control, "north", localday.DateOf(third), c.note, b.Clock.Now())
		if !errors.Is(err, report.ErrInvalidNote) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("accept with %.40q: %v, want ErrInvalidNote saying %s", c.note, err, c.says)
		}
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_day_acceptance`); n != 0 {
		t.Fatalf("%d acceptances after the refusals, want 0", n)
	}
	const insert = `INSERT INTO farm_day_acceptance (farm_id, day, expected, received, note, accepted_by, accepted_at)
		VALUES ('north', '2026-10-03', 48, 38, $1, $2, '2026-11-01 09:00:00+00')`
	if _, err := b.Env.Control.Exec(ctx, insert, "logger\x1b[2J replaced", "ops"); err == nil || !strings.Contains(err.Error(), "farm_day_acceptance_text") {
		t.Fatalf("INSERT INTO farm_day_acceptance with ESC in its note: %v; want refused by farm_day_acceptance_text", err)
	}

	// A row from before the rule (the constraint is NOT VALID: such rows stay).
	testdb.Exec(t, b.Env.Control, `ALTER TABLE farm_day_acceptance DROP CONSTRAINT IF EXISTS farm_day_acceptance_text`)
	testdb.Exec(t, b.Env.Control, insert, "logger\x1b[2J\x1b[31m replaced\u202e; 3\u0085 hours\tof\nnothing", "ops\u009b")
	m := b.month(t, "2026-10")
	const why = "accepted with 10 of 48 slots without a reading by ops\\u{9B} at 2026-11-01 09:00:00 UTC: logger\\u{1B}[2J\\u{1B}[31m replaced\\u{202E}; "
	for _, c := range []struct {
		f    report.Format
		want string
		n    int
	}{
		{report.FormatCSV, why + "3\\u{85} hours\\u{9}of\\u{A}nothing", 2}, // the day and the month
		{report.FormatMarkdown, why + "3 hours of nothing", 2},
	} {
		var out strings.Builder
		testdb.Must(t, report.Write(&out, m, c.f), "write %s", c.f)
		for i, r := range out.String() {
			if r != '\n' && (r < 0x20 || (0x7f <= r && r <= 0x9f) || r == 0x202e) {
				t.Errorf("%s: %U at byte %d", c.f, r, i)
			}
		}
		if n := strings.Count(out.String(), c.want); n != c.n {
			t.Errorf("%s: the note %d times, want %d:\n%s", c.f, n, c.n, out.String())
		}
	}
}

// TestNoTurbinesInService: a day with no turbine in service has nothing
// expected; it is final once ended, with no numbers, and says why, rather
// than a bare "final" over empty cells. The month total counts the other
// days and is not partial for them. Farm east's only turbine is in
// service from 29 October.
func TestNoTurbinesInService(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	ctx := context.Background()

	m := b.farmMonth(t, "east", "2026-09")
	d := m.Days[0]
	if m.Status != report.StatusFinal || len(m.HeldBack) != 0 || m.Total.Why != "no turbines in service: 2026-09-01..2026-09-30" ||
		m.Total.Expected != nil || m.Total.Source != "" || d.Status != report.StatusFinal || d.Why != "no turbines in service" ||
		d.Expected != nil || d.Source != "" || d.Pending {
		t.Fatalf("September: %s (%s), total %s %q, 1 September %+v; want final, every day saying no turbines in service, no numbers",
			m.Status, m.Total.Why, counts(m.Total), m.Total.Source, d)
	}

	always := func(string, time.Time) bool { return true }
	for day := 29; day <= 31; day++ {
		b.readings(t, time.Date(2026, 10, day, 0, 0, 0, 0, london), 0, 24, always, time.Time{}, "E-1")
	}
	m = b.farmMonth(t, "east", "2026-10")
	if m.Status != report.StatusProvisional || m.Total.Why != "no rollup: 2026-10-29..2026-10-31; no turbines in service: 2026-10-01..2026-10-28" || len(m.HeldBack) != 3 {
		t.Fatalf("October before the rollup: %s (%s), held back %s", m.Status, m.Total.Why, heldBack(m))
	}
	b.RunJobs(t)
	m = b.farmMonth(t, "east", "2026-10")
	if m.Status != report.StatusFinal || len(m.HeldBack) != 0 || m.Total.Why != "no turbines in service: 2026-10-01..2026-10-28" ||
		counts(m.Total) != "72/72/72 1 1" || m.Total.Source != "turbine_day" || m.Total.Path != "final" ||
		m.Days[27].Why != "no turbines in service" || m.Days[27].Expected != nil || m.Days[28].Why != "" || counts(m.Days[28]) != "24/24/24 1 1" {
		t.Fatalf("October: %s (%s), total %s %s/%s, 28 October %+v, 29 October %s %q; want final over 29-31 October (72 slots)",
			m.Status, m.Total.Why, counts(m.Total), m.Total.Source, m.Total.Path, m.Days[27], counts(m.Days[28]), m.Days[28].Why)
	}
	var notes string
	testdb.Must(t, b.Env.Control.QueryRow(ctx, `SELECT status || ' ' || array_to_string(notes, ',') FROM farm_day_status('east', '2026-10-28', '2026-11-02')`).Scan(&notes), "farm_day_status")
	if notes != "final no turbines in service" {
		t.Errorf("farm_day_status of 28 October: %q, want final no turbines in service", notes)
	}
}

// TestSpringForwardDay: 29 March 2026 in Europe/London has 23 hours (the
// clocks go forward at 01:00): 23 slots per turbine at a one-hour cadence,
// 23 one-hour windows, and the report's rates from those counts. N-001
// reports every hour; N-002 every hour but unavailable for the first five.
func TestSpringForwardDay(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC))
	always := func(string, time.Time) bool { return true }
	for _, day := range []int{28, 29} {
		b.readings(t, time.Date(2026, 3, day, 0, 0, 0, 0, london), 0, 25, always, time.Time{}, "N-001")
	}
	b.readings(t, time.Date(2026, 3, 28, 0, 0, 0, 0, london), 0, 24, always, time.Time{}, "N-002")
	b.readings(t, time.Date(2026, 3, 29, 0, 0, 0, 0, london), 0, 5, func(string, time.Time) bool { return false }, time.Time{}, "N-002")
	b.readings(t, time.Date(2026, 3, 29, 0, 0, 0, 0, london), 5, 25, always, time.Time{}, "N-002")
	b.RunJobs(t)

	m := b.month(t, "2026-03")
	sat, sun := m.Days[27], m.Days[28]
	if sat.Day != "2026-03-28" || counts(sat) != "48/48/48 1 1" || sat.Status != report.StatusFinal {
		t.Errorf("28 March: %s %s %s, want 48/48/48 final (two turbines, 24 hours)", sat.Day, counts(sat), sat.Status)
	}
	if sun.Day != "2026-03-29" || counts(sun) != "46/46/41 0.891304 1" || sun.Status != report.StatusFinal || *sun.Turbines != 2 {
		t.Errorf("29 March: %s %s %s, want 46/46/41 0.891304 1 final (two turbines, 23 hours, 5 unavailable)", sun.Day, counts(sun), sun.Status)
	}
	if counts(m.Total) != "94/94/89 0.946809 1" || m.Total.Source != "partial" || m.Total.Path != "partial" ||
		m.Total.Why != "no rollup: 2026-03-01..2026-03-27, 2026-03-30..2026-03-31" {
		t.Errorf("March total %s %s/%s (%s), want 94/94/89 from the two days, partial, the other days no rollup", counts(m.Total), m.Total.Source, m.Total.Path, m.Total.Why)
	}
	if got := b.text(t, `SELECT string_agg(turbine_id || ' ' || expected || '/' || received || '/' || available, ', ' ORDER BY turbine_id) FROM turbine_day WHERE farm_id = 'north' AND day = '2026-03-29'`); got != "N-001 23/23/23, N-002 23/23/18" {
		t.Errorf("turbine_day 29 March: %s, want N-001 23/23/23, N-002 23/23/18", got)
	}
	if got := b.text(t, `SELECT count(*)::text || ' ' || sum(expected)::text FROM farm_window_part WHERE farm_id = 'north' AND day = '2026-03-29' AND shard_name = 's1'`); got != "23 46" {
		t.Errorf("s1's window parts of 29 March: %s, want 23 windows, 46 slots", got)
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
	b.Clock.Set(time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC))
	p := b.Publisher
	p.CatchUp = 24 * time.Hour
	_, err := p.PublishDue(context.Background())
	testdb.Must(t, err, "publish")

	m := b.month(t, "2026-11")
	today := m.Days[29]
	if today.Day != "2026-11-30" || today.Source != "farm_window" || today.Path != "fast" || counts(today) != "36/33/33 0.916667 0.916667" ||
		today.Status != report.StatusProvisional || today.Why != "not ended" || !today.ComputedAt.Equal(b.Clock.Now()) ||
		!today.CompleteThrough.Equal(time.Date(2026, 11, 30, 12, 4, 0, 0, time.UTC)) {
		t.Fatalf("30 November: %+v %s; want the 12 windows published (36 slots, 33 received), fast, not ended", today, counts(today))
	}
	// The fast path caught up on the last 24 hours: 29 November from 13:00
	// is published too (silent: received 0), still without its rollup.
	yesterday := m.Days[28]
	if counts(yesterday) != "33/0/0 0 0" || yesterday.Source != "farm_window" || yesterday.Why != "no rollup" || m.Days[27].Expected != nil {
		t.Fatalf("29 November: %+v %s; want its 11 windows published (33 slots, none received), no rollup", yesterday, counts(yesterday))
	}
	// The total sums the two days with numbers; the other days had
	// turbines in service and have none, so it is partial (it once claimed
	// farm_window/fast as if it covered the month).
	if m.Status != report.StatusProvisional || len(m.HeldBack) != 30 || m.Total.Why != "not ended: 2026-11-30; no rollup: 2026-11-01..2026-11-29" ||
		counts(m.Total) != "69/33/33 0.478261 0.478261" || m.Total.Source != "partial" || m.Total.Path != "partial" {
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
		_, err := report.MonthlyAt(context.Background(), b.Env.Control, tc.farm, tc.month, b.Clock.Now())
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("report %q %q: %v, want %v saying %q", tc.farm, tc.month, err, tc.want, tc.message)
		}
	}
}

// TestADayOfNoSlotsReports: turbine_day rows of 0 expected slots — what a
// rollup writes for a day the fast path published windows of before the
// turbines' commissioning (seen after a first fleet apply in the hour
// after a farm's local midnight: the registry holds the turbines since
// ever, their service starts at the apply). The report, and the status
// page that reads it, used to fail whole with "division by zero" (the
// information-unavailable reason's percentage); the day is final with 0
// slots, its neighbours unaffected.
func TestADayOfNoSlotsReports(t *testing.T) {
	t.Parallel()
	b := setup(t, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	// east's E-1, rolled up on 30 September by a job that found windows
	// and no slot
	testdb.Exec(t, b.Env.Control, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early,
		computed_at, closed_at) VALUES ('E-1', '2026-09-30', 'east', 's2', 0, 0, 0, 0, 0, '2026-10-01 02:00+00', '2026-10-01 00:01+00')`)
	m := b.farmMonth(t, "east", "2026-09")
	d := m.Days[29]
	if d.Day != "2026-09-30" || d.Status != report.StatusFinal || d.Expected == nil || *d.Expected != 0 || m.Days[28].Status != report.StatusFinal {
		t.Fatalf("30 September: %s %s, expected %v (29th %s); want final with 0 expected slots", d.Day, d.Status, d.Expected, m.Days[28].Status)
	}
}
