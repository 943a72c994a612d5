package move

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Job is the newest move_turbine job of a move, as River has it.
type Job struct {
	ID    int64
	State string // River's: available, scheduled, running, retryable, completed, cancelled, discarded
	// Attempt of MaxAttempts: a job fails for good (discarded) at the last.
	Attempt, MaxAttempts int
	// Unfinished: the job will still run, or is running (jobs.UnfinishedStates).
	Unfinished bool
}

func (j *Job) String() string {
	if j == nil {
		return "none"
	}
	s := fmt.Sprintf("%d %s", j.ID, j.State)
	if j.State == "retryable" || j.State == "discarded" {
		s += fmt.Sprintf(" (attempt %d/%d)", j.Attempt, j.MaxAttempts)
	}
	return s
}

// Stalled says whether a move in state is left with no job to work it: it
// is not done and its newest job ended (cancelled, discarded) or is gone
// (deleted). Its resume command (ResumeCommand) or applying the fleet file
// again queues a job, which goes on from the step the move committed.
func Stalled(state string, job *Job) bool {
	return state != Done && (job == nil || !job.Unfinished)
}

// stalledBy says why a stalled move has no job.
func stalledBy(j *Job) string {
	if j == nil {
		return "no job works it (its last was deleted)"
	}
	s := fmt.Sprintf("its job %d was %s", j.ID, j.State)
	if j.State == "discarded" {
		s += fmt.Sprintf(" after attempt %d of %d", j.Attempt, j.MaxAttempts)
	}
	return s
}

// ResumeCommand is the command that resumes move id.
func ResumeCommand(id int64) string {
	return fmt.Sprintf("orchestrator fleet moves --resume %d", id)
}

// WriteList prints the newest moves (orchestrator fleet moves): each
// move's step, its counts so far and its job (jobs: the newest job of each
// move, by move id), then the command that resumes each stalled move.
func WriteList(ctx context.Context, q *controldb.Queries, limit int, jobs map[int64]*Job, out io.Writer) error {
	rows, err := q.TurbineMoveList(ctx, int32(max(limit, 1)))
	if err != nil {
		return fmt.Errorf("moves: %w", err)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(out, "no turbine has moved between shards (give a turbine another shard in the fleet file and apply it)")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MOVE\tTURBINE\tFARM\tFROM\tTO\tSTATE\tJOB\tDAYS COPIED\tREADINGS COPIED\tSWITCHED AT\tCAUGHT UP\tVERIFIED\tDELETED\tREQUESTED\tFINISHED\tLAST ERROR")
	var stalled []controldb.TurbineMoveListRow
	for _, r := range rows {
		job := jobs[r.ID]
		if Stalled(r.State, job) {
			stalled = append(stalled, r)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			r.ID, r.TurbineID, r.FarmID, r.FromShard, r.ToShard, r.State, job, r.DaysCopied, r.DaysTotal, r.RowsCopied,
			instant(r.SwitchedAt), count(r.RowsCaughtUp), count(r.RowsVerified), count(r.RowsDeleted),
			r.RequestedAt.UTC().Format(time.RFC3339), instant(r.FinishedAt), r.LastError)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, r := range stalled {
		if _, err := fmt.Fprintf(out, "move %d (turbine %s, %s → %s) stopped at %s: %s; resume it: %s (or apply the fleet file again)\n",
			r.ID, r.TurbineID, r.FromShard, r.ToShard, r.State, stalledBy(jobs[r.ID]), ResumeCommand(r.ID)); err != nil {
			return err
		}
	}
	return nil
}

func instant(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func count(n *int64) string {
	if n == nil {
		return "-"
	}
	return fmt.Sprint(*n)
}
