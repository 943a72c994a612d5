package jobs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// WaitProgress is what Wait reports as it goes.
type WaitProgress struct {
	Done, Total int
	// Retrying is a job whose last attempt failed and will be retried (nil
	// when the report is not about one).
	Retrying *rivertype.JobRow
}

// GaveUp is a job that will not run again: cancelled (a refused rollup, or
// an operator in the River UI) or discarded after its last attempt.
type GaveUp struct {
	Job    *rivertype.JobRow
	Reason string
}

// Wait returns once every job in ids is finalized (completed, cancelled or
// discarded), whichever process worked them: it reads the jobs' rows rather
// than listening to one client's events, so a `serve` or `work` running
// beside the caller may complete them. It reads every poll interval, and at
// once when one of the client's own events arrives (when it works jobs
// too). progress, if not nil, is called after each read that changed
// something and for each failed attempt.
func Wait(ctx context.Context, client *river.Client[pgx.Tx], ids []int64, poll time.Duration, progress func(WaitProgress)) ([]GaveUp, error) {
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()

	open := slices.Clone(ids)
	seenAttempt := map[int64]int{} // job -> attempt whose failure was reported
	var gaveUp []GaveUp
	done := -1
	for {
		rows, err := jobRows(ctx, client, open)
		if err != nil {
			return gaveUp, err
		}
		still := open[:0]
		for _, id := range open {
			j := rows[id]
			switch {
			case j == nil:
				// Deleted (River UI, or the job cleaner long after it
				// finished): it will not run, and we cannot say how it ended.
				gaveUp = append(gaveUp, GaveUp{Job: &rivertype.JobRow{ID: id}, Reason: "the job was deleted before it was seen finished"})
			case j.State == rivertype.JobStateCompleted:
			case j.State == rivertype.JobStateCancelled || j.State == rivertype.JobStateDiscarded:
				gaveUp = append(gaveUp, GaveUp{Job: j, Reason: lastError(j)})
			default:
				still = append(still, id)
				if len(j.Errors) > 0 && seenAttempt[id] < len(j.Errors) && progress != nil {
					seenAttempt[id] = len(j.Errors)
					progress(WaitProgress{Done: len(ids) - len(open), Total: len(ids), Retrying: j})
				}
			}
		}
		open = still
		if n := len(ids) - len(open); n != done {
			done = n
			if progress != nil {
				progress(WaitProgress{Done: done, Total: len(ids)})
			}
		}
		if len(open) == 0 {
			return gaveUp, nil
		}
		select {
		case <-ctx.Done():
			return gaveUp, ctx.Err()
		case <-events:
		case <-tick.C:
		}
	}
}

// jobRows reads the rows of ids, a page at a time.
func jobRows(ctx context.Context, client *river.Client[pgx.Tx], ids []int64) (map[int64]*rivertype.JobRow, error) {
	out := make(map[int64]*rivertype.JobRow, len(ids))
	for chunk := range slices.Chunk(ids, 1000) {
		res, err := client.JobList(ctx, river.NewJobListParams().IDs(chunk...).First(len(chunk)))
		if err != nil {
			return nil, fmt.Errorf("read job rows: %w", err)
		}
		for _, j := range res.Jobs {
			out[j.ID] = j
		}
	}
	return out, nil
}

func lastError(j *rivertype.JobRow) string {
	if len(j.Errors) == 0 {
		return string(j.State)
	}
	return j.Errors[len(j.Errors)-1].Error
}
