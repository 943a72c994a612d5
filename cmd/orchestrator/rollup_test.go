package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestRollupWaitBesideServe is the normal production setup: `serve` runs
// and works the queues; `rollup --wait` enqueues a farm-day and must return
// however the jobs are shared between the two processes (before, it
// listened only to its own client's events and hung whenever serve
// completed a job). A hang is what this catches: each round has 2 minutes,
// far beyond a normal round. How fast the jobs are is make bench-rollup's
// business.
func TestRollupWaitBesideServe(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	env := testdb.New(t, "")
	fleetFile := filepath.Join(t.TempDir(), "fleet.yaml")
	testdb.Must(t, os.WriteFile(fleetFile, []byte(smallArdnaveFleet), 0o644), "write fleet")
	procEnv := append(os.Environ(), "DATABASE_URL="+env.ControlDSN)
	run := func(timeout time.Duration, args ...string) (string, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = procEnv
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("orchestrator %s did not return within %s:\n%s", strings.Join(args, " "), timeout, out)
		}
		if err != nil {
			t.Fatalf("orchestrator %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), time.Since(start)
	}
	run(2*time.Minute, "fleet", "apply", "--effective-from", testFleetSince, fleetFile)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := startServe(ctx, t, bin, procEnv)

	for round := 1; round <= 3; round++ {
		out, took := run(2*time.Minute, "rollup", "--farm", "ardnave-point", "--from", "2026-08-01", "--to", "2026-08-02", "--wait")
		if !strings.Contains(out, "enqueued 6 rollup_day job(s)") || !strings.Contains(out, "ardnave-point    2026-08-02        6") {
			t.Fatalf("round %d: rollup --wait printed:\n%s\nwant 6 jobs and both days with 6 turbines", round, out)
		}
		t.Logf("round %d: rollup --wait returned after %s beside serve", round, took)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'reason' = 'manual' AND state = 'completed'`); n != 18 {
		t.Fatalf("completed manual rollup_day jobs = %d, want 18", n)
	}

	// serve mounts /readyz and /metrics.
	if code, body := httpGet(t, base+"/readyz"); code != 200 || !strings.HasPrefix(body, `{"status":"ready"`) {
		t.Fatalf("serve's /readyz: %d %s, want 200 and ready", code, body)
	}
	code, body := httpGet(t, base+"/metrics")
	for _, want := range []string{"\ngalewatch_control_up 1\n", "\ngalewatch_shard_up{shard=\"s4\"} 1\n", "\ngalewatch_ingest_rows_total{lane=\"live\",outcome=\"accepted\"} 0\n"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("serve's /metrics: %d, want 200 and %q in:\n%.2000s", code, want, body)
		}
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	testdb.Must(t, err, "GET %s", url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	testdb.Must(t, err, "read %s", url)
	return resp.StatusCode, string(b)
}

// smallArdnaveFleet is testdb.ArdnaveFleet's shape (Ardnave Point over
// three shards, Kilmore Sands alone on a fourth) with two turbines a shard
// instead of 440 in all: what the rollup and work tests prove (rollup
// --wait returns beside serve; work --until-idle drains, rolls up and
// exits) does not depend on the size of a day, and an empty day still
// writes a turbine_window row per turbine-minute (440 turbines: 633,600).
const smallArdnaveFleet = `
shards: [{name: s1}, {name: s2}, {name: s3}, {name: s4}]
farms:
  - id: ardnave-point
    name: Ardnave Point
    timezone: Europe/London
    turbines:
      - {prefix: AP-, from: 1, to: 2, shard: s1}
      - {prefix: AP-, from: 3, to: 4, shard: s2}
      - {prefix: AP-, from: 5, to: 6, shard: s3}
  - id: kilmore-sands
    name: Kilmore Sands
    timezone: Europe/Dublin
    turbines:
      - {prefix: KS-, from: 1, to: 2, shard: s4}
`
