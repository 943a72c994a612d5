package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

const rulesFleet = `
shards: [{name: s1}]
farms:
  - id: glen
    timezone: UTC
    rules: {lane_threshold: %s}
    turbines: [{prefix: G-, from: 1, to: 2, shard: s1}]
`

// TestRulesLiveInTheControlDatabase: a farm's lane threshold set in the
// fleet file is what ingest (the lanes) and the rollup (turbine_day.late)
// both follow; changing it in the file changes both; neither a flag nor
// an environment variable can.
func TestRulesLiveInTheControlDatabase(t *testing.T) {
	env := testdb.New(t, "")
	fleetFile := filepath.Join(t.TempDir(), "fleet.yaml")
	now := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	newMain := func() *Main { return &Main{Config: testConfig(env), Now: func() time.Time { return now }} }
	run := func(args ...string) (err error) { // through captureStdout: not into a parallel test's capture
		captureStdout(t, func() { err = runMain(newMain(), args...) })
		return err
	}
	apply := func(threshold string, flags ...string) {
		t.Helper()
		testdb.Must(t, os.WriteFile(fleetFile, []byte(fmt.Sprintf(rulesFleet, threshold)), 0o644), "write fleet")
		testdb.Must(t, run(append(append([]string{"fleet", "apply"}, flags...), fleetFile)...), "fleet apply")
	}
	// Ten readings on 1 August (or 2 August): five that arrived 45 s after
	// they were recorded, five after 1 s. Returns how many took the backfill lane.
	ingest := func(day int) int64 {
		t.Helper()
		var b strings.Builder
		for i := 0; i < 10; i++ {
			at := time.Date(2026, 8, day, 10, 0, 2*i, 0, time.UTC)
			lag := time.Second
			if i < 5 {
				lag = 45 * time.Second
			}
			fmt.Fprintf(&b, `{"turbine_id":"G-001","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":1}`+"\n",
				at.Format(time.RFC3339), at.Add(lag).Format(time.RFC3339))
		}
		m := newMain()
		defer m.Close()
		in, err := m.Ingestor(context.Background())
		testdb.Must(t, err, "ingestor")
		defer in.Close()
		dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(b.String()))
		testdb.Must(t, err, "decoder")
		sum, err := in.Ingest(context.Background(), "test", dec)
		testdb.Must(t, err, "ingest")
		return sum.Backfill
	}
	late := func(day string) int64 {
		t.Helper()
		testdb.Must(t, run("rollup", "--farm", "glen", "--from", day, "--wait"), "rollup")
		return testdb.Int(t, env.Control, `SELECT late FROM turbine_day WHERE turbine_id = 'G-001' AND day = $1`, day)
	}

	apply("30s", "--effective-from", testFleetSince)
	if n := testdb.Int(t, env.Control, `SELECT lane_threshold_ms FROM farm_rules WHERE farm_id = 'glen'`); n != 30_000 {
		t.Fatalf("farm_rules.lane_threshold_ms = %d, want 30000 from the fleet file", n)
	}
	if n := ingest(1); n != 5 {
		t.Fatalf("at 30 s, %d readings took the backfill lane, want the 5 that lagged 45 s", n)
	}
	if n := late("2026-08-01"); n != 5 {
		t.Fatalf("at 30 s, turbine_day.late = %d, want 5", n)
	}

	// The new threshold from 1 August on: 1 August is rolled up, so the
	// apply must reopen it (and queues its recompute).
	testdb.Must(t, os.WriteFile(fleetFile, []byte(fmt.Sprintf(rulesFleet, "60s")), 0o644), "write fleet")
	if err := run("fleet", "apply", "--effective-from", "2026-08-01T00:00:00Z", fleetFile); !fleet.IsValidation(err) || !strings.Contains(err.Error(), "glen/2026-08-01") {
		t.Fatalf("an apply reaching back over rolled-up 1 August without --reopen: %v, want refused naming glen/2026-08-01", err)
	}
	apply("60s", "--effective-from", "2026-08-01T00:00:00Z", "--reopen")
	if n := ingest(2); n != 0 {
		t.Fatalf("at 60 s, %d readings took the backfill lane, want 0", n)
	}
	if n := late("2026-08-01"); n != 0 {
		t.Fatalf("at 60 s, the recomputed turbine_day.late = %d, want 0", n)
	}

	// A flag cannot change the rule ...
	if err := run("ingest", "--lane-threshold", "10s", fleetFile); err == nil || !strings.Contains(err.Error(), "unknown flag: --lane-threshold") {
		t.Fatalf("ingest --lane-threshold: %v, want an unknown-flag error", err)
	}
	// ... nor the environment.
	t.Setenv("GALEWATCH_LANE_THRESHOLD", "10s")
	if err := run("rollup", "--farm", "glen", "--from", "2026-08-01", "--wait"); err == nil || !strings.Contains(err.Error(), "GALEWATCH_LANE_THRESHOLD is no longer read") {
		t.Fatalf("rollup with GALEWATCH_LANE_THRESHOLD set: %v, want it refused", err)
	}
	if n := testdb.Int(t, env.Control, `SELECT late FROM turbine_day WHERE turbine_id = 'G-001' AND day = '2026-08-01'`); n != 0 {
		t.Fatalf("turbine_day.late = %d after the refused run, want 0", n)
	}
}
