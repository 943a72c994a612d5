package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

const smallFleet = `
shards:
  - name: s1
  - name: s2
farms:
  - id: f1
    name: Farm One
    timezone: Europe/London
    turbines:
      - {prefix: T-, from: 1, to: 10, shard: s1}
  - id: f2
    name: Farm Two
    timezone: UTC
    turbines:
      - {prefix: U-, from: 1, to: 5, shard: s2}
      - {id: U-OLD, shard: s2, decommissioned_at: 2026-07-01T00:00:00Z}
`

// tuesday is the injected "now" of these tests: 2026-08-04 09:00 UTC.
var tuesday = time.Date(2026, 8, 4, 9, 0, 0, 0, time.UTC)

type bundle struct {
	env *testdb.Env
	in  *ingest.Ingestor
	now time.Time
}

func setup(t *testing.T, fleetYAML string, cfg ingest.Config, hooks *ingest.Hooks) *bundle {
	t.Helper()
	return setupRetention(t, fleetYAML, cfg, hooks, 0)
}

// setupRetention is setup with readings kept for retentionDays farm-local
// days (0 = all).
func setupRetention(t *testing.T, fleetYAML string, cfg ingest.Config, hooks *ingest.Hooks, retentionDays int) *bundle {
	t.Helper()
	return setupOnRetention(t, testdb.New(t, fleetYAML), cfg, hooks, retentionDays)
}

// setupOn is setup on an environment already made.
func setupOn(t *testing.T, env *testdb.Env, cfg ingest.Config, hooks *ingest.Hooks) *bundle {
	t.Helper()
	return setupOnRetention(t, env, cfg, hooks, 0)
}

func setupOnRetention(t *testing.T, env *testdb.Env, cfg ingest.Config, hooks *ingest.Hooks, retentionDays int) *bundle {
	t.Helper()
	ctx := context.Background()
	routes, err := ingest.LoadRoutes(ctx, env.Control, tuesday, retentionDays)
	testdb.Must(t, err, "load routes")
	b := &bundle{env: env, now: tuesday}
	b.in = ingest.New(cfg, env.Control, env.Shards, routes, func() time.Time { return b.now }, hooks)
	b.in.Start(ctx)
	t.Cleanup(b.in.Close)
	return b
}

func (b *bundle) ingest(t *testing.T, format reading.Format, body string) (ingest.Summary, error) {
	t.Helper()
	dec, err := reading.NewDecoder(format, strings.NewReader(body))
	testdb.Must(t, err, "decoder")
	return b.in.Ingest(context.Background(), "test", dec)
}

func (b *bundle) count(t *testing.T, shard, sql string, args ...any) int64 {
	t.Helper()
	return testdb.Int(t, b.env.Shards.Pool(shard), sql, args...)
}

func line(id string, recorded, received time.Time) string {
	return fmt.Sprintf(`{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1500.5,"wind_ms":9.25}`,
		id, recorded.Format(time.RFC3339Nano), received.Format(time.RFC3339Nano))
}

func TestDuplicatesAreCountedNotStored(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	at := tuesday // 10:00 BST: its window is open for 10 more minutes, so no marks
	body := line("T-001", at, tuesday) + "\n" + line("T-002", at, tuesday) + "\n"

	sum, err := b.ingest(t, reading.NDJSON, body)
	testdb.Must(t, err, "first delivery")
	if sum.Accepted != 2 || sum.Duplicate != 0 {
		t.Fatalf("first delivery: %+v, want 2 accepted, 0 duplicate", sum)
	}
	// Re-delivered, plus one new reading and the same reading twice in one body.
	again := body + line("T-003", at, tuesday) + "\n" + line("T-003", at, tuesday) + "\n"
	sum, err = b.ingest(t, reading.NDJSON, again)
	testdb.Must(t, err, "second delivery")
	if sum.Accepted != 1 || sum.Duplicate != 3 || sum.DirtyMarks != 0 {
		t.Fatalf("second delivery: %+v, want 1 accepted, 3 duplicate, 0 marks", sum)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`); n != 3 {
		t.Fatalf("s1 holds %d readings, want 3", n)
	}
	// After a batch without duplicates the writer is back on plain COPY.
	sum, err = b.ingest(t, reading.NDJSON, line("T-004", at, tuesday)+"\n")
	testdb.Must(t, err, "third delivery")
	if sum.Accepted != 1 {
		t.Fatalf("third delivery: %+v, want 1 accepted", sum)
	}
}

func TestBadLinesAreRejectedWithReasonsAndTheRestStored(t *testing.T) {
	t.Parallel()
	b := setupRetention(t, smallFleet, ingest.DefaultConfig(), nil, 30)
	at := tuesday.Add(-time.Minute + time.Second)
	good := line("T-001", at, tuesday)
	lines := []struct{ text, reason string }{
		{good, ""},
		{`{"turbine_id":"T-002","recorded_at":"2026-13-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":1}`, `recorded_at: cannot parse "2026-13-01T00:00:00Z"`},
		{`{"turbine_id":"AP-999","recorded_at":"2026-08-04T08:59:00Z","available":true,"power_kw":1,"wind_ms":1}`, `unknown turbine "AP-999"`},
		{`{"turbine_id":"T-002","recorded_at":"2026-08-04T08:59:00Z","power_kw":1,"wind_ms":1}`, `missing field "available"`},
		{`{"turbine_id":"T-002","recorded_at":"2026-08-04T08:59:00Z","available":"maybe","power_kw":1,"wind_ms":1}`, `available: cannot parse "maybe" as true/false`},
		{`{"turbine_id":"T-002","recorded_at":"2026-08-04T08:59:00Z","available":true,"power_kw":NaN,"wind_ms":1}`, `power_kw: "NaN" is not a finite number`},
		{`{"turbine_id":"T-002","recorded_at":"2026-08-04T08:59:00Z","available":true,"power_kw":1,"wind_ms":"+Inf"}`, `wind_ms: "+Inf" is not a finite number`},
		{`{"turbine_id":"T-002","recorded_at":"2026-08-05T10:00:00Z","received_at":"2026-08-04T09:00:00Z","available":true,"power_kw":1,"wind_ms":1}`, `recorded_at 2026-08-05T10:00:00Z is 25h0m0s ahead of received_at 2026-08-04T09:00:00Z (limit 24h0m0s)`},
		{`{"turbine_id":"T-002","recorded_at":"2026-06-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":1}`, `recorded_at 2026-06-01T00:00:00Z is older than the retention: farm f1 keeps readings from 2026-07-04T23:00:00Z`},
		{`{"turbine_id":"U-OLD","recorded_at":"2026-08-04T08:59:00Z","available":true,"power_kw":1,"wind_ms":1}`, `turbine "U-OLD" was decommissioned at 2026-07-01T00:00:00Z`},
		{`not json at all`, `not a JSON object`},
		{`{"turbine_id":"T-002","recorded_at":"2026-08-04T08:59:00Z","available":true,"power_kw":1,"wind_ms":1} trailing`, `malformed JSON: trailing data`},
		{line("T-003", at, tuesday), ""},
	}
	var body strings.Builder
	for _, l := range lines {
		body.WriteString(l.text + "\n")
	}
	sum, err := b.ingest(t, reading.NDJSON, body.String())
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 2 || sum.Rejected != int64(len(lines)-2) {
		t.Fatalf("summary %+v, want 2 accepted and %d rejected", sum, len(lines)-2)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`); n != 2 {
		t.Fatalf("s1 holds %d readings, want the 2 good ones", n)
	}
	rows, err := b.env.Control.Query(context.Background(), `SELECT line, reason, raw FROM ingest_reject ORDER BY line`)
	testdb.Must(t, err, "read rejects")
	defer rows.Close()
	i := 0
	for rows.Next() {
		var lineNo int64
		var reason, raw string
		testdb.Must(t, rows.Scan(&lineNo, &reason, &raw), "scan")
		for i < len(lines) && lines[i].reason == "" {
			i++
		}
		want := lines[i]
		if lineNo != int64(i+1) || !strings.Contains(reason, want.reason) || raw != want.text {
			t.Fatalf("reject %d: line %d reason %q raw %q; want line %d reason containing %q", i, lineNo, reason, raw, i+1, want.reason)
		}
		i++
	}
	testdb.Must(t, rows.Err(), "rows")
}

func TestCSVAndEarlyReadings(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	// Columns in another order, received_at absent on one line (stamped
	// at ingest), one reading 5 s in the future (a fast clock: early).
	body := "recorded_at,turbine_id,available,power_kw,wind_ms,received_at\n" +
		"2026-08-04T08:59:58Z,U-001,true,1200,8.5,2026-08-04T09:00:00Z\n" +
		"2026-08-04T08:59:58Z,U-002,false,0,8.5,\n" +
		"2026-08-04T09:00:05Z,U-003,true,1300,8.6,2026-08-04T09:00:00Z\n" +
		"2026-08-04T08:59:58Z,U-004,true,1300\n"
	sum, err := b.ingest(t, reading.CSV, body)
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 3 || sum.Early != 1 || sum.Rejected != 1 || sum.Live != 3 {
		t.Fatalf("summary %+v, want 3 accepted (3 live), 1 early, 1 rejected", sum)
	}
	if n := b.count(t, "s2", `SELECT count(*) FROM readings WHERE turbine_id = 'U-002' AND received_at = $1 AND NOT available`, tuesday); n != 1 {
		t.Fatalf("U-002 without received_at: %d rows stamped with the ingest clock, want 1", n)
	}
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM ingest_reject WHERE line = 5 AND reason = 'has 4 columns, the header has 6'`); n != 1 {
		t.Fatalf("short CSV line: %d matching rejects, want 1", n)
	}
}

func TestOldDayPartitionIsCreatedOnDemand(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	old := tuesday.AddDate(0, 0, -21)
	sum, err := b.ingest(t, reading.NDJSON, line("T-001", old, tuesday)+"\n")
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 1 || sum.Backfill != 1 {
		t.Fatalf("summary %+v, want 1 accepted in the backfill lane", sum)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings_p20260714`); n != 1 {
		t.Fatalf("partition readings_p20260714 holds %d rows, want 1", n)
	}
}

func TestDirtyMarks(t *testing.T) {
	t.Parallel()
	cfg := ingest.DefaultConfig()
	cfg.BackfillBatch = 5_000 // many transactions, still one mark per farm-day-shard
	b := setup(t, testdb.ArdnaveFleet, cfg, nil)
	ctx := context.Background()
	plan := b.env.Plan

	t.Run("FreshReadingsLeaveNoMark", func(t *testing.T) {
		at := time.Date(2026, 8, 4, 8, 52, 0, 0, time.UTC) // 09:52 BST: its window ends 10:00 BST, 8 min after it is written
		b.now = at.Add(3 * time.Second)
		sum, err := b.ingest(t, reading.NDJSON, line("AP-001", at, b.now)+"\n")
		testdb.Must(t, err, "ingest")
		if sum.Accepted != 1 || sum.DirtyMarks != 0 {
			t.Fatalf("summary %+v, want 1 accepted and no mark", sum)
		}
	})

	t.Run("ReplayMarksOncePerFarmDayShard", func(t *testing.T) {
		london, _ := time.LoadLocation("Europe/London")
		sc, err := simulate.FarmConfig(plan, "ardnave-point", time.Date(2026, 8, 1, 9, 0, 0, 0, london), time.Date(2026, 8, 1, 9, 20, 0, 0, london), 7)
		testdb.Must(t, err, "config")
		sc.ExactClocks = true
		sc.Outages = []simulate.Outage{{
			From: time.Date(2026, 8, 1, 8, 0, 0, 0, london), To: time.Date(2026, 8, 1, 12, 0, 0, 0, london),
			LostFrom: time.Date(2026, 8, 1, 9, 0, 0, 0, london), LostTo: time.Date(2026, 8, 1, 9, 20, 0, 0, london),
			ReplayAt: time.Date(2026, 8, 4, 10, 0, 0, 0, london),
		}}
		sc.Phase = simulate.PhaseReplay
		b.now = time.Date(2026, 8, 4, 10, 30, 0, 0, london)
		dec, wait := simulate.Stream(ctx, sc)
		sum, err := b.in.Ingest(ctx, "replay", dec)
		testdb.Must(t, err, "ingest replay")
		st, err := wait()
		testdb.Must(t, err, "simulate")
		want := int64(300 * 600) // 20 minutes of 2-second slots, 300 turbines
		if st.Readings != want || sum.Accepted != want || sum.Backfill != want || sum.DirtyMarks != 3 {
			t.Fatalf("replay: simulated %d, summary %+v; want %d accepted, all backfill, 3 marks", st.Readings, sum, want)
		}
		for _, shard := range []string{"s1", "s2", "s3"} {
			var n, turbines, readings int64
			err := b.env.Shards.Pool(shard).QueryRow(ctx, `SELECT count(*), max(cardinality(turbine_ids)), max(readings) FROM dirty_mark WHERE farm_id = 'ardnave-point' AND day = '2026-08-01'`).Scan(&n, &turbines, &readings)
			testdb.Must(t, err, "marks on %s", shard)
			if n != 1 || turbines != 100 || readings != 100*600 {
				t.Fatalf("%s: %d marks naming %d turbines and %d readings; want 1, 100, 60000", shard, n, turbines, readings)
			}
		}

		// The same replay again: all duplicates, no new marks, nothing widened.
		versions := b.count(t, "s1", `SELECT sum(version) FROM dirty_mark`)
		dec, wait = simulate.Stream(ctx, sc)
		sum, err = b.in.Ingest(ctx, "replay again", dec)
		testdb.Must(t, err, "ingest replay again")
		_, _ = wait()
		if sum.Accepted != 0 || sum.Duplicate != want || sum.DirtyMarks != 0 {
			t.Fatalf("second replay: %+v, want 0 accepted, %d duplicate, 0 marks", sum, want)
		}
		if v := b.count(t, "s1", `SELECT sum(version) FROM dirty_mark`); v != versions {
			t.Fatalf("duplicates touched the marks: version sum %d → %d", versions, v)
		}
	})
}

func TestRowsAndMarkCommitOrRollBackTogether(t *testing.T) {
	t.Parallel()
	injected := errors.New("injected failure between rows and commit")
	fail := true
	hooks := &ingest.Hooks{BeforeCommit: func(shard string, lane ingest.Lane) error {
		if fail {
			return injected
		}
		return nil
	}}
	b := setup(t, smallFleet, ingest.DefaultConfig(), hooks)
	late := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC) // Saturday, written Tuesday: dirty
	body := line("T-001", late, tuesday) + "\n" + line("T-002", late, tuesday) + "\n"

	sum, err := b.ingest(t, reading.NDJSON, body)
	if !errors.Is(err, injected) || sum.Failed != 2 || sum.Accepted != 0 {
		t.Fatalf("with failure: summary %+v err %v; want 2 failed, 0 accepted, the injected error", sum, err)
	}
	if rows, marks := b.count(t, "s1", `SELECT count(*) FROM readings`), b.count(t, "s1", `SELECT count(*) FROM dirty_mark`); rows != 0 || marks != 0 {
		t.Fatalf("after the failure: %d rows and %d marks survived, want 0 and 0", rows, marks)
	}

	fail = false
	sum, err = b.ingest(t, reading.NDJSON, body)
	testdb.Must(t, err, "retry")
	if rows, marks := b.count(t, "s1", `SELECT count(*) FROM readings`), b.count(t, "s1", `SELECT count(*) FROM dirty_mark`); rows != 2 || marks != 1 || sum.DirtyMarks != 1 {
		t.Fatalf("after the retry: %d rows, %d marks (summary %+v), want 2 and 1", rows, marks, sum)
	}
}

func TestLiveDoesNotQueueBehindBackfill(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 16)
	hooks := &ingest.Hooks{BeforeBackfillBatch: func(shard string) {
		entered <- struct{}{}
		<-release
	}}
	cfg := ingest.DefaultConfig()
	cfg.BackfillBatch = 10
	b := setup(t, smallFleet, cfg, hooks)
	ctx := context.Background()

	// A replay of 50 old readings: 5 backfill batches, the first held mid-way.
	var replay strings.Builder
	for i := 0; i < 50; i++ {
		replay.WriteString(line("T-005", time.Date(2026, 8, 1, 6, 0, 2*i, 0, time.UTC), tuesday) + "\n")
	}
	replayDone := make(chan ingest.Summary, 1)
	go func() {
		dec, _ := reading.NewDecoder(reading.NDJSON, strings.NewReader(replay.String()))
		sum, _ := b.in.Ingest(ctx, "replay", dec)
		replayDone <- sum
	}()
	<-entered // the backfill writer holds its first batch

	sum, err := b.ingest(t, reading.NDJSON, line("T-006", tuesday.Add(-time.Second), tuesday)+"\n")
	testdb.Must(t, err, "live ingest")
	if sum.Accepted != 1 || sum.Live != 1 {
		t.Fatalf("live reading: %+v, want 1 accepted in the live lane while the replay is held", sum)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-005'`); n != 0 {
		t.Fatalf("%d replay rows were written while held, want 0 (the live reading overtook them)", n)
	}
	close(release)
	if rs := <-replayDone; rs.Accepted != 50 || rs.Backfill != 50 {
		t.Fatalf("replay: %+v, want 50 accepted in the backfill lane", rs)
	}
}
