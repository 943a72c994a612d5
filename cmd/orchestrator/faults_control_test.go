//go:build faults

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// sendUntilStored posts lines to serve and re-sends what was not stored
// (the failed lines of a 503, or the whole body after a connection error
// or a 503 without any), as a sender honouring Retry-After does, until the
// body is stored or a minute has passed. It returns how many re-sends it
// made.
func sendUntilStored(base string, lines []string) (int, error) {
	resent := 0
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/readings", strings.NewReader(strings.Join(lines, "\n")+"\n"))
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		var sum ingest.Summary
		code := 0
		if err == nil {
			code = resp.StatusCode
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			err = json.Unmarshal(raw, &sum)
		}
		cancel()
		switch {
		case err == nil && code == http.StatusOK:
			return resent, nil
		case err == nil && code == http.StatusServiceUnavailable && sum.Failed > 0:
			lines = pick(lines, failedSet(sum.FailedLines))
		case time.Now().After(deadline):
			return resent, fmt.Errorf("not stored within a minute: last answer %d %+v, %v", code, sum, err)
		default:
			time.Sleep(time.Second) // Retry-After
		}
		resent++
	}
}

// TestFaultControlRestart: the control database's server is restarted (as
// after a crash: pg_ctl stop -m immediate, then started, with recovery)
// while a sender posts the day over HTTP in 1,000-line bodies and serve and
// a second `work` process run the drain, the fast path and the rollups.
// Nothing is restarted but the database: the sender's bodies are all
// stored (valid lines need only their shard), both processes reconnect by
// themselves and finish the work, and the day's rows equal the clean run's.
func TestFaultControlRestart(t *testing.T) {
	f := newFaultRun(t)
	bin, day, file, total, want, sep, env := f.bin, f.day, f.file, f.total, f.want, f.sep, f.env
	ctx := context.Background()
	// Each process holds its first recompute of the data with its control
	// and shard transactions open, so that the restart cuts jobs in the
	// middle; both go on (SIGUSR1) once the database is back.
	held := append(env[:len(env):len(env)], faultpoint.Env+"="+faultpoint.RollupBeforeControlCommit+"=dirty")
	srv := serveProc(t, bin, held)
	worker := startProcess(t, bin, held, "work")

	lines := fileLines(t, file)
	var bodies, resent atomic.Int64
	done := make(chan error, 1)
	proceed := make(chan struct{})
	go func() {
		// Nine bodies at once, then (once the test has seen them rolled up)
		// one every half second, as a live sender would: the restart
		// falls in the middle of them.
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < len(lines); i += 1000 {
			if i == 9000 {
				<-proceed
			}
			if i > 9000 {
				<-tick.C
			}
			n, err := sendUntilStored(srv.base, lines[i:min(i+1000, len(lines))])
			if err != nil {
				done <- fmt.Errorf("body %d: %w", i/1000, err)
				return
			}
			resent.Add(int64(n))
			bodies.Add(1)
		}
		done <- nil
	}()
	// Under load: a third of the bodies in, and a recompute of them held
	// in the middle.
	reached := "galewatch faultpoint " + faultpoint.RollupBeforeControlCommit + " reached"
	waitUntil(t, 2*time.Minute, "load before the restart", func() (bool, string) {
		n := srv.count(reached) + worker.count(reached)
		return bodies.Load() >= 9 && n > 0, fmt.Sprintf("%d bodies stored, %d recompute(s) held", bodies.Load(), n)
	})
	close(proceed)
	waitUntil(t, time.Minute, "the sender under way again", func() (bool, string) {
		return bodies.Load() >= 12, fmt.Sprintf("%d bodies stored", bodies.Load())
	})
	var running int64
	_ = sep.Control.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state = 'running'`).Scan(&running)
	atBodies := bodies.Load()
	start := time.Now()
	testdb.Must(t, sep.ControlServer.StopImmediate(ctx), "stop the control server")
	testdb.Must(t, sep.ControlServer.Up(ctx), "start the control server")
	down := time.Since(start)
	heldJobs := srv.count(reached) + worker.count(reached)
	for _, o := range []*orchestrator{srv, worker} {
		testdb.Must(t, o.cmd.Process.Signal(syscall.SIGUSR1), "let the held recomputes go on")
	}

	select {
	case err := <-done:
		testdb.Must(t, err, "sender")
	case <-time.After(3 * time.Minute):
		t.Fatalf("the sender did not finish within 3 minutes (%d bodies)", bodies.Load())
	}
	if n := testdb.Int(t, sep.Control, `SELECT count(*) FROM ingest_reject`); n != 0 {
		t.Fatalf("%d rejects, want none", n)
	}
	settle := waitSettled(t, sep, day, 3*time.Minute)
	if got := int64(len(storedKeys(t, sep))); got != total {
		t.Fatalf("%d readings stored, want %d", got, total)
	}
	assertSameFinals(t, readFinals(t, sep.Control, day), want)
	assertFastPublishedOnce(t, sep.Control, nil)
	assertContiguousFast(t, sep.Control)
	for _, o := range []*orchestrator{srv, worker} {
		select {
		case <-o.exited:
			t.Fatalf("%v exited during the test", o.cmd.Args[1:])
		default:
		}
	}
	if code, body, _, err := srv.get("/healthz", 10*time.Second); err != nil || code != 200 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Fatalf("healthz after the restart: %d %s %v", code, body, err)
	}
	retried := testdb.Int(t, sep.Control, `SELECT count(*) FROM river_job WHERE cardinality(errors) > 0`)
	if retried < int64(heldJobs) {
		t.Fatalf("%d job(s) have errors, want at least the %d cut by the restart (failed, then retried)", retried, heldJobs)
	}
	t.Logf("control restarted in %v with %d of %d bodies stored and %d job(s) running (%d recompute(s) held mid-transaction); the sender re-sent %d body part(s); %d job(s) had errors and were retried; settled %v after the sender finished",
		down.Round(10*time.Millisecond), atBodies, (len(lines)+999)/1000, running, heldJobs, resent.Load(), retried, settle.Round(100*time.Millisecond))
}
