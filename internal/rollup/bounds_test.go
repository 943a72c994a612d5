package rollup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// extremeFleet is a farm at every ceiling a rule may reach: power bounds
// ±100,000 kW (fleet.MaxPowerKW), wind 200 m/s (fleet.MaxWindMS), a model
// whose curve is 100,000 kW from 0 to 29.99 m/s (a curve's ceiling too),
// the longest window (24 h, the largest per-window sums), and a 2 s cadence:
// the day's slots times the cadence is its whole 25 h, the most energy a
// turbine-day can hold at any cadence.
const extremeFleet = `
shards: [{name: s1}]
models:
  - name: X100
    curve: [[0, 100000], [29.99, 100000]]
farms:
  - id: extreme
    timezone: Europe/London
    cadence_seconds: 2
    commissioned_at: 2026-10-01T00:00:00Z
    model: X100
    rules: {window: 24h, power_min_kw: -100000, power_max_kw: 100000, wind_max_ms: 200}
    turbines: [{prefix: X-, from: 1, to: 4, shard: s1}]
`

// TestTheExtremesTheBoundsAllowSumWithinTheirTypes: every reading of the
// 25-hour day (Sunday 25 October 2026, London's clocks go back) at an
// extreme the bounds allow, and the day recomputes without error to the
// sums worked out by hand (docs/dba.md, "Bounded sums"):
//
//	a slot at 100,000 kW for 2 s: round(100,000 × 2 / 3.6 × 1000) = 55,555,556 mWh
//	window 00:00-24:00 (43,200 slots): 2,400,000,019,200 mWh = 2,400,000,019 Wh
//	window 24:00-25:00 (1,800 slots):    100,000,000,800 mWh =   100,000,001 Wh
//	a turbine-day at 100,000 kW:                                2,500,000,020 Wh
//
// X-001 at the maximum power in a wind on the curve's plateau (actual and
// potential 2,500,000,020 Wh), X-002 unavailable at the minimum power
// (actual 0: power drawn is no production; potential and lost 2,500,000,020
// Wh, forced outage), X-003 at the maximum power and the maximum wind
// (actual 2,500,000,020 Wh, potential 0: beyond the curve), X-004 as X-001
// with two readings in every slot (recounted slot by slot: the same sums).
// The farm: actual and potential 7,500,000,060 Wh, lost 2,500,000,020 Wh,
// production-based availability 75 %. A reading at 3.0e38 kW sent among
// them is refused; stored, it made the recompute fail with "bigint out of
// range". The farm sum's type holds 1,000,000 turbines at the maximum (no
// fewer than a fleet file may hold, fleet.MaxTurbines): 2,500,000,020,000,000
// Wh, 3,689 times under bigint's 9,223,372,036,854,775,807.
func TestTheExtremesTheBoundsAllowSumWithinTheirTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := &bundle{pipelinetest.New(t, testdb.New(t, extremeFleet), pipelinetest.Options{At: time.Date(2026, 10, 26, 3, 0, 0, 0, time.UTC)})}
	dayStart := time.Date(2026, 10, 25, 0, 0, 0, 0, london) // 23:00 UTC on the 24th
	dayEnd := time.Date(2026, 10, 26, 0, 0, 0, 0, london)
	if got := dayEnd.Sub(dayStart); got != 25*time.Hour {
		t.Fatalf("25 October 2026 in London lasts %s, want 25h", got)
	}
	var body strings.Builder
	reading := func(id string, at time.Time, available bool, power, wind string) {
		fmt.Fprintf(&body, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%s,"wind_ms":%s}`+"\n",
			id, at.UTC().Format(time.RFC3339), at.Add(time.Second).UTC().Format(time.RFC3339), available, power, wind)
	}
	for at := dayStart; at.Before(dayEnd); at = at.Add(2 * time.Second) {
		reading("X-001", at, true, "100000", "12")
		reading("X-002", at, false, "-100000", "12")
		reading("X-003", at, true, "100000", "200")
		reading("X-004", at, true, "100000", "12")
		reading("X-004", at.Add(time.Second), true, "100000", "12")
	}
	reading("X-001", dayStart.Add(12*time.Hour+time.Second), true, "3.0e38", "12")
	sum, err := pipelinetest.Ingest(ctx, b.In, []byte(body.String()))
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 5*45_000 || sum.Rejected != 1 || sum.Rejects[0].Reason != `power_kw: 3e+38 is outside farm extreme's bounds, -100000 to 100000 kW (rules power_min_kw, power_max_kw)` {
		t.Fatalf("ingest: %+v; want 225,000 accepted, the reading at 3.0e38 kW refused", sum)
	}
	_, err = b.Computer.Recompute(ctx, rollup.Request{FarmID: "extreme", Day: dayStart, Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
	testdb.Must(t, err, "recompute the extremes")

	const turbineDay = 2_500_000_020
	const none = 0
	for _, want := range []struct {
		id                      string
		expected, received      int64
		actual, potential       int64 // Wh, every category
		actualCat, potentialCat int   // availability_category.id holding them
	}{
		{"X-001", 45_000, 45_000, turbineDay, turbineDay, 1, 1},
		{"X-002", 45_000, 45_000, none, turbineDay, 10, 10},
		{"X-003", 45_000, 45_000, turbineDay, none, 1, 1},
		{"X-004", 45_000, 45_000, turbineDay, turbineDay, 1, 1},
	} {
		var expected, received, actual, potential, actualIn, potentialIn int64
		err := b.Env.Control.QueryRow(ctx, `
			SELECT expected, received, (SELECT sum(x) FROM unnest(category_actual_wh) x)::bigint, (SELECT sum(x) FROM unnest(category_potential_wh) x)::bigint,
			       category_actual_wh[$2], category_potential_wh[$3]
			FROM turbine_day WHERE turbine_id = $1 AND day = '2026-10-25'`, want.id, want.actualCat, want.potentialCat).
			Scan(&expected, &received, &actual, &potential, &actualIn, &potentialIn)
		testdb.Must(t, err, "turbine_day %s", want.id)
		if expected != want.expected || received != want.received || actual != want.actual || potential != want.potential ||
			actualIn != want.actual || potentialIn != want.potential {
			t.Errorf("%s: expected %d, received %d, actual %d Wh (%d in category %d), potential %d Wh (%d in category %d); want %d, %d, %d Wh, %d Wh",
				want.id, expected, received, actual, actualIn, want.actualCat, potential, potentialIn, want.potentialCat,
				want.expected, want.received, want.actual, want.potential)
		}
	}
	var actual, lost int64
	var potential, production string
	err = b.Env.Control.QueryRow(ctx, `
		SELECT actual_wh, (SELECT sum(x) FROM unnest(category_potential_wh) x)::text, lost_wh, production_based_availability::text
		FROM farm_day_contract WHERE farm_id = 'extreme' AND day = '2026-10-25'`).Scan(&actual, &potential, &lost, &production)
	testdb.Must(t, err, "farm_day_contract")
	if actual != 3*turbineDay || potential != "7500000060" || lost != turbineDay || production != "0.750000" {
		t.Fatalf("the farm-day: actual %d Wh, potential %s Wh, lost %d Wh, production-based %s; want 7,500,000,060, 7,500,000,060, 2,500,000,020, 0.750000",
			actual, potential, lost, production)
	}
	// The farm sum in its own types (farm_day_contract: sum of bigint, cast
	// to bigint) over 1,000,000 turbines, each at the most a turbine-day can
	// reach.
	var farm int64
	testdb.Must(t, b.Env.Control.QueryRow(ctx, `SELECT sum(w)::bigint FROM (SELECT $1::bigint AS w FROM generate_series(1, 1000000)) AS t`, turbineDay).
		Scan(&farm), "a farm-day of 1,000,000 turbines")
	if farm != 2_500_000_020_000_000 {
		t.Fatalf("a farm-day of 1,000,000 turbines at the maximum: %d Wh, want 2,500,000,020,000,000", farm)
	}
}

// poisonFleet is one turbine with a model (so its energy is summed), ten-
// minute cadence: 144 slots in a UTC day.
const poisonFleet = `
shards: [{name: s1}]
models:
  - name: T3
    curve: [[3, 0], [5, 200], [10, 1000], [12, 1500], [25, 1500]]
farms:
  - id: poisoned
    timezone: UTC
    cadence_seconds: 600
    commissioned_at: 2026-07-01T00:00:00Z
    model: T3
    turbines: [{id: P-1, shard: s1}]
`

// TestAFailingRecomputeNamesItsFarmDayAndErrorInWhy: a final day whose
// stored reading says 3.0e38 kW (stored before the bounds existed) fails
// its recompute. The day is provisional, held back by "recompute failed"
// with the farm-day, the shard, the job and River's error (bigint out of
// range) in its why, in farm_day_status, farm_day and the monthly report
// (whose month names the day). A later job of the farm-day and shard that
// completes clears it, also once River has deleted that job (the failed
// one, still waiting to retry, leaves "recompute pending"); cancelled, the
// day is final again.
func TestAFailingRecomputeNamesItsFarmDayAndErrorInWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, poisonFleet, pipelinetest.Options{Retry: time.Hour}) // a failed attempt waits: time to read the day
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var text strings.Builder
	for k := 0; k < 144; k++ {
		at := day.Add(time.Duration(k) * 10 * time.Minute)
		fmt.Fprintf(&text, `{"turbine_id":"P-1","recorded_at":%q,"received_at":%q,"available":true,"power_kw":680,"wind_ms":8}`+"\n",
			at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
	}
	b.IngestText(t, text.String())
	b.DrainNow(t)
	b.WaitJobs(t)
	status := func() (string, string, string) {
		t.Helper()
		var st, held, why string
		err := b.Env.Control.QueryRow(ctx, `SELECT status, coalesce(held_back::text, ''), coalesce(why, '') FROM farm_day_status('poisoned', '2026-08-01', $1)`, b.Now()).
			Scan(&st, &held, &why)
		testdb.Must(t, err, "farm_day_status")
		return st, held, why
	}
	if st, held, why := status(); st != "final" {
		t.Fatalf("before the poison: %s, held back %s (%s); want final", st, held, why)
	}

	testdb.Exec(t, b.Env.Shards.Pool("s1"), `UPDATE readings SET power_kw = 3.0e38 WHERE turbine_id = 'P-1' AND recorded_at = '2026-08-01 12:00:00+00'`)
	failing := b.Enqueue(t, "poisoned", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)[0]
	waitJob(t, b, failing, river.EventKindJobFailed)

	st, held, why := status()
	prefix := fmt.Sprintf("recompute pending; recompute failed (rollup_day poisoned/2026-08-01 on s1, job %d, attempt 1 of 25 at ", failing)
	if st != "provisional" || held != "{\"recompute pending\",\"recompute failed\"}" || !strings.HasPrefix(why, prefix) ||
		!strings.Contains(why, " UTC, to be retried: rollup poisoned/2026-08-01/s1: ") || !strings.HasSuffix(why, "bigint out of range (SQLSTATE 22003))") {
		t.Fatalf("the poisoned day: %s, held back %s, why %q;\nwant provisional, held back by recompute pending and recompute failed, why %q… to be retried: rollup poisoned/2026-08-01/s1: … bigint out of range (SQLSTATE 22003))",
			st, held, why, prefix)
	}
	var dayWhy, reportWhy, monthWhy string
	testdb.Must(t, b.Env.Control.QueryRow(ctx, `SELECT why FROM farm_day WHERE farm_id = 'poisoned' AND day = '2026-08-01'`).Scan(&dayWhy), "farm_day")
	testdb.Must(t, b.Env.Control.QueryRow(ctx, `
		SELECT max(why) FILTER (WHERE scope = 'day' AND day = '2026-08-01'), max(why) FILTER (WHERE scope = 'month')
		FROM report_monthly_availability('poisoned', '2026-08', $1)`, b.Now()).Scan(&reportWhy, &monthWhy), "report")
	if !strings.HasPrefix(dayWhy, prefix) || reportWhy != why || !strings.Contains(monthWhy, "recompute failed: 2026-08-01") {
		t.Fatalf("farm_day's why %q, the report's day %q and month %q; want the day's why in both, and the month naming 2026-08-01 as recompute failed", dayWhy, reportWhy, monthWhy)
	}

	// The reading put right, another job of the farm-day completes; and
	// the day stays cleared once River deletes the completed job (after
	// 24 hours), by the rows that job wrote.
	testdb.Exec(t, b.Env.Shards.Pool("s1"), `UPDATE readings SET power_kw = 680 WHERE turbine_id = 'P-1' AND recorded_at = '2026-08-01 12:00:00+00'`)
	later := b.Enqueue(t, "poisoned", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)[0]
	waitJob(t, b, later, river.EventKindJobCompleted)
	for _, when := range []string{"after a later job completed", "once River deleted the completed job"} {
		if st, held, why := status(); st != "provisional" || held != "{\"recompute pending\"}" || why != "recompute pending" {
			t.Fatalf("%s: %s, held back %s (%s); want provisional, held back by the failed job's retry alone (recompute pending)", when, st, held, why)
		}
		testdb.Exec(t, b.Env.Control, `DELETE FROM river_job WHERE id = $1`, later)
	}
	_, err := b.Client.JobCancel(ctx, failing)
	testdb.Must(t, err, "cancel the failed job")
	if st, held, why := status(); st != "final" {
		t.Fatalf("the failed job cancelled: %s, held back %s (%s); want final", st, held, why)
	}
}

// waitJob waits for River's event of kind about job id.
func waitJob(t *testing.T, b *bundle, id int64, kind river.EventKind) {
	t.Helper()
	deadline := time.After(testdb.Hang)
	for {
		select {
		case ev := <-b.Events:
			if ev.Job.ID == id && ev.Kind == kind {
				return
			}
		case <-deadline:
			t.Fatalf("job %d: no %s event", id, kind)
		}
	}
}
