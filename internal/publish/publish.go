// Package publish publishes each farm's windows as soon as their
// watermark passes: a window [start, end) is published once end + the
// farm's allowed lateness has passed on the clock, as a farm_window row
// with path 'fast', read from that window's readings only, never
// overwritten. It uses the same computation as the final path
// (window.Compute: one rule, one query) and leaves the
// turbine_window rows that corrections then patch.
//
// Each farm progresses on its own: its watermark is the clock less its
// allowed lateness, so a farm whose turbines are silent still publishes
// (windows with received 0: silence is information), and a farm whose
// shard cannot be reached is retried next round without holding back any
// other farm.
//
// A fast path away for longer than its catch-up restarts an hour back; the
// windows of today it skipped are then filled in behind the live ones
// (fill.go), so that today's sum counts every window of today.
package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/faultpoint"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/window"
)

// Publisher publishes due windows.
type Publisher struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	Now     func() time.Time
	// CatchUp: a farm with nothing published, or whose last publication is
	// older than this, starts this far back (default 1 h); the older
	// windows of today are filled in once the farm is caught up (fill.go),
	// those of earlier days are left to the final path.
	CatchUp time.Duration
	// MaxWindows caps the windows one farm publishes per run (default 120).
	MaxWindows int
	// MaxTurbineWindows caps the turbine-windows one shard of a farm
	// computes per run (default 20,000): a farm of 1,555 turbines catching
	// up an hour publishes 12 windows a run, not 60 (93,300 turbine_window
	// rows in one statement outlasted ShardTimeout on a busy machine, were
	// rolled back and tried again whole, every round). At least one window
	// is published per run whatever the farm's size.
	MaxTurbineWindows int
	// ShardTimeout bounds one shard's computation (default
	// DefaultShardTimeout).
	ShardTimeout time.Duration
	// Parallel is how many farms publish at once (default DefaultParallel).
	Parallel int
	// FillParallel is how many farms fill in the windows of today they
	// skipped at once (default DefaultFillParallel; fill.go).
	FillParallel int
	// Detach, when > 0, bounds how long PublishDue waits for the farms: a
	// farm still publishing after it (one of its shards hangs) goes on in
	// the background within FarmTimeout and is counted in
	// Summary.InFlight, and later runs skip it until it is done, so the
	// next round of the other farms is not held back. 0 waits for every
	// farm (tests, one-shot runs).
	Detach time.Duration
	// FarmTimeout bounds one farm's publication, its shards' computations
	// and its control commit (default DefaultFarmTimeout).
	FarmTimeout time.Duration
	// AfterCompute, if set, runs after a farm's shards have computed and
	// before its windows are published (tests stop a publication there).
	AfterCompute func(farm string) error
	// OnPublish, if set, sees every window published.
	OnPublish func(Published)
	// OnStall, if set, sees every stall the watcher raised, extended or
	// cleared (stall.go).
	OnStall func(Stall)
	// LiveWork, if set, is told each shard a publication of due windows
	// computes on, as it starts: live work, which replays and corrections
	// wait for (internal/livefirst).
	LiveWork func(shard string)
	// Log reports what does not stop a publication (the watcher's
	// failures); nil: slog's default.
	Log *slog.Logger

	mu sync.Mutex
	// nextDue: per farm, when its next window can be due (the last one
	// published, + a window, + the allowed lateness); until then the farm
	// is not asked (a control query per farm every round otherwise). Never
	// trusted for more than a minute, so a rule change is seen.
	nextDue map[string]time.Time
	// inFlight: farms being published by this process (a detached farm
	// outlives its run); a run skips them.
	inFlight map[string]bool
	// fill: per farm, whether today may hold windows the fast path skipped
	// (fill.go); a farm this process has not published yet is not in it.
	fill map[string]bool
	// filling holds a slot per fill-in running (FillParallel).
	filling chan struct{}
}

// begin marks farm in flight, or says it already is.
func (p *Publisher) begin(farm string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inFlight[farm] {
		return false
	}
	if p.inFlight == nil {
		p.inFlight = map[string]bool{}
	}
	p.inFlight[farm] = true
	return true
}

func (p *Publisher) end(farm string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.inFlight, farm)
}

// skip says the farm has nothing due yet at now, nor any window of today
// to fill in.
func (p *Publisher) skip(farm string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if gap, ok := p.fill[farm]; !ok || gap {
		return false
	}
	next, ok := p.nextDue[farm]
	return ok && now.Before(next)
}

func (p *Publisher) setNextDue(farm string, lastEnd time.Time, window, lateness time.Duration, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nextDue == nil {
		p.nextDue = map[string]time.Time{}
	}
	next := lastEnd.Add(window + lateness)
	if cap := now.Add(time.Minute); next.After(cap) {
		next = cap
	}
	p.nextDue[farm] = next
}

// DefaultParallel is how many farms a publication round works on at once.
// A round is a burst of CPU right after each watermark (62,500 turbines'
// windows: about 4 s of one core), on a machine whose other work (live
// ingest, a replay's COPY, the corrections it dirties) does not stop for
// it; the kernel shares the cores among what is runnable, so the round's
// share grows with its farms in flight: at 8 the soak's round right after
// a replay publishes its last farm within its 5 s target, at 4 it did not
// (BENCHMARKS.md, "Soak"). Each farm
// holds one control connection while it publishes (the control pool is
// sized for it) and one shard connection per shard while it computes.
const DefaultParallel = 8

// DefaultShardTimeout and DefaultFarmTimeout catch a hung shard, not a
// slow one: a shard's computation takes 1-4 s for a 1,500-turbine farm
// beside a replay's drain, and up to 10 s in CI with the machine saturated
// (the soak's warm-up, where 10 s failed and re-computed whole every
// round); a farm waiting on a hung shard is published by later rounds once
// it answers, and the other farms are not held back (Detach).
const (
	DefaultShardTimeout = 30 * time.Second
	DefaultFarmTimeout  = 45 * time.Second
)

// Published is one window's fast row.
type Published struct {
	FarmID                 string
	WindowStart, WindowEnd time.Time
	Expected, Received     int64
	Available              int64
	PublishedAt            time.Time
	AllowedLateness        time.Duration
	RowsRead               int64 // readings the computation counted for this farm's windows of this run (on the first window)
}

// Summary is what one run did.
type Summary struct {
	Farms   int
	Windows int
	// Filled counts the windows of today the fast path had skipped that
	// the run filled in (fill.go); not in Windows.
	Filled   int
	RowsRead int64
	Failed   map[string]error // farm → why it published nothing more this run
	// InFlight counts the farms still publishing when the run returned
	// (Detach), or skipped because an earlier run's publication of them
	// was still going on.
	InFlight int
}

// PublishDue publishes every farm's due windows, farms in parallel. A farm
// that fails (a shard unreachable, a timeout) is reported in Summary.Failed
// and in the error; the others are not held back. With Detach, it returns
// after Detach at the latest (see Publisher.Detach).
func (p *Publisher) PublishDue(ctx context.Context) (Summary, error) {
	farms, err := controldb.New(p.Control).FarmPublicationList(ctx)
	if err != nil {
		return Summary{}, fmt.Errorf("fast path: farms: %w", err)
	}
	runCtx := ctx
	if p.Detach > 0 {
		// A detached farm outlives the run (and the job's context); its
		// own timeout bounds it.
		runCtx = context.WithoutCancel(ctx)
	}
	sum := Summary{Farms: len(farms), Failed: map[string]error{}}
	var mu sync.Mutex
	returned := false // the run has returned: late results are not its
	pending := 0      // farms started and not done
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		sem := make(chan struct{}, cmp.Or(p.Parallel, DefaultParallel))
		for _, f := range farms {
			if !p.begin(f.ID) {
				mu.Lock()
				if !returned {
					sum.InFlight++
				}
				mu.Unlock()
				continue
			}
			mu.Lock()
			pending++
			mu.Unlock()
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer p.end(f.ID)
				fctx, cancel := context.WithTimeout(runCtx, cmp.Or(p.FarmTimeout, DefaultFarmTimeout))
				defer cancel()
				run, err := p.publishFarm(fctx, f.ID)
				// The farm's slot is free once it is published; its stall
				// watch and its fill-in run after, so the round's other
				// farms do not wait for them (the farm stays in flight
				// until it is done).
				<-sem
				if len(run.watches) > 0 {
					p.watch(fctx, run.watches)
				}
				var filled int
				if err == nil && run.caughtUp {
					var rows int64
					filled, rows = p.fillFarm(runCtx, f.ID)
					run.rows += rows
				}
				mu.Lock()
				defer mu.Unlock()
				pending--
				if returned {
					if err != nil {
						slog.Warn("fast path: a farm published in the background failed", "farm", f.ID, "err", err)
					}
					return
				}
				sum.Windows += run.published
				sum.Filled += filled
				sum.RowsRead += run.rows
				if err != nil {
					sum.Failed[f.ID] = err
				}
			}()
		}
		wg.Wait()
	}()
	if p.Detach > 0 {
		select {
		case <-done:
		case <-time.After(p.Detach):
		}
	} else {
		<-done
	}
	mu.Lock()
	returned = true
	sum.InFlight += pending
	sum.Failed = maps.Clone(sum.Failed)
	mu.Unlock()
	var errs []error
	ids := make([]string, 0, len(sum.Failed))
	for id := range sum.Failed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		errs = append(errs, fmt.Errorf("farm %s: %w", id, sum.Failed[id]))
	}
	return sum, errors.Join(errs...)
}

// PublishFarm publishes one farm's due windows (and runs its stall watch,
// then its fill-in).
func (p *Publisher) PublishFarm(ctx context.Context, farm string) (int, int64, error) {
	run, err := p.publishFarm(ctx, farm)
	if len(run.watches) > 0 {
		p.watch(ctx, run.watches)
	}
	if err == nil && run.caughtUp {
		_, rows := p.fillFarm(ctx, farm)
		run.rows += rows
	}
	return run.published, run.rows, err
}

// farmRun is what one run of a farm's live windows did.
type farmRun struct {
	published int
	rows      int64
	watches   []*stallWatch // the windows published, a day each
	// caughtUp: nothing more was due at now (the fill-in's turn).
	caughtUp bool
}

func (p *Publisher) publishFarm(ctx context.Context, farm string) (run farmRun, err error) {
	now := p.Now()
	if p.skip(farm, now) {
		return run, nil
	}
	conn, unlock, locked, err := p.lockFarm(ctx, farm)
	if err != nil || !locked {
		return run, err
	}
	defer unlock()
	q := controldb.New(conn)
	maxWindows := cmp.Or(p.MaxWindows, 120)
	due, err := q.FarmWindowsDue(ctx, controldb.FarmWindowsDueParams{
		FarmID: farm, Now: now, StartFrom: now.Add(-cmp.Or(p.CatchUp, time.Hour)), MaxWindows: int32(maxWindows),
	})
	if err != nil {
		return run, err
	}
	run.caughtUp = len(due) < maxWindows
	if len(due) > 1 {
		// A catch-up: the fast path was away, maybe for longer than
		// CatchUp.
		p.setFill(farm, true)
	}
	if len(due) == 0 {
		return run, nil
	}
	shards, err := q.FarmShards(ctx, farm)
	if err != nil {
		return run, err
	}
	// Due windows are in order; publish them day by day.
	for len(due) > 0 {
		n := 1
		for n < len(due) && due[n].Day.Equal(due[0].Day) {
			n++
		}
		took, k, r, w, err := p.publishDay(ctx, conn, farm, shards, due[:n], now, false)
		run.published += k
		run.rows += r
		if w != nil {
			run.watches = append(run.watches, w)
		}
		if err != nil {
			run.caughtUp = false
			return run, err
		}
		last := due[took-1]
		p.setNextDue(farm, last.WindowEnd, time.Duration(last.WindowS)*time.Second, time.Duration(last.AllowedLatenessS)*time.Second, now)
		if took < n {
			// The run's budget: the rest is published by the next runs, in order.
			run.caughtUp = false
			break
		}
		due = due[n:]
	}
	return run, nil
}

// lockFarm takes the farm's publication lock (a session advisory lock on
// the control database), without waiting: one publisher per farm at a
// time, across processes. locked is false when another publisher holds it;
// its round publishes the farm's windows. Held from before the windows due
// are read until they are published: two publishers computing the same
// window would each absorb its marks, and the one publishing from the
// older snapshot would win (FarmWindowFastPublish keeps the first), with
// the marks of readings only the newer one saw already gone, and so no
// correction (TestTwoPublishersAtOnce). River runs one publish_windows job
// at a time; this makes the fast path safe without relying on it.
//
// The farm's publication runs every control statement on the connection
// holding the lock, and acquires no other: a publisher holding one pooled
// connection while waiting for another would deadlock a small pool (four
// farms at once on a pool of four).
func (p *Publisher) lockFarm(ctx context.Context, farm string) (conn *pgxpool.Conn, unlock func(), locked bool, err error) {
	conn, err = p.Control.Acquire(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	q := controldb.New(conn)
	key := "galewatch.publish/" + farm
	if locked, err = q.AdvisoryTryLockKey(ctx, key); err != nil || !locked {
		conn.Release()
		return nil, nil, false, err
	}
	return conn, func() {
		if err := q.AdvisoryUnlockKey(context.WithoutCancel(ctx), key); err != nil {
			// A pooled session must not keep the lock: end it.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}, true, nil
}

// publishDay computes the first of the given windows of one farm-local day
// (consecutive) that the run's budget allows (took: at least one) on every
// shard of the farm, then publishes them in order. Nothing is published
// unless every shard computed. fillIn: they are windows the fast path
// skipped (fill.go): their marks stay, and no stall is judged.
func (p *Publisher) publishDay(ctx context.Context, conn *pgxpool.Conn, farm string, shards []string, due []controldb.FarmWindowsDueRow, now time.Time, fillIn bool) (took, published int, rowsRead int64, watch *stallWatch, err error) {
	q := controldb.New(conn)
	day, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: farm, Day: due[0].Day})
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("farm day: %w", err)
	}
	rules := fleet.RulesOfDay(day)
	type part struct {
		shard string
		work  window.ShardWork
		err   error
	}
	parts := make([]part, len(shards))
	turbines, err := turbinesOn(ctx, q, farm, shards, day)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	most := 1
	for _, ts := range turbines {
		most = max(most, len(window.IDs(ts)))
	}
	if allowed := max(1, cmp.Or(p.MaxTurbineWindows, 20_000)/most); len(due) > allowed {
		due = due[:allowed]
	}
	took = len(due)
	g := window.GridOfDay(day, due[0].Day)
	first := int(due[0].WindowStart.Sub(g.Start) / g.Window)
	last := int(due[len(due)-1].WindowStart.Sub(g.Start) / g.Window)
	windows := make([]int, 0, last-first+1)
	for i := first; i <= last; i++ {
		windows = append(windows, i)
	}
	if p.LiveWork != nil && !fillIn {
		for _, shard := range shards {
			p.LiveWork(shard)
		}
	}
	var wg sync.WaitGroup
	for i, shard := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, cmp.Or(p.ShardTimeout, DefaultShardTimeout))
			defer cancel()
			work, err := p.computeShard(sctx, g, rules, shard, turbines[i], first, last, windows, !fillIn, now)
			parts[i] = part{shard: shard, work: work, err: err}
		}()
	}
	wg.Wait()
	var errs []error
	for _, pt := range parts {
		rowsRead += pt.work.RowsRead
		if pt.err != nil {
			errs = append(errs, fmt.Errorf("shard %s: %w", pt.shard, pt.err))
		}
	}
	if len(errs) > 0 {
		return took, 0, rowsRead, nil, errors.Join(errs...)
	}
	if p.AfterCompute != nil {
		if err := p.AfterCompute(farm); err != nil {
			return took, 0, rowsRead, nil, err
		}
	}
	if err := faultpoint.Reached(ctx, faultpoint.FastPathBeforePublish, farm+" "+due[0].WindowStart.UTC().Format(time.RFC3339)); err != nil {
		return took, 0, rowsRead, nil, err
	}
	var out []Published
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		tq := controldb.New(tx)
		for _, pt := range parts {
			if len(pt.work.Sums) == 0 {
				continue
			}
			if err := tq.FarmWindowPartUpsert(ctx, window.PartParams(farm, pt.shard, pt.work.Sums, now)); err != nil {
				return fmt.Errorf("window parts: %w", err)
			}
		}
		for _, w := range due {
			rows, err := tq.FarmWindowFastPublish(ctx, controldb.FarmWindowFastPublishParams{
				FarmID: farm, WindowStart: w.WindowStart, PublishedAt: now, AllowedLatenessS: w.AllowedLatenessS,
			})
			if err != nil {
				return fmt.Errorf("publish %s: %w", w.WindowStart.Format(time.RFC3339), err)
			}
			for _, r := range rows {
				out = append(out, Published{FarmID: farm, WindowStart: r.WindowStart, WindowEnd: w.WindowEnd,
					Expected: r.Expected, Received: r.Received, Available: r.Available,
					PublishedAt: now, AllowedLateness: time.Duration(w.AllowedLatenessS) * time.Second})
			}
		}
		return nil
	})
	if err != nil {
		return took, 0, rowsRead, nil, err
	}
	if len(out) > 0 {
		out[0].RowsRead = rowsRead
	}
	if p.OnPublish != nil {
		for _, o := range out {
			p.OnPublish(o)
		}
	}
	// The watcher judges every window published, a run catching up each
	// of its windows in order, after the publication (stall.go).
	if !fillIn && len(out) > 0 {
		watch = &stallWatch{farm: farm, day: day, date: due[0].Day, shards: shards, turbines: turbines, now: now}
		for _, o := range out {
			watch.windows = append(watch.windows, g.Holding(o.WindowStart))
		}
	}
	return took, len(out), rowsRead, watch, nil
}

// computeShard computes windows [first, last] of one day for every turbine
// of the farm on one shard, absorbing the dirty marks of those windows
// when claim is set (the computation's snapshot holds the readings that
// wrote them), and returns the shard's sums. The shard transaction commits
// here: its rows are exact for its snapshot whether or not the publication
// follows.
func (p *Publisher) computeShard(ctx context.Context, g window.Grid, rules fleet.Rules, shard string, turbines []window.Turbine, first, last int, windows []int, claim bool, now time.Time) (window.ShardWork, error) {
	pool := p.Shards.Pool(shard)
	if pool == nil {
		return window.ShardWork{}, fmt.Errorf("shard %q is not registered", shard)
	}
	pairs := window.Pairs{}
	pairs.AddRange(turbines, first, last+1)
	var work window.ShardWork
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		sq := sharddb.New(tx)
		if err := sq.WindowLock(ctx, sharddb.WindowLockParams{FarmID: g.FarmID, Day: g.Day}); err != nil {
			return err
		}
		if claim {
			from, _ := g.Bounds(first)
			_, to := g.Bounds(last)
			if _, err := sq.DirtyWindowClaimRange(ctx, sharddb.DirtyWindowClaimRangeParams{FarmID: g.FarmID, Day: g.Day, FromT: from, ToT: to, WindowS: int32(g.Window / time.Second)}); err != nil {
				return err
			}
		}
		var err error
		work, err = window.Compute(ctx, sq, g, turbines, rules, pairs, windows, false, now)
		return err
	})
	return work, err
}
