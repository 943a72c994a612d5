// Package drain moves dirty marks from the shards into recompute
// requests: per shard, in one control transaction, each mark's farm-day
// becomes (or widens) a rollup_pending request with a job to claim it, the
// writers' announcements the read saw finished are passed, and only after
// the commit are the marks deleted, each at the version read. Bursts are
// left to settle into one recompute. The job itself (rollup_day) is the
// caller's: the drain is given an Enqueue.
package drain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/localday"
)

// Enqueue inserts, in the drain's control transaction tx, the job that
// recomputes farm's day on shard, and returns its id
// (jobs.RollupDayEnqueue: a rollup_day job).
type Enqueue func(ctx context.Context, tx pgx.Tx, farm string, day time.Time, shard string) (int64, error)

// Drainer moves dirty marks from the shards into rollup jobs.
//
// For each shard, in one control transaction: record (or widen) every
// mark's farm-day-shard rollup_pending request and, unless a job is already
// waiting to claim it, enqueue a rollup_day job; record the marks left to
// settle (dirty_mark_settling) and how far the shard's marks were read
// (shard_drain); commit. Only then delete the marks turned into requests,
// each only at the version that was read. A crash in between leaves the
// marks, which costs a second recompute, never a lost one.
//
// Writers announce their marks on the control database before they commit
// them (dirty_mark_announced); the drain passes, in the same control
// transaction, the announcements whose shard transaction its read saw
// finished. The monthly report calls no day final while one of its
// announcements remains (farm_day_status: "shard not drained").
//
// A mark of a day still in progress is drained like any other: its job
// corrects the windows already published (readings still arriving in open
// windows do not mark, docs/dirty-marks.md); the day's turbine_day rows are
// written once the whole day is past the watermark.
type Drainer struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	Now     func() time.Time
	// ShardTimeout bounds the drain of one shard, so an unreachable shard
	// delays only its own marks (default 30 s).
	ShardTimeout time.Duration
	// Detach, when > 0, bounds how long a drain waits for its shards: a
	// shard still draining after it (its server hangs) goes on in the
	// background within ShardTimeout, holding its drain lock, so later
	// drains skip it as busy and the other shards' marks are drained on
	// time. 0 waits for every shard (tests, work --until-idle).
	Detach time.Duration
	// Settle and MaxWait make a burst of marks one recompute: a mark
	// becomes a new job once it has been quiet (not widened) for Settle
	// (default 10 s), or once it is MaxWait old (default 40 s) while writes
	// keep widening it, so a correction still lands within a minute of the
	// reading's arrival (MaxWait + the drain's period + the job). A mark whose request has a job still waiting is merged at
	// once (that costs nothing).
	Settle, MaxWait time.Duration
}

// Result counts what one drain did.
type Result struct {
	Marks    int // marks read
	Enqueued int // new rollup_day jobs
	Merged   int // marks folded into a request whose job is still waiting
	OpenDays int // marks of days not yet ended (their windows are corrected now; the day's rows come when it ends)
	Deleted  int // marks deleted (the rest were widened meanwhile and stay)
	Orphans  int // requests whose job was cancelled or lost, given a new job
	Deferred int // marks left to settle (a burst still arriving)
	Busy     int // shards skipped: another drain was on them
	Detached int // shards still draining in the background when the drain returned (Detach)
	// BusyShards and DetachedShards name the shards Busy and Detached count.
	BusyShards, DetachedShards []string
}

// Drain processes every shard's marks once, the shards in parallel, each
// within its own timeout: a slow or unreachable shard delays only its own
// marks (they wait on it) and is reported in the error. Marks still
// settling are left for a later drain.
func (d *Drainer) Drain(ctx context.Context, enqueue Enqueue) (Result, error) {
	return d.drain(ctx, enqueue, false)
}

// DrainImmediate is Drain without letting bursts settle.
func (d *Drainer) DrainImmediate(ctx context.Context, enqueue Enqueue) (Result, error) {
	return d.drain(ctx, enqueue, true)
}

func (d *Drainer) drain(ctx context.Context, enqueue Enqueue, immediate bool) (Result, error) {
	var total Result
	var errs []error
	zones, err := d.zones(ctx)
	if err != nil {
		return total, err
	}
	if total.Orphans, err = d.adoptOrphans(ctx, enqueue); err != nil {
		errs = append(errs, fmt.Errorf("orphaned requests: %w", err))
	}
	runCtx := ctx
	if d.Detach > 0 {
		// A detached shard outlives the drain (and the job's context);
		// ShardTimeout bounds it.
		runCtx = context.WithoutCancel(ctx)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	returned := false             // the drain has returned: late results are not its
	finished := map[string]bool{} // shards whose results are in total
	for _, shard := range d.Shards.Names() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(runCtx, cmp.Or(d.ShardTimeout, 30*time.Second))
			defer cancel()
			res, err := d.drainShardLocked(sctx, enqueue, shard, zones, immediate)
			mu.Lock()
			defer mu.Unlock()
			if returned {
				if err != nil {
					slog.Warn("drain: a shard drained in the background failed", "shard", shard, "err", err)
				}
				return
			}
			total.Marks += res.Marks
			total.Enqueued += res.Enqueued
			total.Merged += res.Merged
			total.OpenDays += res.OpenDays
			total.Deleted += res.Deleted
			total.Deferred += res.Deferred
			total.Busy += res.Busy
			if res.Busy > 0 {
				total.BusyShards = append(total.BusyShards, shard)
			}
			finished[shard] = true
			if err != nil {
				errs = append(errs, fmt.Errorf("drain shard %s: %w", shard, err))
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if d.Detach > 0 {
		select {
		case <-done:
		case <-time.After(d.Detach):
		}
	} else {
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	returned = true
	select {
	case <-done:
	default:
		// The shards not yet counted are still at it.
		for _, shard := range d.Shards.Names() {
			if !finished[shard] {
				total.DetachedShards = append(total.DetachedShards, shard)
			}
		}
		total.Detached = len(total.DetachedShards)
	}
	slices.Sort(total.BusyShards)
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

// drainShardLocked drains one shard unless another drain (another process,
// or a periodic and an immediate drain at once) is on it: one drain per
// shard at a time, so the same marks are never turned into jobs twice.
func (d *Drainer) drainShardLocked(ctx context.Context, enqueue Enqueue, shard string, zones map[string]*time.Location, immediate bool) (Result, error) {
	conn, err := d.Control.Acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	defer conn.Release()
	q := controldb.New(conn)
	key := "galewatch.drain/" + shard
	locked, err := q.AdvisoryTryLockKey(ctx, key)
	if err != nil || !locked {
		return Result{Busy: 1}, err
	}
	defer func() { _ = q.AdvisoryUnlockKey(context.WithoutCancel(ctx), key) }()
	// The announcements before the read of the marks opens, so that its
	// snapshot judges each of their transactions (on the lock's connection:
	// no second one to wait for).
	announced, err := q.DirtyMarkAnnouncedXacts(ctx, shard)
	if err != nil {
		return Result{}, fmt.Errorf("announced marks: %w", err)
	}
	return d.drainShard(ctx, enqueue, shard, zones, immediate, announced)
}

// maxMarks is how many marks one drain reads from a shard. A shard with
// more is drained over several drains, and its drained_through is not
// advanced until one reads them all.
const maxMarks = 1000

// drainShard drains one shard; announced are the transactions that
// announced marks on it, read before this drain's read of the marks.
func (d *Drainer) drainShard(ctx context.Context, enqueue Enqueue, shard string, zones map[string]*time.Location, immediate bool, announced []int64) (Result, error) {
	// The clock before the read opens: every mark the shard committed
	// before it is in the read.
	now := d.Now()
	marks, shardClock, passed, err := readMarks(ctx, d.Shards.Pool(shard), announced)
	if err != nil {
		return Result{}, err
	}
	var res Result
	var drained []sharddb.DirtyMark
	err = pgx.BeginFunc(ctx, d.Control, func(tx pgx.Tx) error {
		res, drained = Result{}, nil
		var settling controldb.DirtyMarkSettlingPutParams
		for _, m := range marks {
			res.Marks++
			if d.dayOpen(zones, m.FarmID, m.Day, now) {
				res.OpenDays++
			}
			// A new job only once the burst has settled.
			mayEnqueue := immediate || d.settled(m.CreatedAt, m.UpdatedAt, now)
			outcome, err := d.request(ctx, tx, enqueue, pendingKey{farm: m.FarmID, day: m.Day, shard: shard}, m.TurbineIds, now, mayEnqueue)
			if err != nil {
				return err
			}
			switch outcome {
			case enqueued:
				res.Enqueued++
			case merged:
				res.Merged++
			case deferred:
				// The mark stays on the shard; the control database knows
				// its day has readings not counted yet.
				res.Deferred++
				settling.FarmIds = append(settling.FarmIds, m.FarmID)
				settling.Days = append(settling.Days, m.Day)
				settling.MarkedAt = append(settling.MarkedAt, m.CreatedAt)
				settling.UpdatedAt = append(settling.UpdatedAt, m.UpdatedAt)
				continue
			}
			drained = append(drained, m)
		}
		q := controldb.New(tx)
		if err := q.DirtyMarkSettlingClear(ctx, shard); err != nil {
			return fmt.Errorf("settling marks: %w", err)
		}
		if len(settling.FarmIds) > 0 {
			settling.ShardName = shard
			if err := q.DirtyMarkSettlingPut(ctx, settling); err != nil {
				return fmt.Errorf("settling marks: %w", err)
			}
		}
		if len(marks) == maxMarks {
			return nil // marks beyond the list were not read: drained_through and the announcements stay
		}
		if len(passed) > 0 {
			if _, err := q.DirtyMarkAnnouncedPass(ctx, controldb.DirtyMarkAnnouncedPassParams{ShardName: shard, Xacts: passed}); err != nil {
				return fmt.Errorf("announced marks: %w", err)
			}
		}
		return q.ShardDrainRecord(ctx, controldb.ShardDrainRecordParams{
			ShardName: shard, DrainedThrough: now, ShardClockAt: shardClock, MarksRead: int32(len(marks)),
		})
	})
	if err != nil {
		return Result{}, err
	}
	sq := sharddb.New(d.Shards.Pool(shard))
	for _, m := range drained {
		// The requests and their jobs are committed; the marks not yet
		// deleted (a crash here costs a second recompute, never a lost one).
		if err := faultpoint.Reached(ctx, faultpoint.DrainBeforeMarkDelete, m.FarmID+"/"+m.Day.Format(time.DateOnly)+"/"+shard); err != nil {
			return res, err
		}
		n, err := sq.DirtyMarkDelete(ctx, sharddb.DirtyMarkDeleteParams{ID: m.ID, Version: m.Version})
		if err != nil {
			return res, err
		}
		res.Deleted += int(n)
	}
	return res, nil
}

// readMarks reads a shard's marks (the least recently widened first, at
// most maxMarks), the shard's clock, and which of the announced
// transactions had finished, all in one read-only snapshot: a finished
// transaction's marks are in the read.
func readMarks(ctx context.Context, pool *pgxpool.Pool, announced []int64) ([]sharddb.DirtyMark, time.Time, []int64, error) {
	var marks []sharddb.DirtyMark
	var clock time.Time
	var passed []int64
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q := sharddb.New(tx)
		var err error
		if clock, err = q.DirtyMarkClock(ctx); err != nil {
			return err
		}
		if marks, err = q.DirtyMarkList(ctx, maxMarks); err != nil {
			return err
		}
		if len(announced) > 0 {
			passed, err = q.DirtyMarkXactsPassed(ctx, announced)
		}
		return err
	})
	return marks, clock, passed, err
}

// dayOpen says whether the farm-local day has not ended at now.
func (d *Drainer) dayOpen(zones map[string]*time.Location, farm string, day, now time.Time) bool {
	loc := zones[farm]
	if loc == nil {
		loc = time.UTC // a farm no longer in the registry: its day in UTC is the best guess
	}
	_, dayEnd := localday.Bounds(localday.DateOf(day), loc)
	return now.Before(dayEnd)
}

type pendingKey struct {
	farm  string
	day   time.Time
	shard string
}

// settled says a mark (first written at created, last widened at updated,
// both by the writer's clock) may become a new job now. A mark stamped
// ahead of the drainer's clock (clock skew between hosts) cannot be judged
// and counts as settled: skew may cost a merge, never a delay.
func (d *Drainer) settled(created, updated, now time.Time) bool {
	if updated.After(now) || created.After(now) {
		return true
	}
	return now.Sub(updated) >= cmp.Or(d.Settle, 10*time.Second) || now.Sub(created) >= cmp.Or(d.MaxWait, 40*time.Second)
}

type requestOutcome int

const (
	enqueued requestOutcome = iota // a new job was enqueued for the request
	merged                         // folded into a request whose job is still waiting
	deferred                       // nothing done: a new job was needed and not allowed yet
)

// request records a recompute of some turbines (nil = all) of a
// farm-day-shard in the control transaction tx: merged into the request of
// a job still waiting, or with a new job (when mayEnqueue).
func (d *Drainer) request(ctx context.Context, tx pgx.Tx, enqueue Enqueue, k pendingKey, turbines []string, now time.Time, mayEnqueue bool) (requestOutcome, error) {
	q := controldb.New(tx)
	pending, err := q.RollupPendingLock(ctx, controldb.RollupPendingLockParams{FarmID: k.farm, Day: k.day, ShardName: k.shard})
	switch {
	case err == nil && pending.Waiting:
		return merged, q.RollupPendingMerge(ctx, controldb.RollupPendingMergeParams{
			TurbineIds: turbines, RequestedAt: now, FarmID: k.farm, Day: k.day, ShardName: k.shard,
		})
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return deferred, err
	}
	if !mayEnqueue {
		return deferred, nil
	}
	// No request, or one whose job has started (it may not have claimed
	// yet: the Put widens, never replaces) or will never run.
	jobID, err := enqueue(ctx, tx, k.farm, k.day, k.shard)
	if err != nil {
		return deferred, err
	}
	return enqueued, q.RollupPendingPut(ctx, controldb.RollupPendingPutParams{
		FarmID: k.farm, Day: k.day, ShardName: k.shard, TurbineIds: turbines, JobID: jobID, RequestedAt: now,
	})
}

// adoptOrphans gives a new job to every request whose job will never claim
// it (an operator cancelled it, or it was discarded after its attempts).
func (d *Drainer) adoptOrphans(ctx context.Context, enqueue Enqueue) (int, error) {
	orphans, err := controldb.New(d.Control).RollupPendingOrphans(ctx)
	if err != nil {
		return 0, err
	}
	now := d.Now()
	for _, o := range orphans {
		k := pendingKey{farm: o.FarmID, day: o.Day, shard: o.ShardName}
		if err := pgx.BeginFunc(ctx, d.Control, func(tx pgx.Tx) error {
			_, err := d.request(ctx, tx, enqueue, k, o.TurbineIds, now, true)
			return err
		}); err != nil {
			return 0, err
		}
	}
	return len(orphans), nil
}
