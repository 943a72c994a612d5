package rollup_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/provision"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// One UTC farm on two shards, 1-minute cadence and 1-hour windows: a day is
// 24 windows, each with a part from s1 (N-001, N-002) and one from s2 (N-003).
const retentionFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: north
    timezone: UTC
    cadence_seconds: 60
    rules: {window: 1h}
    turbines:
      - {prefix: N-, from: 1, to: 2, shard: s1}
      - {id: N-003, shard: s2}
`

// dayRows counts what one farm-local day of north holds, table by table.
func dayRows(t *testing.T, b *bundle, day time.Time) map[string]int64 {
	t.Helper()
	end := day.AddDate(0, 0, 1)
	out := map[string]int64{}
	for _, s := range []string{"s1", "s2"} {
		pool := b.Env.Shards.Pool(s)
		out[s+" readings"] = testdb.Int(t, pool, `SELECT count(*) FROM readings WHERE recorded_at >= $1 AND recorded_at < $2`, day, end)
		out[s+" turbine_window"] = testdb.Int(t, pool, `SELECT count(*) FROM turbine_window WHERE farm_id = 'north' AND day = $1`, day)
		out[s+" farm_window_sum"] = testdb.Int(t, pool, `SELECT count(*) FROM farm_window_sum WHERE farm_id = 'north' AND day = $1`, day)
		out[s+" dirty_window"] = testdb.Int(t, pool, `SELECT count(*) FROM dirty_window WHERE farm_id = 'north' AND day = $1`, day)
		out[s+" dirty_mark"] = testdb.Int(t, pool, `SELECT count(*) FROM dirty_mark WHERE farm_id = 'north' AND day = $1`, day)
	}
	c := b.Env.Control
	out["farm_window fast"] = testdb.Int(t, c, `SELECT count(*) FROM farm_window WHERE farm_id = 'north' AND day = $1 AND path = 'fast'`, day)
	out["farm_window final"] = testdb.Int(t, c, `SELECT count(*) FROM farm_window WHERE farm_id = 'north' AND day = $1 AND path = 'final'`, day)
	out["farm_window_part"] = testdb.Int(t, c, `SELECT count(*) FROM farm_window_part WHERE farm_id = 'north' AND day = $1`, day)
	out["reconciliation"] = testdb.Int(t, c, `SELECT count(*) FROM reconciliation WHERE farm_id = 'north' AND day = $1`, day)
	out["alert"] = testdb.Int(t, c, `SELECT count(*) FROM alert WHERE farm_id = 'north' AND day = $1`, day)
	out["turbine_day"] = testdb.Int(t, c, `SELECT count(*) FROM turbine_day WHERE farm_id = 'north' AND day = $1`, day)
	return out
}

// TestRetentionTakesAWholeDay: 1 and 2 August are received, published by
// the fast path, closed (final rows, parts, reconciliation, a completeness
// alert each: 2 readings of 60 slots an hour), and then get a late reading
// each (a dirty mark and a dirty window on s1, not drained). Each day then
// holds 144 readings (96 on s1, 48 on s2; 145 with the late one), 72
// turbine_window rows (48 + 24), 48 farm_window_sum rows (24 + 24), 24 fast
// and 24 final farm_window rows, 48 parts, 25 reconciliation rows (24
// windows + the day), 1 alert and 3 turbine_day rows. Retention of 1 day at
// 3 August 12:00 keeps from 2 August: 1 August leaves whole -- no readings,
// windows, sums, parts, final or fast rows, reconciliation, alert, dirty
// window or mark -- its turbine_day rows (the day's number, which the report
// reads) stay, and 2 August keeps every row it had.
func TestRetentionTakesAWholeDay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, retentionFleet, pipelinetest.Options{})
	d1 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 1)
	d3 := d2.AddDate(0, 0, 1)
	b.Clock.Set(d3.Add(30 * time.Minute))

	var text strings.Builder
	for at := d1; at.Before(d3); at = at.Add(30 * time.Minute) {
		for _, id := range []string{"N-001", "N-002", "N-003"} {
			fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
				id, at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
		}
	}
	b.IngestText(t, text.String())
	p := &publish.Publisher{Control: b.Env.Control, Shards: b.Env.Shards, Now: b.Clock.Now, CatchUp: d3.Add(30 * time.Minute).Sub(d1)}
	for i := 0; i < 10 && testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast'`) < 48; i++ {
		if _, err := p.PublishDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, day := range []string{"2026-08-01", "2026-08-02"} {
		b.Enqueue(t, "north", day, rollup.ReasonSchedule, jobs.PrioritySchedule)
		b.WaitJobs(t)
	}
	b.ReadingsAt(t, d1.Add(10*time.Hour+5*time.Minute), "N-001")
	b.ReadingsAt(t, d2.Add(10*time.Hour+5*time.Minute), "N-001")

	want := map[string]int64{
		"s1 readings": 97, "s2 readings": 48,
		"s1 turbine_window": 48, "s2 turbine_window": 24,
		"s1 farm_window_sum": 24, "s2 farm_window_sum": 24,
		"s1 dirty_window": 1, "s2 dirty_window": 0,
		"s1 dirty_mark": 1, "s2 dirty_mark": 1,
		"farm_window fast": 24, "farm_window final": 24, "farm_window_part": 48,
		"reconciliation": 25, "alert": 1, "turbine_day": 3,
	}
	for _, day := range []time.Time{d1, d2} {
		if got := dayRows(t, b, day); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s before retention:\n got %v\nwant %v", day.Format(time.DateOnly), got, want)
		}
	}

	testdb.Must(t, provision.Partitions(ctx, b.Env.Control, b.Env.Shards, d3.Add(12*time.Hour), 1, 1), "partitions with 1 day of retention")

	gone := map[string]int64{}
	for k := range want {
		gone[k] = 0
	}
	gone["turbine_day"] = 3
	if got := dayRows(t, b, d1); fmt.Sprint(got) != fmt.Sprint(gone) {
		t.Fatalf("1 August after retention:\n got %v\nwant %v", got, gone)
	}
	if got := dayRows(t, b, d2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("2 August after retention:\n got %v\nwant %v (every row kept)", got, want)
	}
	// Its rollup is refused from now on, so nothing writes its windows again.
	for _, s := range []string{"s1", "s2"} {
		if n := testdb.Int(t, b.Env.Shards.Pool(s), `SELECT extract(epoch FROM dropped_before)::bigint FROM readings_retention`); n != d2.Unix() {
			t.Fatalf("%s readings_retention.dropped_before = %d, want 2 August 00:00Z (%d)", s, n, d2.Unix())
		}
	}
}
