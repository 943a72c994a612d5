// The publish_windows kind (not publish_windows.go: a _windows suffix is a GOOS build constraint).

package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/publish"
)

// PublishWindowsArgs publishes every farm's windows whose watermark has
// passed (the fast path). It runs every PublishEvery on its own queue, so
// rollups can never starve it.
type PublishWindowsArgs struct{}

// Kind is the job kind stored in river_job.
func (PublishWindowsArgs) Kind() string { return KindPublishWindows }

// InsertOpts: the fast queue; at most one waits or runs at a time, so a
// slow round skips the next tick rather than piling up.
func (PublishWindowsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: FastQueue, Priority: PriorityDirty, MaxAttempts: 1,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: UnfinishedStates}}
}

// PublishWindowsWorker runs publish_windows jobs.
type PublishWindowsWorker struct {
	river.WorkerDefaults[PublishWindowsArgs]
	Publisher *publish.Publisher
}

// Timeout bounds one round; each shard has its own, shorter, timeout.
func (w *PublishWindowsWorker) Timeout(*river.Job[PublishWindowsArgs]) time.Duration {
	return time.Minute
}

// Work publishes. A farm that could not publish (its shard down) is logged
// and retried on the next tick; the job itself succeeds when the others
// did, so one farm's trouble does not fill the job table with failures.
func (w *PublishWindowsWorker) Work(ctx context.Context, _ *river.Job[PublishWindowsArgs]) error {
	if w.Publisher == nil {
		return nil
	}
	sum, err := w.Publisher.PublishDue(ctx)
	if err != nil {
		slog.Warn("fast path: some farms did not publish this round", "published", sum.Windows, "failed", len(sum.Failed), "err", err)
		if len(sum.Failed) == sum.Farms && sum.Farms > 0 {
			return err
		}
	}
	return nil
}
