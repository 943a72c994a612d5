package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/galewatch/galewatch/internal/experiment"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestExperimentWatermarkCommand runs `orchestrator experiment watermark`
// as a process on a small draw (one window of 100 events, the default five
// allowed latenesses and four horizons; with seed 3, 3 readings arrive
// after the 60 s farm published the window, and 1 has not arrived an hour
// after close) and checks what must hold whatever the draw: the JSON object
// carries the keys the issue names; every final count is exact; every
// reading that arrived after its window's publication is corrected within
// a minute of simulated time; the divergence still open an hour after
// close equals the share not yet arrived by then (no correction waits for
// a batch); publication at 0 s misses at least what it misses at 60 s, and
// that is more than nothing; total work is between 1 and 2 rows read per
// row ingested; the scratch databases are dropped afterwards; a bad
// --events is refused naming the flag.
func TestExperimentWatermarkCommand(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	env := testdb.New(t, "")
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"experiment", "watermark"}, args...)...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+env.ControlDSN)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	out, stderr, err := run("--windows", "1", "--events", "100", "--seed", "3", "--json")
	if err != nil {
		t.Fatalf("experiment: %v\n%s", err, stderr)
	}
	t.Logf("stderr (progress): %s", stderr)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, out)
	}
	for _, k := range []string{"divergence_at_publication", "open_divergence_after_close", "arrival_to_correction", "total_work_ratio", "final_counts_exact"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("the JSON object has no %q: %s", k, out)
		}
	}
	var res experiment.Result
	testdb.Must(t, json.Unmarshal([]byte(out), &res), "decode the result")
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
	name := regexp.MustCompile(`galewatch_experiment_[0-9a-f]{8}`).FindString(stderr)
	if name == "" {
		t.Fatalf("the command did not name its scratch databases: %s", stderr)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM pg_database WHERE datname = $1 OR datname LIKE $1 || '\_s%'`, name); n != 0 {
		t.Fatalf("%d scratch databases named %s left after the run, want 0", n, name)
	}
	if _, stderr, err := run("--events", "30"); err == nil || !strings.Contains(stderr, "--events") {
		t.Fatalf("--events 30: %v, %q; want a refusal naming --events", err, stderr)
	}
}
