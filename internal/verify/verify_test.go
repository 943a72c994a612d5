package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/verify"
)

const fleetYAML = `
shards: [{name: s1}]
farms:
  - id: glen
    timezone: UTC
    turbines:
      - {id: G-1, shard: s1}
      - {id: G-2, shard: s1}
`

// TestVerifyNamesAHandEditedTurbineDay: a rolled-up day verifies; deleting
// one of G-1's readings by hand, then flipping one of G-2's, makes verify
// name exactly those turbine-days (G-1 by its count, G-2 by its
// fingerprint, the count unchanged); recomputing the day makes it verify
// again.
func TestVerifyNamesAHandEditedTurbineDay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	p := pipelinetest.New(t, testdb.New(t, fleetYAML), pipelinetest.Options{At: day.Add(27 * time.Hour)})
	var text strings.Builder
	for at := day.Add(10 * time.Hour); at.Before(day.Add(12 * time.Hour)); at = at.Add(2 * time.Second) {
		for _, id := range []string{"G-1", "G-2"} {
			fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
				id, at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
		}
	}
	p.IngestText(t, text.String())
	p.Enqueue(t, "glen", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	p.WaitJobs(t)
	q := controldb.New(p.Env.Control)
	run := func() verify.Result {
		t.Helper()
		res, err := verify.Farm(ctx, q, p.Env.Shards, "glen", localday.DateOf(day), localday.DateOf(day))
		testdb.Must(t, err, "verify")
		return res
	}
	if res := run(); res.Rows != 2 || res.Days != 1 || len(res.Mismatches) != 0 {
		t.Fatalf("untouched day: %+v, want 2 turbine-days on 1 day, none differing", res)
	}
	if n := testdb.Int(t, p.Env.Control, `SELECT input_readings FROM turbine_day WHERE turbine_id = 'G-1' AND day = '2026-08-01'`); n != 3_600 {
		t.Fatalf("G-1's day was counted from %d readings, want 3600", n)
	}

	shard := p.Env.Shards.Pool("s1")
	testdb.Exec(t, shard, `DELETE FROM readings WHERE turbine_id = 'G-1' AND recorded_at = '2026-08-01 11:00:00Z'`)
	testdb.Exec(t, shard, `UPDATE readings SET available = false WHERE turbine_id = 'G-2' AND recorded_at = '2026-08-01 11:30:00Z'`)
	res := run()
	if len(res.Mismatches) != 2 {
		t.Fatalf("after the hand edits: %v, want G-1 and G-2 named", res.Mismatches)
	}
	g1, g2 := res.Mismatches[0], res.Mismatches[1]
	if g1.TurbineID != "G-1" || *g1.StoredReadings != 3_600 || g1.NowReadings != 3_599 || !strings.Contains(g1.String(), "glen/2026-08-01 G-1 on s1: counted from 3600 readings, 3599 there now") {
		t.Fatalf("first mismatch %q (%+v), want G-1 counted from 3600, 3599 now", g1, g1)
	}
	if g2.TurbineID != "G-2" || g2.NowReadings != 3_600 || *g2.StoredHash == g2.NowHash || !strings.Contains(g2.String(), "not the same ones") {
		t.Fatalf("second mismatch %q (%+v), want G-2's fingerprint to differ with 3600 readings", g2, g2)
	}

	p.Enqueue(t, "glen", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	p.WaitJobs(t)
	if res := run(); len(res.Mismatches) != 0 {
		t.Fatalf("after the recompute: %v, want none", res.Mismatches)
	}
}
