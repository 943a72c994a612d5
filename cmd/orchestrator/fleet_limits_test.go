package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestFleetApplyRefusesAnEffectiveFromBefore1900: `fleet apply
// --effective-from` the zero instant (once taken for "unset", so "now") or
// 1899-12-31T23:59:59Z exits 2 naming the flag and 1900, and applies
// nothing.
func TestFleetApplyRefusesAnEffectiveFromBefore1900(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	testdb.Must(t, os.WriteFile(file, []byte(smallArdnaveFleet), 0o644), "write fleet")
	now := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	applies := func() int64 { return testdb.Int(t, env.Control, `SELECT count(*) FROM fleet_apply`) }
	before := applies()
	for _, at := range []string{"0001-01-01T00:00:00Z", "1899-12-31T23:59:59Z"} {
		var err error
		captureStdout(t, func() {
			err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return now }}, "fleet", "apply", "--effective-from", at, file)
		})
		want := "--effective-from " + at + " is before 1900-01-01T00:00:00Z"
		if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), want) {
			t.Fatalf("fleet apply --effective-from %s: exit %d (%v), want 2 and %q", at, code, err, want)
		}
	}
	if n := applies() - before; n != 0 {
		t.Fatalf("%d fleet_apply rows written by the refused applies, want 0", n)
	}
}

// TestRollupRangeIsBoundedByMaxAge: `rollup` refuses days older than a
// farm's max_age (400 by default, 3 for a farm whose rules say 3d; a day's
// slack for the zone) or after today, naming the farm and the limit, exits
// 2 and queues nothing; the oldest days it allows are queued (3 days of
// the short farm, 3 jobs).
func TestRollupRangeIsBoundedByMaxAge(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, `
shards: [{name: s1}]
farms:
  - {id: glen, timezone: UTC, turbines: [{id: G-1, shard: s1}]}
  - {id: short, timezone: UTC, rules: {max_age: 3d}, turbines: [{id: S-1, shard: s1}]}
`)
	now := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	// Through captureStdout: what a parallel test prints must not land in
	// another's capture.
	rollup := func(args ...string) (err error) {
		captureStdout(t, func() {
			err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return now }}, append([]string{"rollup"}, args...)...)
		})
		return err
	}
	jobs := func() int64 {
		return testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day'`)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--all", "--from", "1970-01-01", "--to", "9999-12-31"},
			"--from 1970-01-01 is older than farm glen's max_age (400d): the earliest day it may recompute now is 2025-07-05"},
		{[]string{"--farm", "glen", "--from", "2025-07-04", "--to", "2025-07-06"},
			"--from 2025-07-04 is older than farm glen's max_age (400d): the earliest day it may recompute now is 2025-07-05"},
		{[]string{"--farm", "glen", "--from", "2026-08-01", "--to", "2026-08-12"},
			"--to 2026-08-12 is after today (2026-08-10 UTC): farm glen has no day there to recompute"},
		{[]string{"--farm", "short", "--from", "2026-08-05", "--to", "2026-08-07"},
			"--from 2026-08-05 is older than farm short's max_age (3d): the earliest day it may recompute now is 2026-08-06"},
		{[]string{"--all", "--from", "2026-08-05", "--to", "2026-08-07"},
			"older than farm short's max_age (3d)"},
	} {
		err := rollup(tc.args...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("rollup %s: %v (exit %d), want exit 2 saying %q", strings.Join(tc.args, " "), err, exitCode(err), tc.want)
		}
		if n := jobs(); n != 0 {
			t.Fatalf("rollup %s queued %d jobs, want 0", strings.Join(tc.args, " "), n)
		}
	}
	testdb.Must(t, rollup("--farm", "short", "--from", "2026-08-06", "--to", "2026-08-08"), "rollup of the oldest days max_age allows")
	if n := jobs(); n != 3 {
		t.Fatalf("rollup of 3 days on one shard queued %d jobs, want 3", n)
	}
}
