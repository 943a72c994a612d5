package rollup_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fastpath"
	"github.com/galewatch/galewatch/internal/testdb"
)

// Two farms in UTC, 2 s cadence, 60 s windows and 60 s allowed lateness
// (the defaults): north (3 turbines, shard s1) and south (2 turbines,
// shard s2), which sends nothing.
const windowFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: north
    timezone: UTC
    turbines: [{prefix: N-, from: 1, to: 3, shard: s1}]
  - id: south
    timezone: UTC
    turbines: [{prefix: S-, from: 1, to: 2, shard: s2}]
`

var noon = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

func (b *bundle) publisher(catchUp time.Duration) *fastpath.Publisher {
	return &fastpath.Publisher{Control: b.env.Control, Shards: b.env.Shards, Now: b.clock.Now, CatchUp: catchUp}
}

// readingsAt ingests one reading per turbine id, recorded at `at`, received
// at the clock's now.
func (b *bundle) readingsAt(t testing.TB, at time.Time, ids ...string) {
	t.Helper()
	var text strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
			id, at.UTC().Format(time.RFC3339Nano), b.clock.Now().UTC().Format(time.RFC3339Nano))
	}
	b.ingestText(t, text.String())
}

type windowRow struct {
	Expected, Received, Available int64
	Revision                      int
	ComputedAt, CompleteThrough   time.Time
}

func (b *bundle) window(t testing.TB, farm string, start time.Time, path string) (windowRow, bool) {
	t.Helper()
	var w windowRow
	err := b.env.Control.QueryRow(context.Background(),
		`SELECT expected, received, available, revision, computed_at, complete_through FROM farm_window WHERE farm_id = $1 AND window_start = $2 AND path = $3`,
		farm, start, path).Scan(&w.Expected, &w.Received, &w.Available, &w.Revision, &w.ComputedAt, &w.CompleteThrough)
	if err != nil {
		return w, false
	}
	return w, true
}

// TestWindowPublishedAtItsWatermark: the window [12:00, 12:01) is not
// published a millisecond before 12:02:00 (its end + 60 s of allowed
// lateness) and is published at 12:02:00 exactly, once, with what had
// arrived: 30 readings of N-001 out of 90 expected slots (3 turbines × 30).
func TestWindowPublishedAtItsWatermark(t *testing.T) {
	t.Parallel()
	b := setup(t, windowFleet, options{})
	b.clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.readingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	p := b.publisher(2 * time.Minute)
	b.clock.Set(noon.Add(2*time.Minute - time.Millisecond))
	if _, ok := b.window(t, "north", noon, "fast"); ok {
		t.Fatal("a window published before the watermark")
	}
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.window(t, "north", noon, "fast"); ok {
		t.Fatal("window 12:00 published at 12:01:59.999, before its watermark 12:02:00")
	}
	b.clock.Set(noon.Add(2 * time.Minute))
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, ok := b.window(t, "north", noon, "fast")
	if !ok {
		t.Fatal("window 12:00 not published at its watermark 12:02:00")
	}
	if w.Expected != 90 || w.Received != 30 || w.Available != 30 || w.Revision != 0 ||
		!w.ComputedAt.Equal(noon.Add(2*time.Minute)) || !w.CompleteThrough.Equal(noon.Add(time.Minute)) {
		t.Fatalf("fast row %+v, want expected 90, received 30, available 30, revision 0, published 12:02:00, complete through 12:01:00", w)
	}
	// The silent farm published its window too: silence is information.
	s, ok := b.window(t, "south", noon, "fast")
	if !ok || s.Expected != 60 || s.Received != 0 {
		t.Fatalf("silent farm's window: %+v (published %v), want expected 60, received 0", s, ok)
	}
	// Published once: a second round (and a second publisher) change nothing.
	if _, err := b.publisher(2 * time.Minute).PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'north' AND window_start = $1 AND path = 'fast'`, noon); n != 1 {
		t.Fatalf("%d fast rows for one window, want 1", n)
	}
}

// TestLateReadingsAreCorrected: a reading that arrives inside the allowed
// lateness (before publication, but late enough to mark) is in the fast row
// and its correction changes nothing; one that arrives after publication is
// missing from the fast row (the drop at publication, counted in
// reconciliation) and in the final row after its correction, and a later
// one again, with a new revision each time. Nothing is dropped silently.
func TestLateReadingsAreCorrected(t *testing.T) {
	t.Parallel()
	b := setup(t, windowFleet, options{})
	p := b.publisher(2 * time.Minute)
	b.clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.readingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	// Inside the allowed lateness: arrives 12:01:40, after the mark threshold
	// (end + lateness - margin = 12:01:30), before publication (12:02:00).
	b.clock.Set(noon.Add(100 * time.Second))
	b.readingsAt(t, noon.Add(10*time.Second), "N-002")
	b.clock.Set(noon.Add(2 * time.Minute))
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w, _ := b.window(t, "north", noon, "fast"); w.Received != 31 {
		t.Fatalf("fast row received %d, want 31 (the reading inside the lateness included)", w.Received)
	}
	// After publication: arrives 12:05.
	b.clock.Set(noon.Add(5 * time.Minute))
	b.readingsAt(t, noon.Add(20*time.Second), "N-003")
	b.drain(t)
	b.waitIdle(t)
	f, ok := b.window(t, "north", noon, "final")
	if !ok || f.Received != 32 || f.Revision != 1 {
		t.Fatalf("final row %+v (exists %v), want received 32, revision 1", f, ok)
	}
	var fastRec, finalRec int64
	var pm float64
	err := b.env.Control.QueryRow(context.Background(),
		`SELECT fast_received, final_received, received_divergence_pm FROM reconciliation_pm WHERE farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon).
		Scan(&fastRec, &finalRec, &pm)
	testdb.Must(t, err, "reconciliation")
	if fastRec != 31 || finalRec != 32 || pm != 31.25 {
		t.Fatalf("reconciliation fast %d final %d divergence %.3f‰, want 31 / 32 / 31.25‰", fastRec, finalRec, pm)
	}
	// 31.25‰ is above the default 30‰: an alert for the window.
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM alert WHERE kind = 'divergence' AND farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon); n != 1 {
		t.Fatalf("%d divergence alerts for the window, want 1", n)
	}
	// Hours later, another straggler: revision 2.
	b.clock.Set(noon.Add(3 * time.Hour))
	b.readingsAt(t, noon.Add(30*time.Second), "N-003")
	b.drain(t)
	b.waitIdle(t)
	if f, _ := b.window(t, "north", noon, "final"); f.Received != 33 || f.Revision != 2 {
		t.Fatalf("final row after the straggler %+v, want received 33, revision 2", f)
	}
	if n := testdb.Int(t, b.env.Control, `SELECT final_received FROM reconciliation WHERE farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon); n != 33 {
		t.Fatalf("reconciliation final_received %d, want 33", n)
	}
}

// TestAnUnreachableShardDoesNotHoldBackAnotherFarm: south's shard is gone;
// north still publishes every due window, and south's failure is reported
// by name.
func TestAnUnreachableShardDoesNotHoldBackAnotherFarm(t *testing.T) {
	t.Parallel()
	b := setup(t, windowFleet, options{})
	b.clock.Set(noon.Add(61 * time.Second))
	b.readingsAt(t, noon, "N-001")
	b.env.Shards.Pool("s2").Close()
	b.clock.Set(noon.Add(2 * time.Minute))
	sum, err := b.publisher(2 * time.Minute).PublishDue(context.Background())
	if err == nil || sum.Failed["south"] == nil || sum.Failed["north"] != nil {
		t.Fatalf("publish: %+v, %v; want south failed and named, north not", sum, err)
	}
	if w, ok := b.window(t, "north", noon, "fast"); !ok || w.Received != 1 {
		t.Fatalf("north's window %+v (published %v), want published with received 1", w, ok)
	}
	if _, ok := b.window(t, "south", noon, "fast"); ok {
		t.Fatal("south published without its shard")
	}
}

// TestRestartMidPublicationPublishesOnce: a publisher that dies after
// computing and before publishing leaves nothing published; the next
// round publishes each window exactly once.
func TestRestartMidPublicationPublishesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, windowFleet, options{})
	b.clock.Set(noon.Add(61 * time.Second))
	b.readingsAt(t, noon, "N-001", "N-002")
	b.clock.Set(noon.Add(5 * time.Minute))
	crash := errors.New("killed")
	dying := b.publisher(5 * time.Minute)
	dying.AfterCompute = func(string) error { return crash }
	if _, err := dying.PublishDue(context.Background()); !errors.Is(err, crash) {
		t.Fatalf("the dying publisher returned %v", err)
	}
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast'`); n != 0 {
		t.Fatalf("%d windows published by a publisher killed before publishing, want 0", n)
	}
	for i := 0; i < 2; i++ {
		if _, err := b.publisher(5 * time.Minute).PublishDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// With a 5-minute catch-up from 12:05, windows 12:00 to 12:03 are due
	// (end + 60 s <= now).
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast' AND farm_id = 'north'`); n != 4 {
		t.Fatalf("%d north windows published, want 4 (12:00 to 12:03)", n)
	}
	if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM (SELECT farm_id, window_start FROM farm_window WHERE path = 'fast' GROUP BY 1, 2 HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d windows published twice", n)
	}
	if w, _ := b.window(t, "north", noon, "fast"); w.Received != 2 {
		t.Fatalf("window 12:00 received %d, want 2", w.Received)
	}
}
