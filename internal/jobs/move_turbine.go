package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/rollup"
)

// MoveTurbineArgs works one turbine_move (internal/move) to its end.
type MoveTurbineArgs struct {
	MoveID int64 `json:"move_id"`
}

// Kind is the job kind stored in river_job.
func (MoveTurbineArgs) Kind() string { return KindMoveTurbine }

// InsertOpts: on the control queue, one unfinished job per move (River's
// uniqueness: a cancelled or discarded one does not count, so a stopped
// move can be given another, QueueMoves, ResumeMoves); a move whose shard
// is down keeps retrying (River's backoff) until it returns.
func (MoveTurbineArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ControlQueue, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: UnfinishedStates}}
}

// MoveTurbineWorker runs move_turbine jobs.
type MoveTurbineWorker struct {
	river.WorkerDefaults[MoveTurbineArgs]
	Mover *move.Mover
}

// Timeout: each step commits, so a long copy that the bound cut short
// resumes after its last day; the bound is generous.
func (w *MoveTurbineWorker) Timeout(*river.Job[MoveTurbineArgs]) time.Duration {
	return 30 * time.Minute
}

// Work steps the move until it is done; a wait longer than a second (the
// grace between switch and fence) snoozes the job instead of holding a
// worker.
func (w *MoveTurbineWorker) Work(ctx context.Context, job *river.Job[MoveTurbineArgs]) error {
	if w.Mover == nil {
		return fmt.Errorf("move_turbine: this process has no mover")
	}
	for {
		state, wait, err := w.Mover.Step(ctx, job.Args.MoveID)
		if err != nil || state == move.Done {
			return err
		}
		if wait > time.Second {
			return river.JobSnooze(wait)
		}
		if err := move.Wait(ctx, wait); err != nil {
			return err
		}
	}
}

// QueueMoves queues a move_turbine job per move in tx (fleet apply's
// transaction: the moves and their jobs commit together) and returns the
// moves it queued one for. A move whose job is still to run, running or
// retrying keeps that job (the args are unique among unfinished jobs);
// one whose job was cancelled, discarded or deleted gets a new job, which
// goes on from the step the move committed.
func QueueMoves(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, moves []fleet.Move) ([]fleet.Move, error) {
	params := make([]river.InsertManyParams, len(moves))
	for i, m := range moves {
		params[i] = river.InsertManyParams{Args: MoveTurbineArgs{MoveID: m.ID}}
	}
	res, err := client.InsertManyTx(ctx, tx, params)
	if err != nil {
		return nil, err
	}
	queued := map[int64]bool{}
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			var args MoveTurbineArgs
			if err := json.Unmarshal(r.Job.EncodedArgs, &args); err != nil {
				return nil, fmt.Errorf("move_turbine job %d: %w", r.Job.ID, err)
			}
			queued[args.MoveID] = true
		}
	}
	var out []fleet.Move
	for _, m := range moves {
		if queued[m.ID] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Resumed is what ResumeMoves did for one move.
type Resumed struct {
	MoveID int64
	// State is the step the move had committed.
	State string
	// Job works the move: the one queued now (Queued), or the one already
	// working it. Zero for a move that is done.
	Job    int64
	Queued bool
}

// ResumeMoves queues a move_turbine job for each move of ids that is not
// done and has none working it (orchestrator fleet moves --resume): the
// job goes on from the step the move committed, and a running serve or
// work runs it.
func ResumeMoves(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], ids []int64) ([]Resumed, error) {
	var out []Resumed
	err := pgx.BeginFunc(ctx, control, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		for _, id := range ids {
			mv, err := q.TurbineMoveGet(ctx, id)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("move %d: no such move (orchestrator fleet moves lists them)", id)
			}
			if err != nil {
				return fmt.Errorf("move %d: %w", id, err)
			}
			r := Resumed{MoveID: id, State: mv.State}
			if mv.State != move.Done {
				res, err := client.InsertTx(ctx, tx, MoveTurbineArgs{MoveID: id}, nil)
				if err != nil {
					return fmt.Errorf("move %d: %w", id, err)
				}
				r.Job, r.Queued = res.Job.ID, !res.UniqueSkippedAsDuplicate
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// MoveJobs returns the newest move_turbine job of each move River still
// keeps, by move id (fleet moves shows it).
func MoveJobs(ctx context.Context, client *river.Client[pgx.Tx]) (map[int64]*move.Job, error) {
	out := map[int64]*move.Job{}
	params := river.NewJobListParams().Kinds(KindMoveTurbine).OrderBy(river.JobListOrderByID, river.SortOrderAsc).First(1000)
	for {
		res, err := client.JobList(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("move_turbine jobs: %w", err)
		}
		for _, j := range res.Jobs {
			var args MoveTurbineArgs
			if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
				return nil, fmt.Errorf("move_turbine job %d: %w", j.ID, err)
			}
			out[args.MoveID] = &move.Job{ID: j.ID, State: string(j.State), Attempt: j.Attempt, MaxAttempts: j.MaxAttempts,
				Unfinished: slices.Contains(UnfinishedStates, j.State)}
		}
		if len(res.Jobs) < 1000 {
			return out, nil
		}
		params = params.After(res.LastCursor)
	}
}

// RecomputeAfterMove returns the Mover's Recompute: it queues, in tx, the
// full recompute of the farm's days on every shard holding its turbines (a
// move's last step), with client (nil: the client of the job running the
// move).
func RecomputeAfterMove(client *river.Client[pgx.Tx]) func(ctx context.Context, tx pgx.Tx, farm string, days []localday.Date) error {
	return func(ctx context.Context, tx pgx.Tx, farm string, days []localday.Date) error {
		c := client
		if c == nil {
			var err error
			if c, err = river.ClientFromContextSafely[pgx.Tx](ctx); err != nil {
				return err
			}
		}
		shards, err := controldb.New(tx).TurbineMoveFarmShards(ctx, farm)
		if err != nil {
			return err
		}
		var params []river.InsertManyParams
		for _, d := range days {
			for _, s := range shards {
				params = append(params, river.InsertManyParams{
					Args:       RollupDayArgs{FarmID: farm, Day: d.String(), Shard: s, Reason: rollup.ReasonManual},
					InsertOpts: &river.InsertOpts{Priority: PriorityManual},
				})
			}
		}
		if len(params) == 0 {
			return nil
		}
		_, err = c.InsertManyTx(ctx, tx, params)
		return err
	}
}

// InsertOnlyClient is a River client that only inserts jobs (a command
// that queues work for serve or work to do).
func InsertOnlyClient(control *pgxpool.Pool) (*river.Client[pgx.Tx], error) {
	return river.NewClient(riverpgxv5.New(control), &river.Config{Logger: slog.New(slog.NewTextHandler(discard{}, nil))})
}
