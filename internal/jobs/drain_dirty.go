package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/rollup"
)

// ControlQueue runs the jobs that touch only the control database.
const ControlQueue = "control"

// DrainDirtyArgs claims the dirty marks of every shard and enqueues their
// recomputes. It runs every few seconds as a periodic job.
type DrainDirtyArgs struct{}

// Kind is the job kind stored in river_job.
func (DrainDirtyArgs) Kind() string { return "drain_dirty" }

// InsertOpts puts the drain on the control queue, ahead of scheduled work.
func (DrainDirtyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ControlQueue, Priority: PriorityDirty, MaxAttempts: 3}
}

// DrainDirtyWorker runs drain_dirty jobs.
type DrainDirtyWorker struct {
	river.WorkerDefaults[DrainDirtyArgs]
	Drainer *Drainer
}

// Work drains every shard.
func (w *DrainDirtyWorker) Work(ctx context.Context, job *river.Job[DrainDirtyArgs]) error {
	_, err := w.Drainer.Drain(ctx, river.ClientFromContext[pgx.Tx](ctx))
	return err
}

// Drainer moves dirty marks from the shards into rollup jobs.
//
// For each mark: in one control transaction, record (or widen) the
// farm-day-shard's rollup_pending request and, unless a job is already
// waiting to claim it, enqueue a rollup_day job; commit; only then delete the
// mark, and only at the version that was read. A crash in between leaves the
// mark, which costs a second recompute, never a lost one.
type Drainer struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	Now     func() time.Time
}

// DrainResult counts what one drain did.
type DrainResult struct {
	Marks    int // marks read
	Enqueued int // new rollup_day jobs
	Merged   int // marks folded into a request whose job is still waiting
	OpenDays int // marks of days not yet ended: the scheduled rollup covers them
	Deleted  int // marks deleted (the rest were widened meanwhile and stay)
}

// Drain processes every shard's marks once. A shard that cannot be reached
// is skipped (its marks wait on it) and reported in the error.
func (d *Drainer) Drain(ctx context.Context, client *river.Client[pgx.Tx]) (DrainResult, error) {
	var total DrainResult
	var errs []error
	zones, err := d.zones(ctx)
	if err != nil {
		return total, err
	}
	for _, shard := range d.Shards.Names() {
		res, err := d.drainShard(ctx, client, shard, zones)
		total.Marks += res.Marks
		total.Enqueued += res.Enqueued
		total.Merged += res.Merged
		total.OpenDays += res.OpenDays
		total.Deleted += res.Deleted
		if err != nil {
			errs = append(errs, fmt.Errorf("drain shard %s: %w", shard, err))
		}
	}
	return total, errors.Join(errs...)
}

func (d *Drainer) zones(ctx context.Context) (map[string]*time.Location, error) {
	farms, err := controldb.New(d.Control).FarmList(ctx)
	if err != nil {
		return nil, err
	}
	zones := make(map[string]*time.Location, len(farms))
	for _, f := range farms {
		loc, err := time.LoadLocation(f.Timezone)
		if err != nil {
			return nil, fmt.Errorf("farm %s: %w", f.ID, err)
		}
		zones[f.ID] = loc
	}
	return zones, nil
}

func (d *Drainer) drainShard(ctx context.Context, client *river.Client[pgx.Tx], shard string, zones map[string]*time.Location) (DrainResult, error) {
	var res DrainResult
	sq := sharddb.New(d.Shards.Pool(shard))
	marks, err := sq.DirtyMarkList(ctx, 1000)
	if err != nil {
		return res, err
	}
	now := d.Now()
	for _, m := range marks {
		res.Marks++
		loc := zones[m.FarmID]
		if loc == nil {
			loc = time.UTC // a farm removed from the registry: its day in UTC is the best guess
		}
		dayEnd := time.Date(m.Day.Year(), m.Day.Month(), m.Day.Day()+1, 0, 0, 0, 0, loc)
		if now.Before(dayEnd) {
			// The day is still going: its rollup after the day ends (02:00
			// schedule, or any later recompute) reads these rows anyway.
			res.OpenDays++
		} else {
			enqueued, err := d.request(ctx, client, shard, m, now)
			if err != nil {
				return res, err
			}
			if enqueued {
				res.Enqueued++
			} else {
				res.Merged++
			}
		}
		n, err := sq.DirtyMarkDelete(ctx, sharddb.DirtyMarkDeleteParams{ID: m.ID, Version: m.Version})
		if err != nil {
			return res, err
		}
		res.Deleted += int(n)
	}
	return res, nil
}

// request records the mark's recompute in the control database and reports
// whether it enqueued a new job.
func (d *Drainer) request(ctx context.Context, client *river.Client[pgx.Tx], shard string, m sharddb.DirtyMark, now time.Time) (bool, error) {
	enqueued := false
	err := pgx.BeginFunc(ctx, d.Control, func(tx pgx.Tx) error {
		q := controldb.New(tx)
		key := controldb.RollupPendingLockParams{FarmID: m.FarmID, Day: m.Day, ShardName: shard}
		pending, err := q.RollupPendingLock(ctx, key)
		switch {
		case err == nil && pending.Waiting:
			return q.RollupPendingMerge(ctx, controldb.RollupPendingMergeParams{
				TurbineIds: m.TurbineIds, RequestedAt: now, FarmID: m.FarmID, Day: m.Day, ShardName: shard,
			})
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		args := RollupDayArgs{FarmID: m.FarmID, Day: m.Day.Format(time.DateOnly), Shard: shard, Reason: rollup.ReasonDirty}
		job, err := client.InsertTx(ctx, tx, args, &river.InsertOpts{Priority: PriorityDirty})
		if err != nil {
			return err
		}
		enqueued = true
		return q.RollupPendingPut(ctx, controldb.RollupPendingPutParams{
			FarmID: m.FarmID, Day: m.Day, ShardName: shard, TurbineIds: m.TurbineIds, JobID: job.Job.ID, RequestedAt: now,
		})
	})
	return enqueued, err
}
