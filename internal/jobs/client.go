// Package jobs is the River side: one file per job kind, each its args
// and worker (rollup_day, drain_dirty, publish_windows, rollup_schedule,
// partitions, move_turbine, judge_stalls), the client that runs them (one queue per shard, so a slow
// shard only delays its own farms), waiting for jobs, and worker liveness.
// The work itself is the packages' the workers call: rollup, drain,
// publish, partition.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/rollup"
)

// Config sizes and times the job system.
type Config struct {
	// WorkersPerShard caps concurrent rollups on one shard.
	WorkersPerShard int
	// DrainEvery is how often dirty marks are drained.
	DrainEvery time.Duration
	// ScheduleHour/Minute: farm-local time of the nightly rollup of the
	// previous day.
	ScheduleHour, ScheduleMinute int
	// PartitionsEvery is how often partitions ahead are created (and
	// retention applied).
	PartitionsEvery time.Duration
	// PublishEvery is how often the fast path looks for windows to publish.
	PublishEvery time.Duration
	// Periodic turns the periodic jobs on (serve, work) or off (one-shot
	// commands and tests that drive the drain themselves).
	Periodic bool
	// RetryPolicy overrides River's backoff (tests).
	RetryPolicy river.ClientRetryPolicy
	Logger      *slog.Logger
	// Observer, if set, is told how every job run ends (for /metrics).
	Observer Observer
}

// DefaultConfig: 2 rollups per shard, drain every 5 s, nightly at 02:00.
func DefaultConfig() Config {
	return Config{WorkersPerShard: 2, DrainEvery: 5 * time.Second, ScheduleHour: 2, PartitionsEvery: time.Hour, PublishEvery: 2 * time.Second, Periodic: true}
}

// Deps are what the workers need.
type Deps struct {
	Control  *pgxpool.Pool
	Shards   *fleet.Shards
	Computer *rollup.Computer
	Drainer  *drain.Drainer
	Now      func() time.Time
	// Partitions, when set, keeps partitions ahead on every shard.
	Partitions func(context.Context) error
	// Publisher, when set, is the fast path.
	Publisher *publish.Publisher
	// Mover, when set, works turbine moves between shards.
	Mover *move.Mover
}

// NewClient builds the River client with every worker, a queue per shard and
// (if cfg.Periodic) the periodic drain and partition upkeep. The nightly
// rollups per farm are added with FarmSchedules.
func NewClient(ctx context.Context, cfg Config, deps Deps) (*river.Client[pgx.Tx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &RollupDayWorker{Computer: deps.Computer})
	river.AddWorker(workers, &DrainDirtyWorker{Drainer: deps.Drainer})
	river.AddWorker(workers, &RollupScheduleWorker{Control: deps.Control})
	river.AddWorker(workers, &PartitionsWorker{Maintain: deps.Partitions})
	river.AddWorker(workers, &PublishWindowsWorker{Publisher: deps.Publisher})
	river.AddWorker(workers, &MoveTurbineWorker{Mover: deps.Mover})
	judge := deps.Publisher
	if judge == nil {
		// no fast path here: corrections are judged all the same
		judge = &publish.Publisher{Control: deps.Control, Shards: deps.Shards, Now: deps.Now}
		if judge.Now == nil {
			judge.Now = time.Now
		}
	}
	river.AddWorker(workers, &JudgeStallsWorker{Publisher: judge})

	queues := map[string]river.QueueConfig{
		river.QueueDefault: {MaxWorkers: 1},
		ControlQueue:       {MaxWorkers: 2},
		FastQueue:          {MaxWorkers: 1},
		StallQueue:         {MaxWorkers: 1},
	}
	for _, s := range deps.Shards.Names() {
		queues[RollupQueue(s)] = river.QueueConfig{MaxWorkers: max(1, cfg.WorkersPerShard)}
	}
	rc := &river.Config{
		Queues:      queues,
		Workers:     workers,
		Logger:      cfg.Logger,
		RetryPolicy: cfg.RetryPolicy,
		// A worker that died mid-rollup (process killed) is retried after
		// this; the rollup is an overwrite, so a retry is harmless.
		RescueStuckJobsAfter: 20 * time.Minute,
		// A dirty turbine's recompute takes tens of milliseconds; River's
		// default 100 ms fetch cooldown would dominate its latency.
		FetchCooldown:     10 * time.Millisecond,
		FetchPollInterval: 500 * time.Millisecond,
	}
	if rc.Logger == nil {
		rc.Logger = slog.New(slog.NewTextHandler(discard{}, nil))
	}
	if cfg.Periodic {
		rc.PeriodicJobs = periodicJobs(cfg, deps)
	}
	rc.Middleware = []rivertype.Middleware{newRedactMiddleware(deps.Control, deps.Shards)}
	if cfg.Observer != nil {
		rc.Middleware = append(rc.Middleware, &observeMiddleware{obs: cfg.Observer})
	}
	// Listening only to job inserts: every login may NOTIFY, and River
	// obeys the pause, resume, cancel and resign its other channels carry
	// (newDriver).
	return river.NewClient(newDriver(deps.Control), rc)
}

// periodicJobs are the fixed periodic jobs: the drain and partition upkeep.
// The nightly rollups are per farm (FarmSchedules).
func periodicJobs(cfg Config, deps Deps) []*river.PeriodicJob {
	jobs := []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(cfg.DrainEvery),
			func() (river.JobArgs, *river.InsertOpts) { return DrainDirtyArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true, ID: "drain_dirty"}),
	}
	if deps.Publisher != nil {
		jobs = append(jobs, river.NewPeriodicJob(Aligned{Every: cfg.PublishEvery, After: publishAfterTick},
			// No ScheduledAt of our own: River would insert the job as
			// scheduled, to wait for its scheduler (every 5 s; windows were
			// then published 5 s past their watermark). Its own is the
			// tick's time, and the job runs no earlier.
			func() (river.JobArgs, *river.InsertOpts) { return PublishWindowsArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true, ID: "publish_windows"}))
	}
	if deps.Partitions != nil {
		jobs = append(jobs, river.NewPeriodicJob(river.PeriodicInterval(cfg.PartitionsEvery),
			func() (river.JobArgs, *river.InsertOpts) { return PartitionsArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true, ID: "partitions"}))
	}
	return jobs
}

// publishAfterTick places the fast path's rounds just after each multiple
// of PublishEvery on the wall clock, so that a round's clock has passed a
// watermark that falls on the multiple.
const publishAfterTick = 50 * time.Millisecond

// Aligned fires at every multiple of Every on the wall clock (since the
// zero time; every whole second when Every divides a minute), plus After.
// The fast path runs on it: watermarks fall on whole seconds (window ends
// and lateness are), on whole minutes by default, so a round starts
// within After of a window's watermark instead of anywhere in the period
// after it (up to 2 s of the lag, half of it on average, with an interval
// counted from the process's start).
type Aligned struct {
	Every, After time.Duration
}

// Next returns the first firing strictly after current.
func (a Aligned) Next(current time.Time) time.Time {
	every := max(a.Every, time.Millisecond)
	next := current.Add(-a.After).Truncate(every).Add(every).Add(a.After)
	for !next.After(current) {
		next = next.Add(every)
	}
	return next
}

// FarmSchedules keeps one nightly rollup per farm (02:00 farm-local, the
// previous day; also run when a leader starts) registered on a client, and
// adds the farms that appear in the registry while the process runs.
type FarmSchedules struct {
	Control      *pgxpool.Pool
	Client       *river.Client[pgx.Tx]
	Hour, Minute int
	Now          func() time.Time
	// Log says which farms have no schedule and why (nil: slog's default).
	Log *slog.Logger

	mu      sync.Mutex
	added   map[string]bool
	refused map[string]bool // farms whose schedule could not be registered, said once
}

// NewFarmSchedules returns the schedules of cfg's nightly time on client.
func NewFarmSchedules(cfg Config, deps Deps, client *river.Client[pgx.Tx]) *FarmSchedules {
	return &FarmSchedules{Control: deps.Control, Client: client, Hour: cfg.ScheduleHour, Minute: cfg.ScheduleMinute, Now: deps.Now,
		Log: cfg.Logger, added: map[string]bool{}, refused: map[string]bool{}}
}

// Sync registers a nightly rollup for every farm that has none yet and
// returns how many it added. A farm whose schedule cannot be registered (a
// row from before the fleet file's limits, an id River refuses: migration
// 00022) is logged once and skipped: the other farms still get theirs, and
// serve still starts. Only failing to read the farms is an error.
func (s *FarmSchedules) Sync(ctx context.Context) (int, error) {
	farms, err := controldb.New(s.Control).FarmList(ctx)
	if err != nil {
		return 0, fmt.Errorf("farms for the nightly schedule: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range farms {
		if s.added[f.ID] || s.refused[f.ID] {
			continue
		}
		if err := s.add(f.ID, f.Timezone); err != nil {
			s.refused[f.ID] = true
			s.log().Warn("nightly rollup schedule: farm skipped, it gets no nightly rollup until its registry row is fixed", "farm", clipID(f.ID), "err", err)
			continue
		}
		s.added[f.ID] = true
		n++
	}
	return n, nil
}

// add registers farm's nightly rollup.
func (s *FarmSchedules) add(farm, zone string) error {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return err
	}
	job := river.NewPeriodicJob(DailyAt{Hour: s.Hour, Minute: s.Minute, Location: loc},
		func() (river.JobArgs, *river.InsertOpts) {
			return RollupScheduleArgs{FarmID: farm, Day: PreviousDay(s.Now(), loc)}, nil
		},
		// On start, roll up yesterday too: a process that was down at
		// 02:00 must not leave the day without a rollup.
		&river.PeriodicJobOpts{RunOnStart: true, ID: ScheduleID(farm)})
	_, err = s.Client.PeriodicJobs().AddSafely(job)
	return err
}

func (s *FarmSchedules) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// clipID is a farm id cut for a log line: a row from before the limits may
// hold megabytes.
func clipID(id string) string {
	if len(id) <= 200 {
		return id
	}
	return fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(id[:200], ""), len(id))
}

// Run syncs the schedules every interval until ctx ends, so farms added by
// a fleet apply get their nightly rollup while serve or work runs.
func (s *FarmSchedules) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Sync(ctx); err != nil {
				slog.Warn("nightly rollup schedules", "err", err)
			}
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
