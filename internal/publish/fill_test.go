package publish_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestTodayCountsEveryWindowAfterAnOutage: the fast path publishes 1
// August (UTC) until 00:30, then is away until 06:00 (the process was
// down), and comes back with its one-hour catch-up (05:00 on). Today's
// number must still count every window of today up to the watermark, not
// the 29 + 59 windows published around the outage (88 windows: 7,920 of
// north's slots, 5,280 of south's, where the code before the fill-in
// stopped):
//
//   - the live windows come first: run 1 at 06:00 publishes 05:00-05:58 of
//     both farms (118 windows), then fills in the skipped 00:29-04:59
//     (271 windows a farm), oldest first, in slices of 120 (the run's
//     budget), one farm at a time;
//   - a live window due stops the fill-in: the clock passes 06:01:00 (the
//     watermark of 05:59) while the first slice is published, so run 1
//     fills in that slice only, and run 2 publishes 05:59 at 06:01:00
//     before it fills in the other 422 windows; run 3 has nothing to do;
//   - then today has all 360 windows 00:00-05:59: north 360 × 3 turbines ×
//     30 slots = 32,400 expected, received 32 (N-001's reading of 00:10,
//     its 30 of 03:00 sent on time while the fast path was away, N-002's
//     of 04:00 sent late at 06:00); south 360 × 2 × 30 = 21,600, none
//     received; the report's row of today says the same;
//   - the late reading's mark is left by the fill-in: the drain's
//     correction writes the window's final row with the same count
//     (received 1, revision 1), and the day still has 360 windows.
func TestTodayCountsEveryWindowAfterAnOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	at := func(h, m, s int) time.Time {
		return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
	}
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	p := b.PublisherWith(time.Hour)

	b.Clock.Set(at(0, 11, 1))
	b.ReadingsAt(t, at(0, 10, 0), "N-001")
	b.Clock.Set(at(0, 30, 0))
	if sum, err := p.PublishDue(ctx); err != nil || sum.Windows != 2*59 || sum.Filled != 0 {
		t.Fatalf("00:30: %+v, %v; want 118 windows (23:30-00:28 of both farms), none filled in", sum, err)
	}
	// Away from 00:30 to 06:00; the feed goes on.
	b.Clock.Set(at(3, 1, 1))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, at(3, 0, 2*k), "N-001")
	}
	b.Clock.Set(at(6, 0, 0))
	b.ReadingsAt(t, at(4, 0, 0), "N-002") // late: marked
	// The clock passes 06:01 as soon as a skipped window is published.
	p.OnPublish = func(w publish.Published) {
		if w.WindowStart.Before(at(5, 0, 0)) && b.Clock.Now().Before(at(6, 1, 0)) {
			b.Clock.Set(at(6, 1, 0))
		}
	}
	for run, want := range []publish.Summary{{Windows: 2 * 59, Filled: 120}, {Windows: 2, Filled: 2*271 - 120}, {}} {
		sum, err := p.PublishDue(ctx)
		if err != nil || sum.Windows != want.Windows || sum.Filled != want.Filled {
			t.Fatalf("run %d: %+v, %v; want %d live windows and %d filled in", run+1, sum, err, want.Windows, want.Filled)
		}
		if run == 1 {
			if w, ok := b.Window(t, "north", at(5, 59, 0), "fast"); !ok || !w.ComputedAt.Equal(at(6, 1, 0)) {
				t.Fatalf("window 05:59: %+v (published %v), want published at its watermark 06:01:00", w, ok)
			}
		}
	}

	type dayRow struct{ windows, expected, received int64 }
	today := func(farm string) dayRow {
		var d dayRow
		err := b.Env.Control.QueryRow(ctx, `SELECT windows, expected, received FROM day_provenance WHERE farm_id = $1 AND day = $2`, farm, day).
			Scan(&d.windows, &d.expected, &d.received)
		testdb.Must(t, err, "day_provenance %s", farm)
		return d
	}
	if n, s := today("north"), today("south"); n != (dayRow{360, 32_400, 32}) || s != (dayRow{360, 21_600, 0}) {
		t.Fatalf("today: north %+v, south %+v; want 360 windows each, 32,400 slots expected and 32 received, 21,600 and 0", n, s)
	}
	m, err := report.MonthlyAt(ctx, b.Env.Control, "north", "2026-08", b.Clock.Now())
	testdb.Must(t, err, "report")
	if r := m.Days[0]; r.Day != "2026-08-01" || r.Expected == nil || *r.Expected != 32_400 || *r.Received != 32 || r.Source != "farm_window" {
		t.Fatalf("the report's today: %+v; want 32,400 expected, 32 received, from the windows", r)
	}
	if w, ok := b.Window(t, "north", at(4, 0, 0), "fast"); !ok || w.Received != 1 {
		t.Fatalf("window 04:00 filled in: %+v (published %v), want received 1 (N-002's late reading)", w, ok)
	}
	b.DrainNow(t)
	b.WaitJobs(t)
	if f, ok := b.Window(t, "north", at(4, 0, 0), "final"); !ok || f.Received != 1 || f.Revision != 1 {
		t.Fatalf("window 04:00's final row %+v (exists %v); want received 1, revision 1: the late reading's mark survived the fill-in", f, ok)
	}
	if n := today("north"); n != (dayRow{360, 32_400, 32}) {
		t.Fatalf("today after the correction: %+v, want 360 windows, 32,400 expected, 32 received", n)
	}
}

// TestFillReadsOnlyToday: asking which windows of today the fast path
// skipped reads the farm's rows of today through the key, never its
// history: with 30 days of fast and final rows (86,400), analysed or not,
// no row of farm_window is read by a sequential scan and at most 2 index
// entries per window of a day (2,880) plus the two ends of the fast
// path's record. An hour of 31 July (London) with neither row is the
// answer: 60 windows from 10:00 local (09:00Z); none once a row of another
// grid is there.
func TestFillReadsOnlyToday(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := pipelinetest.ControlHistory(t)
	hole := time.Date(2026, 7, 31, 9, 0, 0, 0, time.UTC)
	testdb.Exec(t, pool, `DELETE FROM farm_window WHERE farm_id = 'f' AND window_start >= $1 AND window_start < $2`, hole, hole.Add(time.Hour))
	now := time.Date(2026, 7, 31, 19, 0, 0, 0, time.UTC) // 20:00 in London
	for _, unanalysed := range []bool{true, false} {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if unanalysed {
				if err := testdb.ForgetStatistics(ctx, tx, "farm_window"); err != nil {
					return err
				}
			}
			// the counts not yet reported of this session, before and after
			seq0, idx0, err := testdb.TableReads(ctx, tx, "farm_window")
			if err != nil {
				return err
			}
			gap, err := controldb.New(tx).FarmWindowsGap(ctx, controldb.FarmWindowsGapParams{FarmID: "f", Now: now, MaxWindows: 120})
			if err != nil {
				return err
			}
			if len(gap) != 60 || !gap[0].WindowStart.Equal(hole) || !gap[59].WindowEnd.Equal(hole.Add(time.Hour)) {
				t.Fatalf("unanalysed=%v: %d windows skipped (%+v), want 60 from %s", unanalysed, len(gap), gap, hole)
			}
			seq, idx, err := testdb.TableReads(ctx, tx, "farm_window")
			if err != nil {
				return err
			}
			seq, idx = seq-seq0, idx-idx0
			if seq != 0 || idx > 2*1440+2 {
				t.Fatalf("unanalysed=%v: %d rows of farm_window read by sequential scan, %d index entries; want 0 and <= 2,882 (the farm has 86,400)", unanalysed, seq, idx)
			}
			t.Logf("unanalysed=%v: %d index entries read", unanalysed, idx)
			return nil
		})
		testdb.Must(t, err, "windows skipped")
	}
	// A row of another grid today (the window rule changed: a 10-minute
	// final row in the hole): nothing is filled, a 1-minute window would
	// lie inside it.
	testdb.Exec(t, pool, `INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late, readings,
		computed_at, complete_through, revision) VALUES ('f', $1, 'final', $2, '2026-07-31', 900, 900, 900, 0, 900, $3, $3, 1)`,
		hole, hole.Add(10*time.Minute), now)
	gap, err := controldb.New(pool).FarmWindowsGap(ctx, controldb.FarmWindowsGapParams{FarmID: "f", Now: now, MaxWindows: 120})
	testdb.Must(t, err, "windows skipped")
	if len(gap) != 0 {
		t.Fatalf("%d windows skipped beside a row of another grid (first %s), want 0", len(gap), gap[0].WindowStart)
	}
}
