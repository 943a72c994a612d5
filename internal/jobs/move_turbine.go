package jobs

import (
	"context"
	"fmt"
	"log/slog"
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

// InsertOpts: on the control queue, one job per move; a move whose shard
// is down keeps retrying (River's backoff) until it returns.
func (MoveTurbineArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ControlQueue, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true}}
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
// transaction: the moves and their jobs commit together).
func QueueMoves(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, moves []fleet.Move) error {
	params := make([]river.InsertManyParams, len(moves))
	for i, m := range moves {
		params[i] = river.InsertManyParams{Args: MoveTurbineArgs{MoveID: m.ID}}
	}
	_, err := client.InsertManyTx(ctx, tx, params)
	return err
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
