package rollup_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// glenFleet is two 2 s turbines in London; edits below change it.
const glenFleet = `
shards: [{name: s1}]
farms:
  - id: glen
    timezone: Europe/London
    turbines:
      - {id: G-1, shard: s1}
      - {id: G-2, shard: s1}
`

// applyAt applies fleetYAML with the registry's clock at now.
func applyAt(t testing.TB, b *bundle, fleetYAML string, now time.Time, opts fleet.ApplyOptions) (fleet.ApplyResult, error) {
	t.Helper()
	plan, err := fleet.Parse("edit", strings.NewReader(fleetYAML))
	testdb.Must(t, err, "parse")
	reg := *b.Env.Registry
	reg.Since = time.Time{} // the rule for new turbines, not the fixture's
	reg.Now = func() time.Time { return now }
	return reg.ApplyWith(context.Background(), "edit", plan, opts)
}

// counts is a turbine-day's expected/received/available.
func counts(t testing.TB, b *bundle, id, day string) [3]int64 {
	t.Helper()
	r := b.TurbineDay(t, id, day)
	return [3]int64{r.Expected, r.Received, r.Available}
}

// TestFleetEditNeverRewritesAClosedDay: 1 August is rolled up (G-2 silent
// 23:00–24:00 BST, which is 2 August in Paris). On 2 August at 14:00 UTC the farm's zone becomes
// Europe/Paris and G-1's cadence 1 s. The apply is accepted (no rolled-up
// day changes); G-2's lost hour then arrives and 1 August is recomputed
// with the registry it had: London bounds, 2 s. 2 August, the day in
// progress at the edit, starts at London's midnight and ends at Paris's
// (23 h), and G-1's expected is cut at 14:00 UTC.
func TestFleetEditNeverRewritesAClosedDay(t *testing.T) {
	t.Parallel()
	b := setup(t, glenFleet, pipelinetest.Options{})
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, london)
	var text, late strings.Builder
	for at := day; at.Before(day.AddDate(0, 0, 1)); at = at.Add(2 * time.Second) {
		ndjson(&text, "G-1", at, true)
		if h := at.Hour(); h == 23 {
			ndjson(&late, "G-2", at, true)
		} else {
			ndjson(&text, "G-2", at, true)
		}
	}
	b.IngestText(t, text.String())
	b.Enqueue(t, "glen", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	b.DrainNow(t) // the marks of the day's (late) readings: nothing pending
	b.WaitJobs(t)
	if got, want := counts(t, b, "G-2", "2026-08-01"), [3]int64{43_200, 41_400, 41_400}; got != want {
		t.Fatalf("G-2 on 1 August before the edit: %v, want %v", got, want)
	}
	status := func() string {
		return testdb.Text(t, b.Env.Control, `SELECT status FROM farm_day WHERE farm_id = 'glen' AND day = '2026-08-01'`)
	}
	// Settled, but G-2's lost hour (1,800 of 86,400 slots, 20.8 ‰) is over
	// the farm's 10 ‰: incomplete until it arrives.
	if s := status(); s != "incomplete" {
		t.Fatalf("1 August is %q before the edit, want incomplete", s)
	}

	// (At 14:00:30: G-1's cadence change starts at the next boundary of
	// the farm's 1-minute grid, 14:01, so a window has one cadence.)
	edit := time.Date(2026, 8, 2, 14, 0, 30, 0, time.UTC)
	b.Clock.Set(edit)
	res, err := applyAt(t, b, strings.NewReplacer("Europe/London", "Europe/Paris", "{id: G-1, shard: s1}", "{id: G-1, shard: s1, cadence_seconds: 1}").Replace(glenFleet), edit, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply the zone and the cadence today")
	if len(res.Changes) != 2 || len(res.Reopened) != 0 {
		t.Fatalf("apply: changes %+v, reopened %v; want the farm's and G-1's change, no day reopened", res.Changes, res.Reopened)
	}
	for _, c := range res.Changes {
		if len(c.Days) != 0 {
			t.Fatalf("%s changes %v, want no rolled-up day", c.What, c.Days)
		}
	}

	// G-2's lost hour of 1 August arrives and is recomputed like any late
	// reading: the day keeps its calendar and cadence. Ingest has the new
	// registry (as a running server does within seconds): its mark rule
	// cuts 1 August by London's calendar still.
	routes, err := ingest.LoadRoutes(context.Background(), b.Env.Control, edit, 0)
	testdb.Must(t, err, "reload routes")
	b.In.SetRoutes(routes)
	b.IngestText(t, late.String())
	b.DrainNow(t)
	b.WaitJobs(t)
	for id, want := range map[string][3]int64{"G-1": {43_200, 43_200, 43_200}, "G-2": {43_200, 43_200, 43_200}} {
		if got := counts(t, b, id, "2026-08-01"); got != want {
			t.Fatalf("%s on 1 August after the edit and its late hour: %v, want %v (London's 24 h at 2 s)", id, got, want)
		}
	}
	if s := status(); s != "final" {
		t.Fatalf("1 August is %q after its recompute, want final", s)
	}

	// 2 August closes: 23:00 UTC on 1 August (London's midnight) to 22:00
	// UTC on 2 August (Paris's); G-1 15 h 1 min at 2 s then 7 h 59 min at
	// 1 s.
	b.Clock.Set(time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC))
	b.Enqueue(t, "glen", "2026-08-02", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "G-1", "2026-08-02").Expected; got != 27_030+28_740 {
		t.Fatalf("G-1 expected on 2 August = %d, want %d (27,030 at 2 s before 14:01 UTC, 28,740 at 1 s after)", got, 27_030+28_740)
	}
	if got := b.TurbineDay(t, "G-2", "2026-08-02").Expected; got != 23*1800 {
		t.Fatalf("G-2 expected on 2 August = %d, want %d (a 23-hour day at 2 s)", got, 23*1800)
	}

	// What the registry said, at any instant.
	at := func(q, instant string) string {
		return testdb.Text(t, b.Env.Control, q, instant)
	}
	const cadenceAt = `SELECT cadence_seconds::text FROM turbine_history WHERE turbine_id = 'G-1' AND valid_from <= $1::timestamptz AND (valid_to IS NULL OR valid_to > $1::timestamptz)`
	const zoneAt = `SELECT timezone FROM farm_history WHERE farm_id = 'glen' AND valid_from <= $1::timestamptz AND (valid_to IS NULL OR valid_to > $1::timestamptz)`
	for _, c := range []struct{ q, at, want string }{
		{cadenceAt, "2026-08-02T14:00:59Z", "2"},
		{cadenceAt, "2026-08-02T14:01:00Z", "1"},
		{cadenceAt, "2020-01-01T00:00:00Z", "2"},
		{zoneAt, "2026-08-01T22:59:59Z", "Europe/London"},
		{zoneAt, "2026-08-01T23:00:00Z", "Europe/Paris"},
	} {
		if got := at(c.q, c.at); got != c.want {
			t.Fatalf("registry at %s: %s, want %s (%s)", c.at, got, c.want, c.q)
		}
	}
	if who := testdb.Text(t, b.Env.Control, `SELECT applied_by FROM turbine_history WHERE turbine_id = 'G-1' AND valid_to IS NULL`); who != testdb.Text(t, b.Env.Control, `SELECT current_user::text`) {
		t.Fatalf("the version in force was applied by %q, want the database user", who)
	}
}

// TestReopenRecomputesExactlyTheListedDays: 31 July and 1 August are
// rolled up; a cadence change effective 1 August 12:00 UTC is refused
// (nothing changes) without --reopen, and with it lists 1 August only,
// whose recompute cuts G-1's expected at 12:00 UTC while 31 July keeps
// its counts.
func TestReopenRecomputesExactlyTheListedDays(t *testing.T) {
	t.Parallel()
	b := setup(t, glenFleet, pipelinetest.Options{})
	for _, d := range []string{"2026-07-31", "2026-08-01"} {
		b.Enqueue(t, "glen", d, rollup.ReasonManual, jobs.PriorityManual)
	}
	b.WaitJobs(t)
	july := b.TurbineDay(t, "G-1", "2026-07-31")
	faster := strings.Replace(glenFleet, "{id: G-1, shard: s1}", "{id: G-1, shard: s1, cadence_seconds: 1}", 1)
	now := time.Date(2026, 8, 2, 9, 0, 0, 0, time.UTC)
	from := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	versions := func() int64 { return testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_version`) }
	before := versions()

	// A turbine added from 1 August 12:00 would be in service on rolled-up
	// 1 August: refused too.
	withG3 := strings.Replace(glenFleet, "      - {id: G-2, shard: s1}\n", "      - {id: G-2, shard: s1}\n      - {id: G-3, shard: s1}\n", 1)
	if _, err := applyAt(t, b, withG3, now, fleet.ApplyOptions{EffectiveFrom: &from}); !errors.As(err, new(*fleet.ChangesClosedDaysError)) || !strings.Contains(err.Error(), "glen/2026-08-01") {
		t.Fatalf("adding G-3 from 1 August 12:00 without --reopen: %v, want refused naming glen/2026-08-01", err)
	}

	_, err := applyAt(t, b, faster, now, fleet.ApplyOptions{EffectiveFrom: &from})
	var refused *fleet.ChangesClosedDaysError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "glen/2026-08-01") || strings.Contains(err.Error(), "2026-07-31") {
		t.Fatalf("apply without --reopen: %v, want refused naming glen/2026-08-01 only", err)
	}
	if n := versions(); n != before {
		t.Fatalf("a refused apply left %d turbine versions, want %d", n, before)
	}
	if c := testdb.Int(t, b.Env.Control, `SELECT cadence_seconds FROM turbine WHERE id = 'G-1'`); c != 2 {
		t.Fatalf("a refused apply set G-1's cadence to %d", c)
	}

	res, err := applyAt(t, b, faster, now, fleet.ApplyOptions{EffectiveFrom: &from, Reopen: true})
	testdb.Must(t, err, "apply --reopen")
	if len(res.Reopened) != 1 || res.Reopened[0].String() != "glen/2026-08-01" {
		t.Fatalf("reopened %v, want [glen/2026-08-01]", res.Reopened)
	}
	if got := testdb.Text(t, b.Env.Control, `SELECT array_to_string(reopened_days, ',') FROM fleet_apply ORDER BY id DESC LIMIT 1`); got != "glen/2026-08-01" {
		t.Fatalf("fleet_apply.reopened_days = %q, want glen/2026-08-01", got)
	}
	for _, d := range res.Reopened {
		b.Enqueue(t, d.FarmID, d.Day.String(), rollup.ReasonManual, jobs.PriorityManual)
	}
	b.WaitJobs(t)
	// 1 August in London: 23:00 UTC on 31 July to 12:00 UTC at 2 s (13 h),
	// then 11 h at 1 s.
	if got := b.TurbineDay(t, "G-1", "2026-08-01").Expected; got != 13*1800+11*3600 {
		t.Fatalf("G-1 expected on 1 August after --reopen = %d, want %d", got, 13*1800+11*3600)
	}
	if got := b.TurbineDay(t, "G-1", "2026-07-31"); got.Expected != 43_200 || !got.ComputedAt.Equal(july.ComputedAt) {
		t.Fatalf("31 July: %+v, want untouched (expected 43200, computed at %s)", got, july.ComputedAt)
	}
}

// TestNewTurbinesAreInServiceFromTheirApply: a turbine added to a farm and
// a farm applied for the first time, without commissioned_at, at 14:00 UTC
// on 2 August: the night's rollup of 1 August expects nothing of them
// (no day final with 0 received), and G-3's 2 August expects 9 h.
func TestNewTurbinesAreInServiceFromTheirApply(t *testing.T) {
	t.Parallel()
	b := setup(t, glenFleet, pipelinetest.Options{})
	added := time.Date(2026, 8, 2, 14, 0, 0, 0, time.UTC)
	b.Clock.Set(added)
	bigger := strings.Replace(glenFleet, "      - {id: G-2, shard: s1}\n", "      - {id: G-2, shard: s1}\n      - {id: G-3, shard: s1}\n", 1) + `
  - id: moor
    timezone: Europe/London
    turbines:
      - {prefix: M-, from: 1, to: 3, shard: s1}
`
	res, err := applyAt(t, b, bigger, added, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply")
	if res.New != 4 || len(res.Reopened) != 0 {
		t.Fatalf("apply: %d new, reopened %v; want 4 new turbines and no day reopened", res.New, res.Reopened)
	}
	for _, f := range []string{"glen", "moor"} {
		b.Enqueue(t, f, "2026-08-01", rollup.ReasonSchedule, jobs.PriorityManual)
	}
	b.WaitJobs(t)
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE day = '2026-08-01' AND farm_id = 'moor'`); n != 0 {
		t.Fatalf("1 August has %d rows of moor, applied on 2 August, want 0", n)
	}
	if n := b.TurbineDay(t, "G-3", "2026-08-01").Expected; n != 0 {
		t.Fatalf("G-3, added on 2 August, expected %d readings on 1 August, want 0", n)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_day WHERE farm_id = 'moor' AND day = '2026-08-01'`); n != 0 {
		t.Fatalf("moor, applied on 2 August, has %d farm_day rows for 1 August, want 0", n)
	}
	if got := testdb.Int(t, b.Env.Control, `SELECT expected FROM farm_day WHERE farm_id = 'glen' AND day = '2026-08-01'`); got != 2*43_200 {
		t.Fatalf("glen's 1 August expects %d, want %d (G-1 and G-2 only)", got, 2*43_200)
	}
	b.Clock.Set(time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC))
	b.Enqueue(t, "glen", "2026-08-02", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "G-3", "2026-08-02").Expected; got != 9*1800 {
		t.Fatalf("G-3 expected on 2 August = %d, want %d (14:00 to 23:00 UTC at 2 s)", got, 9*1800)
	}
	if got := testdb.Text(t, b.Env.Control, `SELECT commissioned_at::text FROM turbine WHERE id = 'M-001'`); got != "2026-08-02 14:00:00+00" {
		t.Fatalf("M-001 commissioned_at = %s, want the apply's instant", got)
	}

	// A DBA back-fills moor: in service from 1 August (the farm's
	// commissioned_at). Nothing of moor was rolled up then, so nothing is
	// reopened, and 1 August now counts its whole day.
	backfilled := strings.Replace(bigger, "  - id: moor\n", "  - id: moor\n    commissioned_at: 2026-08-01T00:00:00+01:00\n", 1)
	res, err = applyAt(t, b, backfilled, time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC), fleet.ApplyOptions{})
	testdb.Must(t, err, "back-fill moor")
	if len(res.Changes) != 3 || len(res.Reopened) != 0 {
		t.Fatalf("back-fill: changes %+v, reopened %v; want M-001..M-003's commissioned_at, nothing reopened", res.Changes, res.Reopened)
	}
	b.Enqueue(t, "moor", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	if got := b.TurbineDay(t, "M-001", "2026-08-01").Expected; got != 43_200 {
		t.Fatalf("M-001 expected on 1 August after its back-fill = %d, want 43200", got)
	}
}
