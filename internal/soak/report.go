package soak

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Check is one assertion of the soak, with the numbers it compared.
type Check struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	OK   bool   `json:"ok"`
}

// Report is what a soak measured and checked.
type Report struct {
	Started  time.Time     `json:"started"`
	WallTime time.Duration `json:"wall_time_ns"`
	Machine  string        `json:"machine"`
	Settings string        `json:"settings"`

	Farms, Turbines, Shards int
	ReadingsPerSecond       float64 `json:"readings_per_second"`
	T0, LiveFrom, LiveTo    time.Time

	Sender SenderStats `json:"sender"`
	// Refusals are the live feed's 503 answers by reason, with how long
	// the sender waited for each.
	Refusals       []Refusal `json:"refusals_503"`
	RequestLatency Dist      `json:"request_latency"`
	AckLatency     Dist      `json:"ack_latency"`
	SendDelay      Dist      `json:"send_delay"`

	// Publish lag of the live windows' fast rows: published time
	// (computed_at) − (window end + allowed lateness); Visible is when a
	// poller first saw the row (commit visible), every PollEvery.
	Lag, LagDuringReplay, Visible, VisibleDuringReplay Dist
	PollEvery                                          time.Duration `json:"poll_every_ns"`
	// Slowest are the live windows published latest after their watermark.
	Slowest                                     []WindowLag `json:"slowest"`
	LiveWindows, FastRows, CorrectedLiveWindows int64

	ReplayLines          int64          `json:"replay_lines"`
	ReplayStart          time.Time      `json:"replay_start"`
	ReplayIngest         time.Duration  `json:"replay_ingest_ns"`
	ReplayCPU            time.Duration  `json:"replay_cpu_ns"`        // the ingest process's user + system time
	ReplayMaxRSS         int64          `json:"replay_max_rss_bytes"` // and its peak resident memory
	ReplaySummary        map[string]any `json:"replay_summary"`
	DrainEnd             time.Time      `json:"drain_end"`
	Drain                time.Duration  `json:"drain_ns"`
	ReplayWindows        int            `json:"replay_windows"`
	ReplayTurbineWindows int            `json:"replay_turbine_windows"`
	ReplayClosedDays     int            `json:"replay_turbine_days"`
	// ReplayAlone is the same kind of replay (another farm of the same
	// shape) after the live feed has ended and drained: the replay's
	// figures with no live feed beside it.
	ReplayAlone *ReplayRun `json:"replay_alone,omitempty"`

	// Move is the turbines moved to another shard during the live feed
	// (nil: none).
	Move *MoveReport `json:"move,omitempty"`

	Samples []Sample `json:"samples"`
	// First and last minute of the live feed, means of the samples in each.
	ServeFirst, ServeLast, PostgresFirst, PostgresLast Mem
	ServePeak, PostgresPeak                            Mem
	MeanServeCPU, MeanPostgresCPU, MeanSenderCPU       float64
	MeanLoad1                                          float64
	// The machine over the live feed: every process's CPU, steal and
	// iowait (cores), and the share of time a task stalled on I/O.
	MeanMachineBusy, MeanSteal, MeanIOWait, MeanIOPressure float64

	Checks []Check `json:"checks"`
	// Targets are figures that depend on the machine (the publish lag's
	// 5 s p99): recorded beside what was measured, never a failure.
	Targets []Check `json:"targets"`
}

// ReplayRun is one `orchestrator ingest FILE` of a backlog and its drain.
type ReplayRun struct {
	Farm     string         `json:"farm"`
	Lines    int64          `json:"lines"`
	Start    time.Time      `json:"start"`
	Ingest   time.Duration  `json:"ingest_ns"`
	CPU      time.Duration  `json:"cpu_ns"`
	MaxRSS   int64          `json:"max_rss_bytes"`
	Summary  map[string]any `json:"summary"`
	DrainEnd time.Time      `json:"drain_end"` // zero: not drained
	Drain    time.Duration  `json:"drain_ns"`
}

// MoveReport is a move of some of a live farm's turbines during the soak:
// when, and what the moves' turbine_move rows counted.
type MoveReport struct {
	Farm, From, To                      string
	Turbines                            int
	Applied, Done                       time.Time
	ApplyTook                           time.Duration
	Copied, CaughtUp, Verified, Deleted int64
}

// WindowLag is one live window's publication.
type WindowLag struct {
	FarmID    string    `json:"farm_id"`
	Start     time.Time `json:"window_start"`
	Published float64   `json:"published_s"` // computed_at after the watermark
	Seen      float64   `json:"seen_s"`      // first seen after the watermark (-1: not seen)
}

// Check records an assertion and returns whether it held.
func (r *Report) Check(name string, ok bool, want, got string, args ...any) bool {
	r.Checks = append(r.Checks, Check{Name: name, Want: want, Got: fmt.Sprintf(got, args...), OK: ok})
	return ok
}

// Target records a machine-dependent target and whether this run met it.
func (r *Report) Target(name string, met bool, want, got string, args ...any) {
	r.Targets = append(r.Targets, Check{Name: name, Want: want, Got: fmt.Sprintf(got, args...), OK: met})
}

// Failed lists the checks that did not hold.
func (r *Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// MemWindow returns the means of serve's and Postgres's memory over the
// samples taken in [from, to), and how many there were.
func MemWindow(samples []Sample, from, to time.Time) (serve, pg Mem, n int) {
	for _, s := range samples {
		if s.At.Before(from) || !s.At.Before(to) {
			continue
		}
		serve.add(s.Serve)
		pg.add(s.Postgres)
		n++
	}
	if n > 0 {
		serve = Mem{RSS: serve.RSS / int64(n), PSS: serve.PSS / int64(n)}
		pg = Mem{RSS: pg.RSS / int64(n), PSS: pg.PSS / int64(n)}
	}
	return serve, pg, n
}

// ServePSSRange is the lowest and highest serve PSS sampled in [from, to).
// A garbage-collected heap saws between its live size and up to twice
// that, so growth shows as the floor of the last minute rising over the
// ceiling of the first, not as their means moving.
func ServePSSRange(samples []Sample, from, to time.Time) (lo, hi int64) {
	for _, s := range samples {
		if s.At.Before(from) || !s.At.Before(to) || s.Serve.PSS <= 0 {
			continue
		}
		if lo == 0 || s.Serve.PSS < lo {
			lo = s.Serve.PSS
		}
		hi = max(hi, s.Serve.PSS)
	}
	return lo, hi
}

// MiB formats bytes as MiB.
func MiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func secs(d Dist) string {
	return fmt.Sprintf("%.2f / %.2f / %.2f s (n = %d)", d.P50, d.P99, d.Max, d.N)
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Soak report (make soak)\n\n")
	w("Started %s, wall time %s. %s\n\n", r.Started.UTC().Format(time.RFC3339), r.WallTime.Round(time.Second), r.Machine)
	w("Settings: %s\n\n", r.Settings)
	w("Fleet: %d farms, %d turbines at 2 s (%.0f readings/s) on %d shards, each shard and the control database on its own Postgres server. ",
		r.Farms, r.Turbines, r.ReadingsPerSecond, r.Shards)
	w("Live feed %s → %s (%s); backlog ends (T0) %s.\n\n", r.LiveFrom.UTC().Format("15:04:05"), r.LiveTo.UTC().Format("15:04:05"), r.LiveTo.Sub(r.LiveFrom), r.T0.UTC().Format("15:04:05"))

	w("## Checks\n\n| check | want | got | |\n|---|---|---|---|\n")
	for _, c := range r.Checks {
		mark := "ok"
		if !c.OK {
			mark = "**FAILED**"
		}
		w("| %s | %s | %s | %s |\n", c.Name, c.Want, c.Got, mark)
	}
	if len(r.Targets) > 0 {
		w("\n## Targets (depend on the machine: recorded in BENCHMARKS.md, never a failure)\n\n| target | want | got | |\n|---|---|---|---|\n")
		for _, c := range r.Targets {
			mark := "met"
			if !c.OK {
				mark = "missed"
			}
			w("| %s | %s | %s | %s |\n", c.Name, c.Want, c.Got, mark)
		}
	}

	w("\n## Live feed (HTTP, one body per farm per second)\n\n")
	st := r.Sender
	w("- bodies %d, requests %d (%d re-sends), readings acknowledged %d (accepted %d, duplicate %d), status %v, transport errors %d, lines named failed %d\n",
		st.Bodies, st.Requests, st.Resent, st.Readings, st.Accepted, st.Duplicate, st.Status, st.TransportErrors, st.LinesFailed)
	w("- request latency p50 / p99 / max: %s\n", secs(r.RequestLatency))
	w("- a body's first send to its acknowledgement: %s\n", secs(r.AckLatency))
	w("- sender's delay after a body's due time: %s\n", secs(r.SendDelay))

	w("\n## Live bodies answered 503 (where the time went)\n\n")
	if len(r.Refusals) == 0 {
		w("None: every live body was taken at its first send.\n")
	} else {
		var answers int
		for _, f := range r.Refusals {
			answers += f.Answers
		}
		w("%d of %d bodies answered 503 at least once (%d answers 503 in all; the sender sends again after Retry-After until acknowledged, %d re-sends for any reason). ",
			st.BodiesRefused, st.Bodies, answers, st.Resent)
		w("By the answer's error text (each run of digits as N), with how long the sender waited for the 503 (send to answer):\n\n")
		w("| reason | answers | wait p50 / p99 / max |\n|---|---|---|\n")
		for _, f := range r.Refusals {
			w("| %s | %d | %.2f / %.2f / %.2f s |\n", strings.ReplaceAll(f.Reason, "|", "\\|"), f.Answers, f.Wait.P50, f.Wait.P99, f.Wait.Max)
		}
	}

	w("\n## Publish lag of the live windows (after window end + allowed lateness)\n\n")
	w("| | p50 / p99 / max |\n|---|---|\n")
	w("| published time (fast row's computed_at), all live windows | %s |\n", secs(r.Lag))
	w("| the same, the rounds while the replay was ingested and drained (watermarks from the minute it started to the first after the drain) | %s |\n", secs(r.LagDuringReplay))
	w("| first seen by a poller (every %s), all live windows | %s |\n", r.PollEvery, secs(r.Visible))
	w("| the same, while the replay was ingested or drained | %s |\n", secs(r.VisibleDuringReplay))
	w("\nLive windows %d, fast rows %d, live windows later corrected (final row) %d.\n", r.LiveWindows, r.FastRows, r.CorrectedLiveWindows)
	if len(r.Slowest) > 0 {
		w("\nPublished latest: ")
		for i, l := range r.Slowest {
			if i > 0 {
				w(", ")
			}
			w("%s %s %.2f s (seen %.2f s)", l.FarmID, l.Start.UTC().Format("15:04"), l.Published, l.Seen)
		}
		w(".\n")
	}

	w("\n## Replay (orchestrator ingest FILE, beside the live feed)\n\n")
	w("- %d lines (7.5 h of one 300-turbine farm), started %s\n", r.ReplayLines, r.ReplayStart.UTC().Format("15:04:05"))
	if r.ReplayIngest > 0 {
		w("- ingest %s (%.0f rows/s), the process using %s of CPU and at most %s; summary %v\n", r.ReplayIngest.Round(time.Millisecond),
			float64(r.ReplayLines)/r.ReplayIngest.Seconds(), r.ReplayCPU.Round(10*time.Millisecond), MiB(r.ReplayMaxRSS), r.ReplaySummary)
	}
	w("- backlog drained (no dirty mark or window, no request or rollup_day job left, every replayed window with its final row) %s after the ingest ended\n", r.Drain.Round(time.Second))
	w("- checked: %d replayed windows, %d turbine-windows, %d turbine-days of the closed day\n", r.ReplayWindows, r.ReplayTurbineWindows, r.ReplayClosedDays)
	if a := r.ReplayAlone; a != nil {
		with := ReplayRun{Farm: "replayed", Lines: r.ReplayLines, Start: r.ReplayStart, Ingest: r.ReplayIngest, CPU: r.ReplayCPU, MaxRSS: r.ReplayMaxRSS, DrainEnd: r.DrainEnd, Drain: r.Drain}
		w("\n## Replay alone and beside the live feed\n\n")
		w("The same kind of backlog (another farm of %d lines, same shape and shards) replayed again after the live feed ended and drained: ", a.Lines)
		w("the rate and drain it has with nothing else to do, beside the ones it has with the live feed.\n\n")
		w("| replay | farm | started | lines | ingest | lines/s | ingest process CPU, peak RSS | drained after the ingest |\n|---|---|---|---|---|---|---|---|\n")
		for _, row := range []struct {
			name string
			run  *ReplayRun
		}{{"alone (after the live feed)", a}, {"beside the live feed", &with}} {
			x := row.run
			rate, drain := "-", "not drained"
			if x.Ingest > 0 {
				rate = fmt.Sprintf("%.0f", float64(x.Lines)/x.Ingest.Seconds())
			}
			if !x.DrainEnd.IsZero() {
				drain = x.Drain.Round(time.Second).String()
			}
			w("| %s | %s | %s | %d | %s | %s | %s, %s | %s |\n", row.name, x.Farm, x.Start.UTC().Format("15:04:05"), x.Lines,
				x.Ingest.Round(time.Millisecond), rate, x.CPU.Round(10*time.Millisecond), MiB(x.MaxRSS), drain)
		}
	}

	if m := r.Move; m != nil {
		w("\n## Move (orchestrator fleet apply with %d of %s's turbines on shard %s instead of %s)\n\n", m.Turbines, m.Farm, m.To, m.From)
		w("- applied %s (%s into the live feed, the replay starting %s), the apply taking %s\n", m.Applied.UTC().Format("15:04:05"),
			m.Applied.Sub(r.LiveFrom).Round(time.Second), r.ReplayStart.UTC().Format("15:04:05"), m.ApplyTook.Round(time.Millisecond))
		if !m.Done.IsZero() {
			w("- every move done %s after the apply (a 15 s grace between the switch and the fence included)\n", m.Done.Sub(m.Applied).Round(time.Second))
		}
		w("- readings: copied %d, caught up after the switch %d, verified %d, deleted from %s %d\n", m.Copied, m.CaughtUp, m.Verified, m.From, m.Deleted)
	}

	w("\n## Memory and CPU (sampled every ~10 s)\n\n")
	w("| | first minute | last minute | peak |\n|---|---|---|---|\n")
	w("| serve PSS | %s | %s | %s |\n", MiB(r.ServeFirst.PSS), MiB(r.ServeLast.PSS), MiB(r.ServePeak.PSS))
	w("| serve RSS | %s | %s | %s |\n", MiB(r.ServeFirst.RSS), MiB(r.ServeLast.RSS), MiB(r.ServePeak.RSS))
	w("| Postgres PSS (5 servers, every process) | %s | %s | %s |\n", MiB(r.PostgresFirst.PSS), MiB(r.PostgresLast.PSS), MiB(r.PostgresPeak.PSS))
	w("\nMean CPU over the live feed: serve %.2f cores, Postgres %.2f, the sender (test process) %.2f; mean load average %.1f.\n",
		r.MeanServeCPU, r.MeanPostgresCPU, r.MeanSenderCPU, r.MeanLoad1)
	w("The machine over the live feed (/proc/stat, /proc/pressure): %.2f cores busy (every process), steal %.2f, iowait %.2f; some task stalled on I/O %.0f %% of the time.\n\n",
		r.MeanMachineBusy, r.MeanSteal, r.MeanIOWait, 100*r.MeanIOPressure)
	w("| at | serve PSS | Postgres PSS | serve CPU | Postgres CPU (control, shards) | sender CPU | replay CPU | load | machine busy / steal / iowait | CPU / I/O stalled |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Samples {
		names := make([]string, 0, len(s.PostgresCPUBy))
		for n := range s.PostgresCPUBy {
			names = append(names, n)
		}
		sort.Strings(names)
		by := make([]string, len(names))
		for i, n := range names {
			by[i] = fmt.Sprintf("%.2f", s.PostgresCPUBy[n])
		}
		w("| %s | %s | %s | %.2f | %.2f (%s) | %.2f | %.2f | %.1f | %.2f / %.2f / %.2f | %.0f %% / %.0f %% |\n", s.At.UTC().Format("15:04:05"), MiB(s.Serve.PSS), MiB(s.Postgres.PSS), s.ServeCPU, s.PostgresCPU, strings.Join(by, " "), s.SelfCPU, s.OtherCPU, s.Load1,
			s.MachineBusy, s.Steal, s.IOWait, 100*s.CPUPressure, 100*s.IOPressure)
	}
	return b.String()
}

// Write writes the report as soak-report.md and soak-report.json in dir.
func (r *Report) Write(dir string) (md, js string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	md, js = filepath.Join(dir, "soak-report.md"), filepath.Join(dir, "soak-report.json")
	if err := os.WriteFile(md, []byte(r.Markdown()), 0o644); err != nil {
		return "", "", err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", err
	}
	return md, js, os.WriteFile(js, b, 0o644)
}
