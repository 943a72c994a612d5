package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestIngestExitStatus: a script reads the exit status. A file stored
// whole (or stored again: duplicates) exits 0; a file with refused lines
// exits 3 with its valid lines stored, whether one line or every line was
// refused; --allow-rejects makes the refused lines' exit 0; misuse (an
// unknown flag, a bad --format or --max-rate) exits 2, nothing read.
func TestIngestExitStatus(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	dir := t.TempDir()
	fleetFile := filepath.Join(dir, "fleet.yaml")
	testdb.Must(t, os.WriteFile(fleetFile, []byte(fmt.Sprintf(rulesFleet, "60s")), 0o644), "write fleet")
	now := time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC)
	// Through captureStdout: what a parallel test prints must not land in
	// another's capture.
	run := func(args ...string) (err error) {
		captureStdout(t, func() { err = runMain(&Main{Config: testConfig(env), Now: func() time.Time { return now }}, args...) })
		return err
	}
	testdb.Must(t, run("fleet", "apply", "--effective-from", testFleetSince, fleetFile), "fleet apply")

	good := func(second int) string {
		at := time.Date(2026, 8, 1, 10, 0, second, 0, time.UTC)
		return fmt.Sprintf(`{"turbine_id":"G-001","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":1}`,
			at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
	}
	file := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		var body string
		for _, l := range lines {
			body += l + "\n"
		}
		testdb.Must(t, os.WriteFile(p, []byte(body), 0o644), "write %s", name)
		return p
	}
	allStored := file("good.ndjson", good(0), good(2))
	someRefused := file("some.ndjson", good(4), "not json", good(6))
	allRefused := file("none.ndjson", "not json", `{"turbine_id":"NOPE","recorded_at":"2026-08-01T10:00:00Z","available":true}`)

	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"AllStored", []string{"ingest", allStored}, 0},
		{"StoredAgainAsDuplicates", []string{"ingest", allStored}, 0},
		{"SomeRefused", []string{"ingest", someRefused}, 3},
		{"AllRefused", []string{"ingest", allRefused}, 3},
		{"AllRefusedAllowed", []string{"ingest", "--allow-rejects", allRefused}, 0},
		// Misuse is refused before a line is read: exit 2, not a failure to re-send.
		{"UnknownFlag", []string{"ingest", "--allow-reject", allStored}, 2},
		{"BadFormat", []string{"ingest", "--format", "xml", allStored}, 2},
		{"BadMaxRate", []string{"ingest", "--max-rate", "-1", allStored}, 2},
	} {
		if got := exitCode(run(c.args...)); got != c.want {
			t.Errorf("%s: orchestrator %v exited %d, want %d", c.name, c.args, got, c.want)
		}
	}
	// The refused file's valid lines were stored all the same: 2 + 2.
	shardDSN, err := pgserver.WithDatabase(env.ControlDSN, testdb.Text(t, env.Control, `SELECT current_database()`)+"_s1")
	testdb.Must(t, err, "shard dsn")
	if stored := testdb.Int(t, testdb.Pool(t, shardDSN), `SELECT count(*) FROM readings WHERE turbine_id = 'G-001'`); stored != 4 {
		t.Fatalf("%d readings of G-001 stored, want 4 (both files' valid lines)", stored)
	}
}
