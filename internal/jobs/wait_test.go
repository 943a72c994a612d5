package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// newClient is a stopped River client of a pipeline on env: another
// process's, each time it is called.
func newClient(t *testing.T, env *testdb.Env) *river.Client[pgx.Tx] {
	t.Helper()
	return pipelinetest.New(t, env, pipelinetest.Options{At: time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC), NoStart: true}).Client
}

// TestWaitSeesJobsAnotherProcessWorks: the waiting client never starts; a
// second client (another process, as `serve` would be) works the jobs.
// Wait must still return, with the cancelled job reported as given up.
func TestWaitSeesJobsAnotherProcessWorks(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.SmallFleet)
	// Catches a Wait that never returns (seconds normally); the setup
	// above is not the test's business.
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	waiter := newClient(t, env)
	ids, err := jobs.EnqueueFarmDay(ctx, env.Control, waiter, "ardnave-point", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	testdb.Must(t, err, "enqueue")
	if len(ids) != 3 {
		t.Fatalf("enqueued %d jobs, want 3 (one per shard of ardnave-point)", len(ids))
	}
	extra, err := waiter.Insert(ctx, jobs.RollupDayArgs{FarmID: "kilmore-sands", Day: "2026-08-01", Shard: "s4", Reason: rollup.ReasonManual},
		&river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
	testdb.Must(t, err, "insert")
	_, err = waiter.JobCancel(ctx, extra.Job.ID)
	testdb.Must(t, err, "cancel")

	worker := newClient(t, env)
	testdb.Must(t, worker.Start(ctx), "start the other client")
	defer func() { _ = worker.Stop(context.Background()) }()

	var reports int
	gaveUp, err := jobs.Wait(ctx, waiter, append(ids, extra.Job.ID), 50*time.Millisecond, func(jobs.WaitProgress) { reports++ })
	testdb.Must(t, err, "wait")
	if len(gaveUp) != 1 || gaveUp[0].Job.ID != extra.Job.ID {
		t.Fatalf("gave up: %+v, want exactly the cancelled job %d", gaveUp, extra.Job.ID)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_day WHERE farm_id = 'ardnave-point' AND day = '2026-08-01'`); n != 12 {
		t.Fatalf("turbine_day rows after Wait = %d, want 12 (ardnave-point's turbines in testdb.SmallFleet)", n)
	}
	if reports == 0 {
		t.Fatal("Wait reported no progress")
	}
}

// TestLongestShardNameIsAValidQueue: the longest shard name the fleet file
// accepts makes a queue name River accepts, and one character more does not
// (River validates queue names when a client is built): the two limits agree.
func TestLongestShardNameIsAValidQueue(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", fleet.MaxShardName-2) + "-1"
	_, err := fleet.Parse("long", strings.NewReader("shards: [{name: "+long+"}]\nfarms:\n  - {id: f, timezone: UTC, turbines: [{id: T-1, shard: "+long+"}]}\n"))
	testdb.Must(t, err, "a %d-character shard name parses", len(long))
	env := testdb.New(t, "")
	client := func(shard string) error {
		_, err := river.NewClient(riverpgxv5.New(env.Control), &river.Config{
			Queues:  map[string]river.QueueConfig{jobs.RollupQueue(shard): {MaxWorkers: 1}},
			Workers: river.NewWorkers(),
		})
		return err
	}
	if err := client(long); err != nil {
		t.Fatalf("River refuses the queue of a %d-character shard name: %v", len(long), err)
	}
	if err := client(long + "x"); err == nil || !strings.Contains(err.Error(), "queue name") {
		t.Fatalf("River accepted a queue one character longer than the fleet file allows (err %v): the limits disagree", err)
	}
}
