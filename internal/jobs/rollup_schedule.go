package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/rollup"
)

// RollupScheduleArgs is the nightly rollup of one farm's previous local
// day: it fans out into one rollup_day job per shard holding the farm.
type RollupScheduleArgs struct {
	FarmID string `json:"farm_id"`
	Day    string `json:"day"`
}

// Kind is the job kind stored in river_job.
func (RollupScheduleArgs) Kind() string { return KindRollupSchedule }

// InsertOpts: scheduled work waits behind dirty recomputes.
func (RollupScheduleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ControlQueue, Priority: PrioritySchedule, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// RollupScheduleWorker runs rollup_schedule jobs.
type RollupScheduleWorker struct {
	river.WorkerDefaults[RollupScheduleArgs]
	Control *pgxpool.Pool
}

// Work enqueues the farm-day's rollup on each of its shards.
func (w *RollupScheduleWorker) Work(ctx context.Context, job *river.Job[RollupScheduleArgs]) error {
	_, err := EnqueueFarmDay(ctx, w.Control, river.ClientFromContext[pgx.Tx](ctx), job.Args.FarmID, job.Args.Day, rollup.ReasonSchedule, PrioritySchedule)
	return err
}

// EnqueueFarmDay inserts one rollup_day job per shard holding the farm and
// returns the jobs' ids.
func EnqueueFarmDay(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], farmID, day, reason string, priority int) ([]int64, error) {
	params, err := farmDayJobs(ctx, controldb.New(control), farmID, day, reason, priority)
	if err != nil {
		return nil, err
	}
	return jobIDs(client.InsertMany(ctx, params))
}

// EnqueueFarmDayTx is EnqueueFarmDay inside the caller's control
// transaction: the jobs exist when, and only when, what asked for them
// commits (an operator event and its recompute).
func EnqueueFarmDayTx(ctx context.Context, tx pgx.Tx, client *river.Client[pgx.Tx], farmID, day, reason string, priority int) ([]int64, error) {
	params, err := farmDayJobs(ctx, controldb.New(tx), farmID, day, reason, priority)
	if err != nil {
		return nil, err
	}
	return jobIDs(client.InsertManyTx(ctx, tx, params))
}

// farmDayJobs is one rollup_day job per shard holding the farm.
func farmDayJobs(ctx context.Context, q *controldb.Queries, farmID, day, reason string, priority int) ([]river.InsertManyParams, error) {
	shards, err := q.FarmShards(ctx, farmID)
	if err != nil {
		return nil, fmt.Errorf("shards of farm %s: %w", farmID, err)
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("farm %q has no turbines in the registry", farmID)
	}
	params := make([]river.InsertManyParams, len(shards))
	for i, s := range shards {
		params[i] = river.InsertManyParams{
			Args:       RollupDayArgs{FarmID: farmID, Day: day, Shard: s, Reason: reason},
			InsertOpts: &river.InsertOpts{Priority: priority},
		}
	}
	return params, nil
}

func jobIDs(res []*rivertype.JobInsertResult, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids, nil
}

// EnqueueFarmDays enqueues the rollup of every farm-day from `from` to `to`
// (inclusive dates) on every shard of each farm, and returns the jobs' ids.
func EnqueueFarmDays(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], farms []string, from, to time.Time, reason string, priority int) ([]int64, error) {
	var ids []int64
	for _, f := range farms {
		for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
			got, err := EnqueueFarmDay(ctx, control, client, f, d.Format(time.DateOnly), reason, priority)
			if err != nil {
				return nil, err
			}
			ids = append(ids, got...)
		}
	}
	return ids, nil
}

// DailyAt is a periodic schedule firing once a day at a local wall-clock
// time in a farm's zone (02:00 by default), DST included.
type DailyAt struct {
	Hour, Minute int
	Location     *time.Location
}

// Next returns the first firing strictly after current.
func (s DailyAt) Next(current time.Time) time.Time {
	local := current.In(s.Location)
	next := time.Date(local.Year(), local.Month(), local.Day(), s.Hour, s.Minute, 0, 0, s.Location)
	if !next.After(current) {
		next = time.Date(local.Year(), local.Month(), local.Day()+1, s.Hour, s.Minute, 0, 0, s.Location)
	}
	return next
}

// PreviousDay is the farm-local day before the one holding now, as
// YYYY-MM-DD (days bounded as Postgres bounds them: internal/localday).
func PreviousDay(now time.Time, loc *time.Location) string {
	return localday.Of(now, loc).AddDays(-1).String()
}

// EnqueueStartup inserts what the periodic jobs insert when a leader starts:
// a drain of the dirty marks and, for every farm, the rollup of its previous
// local day. `work --until-idle` calls it so that a cron-style run does that
// work deterministically instead of racing leader election.
func EnqueueStartup(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], now time.Time) error {
	farms, err := controldb.New(control).FarmList(ctx)
	if err != nil {
		return err
	}
	params := []river.InsertManyParams{{Args: DrainDirtyArgs{Immediate: true}}}
	for _, f := range farms {
		loc, err := time.LoadLocation(f.Timezone)
		if err != nil {
			return fmt.Errorf("farm %s: %w", f.ID, err)
		}
		params = append(params, river.InsertManyParams{Args: RollupScheduleArgs{FarmID: f.ID, Day: PreviousDay(now, loc)}})
	}
	_, err = client.InsertMany(ctx, params)
	return err
}
