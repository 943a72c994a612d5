package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/drain"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/publish"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/text"
)

// River builds the River client with every worker (not started).
func (m *Main) River(ctx context.Context, cfg jobs.Config) (*river.Client[pgx.Tx], error) {
	shards, err := m.Shards(ctx) // opens the control database too
	if err != nil {
		return nil, err
	}
	control := m.control
	live, err := m.LiveSignals(ctx)
	if err != nil {
		return nil, err
	}
	computer := &rollup.Computer{Control: control, Shards: shards, Now: m.Now}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return jobs.NewClient(ctx, cfg, jobs.Deps{
		Control: control, Shards: shards, Computer: computer, Now: m.Now,
		// A shard that hangs holds back neither the next drain nor the next
		// publication of the other shards' farms: each waits at most one
		// period for it, then lets it finish in the background.
		Drainer: &drain.Drainer{Control: control, Shards: shards, Now: m.Now, Detach: cfg.DrainEvery},
		// The fast path's rounds are live work: replays and corrections
		// wait on the shards it publishes from (internal/livefirst).
		Publisher: &publish.Publisher{Control: control, Shards: shards, Now: m.Now, Detach: cfg.PublishEvery, LiveWork: live.Raise},
		Partitions: func(ctx context.Context) error {
			return m.maintainPartitions(ctx, shards)
		},
		Mover: &move.Mover{Control: control, Shards: shards, Now: m.Now, Grace: m.MoveGrace, Recompute: jobs.RecomputeAfterMove(nil)},
	})
}

// farmSchedules registers the nightly rollup of every farm on client.
func (m *Main) farmSchedules(ctx context.Context, cfg jobs.Config, client *river.Client[pgx.Tx]) (*jobs.FarmSchedules, error) {
	s := jobs.NewFarmSchedules(cfg, jobs.Deps{Control: m.control, Now: m.Now}, client)
	_, err := s.Sync(ctx)
	return s, err
}

func jobFlags(cmd *cobra.Command, cfg *jobs.Config) {
	cmd.Flags().IntVar(&cfg.WorkersPerShard, "workers-per-shard", cfg.WorkersPerShard, "concurrent rollups per shard")
	cmd.Flags().DurationVar(&cfg.DrainEvery, "drain-every", cfg.DrainEvery, "how often dirty marks are drained (the monthly report holds a day back when a shard holding its turbines has not drained for 10 s: two of the default intervals)")
	cmd.Flags().DurationVar(&cfg.PublishEvery, "publish-every", cfg.PublishEvery, "how often the fast path looks for windows past their watermark")
	cmd.Flags().IntVar(&cfg.ScheduleHour, "schedule-hour", cfg.ScheduleHour, "farm-local hour of the nightly rollup of the previous day")
}

func (m *Main) workCommand() *cobra.Command {
	cfg := jobs.DefaultConfig()
	var untilIdle bool
	cmd := &cobra.Command{
		Use:   "work",
		Short: "Run River workers (rollups, dirty-mark drain, nightly schedule) until interrupted",
		Long: "Any number of `work`/`serve` processes may run against one control database; River shares the jobs.\n" +
			"--until-idle (cron-style use) enqueues a drain and every farm's rollup of its previous local day,\n" +
			"then exits once nothing is left to do now: no job available or running, none due within a minute\n" +
			"(a move in its grace, a snoozed job, a retry), no dirty mark waiting on a shard that answers.\n" +
			"A job due later (one failing again and again) is left, and named on a line starting \"left for later:\".",
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if _, err := m.Migrate(ctx); err != nil {
				return err
			}
			client, err := m.River(ctx, cfg)
			if err != nil {
				return err
			}
			activity := jobs.Watch(client)
			stop, err := jobs.Start(ctx, m.control, client, nil)
			if err != nil {
				return err
			}
			defer stop()
			if !untilIdle {
				schedules, err := m.farmSchedules(ctx, cfg, client)
				if err != nil {
					return err
				}
				// Farms added by a fleet apply get their nightly rollup
				// within a minute.
				schedules.Run(ctx, time.Minute)
				return nil
			}
			if err := jobs.EnqueueStartup(ctx, m.control, client, m.Now()); err != nil {
				return err
			}
			left, err := jobs.WaitIdleFor(ctx, client, m.control, m.shards, nil)
			if err != nil {
				return err
			}
			stop()
			activity.Stop()
			if err := m.printActivity(ctx, activity); err != nil {
				return err
			}
			printLeft(left)
			return nil
		},
	}
	jobFlags(cmd, &cfg)
	cmd.Flags().BoolVar(&untilIdle, "until-idle", false, "exit when nothing is left to do now: no job available, running or due within a minute, no dirty mark waiting")
	return cmd
}

// printLeft names the jobs a wait for idle left because they are due
// later than jobs.IdleHorizon, and what runs them.
func printLeft(left jobs.Left) {
	if len(left.Jobs) == 0 {
		return
	}
	n := fmt.Sprint(len(left.Jobs))
	if left.More {
		n = "more than " + n
	}
	first := left.Jobs[0]
	failed := ""
	if k := len(first.Errors); k > 0 {
		failed = fmt.Sprintf(", attempt %d failed: %s", first.Errors[k-1].Attempt, oneLine(first.Errors[k-1].Error))
	}
	fmt.Printf("left for later: %s job(s) due more than %s from now, the first %s job %d at %s (%s%s); "+
		"a running serve or work runs them, or run `orchestrator work --until-idle` after that\n",
		n, jobs.IdleHorizon, first.Kind, first.ID, first.ScheduledAt.UTC().Format(time.DateTime+" MST"), first.State, failed)
}

// oneLine is a stored error as one printable line of at most 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(text.Printable(s)), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}

// printActivity says what `work --until-idle` did: the jobs it ran, and
// the farm days it wrote with their counts.
func (m *Main) printActivity(ctx context.Context, a *jobs.Activity) error {
	fmt.Printf("ran: %s\n", a)
	written := a.FarmDays()
	farms := make([]string, 0, len(written))
	for farm := range written {
		farms = append(farms, farm)
	}
	sort.Strings(farms)
	var rows []rollup.FarmDay
	for _, farm := range farms {
		days := written[farm]
		d0, err0 := time.Parse(time.DateOnly, days[0])
		d1, err1 := time.Parse(time.DateOnly, days[len(days)-1])
		if err0 != nil || err1 != nil {
			continue
		}
		got, err := rollup.FarmDays(ctx, m.control, []string{farm}, d0, d1)
		if err != nil {
			return err
		}
		for _, r := range got {
			if slices.Contains(days, r.Day.Format(time.DateOnly)) {
				rows = append(rows, r)
			}
		}
	}
	if len(rows) > 0 {
		printFarmDayRows(rows)
	}
	return nil
}

func (m *Main) rollupCommand() *cobra.Command {
	var farm, from, to string
	var all, wait bool
	cfg := jobs.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "rollup (--farm F | --all) --from DATE --to DATE [--wait]",
		Short: "Enqueue rollups of farm-days (every shard of each farm); --wait drains their marks, works them and prints the days",
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if (farm == "") == !all {
				return fmt.Errorf("give exactly one of --farm or --all")
			}
			d0, err := time.Parse(time.DateOnly, from)
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			d1 := d0
			if to != "" {
				if d1, err = time.Parse(time.DateOnly, to); err != nil {
					return fmt.Errorf("--to: %w", err)
				}
			}
			if d1.Before(d0) {
				return fmt.Errorf("--to %s is before --from %s", to, from)
			}
			if _, err := m.Migrate(ctx); err != nil {
				return err
			}
			farms := []string{farm}
			if all {
				if farms, err = rollup.Farms(ctx, m.control); err != nil {
					return err
				}
			}
			if err := m.checkRollupRange(ctx, farms, d0, d1); err != nil {
				return err
			}
			cfg.Periodic = false
			client, err := m.River(ctx, cfg)
			if err != nil {
				return err
			}
			if wait {
				return m.rollupWait(ctx, client, farms, d0, d1)
			}
			_, err = m.enqueueRollups(ctx, client, farms, d0, d1)
			return err
		},
	}
	cmd.Flags().StringVar(&farm, "farm", "", "farm id")
	cmd.Flags().BoolVar(&all, "all", false, "every farm")
	cmd.Flags().StringVar(&from, "from", "", "first farm-local day (YYYY-MM-DD)")
	cmd.Flags().StringVar(&to, "to", "", "last farm-local day (default: --from); the days must be within each farm's max_age (400 days by default) and not after today")
	cmd.Flags().BoolVar(&wait, "wait", false, "drain the marks the days wait on, work the jobs here (alongside any serve/work process) and wait until the days are as final as their data allows, then print what was written")
	cmd.Flags().IntVar(&cfg.WorkersPerShard, "workers-per-shard", cfg.WorkersPerShard, "concurrent rollups per shard")
	return cmd
}

// checkRollupRange refuses a range a farm may not recompute
// (fleet.CheckRollupRange), before anything is queued.
func (m *Main) checkRollupRange(ctx context.Context, farms []string, d0, d1 time.Time) error {
	rows, err := controldb.New(m.control).FarmRulesList(ctx)
	if err != nil {
		return fmt.Errorf("farm rules: %w", err)
	}
	asked := make(map[string]bool, len(farms))
	for _, f := range farms {
		asked[f] = true
	}
	for _, r := range rows {
		if asked[r.FarmRule.FarmID] {
			if err := fleet.CheckRollupRange(r.FarmRule.FarmID, fleet.RulesFromRow(r.FarmRule), d0, d1, m.Now()); err != nil {
				return &exitError{code: 2, err: err}
			}
		}
	}
	return nil
}

func (m *Main) enqueueRollups(ctx context.Context, client *river.Client[pgx.Tx], farms []string, d0, d1 time.Time) ([]int64, error) {
	ids, err := jobs.EnqueueFarmDays(ctx, m.control, client, farms, d0, d1, rollup.ReasonManual, jobs.PriorityManual)
	if err != nil {
		return nil, err
	}
	fmt.Printf("enqueued %d rollup_day job(s) for %d farm(s), %s to %s\n", len(ids), len(farms), d0.Format(time.DateOnly), d1.Format(time.DateOnly))
	return ids, nil
}

// rollupWait is `rollup --wait`: it works the queues here (beside any
// serve/work process, which may take some of the jobs) until the days are
// as final as their data allows, then prints them. First an immediate
// drain, so that the marks the days wait on become requests the rollups
// claim (after the rollups, each mark would cost a second recompute); then
// the rollups; then whatever the days still wait on (marks made meanwhile,
// a request's job), as `work --until-idle` does. Days still pending then
// wait on a job due later or a shard that does not answer: it names them
// and the command that finishes them.
func (m *Main) rollupWait(ctx context.Context, client *river.Client[pgx.Tx], farms []string, d0, d1 time.Time) error {
	stop, err := jobs.Start(ctx, m.control, client, nil)
	if err != nil {
		return err
	}
	defer stop()
	drain, err := client.Insert(ctx, jobs.DrainDirtyArgs{Immediate: true}, nil)
	if err != nil {
		return err
	}
	if gaveUp, err := waitJobs(ctx, client, "drain", []int64{drain.Job.ID}); err != nil {
		return err
	} else if gaveUp > 0 {
		fmt.Fprintln(os.Stderr, "orchestrator: the drain gave up; the days it did not drain stay pending (below)")
	}
	ids, err := m.enqueueRollups(ctx, client, farms, d0, d1)
	if err != nil {
		return err
	}
	gaveUp, err := waitJobs(ctx, client, "rollup", ids)
	if err != nil {
		return err
	}
	if gaveUp > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d rollup job(s) gave up", gaveUp)}
	}
	var pending []string
	settled := func(ctx context.Context) (bool, error) {
		rows, err := rollup.FarmDays(ctx, m.control, farms, d0, d1)
		if err != nil {
			return false, err
		}
		pending = pending[:0]
		for _, r := range rows {
			if r.Pending {
				pending = append(pending, r.FarmID+" "+r.Day.Format(time.DateOnly))
			}
		}
		return len(pending) == 0, nil
	}
	left, err := jobs.WaitIdleFor(ctx, client, m.control, m.shards, settled)
	if err != nil {
		return err
	}
	if err := m.printFarmDays(ctx, farms, d0, d1); err != nil {
		return err
	}
	if _, err := settled(ctx); err != nil || len(pending) == 0 {
		return err
	}
	printLeft(left)
	more := ""
	if len(pending) > 5 {
		more = fmt.Sprintf(" and %d more", len(pending)-5)
		pending = pending[:5]
	}
	fmt.Printf("still pending (their numbers may still change): %s%s; they wait on a job due later or a shard that does not answer: "+
		"`orchestrator work --until-idle` finishes them once it is due or answers (`orchestrator report monthly` says what each waits on)\n",
		strings.Join(pending, ", "), more)
	return nil
}

// waitJobs waits until every job in ids is finalized, whichever process
// works them, showing progress as what, and returns how many gave up
// (each named on standard error).
func waitJobs(ctx context.Context, client *river.Client[pgx.Tx], what string, ids []int64) (int, error) {
	bar := progressbar.NewOptions(len(ids), progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(what), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	tty := isTerminal(os.Stderr)
	lastLine := time.Time{}
	gaveUp, err := jobs.Wait(ctx, client, ids, 250*time.Millisecond, func(p jobs.WaitProgress) {
		switch {
		case p.Retrying != nil:
			fmt.Fprintf(os.Stderr, "orchestrator: job %d (%s) attempt %d failed, will retry: %s\n", p.Retrying.ID, p.Retrying.Kind, len(p.Retrying.Errors), p.Retrying.Errors[len(p.Retrying.Errors)-1].Error)
		case tty:
			_ = bar.Set(p.Done)
		case p.Done == p.Total || time.Since(lastLine) >= 5*time.Second:
			lastLine = time.Now()
			fmt.Fprintf(os.Stderr, "%s: %d/%d job(s) finished\n", what, p.Done, p.Total)
		}
	})
	if tty {
		_ = bar.Finish()
	}
	for _, g := range gaveUp {
		fmt.Fprintf(os.Stderr, "orchestrator: job %d gave up: %s\n", g.Job.ID, g.Reason)
	}
	return len(gaveUp), err
}

func (m *Main) printFarmDays(ctx context.Context, farms []string, d0, d1 time.Time) error {
	rows, err := rollup.FarmDays(ctx, m.control, farms, d0, d1)
	if err != nil {
		return err
	}
	printFarmDayRows(rows)
	return nil
}

func printFarmDayRows(rows []rollup.FarmDay) {
	fmt.Printf("%-16s %-10s %8s %12s %12s %12s %9s %9s %s\n", "farm", "day", "turbines", "expected", "received", "available", "avail%", "complete%", "computed_at")
	for _, r := range rows {
		fmt.Printf("%-16s %-10s %8d %12d %12d %12d %9s %9s %s\n", r.FarmID, r.Day.Format(time.DateOnly), r.Turbines,
			r.Expected, r.Received, r.Available, pct(r.Availability), pct(r.Completeness), r.ComputedAt.UTC().Format(time.RFC3339))
	}
}

func pct(rate float64) string { return fmt.Sprintf("%.2f", 100*rate) }
