package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/schema"
)

// reopen queues the recompute of farm-days a fleet apply changed.
func (m *Main) reopen(ctx context.Context, days []fleet.FarmDay) ([]int64, error) {
	cfg := jobs.DefaultConfig()
	cfg.Periodic = false
	client, err := m.River(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, d := range days {
		got, err := jobs.EnqueueFarmDay(ctx, m.control, client, d.FarmID, d.Day.String(), rollup.ReasonManual, jobs.PriorityManual)
		if err != nil {
			return ids, fmt.Errorf("%s: %w", d, err)
		}
		ids = append(ids, got...)
	}
	return ids, nil
}

func (m *Main) fleetHistoryCommand() *cobra.Command {
	var f fleet.HistoryFilter
	var at string
	cmd := &cobra.Command{
		Use:   "history [--farm F | --turbine T] [--at INSTANT]",
		Short: "What the registry said: every version of farms and turbines (farm_history, turbine_history), or those in force at an instant",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if f.Farm != "" && f.Turbine != "" {
				return fmt.Errorf("give at most one of --farm and --turbine")
			}
			if at != "" {
				t, err := time.Parse(time.RFC3339, at)
				if err != nil {
					return fmt.Errorf("--at: %w (give an instant such as 2026-12-01T13:00:00Z)", err)
				}
				f.At = &t
			}
			if _, err := m.Migrate(c.Context()); err != nil {
				return err
			}
			return fleet.WriteHistory(c.Context(), controldb.New(m.control), f, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&f.Farm, "farm", "", "only this farm (and its turbines)")
	cmd.Flags().StringVar(&f.Turbine, "turbine", "", "only this turbine")
	cmd.Flags().StringVar(&at, "at", "", "only the versions in force at this instant (RFC 3339)")
	return cmd
}

// queueMoves queues the move_turbine jobs of the moves an apply started or
// found with none working them, in its transaction.
func (m *Main) queueMoves(ctx context.Context, tx pgx.Tx, moves []fleet.Move) ([]fleet.Move, error) {
	client, err := jobs.InsertOnlyClient(m.control)
	if err != nil {
		return nil, err
	}
	return jobs.QueueMoves(ctx, client, tx, moves)
}

func (m *Main) fleetMovesCommand() *cobra.Command {
	var limit int
	var resume []int64
	cmd := &cobra.Command{
		Use:   "moves [--resume MOVE[,MOVE...]]",
		Short: "Turbine moves between shards, newest first: how far each has got, its job, how to resume it (turbine_move)",
		Long: "Lists the newest moves: the step each committed, its counts, its move_turbine job and the last error.\n" +
			"A move that is not done and has no job working it (cancelled, discarded or deleted in the River UI,\n" +
			"or left so by a process) is followed by the command that resumes it. --resume MOVE queues a job for\n" +
			"each move given that needs one; a running serve or work goes on from the step the move committed.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if _, err := m.Migrate(ctx); err != nil {
				return err
			}
			client, err := jobs.InsertOnlyClient(m.control)
			if err != nil {
				return err
			}
			if len(resume) > 0 {
				res, err := jobs.ResumeMoves(ctx, m.control, client, resume)
				if err != nil {
					return err
				}
				for _, r := range res {
					switch {
					case r.Queued:
						fmt.Printf("move %d: job %d queued; a running serve or work goes on from %s\n", r.MoveID, r.Job, r.State)
					case r.State == move.Done:
						fmt.Printf("move %d: done, nothing to resume\n", r.MoveID)
					default:
						fmt.Printf("move %d: job %d works it already (%s), nothing to resume\n", r.MoveID, r.Job, r.State)
					}
				}
				return nil
			}
			moveJobs, err := jobs.MoveJobs(ctx, client)
			if err != nil {
				return err
			}
			return move.WriteList(ctx, controldb.New(m.control), limit, moveJobs, os.Stdout)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many moves")
	cmd.Flags().Int64SliceVar(&resume, "resume", nil, "queue a job for these moves (ids) if none works them")
	return cmd
}

// fleetDryRun prints the plan of applying plan with opts, changing
// nothing: no migration, no shard database, no row, no job. It fails as
// the apply would (exit 2 when refused), after the plan.
func (m *Main) fleetDryRun(ctx context.Context, source string, plan *fleet.Plan, opts fleet.ApplyOptions, asJSON bool) error {
	reg, err := m.Registry(ctx)
	if err != nil {
		return err
	}
	v, err := schema.ControlVersion(ctx, reg.Pool)
	if err != nil {
		return err
	}
	if len(v.Missing) > 0 {
		return fmt.Errorf("the control database lacks %d of this build's migrations: a dry run changes nothing, so it cannot plan against it; "+
			"run `orchestrator migrate` first (or apply without --dry-run)", len(v.Missing))
	}
	res, refused := reg.DryRun(ctx, source, plan, opts)
	if res.Source == "" {
		return refused // the file or its checks failed: no plan
	}
	if asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
			return err
		}
	} else {
		fmt.Print(res.PlanText())
	}
	if refused != nil {
		// The plan above lists what the refusal would: say why, briefly.
		var reasons []string
		var missing *fleet.RetiresMissingError
		if errors.As(refused, &missing) {
			reasons = append(reasons, fmt.Sprintf("it would retire %d turbine(s) in service that the file does not name (under retired: above; --retire-missing retires them)", missing.Count()))
		}
		var closed *fleet.ChangesClosedDaysError
		if errors.As(refused, &closed) {
			reasons = append(reasons, fmt.Sprintf("it would change %d rolled-up farm-day(s) (listed above; --reopen recomputes them)", len(res.Reopened)))
		}
		if len(reasons) == 0 {
			return fmt.Errorf("dry run, nothing was changed: %w", refused)
		}
		return &exitError{code: 2, err: fmt.Errorf("dry run, nothing was changed; the apply would be refused: %s", strings.Join(reasons, "; "))}
	}
	if !asJSON {
		fmt.Println("dry run: nothing was changed (the same command without --dry-run applies this plan)")
	}
	return nil
}
