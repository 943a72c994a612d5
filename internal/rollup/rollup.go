// Package rollup recomputes turbine_day rows: the counts of one farm-local
// day (expected, received, available, late, early, lags) for the turbines of
// one farm on one shard, computed whole by one SQL statement on the shard and
// upserted into the control database. Running it again changes nothing.
//
// Two recomputes of the same farm-day-shard never interleave: each holds a
// transaction advisory lock on the control database from before its shard
// snapshot is opened until its upsert commits, so the one with the newer
// snapshot always writes last (DESIGN.md, dirty-mark invariant 3).
package rollup

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// Why a recompute was asked for. Dirty recomputes are drained first.
const (
	ReasonDirty    = "dirty"
	ReasonSchedule = "schedule"
	ReasonManual   = "manual"
)

// Request names one farm-day on one shard.
type Request struct {
	FarmID string
	// Day is the farm-local date (any time of day; only the date counts).
	Day    time.Time
	Shard  string
	Reason string
	// Attempt is the job attempt (1 = first). A retried job always
	// recomputes every turbine: its first attempt may have claimed a
	// request and died before writing.
	Attempt int
	// JobID is recorded on the rows; nil outside River.
	JobID *int64
}

func (r Request) key() string {
	return r.FarmID + "/" + r.Day.Format(time.DateOnly) + "/" + r.Shard
}

// Result says what a recompute did.
type Result struct {
	// Turbines is how many turbine_day rows were written.
	Turbines int
	// Full is true when every turbine of the farm on the shard was recomputed.
	Full bool
	// RowsRead is how many readings the shard statement aggregated (every
	// reading of the recomputed turbines' day): the recompute's work.
	RowsRead int64
	// Skipped is true when a dirty request had already been taken by
	// another recompute whose snapshot is newer than the marks: nothing to do.
	Skipped bool
	// Refused is set when the day cannot be recomputed (retention has
	// dropped some of its readings): the stored rows were left as they are
	// and any request for the day was taken, since no job could serve it.
	Refused error
}

// ErrReadingsDropped says a farm-day's readings are no longer all there.
var ErrReadingsDropped = errors.New("readings dropped by retention")

// Computer recomputes farm-days.
type Computer struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	Now     func() time.Time
	// OnResult, if set, sees every finished recompute (tests and benchmarks
	// add up the work with it).
	OnResult func(Request, Result)
	// AfterCompute, if set, runs after the shard query and before the upsert,
	// with the lock held (tests hold a recompute mid-way with it).
	AfterCompute func(Request)
}

var (
	serviceStart = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	serviceEnd   = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Recompute recomputes one farm-day-shard and upserts its rows.
//
// Everything on the control side happens in one transaction: the advisory
// lock, the claim of the pending request, and the upsert. If the recompute
// fails anywhere (shard down, process killed, job cancelled), the claim
// rolls back with it and the request is still there for the next job.
func (c *Computer) Recompute(ctx context.Context, req Request) (Result, error) {
	pool := c.Shards.Pool(req.Shard)
	if pool == nil {
		return Result{}, fmt.Errorf("rollup %s: shard %q is not registered", req.key(), req.Shard)
	}
	var res Result
	err := pgx.BeginFunc(ctx, c.Control, func(tx pgx.Tx) error {
		var err error
		res, err = c.recompute(ctx, controldb.New(tx), pool, req)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("rollup %s: %w", req.key(), err)
	}
	if c.OnResult != nil {
		c.OnResult(req, res)
	}
	return res, nil
}

func (c *Computer) recompute(ctx context.Context, q *controldb.Queries, pool *pgxpool.Pool, req Request) (Result, error) {
	// The lock is taken before the shard snapshot opens and released by the
	// commit after the upsert: the newer snapshot always writes last.
	if err := q.AdvisoryXactLockKey(ctx, req.key()); err != nil {
		return Result{}, fmt.Errorf("lock: %w", err)
	}
	// Claim any dirty request before the snapshot: marks that reach the
	// control database after this point get a job of their own (which
	// waits on the lock).
	claim, err := q.RollupPendingClaim(ctx, controldb.RollupPendingClaimParams{FarmID: req.FarmID, Day: req.Day, ShardName: req.Shard})
	claimed := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return Result{}, fmt.Errorf("claim: %w", err)
	}
	var only []string // nil = every turbine
	switch {
	case req.Reason == ReasonDirty && req.Attempt <= 1 && !claimed:
		// Another recompute claimed this request after its marks' rows
		// had committed, so its snapshot holds them.
		return Result{Skipped: true}, nil
	case req.Reason == ReasonDirty && req.Attempt <= 1:
		only = claim.TurbineIds
	}

	farm, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: req.FarmID, Day: req.Day})
	if err != nil {
		return Result{}, fmt.Errorf("farm: %w", err)
	}
	turbines, err := q.RollupTurbines(ctx, controldb.RollupTurbinesParams{FarmID: req.FarmID, ShardName: req.Shard, OnlyIds: only})
	if err != nil {
		return Result{}, fmt.Errorf("turbines: %w", err)
	}
	if len(turbines) == 0 {
		return Result{Full: only == nil}, nil
	}
	// Compute, then ask whether retention has cut the day, in one shard
	// transaction: the compute's locks on the partitions it read make a
	// concurrent DROP wait until the check has run, and a DROP that came
	// first has recorded itself by then (same transaction as the DROP).
	var rows []sharddb.TurbineDayComputeRow
	var lost sharddb.ReadingsDayLostRow
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		sq := sharddb.New(tx)
		var err error
		if rows, err = sq.TurbineDayCompute(ctx, ComputeParams(farm, turbines)); err != nil {
			return err
		}
		lost, err = sq.ReadingsDayLost(ctx, farm.DayStart)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("shard %s: %w", req.Shard, err)
	}
	if lost.Lost {
		// Overwriting the stored rows would replace good counts with
		// partial ones. Commit the claim (nothing can serve the request)
		// and say why.
		return Result{Refused: fmt.Errorf("%w: shard %s keeps readings from %s on, and the farm-local day %s starts before that; its stored rows are kept as they are",
			ErrReadingsDropped, req.Shard, lost.DroppedBefore.UTC().Format(time.RFC3339), req.Day.Format(time.DateOnly))}, nil
	}
	if c.AfterCompute != nil {
		c.AfterCompute(req)
	}
	up := controldb.TurbineDayUpsertParams{
		Day: req.Day, FarmID: req.FarmID, ShardName: req.Shard, ComputedAt: c.Now(), JobID: req.JobID,
	}
	for _, r := range rows {
		up.TurbineIds = append(up.TurbineIds, r.TurbineID)
		up.Expected = append(up.Expected, r.Expected)
		up.Received = append(up.Received, r.Received)
		up.Available = append(up.Available, r.Available)
		up.Late = append(up.Late, r.Late)
		up.Early = append(up.Early, r.Early)
		up.BeyondCadence = append(up.BeyondCadence, r.BeyondCadence)
		up.OutOfService = append(up.OutOfService, r.OutOfService)
		up.MinLagMs = append(up.MinLagMs, r.MinLagMs)
		up.MaxLagMs = append(up.MaxLagMs, r.MaxLagMs)
		up.LastReceivedAt = append(up.LastReceivedAt, r.LastReceivedAt)
	}
	n, err := q.TurbineDayUpsert(ctx, up)
	if err != nil {
		return Result{}, fmt.Errorf("upsert: %w", err)
	}
	res := Result{Turbines: int(n), Full: only == nil}
	for _, r := range rows {
		res.RowsRead += int64(r.Received) + int64(r.BeyondCadence) + int64(r.OutOfService)
	}
	return res, nil
}

// ComputeParams builds the shard statement's arguments for the turbines of
// one farm-local day: the day's bounds and the farm's rules in force (which
// classify late and early) as the control database gives them, and the
// turbines' cadences and service intervals as arrays, so expected and
// received are computed side by side.
func ComputeParams(farm controldb.FarmDayGetRow, turbines []controldb.RollupTurbinesRow) sharddb.TurbineDayComputeParams {
	rules := fleet.RulesFromRow(farm.LaneThresholdMs, farm.EarlyToleranceMs, farm.FutureLimitS, farm.MaxAgeDays, farm.WindowS, farm.MarkMarginS)
	args := sharddb.TurbineDayComputeParams{
		DayStart: farm.DayStart, DayEnd: farm.DayEnd,
		LaneThresholdSeconds: rules.LaneThreshold.Seconds(), EarlyToleranceSeconds: rules.EarlyTolerance.Seconds(),
	}
	for _, t := range turbines {
		from, to := serviceStart, serviceEnd
		if t.CommissionedAt != nil {
			from = *t.CommissionedAt
		}
		if t.DecommissionedAt != nil {
			to = *t.DecommissionedAt
		}
		args.TurbineIds = append(args.TurbineIds, t.ID)
		args.CadenceSeconds = append(args.CadenceSeconds, t.CadenceSeconds)
		args.ServiceFrom = append(args.ServiceFrom, from)
		args.ServiceTo = append(args.ServiceTo, to)
	}
	return args
}
