package rollup_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// ndjson writes one reading per line; available is "t" or "f".
func ndjson(b *strings.Builder, id string, at time.Time, available bool) {
	fmt.Fprintf(b, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":1,"wind_ms":5}`+"\n",
		id, at.UTC().Format(time.RFC3339Nano), at.Add(300*time.Millisecond).UTC().Format(time.RFC3339Nano), available)
}

type slotCounts struct {
	Expected, Received, Available, BeyondCadence, OutOfService int64
}

func (b *bundle) slotCounts(t testing.TB, id, day string) slotCounts {
	t.Helper()
	var c slotCounts
	err := b.Env.Control.QueryRow(context.Background(),
		`SELECT expected, received, available, beyond_cadence, out_of_service FROM turbine_day WHERE turbine_id = $1 AND day = $2`, id, day).
		Scan(&c.Expected, &c.Received, &c.Available, &c.BeyondCadence, &c.OutOfService)
	testdb.Must(t, err, "turbine_day %s %s", id, day)
	return c
}

const slotFleet = `
shards: [{name: s1}]
farms:
  - id: slots
    timezone: Europe/London
    turbines:
      - {id: FAST-1, shard: s1}
      - {id: LATE-1, shard: s1}
      - {id: SEVEN-1, shard: s1, cadence_seconds: 7}
      - {id: MIX-1, shard: s1}
`

// TestCountsNeverExceedExpected is the slot rule on the local day of
// 1 August (BST: 2026-07-31T23:00Z to 2026-08-01T23:00Z):
//   - FAST-1, registered at 2 s, reports every second: 86,400 readings fill
//     43,200 slots; the other 43,200 are beyond_cadence, not received.
//   - LATE-1 reported every 2 s all day, and only then was its
//     commissioning set to 17:00:01Z: 21,599 s of service = 10,799 slots,
//     all received; the 32,401 readings before it are out_of_service.
//   - SEVEN-1, at 7 s (which does not divide the day), reports every 7 s
//     from midnight: 12,343 readings, 12,342 slots (the last slot runs to
//     the day's end and holds two), so received = expected = 12,342.
//   - MIX-1 sends two readings in slot 0, one saying unavailable, and two
//     available ones in slot 1: 2 slots received, 1 available.
//
// Without the rule FAST-1 would read 200 % and LATE-1 400 %.
func TestCountsNeverExceedExpected(t *testing.T) {
	t.Parallel()
	b := setup(t, slotFleet, pipelinetest.Options{})
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, london)
	var text strings.Builder
	for s := 0; s < 86_400; s++ {
		at := start.Add(time.Duration(s) * time.Second)
		ndjson(&text, "FAST-1", at, true)
		if s%2 == 0 {
			ndjson(&text, "LATE-1", at, true)
		}
		if s%7 == 0 {
			ndjson(&text, "SEVEN-1", at, true)
		}
	}
	ndjson(&text, "MIX-1", start, true)
	ndjson(&text, "MIX-1", start.Add(time.Second), false)
	ndjson(&text, "MIX-1", start.Add(2*time.Second), true)
	ndjson(&text, "MIX-1", start.Add(3*time.Second), true)
	b.IngestText(t, text.String())

	// The commissioning date is corrected after the readings landed.
	plan, err := fleet.Parse("corrected", strings.NewReader(strings.Replace(slotFleet,
		"{id: LATE-1, shard: s1}", "{id: LATE-1, shard: s1, commissioned_at: 2026-08-01T17:00:01Z}", 1)))
	testdb.Must(t, err, "parse")
	_, err = b.Env.Registry.Apply(context.Background(), "corrected", plan)
	testdb.Must(t, err, "apply")

	b.Enqueue(t, "slots", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	for id, want := range map[string]slotCounts{
		"FAST-1":  {Expected: 43_200, Received: 43_200, Available: 43_200, BeyondCadence: 43_200},
		"LATE-1":  {Expected: 10_799, Received: 10_799, Available: 10_799, OutOfService: 32_401},
		"SEVEN-1": {Expected: 12_342, Received: 12_342, Available: 12_342, BeyondCadence: 1},
		"MIX-1":   {Expected: 43_200, Received: 2, Available: 1, BeyondCadence: 2},
	} {
		if got := b.slotCounts(t, id, "2026-08-01"); got != want {
			t.Errorf("%s: %+v, want %+v", id, got, want)
		}
	}
	var over int64
	err = b.Env.Control.QueryRow(context.Background(),
		`SELECT count(*) FROM turbine_day WHERE received > expected OR available > received`).Scan(&over)
	testdb.Must(t, err, "check")
	if over != 0 {
		t.Fatalf("%d turbine_day rows have received > expected or available > received", over)
	}
	if got := b.farmAvailability(t, "slots", "2026-08-01"); got != "60.56" {
		// (43,200 + 10,799 + 12,342 + 1) / (43,200 + 10,799 + 12,342 + 43,200)
		t.Fatalf("farm availability = %s %%, want 60.56 %%", got)
	}
}

// TestCompletenessCountsOnlyTurbinesInService: a retired turbine keeps a
// row per day (expected 0); it must not stand in for a turbine whose
// shard's rollup is missing.
func TestCompletenessCountsOnlyTurbinesInService(t *testing.T) {
	t.Parallel()
	b := setup(t, `
shards: [{name: s1}, {name: s2}]
farms:
  - id: split
    timezone: Europe/London
    turbines:
      - {id: A-1, shard: s1}
      - {id: A-2, shard: s1, decommissioned_at: 2026-07-01T00:00:00Z}
      - {id: B-1, shard: s2}
`, pipelinetest.Options{})
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	// Only shard s1's rollup lands.
	_, err := b.Computer.Recompute(context.Background(), rollup.Request{FarmID: "split", Day: day, Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
	testdb.Must(t, err, "recompute s1")
	var turbines, inService, registered int64
	var complete bool
	err = b.Env.Control.QueryRow(context.Background(), `
		SELECT fd.turbines, fd.turbines_in_service, fd.registered_turbines, fm.all_turbines_rolled_up
		FROM farm_day fd JOIN farm_month fm ON fm.farm_id = fd.farm_id AND fm.month = '2026-08-01'
		WHERE fd.farm_id = 'split' AND fd.day = '2026-08-01'`).Scan(&turbines, &inService, &registered, &complete)
	testdb.Must(t, err, "farm_day")
	if turbines != 2 || inService != 1 || registered != 2 || complete {
		t.Fatalf("farm_day turbines %d, in service %d, registered %d, month complete %v; want 2, 1, 2, false (B-1's shard is missing)",
			turbines, inService, registered, complete)
	}
	_, err = b.Computer.Recompute(context.Background(), rollup.Request{FarmID: "split", Day: day, Shard: "s2", Reason: rollup.ReasonManual, Attempt: 1})
	testdb.Must(t, err, "recompute s2")
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_month WHERE farm_id = 'split' AND all_turbines_rolled_up`); n != 1 {
		t.Fatal("farm_month.all_turbines_rolled_up is false with every shard rolled up")
	}
}

// TestRollupRefusesADayRetentionHasCut: once retention has dropped part of
// a farm-day's readings, a manual rollup of that day must not overwrite its
// good row with a partial one: the job is cancelled with the reason and the
// row stays as it was.
func TestRollupRefusesADayRetentionHasCut(t *testing.T) {
	t.Parallel()
	b := setup(t, slotFleet, pipelinetest.Options{})
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, london) // 2026-07-31T23:00Z
	var text strings.Builder
	for s := 0; s < 86_400; s += 2 {
		ndjson(&text, "MIX-1", start.Add(time.Duration(s)*time.Second), true)
	}
	b.IngestText(t, text.String())
	b.Enqueue(t, "slots", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	before := b.slotCounts(t, "MIX-1", "2026-08-01")
	if before.Received != 43_200 {
		t.Fatalf("MIX-1 before retention: %+v, want 43200 received", before)
	}

	// Retention drops the partition of 31 July (UTC), which holds the first
	// hour of the London day of 1 August.
	keepFrom := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	dropped, err := partition.Maintain(context.Background(), b.Env.Shards.Pool("s1"), b.Clock.Now(), 0, &keepFrom)
	testdb.Must(t, err, "retention")
	if dropped != 1 {
		t.Fatalf("retention dropped %d partitions, want 1", dropped)
	}
	res, err := b.Computer.Recompute(context.Background(), rollup.Request{FarmID: "slots", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Shard: "s1", Reason: rollup.ReasonManual, Attempt: 1})
	testdb.Must(t, err, "recompute")
	if !errors.Is(res.Refused, rollup.ErrReadingsDropped) || !strings.Contains(res.Refused.Error(), "keeps readings from 2026-08-01T00:00:00Z on") {
		t.Fatalf("recompute of a cut day: refused = %v, want ErrReadingsDropped naming 2026-08-01T00:00:00Z", res.Refused)
	}
	ids := b.Enqueue(t, "slots", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	var state, errText string
	err = b.Env.Control.QueryRow(context.Background(), `SELECT state::text, errors[array_upper(errors, 1)]->>'error' FROM river_job WHERE id = $1`, ids[0]).Scan(&state, &errText)
	testdb.Must(t, err, "job")
	if state != "cancelled" || !strings.Contains(errText, "readings dropped by retention") {
		t.Fatalf("job %d: state %s, error %q; want cancelled with the retention reason", ids[0], state, errText)
	}
	if after := b.slotCounts(t, "MIX-1", "2026-08-01"); after != before {
		t.Fatalf("MIX-1 after a refused recompute: %+v, want it unchanged %+v", after, before)
	}
}

// TestSlotsOnDSTDaysAndShortService: on the 23-hour day (29 March) and
// the 25-hour day (25 October) a 2 s turbine reporting every 2 s fills
// exactly 41,400 and 45,000 slots; a turbine whose cadence is a day has no
// slot on the 23-hour day (expected 0), so its reading is beyond_cadence,
// never received; a turbine commissioned 10 s before the day ends at a
// 60 s cadence likewise.
func TestSlotsOnDSTDaysAndShortService(t *testing.T) {
	t.Parallel()
	b := setup(t, `
shards: [{name: s1}]
farms:
  - id: dst
    timezone: Europe/London
    turbines:
      - {id: TWO-1, shard: s1}
      - {id: DAILY-1, shard: s1, cadence_seconds: 86400}
      - {id: LAST-1, shard: s1, cadence_seconds: 60, commissioned_at: 2026-03-29T22:59:50Z}
`, pipelinetest.Options{})
	b.Clock.Set(time.Date(2026, 10, 27, 3, 0, 0, 0, london))
	var text strings.Builder
	for _, day := range []time.Time{time.Date(2026, 3, 29, 0, 0, 0, 0, london), time.Date(2026, 10, 25, 0, 0, 0, 0, london)} {
		end := day.AddDate(0, 0, 1)
		for at := day; at.Before(end); at = at.Add(2 * time.Second) {
			ndjson(&text, "TWO-1", at, true)
		}
	}
	ndjson(&text, "DAILY-1", time.Date(2026, 3, 29, 12, 0, 0, 0, london), true)
	ndjson(&text, "LAST-1", time.Date(2026, 3, 29, 22, 59, 55, 0, time.UTC), true)
	b.IngestText(t, text.String())
	for _, day := range []string{"2026-03-29", "2026-10-25"} {
		b.Enqueue(t, "dst", day, rollup.ReasonManual, jobs.PriorityManual)
	}
	b.WaitJobs(t)
	for _, tc := range []struct {
		id, day string
		want    slotCounts
	}{
		{"TWO-1", "2026-03-29", slotCounts{Expected: 41_400, Received: 41_400, Available: 41_400}},
		{"TWO-1", "2026-10-25", slotCounts{Expected: 45_000, Received: 45_000, Available: 45_000}},
		{"DAILY-1", "2026-03-29", slotCounts{Expected: 0, Received: 0, Available: 0, BeyondCadence: 1}},
		{"DAILY-1", "2026-10-25", slotCounts{Expected: 1, Received: 0, Available: 0}},
		{"LAST-1", "2026-03-29", slotCounts{Expected: 0, Received: 0, Available: 0, BeyondCadence: 1}},
	} {
		if got := b.slotCounts(t, tc.id, tc.day); got != tc.want {
			t.Errorf("%s on %s: %+v, want %+v", tc.id, tc.day, got, tc.want)
		}
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_day WHERE received > expected`); n != 0 {
		t.Fatalf("%d farm days with received > expected", n)
	}
}
