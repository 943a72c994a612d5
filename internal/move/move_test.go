package move_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/verify"
)

// moorFleet: three 2 s turbines in UTC, two on s1, one on s2.
const moorFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: moor
    timezone: UTC
    turbines:
      - {id: M-1, shard: s1}
      - {id: M-2, shard: s1}
      - {id: M-3, shard: s2}
`

// readings writes turbine id's 2 s readings of [from, to) as NDJSON; the
// turbine reports itself unavailable in the 05:00 hour.
func readings(id string, from, to time.Time) []byte {
	var b strings.Builder
	for at := from; at.Before(to); at = at.Add(2 * time.Second) {
		fmt.Fprintf(&b, `{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":%t,"power_kw":1,"wind_ms":5}`+"\n",
			id, at.UTC().Format(time.RFC3339Nano), at.Add(300*time.Millisecond).UTC().Format(time.RFC3339Nano), at.Hour() != 5)
	}
	return []byte(b.String())
}

// sender is a live turbine's sender: it re-sends a body whose lines failed
// (as the HTTP API's senders do with failed_lines), reloading its routes
// first as a running ingest does when a write meets a fence.
type sender struct {
	t        testing.TB
	in       *ingest.Ingestor
	env      *testdb.Env
	now      func() time.Time
	mu       sync.Mutex
	sent     int64 // lines sent, counting each once
	refused  int64 // lines a first attempt failed
	refusals []string
}

func (s *sender) send(body []byte) {
	s.t.Helper()
	lines := int64(strings.Count(string(body), "\n"))
	for attempt := 1; ; attempt++ {
		sum, err := pipelinetest.Ingest(context.Background(), s.in, body)
		if err == nil && sum.Failed == 0 {
			if sum.Accepted+sum.Duplicate != lines {
				s.t.Errorf("send: %+v does not account for %d lines", sum, lines)
			}
			break
		}
		if attempt == 3 {
			s.t.Errorf("send: attempt %d failed: %+v, %v", attempt, sum, err)
			return
		}
		s.mu.Lock()
		s.refused += sum.Failed
		if err != nil {
			s.refusals = append(s.refusals, err.Error())
		}
		s.mu.Unlock()
		routes, rerr := ingest.LoadRoutes(context.Background(), s.env.Control, s.now(), 0)
		testdb.Must(s.t, rerr, "reload routes")
		s.in.SetRoutes(routes)
	}
	s.mu.Lock()
	s.sent += lines
	s.mu.Unlock()
}

// TestAMoveUnderALiveSenderLosesAndDoublesNothing: M-1 moves from s1 to
// s2 on 2 August at 10:00 while its readings keep arriving — during the
// copy, after the switch through a process whose routes are still the old
// ones (stored on s1 and copied again), after the fence through that same
// process (refused, re-sent to s2), and through a process with new routes.
// Every reading is then on s2 exactly once and none on s1; 1 August, final
// before the move, keeps its counts and status after the recomputes the
// move queues; verify passes; the fast path counts M-1 once per window;
// turbine_history says where M-1 was at any instant.
func TestAMoveUnderALiveSenderLosesAndDoublesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	p := pipelinetest.New(t, testdb.New(t, moorFleet), pipelinetest.Options{At: day2.Add(10 * time.Hour)})
	env := p.Env
	for _, id := range []string{"M-1", "M-2", "M-3"} {
		pipelinetest.Send(t, p.In, readings(id, day1, day2.Add(10*time.Hour)))
	}
	p.Enqueue(t, "moor", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	p.WaitJobs(t)
	p.DrainNow(t)
	p.WaitJobs(t)
	p.Published(t, p.Now())
	type dayRow struct {
		expected, received, available int64
		shard                         string
	}
	turbineDay := func(id string) dayRow {
		var r dayRow
		testdb.Must(t, env.Control.QueryRow(ctx, `SELECT expected, received, available, shard_name FROM turbine_day WHERE turbine_id = $1 AND day = '2026-08-01'`, id).
			Scan(&r.expected, &r.received, &r.available, &r.shard), "turbine_day %s", id)
		return r
	}
	farmDay := func() string {
		return testdb.Text(t, env.Control, `SELECT status || ' ' || received || '/' || available FROM farm_day WHERE farm_id = 'moor' AND day = '2026-08-01'`)
	}
	if got, want := turbineDay("M-1"), (dayRow{43_200, 43_200, 41_400, "s1"}); got != want {
		t.Fatalf("M-1 on 1 August before the move: %+v, want %+v", got, want)
	}
	if got, want := farmDay(), "final 129600/124200"; got != want {
		t.Fatalf("1 August before the move: %q, want %q", got, want)
	}

	// A process with the routes of before the move (it never reloads
	// unless a write meets a fence), and the apply that starts the move.
	stale := &sender{t: t, in: p.NewIngestor(t), env: env, now: p.Now}
	reg := *env.Registry
	reg.Now = p.Now
	plan, err := fleet.Parse("moved", strings.NewReader(strings.Replace(moorFleet, "{id: M-1, shard: s1}", "{id: M-1, shard: s2}", 1)))
	testdb.Must(t, err, "parse")
	res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply the move")
	if len(res.Moves) != 1 || res.Moves[0].TurbineID != "M-1" || res.Moves[0].From != "s1" || res.Moves[0].To != "s2" || len(res.Changes) != 0 {
		t.Fatalf("apply: moves %+v, changes %+v; want M-1 s1 → s2 and no version yet", res.Moves, res.Changes)
	}
	id := res.Moves[0].ID
	if again, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{}); err != nil || len(again.Moves) != 0 {
		t.Fatalf("applying the same file again: moves %+v, err %v; want no second move", again.Moves, err)
	}
	m := &move.Mover{Control: env.Control, Shards: env.Shards, Now: p.Now, Grace: 15 * time.Second, Recompute: jobs.RecomputeAfterMove(p.Client)}
	chunk := func(k int) []byte { // M-1's minute 10:0k
		from := day2.Add(10*time.Hour + time.Duration(k)*time.Minute)
		return readings("M-1", from, from.Add(time.Minute))
	}

	// The copy, with M-1's readings arriving meanwhile (to s1).
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; k < 3; k++ {
			stale.send(chunk(k))
		}
	}()
	state, _, err := m.Step(ctx, id)
	testdb.Must(t, err, "copy and switch")
	wg.Wait()
	if state != move.Switched {
		t.Fatalf("after the copy: %s, want %s", state, move.Switched)
	}
	// Switched: a process with new routes sends to s2; the stale one still
	// to s1 (no fence yet), which the second copy must catch.
	fresh := &sender{t: t, in: p.NewIngestor(t), env: env, now: p.Now}
	fresh.send(chunk(3))
	stale.send(chunk(4))
	if got := testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE turbine_id = 'M-1' AND recorded_at >= '2026-08-02 10:04Z'`); got != 30 {
		t.Fatalf("the stale process stored %d readings of 10:04 on s1 before the fence, want 30", got)
	}
	if state, wait, err := m.Step(ctx, id); err != nil || state != move.Switched || wait != 15*time.Second {
		t.Fatalf("step within the grace: %s, wait %v, err %v; want switched and a 15 s wait", state, wait, err)
	}
	p.Clock.Set(p.Now().Add(15 * time.Second))
	state, _, err = m.Step(ctx, id)
	testdb.Must(t, err, "fence")
	if state != move.Fenced {
		t.Fatalf("after the grace: %s, want %s", state, move.Fenced)
	}
	// Fenced: the stale process's write is refused, and its re-send after
	// reloading the routes lands on s2.
	stale.send(chunk(5))
	if stale.refused != 30 || len(stale.refusals) == 0 || !strings.Contains(strings.Join(stale.refusals, "; "), "moved to shard s2") {
		t.Fatalf("the stale process after the fence: %d lines refused (%v), want 30 refused as moved to shard s2", stale.refused, stale.refusals)
	}
	for state != move.Done {
		var wait time.Duration
		state, wait, err = m.Step(ctx, id)
		testdb.Must(t, err, "step")
		if wait > time.Second {
			t.Fatalf("waits %v in %s: the fenced shard's writes in flight should be over", wait, state)
		}
	}
	fresh.send(chunk(6))

	// Every reading on s2 once, none on s1.
	sent := int64(43_200+18_000) + stale.sent + fresh.sent
	if stale.sent+fresh.sent != 7*30 {
		t.Fatalf("sent %d live readings, want 210", stale.sent+fresh.sent)
	}
	if got := testdb.Int(t, env.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE turbine_id = 'M-1'`); got != 0 {
		t.Fatalf("s1 keeps %d readings of M-1 after the move, want 0", got)
	}
	if got := testdb.Int(t, env.Shards.Pool("s2"), `SELECT count(*) FROM readings WHERE turbine_id = 'M-1'`); got != sent {
		t.Fatalf("s2 holds %d readings of M-1, want %d (1 August, 2 August to 10:00, 7 live minutes)", got, sent)
	}
	var mv controldb.TurbineMove
	mv, err = controldb.New(env.Control).TurbineMoveGet(ctx, id)
	testdb.Must(t, err, "move row")
	// s1 held 1 August, 2 August to 10:00 and 4 live minutes (10:00–10:02
	// sent during the copy, 10:04 after the switch): each copied by the
	// first pass or caught up by the second (how the three minutes sent
	// during the copy split between the two depends on the race), then
	// verified and deleted.
	const onS1 = 43_200 + 18_000 + 4*30
	if mv.RowsCopied+*mv.RowsCaughtUp != onS1 || *mv.RowsCaughtUp < 30 || *mv.RowsVerified != onS1 || *mv.RowsDeleted != onS1 {
		t.Fatalf("move counts: copied %d, caught up %d, verified %d, deleted %d; want copied + caught up = verified = deleted = %d, at least 30 caught up (10:04)",
			mv.RowsCopied, *mv.RowsCaughtUp, *mv.RowsVerified, *mv.RowsDeleted, onS1)
	}

	// The recomputes the move queued leave 1 August as it was, read from s2.
	p.WaitJobs(t)
	if got, want := turbineDay("M-1"), (dayRow{43_200, 43_200, 41_400, "s2"}); got != want {
		t.Fatalf("M-1 on 1 August after the move: %+v, want %+v", got, want)
	}
	if got, want := farmDay(), "final 129600/124200"; got != want {
		t.Fatalf("1 August after the move: %q, want %q", got, want)
	}
	v, err := verify.Farm(ctx, controldb.New(env.Control), env.Shards, "moor", localday.DateOf(day1), localday.DateOf(day1))
	testdb.Must(t, err, "verify")
	if v.Rows != 3 || len(v.Mismatches) != 0 {
		t.Fatalf("verify 1 August after the move: %d rows, mismatches %+v; want 3 rows, none", v.Rows, v.Mismatches)
	}
	// The fast path: 2 August's 05:00 window counts each turbine once.
	p.Published(t, p.Now())
	if got := testdb.Text(t, env.Control, `SELECT expected || '/' || received || '/' || available FROM farm_window WHERE farm_id = 'moor' AND window_start = '2026-08-02 05:00Z' AND path = 'final'`); got != "90/90/0" {
		t.Fatalf("2 August 05:00 window after the move: %s, want 90/90/0 (3 turbines × 30, all unavailable)", got)
	}
	if got := testdb.Text(t, env.Control, `SELECT expected || '/' || received FROM farm_window WHERE farm_id = 'moor' AND window_start = '2026-08-02 09:00Z' AND path = 'final'`); got != "90/90" {
		t.Fatalf("2 August 09:00 window after the move: %s, want 90/90", got)
	}

	// What the registry said.
	shardAt := func(at time.Time) string {
		return testdb.Text(t, env.Control, `SELECT shard_name FROM turbine_history WHERE turbine_id = 'M-1' AND valid_from <= $1 AND (valid_to IS NULL OR valid_to > $1)`, at)
	}
	if got := shardAt(mv.SwitchedAt.Add(-time.Millisecond)); got != "s1" {
		t.Fatalf("turbine_history just before the switch: %s, want s1", got)
	}
	if got := shardAt(*mv.SwitchedAt); got != "s2" {
		t.Fatalf("turbine_history at the switch: %s, want s2", got)
	}
	if state, _, err := m.Step(ctx, id); err != nil || state != move.Done {
		t.Fatalf("a step of a finished move: %s, %v; want done, nothing done", state, err)
	}
}

// TestTheLastMoveOfAFarmQueuesItsRecomputes: M-1 and M-2 leave s1 (the
// farm's last turbines there) together. The first move to end queues
// nothing; the last queues one recompute per farm-day with numbers on the
// farm's one shard now, s2, and s1's window parts go: 1 August keeps its
// counts, its windows count each turbine once.
func TestTheLastMoveOfAFarmQueuesItsRecomputes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	p := pipelinetest.New(t, testdb.New(t, moorFleet), pipelinetest.Options{At: day1.AddDate(0, 0, 1).Add(3 * time.Hour)})
	env := p.Env
	for _, id := range []string{"M-1", "M-2", "M-3"} {
		pipelinetest.Send(t, p.In, readings(id, day1, day1.AddDate(0, 0, 1)))
	}
	p.Enqueue(t, "moor", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	p.WaitJobs(t)
	p.DrainNow(t)
	p.WaitJobs(t)
	farmDay := func() string {
		return testdb.Text(t, env.Control, `SELECT status || ' ' || expected || '/' || received || '/' || available FROM farm_day WHERE farm_id = 'moor' AND day = '2026-08-01'`)
	}
	const want = "final 129600/129600/124200"
	if got := farmDay(); got != want {
		t.Fatalf("1 August before the moves: %q, want %q", got, want)
	}
	reg := *env.Registry
	reg.Now = p.Now
	plan, err := fleet.Parse("moved", strings.NewReader(strings.ReplaceAll(moorFleet, "shard: s1}", "shard: s2}")))
	testdb.Must(t, err, "parse")
	res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply the moves")
	if len(res.Moves) != 2 {
		t.Fatalf("apply: moves %+v, want M-1's and M-2's", res.Moves)
	}
	jobsBefore := testdb.Int(t, env.Control, `SELECT coalesce(max(id), 0) FROM river_job`)
	queued := func() int64 {
		return testdb.Int(t, env.Control, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND id > $1`, jobsBefore)
	}
	// The mover's clock ticks a second a reading, past its grace (1 ns)
	// by the next step.
	tick := p.Now()
	m := &move.Mover{Control: env.Control, Shards: env.Shards, Recompute: jobs.RecomputeAfterMove(p.Client), Grace: time.Nanosecond,
		Now: func() time.Time { tick = tick.Add(time.Second); return tick }}
	testdb.Must(t, m.Run(ctx, res.Moves[0].ID), "first move")
	if n := queued(); n != 0 {
		t.Fatalf("the first move to end queued %d recomputes, want 0 (M-2 still moving)", n)
	}
	testdb.Must(t, m.Run(ctx, res.Moves[1].ID), "second move")
	if n := queued(); n != 1 {
		t.Fatalf("the last move queued %d recomputes, want 1 (1 August on s2)", n)
	}
	p.WaitJobs(t)
	if got := farmDay(); got != want {
		t.Fatalf("1 August after the moves: %q, want %q", got, want)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM farm_window_part WHERE farm_id = 'moor' AND shard_name = 's1'`); n != 0 {
		t.Fatalf("%d window parts of s1 left, want 0 (no turbine of moor is there)", n)
	}
	if got := testdb.Text(t, env.Control, `SELECT expected || '/' || received || '/' || available FROM farm_window WHERE farm_id = 'moor' AND window_start = '2026-08-01 05:00Z' AND path = 'final'`); got != "90/90/0" {
		t.Fatalf("1 August 05:00 after the moves: %s, want 90/90/0", got)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_move WHERE recompute_queued_at IS NOT NULL`); n != 2 {
		t.Fatalf("%d moves record their recompute queued, want 2", n)
	}
}
