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
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestFaultKill9: `orchestrator serve` killed with SIGKILL in the middle of
// a rollup (between its control and shard commits), of a drain (a request
// and its job committed, the mark not yet deleted) and of a fast-path
// publication (the shards' windows committed, the fast rows not yet), each
// point reached for real (faultpoint), then started again: the day's
// turbine_day and final farm_window rows equal the clean run's, every fast
// row published before the kill is unchanged, no window has two, and the
// fast path leaves no window out.
func TestFaultKill9(t *testing.T) {
	bin := faultBinary(t)
	day := faultDay()
	file, lines := dayData(t, day)
	want := cleanFinals(t, file, day)
	for _, tc := range []struct{ name, point, arm string }{
		// The first recompute of the data (not the start's nightly rollup).
		{"Rollup", faultpoint.RollupBetweenCommits, "=dirty"},
		{"Drain", faultpoint.DrainBeforeMarkDelete, ""},
		{"FastPath", faultpoint.FastPathBeforePublish, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sep := testdb.NewSeparate(t, faultFleet)
			env := orchEnv(sep.ControlDSN)
			first := serveProc(t, bin, append(env, faultpoint.Env+"="+tc.point+tc.arm))
			ingestDay := func() {
				t.Helper()
				sum := ingestCLI(t, bin, env, file)
				if sum.Accepted != lines || sum.Failed != 0 || sum.Rejected != 0 {
					t.Fatalf("ingest: %+v, want %d accepted", sum, lines)
				}
			}
			if tc.point != faultpoint.FastPathBeforePublish {
				ingestDay()
			}
			reached := first.waitFor("galewatch faultpoint "+tc.point+" reached", 2*time.Minute)
			before := fastRows(t, sep.Control)
			rows, err := sep.Control.Query(ctx, `SELECT id FROM river_job WHERE state = 'running' ORDER BY id`)
			testdb.Must(t, err, "running jobs")
			running, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			testdb.Must(t, err, "running jobs")
			first.kill9()
			killedAt := time.Now()

			second := serveProc(t, bin, env)
			if tc.point == faultpoint.FastPathBeforePublish {
				ingestDay()
			}
			took := waitSettled(t, sep, day, 3*time.Minute)
			assertSameFinals(t, readFinals(t, sep.Control, day), want)

			// The jobs that were running in the killed process did not stay
			// "running": each was given back to a live worker and finished.
			for _, id := range running {
				var state string
				deadline := time.Now().Add(time.Minute)
				for {
					testdb.Must(t, sep.Control.QueryRow(ctx, `SELECT state::text FROM river_job WHERE id = $1`, id).Scan(&state), "job %d", id)
					if state != "running" || time.Now().After(deadline) {
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				if state == "running" {
					t.Fatalf("job %d, running in the killed process, is still running a minute after the restart", id)
				}
			}

			// The fast path caught up to the watermark (now − 60 s) after
			// the restart, and published every window once.
			var through time.Time
			deadline := time.Now().Add(time.Minute)
			for {
				testdb.Must(t, sep.Control.QueryRow(ctx, `SELECT coalesce(min(last_end), 'epoch') FROM (SELECT max(window_end) AS last_end FROM farm_window WHERE path = 'fast' GROUP BY farm_id HAVING count(*) > 0) f`).Scan(&through), "fast through")
				if n := testdb.Int(t, sep.Control, `SELECT count(DISTINCT farm_id) FROM farm_window WHERE path = 'fast'`); n == 2 && !through.Before(killedAt.Add(-2*time.Minute)) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the fast path has published only through %s a minute after the restart (killed at %s)", through, killedAt)
				}
				time.Sleep(200 * time.Millisecond)
			}
			assertFastPublishedOnce(t, sep.Control, before)
			windows := assertContiguousFast(t, sep.Control)
			// Nothing was sent for these windows: every turbine expected
			// twice, none received.
			if n := testdb.Int(t, sep.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast'
			    AND (received <> 0 OR expected <> CASE farm_id WHEN 'fa' THEN 12 ELSE 6 END)`); n != 0 {
				t.Fatalf("%d fast windows are not 12 (fa) or 6 (fb) expected and 0 received", n)
			}
			second.interrupt()
			t.Logf("killed at %q with job(s) %v running; settled %v after the restart; %d fast windows, each once; %s",
				reached, running, took.Round(100*time.Millisecond), windows, strings.TrimSpace(fmtTotals(want)))
		})
	}
}

func fmtTotals(f finals) string {
	var b strings.Builder
	for _, farm := range []string{"fa", "fb"} {
		tot := f.Totals[farm]
		fmt.Fprintf(&b, "%s expected/received/available %d/%d/%d; ", farm, tot[0], tot[1], tot[2])
	}
	return b.String()
}
