//go:build faults

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestFaultKill9MidMove: FA-001 moves from s1 to s2 (each shard a Postgres
// server of its own) while its live readings keep arriving over HTTP, and
// the `serve` working the move is killed with SIGKILL after its first day
// copied, after the switch and after the verification, each reached for
// real (faultpoint), a new serve started each time. The move then ends;
// s2 holds every reading of FA-001 once, s1 none; the fault day's
// turbine_day rows, totals and final windows equal the clean run's (FA-001
// counted on s2); verify passes; fleet moves says done.
func TestFaultKill9MidMove(t *testing.T) {
	ctx := context.Background()
	f := newFaultRun(t)
	sum := ingestCLI(t, f.bin, f.env, f.file)
	if sum.Accepted != f.total || sum.Failed != 0 {
		t.Fatalf("ingest: %+v, want %d accepted", sum, f.total)
	}
	settle := serveProc(t, f.bin, f.env)
	waitSettled(t, f.sep, f.day, 3*time.Minute)
	settle.interrupt()
	fileRows := testdb.Int(t, f.sep.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE turbine_id = 'FA-001'`)

	// The apply, as `fleet apply` does it: the move and its job together.
	plan := *f.sep.Plan
	plan.Turbines = append([]fleet.Turbine(nil), plan.Turbines...)
	for i := range plan.Turbines {
		if plan.Turbines[i].ID == "FA-001" {
			plan.Turbines[i].Shard = "s2"
		}
	}
	res, err := f.sep.Registry.ApplyWith(ctx, "moved", &plan, fleet.ApplyOptions{OnMoves: func(ctx context.Context, tx pgx.Tx, moves []fleet.Move) ([]fleet.Move, error) {
		client, err := jobs.InsertOnlyClient(f.sep.Control)
		if err != nil {
			return nil, err
		}
		return jobs.QueueMoves(ctx, client, tx, moves)
	}})
	testdb.Must(t, err, "apply the move")
	if len(res.Moves) != 1 {
		t.Fatalf("apply: moves %+v, want FA-001's", res.Moves)
	}

	// FA-001's live readings: a minute at a time, each minute once, from
	// 20 minutes ago (30 s cadence).
	start := time.Now().UTC().Add(-20 * time.Minute).Truncate(time.Minute)
	sent := 0
	live := func(o *orchestrator) {
		t.Helper()
		var lines []string
		at := start.Add(time.Duration(sent/2) * time.Minute)
		for k := 0; k < 2; k++ {
			r := at.Add(time.Duration(k) * 30 * time.Second)
			lines = append(lines, fmt.Sprintf(`{"turbine_id":"FA-001","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":5}`,
				r.Format(time.RFC3339), r.Add(time.Second).Format(time.RFC3339)))
		}
		for attempt := 1; ; attempt++ {
			code, s, _ := o.postReadings(lines, time.Minute)
			if code == 200 && s.Failed == 0 && s.Accepted+s.Duplicate == 2 {
				break
			}
			if attempt == 20 {
				t.Fatalf("live minute %d: %d %+v after %d attempts", sent/2, code, s, attempt)
			}
			time.Sleep(500 * time.Millisecond) // a sender's retry interval
		}
		sent += 2
	}

	points := []string{"copying day 1", "switched", "verified"}
	for _, point := range points {
		o := serveProc(t, f.bin, append(f.env, faultpoint.Env+"="+faultpoint.MoveAfterStep+"="+point))
		live(o)
		o.waitFor("galewatch faultpoint "+faultpoint.MoveAfterStep+" reached: "+point, 3*time.Minute)
		live(o)
		o.kill9()
	}
	last := serveProc(t, f.bin, f.env)
	live(last)
	deadline := time.Now().Add(3 * time.Minute)
	for testdb.Text(t, f.sep.Control, `SELECT state FROM turbine_move WHERE id = $1`, res.Moves[0].ID) != "done" {
		if time.Now().After(deadline) {
			t.Fatalf("the move is not done 3 minutes after the last restart: %s", testdb.Text(t, f.sep.Control, `SELECT concat_ws(' ', state, last_error) FROM turbine_move WHERE id = $1`, res.Moves[0].ID))
		}
		time.Sleep(200 * time.Millisecond)
	}
	live(last)
	waitSettled(t, f.sep, f.day, 3*time.Minute)

	if got := testdb.Int(t, f.sep.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE turbine_id = 'FA-001'`); got != 0 {
		t.Fatalf("s1 keeps %d readings of FA-001, want 0", got)
	}
	if got, want := testdb.Int(t, f.sep.Shards.Pool("s2"), `SELECT count(*) FROM readings WHERE turbine_id = 'FA-001'`), fileRows+int64(sent); got != want {
		t.Fatalf("s2 holds %d readings of FA-001, want %d (%d of the file, %d live)", got, want, fileRows, sent)
	}
	want := f.want
	var wantDays []string
	for _, r := range want.TurbineDays {
		wantDays = append(wantDays, strings.Replace(r, " FA-001 fa s1 ", " FA-001 fa s2 ", 1))
	}
	got := readFinals(t, f.sep.Control, f.day)
	onDay := func(rows []string) []string {
		var out []string
		for _, r := range rows {
			if strings.HasPrefix(r, f.day.String()+" ") {
				out = append(out, r)
			}
		}
		return out
	}
	// Final windows: farm fa's of the fault day (UTC in December, so its
	// windows start on that date), farm fb's all (it did not move). The
	// move recomputes every day of fa with numbers stored, closing too the
	// day before, of which the clean run has only the two windows its
	// skewed clocks reached.
	windows := func(rows []string) []string {
		var out []string
		for _, r := range rows {
			fields := strings.Fields(r)
			if len(fields) > 1 && (fields[0] == "fb" || strings.HasPrefix(fields[1], f.day.String())) {
				out = append(out, r)
			}
		}
		return out
	}
	assertSameFinals(t, finals{TurbineDays: onDay(got.TurbineDays), Windows: windows(got.Windows), Totals: got.Totals},
		finals{TurbineDays: onDay(wantDays), Windows: windows(want.Windows), Totals: want.Totals})
	if !strings.Contains(strings.Join(onDay(got.TurbineDays), "\n"), " FA-001 fa s2 ") {
		t.Fatalf("FA-001's turbine_day of %s is not counted on s2", f.day)
	}
	out, code := runCLI(t, f.bin, f.env, "verify", "--farm", "fa", "--from", f.day.String())
	if code != 0 {
		t.Fatalf("verify after the move exited %d:\n%s", code, out)
	}
	out, code = runCLI(t, f.bin, f.env, "fleet", "moves")
	if code != 0 || !strings.Contains(out, "FA-001") || !strings.Contains(out, "done") {
		t.Fatalf("fleet moves exited %d:\n%s", code, out)
	}
	t.Logf("fleet moves:\n%s", out)
}
