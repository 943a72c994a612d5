package experiment_test

import (
	"context"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/experiment"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestWatermarkExperimentSmall runs the experiment through the real
// pipeline on a small draw (3 windows of 200 events, lateness 0 and 60 s;
// seed 7 leaves 3 of its 600 readings unarrived an hour after close, so
// the open-divergence check compares something) and checks what must hold
// whatever the draw: every final count exact;
// every reading that arrived after its window's publication corrected,
// within a minute of simulated time; the divergence still open an hour
// after close equal to the share not yet arrived by then (no correction
// waits for a batch); publication at 0 s missing at least what it misses
// at 60 s; and total work under 2 rows read per row ingested.
func TestWatermarkExperimentSmall(t *testing.T) {
	t.Parallel()
	cfg := experiment.DefaultConfig()
	cfg.Seed = 7
	cfg.Windows = 3
	cfg.EventsPerWindow = 200
	cfg.Lateness = []time.Duration{0, time.Minute}
	cfg.Horizons = []time.Duration{time.Hour}
	cfg.Progress = func(s string) { t.Log(s) } // ticks, drains and where the wall time went
	env := testdb.New(t, cfg.FleetYAML())
	res, err := experiment.Run(context.Background(), experiment.Env{Control: env.Control, Shards: env.Shards}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if !res.FinalExact {
		t.Fatal("final counts are not exact: some window's final row is not 200 received")
	}
	c := res.ArrivalToCorrection
	if c.LateReadings == 0 || c.Uncorrected != 0 || c.P99S > 60 {
		t.Fatalf("arrival → correction %+v: want some late readings, none uncorrected, p99 ≤ 60 s", c)
	}
	o := res.OpenDivergence[0]
	if o.NotArrivedPerMille == 0 {
		t.Fatalf("an hour after close: %+v; the draw leaves nothing unarrived, so the check below would compare nothing", o)
	}
	if o.DivergencePerMille != o.NotArrivedPerMille {
		t.Fatalf("an hour after close: open divergence %.3f‰, not yet arrived %.3f‰; want equal", o.DivergencePerMille, o.NotArrivedPerMille)
	}
	if p := res.DivergenceAtPublication; len(p) != 2 || p[0].DivergencePerMille < p[1].DivergencePerMille || p[1].DivergencePerMille <= 0 {
		t.Fatalf("divergence at publication %+v: want lateness 0 ≥ lateness 60 > 0", p)
	}
	if res.TotalWorkRatio > 2.0 || res.TotalWorkRatio < 1.0 {
		t.Fatalf("total work %.2f rows read per row ingested, want between 1 and 2", res.TotalWorkRatio)
	}
}
