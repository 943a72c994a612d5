//go:build soak

// The bounded soak (make soak): the real `orchestrator
// serve` on a control server and four shard servers (one postmaster each),
// fed over HTTP at the design peak (31,250 readings/s, one body per farm
// per second, for SOAK_LIVE, 10 minutes by default) while `orchestrator
// ingest FILE` replays one 300-turbine farm's 7.5-hour backlog; then the
// same kind of backlog (another farm's) replayed alone. It reports
// publish lag, ingest latency and the live bodies refused, the replay's
// ingest and drain times beside the live feed and alone, memory and CPU,
// and checks the final counts against what was sent. SOAK_CPUS runs it
// all in a cgroup capped at that many CPUs. The fleet, sender, replay
// file, samplers, CPU cap and report are internal/soak's.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/soak"
	"github.com/galewatch/galewatch/internal/testdb"
)

// soakStuckLag is the publish lag past which the fast path is stuck, not
// slow: the check. The soakTarget* are machine-dependent targets, recorded
// in the report and BENCHMARKS.md, never a failure: publish lag p99, a
// live body's acknowledgement p99, and no live body answered 503. Memory
// growth over the live feed is a check: the floor of its last minute
// against the ceiling of its first (soak.ServePSSRange).
// soakCleanupTime is what the soak leaves of the test binary's -timeout
// to its cleanups (its databases dropped, its servers stopped): it stops
// itself, failing, that long before the deadline.
const (
	soakStuckLag     = 60 * time.Second
	soakTargetP99Lag = 5 * time.Second
	soakTargetP99Ack = time.Second
	soakMemoryGrowth = 1.2
	soakCleanupTime  = 3 * time.Minute
)

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive duration such as 2m", name, v)
	}
	return d
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// TestSoak: see the file comment. SOAK_LIVE sets the live feed's length
// (a whole number of minutes, at least 4), SOAK_REPLAY_AFTER when the
// replay starts into it (90 s: after every window of the backlog has
// passed its watermark), SOAK_TURBINES_PER_FARM and SOAK_FARMS shrink the
// fleet for a quick look, SOAK_MAX_BODIES is serve's --max-bodies,
// SOAK_LOG_MIN_DURATION_MS sets log_min_duration_statement on the soak's
// databases (the servers' logs are in .galewatch/servers/*/pg/log),
// SOAK_CPUS caps the soak (this process and every process it starts) at
// that many CPUs.
//
// The soak owns its processes: serve, the sender, the replays and its
// five servers are stopped when it ends, passed or failed (t.Fatal, a
// panic in this goroutine, SIGINT or SIGTERM, the test binary's deadline
// near), and the CPU cap's cgroup is removed.
func TestSoak(t *testing.T) {
	started := time.Now()
	if os.Getenv("DATABASE_URL") != "" {
		t.Skip("DATABASE_URL is set: the soak runs on the embedded default's separate servers")
	}
	live := envDuration(t, "SOAK_LIVE", 10*time.Minute).Truncate(time.Minute)
	if live < 4*time.Minute {
		// the memory check compares the first minute with the last, which
		// must come after the replay (from 90 s) and its drain: with 3m the
		// last minute held the drain's peak and the scavenger's slow return
		// of it (a 1.20 that was load, not growth)
		t.Fatalf("SOAK_LIVE: %v, want at least 4m (a first minute, the replay and its drain, a last minute)", live)
	}
	replayAfter := envDuration(t, "SOAK_REPLAY_AFTER", 90*time.Second)
	cfg := soak.DefaultFleetConfig()
	cfg.TurbinesPerFarm = envInt(t, "SOAK_TURBINES_PER_FARM", cfg.TurbinesPerFarm)
	cfg.LiveFarms = envInt(t, "SOAK_FARMS", cfg.LiveFarms)
	maxBodies := envInt(t, "SOAK_MAX_BODIES", ingest.DefaultMaxBodies)
	moveTurbines := 0 // SOAK_MOVE_TURBINES=0: no move
	if os.Getenv("SOAK_MOVE_TURBINES") != "0" {
		moveTurbines = envInt(t, "SOAK_MOVE_TURBINES", 10)
	}
	moveAfter := envDuration(t, "SOAK_MOVE_AFTER", 75*time.Second)
	var cpus float64
	if v := os.Getenv("SOAK_CPUS"); v != "" {
		var err error
		if cpus, err = soak.ParseCPUs(v); err != nil {
			t.Fatal(err)
		}
	}
	// ctx ends at SIGINT or SIGTERM, or soakCleanupTime before the test
	// binary's deadline (which would end the process with no cleanup):
	// every wait below then fails the soak, and its cleanups stop what
	// it started.
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	if deadline, ok := t.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		ctx, cancelDeadline = context.WithDeadlineCause(ctx, deadline.Add(-soakCleanupTime),
			fmt.Errorf("the test binary's -timeout ends at %s: the soak stops %s before it, for its cleanups", deadline.Format("15:04:05"), soakCleanupTime))
		defer cancelDeadline()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	step := func(format string, args ...any) {
		t.Logf("%s  %s", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	bin := faultBinary(t)
	// Built outside the cap; from here on, every process is in it.
	cpuCap := "no CPU cap (SOAK_CPUS unset)"
	if cpus > 0 {
		cpuCap = soakCPUGroup(t, cpus).String() + ", holding the test process and every process it starts (serve, the replays, the five servers; not the go command or its build)"
		step("%s", cpuCap)
	}
	servers := soakServers(t, cfg.Shards)
	dropSoakLeftovers(t, servers)
	// T0, the end of the backlog and the live farms' commissioning, leaves
	// time for the setup; the live feed starts at the first whole minute
	// after the warm-up, never before T0.
	t0 := time.Now().Add(30 * time.Second).Truncate(time.Minute).Add(time.Minute).UTC()
	fl, err := soak.NewFleet(cfg, t0)
	testdb.Must(t, err, "fleet")
	fleetFile := filepath.Join(t.TempDir(), "soak-fleet.yaml")
	testdb.Must(t, os.WriteFile(fleetFile, []byte(fl.YAML()), 0o644), "fleet file")
	step("fleet: %d farms, %d turbines on %d shards (and %s, %d turbines, replayed alone at the end); T0 %s",
		len(fl.Farms), fl.Turbines(), len(fl.Shards), fl.Alone.ID, fl.Alone.Turbines(), t0.Format(time.RFC3339))
	sep := testdb.NewSeparate(t, fl.YAML())
	step("servers up, fleet applied")
	if ms := os.Getenv("SOAK_LOG_MIN_DURATION_MS"); ms != "" {
		setLogMinDuration(t, sep, ms)
	}

	rep := &soak.Report{Started: started, Farms: len(fl.Farms), Turbines: fl.Turbines(), Shards: len(fl.Shards), T0: t0,
		ReadingsPerSecond: float64(fl.Turbines()) / soak.Cadence.Seconds(), PollEvery: 500 * time.Millisecond}
	rep.Machine = machine(ctx, sep.Control)
	rep.Settings = fmt.Sprintf("serve --max-bodies %d (other flags default: publish every 2 s, drain every 5 s, 2 rollup workers per shard); "+
		"named clusters (shared_buffers 256MB each); SOAK_LIVE %s, replay %s into it, SOAK_MOVE_TURBINES %d moved %s into it; fleet file %s; %s",
		maxBodies, live, replayAfter, moveTurbines, moveAfter, filepath.Base(fleetFile), cpuCap)

	srv := serveProc(t, bin, orchEnv(sep.ControlDSN), "--max-bodies", strconv.Itoa(maxBodies))
	step("serve listening on %s (pid %d)", srv.base, srv.cmd.Process.Pid)

	// The replay files, written while serve warms up.
	replayFile, rf := writeReplay(t, fl, fl.Replay())
	aloneFile, rfAlone := writeReplay(t, fl, fl.Alone)
	step("replay files: %d lines, %d windows each", rf.Lines, len(rf.Windows))

	// Every farm of the file publishes, the one replayed alone too.
	waitWarm(t, ctx, sep, len(fl.Farms)+1)
	liveFrom := time.Now().Truncate(time.Minute).Add(time.Minute)
	if liveFrom.Before(t0) {
		liveFrom = t0
	}
	liveTo := liveFrom.Add(live)
	rep.LiveFrom, rep.LiveTo = liveFrom, liveTo
	step("warm: the live feed runs %s → %s", liveFrom.Format("15:04:05"), liveTo.Format("15:04:05"))

	postmasters := map[string]int{}
	for name, s := range map[string]*pgserver.Server{"control": sep.ControlServer} {
		postmasters[name] = mustPID(t, s)
	}
	for name, s := range sep.Servers {
		postmasters[name] = mustPID(t, s)
	}
	sampler := &soak.Sampler{Serve: srv.cmd.Process.Pid, Postmasters: postmasters, Every: 10 * time.Second}
	sleepUntil(t, ctx, liveFrom, "waiting for the live feed's start")
	sampler.Start()
	poll := &fastPoller{control: sep.Control, farms: fl.FarmIDs(), from: liveFrom, to: liveTo, every: rep.PollEvery}
	go poll.run(ctx)

	// Each farm posts from its own loopback address (127.0.1.k), as each
	// farm's gateway does in the field: serve shares its body readers out
	// per remote address.
	sender := &soak.Sender{URL: srv.base, Fleet: fl, From: liveFrom, To: liveTo, ClientFor: func(k int) *http.Client {
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+k/250), byte(1+k%250))}}
		return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext,
			MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute, DisableCompression: true}}
	}}
	senderDone := make(chan error, 1)
	senderStopped := make(chan struct{})
	go func() {
		defer close(senderStopped)
		senderDone <- sender.Run(ctx)
	}()
	// A soak that fails stops the sender before serve (cleanups run last
	// registered first).
	t.Cleanup(func() {
		cancel()
		select {
		case <-senderStopped:
		case <-time.After(time.Minute):
			t.Errorf("the sender did not stop within a minute of the soak's end")
		}
	})

	// The move: an operator's fleet apply giving some of a live farm's
	// turbines another shard, while their readings arrive.
	var move *soakMove
	if moveTurbines > 0 {
		move = startSoakMove(t, ctx, bin, sep, fl, moveTurbines, liveFrom.Add(moveAfter))
		step("move: %d turbines of %s %s → %s at %s", moveTurbines, move.rep.Farm, move.rep.From, move.rep.To, liveFrom.Add(moveAfter).Format("15:04:05"))
	}

	// The replay, through the operator's path, as a process of its own.
	sleepUntil(t, ctx, liveFrom.Add(replayAfter), "waiting for the replay's start")
	step("replay: orchestrator ingest %s", filepath.Base(replayFile))
	run, replaySum := replay(t, ctx, bin, sep, rf, replayFile, func(pid int) { sampler.Watch("replay", pid) })
	rep.ReplayLines, rep.ReplayStart, rep.ReplayIngest, rep.ReplayCPU, rep.ReplayMaxRSS, rep.ReplaySummary = run.Lines, run.Start, run.Ingest, run.CPU, run.MaxRSS, run.Summary
	step("replay ingested in %s: accepted %d, duplicate %d, failed %d, rejected %d", rep.ReplayIngest.Round(time.Millisecond),
		replaySum.Accepted, replaySum.Duplicate, replaySum.Failed, replaySum.Rejected)

	// The backlog's drain: until nothing is left to correct and every
	// replayed window has its final row.
	rep.DrainEnd = waitDrained(t, ctx, sep, rf, liveTo.Add(2*time.Minute))
	if !rep.DrainEnd.IsZero() {
		rep.Drain = rep.DrainEnd.Sub(run.Start.Add(run.Ingest))
		step("backlog drained %s after the replay's ingest ended", rep.Drain.Round(time.Second))
	}

	// The live feed ends; every body must be acknowledged.
	select {
	case err := <-senderDone:
		testdb.Must(t, err, "sender")
	case <-time.After(time.Until(liveTo) + 3*time.Minute):
		cancel()
		t.Fatalf("the sender still had bodies unacknowledged 3 minutes after the live feed ended: %+v", sender.Stats())
	case <-ctx.Done():
		stillOn(t, ctx, "the live feed ran")
	}
	step("live feed done: %+v", sender.Stats())
	if move != nil {
		move.wait(t, ctx, sep, time.Now().Add(3*time.Minute))
		rep.Move = move.rep
		step("moves: %s", lastLines(move.out.String(), 1))
	}
	// The last live window is published a minute (its allowed lateness)
	// after it ends.
	lastDue := liveTo.Add(time.Minute)
	for n := int64(0); ; time.Sleep(time.Second) {
		stillOn(t, ctx, "waiting for the last live windows")
		n = testdb.Int(t, sep.Control, `SELECT count(*) FROM farm_window WHERE path = 'fast' AND window_start >= $1 AND window_end <= $2 AND farm_id = ANY($3)`,
			liveFrom, liveTo, fl.FarmIDs())
		if n >= int64(len(fl.Farms))*int64(live/time.Minute) || time.Since(lastDue) > time.Minute {
			break
		}
	}
	rep.Samples = sampler.Stop()
	poll.stop()

	// The same kind of replay alone: another farm's backlog, the live feed
	// over and every correction drained.
	step("replay alone: orchestrator ingest %s", filepath.Base(aloneFile))
	alone, aloneSum := replay(t, ctx, bin, sep, rfAlone, aloneFile, nil)
	step("replayed alone in %s: accepted %d, duplicate %d, failed %d, rejected %d", alone.Ingest.Round(time.Millisecond),
		aloneSum.Accepted, aloneSum.Duplicate, aloneSum.Failed, aloneSum.Rejected)
	alone.DrainEnd = waitDrained(t, ctx, sep, rfAlone, time.Now().Add(5*time.Minute))
	if !alone.DrainEnd.IsZero() {
		alone.Drain = alone.DrainEnd.Sub(alone.Start.Add(alone.Ingest))
		step("the backlog replayed alone drained %s after its ingest ended", alone.Drain.Round(time.Second))
	}
	rep.ReplayAlone = alone
	step("measured; checking")

	checkSoak(t, rep, sep, fl, sender, rf, replaySum, poll, srv)
	checkReplayAlone(t, rep, sep, fl, rfAlone, aloneSum)
	if move != nil {
		checkMove(t, rep, sep, move)
	}
	rep.WallTime = time.Since(started)
	md, js, err := rep.Write(filepath.Join(artifactsDir(t), "soak"))
	testdb.Must(t, err, "write the report")
	t.Logf("report: %s, %s\n%s", md, js, rep.Markdown())
	for _, c := range rep.Failed() {
		t.Errorf("%s: want %s, got %s", c.Name, c.Want, c.Got)
	}
}

// soakCPUGroup puts this process, and so every process it starts from now
// on, in a cgroup v1 cpu group capped at cpus CPUs; the group is removed
// when the soak ends, which fails it if a process of the soak is left in it.
func soakCPUGroup(t *testing.T, cpus float64) *soak.CPUGroup {
	t.Helper()
	g, err := soak.NewCPUGroup(soak.CPUMount, fmt.Sprintf("galewatch-soak-%d", os.Getpid()), cpus)
	if err != nil {
		t.Fatalf("SOAK_CPUS=%s: %v", os.Getenv("SOAK_CPUS"), err)
	}
	// Registered before the servers' and serve's cleanups: it runs after
	// them, when nothing of the soak should be left in the group.
	t.Cleanup(func() {
		if err := g.Leave(os.Getpid()); err != nil {
			t.Errorf("leave the CPU cap: %v", err)
		}
		if err := g.Remove(); err != nil {
			t.Errorf("the soak's CPU cap: %v", err)
		}
	})
	testdb.Must(t, g.Join(os.Getpid()), "join %s", g)
	return g
}

// soakServers are the soak's five servers (the control database's and
// one a shard), which it owns: stopped now if running, so they start in
// its CPU cap, and stopped when it ends, after its databases are dropped.
func soakServers(t *testing.T, shards int) []*pgserver.Server {
	t.Helper()
	servers := []*pgserver.Server{pgserver.Named(testdb.Home(t), testdb.ControlServerName)}
	for s := 1; s <= shards; s++ {
		servers = append(servers, pgserver.Named(testdb.Home(t), fmt.Sprintf("s%d", s)))
	}
	testdb.OwnServers(t, servers...)
	return servers
}

// stillOn fails the soak, saying what it was doing, once ctx has ended
// (SIGINT or SIGTERM, or the test binary's deadline near): its cleanups
// then stop what it started.
func stillOn(t *testing.T, ctx context.Context, doing string) {
	t.Helper()
	if ctx.Err() != nil {
		t.Fatalf("the soak stopped while %s: %v", doing, context.Cause(ctx))
	}
}

// sleepUntil waits until at, failing the soak if ctx ends first.
func sleepUntil(t *testing.T, ctx context.Context, at time.Time, doing string) {
	t.Helper()
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		stillOn(t, ctx, doing)
	}
}

// writeReplay writes farm f's backlog to a CSV file of the test's.
func writeReplay(t *testing.T, fl *soak.Fleet, f *soak.Farm) (string, *soak.ReplayFile) {
	t.Helper()
	path := filepath.Join(t.TempDir(), f.ID+".csv")
	file, err := os.Create(path)
	testdb.Must(t, err, "replay file")
	rf, err := fl.WriteReplayOf(f, file)
	testdb.Must(t, err, "write the replay of %s", f.ID)
	testdb.Must(t, file.Close(), "replay file")
	return path, rf
}

// replay runs `orchestrator ingest --json file` (the operator's path, a
// process of its own) to its end; watch, if set, is given its pid.
func replay(t *testing.T, ctx context.Context, bin string, sep *testdb.Separate, rf *soak.ReplayFile, file string, watch func(pid int)) (*soak.ReplayRun, ingest.Summary) {
	t.Helper()
	run := &soak.ReplayRun{Farm: rf.FarmID, Lines: rf.Lines, Start: time.Now()}
	cmd := exec.CommandContext(ctx, bin, "ingest", "--json", file)
	cmd.Env = orchEnv(sep.ControlDSN)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	testdb.Must(t, cmd.Start(), "start the replay of %s", rf.FarmID)
	if watch != nil {
		watch(cmd.Process.Pid)
	}
	exit := cmd.Wait()
	run.Ingest = time.Since(run.Start)
	stillOn(t, ctx, "replaying "+rf.FarmID)
	if ps := cmd.ProcessState; ps != nil {
		run.CPU = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			run.MaxRSS = ru.Maxrss << 10 // kB on Linux
		}
	}
	var sum ingest.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("the replay of %s: ingest --json printed %q (stderr %q, exit %v): %v", rf.FarmID, stdout.String(), stderr.String(), exit, err)
	}
	_ = json.Unmarshal(stdout.Bytes(), &run.Summary)
	return run, sum
}

// waitDrained waits until rf's backlog is drained (soakSettled) and returns
// when, or zero when it is not by deadline.
func waitDrained(t *testing.T, ctx context.Context, sep *testdb.Separate, rf *soak.ReplayFile, deadline time.Time) time.Time {
	t.Helper()
	for {
		stillOn(t, ctx, "waiting for the drain of "+rf.FarmID+"'s backlog")
		ok, why := soakSettled(ctx, sep, rf)
		if ok {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Logf("%s's backlog not drained by %s: %s", rf.FarmID, deadline.Format("15:04:05"), why)
			return time.Time{}
		}
		time.Sleep(time.Second)
	}
}

// checkSoak computes the report's figures and checks the numbers.
func checkSoak(t *testing.T, rep *soak.Report, sep *testdb.Separate, fl *soak.Fleet, sender *soak.Sender, rf *soak.ReplayFile, replaySum ingest.Summary, poll *fastPoller, srv *orchestrator) {
	t.Helper()
	ctx := context.Background()
	rep.Sender, rep.Refusals = sender.Stats(), sender.Refusals()
	reqLat, ackLat, delays := sender.Latencies()
	rep.RequestLatency, rep.AckLatency, rep.SendDelay = soak.Summarize(reqLat), soak.Summarize(ackLat), soak.Summarize(delays)
	minutes := int64(rep.LiveTo.Sub(rep.LiveFrom) / time.Minute)
	rep.LiveWindows = int64(len(fl.Farms)) * minutes

	// The sender: nothing it could not fix, every second of every farm
	// acknowledged.
	errs := sender.Errors()
	rep.Check("sender: answers no re-send fixes", len(errs) == 0, "0", "%d %v", len(errs), errs)
	var sent int64
	for i := range fl.Farms {
		sent += int64(fl.Farms[i].Turbines()) * int64(rep.LiveTo.Sub(rep.LiveFrom)/soak.Cadence)
	}
	rep.Check("live readings acknowledged (distinct)", rep.Sender.Readings == sent, fmt.Sprint(sent), "%d", rep.Sender.Readings)
	rep.Check("live readings stored: accepted over all answers", rep.Sender.Accepted == sent, fmt.Sprint(sent), "%d (and %d duplicates of re-sent lines)", rep.Sender.Accepted, rep.Sender.Duplicate)
	rep.Target("live bodies answered 503 (at least once)", rep.Sender.BodiesRefused == 0, "0", "%d of %d bodies (%d answers 503)",
		rep.Sender.BodiesRefused, rep.Sender.Bodies, rep.Sender.Status[http.StatusServiceUnavailable])
	rep.Target("acknowledgement p99 of the live bodies (a body's first send to its last line acknowledged)",
		rep.AckLatency.N > 0 && rep.AckLatency.P99 <= soakTargetP99Ack.Seconds(), "≤ "+soakTargetP99Ack.String(),
		"%.2f s over %d bodies (max %.2f s)", rep.AckLatency.P99, rep.AckLatency.N, rep.AckLatency.Max)

	// The live windows: one fast row each, never rewritten, and the
	// window's counts exactly what was acknowledged.
	rows, err := sep.Control.Query(ctx, `SELECT fw.farm_id, fw.window_start, fw.path = 'final', fw.expected, fw.received, fw.available, fw.computed_at, fw.window_end, r.allowed_lateness_s
		FROM farm_window fw JOIN farm_rules r ON r.farm_id = fw.farm_id
		WHERE fw.window_start >= $1 AND fw.window_start < $2 AND fw.farm_id = ANY($3)`, rep.LiveFrom, rep.LiveTo, fl.FarmIDs())
	testdb.Must(t, err, "live windows")
	fast, final := map[soak.FarmWindow]windowRow{}, map[soak.FarmWindow]windowRow{}
	for rows.Next() {
		var k soak.FarmWindow
		var r windowRow
		testdb.Must(t, rows.Scan(&k.FarmID, &k.Start, &r.final, &r.expected, &r.received, &r.available, &r.computedAt, &r.windowEnd, &r.lateness), "scan")
		k.Start = k.Start.UTC()
		if r.final {
			final[k] = r
		} else {
			fast[k] = r
		}
	}
	testdb.Must(t, rows.Err(), "live windows")
	rep.FastRows, rep.CorrectedLiveWindows = int64(len(fast)), int64(len(final))
	rep.Check("live windows with their fast row", int64(len(fast)) == rep.LiveWindows, fmt.Sprint(rep.LiveWindows), "%d", len(fast))
	twice := testdb.Int(t, sep.Control, `SELECT count(*) FROM (SELECT 1 FROM farm_window WHERE path = 'fast' GROUP BY farm_id, window_start HAVING count(*) > 1) d`)
	rewritten := poll.rewritten(fast)
	rep.Check("windows published twice (fast rows per window > 1, or a fast row changed after it was seen)", twice == 0 && rewritten == 0, "0", "%d twice, %d changed", twice, rewritten)
	acked := sender.Acked()
	var wrong []string
	for i := range fl.Farms {
		f := &fl.Farms[i]
		for m := int64(0); m < minutes; m++ {
			k := soak.FarmWindow{FarmID: f.ID, Start: rep.LiveFrom.Add(time.Duration(m) * time.Minute).UTC()}
			r, ok := final[k]
			if !ok {
				r = fast[k]
			}
			want := acked[k]
			wantExpected := int64(f.Turbines()) * int64(soak.Window/soak.Cadence)
			if r.received != want.Received || r.available != want.Available || r.expected != wantExpected {
				wrong = append(wrong, fmt.Sprintf("%s %s: %d/%d/%d, sent %d/%d/%d", k.FarmID, k.Start.Format("15:04"), r.expected, r.received, r.available, wantExpected, want.Received, want.Available))
			}
		}
	}
	rep.Check("live windows whose expected/received/available differ from what was acknowledged", len(wrong) == 0, "0", "%d of %d %v", len(wrong), rep.LiveWindows, first(wrong, 5))

	// Publish lag: the fast row's published time after the window's
	// watermark (its end + the allowed lateness), and when it was seen.
	var lag, lagReplay, seen, seenReplay []time.Duration
	// "While the replay is ingested and drains": the publication rounds
	// from the minute the replay starts in to the first after the drain
	// ends (watermarks fall on whole minutes), so a drain shorter than a
	// minute still has rounds to judge.
	replayFrom, replayTo := rep.ReplayStart.Truncate(time.Minute), rep.DrainEnd
	if replayTo.IsZero() {
		replayTo = rep.LiveTo
	}
	replayTo = replayTo.Truncate(time.Minute).Add(time.Minute)
	for k, r := range fast {
		wm := r.windowEnd.Add(time.Duration(r.lateness) * time.Second)
		d := r.computedAt.Sub(wm)
		lag = append(lag, d)
		during := !wm.Before(replayFrom) && !wm.After(replayTo)
		if during {
			lagReplay = append(lagReplay, d)
		}
		if at, ok := poll.seenAt(k); ok {
			seen = append(seen, at.Sub(wm))
			if during {
				seenReplay = append(seenReplay, at.Sub(wm))
			}
		}
	}
	for k, r := range fast {
		wm := r.windowEnd.Add(time.Duration(r.lateness) * time.Second)
		l := soak.WindowLag{FarmID: k.FarmID, Start: k.Start, Published: r.computedAt.Sub(wm).Seconds(), Seen: -1}
		if at, ok := poll.seenAt(k); ok {
			l.Seen = at.Sub(wm).Seconds()
		}
		rep.Slowest = append(rep.Slowest, l)
	}
	slices.SortFunc(rep.Slowest, func(a, b soak.WindowLag) int { return cmp.Compare(b.Published, a.Published) })
	rep.Slowest = rep.Slowest[:min(8, len(rep.Slowest))]
	rep.Lag, rep.LagDuringReplay = soak.Summarize(lag), soak.Summarize(lagReplay)
	rep.Visible, rep.VisibleDuringReplay = soak.Summarize(seen), soak.Summarize(seenReplay)
	p99 := time.Duration(rep.LagDuringReplay.P99 * float64(time.Second))
	maxLag := time.Duration(rep.LagDuringReplay.Max * float64(time.Second))
	rep.Check("every live window published while the replay is ingested and drains, none stuck", rep.LagDuringReplay.N > 0 && maxLag <= soakStuckLag,
		"max ≤ "+soakStuckLag.String(), "max %.2f s over %d windows", rep.LagDuringReplay.Max, rep.LagDuringReplay.N)
	rep.Target("p99 publish lag of the live windows while the replay is ingested and drains", rep.LagDuringReplay.N > 0 && p99 <= soakTargetP99Lag,
		"≤ "+soakTargetP99Lag.String(), "%.2f s over %d windows (max %.2f s)", rep.LagDuringReplay.P99, rep.LagDuringReplay.N, rep.LagDuringReplay.Max)

	// The replay: every line stored, its windows' final rows, its
	// turbine-windows and its closed day exactly what the file holds.
	rep.Check("replay ingest: lines stored, none failed or rejected", replaySum.Accepted == rf.Lines && replaySum.Failed == 0 && replaySum.Rejected == 0,
		fmt.Sprintf("%d accepted, 0 failed, 0 rejected", rf.Lines), "%d accepted, %d duplicate, %d failed, %d rejected", replaySum.Accepted, replaySum.Duplicate, replaySum.Failed, replaySum.Rejected)
	rep.Check("backlog drained before the end", !rep.DrainEnd.IsZero(), "drained", "%s", map[bool]string{true: "drained in " + rep.Drain.Round(time.Second).String(), false: "not drained"}[!rep.DrainEnd.IsZero()])
	rep.ReplayWindows, rep.ReplayTurbineWindows, rep.ReplayClosedDays = checkReplay(t, rep, sep, fl.Replay(), rf, "")

	// No job failed.
	var jobErrs []string
	jrows, err := sep.Control.Query(ctx, `SELECT format('%s %s %s: %s', id, kind, state, errors[array_upper(errors, 1)]->>'error') FROM river_job
		WHERE cardinality(errors) > 0 OR state IN ('discarded', 'cancelled', 'retryable') ORDER BY id`)
	testdb.Must(t, err, "job errors")
	jobErrs, err = pgx.CollectRows(jrows, pgx.RowTo[string])
	testdb.Must(t, err, "job errors")
	rep.Check("jobs with an error (any attempt), discarded, cancelled or retrying", len(jobErrs) == 0, "0", "%d %v", len(jobErrs), first(jobErrs, 5))
	warns := srv.count("level=WARN") + srv.count("level=ERROR") + srv.count(" WARN ") + srv.count(" ERROR ")
	rep.Check("serve's warnings and errors logged", warns == 0, "0", "%d", warns)

	// Memory: serve's over the live feed, first minute against last.
	rep.ServeFirst, rep.PostgresFirst, _ = soak.MemWindow(rep.Samples, rep.LiveFrom, rep.LiveFrom.Add(time.Minute))
	rep.ServeLast, rep.PostgresLast, _ = soak.MemWindow(rep.Samples, rep.LiveTo.Add(-time.Minute), rep.LiveTo)
	var n float64
	for _, s := range rep.Samples {
		rep.ServePeak.RSS, rep.ServePeak.PSS = max(rep.ServePeak.RSS, s.Serve.RSS), max(rep.ServePeak.PSS, s.Serve.PSS)
		rep.PostgresPeak.RSS, rep.PostgresPeak.PSS = max(rep.PostgresPeak.RSS, s.Postgres.RSS), max(rep.PostgresPeak.PSS, s.Postgres.PSS)
		if s.At.After(rep.LiveFrom) && !s.At.After(rep.LiveTo.Add(10*time.Second)) {
			rep.MeanServeCPU += s.ServeCPU
			rep.MeanPostgresCPU += s.PostgresCPU
			rep.MeanSenderCPU += s.SelfCPU
			rep.MeanLoad1 += s.Load1
			rep.MeanMachineBusy += s.MachineBusy
			rep.MeanSteal += s.Steal
			rep.MeanIOWait += s.IOWait
			rep.MeanIOPressure += s.IOPressure
			n++
		}
	}
	if n > 0 {
		rep.MeanServeCPU, rep.MeanPostgresCPU, rep.MeanSenderCPU, rep.MeanLoad1 = rep.MeanServeCPU/n, rep.MeanPostgresCPU/n, rep.MeanSenderCPU/n, rep.MeanLoad1/n
		rep.MeanMachineBusy, rep.MeanSteal, rep.MeanIOWait, rep.MeanIOPressure = rep.MeanMachineBusy/n, rep.MeanSteal/n, rep.MeanIOWait/n, rep.MeanIOPressure/n
	}
	_, firstHi := soak.ServePSSRange(rep.Samples, rep.LiveFrom, rep.LiveFrom.Add(time.Minute))
	lastLo, _ := soak.ServePSSRange(rep.Samples, rep.LiveTo.Add(-time.Minute), rep.LiveTo)
	ratio := float64(lastLo) / float64(max(firstHi, 1))
	// like with like: a drain that ran into the last minute is said
	overlap := ""
	if rep.DrainEnd.After(rep.LiveTo.Add(-time.Minute)) {
		overlap = "; the replay's drain ran into the last minute"
	}
	rep.Check("serve's memory flat: lowest PSS of the last minute / highest of the first", firstHi > 0 && lastLo > 0 && ratio <= soakMemoryGrowth,
		fmt.Sprintf("≤ %.1f", soakMemoryGrowth), "%.2f (%s / %s; means %s, %s%s)", ratio, soak.MiB(lastLo), soak.MiB(firstHi), soak.MiB(rep.ServeLast.PSS), soak.MiB(rep.ServeFirst.PSS), overlap)
}

// checkReplayAlone checks the backlog replayed alone as the one replayed
// beside the live feed is checked.
func checkReplayAlone(t *testing.T, rep *soak.Report, sep *testdb.Separate, fl *soak.Fleet, rf *soak.ReplayFile, sum ingest.Summary) {
	t.Helper()
	a := rep.ReplayAlone
	rep.Check("replay alone: lines stored, none failed or rejected", sum.Accepted == rf.Lines && sum.Failed == 0 && sum.Rejected == 0,
		fmt.Sprintf("%d accepted, 0 failed, 0 rejected", rf.Lines), "%d accepted, %d duplicate, %d failed, %d rejected", sum.Accepted, sum.Duplicate, sum.Failed, sum.Rejected)
	rep.Check("replay alone: backlog drained", !a.DrainEnd.IsZero(), "drained", "%s", map[bool]string{true: "drained in " + a.Drain.Round(time.Second).String(), false: "not drained"}[!a.DrainEnd.IsZero()])
	checkReplay(t, rep, sep, fl.Alone, rf, "replay alone: ")
}

// checkReplay compares the replayed farm f's final windows, turbine_window
// rows and closed day with the file, naming its checks with prefix, and
// returns how many of each it compared.
func checkReplay(t *testing.T, rep *soak.Report, sep *testdb.Separate, f *soak.Farm, rf *soak.ReplayFile, prefix string) (windows, turbineWindows, closedDays int) {
	t.Helper()
	ctx := context.Background()
	perWindow := int64(f.Turbines()) * int64(soak.Window/soak.Cadence)
	rows, err := sep.Control.Query(ctx, `SELECT window_start, expected, received, available FROM farm_window
		WHERE farm_id = $1 AND path = 'final' AND window_start >= $2 AND window_start < $3`, f.ID, rf.From, rf.To)
	testdb.Must(t, err, "replayed windows")
	got := map[time.Time][3]int64{}
	for rows.Next() {
		var ws time.Time
		var e, r, a int64
		testdb.Must(t, rows.Scan(&ws, &e, &r, &a), "scan")
		got[ws.UTC()] = [3]int64{e, r, a}
	}
	testdb.Must(t, rows.Err(), "replayed windows")
	var wrong []string
	for ws, c := range rf.Windows {
		if g, ok := got[ws.UTC()]; !ok || g != [3]int64{perWindow, c.Received, c.Available} {
			wrong = append(wrong, fmt.Sprintf("%s: final %v (present %v), file %d/%d/%d", ws.Format("15:04"), g, ok, perWindow, c.Received, c.Available))
		}
	}
	rep.Check(prefix+"replayed windows whose final row differs from the file (or is missing)", len(wrong) == 0, "0", "%d of %d %v", len(wrong), len(rf.Windows), first(wrong, 5))

	// turbine_window, on each shard of the farm.
	gotTW := map[soak.TurbineWindow][3]int64{}
	for _, shard := range sep.Shards.Names() {
		rows, err := sep.Shards.Pool(shard).Query(ctx, `SELECT turbine_id, window_start, expected, received, available FROM turbine_window
			WHERE farm_id = $1 AND window_start >= $2 AND window_start < $3`, f.ID, rf.From, rf.To)
		testdb.Must(t, err, "turbine_window on %s", shard)
		for rows.Next() {
			var k soak.TurbineWindow
			var e, r, a int64
			testdb.Must(t, rows.Scan(&k.TurbineID, &k.Start, &e, &r, &a), "scan")
			k.Start = k.Start.UTC()
			gotTW[k] = [3]int64{e, r, a}
		}
		testdb.Must(t, rows.Err(), "turbine_window on %s", shard)
	}
	wrong = wrong[:0]
	perTurbine := int64(soak.Window / soak.Cadence)
	for i := 1; i <= f.Turbines(); i++ {
		for ws := range rf.Windows {
			k := soak.TurbineWindow{TurbineID: f.TurbineID(i), Start: ws.UTC()}
			want := [3]int64{perTurbine, 0, 0}
			if c := rf.TurbineWindows[k]; c != nil {
				want = [3]int64{perTurbine, c.Received, c.Available}
			}
			if g, ok := gotTW[k]; !ok || g != want {
				wrong = append(wrong, fmt.Sprintf("%s %s: %v (present %v), file %v", k.TurbineID, ws.Format("15:04"), g, ok, want))
			}
		}
	}
	turbineWindows = f.Turbines() * len(rf.Windows)
	rep.Check(prefix+"replayed turbine_window rows that differ from the file (or are missing)", len(wrong) == 0, "0", "%d of %d %v", len(wrong), turbineWindows, first(wrong, 5))

	// turbine_day of the day that closed before T0.
	days := map[localday.Date]bool{}
	for k := range rf.ClosedDays {
		days[k.Day] = true
	}
	wrong = wrong[:0]
	for day := range days {
		rows, err := sep.Control.Query(ctx, `SELECT turbine_id, expected, received, available FROM turbine_day WHERE farm_id = $1 AND day = $2`, f.ID, day.UTC())
		testdb.Must(t, err, "turbine_day")
		got := map[string][3]int64{}
		for rows.Next() {
			var id string
			var e, r, a int64
			testdb.Must(t, rows.Scan(&id, &e, &r, &a), "scan")
			got[id] = [3]int64{e, r, a}
		}
		testdb.Must(t, rows.Err(), "turbine_day")
		for i := 1; i <= f.Turbines(); i++ {
			k := soak.TurbineDay{TurbineID: f.TurbineID(i), Day: day}
			want := rf.ClosedDays[k]
			if g, ok := got[k.TurbineID]; !ok || g != [3]int64{want.Expected, want.Received, want.Available} {
				wrong = append(wrong, fmt.Sprintf("%s %s: %v (present %v), file %d/%d/%d", k.TurbineID, day, g, ok, want.Expected, want.Received, want.Available))
			}
		}
	}
	rep.Check(prefix+"turbine_day rows of the closed day that differ from the file (or are missing)", len(rf.ClosedDays) > 0 && len(wrong) == 0, "0 (of > 0)", "%d of %d %v", len(wrong), len(rf.ClosedDays), first(wrong, 5))
	return len(rf.Windows), turbineWindows, len(rf.ClosedDays)
}

// soakSettled says whether rf's backlog is drained: no rollup_day job
// unfinished, no recompute request, no mark on any shard, and every
// replayed window with its final row.
func soakSettled(ctx context.Context, sep *testdb.Separate, rf *soak.ReplayFile) (bool, string) {
	if ok, why := settled(ctx, sep); !ok {
		return false, why
	}
	var finals int
	if err := sep.Control.QueryRow(ctx, `SELECT count(*) FROM farm_window WHERE farm_id = $3 AND path = 'final' AND window_start >= $1 AND window_start < $2`,
		rf.From, rf.To, rf.FarmID).Scan(&finals); err != nil {
		return false, err.Error()
	}
	if finals < len(rf.Windows) {
		return false, fmt.Sprintf("%d of %d replayed windows have their final row", finals, len(rf.Windows))
	}
	return true, ""
}

// waitWarm waits until serve's start-up work is done: every farm has
// published its windows up to the last one due, and no rollup job (the
// nightly close of yesterday) is unfinished.
func waitWarm(t *testing.T, ctx context.Context, sep *testdb.Separate, farms int) {
	t.Helper()
	deadline := time.Now().Add(6 * time.Minute)
	for {
		stillOn(t, ctx, "waiting for serve to warm up")
		due := time.Now().Add(-time.Minute).Truncate(time.Minute)
		caught := testdb.Int(t, sep.Control, `SELECT count(DISTINCT farm_id) FROM farm_window WHERE path = 'fast' AND window_end >= $1`, due)
		jobs := testdb.Int(t, sep.Control, `SELECT count(*) FROM river_job WHERE kind IN ('rollup_day', 'rollup_schedule') AND river_state_unfinished(state::text)`)
		if caught == int64(farms) && jobs == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not warm up in 6 minutes: %d of %d farms published through %s, %d rollup jobs unfinished", caught, farms, due.Format("15:04"), jobs)
		}
		time.Sleep(time.Second)
	}
}

// fastPoller notes when each live window's fast row is first seen (its
// commit visible), and what it said then.
type fastPoller struct {
	control  *pgxpool.Pool
	farms    []string // the live farms
	from, to time.Time
	every    time.Duration

	mu    sync.Mutex
	seen  map[soak.FarmWindow]seenRow
	done  chan struct{}
	ended chan struct{}
}

type seenRow struct {
	at         time.Time
	computedAt time.Time
	received   int64
}

func (p *fastPoller) run(ctx context.Context) {
	p.mu.Lock()
	p.seen, p.done, p.ended = map[soak.FarmWindow]seenRow{}, make(chan struct{}), make(chan struct{})
	p.mu.Unlock()
	defer close(p.ended)
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.done:
			return
		case <-t.C:
		}
		since := time.Now().Add(-5 * time.Minute)
		if since.Before(p.from) {
			since = p.from
		}
		rows, err := p.control.Query(ctx, `SELECT farm_id, window_start, computed_at, received FROM farm_window WHERE path = 'fast' AND window_start >= $1 AND window_start < $2 AND farm_id = ANY($3)`,
			since, p.to, p.farms)
		if err != nil {
			continue
		}
		now := time.Now()
		p.mu.Lock()
		for rows.Next() {
			var k soak.FarmWindow
			var r seenRow
			if rows.Scan(&k.FarmID, &k.Start, &r.computedAt, &r.received) != nil {
				break
			}
			k.Start = k.Start.UTC()
			if _, ok := p.seen[k]; !ok {
				r.at = now
				p.seen[k] = r
			}
		}
		p.mu.Unlock()
		rows.Close()
	}
}

func (p *fastPoller) stop() {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		close(done)
		<-p.ended
	}
}

func (p *fastPoller) seenAt(k soak.FarmWindow) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.seen[k]
	return r.at, ok
}

// windowRow is a farm_window row as the checks read it.
type windowRow struct {
	expected, received, available int64
	computedAt, windowEnd         time.Time
	lateness                      int32
	final                         bool
}

// rewritten counts the fast rows that changed (or went) after the poller
// saw them: a fast row is published once, never rewritten.
func (p *fastPoller) rewritten(now map[soak.FarmWindow]windowRow) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, s := range p.seen {
		r, ok := now[k]
		if !ok || !r.computedAt.Equal(s.computedAt) || r.received != s.received {
			n++
		}
	}
	return n
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

func mustPID(t *testing.T, s *pgserver.Server) int {
	t.Helper()
	pid, err := s.PostmasterPID()
	testdb.Must(t, err, "postmaster of %s", s.Home)
	return pid
}

// dropSoakLeftovers drops the databases an interrupted soak left on the
// servers it uses (a finished one drops its own): tens of millions of rows.
func dropSoakLeftovers(t *testing.T, servers []*pgserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, s := range servers {
		name := filepath.Base(s.Home)
		if _, err := os.Stat(filepath.Join(s.Home, "pg", "data", "PG_VERSION")); err != nil {
			continue // never created
		}
		testdb.Must(t, s.Up(ctx), "start server %s", name)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		testdb.Must(t, err, "connect to %s", name)
		rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, 'gwt_testsoak')`)
		testdb.Must(t, err, "databases on %s", name)
		dbs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		testdb.Must(t, err, "databases on %s", name)
		conn.Close(ctx)
		for _, db := range dbs {
			t.Logf("dropping %s on %s, left by an earlier soak", db, name)
			testdb.Must(t, pgserver.DropDatabase(ctx, s.URL("postgres"), db), "drop %s", db)
		}
	}
}

// setLogMinDuration makes the soak's databases log statements slower than
// ms milliseconds (new sessions: serve's and the replay's).
func setLogMinDuration(t *testing.T, sep *testdb.Separate, ms string) {
	t.Helper()
	ctx := context.Background()
	n, err := strconv.Atoi(ms)
	if err != nil {
		t.Fatalf("SOAK_LOG_MIN_DURATION_MS=%q: want milliseconds", ms)
	}
	set := func(pool *pgxpool.Pool) {
		var db string
		testdb.Must(t, pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db), "database name")
		testdb.Exec(t, pool, fmt.Sprintf(`ALTER DATABASE %s SET log_min_duration_statement = %d`, pgx.Identifier{db}.Sanitize(), n))
	}
	set(sep.Control)
	for _, name := range sep.Shards.Names() {
		set(sep.Shards.Pool(name))
	}
}

// machine describes where the soak ran.
func machine(ctx context.Context, control *pgxpool.Pool) string {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, model, _ = strings.Cut(l, ": ")
				break
			}
		}
	}
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]); len(f) >= 2 {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			mem = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	var pg string
	_ = control.QueryRow(ctx, `SELECT split_part(version(), ' on ', 1)`).Scan(&pg)
	return fmt.Sprintf("Machine: %d CPUs (%s), %s, %s %s/%s, %s.", runtime.NumCPU(), strings.TrimSpace(model), mem, runtime.Version(), runtime.GOOS, runtime.GOARCH, pg)
}
