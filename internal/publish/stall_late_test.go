package publish_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/testdb"
)

// The readings of stallFleet's farm the tests below send, per turbine for
// a whole window.
var (
	turning   = reading{available: true, power: 1500, wind: 8}
	feathered = reading{available: true, power: 0, wind: 9}
	producing = reading{available: true, power: 800, wind: 9}
	all       = func(w1 reading) map[string]reading {
		return map[string]reading{"W-1": w1, "W-2": turning, "W-3": turning, "W-4": turning, "W-5": turning}
	}
)

// stallRun drives stallFleet's farm on the test clock: live windows, each
// sent just after it ends and published at its watermark, and replays of
// minutes the link lost, corrected by the rollup (and judged by the
// judge_stalls job it queues).
type stallRun struct {
	t   *testing.T
	b   *pipelinetest.Pipeline
	pub *publish.Publisher
}

func newStallRun(t *testing.T) *stallRun {
	b := setup(t, stallFleet, pipelinetest.Options{})
	return &stallRun{t: t, b: b, pub: b.PublisherWith(time.Hour)}
}

// text is one window's readings: 30 a turbine at 2 s, received at
// received(recorded); the first `only` of W-1's when only > 0.
func windowText(start time.Time, turbines map[string]reading, received func(time.Time) time.Time, only int) string {
	var text strings.Builder
	for id, r := range turbines {
		for k := 0; k < 30; k++ {
			if id == "W-1" && only > 0 && k >= only {
				break
			}
			at := start.Add(time.Duration(2*k) * time.Second)
			fmt.Fprintf(&text, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":%g,"wind_ms":%g}`+"\n",
				id, at.Format(time.RFC3339), received(at).Format(time.RFC3339), r.available, r.power, r.wind)
		}
	}
	return text.String()
}

// live sends a window a second after it ends (nothing when turbines is
// nil: the link is down) and publishes it at its watermark.
func (r *stallRun) live(start time.Time, turbines map[string]reading) {
	r.t.Helper()
	r.b.Clock.Set(start.Add(time.Minute + time.Second))
	if turbines != nil {
		r.b.IngestText(r.t, windowText(start, turbines, func(at time.Time) time.Time { return at.Add(time.Second) }, 0))
	}
	r.b.Clock.Set(start.Add(2 * time.Minute))
	if _, err := r.pub.PublishDue(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// replay sends, at `at`, the windows from `from` on, one a turbine-map
// (received at `at`: late), then drains their marks and waits for the
// corrections and the judgements they queue. only > 0: W-1's third window
// is cut to its first `only` readings.
func (r *stallRun) replay(at, from time.Time, only int, windows ...map[string]reading) {
	r.t.Helper()
	r.b.Clock.Set(at)
	var text strings.Builder
	for i, w := range windows {
		cut := 0
		if i == 2 {
			cut = only
		}
		text.WriteString(windowText(from.Add(time.Duration(i)*time.Minute), w, func(time.Time) time.Time { return at }, cut))
	}
	r.b.IngestText(r.t, text.String())
	r.b.DrainNow(r.t)
	r.b.WaitJobs(r.t)
}

// stalls is every stall, by turbine and first window: "T first-last
// windows cleared|open [late]".
func (r *stallRun) stalls() string {
	r.t.Helper()
	return testdb.Text(r.t, r.b.Env.Control, `SELECT coalesce(string_agg(turbine_id || ' ' || to_char(first_window, 'HH24:MI') || '-' || to_char(last_window, 'HH24:MI')
		|| ' ' || windows || ' ' || coalesce('cleared ' || to_char(cleared_window, 'HH24:MI'), 'open') || CASE WHEN found_late THEN ' late' ELSE '' END,
		', ' ORDER BY turbine_id, first_window), '') FROM turbine_stall`)
}

// found is W-1's stalls' stamps: "raised HH:MM:SS found HH:MM:SS after Ns
// cleared_at HH:MM:SS|-".
func (r *stallRun) found() string {
	r.t.Helper()
	return testdb.Text(r.t, r.b.Env.Control, `SELECT string_agg('raised ' || to_char(raised_at, 'HH24:MI:SS') || ' found ' || to_char(found_at, 'HH24:MI:SS')
		|| ' after ' || extract(epoch FROM found_at - first_window_end)::integer || 's cleared_at ' || coalesce(to_char(cleared_at, 'HH24:MI:SS'), '-'),
		', ' ORDER BY first_window) FROM turbine_stall WHERE turbine_id = 'W-1'`)
}

// TestAStallInReplayedMinutesIsFoundLate: the farm's link is down over
// 12:01-12:04 (the fast path publishes those windows empty), W-1 produces
// in the live window 12:05, and at 12:08:30 the lost minutes are replayed:
// W-1 feathered from 12:02 to 12:04 while its neighbours turn. The
// correction's judgement raises the stall with its true first window,
// 12:02, over 3 windows, found late (at 12:08:30, 330 s after its first
// window ended), and cleared at 12:05, the window it produced in, judged
// live before the stall was known: from the stored readings.
func TestAStallInReplayedMinutesIsFoundLate(t *testing.T) {
	t.Parallel()
	r := newStallRun(t)
	r.live(noon, all(turning))
	for m := 1; m <= 4; m++ {
		r.live(noon.Add(time.Duration(m)*time.Minute), nil)
	}
	r.live(noon.Add(5*time.Minute), all(producing))
	r.live(noon.Add(6*time.Minute), all(turning))
	if got := r.stalls(); got != "" {
		t.Fatalf("before the replay: stalls %q, want none", got)
	}
	r.replay(noon.Add(8*time.Minute+30*time.Second), noon.Add(time.Minute), 0, all(turning), all(feathered), all(feathered), all(feathered))
	if got, want := r.stalls(), "W-1 12:02-12:04 3 cleared 12:05 late"; got != want {
		t.Fatalf("after the replay: stalls %q, want %q", got, want)
	}
	if got, want := r.found(), "raised 12:08:30 found 12:08:30 after 330s cleared_at 12:08:30"; got != want {
		t.Fatalf("W-1's stall: %q, want %q", got, want)
	}
	if n := testdb.Int(t, r.b.Env.Control, `SELECT count(*) FROM turbine_stall_window WHERE turbine_id = 'W-1'`); n != 3 {
		t.Fatalf("%d stalled windows of W-1 recorded, want 3", n)
	}
}

// TestALateStalledWindowExtendsTheLiveStallBack: the link is down over
// 12:01-12:03; W-1 is feathered in the live windows 12:04 and 12:05 (a
// stall raised live at 12:06:00, open). At 12:07:00 the lost minutes
// arrive: W-1 turned in 12:01 and was feathered from 12:02. The live stall
// is extended back (one stall, not two): first window 12:02, 4 windows,
// found late (240 s after 12:03), raised at 12:06:00 still; 12:06, where
// W-1 produces, clears it.
func TestALateStalledWindowExtendsTheLiveStallBack(t *testing.T) {
	t.Parallel()
	r := newStallRun(t)
	r.live(noon, all(turning))
	for m := 1; m <= 3; m++ {
		r.live(noon.Add(time.Duration(m)*time.Minute), nil)
	}
	r.live(noon.Add(4*time.Minute), all(feathered))
	r.live(noon.Add(5*time.Minute), all(feathered))
	if got, want := r.stalls(), "W-1 12:04-12:05 2 open"; got != want {
		t.Fatalf("live: stalls %q, want %q", got, want)
	}
	r.replay(noon.Add(7*time.Minute), noon.Add(time.Minute), 0, all(turning), all(feathered), all(feathered))
	if got, want := r.stalls(), "W-1 12:02-12:05 4 open late"; got != want {
		t.Fatalf("after the replay: stalls %q, want %q", got, want)
	}
	r.live(noon.Add(6*time.Minute), all(producing))
	if got, want := r.stalls(), "W-1 12:02-12:05 4 cleared 12:06 late"; got != want {
		t.Fatalf("after W-1 produced: stalls %q, want %q", got, want)
	}
	if got, want := r.found(), "raised 12:06:00 found 12:07:00 after 240s cleared_at 12:08:00"; got != want {
		t.Fatalf("W-1's stall: %q, want %q", got, want)
	}
}

// TestProductionFoundInsideAStallCutsIt: W-1 is feathered in 12:00 (raised
// live) and, after the link was down over 12:01-12:03, in 12:04: one open
// stall 12:00-12:04 over 2 windows. The lost minutes, replayed at 12:06:30,
// show it feathered in 12:01 and 12:03 but producing in 12:02. The stall
// ends there: 12:00-12:01 (2 windows) cleared at 12:02; 12:03-12:04 (2
// windows) is a stall of its own, open, found late (its first window at
// 12:06:30), raised when 12:04 was judged live (12:06:00).
func TestProductionFoundInsideAStallCutsIt(t *testing.T) {
	t.Parallel()
	r := newStallRun(t)
	r.live(noon, all(feathered))
	for m := 1; m <= 3; m++ {
		r.live(noon.Add(time.Duration(m)*time.Minute), nil)
	}
	r.live(noon.Add(4*time.Minute), all(feathered))
	if got, want := r.stalls(), "W-1 12:00-12:04 2 open"; got != want {
		t.Fatalf("live: stalls %q, want %q", got, want)
	}
	r.replay(noon.Add(6*time.Minute+30*time.Second), noon.Add(time.Minute), 0, all(feathered), all(producing), all(feathered))
	if got, want := r.stalls(), "W-1 12:00-12:01 2 cleared 12:02, W-1 12:03-12:04 2 open late"; got != want {
		t.Fatalf("after the replay: stalls %q, want %q", got, want)
	}
	if got, want := r.found(), "raised 12:02:00 found 12:02:00 after 60s cleared_at 12:06:30, raised 12:06:00 found 12:06:30 after 150s cleared_at -"; got != want {
		t.Fatalf("W-1's stalls: %q, want %q", got, want)
	}
}

// TestACatchUpJudgesEachWindow: the fast path, away since it published
// 11:59, publishes 12:00-12:04 at once at 12:06:00; W-1 turned in 12:00
// and 12:01 and was feathered from 12:02. The stall is raised at 12:02,
// over 3 windows, not found late (no correction: the readings were there
// at the publication).
func TestACatchUpJudgesEachWindow(t *testing.T) {
	t.Parallel()
	r := newStallRun(t)
	r.live(noon.Add(-time.Minute), nil)
	r.b.Clock.Set(noon.Add(5*time.Minute + time.Second))
	var text strings.Builder
	for m, w1 := range []reading{turning, turning, feathered, feathered, feathered} {
		text.WriteString(windowText(noon.Add(time.Duration(m)*time.Minute), all(w1), func(at time.Time) time.Time { return at.Add(time.Second) }, 0))
	}
	r.b.IngestText(t, text.String())
	r.b.Clock.Set(noon.Add(6 * time.Minute))
	sum, err := r.pub.PublishDue(context.Background())
	if err != nil || sum.Windows != 5 {
		t.Fatalf("catch-up: %+v (%v), want 5 windows published at once", sum, err)
	}
	if got, want := r.stalls(), "W-1 12:02-12:04 3 open"; got != want {
		t.Fatalf("stalls %q, want %q", got, want)
	}
	if got, want := r.found(), "raised 12:06:00 found 12:06:00 after 180s cleared_at -"; got != want {
		t.Fatalf("W-1's stall: %q, want %q", got, want)
	}
}

// TestLateMinutesInCalmWindOrUnavailableRaiseNothing: replayed minutes in
// which W-1 sits at 0 kW in calm wind (12:01, 12:05: the farm's median 2.5
// m/s, its neighbours at 50 kW), or at 0 kW in 9 m/s reporting itself
// unavailable (12:02, 12:04), raise nothing; 12:03, where it reports
// available at 0 kW in 9 m/s, is one stall of 1 window, cleared at 12:06
// where it produced live.
func TestLateMinutesInCalmWindOrUnavailableRaiseNothing(t *testing.T) {
	t.Parallel()
	r := newStallRun(t)
	r.live(noon, all(turning))
	for m := 1; m <= 5; m++ {
		r.live(noon.Add(time.Duration(m)*time.Minute), nil)
	}
	r.live(noon.Add(6*time.Minute), all(producing))
	calm := reading{available: true, power: 50, wind: 2.5}
	becalmed := map[string]reading{"W-1": {available: true, power: 0, wind: 2}, "W-2": calm, "W-3": calm, "W-4": calm, "W-5": calm}
	unavailable := all(reading{available: false, power: 0, wind: 9})
	r.replay(noon.Add(8*time.Minute), noon.Add(time.Minute), 0, becalmed, unavailable, all(feathered), unavailable, becalmed)
	if got, want := r.stalls(), "W-1 12:03-12:03 1 cleared 12:06 late"; got != want {
		t.Fatalf("stalls %q, want %q", got, want)
	}
	if n := testdb.Int(t, r.b.Env.Control, `SELECT count(*) FROM turbine_stall_window`); n != 1 {
		t.Fatalf("%d stalled windows recorded, want 1", n)
	}
}

// TestMinutesReplayedTwiceAreJudgedOnce: the lost minutes 12:01-12:04 are
// replayed at 12:07:00 with W-1's 12:03 cut to 20 readings, then at
// 12:07:30 whole (the 10 missing readings new, the rest duplicates): the
// second correction is judged too (one judge_stalls job more), and changes
// nothing; nor does judging all four windows once more. One stall,
// 12:02-12:04 over 3 windows, found at 12:07:00.
func TestMinutesReplayedTwiceAreJudgedOnce(t *testing.T) {
	t.Parallel()
	r := newStallRun(t)
	r.live(noon, all(turning))
	for m := 1; m <= 4; m++ {
		r.live(noon.Add(time.Duration(m)*time.Minute), nil)
	}
	r.live(noon.Add(5*time.Minute), all(producing))
	lost := []map[string]reading{all(turning), all(feathered), all(feathered), all(feathered)}
	judged := func() int64 {
		return testdb.Int(t, r.b.Env.Control, `SELECT count(*) FROM river_job WHERE kind = 'judge_stalls' AND state = 'completed'`)
	}
	want := "W-1 12:02-12:04 3 cleared 12:05 late"
	r.replay(noon.Add(7*time.Minute), noon.Add(time.Minute), 20, lost...)
	first := judged()
	if got := r.stalls(); got != want || first == 0 {
		t.Fatalf("after the first replay: stalls %q (%d judgements), want %q", got, first, want)
	}
	r.replay(noon.Add(7*time.Minute+30*time.Second), noon.Add(time.Minute), 0, lost...)
	if n := judged(); n != first+1 {
		t.Fatalf("%d judge_stalls jobs completed after the second replay, want %d (its correction judged)", n, first+1)
	}
	var starts []time.Time
	for m := 1; m <= 4; m++ {
		starts = append(starts, noon.Add(time.Duration(m)*time.Minute))
	}
	testdb.Must(t, r.b.Publisher.JudgeStalls(context.Background(), "windy", time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), starts), "judge again")
	if got := r.stalls(); got != want {
		t.Fatalf("after the second replay and one judgement more: stalls %q, want %q", got, want)
	}
	if got, want := r.found(), "raised 12:07:00 found 12:07:00 after 240s cleared_at 12:07:00"; got != want {
		t.Fatalf("W-1's stall: %q, want %q", got, want)
	}
	if n := testdb.Int(t, r.b.Env.Control, `SELECT count(*) FROM turbine_stall_window`); n != 3 {
		t.Fatalf("%d stalled windows recorded, want 3", n)
	}
}
