//go:build faults

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// recentLines simulates every turbine of faultFleet over [from, to) with
// exact clocks, each reading arriving 1 s after it was taken.
func recentLines(t *testing.T, from, to time.Time) []string {
	t.Helper()
	plan, err := fleet.Parse("faults", strings.NewReader(faultFleet))
	testdb.Must(t, err, "parse fleet")
	var buf bytes.Buffer
	enc := reading.NewEncoder(reading.NDJSON, &buf)
	for _, farm := range []string{"fa", "fb"} {
		cfg, err := simulate.FarmConfig(plan, farm, from, to, faultSeed)
		testdb.Must(t, err, "simulate %s", farm)
		cfg.ExactClocks = true
		cfg.Delay = []simulate.DelayComponent{{Weight: 1, Kind: "uniform", Param: time.Second}}
		_, err = simulate.Generate(cfg, func(r *reading.Reading) error { return enc.Encode(r) })
		testdb.Must(t, err, "generate %s", farm)
	}
	testdb.Must(t, enc.Flush(), "flush")
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// TestFaultShardHangs: shard s2's server hangs instead of refusing (its
// postmaster and backends stopped with SIGSTOP). Every path that touches it
// gives up within its bound and the other shards go on: /healthz (2 s),
// /readyz (3 s), /metrics (4 s), HTTP ingest (the 20 s write bound: s2's
// lines reported failed, the others stored), CLI ingest (starts without
// s2 after 10 s, then the write bound), the drain (30 s a shard; s1's and
// s3's marks drained meanwhile), the fast path (30 s a shard; fb publishes
// meanwhile) and a rollup job (15 min: it waits, then finishes once s2
// answers). On SIGCONT everything that waited finishes and the day's rows
// equal the clean run's.
func TestFaultShardHangs(t *testing.T) {
	f := newFaultRun(t)
	bin, day, file, total, want, sep, env := f.bin, f.day, f.file, f.total, f.want, f.sep, f.env
	ctx := context.Background()
	srv := serveProc(t, bin, env)
	if sum := ingestCLI(t, bin, env, file); sum.Accepted != total || sum.Failed != 0 {
		t.Fatalf("ingest: %+v, want %d accepted", sum, total)
	}
	waitSettled(t, sep, day, 3*time.Minute)

	s2 := sep.Servers["s2"]
	testdb.Must(t, s2.Pause(), "hang s2")
	pausedAt := time.Now()
	t.Cleanup(func() { _ = s2.Resume() })

	// Each path gives up on s2 at its bound: an answer naming s2 down (or
	// its lines failed) is the bound firing, since without one there would
	// be no answer. How long each took is logged; a limit only catches a
	// hang, and how fast each answers is the soak's and benchmarks' business.
	const (
		healthHang  = 30 * time.Second // normal 2.0 s (HealthTimeout); 30 s catches a hang
		readyHang   = 40 * time.Second // normal 3.0 s (ReadyTimeout); 40 s catches a hang
		metricsHang = time.Minute      // normal 4.0 s (the scrape's bound); a minute catches a hang
		ingestHang  = 5 * time.Minute  // normal 6 s, at most 20 s (the write bound); 5 minutes catch a hang
		failedHang  = 7 * time.Minute  // s2's parts failing in the background, normal 40 s into the hang (their 30 s timeouts); 7 minutes catch a hang
		roundHang   = 30 * time.Second // a publish round's longest, normal 2.0 s (its period, then it detaches); 30 s catches a hang
		drainHang   = time.Minute      // a drain's longest, normal 5.0 s (its period); a minute catches a hang
	)
	code, body, took, err := srv.get("/healthz", healthHang)
	testdb.Must(t, err, "healthz with s2 hung: no answer within %v, a hang", healthHang)
	if wantBody := `{"status":"degraded","control":"ok","shards":{"s1":"ok","s2":"down","s3":"ok"}}`; code != 200 || strings.TrimSpace(string(body)) != wantBody {
		t.Fatalf("healthz with s2 hung: %d %s; want 200 %s", code, body, wantBody)
	}
	bounds := []string{fmt.Sprintf("healthz %v", took.Round(10*time.Millisecond))}
	code, body, took, err = srv.get("/readyz", readyHang)
	testdb.Must(t, err, "readyz with s2 hung: no answer within %v, a hang", readyHang)
	var ready struct {
		Status string
		Shards map[string]struct{ Status string }
	}
	testdb.Must(t, json.Unmarshal(body, &ready), "readyz body %s", body)
	if code != http.StatusServiceUnavailable || ready.Shards["s2"].Status != "unreachable" || ready.Shards["s1"].Status != "ok" || ready.Shards["s3"].Status != "ok" {
		t.Fatalf("readyz with s2 hung: %d %s; want 503, s2 unreachable, s1 and s3 ok", code, body)
	}
	bounds = append(bounds, fmt.Sprintf("readyz %v", took.Round(10*time.Millisecond)))
	code, body, took, err = srv.get("/metrics", metricsHang)
	testdb.Must(t, err, "metrics with s2 hung: no answer within %v, a hang", metricsHang)
	for _, m := range []string{`galewatch_shard_up{shard="s1"} 1`, `galewatch_shard_up{shard="s2"} 0`, `galewatch_shard_up{shard="s3"} 1`, `galewatch_control_up 1`} {
		if code != 200 || !strings.Contains(string(body), m+"\n") {
			t.Fatalf("metrics with s2 hung: %d, no line %q", code, m)
		}
	}
	bounds = append(bounds, fmt.Sprintf("metrics %v", took.Round(10*time.Millisecond)))

	// HTTP ingest of readings from a few minutes ago (late: they mark
	// their windows): s2's lines fail at the write bound, the rest are
	// stored.
	t0 := time.Now().UTC().Truncate(time.Minute).Add(-4 * time.Minute)
	recent := recentLines(t, t0, t0.Add(2*time.Minute))
	wantFailed := map[int]bool{}
	for i, l := range recent {
		if onS2(l) {
			wantFailed[i+1] = true
		}
	}
	code, sum, took := srv.postReadings(recent, ingestHang)
	postedAt := time.Now()
	got := failedSet(sum.FailedLines)
	if code != http.StatusServiceUnavailable || fmt.Sprint(got) != fmt.Sprint(wantFailed) || sum.Accepted != int64(len(recent)-len(wantFailed)) {
		t.Fatalf("HTTP ingest with s2 hung: %d %+v; want 503 with exactly its %d s2 lines failed", code, sum, len(wantFailed))
	}
	bounds = append(bounds, fmt.Sprintf("HTTP ingest %v", took.Round(10*time.Millisecond)))

	// CLI ingest: it starts without s2 and stores the others' lines.
	cliFile := filepath.Join(t.TempDir(), "recent.ndjson")
	testdb.Must(t, os.WriteFile(cliFile, []byte(strings.Join(recent, "\n")+"\n"), 0o644), "write")
	start := time.Now()
	cmd := exec.Command(bin, "ingest", "--json", cliFile)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	took = time.Since(start)
	var cliSum ingest.Summary
	if err := json.Unmarshal(stdout.Bytes(), &cliSum); err != nil {
		t.Fatalf("CLI ingest with s2 hung printed %q (stderr %q): %v", stdout.String(), stderr.String(), err)
	}
	if fmt.Sprint(failedSet(cliSum.FailedLines)) != fmt.Sprint(wantFailed) || cliSum.Duplicate != int64(len(recent)-len(wantFailed)) ||
		!strings.Contains(stderr.String(), "shard s2 does not answer") {
		t.Fatalf("CLI ingest with s2 hung: %+v, stderr %q; want s2 skipped at start, its lines failed, the rest duplicates", cliSum, stderr.String())
	}
	bounds = append(bounds, fmt.Sprintf("CLI ingest %v", took.Round(10*time.Millisecond)))

	// A rollup of fa's day, asked for now: s1's job finishes, s2's waits.
	out, code2 := runCLI(t, bin, env, "rollup", "--farm", "fa", "--from", day.String())
	if code2 != 0 {
		t.Fatalf("rollup --farm fa with s2 hung: exit %d\n%s", code2, out)
	}

	// The drain (30 s a shard) and the fast path (30 s a shard) go on for
	// the other shards: fb's windows of the readings just sent are
	// corrected, and fb publishes new windows. Neither waits for s2: a
	// round and a drain return at their period with s2's part still going
	// on, which fails later in the background (had they waited, the
	// failure would be the round's or the drain's own).
	waitUntil(t, 2*time.Minute, "fb's recent windows corrected while s2 hangs", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'fb' AND path = 'final' AND window_start >= $1 AND received = 6`, t0)
		return n == 2, fmt.Sprintf("%d of 2", n)
	})
	waitUntil(t, 2*time.Minute, "fb publishing while s2 hangs", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'fb' AND path = 'fast' AND computed_at > $1`, pausedAt)
		return n > 0, fmt.Sprintf("%d fb windows published since s2 hung", n)
	})
	srv.waitFor("fast path: a farm published in the background failed", failedHang)
	srv.waitFor("drain: a shard drained in the background failed", failedHang)
	bounds = append(bounds, fmt.Sprintf("s2's parts failed in the background by %v into the hang", time.Since(pausedAt).Round(time.Second)))
	// How soon fb was published and corrected, for the log.
	var lagMs, correctedMs int64
	testdb.Must(t, sep.Control.QueryRow(ctx, `SELECT max(lag_ms) FROM publish_lag WHERE farm_id = 'fb' AND published_at > $1`, pausedAt).Scan(&lagMs), "publish lag")
	testdb.Must(t, sep.Control.QueryRow(ctx, `SELECT (extract(epoch FROM max(computed_at) - $2) * 1000)::bigint FROM farm_window WHERE farm_id = 'fb' AND path = 'final' AND window_start >= $1`, t0, postedAt).Scan(&correctedMs), "corrected")
	bounds = append(bounds, fmt.Sprintf("fb publish lag %d ms, fb corrected %d ms after its readings", lagMs, correctedMs))
	waitUntil(t, time.Minute, "fa's rollup on s1 while s2 hangs", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'reason' = 'manual' AND args->>'shard' = 's1' AND state = 'completed'`)
		return n == 1, fmt.Sprintf("%d of 1 completed", n)
	})
	if n := testdb.Int(t, sep.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'reason' = 'manual' AND args->>'shard' = 's2' AND state = 'completed'`); n != 0 {
		t.Fatal("fa's rollup on s2 completed while s2 hangs")
	}
	hung := time.Since(pausedAt)

	// SIGCONT: what waited finishes; the failed lines are re-sent.
	resumedAt := time.Now()
	testdb.Must(t, s2.Resume(), "resume s2")
	// Meanwhile no round and no drain hung with s2: each waited at most its
	// period for s2's part, which went on in the background.
	rounds := map[string][2]int64{}
	rows, err := sep.Control.Query(ctx, `SELECT kind, count(*), max(extract(epoch FROM finalized_at - attempted_at) * 1000)::bigint
	    FROM river_job WHERE kind IN ('publish_windows', 'drain_dirty') AND attempted_at > $1 AND finalized_at < $2 GROUP BY kind`, pausedAt, resumedAt)
	testdb.Must(t, err, "rounds")
	for rows.Next() {
		var kind string
		var n, longest int64
		testdb.Must(t, rows.Scan(&kind, &n, &longest), "scan")
		rounds[kind] = [2]int64{n, longest}
	}
	if p, d := rounds["publish_windows"], rounds["drain_dirty"]; p[0] == 0 || d[0] == 0 || p[1] > roundHang.Milliseconds() || d[1] > drainHang.Milliseconds() {
		t.Fatalf("while s2 hung (%v): %d publish rounds, the longest %d ms; %d drains, the longest %d ms; want some of each, none hung (past %v, %v)", hung, p[0], p[1], d[0], d[1], roundHang, drainHang)
	}
	bounds = append(bounds, fmt.Sprintf("%d publish rounds (longest %d ms), %d drains (longest %d ms)", rounds["publish_windows"][0], rounds["publish_windows"][1], rounds["drain_dirty"][0], rounds["drain_dirty"][1]))
	code, again, _ := srv.postReadings(pick(recent, wantFailed), time.Minute)
	if code != 200 || again.Accepted+again.Duplicate != int64(len(wantFailed)) {
		t.Fatalf("re-send after SIGCONT: %d %+v", code, again)
	}
	settle := waitSettled(t, sep, day, 3*time.Minute)
	waitUntil(t, time.Minute, "fa's rollup on s2 after SIGCONT", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'reason' = 'manual' AND state = 'completed'`)
		return n == 2, fmt.Sprintf("%d of 2 completed", n)
	})
	assertSameFinals(t, readFinals(t, sep.Control, day), want)
	// The recent windows: every turbine's two readings of each.
	waitUntil(t, time.Minute, "the recent windows whole", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM window_provenance WHERE window_start >= $1 AND window_start < $2
		    AND received = CASE farm_id WHEN 'fa' THEN 12 ELSE 6 END`, t0, t0.Add(2*time.Minute))
		return n == 4, fmt.Sprintf("%d of 4 windows with every reading", n)
	})
	assertFastPublishedOnce(t, sep.Control, nil)
	assertContiguousFast(t, sep.Control)
	if code, body, _, err := srv.get("/healthz", 10*time.Second); err != nil || code != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Fatalf("healthz after SIGCONT: %d %s %v", code, body, err)
	}
	t.Logf("s2 hung for %v: %s; settled %v after SIGCONT", hung.Round(time.Second), strings.Join(bounds, ", "), settle.Round(100*time.Millisecond))
	_ = ctx
}
