package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/rollup"
)

// RollupDayArgs recomputes one farm-local day of one farm on one shard. Its
// JSON keys are ArgFarmID, ArgDay, ArgShard, ArgReason (the SQL reads them).
type RollupDayArgs struct {
	FarmID string `json:"farm_id"`
	// Day is the farm-local date, YYYY-MM-DD.
	Day    string `json:"day"`
	Shard  string `json:"shard"`
	Reason string `json:"reason"`
}

// Kind is the job kind stored in river_job.
func (RollupDayArgs) Kind() string { return KindRollupDay }

// InsertOpts routes the job to its shard's queue. A shard that stays down
// for days keeps retrying (River's backoff) until it returns.
func (a RollupDayArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: RollupQueue(a.Shard), MaxAttempts: 25}
}

// RollupDayWorker runs rollup_day jobs.
type RollupDayWorker struct {
	river.WorkerDefaults[RollupDayArgs]
	Computer *rollup.Computer
}

// Work recomputes the farm-day-shard.
func (w *RollupDayWorker) Work(ctx context.Context, job *river.Job[RollupDayArgs]) error {
	day, err := time.Parse(time.DateOnly, job.Args.Day)
	if err != nil {
		return river.JobCancel(fmt.Errorf("rollup_day: day %q: %w", job.Args.Day, err))
	}
	// A correction is a replay's work: it waits, before it takes any
	// lock, while live ingest or the fast path wait on its shard
	// (internal/livefirst); one that is running goes on.
	if w.Computer.Shards != nil {
		if pool := w.Computer.Shards.Pool(job.Args.Shard); pool != nil {
			_, _ = livefirst.Wait(ctx, pool)
		}
	}
	id := job.ID
	res, err := w.Computer.Recompute(ctx, rollup.Request{
		FarmID: job.Args.FarmID, Day: day, Shard: job.Args.Shard, Reason: job.Args.Reason,
		Attempt: job.Attempt, JobID: &id, Changed: QueueJudgeStalls(job.Args.FarmID, day),
	})
	if err != nil {
		return err
	}
	if res.Refused != nil {
		// Retrying cannot help: cancel, with the reason on the job.
		return river.JobCancel(fmt.Errorf("rollup_day %s/%s on %s refused: %w", job.Args.FarmID, job.Args.Day, job.Args.Shard, res.Refused))
	}
	slog.Debug("rollup_day", "farm", job.Args.FarmID, "day", job.Args.Day, "shard", job.Args.Shard,
		"reason", job.Args.Reason, "turbines", res.Turbines, "full", res.Full, "skipped", res.Skipped)
	return nil
}

// Timeout: a farm-day on a busy shard can take a while; River's default of
// one minute is too tight for a 25-hour day of 300 turbines on a cold cache.
func (w *RollupDayWorker) Timeout(*river.Job[RollupDayArgs]) time.Duration { return 15 * time.Minute }
