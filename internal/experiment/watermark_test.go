package experiment_test

import (
	"context"
	"testing"

	"github.com/galewatch/galewatch/internal/experiment"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestWatermarkStudy runs the study on a small draw (one window of 100
// events, the default five allowed latenesses and four horizons; with
// seed 3, 3 readings arrive after the 60 s farm published the window, and
// 1 has not arrived an hour after close) on scratch databases, and checks
// what must hold whatever the draw: every final count is exact; every
// reading that arrived after its window's publication is corrected within
// a minute of simulated time; the divergence still open an hour after
// close equals the share not yet arrived by then (no correction waits for
// a batch); publication at 0 s misses at least what it misses at 60 s, and
// that is more than nothing; total work is between 1 and 2 rows read per
// row ingested; the scratch databases are dropped afterwards.
func TestWatermarkStudy(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	env := testdb.New(t, "")
	cfg := experiment.DefaultConfig()
	cfg.Windows, cfg.EventsPerWindow, cfg.Seed = 1, 100, 3
	testdb.Must(t, cfg.Check(), "config")
	scratch, name, drop, err := experiment.Scratch(ctx, env.ControlDSN, cfg)
	testdb.Must(t, err, "scratch databases")
	res, err := experiment.Run(ctx, scratch, cfg)
	drop()
	testdb.Must(t, err, "run")
	if !res.FinalExact {
		t.Fatal("final counts are not exact: some window's final row is not 100 received")
	}
	if c := res.ArrivalToCorrection; c.LateReadings != 3 || c.Uncorrected != 0 || c.P99S > 60 {
		t.Fatalf("arrival → correction %+v: want 3 late readings, none uncorrected, p99 ≤ 60 s", c)
	}
	if len(res.OpenDivergence) != 4 || res.OpenDivergence[0].HoursAfterClose != 1 {
		t.Fatalf("open divergence %+v: want 4 horizons, the first an hour after close", res.OpenDivergence)
	}
	if o := res.OpenDivergence[0]; o.NotArrivedPerMille != 10 || o.DivergencePerMille != o.NotArrivedPerMille {
		t.Fatalf("an hour after close: %+v; want 10 ‰ (1 of 100) not yet arrived, and the open divergence equal to it", o)
	}
	p := res.DivergenceAtPublication
	if len(p) != 5 || p[0].LatenessS != 0 || p[2].LatenessS != 60 || p[0].DivergencePerMille < p[2].DivergencePerMille || p[2].DivergencePerMille <= 0 {
		t.Fatalf("divergence at publication %+v: want 5 latenesses, 0 s first and 60 s third, 0 s ≥ 60 s > 0", p)
	}
	if res.TotalWorkRatio > 2.0 || res.TotalWorkRatio < 1.0 {
		t.Fatalf("total work %.2f rows read per row ingested, want between 1 and 2", res.TotalWorkRatio)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM pg_database WHERE datname = $1 OR datname LIKE $1 || '\_s%'`, name); n != 0 {
		t.Fatalf("%d scratch databases named %s left after the run, want 0", n, name)
	}
}

// TestCheckRefusesUnevenSizes: 30 events do not fill a window's 20 slots
// evenly; 20 are one turbine, and there are two shards; 0 windows is
// nothing to run.
func TestCheckRefusesUnevenSizes(t *testing.T) {
	for _, c := range []struct{ windows, events int }{{1, 30}, {1, 20}, {0, 100}, {1, 0}} {
		cfg := experiment.DefaultConfig()
		cfg.Windows, cfg.EventsPerWindow = c.windows, c.events
		if err := cfg.Check(); err == nil {
			t.Errorf("%d windows of %d events accepted, want a refusal", c.windows, c.events)
		}
	}
	if err := experiment.DefaultConfig().Check(); err != nil {
		t.Errorf("the default config refused: %v", err)
	}
}
