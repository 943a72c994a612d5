// Package move moves a turbine's readings from one shard to another while
// they keep arriving (turbine_move; the move_turbine job steps it). Each
// step commits its state in the control database, so a killed worker's
// successor resumes where it stopped, and every step may run twice:
//
//   - copying: each UTC day of the turbine's readings is copied from the old
//     shard to the new one (staging table, INSERT … ON CONFLICT DO NOTHING);
//   - switch: one control transaction points turbine.shard_name at the new
//     shard and records a turbine_version from that instant. Ingest routes
//     there from its next routes reload; every rollup reads the turbine there
//     (TurbineRollupList), where all it had is already copied;
//   - fence (after Grace, the routes' reload interval): the old shard refuses
//     the turbine's readings (turbine_fence, checked by every ingest write
//     before its commit), and the move waits for the transactions in progress
//     there at that moment to end;
//   - verify: the old shard's rows are copied again (what stale routes wrote
//     since the first copy) and each is found, equal, on the new shard;
//   - done: the old shard's turbine_window rows (with their farm_window_sum
//     share), marked windows and readings are deleted, and the farm's days
//     with numbers stored from the first copied day on are queued for a full
//     recompute on its shards.
//
// No reading is lost: one written on the old shard before the fence is
// copied by the second pass; one after it fails (its sender re-sends). None
// is stored twice: the key refuses a second copy.
package move

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/localday"
)

// States of turbine_move.state.
const (
	Copying  = "copying"
	Switched = "switched"
	Fenced   = "fenced"
	Verified = "verified"
	Done     = "done"
)

// DefaultGrace is how long the move waits between the switch and the fence:
// every ingest process reloads its routes within it (KeepRoutes, 10 s).
const DefaultGrace = 15 * time.Second

// Mover steps moves.
type Mover struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	Now     func() time.Time
	// Grace is the wait from the switch to the fence (0: DefaultGrace).
	Grace time.Duration
	// Recompute queues, in tx, the full recompute of the farm's days on
	// every shard holding its turbines.
	Recompute func(ctx context.Context, tx pgx.Tx, farm string, days []localday.Date) error
	// AfterStep, if set, runs where the move.after_step fault point is
	// (each commit: a day copied, a state reached); an error it returns
	// ends the step with it (tests stop a move there).
	AfterStep func(ctx context.Context, id int64, detail string) error
}

// Step does the next step of move id and returns the state it committed,
// or a wait: try again after it (the grace after the switch, writes in
// flight on the old shard).
func (m *Mover) Step(ctx context.Context, id int64) (state string, wait time.Duration, err error) {
	q := controldb.New(m.Control)
	mv, err := q.TurbineMoveGet(ctx, id)
	if err != nil {
		return "", 0, fmt.Errorf("move %d: %w", id, err)
	}
	from, to := m.Shards.Pool(mv.FromShard), m.Shards.Pool(mv.ToShard)
	if from == nil || to == nil {
		return "", 0, fmt.Errorf("move %d: shard %s or %s is not open in this process (restart it after a fleet apply that adds a shard)", id, mv.FromShard, mv.ToShard)
	}
	switch mv.State {
	case Copying:
		err = m.copyAll(ctx, q, mv, from, to)
	case Switched:
		if wait = mv.SwitchedAt.Add(m.grace()).Sub(m.now()); wait > 0 {
			return mv.State, wait, nil
		}
		err = m.fence(ctx, q, mv, from)
	case Fenced:
		running, rerr := sharddb.New(from).XactsStillRunning(ctx, *mv.FenceSnapshot)
		if rerr != nil {
			return mv.State, 0, fmt.Errorf("move %d: shard %s: writes in flight: %w", id, mv.FromShard, rerr)
		}
		if running > 0 {
			return mv.State, 200 * time.Millisecond, nil
		}
		err = m.verify(ctx, q, mv, from, to)
	case Verified:
		err = m.clean(ctx, mv, from)
	case Done:
		return Done, 0, nil
	default:
		return "", 0, fmt.Errorf("move %d: unknown state %q", id, mv.State)
	}
	state = mv.State
	if err == nil {
		var after controldb.TurbineMove
		if after, err = q.TurbineMoveGet(ctx, id); err == nil {
			state = after.State
			err = m.reached(ctx, id, state)
		}
	}
	if err != nil {
		err = fmt.Errorf("move %d (turbine %s, %s → %s, %s): %w", id, mv.TurbineID, mv.FromShard, mv.ToShard, state, err)
		// Recorded even when the job was cancelled (ctx done): fleet moves
		// says why the move stopped (a move done has nothing left to stop).
		if state == Done {
			return state, 0, err
		}
		if ferr := q.TurbineMoveFailed(context.WithoutCancel(ctx), controldb.TurbineMoveFailedParams{ID: id, LastError: &[]string{err.Error()}[0], Now: m.now()}); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return state, 0, err
	}
	return state, 0, nil
}

// reached is a step's commit: the fault point, then AfterStep.
func (m *Mover) reached(ctx context.Context, id int64, detail string) error {
	if err := faultpoint.Reached(ctx, faultpoint.MoveAfterStep, detail); err != nil {
		return err
	}
	if m.AfterStep != nil {
		return m.AfterStep(ctx, id, detail)
	}
	return nil
}

// Run steps move id until it is done, waiting out its waits (a command, a
// test; the job snoozes instead).
func (m *Mover) Run(ctx context.Context, id int64) error {
	for {
		state, wait, err := m.Step(ctx, id)
		if err != nil || state == Done {
			return err
		}
		if err := Wait(ctx, wait); err != nil {
			return err
		}
	}
}

// Wait waits d (a step's wait) or until ctx ends.
func Wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (m *Mover) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Mover) grace() time.Duration {
	if m.Grace > 0 {
		return m.Grace
	}
	return DefaultGrace
}

// copyAll copies every day not yet copied, then switches.
func (m *Mover) copyAll(ctx context.Context, q *controldb.Queries, mv controldb.TurbineMove, from, to *pgxpool.Pool) error {
	days, err := sharddb.New(from).TurbineMoveReadingDays(ctx, mv.TurbineID)
	if err != nil {
		return fmt.Errorf("days to copy: %w", err)
	}
	if mv.FirstDay == nil {
		// A turbine moving back to a shard it left: its fence there goes
		// before anything is copied (nothing is routed there yet).
		if err := sharddb.New(to).TurbineFenceClear(ctx, mv.TurbineID); err != nil {
			return fmt.Errorf("shard %s: clear fence: %w", mv.ToShard, err)
		}
		first := m.now().UTC().Truncate(24 * time.Hour)
		if len(days) > 0 {
			first = days[0]
		}
		mv.FirstDay = &first
	}
	var todo []time.Time
	for _, d := range days {
		if !d.Before(*mv.FirstDay) {
			todo = append(todo, d)
		}
	}
	if err := q.TurbineMoveCopyPlanned(ctx, controldb.TurbineMoveCopyPlannedParams{ID: mv.ID, FirstDay: mv.FirstDay, DaysTotal: int32(len(todo)), Now: m.now()}); err != nil {
		return err
	}
	for i := int(mv.DaysCopied); i < len(todo); i++ {
		inserted, _, err := copyDay(ctx, from, to, mv.TurbineID, todo[i], false)
		if err != nil {
			return err
		}
		if err := q.TurbineMoveDayCopied(ctx, controldb.TurbineMoveDayCopiedParams{ID: mv.ID, Rows: inserted, Now: m.now()}); err != nil {
			return err
		}
		if err := m.reached(ctx, mv.ID, fmt.Sprintf("copying day %d/%d", i+1, len(todo))); err != nil {
			return err
		}
	}
	// Under the lock of fleet apply, which reads each turbine's shard and
	// writes it back: one that read it before the switch would undo it.
	return pgx.BeginFunc(ctx, m.Control, func(tx pgx.Tx) error {
		qtx := controldb.New(tx)
		if err := qtx.AdvisoryXactLockKey(ctx, fleet.ApplyLock); err != nil {
			return err
		}
		return qtx.TurbineMoveSwitch(ctx, controldb.TurbineMoveSwitchParams{ID: mv.ID, Now: m.now()})
	})
}

// fence makes the old shard refuse the turbine and records the snapshot
// whose writers the move waits for.
func (m *Mover) fence(ctx context.Context, q *controldb.Queries, mv controldb.TurbineMove, from *pgxpool.Pool) error {
	sq := sharddb.New(from)
	if err := sq.TurbineFenceSet(ctx, sharddb.TurbineFenceSetParams{TurbineID: mv.TurbineID, MovedTo: mv.ToShard, Since: m.now()}); err != nil {
		return fmt.Errorf("shard %s: fence: %w", mv.FromShard, err)
	}
	snap, err := sq.XactSnapshot(ctx)
	if err != nil {
		return fmt.Errorf("shard %s: snapshot: %w", mv.FromShard, err)
	}
	return q.TurbineMoveFenced(ctx, controldb.TurbineMoveFencedParams{ID: mv.ID, FenceSnapshot: &snap, Now: m.now()})
}

// verify copies the old shard's rows again and checks each is on the new.
func (m *Mover) verify(ctx context.Context, q *controldb.Queries, mv controldb.TurbineMove, from, to *pgxpool.Pool) error {
	days, err := sharddb.New(from).TurbineMoveReadingDays(ctx, mv.TurbineID)
	if err != nil {
		return fmt.Errorf("days to verify: %w", err)
	}
	var caught, staged int64
	for _, d := range days {
		inserted, n, err := copyDay(ctx, from, to, mv.TurbineID, d, true)
		if err != nil {
			return err
		}
		caught += inserted
		staged += n
	}
	return q.TurbineMoveVerified(ctx, controldb.TurbineMoveVerifiedParams{ID: mv.ID, RowsCaughtUp: &caught, RowsVerified: &staged, Now: m.now()})
}

// copyDay copies the turbine's readings of one UTC day from one shard to
// the other, and returns how many the new shard did not have and how many
// were copied. With check, it fails unless every row copied is then on the
// new shard, equal in every column (same transaction).
func copyDay(ctx context.Context, from, to *pgxpool.Pool, turbine string, day time.Time, check bool) (inserted, staged int64, err error) {
	// A copy is a replay: it waits while live ingest on the new shard is
	// behind (a signal that cannot be read holds nothing back).
	_, _ = livefirst.Wait(ctx, to)
	rows, err := sharddb.New(from).TurbineMoveReadings(ctx, sharddb.TurbineMoveReadingsParams{TurbineID: turbine, Day: day})
	if err != nil {
		return 0, 0, fmt.Errorf("read %s: %w", day.Format(time.DateOnly), err)
	}
	if len(rows) == 0 {
		return 0, 0, nil
	}
	tq := sharddb.New(to)
	if _, err := tq.ReadingsEnsurePartition(ctx, day); err != nil {
		return 0, 0, fmt.Errorf("partition %s: %w", day.Format(time.DateOnly), err)
	}
	err = pgx.BeginFunc(ctx, to, func(tx pgx.Tx) error {
		q := sharddb.New(tx)
		if err := q.ReadingsStagingCreate(ctx); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"readings_staging"}, readingColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := &rows[i]
			return []any{r.TurbineID, r.RecordedAt, r.ReceivedAt, r.Available, r.PowerKw, r.WindMs, r.State}, nil
		})); err != nil {
			return err
		}
		ins, err := q.ReadingsInsertFromStaging(ctx)
		if err != nil {
			return err
		}
		inserted = int64(len(ins))
		if !check {
			return nil
		}
		got, err := q.TurbineMoveMissing(ctx)
		if err != nil {
			return err
		}
		if got.Missing != 0 {
			return fmt.Errorf("%d of the %d readings of %s are not on the new shard as they are on the old (the same recorded_at with other values?)", got.Missing, got.Staged, day.Format(time.DateOnly))
		}
		staged = got.Staged
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("copy %s: %w", day.Format(time.DateOnly), err)
	}
	return inserted, staged, nil
}

// readingColumns are the readings' columns in the order copyDay sends them.
var readingColumns = []string{"turbine_id", "recorded_at", "received_at", "available", "power_kw", "wind_ms", "state"}

// clean deletes what the old shard held of the turbine and queues the
// recompute of the farm's days, in the transaction that ends the move.
func (m *Mover) clean(ctx context.Context, mv controldb.TurbineMove, from *pgxpool.Pool) error {
	sq := sharddb.New(from)
	days, err := sq.TurbineMoveWindowDays(ctx, mv.TurbineID)
	if err != nil {
		return fmt.Errorf("window days: %w", err)
	}
	for _, d := range days {
		err := pgx.BeginFunc(ctx, from, func(tx pgx.Tx) error {
			q := sharddb.New(tx)
			// As every writer of the farm-day's windows: its rebuild of
			// farm_window_sum at the close must not see half of this.
			if err := q.WindowLock(ctx, sharddb.WindowLockParams{FarmID: d.FarmID, Day: d.Day}); err != nil {
				return err
			}
			_, err := q.TurbineMoveWindowsDelete(ctx, sharddb.TurbineMoveWindowsDeleteParams{TurbineID: mv.TurbineID, FarmID: d.FarmID, Day: d.Day})
			return err
		})
		if err != nil {
			return fmt.Errorf("shard %s: windows of %s: %w", mv.FromShard, d.Day.Format(time.DateOnly), err)
		}
	}
	if _, err := sq.TurbineMoveDirtyWindowsDelete(ctx, mv.TurbineID); err != nil {
		return fmt.Errorf("shard %s: marked windows: %w", mv.FromShard, err)
	}
	readingDays, err := sq.TurbineMoveReadingDays(ctx, mv.TurbineID)
	if err != nil {
		return err
	}
	var deleted int64
	for _, d := range readingDays {
		n, err := sq.TurbineMoveReadingsDelete(ctx, sharddb.TurbineMoveReadingsDeleteParams{TurbineID: mv.TurbineID, Day: d})
		if err != nil {
			return fmt.Errorf("shard %s: delete %s: %w", mv.FromShard, d.Format(time.DateOnly), err)
		}
		deleted += n
	}
	return pgx.BeginFunc(ctx, m.Control, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		// One farm's moves end one at a time: the last to end queues the
		// recompute of the farm's days for all of them (a batch of moves
		// costs one recompute per farm-day and shard).
		if err := q.AdvisoryXactLockKey(ctx, "turbine_move/"+mv.FarmID); err != nil {
			return err
		}
		if err := q.TurbineMoveDone(ctx, controldb.TurbineMoveDoneParams{ID: mv.ID, RowsDeleted: &deleted, Now: m.now()}); err != nil {
			return err
		}
		if open, err := q.TurbineMoveOthersOpen(ctx, controldb.TurbineMoveOthersOpenParams{FarmID: mv.FarmID, ID: mv.ID}); err != nil || open > 0 {
			return err
		}
		from, err := q.TurbineMoveRecomputeFrom(ctx, mv.FarmID)
		if err != nil {
			return err
		}
		// A UTC day's readings fall in the farm-local days around it.
		first := localday.DateOf(from).AddDays(-1)
		if _, err := q.TurbineMoveForgetShardParts(ctx, controldb.TurbineMoveForgetShardPartsParams{FarmID: mv.FarmID, FromDay: first.UTC()}); err != nil {
			return err
		}
		computed, err := q.TurbineMoveDaysComputed(ctx, controldb.TurbineMoveDaysComputedParams{FarmID: mv.FarmID, FromDay: first.UTC()})
		if err != nil {
			return err
		}
		days := make([]localday.Date, len(computed))
		for i, d := range computed {
			days[i] = localday.DateOf(d)
		}
		if m.Recompute != nil && len(days) > 0 {
			if err := m.Recompute(ctx, tx, mv.FarmID, days); err != nil {
				return fmt.Errorf("queue the recomputes: %w", err)
			}
		}
		now := m.now()
		return q.TurbineMoveRecomputeQueued(ctx, controldb.TurbineMoveRecomputeQueuedParams{FarmID: mv.FarmID, Now: &now})
	})
}
