package rollup_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// burstFleet is Ardnave Point with the ten turbines a shard the burst
// replays (a recompute writes every turbine of its shard's windows).
const burstFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}]
farms:
  - id: ardnave-point
    timezone: Europe/London
    turbines:
      - {prefix: AP-, from: 1, to: 10, shard: s1}
      - {prefix: AP-, from: 101, to: 110, shard: s2}
      - {prefix: AP-, from: 201, to: 210, shard: s3}
`

// TestABurstIsRecomputedOnce: the Ardnave hole (05:58-11:31 on 1 August,
// 9,990 readings a turbine; ten turbines on each of the farm's three
// shards here) is replayed on Tuesday in 60 batches, one a second, with the
// periodic drain running after each. Each farm-day-shard must be
// recomputed at most twice (once when its marks turn a minute old while
// the replay goes on, once after they settle), not once per drain, and
// the final rows must count the whole hole.
func TestABurstIsRecomputedOnce(t *testing.T) {
	t.Parallel()
	var rowsRead atomic.Int64
	b := setup(t, burstFleet, pipelinetest.Options{OnResult: func(_ rollup.Request, r rollup.Result) { rowsRead.Add(r.RowsRead) }})
	var turbines []string
	for _, base := range []int{0, 100, 200} {
		for i := 1; i <= 10; i++ {
			turbines = append(turbines, fmt.Sprintf("AP-%03d", base+i))
		}
	}
	holeStart := time.Date(2026, 8, 1, 5, 58, 0, 0, london)
	const readings, batches = 9_990, 60
	now := time.Date(2026, 8, 4, 11, 0, 0, 0, london)
	for batch := 0; batch < batches; batch++ {
		b.Clock.Set(now)
		var text strings.Builder
		from, to := batch*readings/batches, (batch+1)*readings/batches
		for k := from; k < to; k++ {
			at := holeStart.Add(time.Duration(2*k) * time.Second)
			for _, id := range turbines {
				fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
					id, at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
			}
		}
		b.IngestText(t, text.String())
		if _, err := b.Drainer.Drain(context.Background(), jobs.RollupDayEnqueue(b.Client)); err != nil { // the periodic drain
			t.Fatalf("drain after batch %d: %v", batch, err)
		}
		now = now.Add(time.Second)
	}
	// The replay is over; the marks settle.
	b.Clock.Set(now.Add(11 * time.Second))
	res, err := b.Drainer.Drain(context.Background(), jobs.RollupDayEnqueue(b.Client))
	testdb.Must(t, err, "final drain")
	if res.Deferred != 0 || res.Marks != res.Deleted {
		t.Fatalf("final drain: %+v, want every mark turned into a job", res)
	}
	b.WaitJobs(t)
	for _, shard := range []string{"s1", "s2", "s3"} {
		n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'shard' = $1 AND args->>'reason' = 'dirty'`, shard)
		if n < 1 || n > 2 {
			t.Errorf("shard %s: %d dirty recomputes for a 60-batch replay, want 1 or 2", shard, n)
		}
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM turbine_day WHERE day = '2026-08-01' AND received = 9990`); n != 30 {
		t.Fatalf("%d turbines of 30 count the whole hole (9,990) after the burst", n)
	}
	// The work: rows the recomputes read per row ingested. Each of at most
	// two recomputes per farm-day-shard reads at most what was ingested.
	ingested := int64(readings * len(turbines))
	ratio := float64(rowsRead.Load()) / float64(ingested)
	t.Logf("replay of %d rows in %d batches: recomputes read %d rows = %.2f per row ingested", ingested, batches, rowsRead.Load(), ratio)
	if ratio > 2 || rowsRead.Load() < ingested {
		t.Fatalf("recomputes read %.2f rows per row ingested, want between 1 and 2", ratio)
	}
}
