package provenance_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/testdb"
)

var noon = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// TestProvenanceSaysWhichPathMadeANumber: a published window shows path
// fast, revision 0, complete through its watermark; after a correction the
// same window shows path final, revision 1; the day shows the sum of its
// windows and is final only when every window shown is; the tile is the
// latest window; the publish lag of a window published exactly at its
// watermark is 0; freshness is the last watermark.
func TestProvenanceSaysWhichPathMadeANumber(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := pipelinetest.New(t, testdb.New(t, pipelinetest.WindowFleet), pipelinetest.Options{At: noon})
	p := b.PublisherWith(2 * time.Minute)
	b.Clock.Set(noon.Add(61 * time.Second))
	b.ReadingsAt(t, noon, "N-001", "N-002")
	b.Clock.Set(noon.Add(2 * time.Minute))
	// A running pipeline has drained the shard (every 5 s): until a shard's
	// first drain, nothing says no reading is waiting there, so a number
	// reads pending (farm_day_waiting). The drain's job (the marks of the
	// 12:00:00 readings name 11:59 too) runs first: while it runs the day
	// is pending (it passed only while a JIT-compiled publication was
	// slower than the job).
	b.DrainNow(t)
	b.WaitJobs(t)
	if _, err := p.PublishDue(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := provenance.Window(ctx, b.Env.Control, "north", noon)
	testdb.Must(t, err, "window provenance")
	if w.Path != "fast" || w.Revision != 0 || w.Received != 2 || w.Expected != 90 || w.Pending ||
		!w.CompleteThrough.Equal(noon.Add(time.Minute)) || !w.ComputedAt.Equal(noon.Add(2*time.Minute)) {
		t.Fatalf("published window: %+v, want fast, revision 0, received 2 of 90, not pending, complete through 12:01, computed 12:02", w)
	}
	if lag := testdb.Int(t, b.Env.Control, `SELECT lag_ms FROM publish_lag WHERE farm_id = 'north' AND window_start = $1`, noon); lag != 0 {
		t.Fatalf("publish lag %d ms for a window published exactly at its watermark, want 0", lag)
	}
	fr, err := provenance.Freshnesses(ctx, b.Env.Control)
	testdb.Must(t, err, "freshness")
	if len(fr) != 2 || !fr[0].Published || !fr[0].CompleteThrough.Equal(noon.Add(time.Minute)) || fr[0].Behind(b.Clock.Now()) != time.Minute {
		t.Fatalf("freshness %+v, want north published, complete through 12:01, 1 min behind at 12:02", fr)
	}
	// A correction: a reading of 12:00:04 arriving at 12:10.
	b.Clock.Set(noon.Add(10 * time.Minute))
	b.ReadingsAt(t, noon.Add(4*time.Second), "N-003")
	b.DrainNow(t)
	b.WaitJobs(t)
	w, err = provenance.Window(ctx, b.Env.Control, "north", noon)
	testdb.Must(t, err, "window provenance")
	if w.Path != "final" || w.Revision != 1 || w.Received != 3 || !w.ComputedAt.Equal(noon.Add(10*time.Minute)) {
		t.Fatalf("corrected window: %+v, want final, revision 1, received 3, computed 12:10", w)
	}
	// The day so far: 12:00 (published, then corrected) and 11:59, before
	// the fast path's catch-up, which the conservative marks of the 12:00:00
	// readings named (a slot may start up to two cadences back): the
	// correction computed it whole, for every turbine, received 0 of 90.
	d, err := provenance.Day(ctx, b.Env.Control, "north", time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))
	testdb.Must(t, err, "day provenance")
	if d.Path != "final" || d.Windows != 2 || d.FinalWindows != 2 || d.Received != 3 || d.Expected != 180 {
		t.Fatalf("day: %+v, want path final, 2 windows (11:59, 12:00) both final, received 3 of 180", d)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT expected FROM farm_window WHERE farm_id = 'north' AND window_start = $1 AND path = 'final'`, noon.Add(-time.Minute)); n != 90 {
		t.Fatalf("window 11:59 final expected %d, want 90 (all three turbines)", n)
	}
	tile, err := provenance.Tile(ctx, b.Env.Control, "north")
	testdb.Must(t, err, "tile")
	if !tile.Start.Equal(noon) || tile.Path != "final" {
		t.Fatalf("tile %+v, want the 12:00 window (the latest published), final", tile)
	}
	if _, err := provenance.Tile(ctx, b.Env.Control, "nowhere"); !errors.Is(err, provenance.ErrNotPublished) {
		t.Fatalf("tile of an unknown farm: %v, want ErrNotPublished", err)
	}
}

// TestCountHasThousandsSeparators: how every surface writes a count.
func TestCountHasThousandsSeparators(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 12_960_000: "12,960,000", -1_234_567: "-1,234,567"} {
		if got := provenance.Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
