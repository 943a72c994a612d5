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

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestExperimentWatermarkCommand runs `orchestrator experiment watermark`
// as a process on a small draw (one window of 100 events; with seed 3, 3 of
// them arrive after the 60 s farm published it, and are corrected): the
// JSON object carries the keys the issue names, the final counts are
// exact, the scratch databases are dropped afterwards, and a bad --events
// is refused naming the flag.
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
	var res struct {
		Publication []struct {
			LatenessS  *int     `json:"lateness_s"`
			Divergence *float64 `json:"divergence_per_mille"`
		} `json:"divergence_at_publication"`
		Open []struct {
			Hours *float64 `json:"hours_after_close"`
		} `json:"open_divergence_after_close"`
		Correction struct {
			Uncorrected *int `json:"uncorrected"`
		} `json:"arrival_to_correction"`
		Ratio *float64 `json:"total_work_ratio"`
		Exact bool     `json:"final_counts_exact"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output is not one JSON object: %v\n%s", err, out)
	}
	if len(res.Publication) != 5 || res.Publication[2].LatenessS == nil || *res.Publication[2].LatenessS != 60 || res.Publication[2].Divergence == nil ||
		len(res.Open) != 4 || res.Ratio == nil || res.Correction.Uncorrected == nil || *res.Correction.Uncorrected != 0 || !res.Exact {
		t.Fatalf("experiment JSON %s: want 5 lateness rows (60 s third), 4 horizons, total_work_ratio, none uncorrected, final counts exact", out)
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
