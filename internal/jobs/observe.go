package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Observer is told how each job this process works ends (for /metrics,
// internal/metrics); jobs itself knows nothing of Prometheus. Calls come
// from River's worker goroutines, several at once.
type Observer interface {
	// JobRun: a job of kind ran for took and ended with outcome. shard is
	// the shard whose queue it ran on (ShardOfQueue), empty for the jobs
	// that are no one shard's.
	JobRun(kind, shard string, outcome Outcome, took time.Duration)
}

// Outcome is how one run of a job ended.
type Outcome string

// The outcomes of a run. A failed run is retried (River's backoff) until
// its attempts run out.
const (
	OutcomeCompleted Outcome = "completed"
	OutcomeFailed    Outcome = "failed" // an error or a panic
	OutcomeCancelled Outcome = "cancelled"
	OutcomeSnoozed   Outcome = "snoozed"
)

// observeMiddleware times every job run and tells the Observer how it
// ended. It runs in the worker's goroutine before River records the result,
// so a job seen completed in river_job has been counted.
type observeMiddleware struct {
	river.MiddlewareDefaults
	obs Observer
}

var _ rivertype.WorkerMiddleware = (*observeMiddleware)(nil)

func (m *observeMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	outcome := OutcomeFailed // unless doInner returns: a panic is a failure
	defer func() { m.obs.JobRun(job.Kind, ShardOfQueue(job.Queue), outcome, time.Since(start)) }()
	err := doInner(ctx)
	outcome = outcomeOf(err)
	return err
}

func outcomeOf(err error) Outcome {
	var cancel *rivertype.JobCancelError
	var snooze *rivertype.JobSnoozeError
	switch {
	case err == nil:
		return OutcomeCompleted
	case errors.As(err, &cancel):
		return OutcomeCancelled
	case errors.As(err, &snooze):
		return OutcomeSnoozed
	}
	return OutcomeFailed
}
