package jobs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/rollup"
)

// DrainDirtyArgs claims the dirty marks of every shard and enqueues their
// recomputes. It runs every few seconds as a periodic job. Immediate
// drains do not let bursts settle (`work --until-idle`, which wants the
// work done now).
type DrainDirtyArgs struct {
	Immediate bool `json:"immediate,omitempty"`
}

// Kind is the job kind stored in river_job.
func (DrainDirtyArgs) Kind() string { return KindDrainDirty }

// InsertOpts puts the drain on the control queue, ahead of scheduled work.
// At most one drain waits or runs at a time: the periodic insert every few
// seconds is skipped while one is still going (a slow shard cannot pile them up).
func (DrainDirtyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ControlQueue, Priority: PriorityDirty, MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: UnfinishedStates}}
}

// DrainDirtyWorker runs drain_dirty jobs.
type DrainDirtyWorker struct {
	river.WorkerDefaults[DrainDirtyArgs]
	Drainer *drain.Drainer
}

// Timeout bounds a drain: the shards' own timeouts (30 s) run in
// parallel inside it.
func (w *DrainDirtyWorker) Timeout(*river.Job[DrainDirtyArgs]) time.Duration { return 2 * time.Minute }

// Work drains every shard.
func (w *DrainDirtyWorker) Work(ctx context.Context, job *river.Job[DrainDirtyArgs]) error {
	enqueue := RollupDayEnqueue(river.ClientFromContext[pgx.Tx](ctx))
	if job.Args.Immediate {
		_, err := w.Drainer.DrainImmediate(ctx, enqueue)
		return err
	}
	_, err := w.Drainer.Drain(ctx, enqueue)
	return err
}

// RollupDayEnqueue is how the drain enqueues a recompute: a rollup_day
// job (reason dirty, the drain's priority) inserted in the drain's
// control transaction.
func RollupDayEnqueue(client *river.Client[pgx.Tx]) drain.Enqueue {
	return func(ctx context.Context, tx pgx.Tx, farm string, day time.Time, shard string) (int64, error) {
		args := RollupDayArgs{FarmID: farm, Day: day.Format(time.DateOnly), Shard: shard, Reason: rollup.ReasonDirty}
		res, err := client.InsertTx(ctx, tx, args, &river.InsertOpts{Priority: PriorityDirty})
		if err != nil {
			return 0, err
		}
		return res.Job.ID, nil
	}
}
