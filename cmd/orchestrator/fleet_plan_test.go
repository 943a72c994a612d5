package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

const planFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: moor
    timezone: UTC
    turbines:
      - {id: M-1, shard: s1}
      - {id: M-2, shard: s1}
      - {id: M-3, shard: s1}
`

// planEdit is planFleet edited: shard s3 and farm fell added, M-1 moved
// to s2, M-2's cadence 1 s, M-3 left out.
const planEdit = `
shards: [{name: s1}, {name: s2}, {name: s3}]
farms:
  - id: moor
    timezone: UTC
    turbines:
      - {id: M-1, shard: s2}
      - {id: M-2, shard: s1, cadence_seconds: 1}
  - id: fell
    timezone: Europe/London
    turbines:
      - {prefix: F-, from: 1, to: 2, shard: s3}
`

// registryState is what an apply may change, counted: registry rows and
// versions, applies, moves, jobs, M-3 in service, and whether shard s3's
// database exists.
func registryState(t *testing.T, env *testdb.Env) string {
	t.Helper()
	control, err := pgserver.DatabaseName(env.ControlDSN)
	testdb.Must(t, err, "control database name")
	return testdb.Text(t, env.Control, `SELECT format('shards %s, farms %s, turbines %s (in the file %s), farm versions %s, turbine versions %s, applies %s, moves %s, jobs %s, M-3 in service %s, s3 database %s',
		(SELECT count(*) FROM shard), (SELECT count(*) FROM farm), (SELECT count(*) FROM turbine), (SELECT count(*) FROM turbine WHERE in_fleet_file),
		(SELECT count(*) FROM farm_version), (SELECT count(*) FROM turbine_version), (SELECT count(*) FROM fleet_apply),
		(SELECT count(*) FROM turbine_move), (SELECT count(*) FROM river_job),
		(SELECT count(*) FROM turbine WHERE id = 'M-3' AND in_fleet_file AND decommissioned_at IS NULL),
		(SELECT count(*) FROM pg_database WHERE datname = $1))`, control+"_s3")
}

// fleetRun runs one command in-process at now, returning its stdout and
// its exit code.
func fleetRun(t *testing.T, env *testdb.Env, now time.Time, args ...string) (string, int, error) {
	t.Helper()
	var err error
	out := captureStdout(t, func() { err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return now }}, args...) })
	return out, exitCode(err), err
}

// TestFleetApplyDryRunPrintsThePlanAndChangesNothing: on a registry of
// farm moor (M-1..M-3 on s1) with 2 August rolled up, a file adding
// shard s3 and farm fell (2 turbines), moving M-1 to s2, giving M-2 1 s
// and leaving M-3 out, from 2 August 12:00. `--dry-run` prints the plan
// (these 10 lines) and changes nothing: no registry row, version, apply,
// move or job, no s3 database; without --retire-missing and --reopen it
// exits 2 naming M-3 and the day. The plain apply is refused the same
// (exit 2, nothing changed, M-3 in service). With both flags it prints the
// same plan, then what it did: 3 shards, 2 farms, 4 turbines in the file,
// 1 retired, move queued, 1 day reopened. Applied again: "no change".
func TestFleetApplyDryRunPrintsThePlanAndChangesNothing(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, planFleet)
	testdb.Exec(t, env.Control, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early, computed_at, closed_at)
		VALUES ('M-2', '2026-08-02', 'moor', 's1', 43200, 43200, 43200, 0, 0, now(), now())`)
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	testdb.Must(t, os.WriteFile(file, []byte(planEdit), 0o644), "write fleet")
	now := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	from := "2026-08-02T12:00:00Z"

	plan := strings.Join([]string{
		"fleet " + file + " from 2026-08-02T12:00:00Z: 1 shard, 1 farm, 2 turbines added; 1 turbine changed; 1 turbine moved; 1 turbine retired; changes 1 rolled-up farm-day",
		"added:",
		"  shard s3: new",
		"  farm fell: new, 2 turbines on shard s3, in service from 2026-08-02T12:00:00Z",
		"changed:",
		"  turbine M-2: cadence 2 s → 1 s from 2026-08-02T12:00:00Z; changes 1 rolled-up day: moor/2026-08-02",
		"moved:",
		"  turbine M-1: shard s1 → s2 (its readings are copied while they keep arriving, by a move_turbine job; no count changes)",
		"retired:",
		"  turbine M-3: no longer in the file, out of service from 2026-08-02T12:00:00Z; changes 1 rolled-up day: moor/2026-08-02",
		"rolled-up farm-days it changes (recomputed with --reopen): moor/2026-08-02",
	}, "\n") + "\n"

	before := registryState(t, env)
	if want := "shards 2, farms 1, turbines 3 (in the file 3), farm versions 1, turbine versions 3, applies 2, moves 0, jobs 0, M-3 in service 1, s3 database 0"; before != want {
		t.Fatalf("before: %s, want %s", before, want)
	}

	out, code, err := fleetRun(t, env, now, "fleet", "apply", "--dry-run", "--effective-from", from, file)
	refusal := "dry run, nothing was changed; the apply would be refused: it would retire 1 turbine(s) in service that the file does not name " +
		"(under retired: above; --retire-missing retires them); it would change 1 rolled-up farm-day(s) (listed above; --reopen recomputes them)"
	if code != 2 || out != plan || fmt.Sprint(err) != refusal {
		t.Fatalf("fleet apply --dry-run: exit %d (%v), printed\n%s\nwant exit 2 (%s) after the plan\n%s", code, err, out, refusal, plan)
	}
	if got := registryState(t, env); got != before {
		t.Fatalf("after the refused dry run: %s, want %s", got, before)
	}

	dry, code, err := fleetRun(t, env, now, "fleet", "apply", "--dry-run", "--reopen", "--retire-missing", "--effective-from", from, file)
	if want := plan + "dry run: nothing was changed (the same command without --dry-run applies this plan)\n"; code != 0 || dry != want {
		t.Fatalf("fleet apply --dry-run --reopen --retire-missing: exit %d (%v), printed\n%s\nwant\n%s", code, err, dry, want)
	}
	if got := registryState(t, env); got != before {
		t.Fatalf("after the dry run: %s, want %s", got, before)
	}

	out, code, err = fleetRun(t, env, now, "fleet", "apply", "--reopen", "--effective-from", from, file)
	if code != 2 || out != "" || !strings.Contains(fmt.Sprint(err), "does not name 1 turbine in service; ") {
		t.Fatalf("fleet apply without --retire-missing: exit %d (%v), printed %q; want exit 2 naming 1 turbine, nothing printed", code, err, out)
	}
	if got := registryState(t, env); got != before {
		t.Fatalf("after the refused apply: %s, want %s", got, before)
	}

	out, code, err = fleetRun(t, env, now, "fleet", "apply", "--reopen", "--retire-missing", "--effective-from", from, file)
	if code != 0 || !strings.HasPrefix(out, plan) {
		t.Fatalf("fleet apply: exit %d (%v), printed\n%s\nwant the dry run's plan first:\n%s", code, err, out, plan)
	}
	move := testdb.Int(t, env.Control, `SELECT id FROM turbine_move WHERE turbine_id = 'M-1'`)
	for _, line := range []string{
		"applied: 3 shards, 2 farms, 4 turbines in the file, 1 retired from it (1 by this apply)\n",
		fmt.Sprintf("turbine M-1: shard s1 → s2: move %d queued;", move),
		"reopened 1 farm-day(s) for recompute (",
	} {
		if !strings.Contains(strings.TrimPrefix(out, plan), line) {
			t.Fatalf("fleet apply printed\n%s\nwant after the plan %q", out, line)
		}
	}
	if got, want := registryState(t, env), "shards 3, farms 2, turbines 5 (in the file 4), farm versions 2, turbine versions 7, applies 3, moves 1, jobs 2, M-3 in service 0, s3 database 1"; got != want {
		t.Fatalf("after the apply: %s, want %s", got, want)
	}

	out, code, err = fleetRun(t, env, now, "fleet", "apply", "--effective-from", from, file)
	if want := "fleet " + file + " from 2026-08-02T12:00:00Z: no change\napplied: 3 shards, 2 farms, 4 turbines in the file, 1 retired from it (0 by this apply)\n"; code != 0 || out != want {
		t.Fatalf("fleet apply again: exit %d (%v), printed\n%s\nwant\n%s", code, err, out, want)
	}
}

// TestFleetApplyRefusesAPartialFile: a file naming only a new farm,
// applied to the small fleet (2 farms, 22 turbines in service), exits 2
// listing both farms it omits with their turbines (12 and 10) and retires
// nothing (22 in service, 0 retired after); with --retire-missing it
// retires all 22 (1 in service, 22 retired), listed as two farms.
func TestFleetApplyRefusesAPartialFile(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.SmallFleet)
	file := filepath.Join(t.TempDir(), "mine.yaml")
	testdb.Must(t, os.WriteFile(file, []byte("shards: [{name: s1}]\nfarms:\n  - {id: mine, timezone: UTC, turbines: [{id: MY-1, shard: s1}]}\n"), 0o644), "write fleet")
	now := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	counts := func() string {
		return testdb.Text(t, env.Control, `SELECT format('%s in service, %s retired, %s farms', count(*) FILTER (WHERE in_fleet_file), count(*) FILTER (WHERE NOT in_fleet_file),
			(SELECT count(*) FROM farm)) FROM turbine`)
	}
	if got := counts(); got != "22 in service, 0 retired, 2 farms" {
		t.Fatalf("before: %s", got)
	}
	out, code, err := fleetRun(t, env, now, "fleet", "apply", file)
	msg := fmt.Sprint(err)
	if code != 2 || out != "" || !strings.Contains(msg, "does not name 22 turbines in service (2 farms entirely)") ||
		!strings.Contains(msg, "farm ardnave-point (its 12 turbines in service)\n  farm kilmore-sands (its 10 turbines in service)\n") {
		t.Fatalf("fleet apply of a partial file: exit %d, printed %q, err:\n%s\nwant exit 2 listing ardnave-point (12) and kilmore-sands (10)", code, out, msg)
	}
	if got := counts(); got != "22 in service, 0 retired, 2 farms" {
		t.Fatalf("after the refused apply: %s, want 22 in service, 0 retired, 2 farms", got)
	}

	out, code, err = fleetRun(t, env, now, "fleet", "apply", "--retire-missing", file)
	for _, line := range []string{
		"1 farm, 1 turbine added; 2 farms, 22 turbines retired; no rolled-up day changes\n",
		"\n  farm ardnave-point: no longer in the file: its 12 turbines out of service from 2026-08-03T12:00:00Z\n" +
			"  farm kilmore-sands: no longer in the file: its 10 turbines out of service from 2026-08-03T12:00:00Z\n",
		"applied: 4 shards, 3 farms, 1 turbines in the file, 22 retired from it (22 by this apply)\n",
	} {
		if code != 0 || !strings.Contains(out, line) {
			t.Fatalf("fleet apply --retire-missing: exit %d (%v), printed\n%s\nwant %q", code, err, out, line)
		}
	}
	if strings.Contains(out, "AP-001") {
		t.Fatalf("fleet apply --retire-missing listed the retired farms' turbines one by one:\n%s", out)
	}
	if got := counts(); got != "1 in service, 22 retired, 3 farms" {
		t.Fatalf("after --retire-missing: %s, want 1 in service, 22 retired, 3 farms", got)
	}
}

// TestFleetApplyRetiresATurbineMarkedInTheFile: M-3 given
// decommissioned_at in the file is retired by a plain apply (no
// --retire-missing), listed under retired: out of service from that
// instant, still in the file (3 in the file, M-3 decommissioned). Its
// service over, a file leaving it out needs no flag either (2 in the
// file, 1 retired from it).
func TestFleetApplyRetiresATurbineMarkedInTheFile(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, planFleet)
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	marked := strings.Replace(planFleet, "{id: M-3, shard: s1}", "{id: M-3, shard: s1, decommissioned_at: 2026-08-03T06:00:00Z}", 1)
	testdb.Must(t, os.WriteFile(file, []byte(marked), 0o644), "write fleet")
	now := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	out, code, err := fleetRun(t, env, now, "fleet", "apply", file)
	want := "fleet " + file + " from 2026-08-03T12:00:00Z: 1 turbine retired; no rolled-up day changes\n" +
		"retired:\n" +
		"  turbine M-3: decommissioned_at none → 2026-08-03T06:00:00Z from 2026-08-03T12:00:00Z\n" +
		"applied: 2 shards, 1 farms, 3 turbines in the file, 0 retired from it (0 by this apply)\n"
	if code != 0 || out != want {
		t.Fatalf("fleet apply: exit %d (%v), printed\n%s\nwant\n%s", code, err, out, want)
	}
	if got := testdb.Text(t, env.Control, `SELECT format('%s in the file, M-3 out of service from %s', count(*) FILTER (WHERE in_fleet_file),
		(SELECT decommissioned_at AT TIME ZONE 'UTC' FROM turbine WHERE id = 'M-3')) FROM turbine`); got != "3 in the file, M-3 out of service from 2026-08-03 06:00:00" {
		t.Fatalf("after the apply: %s", got)
	}

	gone := strings.Replace(planFleet, "      - {id: M-3, shard: s1}\n", "", 1)
	testdb.Must(t, os.WriteFile(file, []byte(gone), 0o644), "write fleet")
	out, code, err = fleetRun(t, env, now, "fleet", "apply", file)
	want = "fleet " + file + " from 2026-08-03T12:00:00Z: 1 turbine retired; no rolled-up day changes\n" +
		"retired:\n" +
		"  turbine M-3: no longer in the file, out of service from 2026-08-03T06:00:00Z\n" +
		"applied: 2 shards, 1 farms, 2 turbines in the file, 1 retired from it (1 by this apply)\n"
	if code != 0 || out != want {
		t.Fatalf("fleet apply without M-3: exit %d (%v), printed\n%s\nwant\n%s", code, err, out, want)
	}
}
