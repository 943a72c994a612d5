package move_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// resumeFleet: seven 2 s turbines in UTC on s1, one on s2.
const resumeFleet = `
shards: [{name: s1}, {name: s2}]
farms:
  - id: moor
    timezone: UTC
    turbines:
      - {prefix: M-, from: 1, to: 7, shard: s1}
      - {id: S-1, shard: s2}
`

// TestAStoppedMoveResumesExactlyOnce: M-001 … M-007 move from s1 to s2,
// each with 900 readings over 3 UTC days, and each move's job ends at a
// step of its own: cancelled after the first and the second day copied,
// after the switch, the fence, the verification and the end (M-006, done
// before its job was cancelled), or discarded after its only attempt (M-007,
// second day). M-001's cancelled job is then deleted. A process whose
// routes predate the moves sends each turbine one more minute (30
// readings): s1 stores those of the moves not yet fenced, refuses the
// other 3 turbines' 90, which land on s2. fleet moves lists each of the 6
// stopped moves with its job (none, cancelled, discarded) and the command
// that resumes it, the done move with none. `fleet moves --resume`
// resumes 3 (a second ask in the same call queues nothing more, the done
// move needs nothing), applying the fleet file again the other 3. Every
// move is then done: s2 holds each turbine's 930 readings once, s1 none
// of them and a fence for each of the 7; fleet moves lists no stopped move.
func TestAStoppedMoveResumesExactlyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 7, 31, 10, 0, 0, 0, time.UTC)
	env := testdb.New(t, resumeFleet)
	p := pipelinetest.New(t, env, pipelinetest.Options{At: day.AddDate(0, 0, 2).Add(2 * time.Hour), NoStart: true})
	turbines := []string{"M-001", "M-002", "M-003", "M-004", "M-005", "M-006", "M-007"}
	for _, id := range turbines {
		for d := 0; d < 3; d++ {
			from := day.AddDate(0, 0, d)
			pipelinetest.Send(t, p.In, readings(id, from, from.Add(10*time.Minute)))
		}
	}
	// A process per turbine that keeps the routes of before the moves.
	stale := map[string]*sender{}
	for _, id := range turbines {
		stale[id] = &sender{t: t, in: p.NewIngestor(t), env: env, now: p.Now}
	}

	// Where each move's first job ends, and how: cancelled (river.JobCancel,
	// as a cancel from the River UI ends it) or failed, which discards a
	// job allowed one attempt.
	type stop struct {
		at      string
		discard bool
	}
	stops := map[string]stop{
		"M-001": {at: "copying day 1/3"},
		"M-002": {at: "copying day 2/3"},
		"M-003": {at: move.Switched},
		"M-004": {at: move.Fenced},
		"M-005": {at: move.Verified},
		"M-006": {at: move.Done},
		"M-007": {at: "copying day 2/3", discard: true},
	}
	var mu sync.Mutex
	turbineOf := map[int64]string{}
	stopped := map[int64]bool{}
	tick := p.Now()
	p.Mover.Grace = time.Nanosecond
	p.Mover.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); tick = tick.Add(time.Second); return tick }
	p.Mover.AfterStep = func(_ context.Context, id int64, detail string) error {
		mu.Lock()
		defer mu.Unlock()
		s := stops[turbineOf[id]]
		if stopped[id] || detail != s.at {
			return nil
		}
		stopped[id] = true
		if s.discard {
			return fmt.Errorf("stopped at %s", detail)
		}
		return river.JobCancel(fmt.Errorf("stopped at %s", detail))
	}

	reg := *env.Registry
	reg.Now = p.Now
	plan, err := fleet.Parse("moved", strings.NewReader(strings.Replace(resumeFleet, "to: 7, shard: s1}", "to: 7, shard: s2}", 1)))
	testdb.Must(t, err, "parse")
	res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{OnMoves: func(ctx context.Context, tx pgx.Tx, moves []fleet.Move) ([]fleet.Move, error) {
		for _, m := range moves {
			var opts *river.InsertOpts
			if stops[m.TurbineID].discard {
				opts = &river.InsertOpts{MaxAttempts: 1}
			}
			if _, err := p.Client.InsertTx(ctx, tx, jobs.MoveTurbineArgs{MoveID: m.ID}, opts); err != nil {
				return nil, err
			}
		}
		return moves, nil
	}})
	testdb.Must(t, err, "apply the moves")
	if len(res.Moves) != 7 {
		t.Fatalf("apply: %d moves, want 7", len(res.Moves))
	}
	moveOf := map[string]int64{}
	for _, m := range res.Moves {
		turbineOf[m.ID], moveOf[m.TurbineID] = m.TurbineID, m.ID
	}
	jobOf := func(turbine string) int64 {
		return testdb.Int(t, env.Control, `SELECT max(id) FROM river_job WHERE kind = 'move_turbine' AND (args->>'move_id')::bigint = $1`, moveOf[turbine])
	}
	var first []int64
	for _, id := range turbines {
		first = append(first, jobOf(id))
	}
	p.StartJobs(t)
	waitCtx, cancel := context.WithTimeout(ctx, testdb.Hang)
	defer cancel()
	gaveUp, err := jobs.Wait(waitCtx, p.Client, first, 50*time.Millisecond, nil)
	testdb.Must(t, err, "wait for the first jobs")
	if len(gaveUp) != 7 {
		t.Fatalf("%d of the 7 first jobs gave up, want all", len(gaveUp))
	}
	moveState := func(turbine string) string {
		return testdb.Text(t, env.Control, `SELECT state || ' ' || days_copied || '/' || days_total FROM turbine_move WHERE id = $1`, moveOf[turbine])
	}
	want := map[string]string{
		"M-001": "copying 1/3", "M-002": "copying 2/3", "M-003": "switched 3/3", "M-004": "fenced 3/3",
		"M-005": "verified 3/3", "M-006": "done 3/3", "M-007": "copying 2/3",
	}
	for _, id := range turbines {
		if got := moveState(id); got != want[id] {
			t.Errorf("%s's move after its job ended: %s, want %s", id, got, want[id])
		}
		if id != "M-006" {
			if got := testdb.Text(t, env.Control, `SELECT coalesce(last_error, '') FROM turbine_move WHERE id = $1`, moveOf[id]); !strings.Contains(got, "stopped at "+stops[id].at) {
				t.Errorf("%s's move records the error %q, want the reason it stopped (stopped at %s)", id, got, stops[id].at)
			}
		}
	}
	if got := testdb.Text(t, env.Control, `SELECT state FROM river_job WHERE id = $1`, jobOf("M-007")); got != "discarded" {
		t.Fatalf("M-007's job: %s, want discarded", got)
	}
	if t.Failed() {
		t.FailNow()
	}
	_, err = p.Client.JobDelete(ctx, jobOf("M-001"))
	testdb.Must(t, err, "delete M-001's job")

	// One more minute of each turbine from the stale process.
	var sent, refused int64
	for _, id := range turbines {
		from := day.AddDate(0, 0, 2).Add(time.Hour)
		stale[id].send(readings(id, from, from.Add(time.Minute)))
		sent, refused = sent+stale[id].sent, refused+stale[id].refused
	}
	if sent != 7*30 || refused != 3*30 {
		t.Fatalf("the stale processes sent %d readings, %d refused first; want 210 sent, 90 refused (M-004 … M-006 are fenced on s1)", sent, refused)
	}

	list := func() string {
		mj, err := jobs.MoveJobs(ctx, p.Client)
		testdb.Must(t, err, "move jobs")
		var out bytes.Buffer
		testdb.Must(t, move.WriteList(ctx, controldb.New(env.Control), 50, mj, &out), "fleet moves")
		return out.String()
	}
	out := list()
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		for _, id := range turbines {
			if strings.Contains(l, "(turbine "+id+",") {
				lines[id] = l
			}
		}
	}
	if len(lines) != 6 || lines["M-006"] != "" {
		t.Fatalf("fleet moves names %d stopped moves, want the 6 not done:\n%s", len(lines), out)
	}
	for id, why := range map[string]string{
		"M-001": "no job works it (its last was deleted)", "M-002": fmt.Sprintf("its job %d was cancelled", jobOf("M-002")),
		"M-003": fmt.Sprintf("its job %d was cancelled", jobOf("M-003")), "M-004": fmt.Sprintf("its job %d was cancelled", jobOf("M-004")),
		"M-005": fmt.Sprintf("its job %d was cancelled", jobOf("M-005")), "M-007": fmt.Sprintf("its job %d was discarded after attempt 1 of 1", jobOf("M-007")),
	} {
		state := strings.Fields(want[id])[0]
		wantLine := fmt.Sprintf("move %d (turbine %s, s1 → s2) stopped at %s: %s; resume it: orchestrator fleet moves --resume %d (or apply the fleet file again)",
			moveOf[id], id, state, why, moveOf[id])
		if lines[id] != wantLine {
			t.Errorf("fleet moves on %s:\n got %s\nwant %s", id, lines[id], wantLine)
		}
	}
	if t.Failed() {
		t.Logf("fleet moves:\n%s", out)
		t.FailNow()
	}

	// Resumed: three with the command (M-001 asked twice), M-006 needs
	// nothing; the other three by applying the file again.
	resumed, err := jobs.ResumeMoves(ctx, env.Control, p.Client, []int64{moveOf["M-001"], moveOf["M-003"], moveOf["M-007"], moveOf["M-001"], moveOf["M-006"]})
	testdb.Must(t, err, "fleet moves --resume")
	var got []string
	for _, r := range resumed {
		got = append(got, fmt.Sprintf("%s %s %t", turbineOf[r.MoveID], r.State, r.Queued))
	}
	if g, w := strings.Join(got, ", "), "M-001 copying true, M-003 switched true, M-007 copying true, M-001 copying false, M-006 done false"; g != w {
		t.Fatalf("fleet moves --resume: %s, want %s", g, w)
	}
	if resumed[0].Job != resumed[3].Job {
		t.Fatalf("M-001 asked twice: jobs %d and %d, want one", resumed[0].Job, resumed[3].Job)
	}
	again, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{OnMoves: func(ctx context.Context, tx pgx.Tx, moves []fleet.Move) ([]fleet.Move, error) {
		return jobs.QueueMoves(ctx, p.Client, tx, moves)
	}})
	testdb.Must(t, err, "apply the file again")
	got = got[:0]
	for _, m := range again.Resumed {
		got = append(got, m.TurbineID)
	}
	if len(again.Moves) != 0 || strings.Join(got, " ") != "M-002 M-004 M-005" {
		t.Fatalf("applying the file again: %d new moves, resumed %v; want none new, M-002 M-004 M-005 resumed", len(again.Moves), got)
	}
	var second []int64
	for _, id := range turbines {
		if id != "M-006" {
			second = append(second, jobOf(id))
		}
	}
	gaveUp, err = jobs.Wait(waitCtx, p.Client, second, 50*time.Millisecond, nil)
	testdb.Must(t, err, "wait for the resumed jobs")
	for _, g := range gaveUp {
		t.Errorf("resumed job %d gave up: %s", g.Job.ID, g.Reason)
	}
	p.WaitJobs(t)

	s1, s2 := env.Shards.Pool("s1"), env.Shards.Pool("s2")
	for _, id := range turbines {
		if got := moveState(id); got != "done 3/3" {
			t.Errorf("%s's move: %s, want done 3/3", id, got)
		}
		if n := testdb.Int(t, s2, `SELECT count(DISTINCT recorded_at) FROM readings WHERE turbine_id = $1`, id); n != 930 {
			t.Errorf("s2 holds %d readings of %s, want 930 (900 before the move, 30 live)", n, id)
		}
		if n := testdb.Int(t, s2, `SELECT count(*) FROM readings WHERE turbine_id = $1`, id); n != 930 {
			t.Errorf("s2 holds %d rows of %s, want 930 (each reading once)", n, id)
		}
		if n := testdb.Int(t, s1, `SELECT count(*) FROM readings WHERE turbine_id = $1`, id); n != 0 {
			t.Errorf("s1 keeps %d readings of %s, want 0", n, id)
		}
		if got := testdb.Text(t, s1, `SELECT coalesce((SELECT moved_to FROM turbine_fence WHERE turbine_id = $1), 'no fence')`, id); got != "s2" {
			t.Errorf("s1's fence on %s: %s, want moved to s2", id, got)
		}
		if got := testdb.Text(t, env.Control, `SELECT shard_name FROM turbine WHERE id = $1`, id); got != "s2" {
			t.Errorf("%s is registered on %s, want s2", id, got)
		}
	}
	if out := list(); strings.Contains(out, "resume it") || strings.Count(out, " done ") != 7 {
		t.Errorf("fleet moves after the resumes: want 7 moves done, none to resume:\n%s", out)
	}
	// A resumed move was worked by one job: its first (ended) and the one
	// that finished it; M-006 by its first alone, M-001 by the resumed one
	// (its first deleted).
	if got := testdb.Text(t, env.Control, `SELECT string_agg(state::text, ' ' ORDER BY id) FROM river_job WHERE kind = 'move_turbine'`); strings.Count(got, "completed") != 6 {
		t.Errorf("move_turbine jobs: %s, want 6 completed", got)
	}
}

// TestAnApplyDuringASwitchKeepsIt: M-1's move has copied its one day and
// is about to switch when the fleet file (M-1 on s2) is applied again. The
// apply waits for the lock every apply takes (held here by another
// apply's transaction); meanwhile the move switches. Whichever goes first
// once the lock is free, M-1 ends registered on s2, the switch's
// turbine_version stands and the apply records no change of shard.
func TestAnApplyDuringASwitchKeepsIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	env := testdb.New(t, moorFleet)
	now := day.Add(12 * time.Hour)
	in := pipelinetest.Ingestor(t, env, func() time.Time { return now }, ingest.DefaultConfig(), nil)
	pipelinetest.Send(t, in, readings("M-1", day, day.Add(10*time.Minute)))
	reg := *env.Registry
	reg.Now = func() time.Time { return now }
	plan, err := fleet.Parse("moved", strings.NewReader(strings.Replace(moorFleet, "{id: M-1, shard: s1}", "{id: M-1, shard: s2}", 1)))
	testdb.Must(t, err, "parse")
	res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply the move")
	id := res.Moves[0].ID

	reached, release := make(chan struct{}), make(chan struct{})
	m := &move.Mover{Control: env.Control, Shards: env.Shards, Now: func() time.Time { return now },
		AfterStep: func(_ context.Context, _ int64, detail string) error {
			if detail == "copying day 1/1" {
				close(reached)
				<-release
			}
			return nil
		}}
	type stepped struct {
		state string
		err   error
	}
	step := make(chan stepped, 1)
	go func() {
		state, _, err := m.Step(ctx, id)
		step <- stepped{state, err}
	}()
	<-reached

	// Another apply's transaction holds the lock; this apply waits for it.
	held, err := env.Control.Begin(ctx)
	testdb.Must(t, err, "begin")
	defer func() { _ = held.Rollback(ctx) }()
	testdb.Must(t, controldb.New(held).AdvisoryXactLockKey(ctx, fleet.ApplyLock), "hold the apply lock")
	type applied struct {
		res fleet.ApplyResult
		err error
	}
	apply := make(chan applied, 1)
	go func() {
		res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{})
		apply <- applied{res, err}
	}()
	waiting := func() int64 {
		return testdb.Int(t, env.Control, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(testdb.Hang)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after %v", what, testdb.Hang)
			}
			time.Sleep(5 * time.Millisecond) // polling the lock table
		}
	}
	waitFor("the apply waits for the lock", func() bool { return waiting() == 1 })
	// The switch: it commits, or waits for the same lock.
	close(release)
	waitFor("the move switches or waits for the lock", func() bool {
		return waiting() == 2 || testdb.Text(t, env.Control, `SELECT state FROM turbine_move WHERE id = $1`, id) == move.Switched
	})
	testdb.Must(t, held.Rollback(ctx), "release the apply lock")
	s := <-step
	a := <-apply
	testdb.Must(t, s.err, "the switch")
	testdb.Must(t, a.err, "the apply")
	if s.state != move.Switched {
		t.Fatalf("the step: %s, want switched", s.state)
	}
	if got := testdb.Text(t, env.Control, `SELECT shard_name FROM turbine WHERE id = 'M-1'`); got != "s2" {
		t.Errorf("M-1 is registered on %s after the switch and the apply, want s2", got)
	}
	if got := testdb.Text(t, env.Control, `SELECT string_agg(shard_name, ' ' ORDER BY valid_from) FROM turbine_history WHERE turbine_id = 'M-1'`); got != "s1 s2" {
		t.Errorf("M-1's versions: %s, want s1 then s2 (the switch's)", got)
	}
	if len(a.res.Changes) != 0 || len(a.res.Moves) != 0 {
		t.Errorf("the apply during the switch: changes %+v, moves %+v; want none", a.res.Changes, a.res.Moves)
	}
}
