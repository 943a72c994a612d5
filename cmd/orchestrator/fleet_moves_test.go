package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/testdb"
)

const movesFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: moor
    timezone: UTC
    turbines:
      - {id: M-1, shard: s1}
      - {id: M-2, shard: s1}
`

// TestFleetMovesResumesAMoveWhoseJobWasCancelled: `fleet apply` moves M-1
// to s2 and queues its job; the job is cancelled before any process works
// it. `fleet moves` shows the job cancelled and the command that resumes
// the move; that command queues one job (asked again, none more); that
// job cancelled too, applying the file again queues one more: 3 jobs for
// the one move, the last waiting for a serve or work.
func TestFleetMovesResumesAMoveWhoseJobWasCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, movesFleet)
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	testdb.Must(t, os.WriteFile(file, []byte(strings.Replace(movesFleet, "{id: M-1, shard: s1}", "{id: M-1, shard: s2}", 1)), 0o644), "write fleet")
	now := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	run := func(args ...string) string {
		t.Helper()
		var err error
		out := captureStdout(t, func() { err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return now }}, args...) })
		testdb.Must(t, err, "orchestrator %s", strings.Join(args, " "))
		return out
	}
	client, err := jobs.InsertOnlyClient(env.Control)
	testdb.Must(t, err, "river client")
	lastJob := func() int64 {
		return testdb.Int(t, env.Control, `SELECT max(id) FROM river_job WHERE kind = 'move_turbine'`)
	}
	cancelLast := func() int64 {
		id := lastJob()
		_, err := client.JobCancel(ctx, id)
		testdb.Must(t, err, "cancel job %d", id)
		return id
	}

	out := run("fleet", "apply", file)
	id := testdb.Int(t, env.Control, `SELECT id FROM turbine_move WHERE turbine_id = 'M-1'`)
	if !strings.Contains(out, fmt.Sprintf("turbine M-1: shard s1 → s2: move %d queued", id)) {
		t.Fatalf("fleet apply:\n%s\nwant move %d queued", out, id)
	}
	first := cancelLast()

	out = run("fleet", "moves")
	resume := fmt.Sprintf("orchestrator fleet moves --resume %d", id)
	wantLine := fmt.Sprintf("move %d (turbine M-1, s1 → s2) stopped at copying: its job %d was cancelled; resume it: %s (or apply the fleet file again)", id, first, resume)
	if !strings.Contains(out, wantLine) || !strings.Contains(out, fmt.Sprintf(" %d cancelled ", first)) {
		t.Fatalf("fleet moves:\n%s\nwant the job cancelled and the line %q", out, wantLine)
	}

	out = run("fleet", "moves", "--resume", fmt.Sprint(id))
	second := lastJob()
	if want := fmt.Sprintf("move %d: job %d queued; a running serve or work goes on from copying\n", id, second); out != want || second == first {
		t.Fatalf("fleet moves --resume %d: %q, want %q", id, out, want)
	}
	out = run("fleet", "moves", "--resume", fmt.Sprint(id))
	if want := fmt.Sprintf("move %d: job %d works it already (copying), nothing to resume\n", id, second); out != want {
		t.Fatalf("fleet moves --resume %d again: %q, want %q", id, out, want)
	}
	if out := run("fleet", "moves"); strings.Contains(out, "resume it") || !strings.Contains(out, fmt.Sprintf(" %d available ", second)) {
		t.Fatalf("fleet moves with the job queued again:\n%s\nwant job %d available, nothing to resume", out, second)
	}

	cancelLast()
	out = run("fleet", "apply", file)
	if !strings.Contains(out, fmt.Sprintf("turbine M-1: shard s1 → s2: move %d had no job working it; one is queued", id)) {
		t.Fatalf("fleet apply again:\n%s\nwant move %d queued again", out, id)
	}
	if got := testdb.Text(t, env.Control, `SELECT string_agg(state::text, ' ' ORDER BY id) FROM river_job WHERE kind = 'move_turbine'`); got != "cancelled cancelled available" {
		t.Fatalf("move_turbine jobs: %s, want cancelled cancelled available", got)
	}
}
