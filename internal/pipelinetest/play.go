package pipelinetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/testdb"
)

// Driver runs the scenario's steps on some orchestrator: in this process
// (Pipeline) or as real processes on a shared clock file.
type Driver interface {
	// Start sets the clock to at, starts the orchestrator and returns once
	// what it does on start (the nightly rollup of yesterday, the windows
	// due) is done.
	Start(t testing.TB, at time.Time)
	// SetClock moves the clock.
	SetClock(t testing.TB, at time.Time)
	// Published returns once every window due at at is published.
	Published(t testing.TB, at time.Time)
	// Settle returns once everything due at at is done: windows published,
	// marks drained, recomputes run.
	Settle(t testing.TB, at time.Time)
	// Deliver sends delivery k (as often and by as many senders as the
	// driver likes) and returns every sender's summary.
	Deliver(t testing.TB, k int, d Delivery) []ingest.Summary
	// Close closes the day at at (what `work --until-idle` does).
	Close(t testing.TB, at time.Time)
}

// Play runs the scenario through d and returns each delivery's summaries.
// Each delivery is sent once everything due at the clock is done; with
// overlap, as soon as the windows due are published, while the
// corrections of the previous delivery still run (the revisions of final
// rows then depend on the timing; the counts must not).
func Play(t testing.TB, d Driver, sc Scenario, overlap bool) [][]ingest.Summary {
	t.Helper()
	t0 := time.Now()
	d.Start(t, Clocks[0])
	t.Logf("start %s", time.Since(t0))
	var sums [][]ingest.Summary
	for k, dl := range sc.Deliveries {
		t0 = time.Now()
		sums = append(sums, d.Deliver(t, k, dl))
		t1 := time.Now()
		d.SetClock(t, dl.Then)
		if overlap && k+1 < len(sc.Deliveries) {
			d.Published(t, dl.Then)
		} else {
			d.Settle(t, dl.Then)
		}
		t.Logf("delivery %d: %s, settle %s", k, t1.Sub(t0), time.Since(t1))
	}
	t0 = time.Now()
	d.Close(t, Clocks[len(Clocks)-1])
	t.Logf("close %s", time.Since(t0))
	return sums
}

// CheckDelivered fails unless the summaries of copies deliveries of d
// (by any number of senders) account for every reading exactly: stored
// once, every other copy counted as a duplicate, nothing rejected or
// failed. It returns the totals.
func CheckDelivered(t testing.TB, k int, d Delivery, copies int, sums []ingest.Summary) ingest.Summary {
	t.Helper()
	var tot ingest.Summary
	for _, s := range sums {
		tot = tot.Plus(s)
	}
	if tot.Accepted != int64(d.Readings) || tot.Duplicate != int64((copies-1)*d.Readings) || tot.Rejected != 0 || tot.Failed != 0 {
		t.Fatalf("delivery %d (%d readings) sent %d times: accepted %d, duplicate %d, rejected %d, failed %d; want accepted %d, duplicate %d, none rejected or failed (summaries %+v)",
			k, d.Readings, copies, tot.Accepted, tot.Duplicate, tot.Rejected, tot.Failed, d.Readings, (copies-1)*d.Readings, sums)
	}
	return tot
}

// WaitOptions say what WaitSettled waits for.
type WaitOptions struct {
	// PublishedOnly: only the fast path's windows, not the marks and jobs.
	PublishedOnly bool
	// Startup: also the nightly rollup of yesterday that a leader runs on
	// start (one rollup_schedule job per farm completed).
	Startup bool
	// Timeout (default testdb.Hang).
	Timeout time.Duration
}

// WaitSettled polls the databases until the pipeline has done everything
// due at the clock at, by whichever processes: every farm's windows
// published up to its watermark (and today's skipped ones filled in), no
// dirty mark left on a shard, no rollup request waiting, no rollup job
// queued, running or retrying. It is how a test waits for real
// orchestrator processes (it never waits for time to pass: at is the
// clock they read).
func WaitSettled(t testing.TB, env *testdb.Env, at time.Time, opt WaitOptions) {
	t.Helper()
	if opt.Timeout == 0 {
		opt.Timeout = testdb.Hang
	}
	deadline := time.Now().Add(opt.Timeout)
	for {
		why, err := unsettled(env, at, opt)
		if err != nil {
			t.Fatal(err)
		}
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("at clock %s, still not settled after %s: %s", at.UTC().Format(time.RFC3339), opt.Timeout, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func unsettled(env *testdb.Env, at time.Time, opt WaitOptions) (string, error) {
	ctx := context.Background()
	var why []string
	rows, err := env.Control.Query(ctx, `
		SELECT f.id, f.timezone, r.window_s, r.allowed_lateness_s,
		       (SELECT max(w.window_end) FROM farm_window w WHERE w.farm_id = f.id AND w.path = 'fast')
		FROM farm f JOIN farm_rules r ON r.farm_id = f.id ORDER BY f.id`)
	if err != nil {
		return "", err
	}
	type farm struct {
		id, zone         string
		window, lateness int32
		published        *time.Time
	}
	farms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (farm, error) {
		var f farm
		return f, r.Scan(&f.id, &f.zone, &f.window, &f.lateness, &f.published)
	})
	if err != nil {
		return "", err
	}
	for _, f := range farms {
		want, err := publishedThrough(f.zone, time.Duration(f.window)*time.Second, time.Duration(f.lateness)*time.Second, at)
		if err != nil {
			return "", err
		}
		if f.published == nil || !f.published.Equal(want) {
			why = append(why, fmt.Sprintf("farm %s published through %v, want %s", f.id, f.published, want.UTC().Format(time.RFC3339)))
		}
		// and none of today's windows it skipped is left to fill in
		gap, err := controldb.New(env.Control).FarmWindowsGap(ctx, controldb.FarmWindowsGapParams{FarmID: f.id, Now: at, MaxWindows: 1})
		if err != nil {
			return "", err
		}
		if len(gap) > 0 {
			why = append(why, fmt.Sprintf("farm %s: window %s skipped, not filled in yet", f.id, gap[0].WindowStart.UTC().Format(time.RFC3339)))
		}
	}
	if opt.PublishedOnly {
		return strings.Join(why, "; "), nil
	}
	var jobs, pending int64
	err = env.Control.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM river_job WHERE kind IN ('rollup_day', 'rollup_schedule')
		                                         AND state IN ('available', 'pending', 'retryable', 'scheduled', 'running')),
		       (SELECT count(*) FROM rollup_pending)`).Scan(&jobs, &pending)
	if err != nil {
		return "", err
	}
	if jobs > 0 {
		why = append(why, fmt.Sprintf("%d rollup job(s) not finished", jobs))
	}
	if pending > 0 {
		why = append(why, fmt.Sprintf("%d rollup request(s) waiting", pending))
	}
	for _, name := range env.Shards.Names() {
		n, err := sharddb.New(env.Shards.Pool(name)).DirtyMarkCount(ctx)
		if err != nil {
			return "", err
		}
		if n > 0 {
			why = append(why, fmt.Sprintf("%d dirty mark(s) on %s", n, name))
		}
	}
	if opt.Startup {
		var done int64
		if err := env.Control.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'rollup_schedule' AND state = 'completed'`).Scan(&done); err != nil {
			return "", err
		}
		if done < int64(len(farms)) {
			why = append(why, fmt.Sprintf("%d of %d startup rollups done", done, len(farms)))
		}
	}
	return strings.Join(why, "; "), nil
}

// publishedThrough is the end of the last window of a farm (zone, window,
// allowed lateness) whose end + lateness has passed at the clock at.
func publishedThrough(zone string, window, lateness time.Duration, at time.Time) (time.Time, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.Time{}, err
	}
	mark := at.Add(-lateness)
	start := localday.Start(localday.Of(mark, loc), loc)
	return start.Add(mark.Sub(start) / window * window), nil
}
