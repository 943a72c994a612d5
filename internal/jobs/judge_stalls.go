package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/publish"
)

// JudgeStallsArgs judges, by the stalled-turbine watcher's rule, windows of
// one farm-local day whose readings a correction changed (the windows its
// claimed marks name): the stall a late reading shows is raised with its
// true first window (publish.Publisher.JudgeStalls).
type JudgeStallsArgs struct {
	FarmID string `json:"farm_id"`
	// Day is the farm-local date, YYYY-MM-DD.
	Day string `json:"day"`
	// Windows are the windows' starts, ascending.
	Windows []time.Time `json:"windows"`
	// After is a judge_stalls job of the same windows that was running when
	// this one was queued, and may have read the shards before the readings
	// this one is for (0: none).
	After int64 `json:"after,omitempty"`
}

// Kind is the job kind stored in river_job.
func (JudgeStallsArgs) Kind() string { return KindJudgeStalls }

// InsertOpts: its own queue, one at a time (a slow shard read never holds
// a drain back, and a farm's judges take its stall lock in turn anyway);
// queued twice before it runs (every shard of the farm corrected the same
// windows), it runs once.
func (JudgeStallsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: StallQueue, Priority: PrioritySchedule, MaxAttempts: 25,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: UnfinishedStates}}
}

// QueueJudgeStalls is a rollup.Request's Changed: it queues a judge_stalls
// job of the windows in the recompute's control transaction, with the
// client of the job running the recompute. When the same job is running
// already, it queues one more to run after it (After): the running one may
// have read the readings before this correction's.
func QueueJudgeStalls(farm string, day time.Time) func(ctx context.Context, tx pgx.Tx, starts []time.Time) error {
	return func(ctx context.Context, tx pgx.Tx, starts []time.Time) error {
		client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
		if err != nil {
			return err
		}
		args := JudgeStallsArgs{FarmID: farm, Day: day.Format(time.DateOnly), Windows: starts}
		res, err := client.InsertTx(ctx, tx, args, nil)
		if err != nil {
			return err
		}
		if res.UniqueSkippedAsDuplicate && res.Job.State == rivertype.JobStateRunning {
			args.After = res.Job.ID
			_, err = client.InsertTx(ctx, tx, args, nil)
		}
		return err
	}
}

// JudgeStallsWorker runs judge_stalls jobs.
type JudgeStallsWorker struct {
	river.WorkerDefaults[JudgeStallsArgs]
	Publisher *publish.Publisher
}

// Work judges the windows.
func (w *JudgeStallsWorker) Work(ctx context.Context, job *river.Job[JudgeStallsArgs]) error {
	day, err := time.Parse(time.DateOnly, job.Args.Day)
	if err != nil {
		return river.JobCancel(fmt.Errorf("judge_stalls: day %q: %w", job.Args.Day, err))
	}
	return w.Publisher.JudgeStalls(ctx, job.Args.FarmID, day, job.Args.Windows)
}

// Timeout: a correction of a whole day reads the day's readings of the
// farm once more.
func (w *JudgeStallsWorker) Timeout(*river.Job[JudgeStallsArgs]) time.Duration {
	return 15 * time.Minute
}
