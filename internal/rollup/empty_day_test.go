package rollup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

const emptyDayFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: fresh
    timezone: Europe/London
    turbines:
      - {prefix: F-, from: 1, to: 3, shard: s1}
      - {prefix: G-, from: 1, to: 2, shard: s2}
`

// TestNothingToCountBeforeCommissioning: a farm none of whose turbines was
// in service on a day, with nothing of that day stored, gets no rows for
// it (a new fleet's first start rolls up every farm's yesterday: before,
// each turbine got 1,440 turbine_window rows of zeros). A reading of the
// day that lands before its turbine's commissioning date is corrected is
// still counted (out of service) on its shard, as before.
func TestNothingToCountBeforeCommissioning(t *testing.T) {
	t.Parallel()
	b := setup(t, emptyDayFleet, pipelinetest.Options{})
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC) // London: 2026-07-31T23:00Z to 2026-08-01T23:00Z
	var text strings.Builder
	ndjson(&text, "F-001", time.Date(2026, 8, 1, 12, 0, 0, 0, london), true)
	b.IngestText(t, text.String())

	// Every turbine is then commissioned on 3 August.
	plan, err := fleet.Parse("commissioned", strings.NewReader(strings.ReplaceAll(emptyDayFleet, "shard: s", "commissioned_at: 2026-08-03T00:00:00Z, shard: s")))
	testdb.Must(t, err, "parse")
	_, err = b.Env.Registry.Apply(ctx, "commissioned", plan)
	testdb.Must(t, err, "apply")

	for _, reason := range []string{rollup.ReasonSchedule, rollup.ReasonManual} {
		res, err := b.Computer.Recompute(ctx, rollup.Request{FarmID: "fresh", Day: day, Shard: "s2", Reason: reason, Attempt: 1})
		testdb.Must(t, err, "recompute s2 (%s)", reason)
		if res.Windows != 0 || res.Turbines != 0 || res.FinalWindows != 0 {
			t.Fatalf("%s recompute of s2 on a day before commissioning, nothing stored: %+v, want no window, turbine or final row", reason, res)
		}
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s2"), `SELECT count(*) FROM turbine_window`); n != 0 {
		t.Fatalf("s2 holds %d turbine_window rows, want 0", n)
	}

	// s1 holds F-001's reading of the day: its turbines are counted as before.
	res, err := b.Computer.Recompute(ctx, rollup.Request{FarmID: "fresh", Day: day, Shard: "s1", Reason: rollup.ReasonSchedule, Attempt: 1})
	testdb.Must(t, err, "recompute s1")
	if res.Turbines != 3 || res.Windows != 3*1440 {
		t.Fatalf("recompute of s1 (a reading stored): %d turbine_day rows, %d windows; want 3 and %d", res.Turbines, res.Windows, 3*1440)
	}
	if got := b.slotCounts(t, "F-001", "2026-08-01"); got != (slotCounts{OutOfService: 1}) {
		t.Fatalf("F-001: %+v, want its one reading out of service and nothing expected", got)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE shard_name = 's2'`); n != 0 {
		t.Fatalf("%d turbine_day rows on s2, want 0", n)
	}

	// The next day, still before commissioning and with nothing stored,
	// writes nothing on either shard, and a rollup of it stays cheap.
	next := day.AddDate(0, 0, 1)
	for _, shard := range []string{"s1", "s2"} {
		res, err := b.Computer.Recompute(ctx, rollup.Request{FarmID: "fresh", Day: next, Shard: shard, Reason: rollup.ReasonSchedule, Attempt: 1})
		testdb.Must(t, err, "recompute %s of 2 August", shard)
		if res.Windows != 0 || res.Turbines != 0 {
			t.Fatalf("recompute of %s on 2 August: %+v, want nothing written", shard, res)
		}
	}
}
