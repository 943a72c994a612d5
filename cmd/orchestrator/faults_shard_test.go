//go:build faults

package main

import (
	"bufio"
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
	"syscall"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// s2Turbines are faultFleet's turbines on shard s2.
var s2Turbines = []string{"FA-004", "FA-005", "FA-006"}

func onS2(line string) bool {
	for _, id := range s2Turbines {
		if strings.Contains(line, `"turbine_id":"`+id+`"`) {
			return true
		}
	}
	return false
}

// fileLines reads an NDJSON file's lines.
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	testdb.Must(t, err, "read %s", path)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// postReadings posts NDJSON lines to serve and returns the status and summary.
func (o *orchestrator) postReadings(lines []string, within time.Duration) (int, ingest.Summary, time.Duration) {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	body := strings.Join(lines, "\n") + "\n"
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, o.base+"/v1/readings", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-ndjson")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	testdb.Must(o.t, err, "POST /v1/readings (no answer within %v is a hang)", within)
	defer resp.Body.Close()
	var sum ingest.Summary
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &sum); err != nil {
		o.t.Fatalf("POST /v1/readings answered %d %q: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, sum, time.Since(start)
}

// failedSet expands failed line ranges into the set of line numbers.
func failedSet(ranges []ingest.LineRange) map[int]bool {
	out := map[int]bool{}
	for _, r := range ranges {
		for l := r.From; l <= r.To; l++ {
			out[int(l)] = true
		}
	}
	return out
}

// pick returns the lines (1-based numbers) in set, in order.
func pick(lines []string, set map[int]bool) []string {
	var out []string
	for i, l := range lines {
		if set[i+1] {
			out = append(out, l)
		}
	}
	return out
}

// storedKeys is every reading key (turbine, recorded_at) on the shards.
func storedKeys(t *testing.T, sep *testdb.Separate) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, name := range sep.Shards.Names() {
		rows, err := sep.Shards.Pool(name).Query(context.Background(),
			`SELECT turbine_id || ' ' || to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') FROM readings`)
		testdb.Must(t, err, "readings of %s", name)
		for rows.Next() {
			var k string
			testdb.Must(t, rows.Scan(&k), "scan")
			out[k] = true
		}
		testdb.Must(t, rows.Err(), "readings of %s", name)
	}
	return out
}

// lineKey is the reading key of an NDJSON line, as storedKeys spells it.
func lineKey(t *testing.T, line string) string {
	t.Helper()
	var r struct {
		TurbineID  string    `json:"turbine_id"`
		RecordedAt time.Time `json:"recorded_at"`
	}
	testdb.Must(t, json.Unmarshal([]byte(line), &r), "line %q", line)
	return r.TurbineID + " " + r.RecordedAt.UTC().Format("2006-01-02T15:04:05.000000")
}

// assertAckedStored: every line not reported failed is stored.
func assertAckedStored(t *testing.T, what string, lines []string, failed map[int]bool, stored map[string]bool) {
	t.Helper()
	for i, l := range lines {
		if !failed[i+1] && !stored[lineKey(t, l)] {
			t.Fatalf("%s: line %d was acknowledged (not in failed_lines) and is not stored: %s", what, i+1, l)
		}
	}
}

// TestFaultShardStopped: shard s2's server is stopped (as a crash would:
// pg_ctl stop -m immediate) in the middle of a CLI ingest, stays down
// through an HTTP ingest, is started, and is stopped again between the
// control and shard commits of one of its rollups. Each ingest reports
// exactly the lines it did not store (the HTTP body's: exactly its s2
// lines; every line acknowledged by either is stored), the sender re-sends
// them, farm fb (shard s3) and fa's s1 rows carry on and fb publishes while
// s2 is down, and after recovery the day's rows equal the clean run's.
func TestFaultShardStopped(t *testing.T) {
	f := newFaultRun(t)
	bin, day, file, total, want, sep, env := f.bin, f.day, f.file, f.total, f.want, f.sep, f.env
	ctx := context.Background()
	s2 := sep.Servers["s2"]
	// The first recompute of the data on s2 waits between its two commits
	// for the test to stop s2 (then SIGUSR1 lets it go on).
	srv := serveProc(t, bin, append(env, faultpoint.Env+"="+faultpoint.RollupBetweenCommits+"=dirty+/s2"))

	all := fileLines(t, file)
	if int64(len(all)) != total {
		t.Fatalf("%d lines in the file, %d simulated", len(all), total)
	}
	// The HTTP sender's lines: 1,200 of fa's (s1 and s2 turbines); the CLI
	// sends the rest.
	httpLines := all[12000:13200]
	cliLines := append(append([]string{}, all[:12000]...), all[13200:]...)

	// 1. A CLI ingest from stdin; s2 stops once some of its rows are in.
	cmd := exec.Command(bin, "ingest", "--json", "-")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	testdb.Must(t, err, "stdin")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	testdb.Must(t, cmd.Start(), "start ingest")
	w := bufio.NewWriter(stdin)
	next := 0
	send := func(n int) {
		for ; n > 0 && next < len(cliLines); n-- {
			w.WriteString(cliLines[next] + "\n")
			next++
		}
		testdb.Must(t, w.Flush(), "write to ingest")
	}
	s2Pool := sep.Shards.Pool("s2")
	deadline := time.Now().Add(time.Minute)
	for testdb.Int(t, s2Pool, `SELECT count(*) FROM readings`) == 0 {
		if time.Now().After(deadline) || next == len(cliLines) {
			t.Fatalf("s2 stored nothing after %d lines", next)
		}
		send(50) // a sender trickling its file: live batches flush as time passes
		time.Sleep(20 * time.Millisecond)
	}
	testdb.Must(t, s2.StopImmediate(ctx), "stop s2")
	// A publication that read its clock after this found s2 gone.
	stoppedAt := time.Now()
	send(len(cliLines))
	stdin.Close()
	cliErr := cmd.Wait()
	var cliSum ingest.Summary
	if err := json.Unmarshal(stdout.Bytes(), &cliSum); err != nil {
		t.Fatalf("ingest printed %q (stderr %q): %v", stdout.String(), stderr.String(), err)
	}
	if ee, ok := cliErr.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("CLI ingest with s2 stopped: exit %v, want 1; summary %+v", cliErr, cliSum)
	}
	cliFailed := failedSet(cliSum.FailedLines)
	if cliSum.Accepted+cliSum.Failed != int64(len(cliLines)) || int64(len(cliFailed)) != cliSum.Failed || cliSum.Failed == 0 {
		t.Fatalf("CLI summary %+v does not account for its %d lines", cliSum, len(cliLines))
	}
	for l := range cliFailed {
		if !onS2(cliLines[l-1]) {
			t.Fatalf("CLI line %d failed and is not an s2 turbine's: %s", l, cliLines[l-1])
		}
	}

	// 2. While s2 is down: an HTTP body fails exactly its s2 lines, at once.
	code, httpSum, took := srv.postReadings(httpLines, time.Minute)
	wantFailed := map[int]bool{}
	for i, l := range httpLines {
		if onS2(l) {
			wantFailed[i+1] = true
		}
	}
	gotFailed := failedSet(httpSum.FailedLines)
	if code != http.StatusServiceUnavailable || fmt.Sprint(gotFailed) != fmt.Sprint(wantFailed) ||
		httpSum.Accepted != int64(len(httpLines)-len(wantFailed)) || httpSum.Failed != int64(len(wantFailed)) {
		t.Fatalf("HTTP with s2 down: %d %+v; want 503 with exactly its %d s2 lines failed", code, httpSum, len(wantFailed))
	}
	t.Logf("s2 down: CLI %d accepted, %d failed (%d ranges); HTTP %d accepted, %d failed in %v",
		cliSum.Accepted, cliSum.Failed, len(cliSum.FailedLines), httpSum.Accepted, httpSum.Failed, took.Round(time.Millisecond))

	// The other shards carry on: fb's day (s3) and fa's s1 turbines are
	// rolled up, exactly as in the clean run, while s2 is down; fb
	// publishes its windows and fa (half of it on s2) does not.
	wantRows := map[string]bool{}
	for _, r := range want.TurbineDays {
		if strings.HasPrefix(r, day.String()+" FB-") || strings.HasPrefix(r, day.String()+" FA-00") && !strings.Contains(r, " fa s2 ") {
			wantRows[r] = true
		}
	}
	waitUntil(t, 2*time.Minute, "fb's and fa's s1 rows of the day while s2 is down", func() (bool, string) {
		got := readFinals(t, sep.Control, day)
		n := 0
		for _, r := range got.TurbineDays {
			if wantRows[r] {
				n++
			}
		}
		return n == len(wantRows), fmt.Sprintf("%d of %d rows as in the clean run", n, len(wantRows))
	})
	waitUntil(t, 2*time.Minute, "fb publishing while s2 is down", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'fb' AND path = 'fast' AND computed_at > $1`, stoppedAt)
		return n > 0, fmt.Sprintf("%d fb windows published since s2 stopped", n)
	})
	if n := testdb.Int(t, sep.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'fa' AND path = 'fast' AND computed_at > $1`, stoppedAt); n != 0 {
		t.Fatalf("fa published %d windows while s2, holding half its turbines, was down", n)
	}

	// 3. s2 back: the marks of the lines it stored before it stopped are
	// drained, and s2 stops again between the control and shard commits
	// of their recompute: the job fails, is retried once s2 is back, and
	// the marks its shard side had claimed (rolled back) are recomputed.
	testdb.Must(t, s2.Up(ctx), "start s2")
	reached := srv.waitFor("galewatch faultpoint "+faultpoint.RollupBetweenCommits+" reached", 2*time.Minute)
	testdb.Must(t, s2.StopImmediate(ctx), "stop s2 mid-rollup")
	// Started again before the job goes on, so that its retry (a second
	// later) finds the server: the job's shard transaction died with the
	// server all the same, and its commit fails.
	testdb.Must(t, s2.Up(ctx), "start s2 again")
	testdb.Must(t, srv.cmd.Process.Signal(syscall.SIGUSR1), "release the rollup")
	waitUntil(t, time.Minute, "the held s2 rollup to fail", func() (bool, string) {
		n := testdb.Int(t, sep.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'shard' = 's2' AND cardinality(errors) > 0`)
		return n > 0, fmt.Sprintf("%d failed s2 rollups", n)
	})

	// 4. s2 back, the senders re-send what was not stored (after the
	// held recompute: a writer of the same farm-day waits for the claims of
	// a recompute in progress, and this one is held on purpose).
	code, again, _ := srv.postReadings(pick(httpLines, gotFailed), time.Minute)
	if code != http.StatusOK || again.Accepted+again.Duplicate != int64(len(gotFailed)) || again.Failed != 0 {
		t.Fatalf("HTTP re-send: %d %+v, want 200 with %d stored", code, again, len(gotFailed))
	}
	resend := filepath.Join(t.TempDir(), "resend.ndjson")
	testdb.Must(t, os.WriteFile(resend, []byte(strings.Join(pick(cliLines, cliFailed), "\n")+"\n"), 0o644), "write re-send")
	cliAgain := ingestCLI(t, bin, env, resend)
	// A batch cut by the stop may have committed and failed to say so:
	// re-sent, it counts as duplicate.
	if cliAgain.Failed != 0 || cliAgain.Accepted+cliAgain.Duplicate != cliSum.Failed {
		t.Fatalf("CLI re-send: %+v, want %d accepted or duplicate", cliAgain, cliSum.Failed)
	}
	stored := storedKeys(t, sep)
	assertAckedStored(t, "CLI", cliLines, cliFailed, stored)
	assertAckedStored(t, "HTTP", httpLines, gotFailed, stored)
	if int64(len(stored)) != total {
		t.Fatalf("%d readings stored after the re-sends, want the %d of the file", len(stored), total)
	}

	settle := waitSettled(t, sep, day, 3*time.Minute)
	assertSameFinals(t, readFinals(t, sep.Control, day), want)
	assertFastPublishedOnce(t, sep.Control, nil)
	assertContiguousFast(t, sep.Control)
	t.Logf("%s; s2 stopped under it and started; settled %v later; %s", reached, settle.Round(100*time.Millisecond), fmtTotals(want))
}

// waitUntil polls cond every 200 ms until it holds or within passes.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	last := ""
	for time.Since(start) < within {
		ok, why := cond()
		if ok {
			return time.Since(start)
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("waiting for %s: not within %v (%s)", what, within, last)
	return 0
}
