package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestIngestThenWorkUntilIdle runs the real commands in-process: apply a
// fleet (smallArdnaveFleet: 6 Ardnave Point turbines over three shards, 2
// of Kilmore Sands on a fourth), simulate two hours of Kilmore Sands into
// ingest, then `work --until-idle` (the clock two days later) drains the
// dirty marks, runs the rollups and exits; `rollup --wait` recomputes the
// same day again.
func TestIngestThenWorkUntilIdle(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	dir := t.TempDir()
	fleetFile := filepath.Join(dir, "fleet.yaml")
	testdb.Must(t, os.WriteFile(fleetFile, []byte(smallArdnaveFleet), 0o644), "write fleet")
	later := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	run := func(args ...string) {
		t.Helper()
		testdb.Must(t, runMain(&Main{Config: testConfig(env), Now: func() time.Time { return later }}, args...), "orchestrator %v", args)
	}
	run("fleet", "apply", "--effective-from", testFleetSince, fleetFile)
	run("simulate", "--fleet", fleetFile, "--farm", "kilmore-sands", "--from", "2026-08-01T10:00:00Z", "--to", "2026-08-01T12:00:00Z", "--exact-clocks", "--ingest")
	out := captureStdout(t, func() { run("work", "--until-idle") })
	// It says what it did: the jobs it ran and the farm days it wrote.
	for _, want := range []string{"ran: ", "rollup_day 5", "rollup_schedule 2", "kilmore-sands    2026-08-01        2", "ardnave-point    2026-08-02        6"} {
		if !strings.Contains(out, want) {
			t.Fatalf("work --until-idle printed:\n%s\nwant it to contain %q", out, want)
		}
	}

	if n := testdb.Int(t, env.Control, `SELECT received FROM turbine_day WHERE turbine_id = 'KS-001' AND day = '2026-08-01'`); n != 3600 {
		t.Fatalf("KS-001 received %d after work --until-idle, want 3600", n)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'kilmore-sands' AND day = '2026-08-01'`); n != 2 {
		t.Fatalf("kilmore-sands has %d turbine_day rows for 1 August, want 2", n)
	}
	// On start the nightly schedule rolls up "yesterday" (2 August here)
	// for every farm, so a process that was down at 02:00 misses nothing.
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_day WHERE day = '2026-08-02'`); n != 8 {
		t.Fatalf("turbine_day rows for 2 August = %d, want 8 (every turbine, received 0)", n)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND state <> 'completed'`); n != 0 {
		t.Fatalf("%d rollup_day jobs are not completed after --until-idle", n)
	}
	run("rollup", "--farm", "kilmore-sands", "--from", "2026-08-01", "--wait")
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND args->>'reason' = 'manual' AND state = 'completed'`); n != 1 {
		t.Fatalf("completed manual rollup_day jobs = %d, want 1", n)
	}
}

// stdoutMu serializes captureStdout: os.Stdout is one variable, and two
// parallel tests swapping it took each other's output (one read nothing).
var stdoutMu sync.Mutex

// captureStdout returns what f printed to standard output.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	r, w, err := os.Pipe()
	testdb.Must(t, err, "pipe")
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stdout = saved }()
	f()
	os.Stdout = saved
	w.Close()
	return <-done
}
