package main

import (
	"context"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/galewatch/galewatch/internal/clock"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestLongestNamesEndToEnd: a fleet whose every name is at its documented
// limit goes through what consumes names. Farm id 111 characters, farm name
// 100 characters (markup characters and 2-byte letters), a turbine id and a
// prefix range ending at 111 characters, a shard name of 57 (with a dsn)
// and one as long as its database <control>_<shard> allows (63 bytes).
// fleet apply takes it; the real `serve` starts, registers both farms'
// nightly schedules (River periodic jobs rollup_schedule_<id>) and runs
// them on start, rolling up yesterday; the status page, the farm page, its
// day page and the API answer 200 with the names; `report monthly --all
// --out DIR` writes the farm's file.
func TestLongestNamesEndToEnd(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	env := testdb.New(t, "")
	ctx := context.Background()
	controlDB, err := pgserver.DatabaseName(env.ControlDSN)
	testdb.Must(t, err, "control database name")

	farm := ("ardnave-point-" + strings.Repeat("x", fleet.MaxFarmID))[:fleet.MaxFarmID]
	name := "Ardnave Point & Söhne <Nord> — "
	name += strings.Repeat("é", fleet.MaxFarmName-utf8.RuneCountInString(name))
	turbine := ("AP-" + strings.Repeat("1", fleet.MaxTurbineID))[:fleet.MaxTurbineID]
	prefix := ("AR-" + strings.Repeat("2", fleet.MaxTurbineID))[:fleet.MaxTurbineID-3]
	// The dsn shard's database is named after the control database, so the
	// test's cleanup drops it with the others.
	dsnShard := ("s1-" + strings.Repeat("a", fleet.MaxShardName))[:fleet.MaxShardName]
	dsnDB := controlDB + "_dsn"
	testdb.Must(t, pgserver.EnsureDatabase(ctx, env.ControlDSN, dsnDB), "create the dsn shard's database")
	dsn, err := pgserver.WithDatabase(env.ControlDSN, dsnDB)
	testdb.Must(t, err, "dsn")
	localShard := ("s2-" + strings.Repeat("b", fleet.MaxDatabaseName))[:min(fleet.MaxShardName, fleet.MaxDatabaseName-len(controlDB)-1)]
	fleetYAML := fmt.Sprintf(`shards:
  - {name: %s, dsn: %q}
  - {name: %s}
farms:
  - id: %s
    name: %q
    timezone: Europe/London
    turbines:
      - {id: %s, shard: %s}
      - {prefix: %s, from: 1, to: 3, shard: %s}
  - id: kilmore-sands
    timezone: Europe/Dublin
    turbines: [{id: KS-001, shard: %s}]
`, dsnShard, dsn, localShard, farm, name, turbine, dsnShard, prefix, localShard, localShard)
	dir := t.TempDir()
	fleetFile := filepath.Join(dir, "fleet.yaml")
	testdb.Must(t, os.WriteFile(fleetFile, []byte(fleetYAML), 0o644), "write fleet")
	now := time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC)
	run := func(args ...string) {
		t.Helper()
		var err error // through captureStdout: not into a parallel test's capture
		captureStdout(t, func() { err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return now }}, args...) })
		testdb.Must(t, err, "orchestrator %v", args)
	}
	run("fleet", "apply", "--effective-from", testFleetSince, fleetFile)
	if db := controlDB + "_" + localShard; len(db) != fleet.MaxDatabaseName || testdb.Int(t, env.Control, `SELECT count(*) FROM pg_database WHERE datname = $1`, db) != 1 {
		t.Fatalf("shard %s: database %s (%d bytes) missing, want one of exactly %d bytes", localShard, db, len(db), fleet.MaxDatabaseName)
	}

	clockFile := filepath.Join(dir, "clock")
	testdb.Must(t, clock.Write(clockFile, now), "clock")
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	base := startServe(serveCtx, t, bin, append(os.Environ(), "DATABASE_URL="+env.ControlDSN, clock.FileEnv+"="+clockFile))

	// The nightly schedules run on start (RunOnStart): each farm's rollup
	// of yesterday, 1 August, on every shard of it.
	waitUntilTrue(t, 3*time.Minute, "both farms' nightly rollups of 2026-08-01 from their schedules", func() bool {
		return testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_schedule' AND state = 'completed' AND args->>'day' = '2026-08-01' AND args->>'farm_id' IN ($1, 'kilmore-sands')`, farm) == 2 &&
			testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_day WHERE day = '2026-08-01'`) == 5
	})
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = $1 AND day = '2026-08-01' AND turbine_id IN ($2, $3)`, farm, turbine, prefix+"003"); n != 2 {
		t.Fatalf("turbine_day rows of the longest turbine ids: %d, want 2", n)
	}

	escaped := html.EscapeString(name)
	for _, page := range []struct{ path, want string }{
		{"/", escaped},
		{"/", `href="/farms/` + farm + `?month=2026-08"`},
		{"/farms/" + farm, escaped},
		{"/farms/" + farm + "/days/2026-08-01", `id="turbine-` + turbine + `"`},
		{"/farms/" + farm + "/days/2026-08-01", `id="turbine-` + prefix + `003"`},
		{"/farms/" + farm + "/days/2026-08-01", dsnShard},
		{"/api/v1/farms/" + farm + "/days?from=2026-08-01&to=2026-08-01", `"day":"2026-08-01"`},
	} {
		code, body := httpGet(t, base+page.path)
		if code != 200 || !strings.Contains(body, page.want) {
			t.Errorf("GET %s: %d, want 200 with %q in:\n%.1500s", page.path, code, page.want, body)
		}
	}

	out := filepath.Join(dir, "reports")
	run("report", "monthly", "--all", "--month", "2026-08", "--format", "json", "--out", out)
	for _, f := range []string{farm + "_2026-08.json", "kilmore-sands_2026-08.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(b), "2026-08-01") {
			t.Errorf("report --all: %s: %v, want the month's report:\n%.500s", f, err, b)
		}
	}
}

// waitUntilTrue polls cond until it holds; within only catches a hang (the
// condition normally holds in seconds).
func waitUntilTrue(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(within)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("%s: not within %s", what, within)
		case <-tick.C:
		}
	}
}
