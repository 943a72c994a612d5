package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// Activity is what the jobs worked by one client did, collected from its
// events: `work --until-idle` prints it.
type Activity struct {
	mu       sync.Mutex
	ran      map[string]int // completed jobs per kind
	failed   map[string]int // failed attempts per kind
	farmDays map[string]map[string]bool
	cancel   func()
	done     chan struct{}
}

// Watch starts collecting the client's job events (call before Start).
func Watch(client *river.Client[pgx.Tx]) *Activity {
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	a := &Activity{ran: map[string]int{}, failed: map[string]int{}, farmDays: map[string]map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for ev := range events {
			a.add(ev)
		}
	}()
	return a
}

func (a *Activity) add(ev *river.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ev.Kind != river.EventKindJobCompleted {
		a.failed[ev.Job.Kind]++
		return
	}
	a.ran[ev.Job.Kind]++
	if ev.Job.Kind == KindRollupDay {
		var args RollupDayArgs
		if err := unmarshalArgs(ev.Job, &args); err == nil {
			if a.farmDays[args.FarmID] == nil {
				a.farmDays[args.FarmID] = map[string]bool{}
			}
			a.farmDays[args.FarmID][args.Day] = true
		}
	}
}

// Stop ends the collection.
func (a *Activity) Stop() {
	a.cancel()
	<-a.done
}

// Ran is the number of completed jobs per kind, and failed attempts per kind.
func (a *Activity) Ran() (completed, failed map[string]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return clone(a.ran), clone(a.failed)
}

// FarmDays lists, per farm, the days whose rollup_day jobs completed.
func (a *Activity) FarmDays() map[string][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string][]string{}
	for farm, days := range a.farmDays {
		for d := range days {
			out[farm] = append(out[farm], d)
		}
		sort.Strings(out[farm])
	}
	return out
}

// String is one line: "rollup_day 12, drain_dirty 2 (1 failed attempt)".
func (a *Activity) String() string {
	completed, failed := a.Ran()
	kinds := make([]string, 0, len(completed))
	for k := range completed {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	s := ""
	for _, k := range kinds {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", k, completed[k])
		if n := failed[k]; n > 0 {
			s += fmt.Sprintf(" (%d failed attempt(s))", n)
		}
	}
	if s == "" {
		return "no jobs"
	}
	return s
}

func clone(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// IdleHorizon is how far ahead a job scheduled to run counts as work for
// now: WaitIdle waits for it. It covers a move in its grace (15 s between
// the switch and the fence), a snoozed job and the first retries of a job
// that failed (River's backoff: 1 s, then 16 s). A job due later (one that
// failed again and again: the backoff grows to hours) is left for a later
// run and reported (Left), so a failing job cannot hold `work --until-idle`.
const IdleHorizon = time.Minute

// leftListed bounds the jobs Left lists.
const leftListed = 100

// Left is what WaitIdle left when nothing else was due: the jobs snoozed or
// waiting to retry beyond IdleHorizon, soonest first (at most 100), and
// whether there are more.
type Left struct {
	Jobs []*rivertype.JobRow
	More bool
}

// WaitIdle returns once nothing is left to do now: no job available or
// running, none scheduled to run within IdleHorizon, no orphaned rollup
// request, no dirty mark on any reachable shard.
func WaitIdle(ctx context.Context, client *river.Client[pgx.Tx], control *pgxpool.Pool, shards *fleet.Shards) error {
	_, err := WaitIdleFor(ctx, client, control, shards, nil)
	return err
}

// WaitIdleFor is WaitIdle returning the jobs it left for later, and
// returning early once reached (when not nil) says what its caller waits
// for holds. When marks wait it inserts an immediate drain (the periodic
// one is the elected leader's, and lets bursts settle). It wakes on the
// client's job events, or every half second.
func WaitIdleFor(ctx context.Context, client *river.Client[pgx.Tx], control *pgxpool.Pool, shards *fleet.Shards, reached func(context.Context) (bool, error)) (Left, error) {
	events, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
	defer cancel()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if reached != nil {
			ok, err := reached(ctx)
			if err != nil || ok {
				return Left{}, err
			}
		}
		busy, err := busy(ctx, client, control, shards)
		if err != nil {
			return Left{}, err
		}
		if !busy {
			return leftForLater(ctx, client)
		}
		select {
		case <-ctx.Done():
			return Left{}, ctx.Err()
		case <-events:
		case <-tick.C:
		}
	}
}

func busy(ctx context.Context, client *river.Client[pgx.Tx], control *pgxpool.Pool, shards *fleet.Shards) (bool, error) {
	res, err := client.JobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateAvailable, rivertype.JobStateRunning).First(1))
	if err != nil {
		return false, err
	}
	if len(res.Jobs) > 0 {
		return true, nil
	}
	// River stamps scheduled_at on its own clock, the system's (not the
	// process's, which a test may set).
	next, err := client.JobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateScheduled, rivertype.JobStateRetryable).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(1))
	if err != nil {
		return false, err
	}
	if len(next.Jobs) > 0 && next.Jobs[0].ScheduledAt.Before(time.Now().Add(IdleHorizon)) {
		return true, nil
	}
	// Requests whose job was cancelled or discarded: a drain re-enqueues them.
	orphans, err := controldb.New(control).RollupPendingOrphanCount(ctx)
	if err != nil {
		return false, err
	}
	marks := int64(0)
	for _, name := range shards.Names() {
		n, err := sharddb.New(shards.Pool(name)).DirtyMarkCount(ctx)
		if err != nil {
			slog.Warn("shard unreachable, its dirty marks wait", "shard", name, "err", err)
			continue
		}
		marks += n
	}
	if marks+orphans == 0 {
		return false, nil
	}
	_, err = client.Insert(ctx, DrainDirtyArgs{Immediate: true}, nil)
	return true, err
}

// leftForLater lists the jobs snoozed or waiting to retry, soonest first.
func leftForLater(ctx context.Context, client *river.Client[pgx.Tx]) (Left, error) {
	res, err := client.JobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateScheduled, rivertype.JobStateRetryable).
		OrderBy(river.JobListOrderByScheduledAt, river.SortOrderAsc).First(leftListed+1))
	if err != nil {
		return Left{}, err
	}
	left := Left{Jobs: res.Jobs}
	if len(left.Jobs) > leftListed {
		left.Jobs, left.More = left.Jobs[:leftListed], true
	}
	return left, nil
}
