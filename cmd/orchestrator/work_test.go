package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/rollup"
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
	captureStdout(t, func() {
		run("fleet", "apply", "--effective-from", testFleetSince, fleetFile)
		run("simulate", "--fleet", fleetFile, "--farm", "kilmore-sands", "--from", "2026-08-01T10:00:00Z", "--to", "2026-08-01T12:00:00Z", "--exact-clocks", "--ingest")
	})
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

// TestFleetApplyThenWorkUntilIdleFinishesTheMove: `fleet apply` moves M-1
// from s1 to s2; `work --until-idle` alone then finishes the move: it
// copies, switches, waits out the grace (the job snoozed, scheduled for
// later), fences, verifies and deletes before it returns. Before, it
// returned while the job sat scheduled in its grace, the readings still
// on s1. The grace is 7 s on a clock that runs with the system's, as
// River's snooze does: River keeps a job snoozed for up to its scheduler
// interval (5 s) available, so a shorter grace would not leave it
// scheduled.
func TestFleetApplyThenWorkUntilIdleFinishesTheMove(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, movesFleet)
	dir := t.TempDir()
	moved, readings := filepath.Join(dir, "fleet.yaml"), filepath.Join(dir, "readings.ndjson")
	testdb.Must(t, os.WriteFile(moved, []byte(strings.Replace(movesFleet, "{id: M-1, shard: s1}", "{id: M-1, shard: s2}", 1)), 0o644), "write fleet")
	var lines strings.Builder
	for i := range 30 {
		at := time.Date(2026, 8, 2, 10, 0, 2*i, 0, time.UTC)
		for _, id := range []string{"M-1", "M-2"} {
			fmt.Fprintf(&lines, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
				id, at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
		}
	}
	testdb.Must(t, os.WriteFile(readings, []byte(lines.String()), 0o644), "write readings")
	start, base := time.Now(), time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	run := func(args ...string) string {
		t.Helper()
		var err error
		out := captureStdout(t, func() {
			err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return base.Add(time.Since(start)) }, MoveGrace: 7 * time.Second}, args...)
		})
		testdb.Must(t, err, "orchestrator %s", strings.Join(args, " "))
		return out
	}
	count := func(shard, turbine string) int64 {
		return testdb.Int(t, env.Shards.Pool(shard), `SELECT count(*) FROM readings WHERE turbine_id = $1`, turbine)
	}

	run("ingest", readings)
	if n := count("s1", "M-1"); n != 30 {
		t.Fatalf("s1 holds %d readings of M-1 after the ingest, want 30", n)
	}
	if out := run("fleet", "apply", moved); !strings.Contains(out, "turbine M-1: shard s1 → s2: move ") {
		t.Fatalf("fleet apply printed:\n%s\nwant M-1's move queued", out)
	}
	out := run("work", "--until-idle")
	if got := testdb.Text(t, env.Control, `SELECT concat_ws(' ', state, last_error) FROM turbine_move WHERE turbine_id = 'M-1'`); got != "done" {
		t.Fatalf("M-1's move is %q after work --until-idle, want done; it printed:\n%s", got, out)
	}
	if s1, s2 := count("s1", "M-1"), count("s2", "M-1"); s1 != 0 || s2 != 30 {
		t.Fatalf("M-1's readings: %d on s1, %d on s2; want 0 and 30", s1, s2)
	}
	if s1, s2 := count("s1", "M-2"), count("s2", "M-2"); s1 != 30 || s2 != 0 {
		t.Fatalf("M-2's readings: %d on s1, %d on s2; want 30 and 0 (it did not move)", s1, s2)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'move_turbine' AND state = 'completed' AND (metadata->>'snoozes')::int >= 1`); n != 1 {
		t.Fatalf("%d completed move_turbine jobs that snoozed through the grace, want 1", n)
	}
	if !strings.Contains(out, "move_turbine 1") || strings.Contains(out, "left for later") {
		t.Fatalf("work --until-idle printed:\n%s\nwant the move's job run, nothing left for later", out)
	}

	// A job due in an hour (as a retry far off is) is not waited for: the
	// next run returns, naming it.
	client, err := jobs.InsertOnlyClient(env.Control)
	testdb.Must(t, err, "river client")
	res, err := client.Insert(context.Background(), jobs.RollupDayArgs{FarmID: "moor", Day: "2026-08-02", Shard: "s2", Reason: rollup.ReasonManual},
		&river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	testdb.Must(t, err, "insert a job due in an hour")
	out = run("work", "--until-idle")
	if want := fmt.Sprintf("left for later: 1 job(s) due more than 1m0s from now, the first rollup_day job %d at ", res.Job.ID); !strings.Contains(out, want) ||
		!strings.Contains(out, "(scheduled); a running serve or work runs them, or run `orchestrator work --until-idle` after that") {
		t.Fatalf("work --until-idle with a job due in an hour printed:\n%s\nwant %q…", out, want)
	}
}
