package publish_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

var noon = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// setup starts the pipeline on fleetYAML at 02:00 UTC on 2 August 2026;
// each test moves the clock where it needs it.
func setup(t testing.TB, fleetYAML string, opts pipelinetest.Options) *pipelinetest.Pipeline {
	t.Helper()
	opts.At = time.Date(2026, 8, 2, 2, 0, 0, 0, time.UTC)
	return pipelinetest.New(t, testdb.New(t, fleetYAML), opts)
}

// TestWindowPublishedAtItsWatermark: the window [12:00, 12:01) is not
// published a millisecond before 12:02:00 (its end + 60 s of allowed
// lateness) and is published at 12:02:00 exactly, once, with what had
// arrived: 30 readings of N-001 out of 90 expected slots (3 turbines × 30).
func TestWindowPublishedAtItsWatermark(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	p := b.PublisherWith(2 * time.Minute)
	b.Clock.Set(noon.Add(2*time.Minute - time.Millisecond))
	if _, ok := b.Window(t, "north", noon, "fast"); ok {
		t.Fatal("a window published before the watermark")
	}
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Window(t, "north", noon, "fast"); ok {
		t.Fatal("window 12:00 published at 12:01:59.999, before its watermark 12:02:00")
	}
	b.Clock.Set(noon.Add(2 * time.Minute))
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, ok := b.Window(t, "north", noon, "fast")
	if !ok {
		t.Fatal("window 12:00 not published at its watermark 12:02:00")
	}
	if w.Expected != 90 || w.Received != 30 || w.Available != 30 || w.Revision != 0 ||
		!w.ComputedAt.Equal(noon.Add(2*time.Minute)) || !w.CompleteThrough.Equal(noon.Add(time.Minute)) {
		t.Fatalf("fast row %+v, want expected 90, received 30, available 30, revision 0, published 12:02:00, complete through 12:01:00", w)
	}
	// The silent farm published its window too: silence is information.
	s, ok := b.Window(t, "south", noon, "fast")
	if !ok || s.Expected != 60 || s.Received != 0 {
		t.Fatalf("silent farm's window: %+v (published %v), want expected 60, received 0", s, ok)
	}
	// Published once: a second round (and a second publisher) change nothing.
	if _, err := b.PublisherWith(2 * time.Minute).PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'north' AND window_start = $1 AND path = 'fast'`, noon); n != 1 {
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
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	p := b.PublisherWith(2 * time.Minute)
	b.Clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "N-001")
	}
	// Inside the allowed lateness: arrives 12:01:40, after the mark threshold
	// (end + lateness - margin = 12:01:30), before publication (12:02:00).
	b.Clock.Set(noon.Add(100 * time.Second))
	b.ReadingsAt(t, noon.Add(10*time.Second), "N-002")
	b.Clock.Set(noon.Add(2 * time.Minute))
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w, _ := b.Window(t, "north", noon, "fast"); w.Received != 31 {
		t.Fatalf("fast row received %d, want 31 (the reading inside the lateness included)", w.Received)
	}
	// After publication: arrives 12:05.
	b.Clock.Set(noon.Add(5 * time.Minute))
	b.ReadingsAt(t, noon.Add(20*time.Second), "N-003")
	b.DrainNow(t)
	b.WaitJobs(t)
	f, ok := b.Window(t, "north", noon, "final")
	if !ok || f.Received != 32 || f.Revision != 1 {
		t.Fatalf("final row %+v (exists %v), want received 32, revision 1", f, ok)
	}
	var fastRec, finalRec int64
	var pm float64
	err := b.Env.Control.QueryRow(context.Background(),
		`SELECT fast_received, final_received, received_divergence_pm FROM reconciliation_pm WHERE farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon).
		Scan(&fastRec, &finalRec, &pm)
	testdb.Must(t, err, "reconciliation")
	if fastRec != 31 || finalRec != 32 || pm != 31.25 {
		t.Fatalf("reconciliation fast %d final %d divergence %.3f‰, want 31 / 32 / 31.25‰", fastRec, finalRec, pm)
	}
	// 31.25‰ is above the default 30‰: an alert for the window.
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE kind = 'divergence' AND farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon); n != 1 {
		t.Fatalf("%d divergence alerts for the window, want 1", n)
	}
	// Hours later, another straggler: revision 2.
	b.Clock.Set(noon.Add(3 * time.Hour))
	b.ReadingsAt(t, noon.Add(30*time.Second), "N-003")
	b.DrainNow(t)
	b.WaitJobs(t)
	if f, _ := b.Window(t, "north", noon, "final"); f.Received != 33 || f.Revision != 2 {
		t.Fatalf("final row after the straggler %+v, want received 33, revision 2", f)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT final_received FROM reconciliation WHERE farm_id = 'north' AND scope = 'window' AND period_start = $1`, noon); n != 33 {
		t.Fatalf("reconciliation final_received %d, want 33", n)
	}
}

// TestAnUnreachableShardDoesNotHoldBackAnotherFarm: south's shard is gone;
// north still publishes every due window, and south's failure is reported
// by name.
func TestAnUnreachableShardDoesNotHoldBackAnotherFarm(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Clock.Set(noon.Add(61 * time.Second))
	b.ReadingsAt(t, noon, "N-001")
	b.Env.Shards.Pool("s2").Close()
	b.Clock.Set(noon.Add(2 * time.Minute))
	sum, err := b.PublisherWith(2 * time.Minute).PublishDue(context.Background())
	if err == nil || sum.Failed["south"] == nil || sum.Failed["north"] != nil {
		t.Fatalf("publish: %+v, %v; want south failed and named, north not", sum, err)
	}
	if w, ok := b.Window(t, "north", noon, "fast"); !ok || w.Received != 1 {
		t.Fatalf("north's window %+v (published %v), want published with received 1", w, ok)
	}
	if _, ok := b.Window(t, "south", noon, "fast"); ok {
		t.Fatal("south published without its shard")
	}
}

// TestAStuckShardIsLeftToFinishInTheBackground: south's shard is stuck
// (its window lock held, as a server that hangs would hold it). With
// Detach, a round returns after Detach with south in flight; the next
// round skips south instead of waiting for it again; north is published;
// once the shard answers, south's publication finishes by itself. Without
// Detach every round lasted the stuck shard's whole timeout and held back
// the next round of every other farm (found by the hung-shard fault test).
func TestAStuckShardIsLeftToFinishInTheBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Clock.Set(noon.Add(61 * time.Second))
	b.ReadingsAt(t, noon, "N-001")
	b.Clock.Set(noon.Add(2 * time.Minute))
	lock, err := b.Env.Shards.Pool("s2").Begin(ctx)
	testdb.Must(t, err, "begin")
	defer lock.Rollback(ctx)
	testdb.Must(t, sharddb.New(lock).WindowLock(ctx, sharddb.WindowLockParams{FarmID: "south", Day: noon}), "hold south's window lock")

	// South stays stuck until the lock is released, however slow the
	// machine: no timeout of its own ends it first.
	p := b.PublisherWith(2 * time.Minute)
	p.Detach, p.ShardTimeout, p.FarmTimeout = time.Second, testdb.Hang, testdb.Hang
	const hang = 30 * time.Second // normal 1.0 s a round (Detach), 0.1 s a window; 30 s catches a hang
	for round := 1; round <= 2; round++ {
		type result struct {
			sum publish.Summary
			err error
		}
		done := make(chan result, 1)
		go func() { sum, err := p.PublishDue(ctx); done <- result{sum, err} }()
		select {
		case r := <-done:
			// In flight (not failed): the first round detached south, the
			// second skipped it (trying it again, it would find south's
			// lock taken and count nothing).
			if r.err != nil || r.sum.InFlight < 1 || len(r.sum.Failed) != 0 {
				t.Fatalf("round %d: %+v, %v; want south in flight", round, r.sum, r.err)
			}
		case <-time.After(hang):
			t.Fatalf("round %d hung waiting for south's stuck shard", round)
		}
	}
	// North is published meanwhile, south not.
	deadline := time.Now().Add(hang)
	for {
		if w, ok := b.Window(t, "north", noon, "fast"); ok {
			if w.Received != 1 {
				t.Fatalf("north's window %+v, want received 1", w)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("north not published after %v while south's shard was stuck: hung", hang)
		}
		time.Sleep(20 * time.Millisecond) // polling a row
	}
	if _, ok := b.Window(t, "south", noon, "fast"); ok {
		t.Fatal("south published while its shard was stuck")
	}
	testdb.Must(t, lock.Rollback(ctx), "release south's shard")
	deadline = time.Now().Add(hang)
	for {
		if w, ok := b.Window(t, "south", noon, "fast"); ok {
			if w.Expected != 60 || w.Received != 0 {
				t.Fatalf("south's window %+v, want 60 expected (2 turbines × 30), 0 received", w)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("south's background publication did not finish %v after its shard's release: hung", hang)
		}
		time.Sleep(20 * time.Millisecond) // polling a row
	}
}

// TestARoundPublishesEightFarmsAtOnce: a round works on
// publish.DefaultParallel (8) farms at once, no more: with ten farms held
// after their computation, 8 are held and the other 2 have not started
// (their clock not read); released, all ten are published once.
func TestARoundPublishesEightFarmsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var fleetYAML strings.Builder
	fleetYAML.WriteString("shards: [{name: s1}]\nfarms:\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&fleetYAML, "  - id: f%02d\n    timezone: UTC\n    turbines: [{prefix: F%02d-, from: 1, to: 1, shard: s1}]\n", i, i)
	}
	b := setup(t, fleetYAML.String(), pipelinetest.Options{})
	b.Clock.Set(noon.Add(2 * time.Minute))
	p := b.PublisherWith(2 * time.Minute)
	var mu sync.Mutex
	held, started, most := 0, 0, 0
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseAll) // a failed check must not leave farms held
	now := p.Now
	p.Now = func() time.Time { // read once by each farm as it starts
		mu.Lock()
		started++
		mu.Unlock()
		return now()
	}
	p.AfterCompute = func(string) error {
		mu.Lock()
		held++
		most = max(most, held)
		mu.Unlock()
		<-release
		mu.Lock()
		held--
		mu.Unlock()
		return nil
	}
	done := make(chan publish.Summary, 1)
	go func() {
		sum, err := p.PublishDue(ctx)
		if err != nil {
			t.Errorf("publish: %v", err)
		}
		done <- sum
	}()
	look := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return held, started
	}
	deadline := time.Now().Add(30 * time.Second)
	for h, _ := look(); h < publish.DefaultParallel; h, _ = look() {
		if time.Now().After(deadline) {
			t.Fatalf("%d farms held after 30 s, want %d", h, publish.DefaultParallel)
		}
		time.Sleep(10 * time.Millisecond) // polling the hook's count
	}
	// A ninth farm would have started by now if the round allowed it.
	time.Sleep(300 * time.Millisecond)
	if h, s := look(); h != 8 || s != 8 {
		t.Fatalf("with 8 farms held: %d held, %d started; want 8 and 8 (the other 2 waiting for a slot)", h, s)
	}
	releaseAll()
	sum := <-done
	if sum.Farms != 10 || sum.Windows != 10 || most != 8 {
		t.Fatalf("round: %+v, at most %d held at once; want 10 farms, 10 windows (one each), 8 at once", sum, most)
	}
	var fast int
	testdb.Must(t, b.Env.Control.QueryRow(ctx, `SELECT count(*) FROM farm_window WHERE path = 'fast' AND window_start = $1`, noon).Scan(&fast), "count")
	if fast != 10 {
		t.Fatalf("%d fast rows for 12:00, want 10", fast)
	}
}

// TestRestartMidPublicationPublishesOnce: a publisher that dies after
// computing and before publishing leaves nothing published; the next
// round publishes each window exactly once.
func TestRestartMidPublicationPublishesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Clock.Set(noon.Add(61 * time.Second))
	b.ReadingsAt(t, noon, "N-001", "N-002")
	b.Clock.Set(noon.Add(5 * time.Minute))
	crash := errors.New("killed")
	dying := b.PublisherWith(5 * time.Minute)
	dying.AfterCompute = func(string) error { return crash }
	if _, err := dying.PublishDue(context.Background()); !errors.Is(err, crash) {
		t.Fatalf("the dying publisher returned %v", err)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast'`); n != 0 {
		t.Fatalf("%d windows published by a publisher killed before publishing, want 0", n)
	}
	for i := 0; i < 2; i++ {
		if _, err := b.PublisherWith(5 * time.Minute).PublishDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// With a 5-minute catch-up from 12:05, windows 12:00 to 12:03 are due
	// (end + 60 s <= now).
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast' AND farm_id = 'north'`); n != 4 {
		t.Fatalf("%d north windows published, want 4 (12:00 to 12:03)", n)
	}
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM (SELECT farm_id, window_start FROM farm_window WHERE path = 'fast' GROUP BY 1, 2 HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d windows published twice", n)
	}
	if w, _ := b.Window(t, "north", noon, "fast"); w.Received != 2 {
		t.Fatalf("window 12:00 received %d, want 2", w.Received)
	}
}

// TestOutOfOrderArrivalGivesTheSameAnswer: the same readings of one window,
// delivered in order before publication into one farm and shuffled across
// publication and corrections into another, end in the same final counts
// and the same day.
func TestOutOfOrderArrivalGivesTheSameAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const twins = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: inorder
    timezone: UTC
    turbines: [{prefix: A-, from: 1, to: 3, shard: s1}]
  - id: shuffled
    timezone: UTC
    turbines: [{prefix: B-, from: 1, to: 3, shard: s2}]
`
	b := setup(t, twins, pipelinetest.Options{})
	p := b.PublisherWith(2 * time.Minute)
	// 12:00:00-12:00:58 for turbines 1-3 (90 readings each farm), the A side
	// at once, the B side in three deliveries: the last third first, the
	// first third after publication, the middle third hours later.
	b.Clock.Set(noon.Add(61 * time.Second))
	for k := 0; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "A-001", "A-002", "A-003")
	}
	for k := 20; k < 30; k++ {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "B-003", "B-001", "B-002")
	}
	b.Clock.Set(noon.Add(2 * time.Minute))
	if _, err := p.PublishDue(ctx); err != nil {
		t.Fatal(err)
	}
	b.Clock.Set(noon.Add(5 * time.Minute))
	for k := 9; k >= 0; k-- {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "B-002", "B-003", "B-001")
	}
	b.DrainNow(t)
	b.WaitJobs(t)
	b.Clock.Set(noon.Add(3 * time.Hour))
	for k := 19; k >= 10; k-- {
		b.ReadingsAt(t, noon.Add(time.Duration(2*k)*time.Second), "B-001", "B-003", "B-002")
	}
	b.DrainNow(t)
	b.WaitJobs(t)
	a, _ := b.Window(t, "inorder", noon, "fast")
	s, ok := b.Window(t, "shuffled", noon, "final")
	if !ok || a.Received != 90 || s.Received != 90 || s.Available != a.Available || s.Expected != a.Expected {
		t.Fatalf("in order: fast %+v; shuffled: final %+v (exists %v); want both 90 received of 90", a, s, ok)
	}
	// Close the day: the same turbine_day counts on both sides.
	b.Clock.Set(time.Date(2026, 8, 2, 0, 5, 0, 0, time.UTC))
	b.Enqueue(t, "inorder", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.Enqueue(t, "shuffled", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.WaitJobs(t)
	for i := 1; i <= 3; i++ {
		x, y := b.TurbineDay(t, fmt.Sprintf("A-%03d", i), "2026-08-01"), b.TurbineDay(t, fmt.Sprintf("B-%03d", i), "2026-08-01")
		if x.Received != 30 || y.Received != 30 || x.Expected != y.Expected || x.Available != y.Available {
			t.Fatalf("turbine %d: in order %+v, shuffled %+v; want the same, 30 received each", i, x, y)
		}
	}
}

// TestCompletenessAlertNamesTheSilentTurbinesAndHours: a closed day on
// which N-002 sent nothing from 00:00 to 02:00 UTC and N-003 nothing at
// all, against 1 % allowed: one completeness alert naming N-002 with
// hours 0 and 1, and N-003 with all 24.
func TestCompletenessAlertNamesTheSilentTurbinesAndHours(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	b.Clock.Set(day.Add(25 * time.Hour))
	var text strings.Builder
	for at := day; at.Before(day.Add(24 * time.Hour)); at = at.Add(2 * time.Second) {
		fmt.Fprintf(&text, `{"turbine_id":"N-001","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
			at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
		if !at.Before(day.Add(2 * time.Hour)) {
			fmt.Fprintf(&text, `{"turbine_id":"N-002","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`+"\n",
				at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
		}
	}
	b.IngestText(t, text.String())
	b.Enqueue(t, "north", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.WaitJobs(t)
	var detail, message string
	err := b.Env.Control.QueryRow(ctx, `SELECT detail::text, message FROM alert WHERE kind = 'completeness' AND farm_id = 'north' AND day = '2026-08-01'`).Scan(&detail, &message)
	testdb.Must(t, err, "completeness alert")
	all := make([]string, 24)
	for h := range all {
		all[h] = fmt.Sprint(h)
	}
	for _, want := range []string{
		`"turbine_id": "N-002", "silent_hours": [0, 1]`,
		`"turbine_id": "N-003", "silent_hours": [` + strings.Join(all, ", ") + `]`,
	} {
		if !strings.Contains(detail, want) {
			t.Fatalf("alert detail %s does not contain %s", detail, want)
		}
	}
	if strings.Contains(detail, `"N-001"`) || !strings.Contains(message, "received 82800 of 129600") {
		t.Fatalf("alert %q / %s: want N-001 absent and received 82800 (43200 + 39600) of 129600", message, detail)
	}
	// The south farm sent nothing either: its day is all silent.
	b.Enqueue(t, "south", "2026-08-01", rollup.ReasonSchedule, jobs.PrioritySchedule)
	b.WaitJobs(t)
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE kind = 'completeness' AND farm_id = 'south'`); n != 1 {
		t.Fatalf("%d completeness alerts for the silent farm, want 1", n)
	}
	// The window sums agree with the day: no bug alarm.
	if n := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM alert WHERE kind = 'window_sum'`); n != 0 {
		t.Fatalf("%d window_sum bug alarms, want 0", n)
	}
}

// TestACorrectionLeavesAWindowDueToTheFastPath: a reading of 12:00:10
// arrives at 12:01:40, late enough to mark its window (end 12:01 + 60 s of
// allowed lateness − 30 s of margin) but before the window is due
// (12:02:00). At 12:02:00 the drain's correction happens to run before the
// fast path: it must leave the window to the fast path (which will publish
// it, reading what has arrived), not write its final row first — a window
// with a final row gets no fast row, so it would never be published.
func TestACorrectionLeavesAWindowDueToTheFastPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	p := b.PublisherWith(2 * time.Minute)
	b.Clock.Set(noon.Add(time.Minute))
	if _, err := p.PublishDue(ctx); err != nil { // publishes 11:59
		t.Fatal(err)
	}
	b.Clock.Set(noon.Add(100 * time.Second))
	b.ReadingsAt(t, noon.Add(10*time.Second), "N-001")
	b.Clock.Set(noon.Add(2 * time.Minute))
	if res := b.DrainNow(t); res.Enqueued != 1 {
		t.Fatalf("drain: %+v, want 1 job", res)
	}
	b.WaitJobs(t)
	if _, ok := b.Window(t, "north", noon, "final"); ok {
		t.Fatal("the correction wrote the final row of window 12:00, which the fast path had yet to publish")
	}
	if _, err := p.PublishDue(ctx); err != nil {
		t.Fatal(err)
	}
	w, ok := b.Window(t, "north", noon, "fast")
	if !ok || w.Received != 1 || !w.ComputedAt.Equal(noon.Add(2*time.Minute)) {
		t.Fatalf("window 12:00's fast row: %+v (published %v), want published at 12:02:00 with the reading (received 1)", w, ok)
	}
	if n := testdb.Int(t, b.Env.Shards.Pool("s1"), `SELECT count(*) FROM dirty_window`); n != 0 {
		t.Fatalf("%d dirty windows left, want 0 (the fast path absorbed the mark)", n)
	}
}

// TestCatchUpIsPublishedInSlices: a publisher catching up ten windows
// computes at most MaxTurbineWindows turbine-windows of a shard per run
// (6: two windows of north's three turbines, three of south's two), so a
// big farm's catch-up never becomes one statement too long for its bound;
// the windows still come out in order, each once, none left out.
func TestCatchUpIsPublishedInSlices(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Clock.Set(noon.Add(11 * time.Minute)) // windows 12:00 to 12:09 are due
	p := &publish.Publisher{Control: b.Env.Control, Shards: b.Env.Shards, Now: b.Clock.Now, CatchUp: 11 * time.Minute, MaxTurbineWindows: 6}
	count := func(farm string) int64 {
		return testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = $1 AND path = 'fast'`, farm)
	}
	for run, want := range [][2]int64{{2, 3}, {4, 6}, {6, 9}, {8, 10}, {10, 10}, {10, 10}} {
		if _, err := p.PublishDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n, s := count("north"), count("south"); n != want[0] || s != want[1] {
			t.Fatalf("after run %d: north %d and south %d fast windows, want %d and %d", run+1, n, s, want[0], want[1])
		}
	}
	gaps := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM (
	    SELECT window_start, lag(window_end) OVER (PARTITION BY farm_id ORDER BY window_start) AS prev_end
	    FROM farm_window WHERE path = 'fast') w
	WHERE prev_end IS NOT NULL AND prev_end <> window_start`)
	first := testdb.Int(t, b.Env.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast' AND window_start = $1`, noon)
	if gaps != 0 || first != 2 {
		t.Fatalf("%d gaps between fast windows and %d farms with the first window 12:00, want 0 and 2", gaps, first)
	}
}
