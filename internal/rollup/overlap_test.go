package rollup_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// results records the recomputes' results, by reason.
type results struct {
	mu  sync.Mutex
	all []rollup.Result
	by  []string
}

func (r *results) add(req rollup.Request, res rollup.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all, r.by = append(r.all, res), append(r.by, req.Reason)
}

func (r *results) of(reason string) []rollup.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []rollup.Result
	for i, res := range r.all {
		if r.by[i] == reason {
			out = append(out, res)
		}
	}
	return out
}

// wholeDay writes one reading every 2 s of the London day of 1 August for
// each turbine.
func wholeDay(ids ...string) string {
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, london)
	var text strings.Builder
	for _, id := range ids {
		for s := 0; s < 86_400; s += 2 {
			ndjson(&text, id, start.Add(time.Duration(s)*time.Second), true)
		}
	}
	return text.String()
}

// windowCounts is what the control database holds of the farm-day's
// windows: per window, its final row and this shard's part (expected /
// received / available / readings), as text.
func windowCounts(t *testing.T, b *bundle) []string {
	t.Helper()
	rows, err := b.Env.Control.Query(context.Background(), `
		SELECT f.window_start::text || ' ' || f.expected || '/' || f.received || '/' || f.available || '/' || f.readings
		       || ' part ' || p.expected || '/' || p.received || '/' || p.available || '/' || p.readings
		FROM farm_window f JOIN farm_window_part p USING (farm_id, window_start)
		WHERE f.farm_id = 'slots' AND f.day = '2026-08-01' AND f.path = 'final'
		ORDER BY f.window_start`)
	testdb.Must(t, err, "windows")
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		testdb.Must(t, rows.Scan(&s), "scan")
		out = append(out, s)
	}
	testdb.Must(t, rows.Err(), "windows")
	return out
}

// finalWindowsReceiving counts the farm-day's final windows whose row and
// part both hold n received slots and n readings.
func finalWindowsReceiving(t *testing.T, b *bundle, n int) int64 {
	t.Helper()
	return testdb.Int(t, b.Env.Control, `
		SELECT count(*) FROM farm_window f JOIN farm_window_part p USING (farm_id, window_start)
		WHERE f.farm_id = 'slots' AND f.day = '2026-08-01' AND f.path = 'final'
		  AND f.received = $1 AND f.readings = $1 AND p.received = $1 AND p.readings = $1 AND p.expected = f.expected`, n)
}

// closedWithFastOnly sets up the slots farm with FAST-1's whole day of 1
// August ingested and the day closed (a manual recompute) on 3 August, the
// recomputes' results recorded.
func closedWithFastOnly(t *testing.T) (*bundle, *results) {
	rec := &results{}
	b := setup(t, slotFleet, pipelinetest.Options{OnResult: rec.add})
	b.Clock.Set(time.Date(2026, 8, 3, 12, 0, 0, 0, london))
	b.IngestText(t, wholeDay("FAST-1"))
	b.Enqueue(t, "slots", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	return b, rec
}

// correctMIX1 ingests MIX-1's whole day of 1 August, drains its marks
// into one rollup_day job, waits for it and returns the dirty recomputes'
// results.
func correctMIX1(t *testing.T, b *bundle, rec *results) []rollup.Result {
	t.Helper()
	b.IngestText(t, wholeDay("MIX-1"))
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	return rec.of(rollup.ReasonDirty)
}

// mix1Corrected fails unless MIX-1's day is whole (43,200 slots expected,
// received and available) and each of the 1,440 final windows, row and
// part, holds 60 slots received and 60 readings (FAST-1's and MIX-1's 30
// each); it returns the windows as windowCounts gives them.
func mix1Corrected(t *testing.T, b *bundle, after string) []string {
	t.Helper()
	if got := b.slotCounts(t, "MIX-1", "2026-08-01"); got != (slotCounts{Expected: 43_200, Received: 43_200, Available: 43_200}) {
		t.Fatalf("MIX-1 after %s: %+v, want 43200 expected, received and available", after, got)
	}
	corrected := windowCounts(t, b)
	if n := finalWindowsReceiving(t, b, 60); len(corrected) != 1440 || n != 1440 {
		t.Fatalf("%d final windows after %s, %d of them with 60 received and 60 readings in the row and in its part; want 1440 and 1440 (FAST-1's and MIX-1's 30 slots each)", len(corrected), after, n)
	}
	return corrected
}

// fullRecomputeKeeps recomputes the farm-day whole (a manual job) and fails
// unless its final windows and parts are exactly those a correction left.
func fullRecomputeKeeps(t *testing.T, b *bundle, corrected []string) {
	t.Helper()
	b.Enqueue(t, "slots", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	b.WaitJobs(t)
	full := windowCounts(t, b)
	if len(full) != len(corrected) {
		t.Fatalf("%d final windows after a full recompute, the correction left %d", len(full), len(corrected))
	}
	for i := range full {
		if full[i] != corrected[i] {
			t.Fatalf("a full recompute after the correction changed its windows: %q, the correction wrote %q", full[i], corrected[i])
		}
	}
}

// TestALargeCorrectionOverlapsItsControlWrites: MIX-1's whole day arrives
// after the day was rolled up without it. Its correction (1,440 dirty
// windows) is computed in 4 ranges of windows, each range's parts, final
// rows and reconciliation written on the control database while the shard
// computes the next. The rows it leaves are exactly those of a full
// recompute of the day from scratch, done after it: 1,440 final windows
// with 60 slots received (FAST-1's and MIX-1's 30 each) and MIX-1's day of
// 43,200 slots.
func TestALargeCorrectionOverlapsItsControlWrites(t *testing.T) {
	t.Parallel()
	b, rec := closedWithFastOnly(t)
	if got := b.slotCounts(t, "MIX-1", "2026-08-01"); got.Received != 0 || got.Expected != 43_200 {
		t.Fatalf("MIX-1 before its readings: %+v, want 43200 expected, 0 received", got)
	}

	dirty := correctMIX1(t, b, rec)
	if len(dirty) != 1 || dirty[0].Ranges != 4 || dirty[0].Windows != 1440 || dirty[0].FinalWindows != 1440 || dirty[0].RowsRead != 43_200 {
		t.Fatalf("the correction: %+v, want one of 4 ranges, 1440 windows computed, 1440 final rows, 43200 readings counted", dirty)
	}
	corrected := mix1Corrected(t, b, "its correction")
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'slots' AND day = '2026-08-01' AND path = 'final' AND revision = 2`); n != 1440 {
		t.Fatalf("%d final windows at revision 2, want 1440 (each written by the close and by the correction)", n)
	}

	fullRecomputeKeeps(t, b, corrected)
	if manual := rec.of(rollup.ReasonManual); len(manual) != 2 || manual[1].Ranges != 0 {
		t.Fatalf("manual recomputes: %+v, want 2, computed at once", manual)
	}
}

// TestARefusedCorrectionWritesNoWindow: MIX-1's whole day arrives late, and
// retention drops the first hour of the day before the drain's correction
// runs. The correction computes its 4 ranges, writing each range's windows
// on the control database while the shard computes the next; then it finds
// the day cut and is refused. Every window it wrote is undone (its
// savepoint): the final rows are still the close's (revision 1, FAST-1's
// 30 slots received in each), the request is taken (no job could serve
// it), and the shard's rows are as the close left them.
func TestARefusedCorrectionWritesNoWindow(t *testing.T) {
	t.Parallel()
	b, rec := closedWithFastOnly(t)
	before := windowCounts(t, b)
	if n := finalWindowsReceiving(t, b, 30); len(before) != 1440 || n != 1440 {
		t.Fatalf("%d final windows after the close, %d of them with 30 received and 30 readings in the row and in its part; want 1440 and 1440 (FAST-1's 30 slots)", len(before), n)
	}

	b.IngestText(t, wholeDay("MIX-1"))
	keepFrom := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	dropped, err := partition.Maintain(context.Background(), b.Env.Shards.Pool("s1"), b.Clock.Now(), 0, &keepFrom)
	testdb.Must(t, err, "retention")
	if dropped != 1 {
		t.Fatalf("retention dropped %d partitions, want 1", dropped)
	}
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	dirty := rec.of(rollup.ReasonDirty)
	if len(dirty) != 1 || dirty[0].Ranges != 4 || dirty[0].Refused == nil {
		t.Fatalf("the correction: %+v, want one of 4 ranges, refused", dirty)
	}
	if after := windowCounts(t, b); strings.Join(after, "\n") != strings.Join(before, "\n") {
		for i := range min(len(after), len(before)) {
			if after[i] != before[i] {
				t.Fatalf("the refused correction changed the windows: %q, was %q", after[i], before[i])
			}
		}
		t.Fatalf("the refused correction changed the windows: %d, were %d", len(after), len(before))
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'slots' AND day = '2026-08-01' AND path = 'final' AND revision = 1`); n != 1440 {
		t.Fatalf("%d final windows at revision 1 after the refused correction, want 1440", n)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM rollup_pending WHERE farm_id = 'slots'`); n != 0 {
		t.Fatalf("%d recompute requests left after the refused correction, want 0 (taken: no job could serve it)", n)
	}
	// Nor on the shard: no range of it committed (a helper session's
	// neither), so MIX-1's windows there are still the close's, empty.
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM turbine_window WHERE turbine_id = 'MIX-1' AND received > 0`); n != 0 {
		t.Fatalf("%d of MIX-1's windows on the shard hold readings after the refused correction, want 0", n)
	}
}

// TestALargeCorrectionFillsInWindowsNotWhole: as above, MIX-1's whole day
// arrives after the close, but the shard lacks LATE-1's and SEVEN-1's rows
// of ten windows (12:00-12:09; as a shard that never computed them leaves
// it: a fast path that was away, a job whose shard commit failed). The
// correction learns it from the sums its window statement returns (2 of 4
// turbines), writes none of those windows with its ranges, computes the
// 20 missing turbine-windows after them, and writes the ten windows then,
// whole: 1,460 windows computed, 1,440 final rows each written once
// (revision 2), and every window as a full recompute of the day leaves it.
func TestALargeCorrectionFillsInWindowsNotWhole(t *testing.T) {
	t.Parallel()
	b, rec := closedWithFastOnly(t)
	noon := time.Date(2026, 8, 1, 12, 0, 0, 0, london)
	removed := testdb.Int(t, b.Env.Shards.Pool("s1"), `
		WITH del AS (
			DELETE FROM turbine_window
			WHERE turbine_id IN ('LATE-1', 'SEVEN-1') AND window_start >= $1 AND window_start < $2
			RETURNING farm_id, window_start, expected, received, available, late, received + beyond_cadence + out_of_service AS readings
		), d AS (
			SELECT farm_id, window_start, count(*)::integer AS n, sum(expected) AS e, sum(received) AS r, sum(available) AS a,
			       sum(late) AS l, sum(readings) AS rd
			FROM del GROUP BY farm_id, window_start
		), sub AS (
			UPDATE farm_window_sum fs
			SET turbines = fs.turbines - d.n, expected = fs.expected - d.e, received = fs.received - d.r,
			    available = fs.available - d.a, late = fs.late - d.l, readings = fs.readings - d.rd
			FROM d WHERE fs.farm_id = d.farm_id AND fs.window_start = d.window_start
			RETURNING 1
		)
		SELECT count(*) FROM del`, noon, noon.Add(10*time.Minute))
	if removed != 20 {
		t.Fatalf("removed %d turbine_window rows, want 20 (2 turbines x 10 windows)", removed)
	}

	dirty := correctMIX1(t, b, rec)
	if len(dirty) != 1 || dirty[0].Ranges != 4 || dirty[0].Windows != 1460 || dirty[0].FinalWindows != 1440 {
		t.Fatalf("the correction: %+v, want one of 4 ranges, 1460 windows computed (MIX-1's 1440 and the 20 missing), 1440 final rows", dirty)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM turbine_window WHERE farm_id = 'slots' AND day = '2026-08-01'`); n != 4*1440 {
		t.Fatalf("%d turbine_window rows of the day after the correction, want 5760 (4 turbines x 1440 windows)", n)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'slots' AND day = '2026-08-01' AND path = 'final' AND revision = 2`); n != 1440 {
		t.Fatalf("%d final windows at revision 2, want 1440 (each written by the close and once by the correction)", n)
	}
	corrected := windowCounts(t, b)
	if len(corrected) != 1440 {
		t.Fatalf("%d final windows after the correction, want 1440", len(corrected))
	}
	fullRecomputeKeeps(t, b, corrected)
}

// TestAHelperCommitBeforeAFailedCorrectionLosesNothing: MIX-1's whole day
// arrives after the close, and its correction computes its ranges on two
// shard sessions. The helper commits its ranges' rows; then the correction
// fails before its control commit (its context ends, as a job's timeout
// ends it). The control database is as the close left it (1,440 final
// windows with FAST-1's 30 slots, revision 1), the marks are all still on
// the shard, and MIX-1's rows there are those of the helper's ranges only.
// The retry writes what a correction that never failed writes: 1,440
// final windows with 60 slots received, MIX-1's day of 43,200, and a full
// recompute of the day changes none of them and finds no sum that drifted.
func TestAHelperCommitBeforeAFailedCorrectionLosesNothing(t *testing.T) {
	t.Parallel()
	b, rec := closedWithFastOnly(t)
	ctx := context.Background()
	before := windowCounts(t, b)
	b.IngestText(t, wholeDay("MIX-1"))
	shard := b.Env.Shards.Pool("s1")
	marks := testdb.Int(t, shard, `SELECT count(*) FROM dirty_window`)
	if marks == 0 {
		t.Fatal("no dirty windows after MIX-1's day arrived")
	}
	idleConns(t, shard, 2) // the helper gets one at once

	req := rollup.Request{FarmID: "slots", Day: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Shard: "s1", Reason: rollup.ReasonDirty, Attempt: 2}
	failing, cancel := context.WithCancel(ctx)
	defer cancel()
	b.Computer.AfterCompute = func(rollup.Request) { cancel() }
	_, err := b.Computer.Recompute(failing, req)
	b.Computer.AfterCompute = nil
	if err == nil {
		t.Fatal("the correction whose context ended before its control commit succeeded")
	}
	mixed := testdb.Int(t, shard, `SELECT count(*) FROM turbine_window WHERE turbine_id = 'MIX-1' AND received > 0`)
	if mixed == 0 || mixed >= 1440 {
		t.Fatalf("%d of MIX-1's windows hold its readings on the shard after the failure, want some and not all (the helper's ranges, committed; the caller's, rolled back)", mixed)
	}
	if after := windowCounts(t, b); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the failed correction changed the control database's windows (%d rows, were %d)", len(after), len(before))
	}
	if n := testdb.Int(t, shard, `SELECT count(*) FROM dirty_window`); n != marks {
		t.Fatalf("%d dirty windows on the shard after the failure, want all %d still there", n, marks)
	}

	idleConns(t, shard, 2)
	res, err := b.Computer.Recompute(ctx, req)
	testdb.Must(t, err, "retry")
	if res.Windows != 1440 || res.FinalWindows != 1440 || res.Ranges != 4 || res.Sessions != 2 {
		t.Fatalf("the retry: %+v, want 1440 windows in 4 ranges on 2 sessions, 1440 final rows", res)
	}
	corrected := mix1Corrected(t, b, "the retry")
	fullRecomputeKeeps(t, b, corrected)
	manual := rec.of(rollup.ReasonManual)
	if last := manual[len(manual)-1]; len(last.Alarms) != 0 {
		t.Fatalf("the full recompute after the retry raised %v, want no alarm (the shard's sums in step with its rows)", last.Alarms)
	}
}

// idleConns leaves n idle connections in the pool.
func idleConns(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	conns := make([]*pgxpool.Conn, n)
	for i := range conns {
		c, err := pool.Acquire(context.Background())
		testdb.Must(t, err, "acquire")
		conns[i] = c
	}
	for _, c := range conns {
		c.Release()
	}
}
