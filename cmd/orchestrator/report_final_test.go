package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestReportIsNotFinalWhileAnIngestedReadingIsNotCounted: north's September,
// every hour of both turbines but N-001's 10:00 on
// the 10th, ingested, rolled up and drained by `work --until-idle`: final.
// Then that reading, replayed by `orchestrator ingest` (its mark written on
// the shard), and `report monthly` in the same second, as JSON from the CLI
// and as CSV from psql running the report file: the 10th and the month are
// provisional, still at the old count. After `work --until-idle` (the
// drain, then the recompute): final, the reading counted. The clock never
// moves, so no grace after a drain can make the difference.
func TestReportIsNotFinalWhileAnIngestedReadingIsNotCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, reportFleet)
	now := time.Date(2026, 10, 2, 9, 30, 0, 0, time.UTC)
	cfg := ConfigFromEnv()
	cfg.DatabaseURL, cfg.PartitionsAhead = env.ControlDSN, 1
	run := func(args ...string) (string, error) {
		t.Helper()
		m := &Main{Config: cfg, Now: func() time.Time { return now }}
		defer m.Close()
		cmd := m.Command()
		cmd.SetArgs(args)
		var out bytes.Buffer
		cmd.SetOut(&out)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		var err error
		captureStdout(t, func() { err = cmd.ExecuteContext(cctx) })
		return out.String(), err
	}
	london, err := time.LoadLocation("Europe/London")
	testdb.Must(t, err, "zone")
	reading := func(id string, at time.Time, receivedAt time.Time) string {
		return fmt.Sprintf(`{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
			id, at.UTC().Format(time.RFC3339), receivedAt.UTC().Format(time.RFC3339))
	}
	late := time.Date(2026, 9, 10, 10, 0, 5, 0, london)
	var month strings.Builder
	for d := 1; d <= 30; d++ {
		start := time.Date(2026, 9, d, 0, 0, 0, 0, london)
		for h := 0; h < 24; h++ {
			at := start.Add(time.Duration(h)*time.Hour + 5*time.Second)
			for _, id := range []string{"N-001", "N-002"} {
				if id == "N-001" && at.Equal(late) {
					continue
				}
				month.WriteString(reading(id, at, at.Add(2*time.Second)))
			}
		}
	}
	dir := t.TempDir()
	monthFile, lateFile := filepath.Join(dir, "september.ndjson"), filepath.Join(dir, "replay.ndjson")
	testdb.Must(t, os.WriteFile(monthFile, []byte(month.String()), 0o600), "write")
	testdb.Must(t, os.WriteFile(lateFile, []byte(reading("N-001", late, now)), 0o600), "write")

	monthly := func(when string) report.Month {
		t.Helper()
		out, err := run("report", "monthly", "--farm", "north", "--month", "2026-09", "--format", "json")
		testdb.Must(t, err, "report monthly %s", when)
		var m report.Month
		testdb.Must(t, json.Unmarshal([]byte(out), &m), "decode the report %s", when)
		if len(m.Days) != 30 {
			t.Fatalf("report %s: %d days, want 30", when, len(m.Days))
		}
		return m
	}
	received := func(d report.Day) int64 {
		if d.Received == nil {
			return -1
		}
		return *d.Received
	}
	psqlDay := func(day string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, psqlBinary(t), "-X", "-w", "--csv", "-t",
			"-v", "farm=north", "-v", "month=2026-09", "-v", "now="+now.Format(time.RFC3339),
			"-f", filepath.Join("..", "..", "sql", "reports", "monthly_availability.sql"), "-d", env.ControlDSN)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("psql: %v\n%s", err, errOut.String())
		}
		for _, row := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(row, "north,"+day+",") {
				return row
			}
		}
		t.Fatalf("psql printed no row for %s:\n%s", day, out.String())
		return ""
	}

	if _, err := run("ingest", monthFile); err != nil {
		t.Fatalf("ingest September: %v", err)
	}
	if _, err := run("work", "--until-idle"); err != nil {
		t.Fatalf("work --until-idle: %v", err)
	}
	// Settled; 10 September's missing reading (1 of 48 slots, 20.8 ‰) is
	// over the farm's 10 ‰: incomplete, and the month with it.
	m := monthly("after the rollup")
	if d := m.Days[9]; m.Status != report.StatusIncomplete || d.Status != report.StatusIncomplete || received(d) != 47 || *m.Total.Received != 1439 ||
		m.Days[8].Status != report.StatusFinal {
		t.Fatalf("after the rollup: month %s (%s), 10 September %s with %d received, total %v; want incomplete (10 September only), 47 and 1439",
			m.Status, m.Total.Why, d.Status, received(d), *m.Total.Received)
	}

	// An operator accepts 10 September from the CLI: final, the note in
	// its why; a note with an escape sequence, and a second acceptance, are
	// refused (exit 2).
	var ee *exitError
	if _, err := run("day", "accept", "--farm", "north", "--day", "2026-09-10", "--note", "N-001's\x1b[2J reading lost"); !errors.As(err, &ee) || ee.code != 2 ||
		!strings.Contains(err.Error(), "--note: U+001B at byte 7 is a control character") {
		t.Fatalf("day accept with ESC in the note: %v, want exit 2 naming U+001B at byte 7", err)
	}
	if _, err := run("day", "accept", "--farm", "north", "--day", "2026-09-10", "--note", "N-001's 10:00 reading lost"); err != nil {
		t.Fatalf("day accept: %v", err)
	}
	m = monthly("after the acceptance")
	if d := m.Days[9]; m.Status != report.StatusFinal || d.Status != report.StatusFinal ||
		!strings.Contains(d.Why, "accepted with 1 of 48 slots without a reading by ") || !strings.HasSuffix(d.Why, ": N-001's 10:00 reading lost") {
		t.Fatalf("after the acceptance: month %s, 10 September %s (%s); want final, the acceptance in why", m.Status, d.Status, d.Why)
	}
	if _, err := run("day", "accept", "--farm", "north", "--day", "2026-09-10", "--note", "again"); !errors.As(err, &ee) || ee.code != 2 ||
		!strings.Contains(err.Error(), "north 2026-09-10 is final") {
		t.Fatalf("accepting it again: %v, want exit 2 saying it is final", err)
	}

	// The replay, and the report in the same second.
	if _, err := run("ingest", lateFile); err != nil {
		t.Fatalf("ingest the replay: %v", err)
	}
	m = monthly("right after the replay")
	if d := m.Days[9]; m.Status != report.StatusProvisional || d.Status != report.StatusProvisional || !d.Pending || !m.Total.Pending ||
		received(d) != 47 || len(m.HeldBack) != 1 || m.HeldBack[0].Day != "2026-09-10" ||
		!strings.HasPrefix(m.HeldBack[0].Reason, "shard not drained (marked on s1 at 2026-10-02 09:30:00 UTC, not drained yet); accepted with 1 of 48") {
		t.Fatalf("right after the replay: month %s, held back %+v; 10 September %s, pending %v, %d received; "+
			"want the month and 10 September provisional and pending (shard not drained, marked on s1 at 2026-10-02 09:30:00 UTC; its acceptance noted), 47 received",
			m.Status, m.HeldBack, d.Status, d.Pending, received(d))
	}
	if row := psqlDay("2026-09-10"); !strings.Contains(row, `,true,provisional,"shard not drained (marked on s1 at 2026-10-02 09:30:00 UTC, not drained yet); accepted`) {
		t.Fatalf("psql's row for 10 September right after the replay:\n%s\nwant pending and provisional, shard not drained", row)
	}

	// Drained and recomputed: final, the reading counted.
	if _, err := run("work", "--until-idle"); err != nil {
		t.Fatalf("work --until-idle after the replay: %v", err)
	}
	m = monthly("after the drain")
	if d := m.Days[9]; m.Status != report.StatusFinal || d.Status != report.StatusFinal || d.Pending || received(d) != 48 || *m.Total.Received != 1440 {
		t.Fatalf("after the drain: month %s (%s), 10 September %s with %d received, total %v; want final, 48 and 1440",
			m.Status, m.Total.Why, d.Status, received(d), *m.Total.Received)
	}
	if row := psqlDay("2026-09-10"); !strings.HasPrefix(row, "north,2026-09-10,48,48,48,") || !strings.HasSuffix(row, ",false,final,,default,,100.0000,100.0000,,0.0000,,") {
		t.Fatalf("psql's row for 10 September after the drain:\n%s\nwant 48 received, final", row)
	}
}
