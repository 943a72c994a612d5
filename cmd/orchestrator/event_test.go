package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestEventCommands: the CLI as an operator uses it. A day of readings is
// ingested and rolled up (work --until-idle); `event add` enters a force
// majeure over the two hours a turbine sent nothing, says which day it
// queued, and the next `work --until-idle` counts those 12 slots as force
// majeure (excluded from nothing under the default contract: unavailable,
// as information unavailable was, so the contractual figure stays, and the
// information-unavailable share falls to 0). `event list` shows it with
// who and why; `event void` takes it out and the day is as before; a
// mistake is named, with exit 2.
func TestEventCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, `
shards: [{name: s1}]
farms:
  - {id: f, timezone: UTC, cadence_seconds: 600, commissioned_at: 2026-07-01T00:00:00Z, turbines: [{id: T-1, shard: s1}]}
`)
	now := time.Date(2026, 8, 3, 9, 30, 0, 0, time.UTC)
	cfg := ConfigFromEnv()
	cfg.DatabaseURL, cfg.PartitionsAhead = env.ControlDSN, 1
	run := func(args ...string) (string, error) {
		t.Helper()
		m := &Main{Config: cfg, Now: func() time.Time { return now }}
		defer m.Close()
		cmd := m.Command()
		cmd.SetArgs(args)
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		var err error
		out := captureStdout(t, func() { err = cmd.ExecuteContext(cctx) })
		return out, err
	}
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for k := 0; k < 144; k++ {
		if k >= 60 && k < 72 { // 10:00-12:00: nothing arrives
			continue
		}
		at := day.Add(time.Duration(k)*10*time.Minute + 5*time.Second)
		fmt.Fprintf(&b, `{"turbine_id":"T-1","recorded_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n", at.Format(time.RFC3339))
	}
	file := filepath.Join(t.TempDir(), "day.ndjson")
	testdb.Must(t, os.WriteFile(file, []byte(b.String()), 0o600), "write")
	for _, args := range [][]string{{"ingest", file}, {"work", "--until-idle"}} {
		if _, err := run(args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	figures := func() string {
		t.Helper()
		var s string
		err := env.Control.QueryRow(ctx, `SELECT format('%s %s %s', category_slots, to_char(100 * contractual_availability, 'FM990.0000'),
			to_char(100 * information_unavailable, 'FM990.0000')) FROM farm_day_contract WHERE farm_id = 'f' AND day = '2026-08-01'`).Scan(&s)
		testdb.Must(t, err, "farm_day_contract")
		return s
	}
	// 132 available, 12 without a reading: 132 / 144 = 91.6667 %.
	const before = "{132,0,0,0,0,0,0,0,0,0,0,0,12} 91.6667 8.3333"
	if got := figures(); got != before {
		t.Fatalf("rolled up: %s; want %s", got, before)
	}

	out, err := run("event", "add", "--farm", "f", "--from", "2026-08-01T10:00:00Z", "--to", "2026-08-01T12:00:00Z",
		"--category", "force_majeure", "--note", "substation fire", "--by", "ops-anna")
	if err != nil || !strings.Contains(out, "entered event 1: force_majeure on f (every turbine), 2026-08-01T10:00:00Z to 2026-08-01T12:00:00Z, by ops-anna") ||
		!strings.Contains(out, "queued the recompute of 1 farm-day(s) (1 rollup_day job(s); a running serve or work does them): 2026-08-01") {
		t.Fatalf("event add: %v\n%s", err, out)
	}
	if _, err := run("work", "--until-idle"); err != nil {
		t.Fatalf("work: %v", err)
	}
	// Force majeure (12) is unavailable by default, as information
	// unavailable was: 132 / 144 still, but no slot lacks information.
	if got, want := figures(), "{132,0,0,0,0,0,0,0,0,0,0,12,0} 91.6667 0.0000"; got != want {
		t.Fatalf("with the event: %s; want %s", got, want)
	}
	out, err = run("event", "list", "--farm", "f", "--from", "2026-08-01T00:00:00Z", "--to", "2026-08-02T00:00:00Z")
	if err != nil || !strings.Contains(out, "force_majeure") || !strings.Contains(out, "by ops-anna") || !strings.Contains(out, "substation fire") {
		t.Fatalf("event list: %v\n%s", err, out)
	}

	out, err = run("event", "void", "1", "--note", "the fire was the day after", "--by", "ops-ben")
	if err != nil || !strings.Contains(out, "voided event 1") {
		t.Fatalf("event void: %v\n%s", err, out)
	}
	if _, err := run("work", "--until-idle"); err != nil {
		t.Fatalf("work: %v", err)
	}
	if got := figures(); got != before {
		t.Fatalf("after the void: %s; want %s", got, before)
	}
	out, _ = run("event", "list", "--farm", "f", "--from", "2026-08-01T00:00:00Z", "--to", "2026-08-02T00:00:00Z")
	if !strings.Contains(out, "by ops-ben: the fire was the day after") {
		t.Fatalf("event list after the void:\n%s", out)
	}

	var ee *exitError
	if _, err := run("event", "add", "--farm", "f", "--from", "2026-08-01T10:00:00Z", "--to", "2026-08-01T09:00:00Z",
		"--category", "icing", "--note", "x"); !errors.As(err, &ee) || ee.code != 2 ||
		!strings.Contains(err.Error(), "must be after from") || !strings.Contains(err.Error(), `category: "icing" is not one of`) {
		t.Fatalf("a wrong event: %v; want exit 2 naming both problems", err)
	}
	if _, err := run("event", "add", "--farm", "f", "--from", "10:00", "--to", "2026-08-01T09:00:00Z",
		"--category", "force_majeure", "--note", "x"); !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "--from: want an RFC 3339 instant") {
		t.Fatalf("a bad instant: %v; want exit 2 naming --from", err)
	}

	// Text is text: a bidi override in a note is refused, exit 2, naming
	// it; an event stored before the rule (written here by hand past the
	// control database's trigger) is listed on one line with its escape
	// sequence, tab and override written as code points, never raw.
	if _, err := run("event", "add", "--farm", "f", "--from", "2026-08-01T10:00:00Z", "--to", "2026-08-01T12:00:00Z",
		"--category", "force_majeure", "--note", "fire ‮erif", "--by", "ops-anna"); !errors.As(err, &ee) || ee.code != 2 ||
		!strings.Contains(err.Error(), "note: U+202E at byte 5 is a bidi control") {
		t.Fatalf("a note with U+202E: %v; want exit 2 naming it", err)
	}
	testdb.Exec(t, env.Control, `ALTER TABLE operator_event DISABLE TRIGGER operator_event_text`)
	testdb.Exec(t, env.Control, `INSERT INTO operator_event (farm_id, from_at, to_at, category_id, note, entered_by)
		SELECT 'f', '2026-08-01T13:00:00Z', '2026-08-01T14:00:00Z', id, E'clear\x1b[2J\tnow \u202eerif', 'ops-anna' FROM availability_category WHERE code = 'force_majeure'`)
	out, err = run("event", "list", "--farm", "f", "--from", "2026-08-01T00:00:00Z", "--to", "2026-08-02T00:00:00Z")
	if err != nil || !strings.Contains(out, `clear\u{1B}[2J\u{9}now \u{202E}erif`) || strings.ContainsAny(out, "\x1b\t\u202e") || strings.Count(out, "\n") != 3 {
		t.Fatalf("event list with a note from before the rule: %v; want the header and two events on three lines, escapes not raw:\n%q", err, out)
	}
}
