package jobs

import (
	"context"

	"github.com/riverqueue/river"
)

// PartitionsArgs keeps every shard's partitions ahead of time.
type PartitionsArgs struct{}

// Kind is the job kind stored in river_job.
func (PartitionsArgs) Kind() string { return KindPartitions }

// InsertOpts runs it on the control queue.
func (PartitionsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ControlQueue, Priority: PrioritySchedule}
}

// PartitionsWorker runs partitions jobs.
type PartitionsWorker struct {
	river.WorkerDefaults[PartitionsArgs]
	Maintain func(context.Context) error
}

// Work creates partitions ahead and applies retention.
func (w *PartitionsWorker) Work(ctx context.Context, _ *river.Job[PartitionsArgs]) error {
	if w.Maintain == nil {
		return nil
	}
	return w.Maintain(ctx)
}
