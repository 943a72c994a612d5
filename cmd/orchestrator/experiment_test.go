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
// as a process on the smallest draw (one window of 40 events): the JSON
// object carries the keys the study reports, its final counts are exact,
// the scratch databases it names are dropped afterwards, and a bad
// --events is refused naming the flag. What the study finds is
// internal/experiment's TestWatermarkStudy.
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
	out, stderr, err := run("--windows", "1", "--events", "40", "--json")
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
		t.Fatal("final counts are not exact: some window's final row is not 40 received")
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
