package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/report"
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

// TestRollupWaitLeavesAReadDayFinal: every hour of north's 10 September
// (both turbines, 48 of 48 slots) ingested two days later, so that the
// ingest marks the day on s1; `rollup --wait` alone then leaves it final:
// it drains the marks the day waits on before it returns. Before, the day
// stayed provisional ("shard not drained (marked on s1 …)") until a
// `work --until-idle`.
func TestRollupWaitLeavesAReadDayFinal(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, reportFleet)
	now := time.Date(2026, 9, 12, 9, 30, 0, 0, time.UTC)
	run := func(args ...string) (stdout, out string) {
		t.Helper()
		m := &Main{Config: testConfig(env), Now: func() time.Time { return now }}
		defer m.Close()
		cmd := m.Command()
		cmd.SetArgs(args)
		var buf bytes.Buffer
		cmd.SetOut(&buf)
		ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
		defer cancel()
		var err error
		stdout = captureStdout(t, func() { err = cmd.ExecuteContext(ctx) })
		testdb.Must(t, err, "orchestrator %s", strings.Join(args, " "))
		return stdout, buf.String()
	}
	london, err := time.LoadLocation("Europe/London")
	testdb.Must(t, err, "zone")
	var day strings.Builder
	for h := range 24 {
		at := time.Date(2026, 9, 10, h, 0, 5, 0, london)
		for _, id := range []string{"N-001", "N-002"} {
			fmt.Fprintf(&day, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
				id, at.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
		}
	}
	file := filepath.Join(t.TempDir(), "day.ndjson")
	testdb.Must(t, os.WriteFile(file, []byte(day.String()), 0o600), "write")
	run("ingest", file)
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM dirty_mark_announced WHERE farm_id = 'north' AND day = '2026-09-10'`); n == 0 {
		t.Fatalf("the ingest announced no mark of north's 10 September: nothing for rollup --wait to drain")
	}

	printed, _ := run("rollup", "--farm", "north", "--from", "2026-09-10", "--wait")
	_, js := run("report", "monthly", "--farm", "north", "--month", "2026-09", "--format", "json")
	var m report.Month
	testdb.Must(t, json.Unmarshal([]byte(js), &m), "decode the report")
	if len(m.Days) != 30 {
		t.Fatalf("report: %d days, want 30", len(m.Days))
	}
	if d := m.Days[9]; d.Status != report.StatusFinal || d.Pending || d.Received == nil || *d.Received != 48 {
		t.Fatalf("10 September after rollup --wait: %s (%s), pending %v; want final with 48 received\nrollup --wait printed:\n%s",
			d.Status, d.Why, d.Pending, printed)
	}
	if !strings.Contains(printed, "north            2026-09-10        2           48           48           48") || strings.Contains(printed, "still pending") {
		t.Fatalf("rollup --wait printed:\n%s\nwant the day's row, 48 of 48, and nothing still pending", printed)
	}
}
