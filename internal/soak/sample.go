package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mem is a process's (or a group's) memory, in bytes: resident (RSS) and
// proportional (PSS: each shared page divided among the processes mapping
// it, so a group's sum counts Postgres's shared buffers once).
type Mem struct {
	RSS int64 `json:"rss_bytes"`
	PSS int64 `json:"pss_bytes"`
}

func (m *Mem) add(o Mem) { m.RSS += o.RSS; m.PSS += o.PSS }

// ReadMem reads /proc/pid/smaps_rollup.
func ReadMem(pid int) (Mem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[2] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "Rss:":
			m.RSS = n << 10
		case "Pss:":
			m.PSS = n << 10
		}
	}
	return m, nil
}

// clockTicks is USER_HZ, the unit of /proc/pid/stat's times (100 on Linux).
const clockTicks = 100

// CPU reads a process's CPU time from /proc/pid/stat: its own (user +
// system, every thread) and that of its children it has waited for
// (Postgres's postmaster reaps its backends, so their time ends up there).
func CPU(pid int) (own, reaped time.Duration, err error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, 0, err
	}
	// After "pid (comm)": state is field 3, utime 14, stime 15, cutime 16, cstime 17.
	tick := func(i int) time.Duration {
		n, _ := strconv.ParseInt(f[i-3], 10, 64)
		return time.Duration(n) * time.Second / clockTicks
	}
	return tick(14) + tick(15), tick(16) + tick(17), nil
}

func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no ')'", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}

// Children lists the processes whose parent is pid.
func Children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := statFields(child)
		if err != nil {
			continue // gone
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// Tree is a process and its children (a postmaster and its backends).
type Tree struct {
	Mem Mem
	CPU time.Duration // the postmaster's own and reaped time, and the live children's own
	N   int           // processes
}

// ReadTree sums a process tree (one level: the postmaster's children).
func ReadTree(pid int) (Tree, error) {
	m, err := ReadMem(pid)
	if err != nil {
		return Tree{}, err
	}
	own, reaped, err := CPU(pid)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Mem: m, CPU: own + reaped, N: 1}
	for _, c := range Children(pid) {
		cm, err := ReadMem(c)
		if err != nil {
			continue
		}
		cown, _, err := CPU(c)
		if err != nil {
			continue
		}
		t.Mem.add(cm)
		t.CPU += cown
		t.N++
	}
	return t, nil
}

// Sample is one look at the processes.
type Sample struct {
	At time.Time `json:"at"`
	// Serve is the orchestrator serve process; Postgres every cluster's
	// processes summed, PostgresBy per cluster.
	Serve      Mem            `json:"serve"`
	Postgres   Mem            `json:"postgres"`
	PostgresBy map[string]Mem `json:"postgres_by_cluster"`
	// PostgresCPUBy is each cluster's CPU since the previous sample, in cores.
	PostgresCPUBy map[string]float64 `json:"postgres_cpu_by_cluster"`
	// CPU used since the previous sample, in cores (1.0 = one core busy).
	ServeCPU    float64 `json:"serve_cpu_cores"`
	PostgresCPU float64 `json:"postgres_cpu_cores"`
	SelfCPU     float64 `json:"sender_cpu_cores"`
	OtherCPU    float64 `json:"other_cpu_cores"` // Others (the replay's ingest process)
	Processes   int     `json:"postgres_processes"`
	Load1       float64 `json:"load1"`
	// The machine since the previous sample (/proc/stat, in cores): every
	// process's CPU, the time the hypervisor gave to others (steal) and
	// the time idle with I/O outstanding (iowait); and the share of the
	// time some task was stalled on CPU or on I/O (/proc/pressure, PSI).
	// A slow machine shows here, not in the processes' own CPU.
	MachineBusy float64 `json:"machine_busy_cores"`
	Steal       float64 `json:"steal_cores"`
	IOWait      float64 `json:"iowait_cores"`
	CPUPressure float64 `json:"cpu_pressure_some"`
	IOPressure  float64 `json:"io_pressure_some"`
}

// Sampler looks at serve, the Postgres clusters, this process and any
// others every Every, until Stop.
type Sampler struct {
	Serve       int            // pid
	Postmasters map[string]int // cluster name → postmaster pid
	Every       time.Duration

	mu      sync.Mutex
	others  map[string]int
	samples []Sample
	stop    chan struct{}
	done    chan struct{}
	last    map[string]time.Duration
	lastAt  time.Time
	lastSys sysTimes
}

// Watch adds a process to look at (its CPU counts as other).
func (s *Sampler) Watch(name string, pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.others == nil {
		s.others = map[string]int{}
	}
	s.others[name] = pid
}

// Start samples now and then every Every.
func (s *Sampler) Start() {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	s.last = map[string]time.Duration{}
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.Every)
		defer t.Stop()
		s.take()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.take()
			}
		}
	}()
}

// Stop ends the sampling and returns the samples.
func (s *Sampler) Stop() []Sample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Samples returns the samples so far.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

func (s *Sampler) take() {
	now := time.Now()
	smp := Sample{At: now, PostgresBy: map[string]Mem{}, PostgresCPUBy: map[string]float64{}}
	cpu := map[string]time.Duration{}
	if m, err := ReadMem(s.Serve); err == nil {
		smp.Serve = m
	}
	if own, _, err := CPU(s.Serve); err == nil {
		cpu["serve"] = own
	}
	for name, pid := range s.Postmasters {
		t, err := ReadTree(pid)
		if err != nil {
			continue
		}
		smp.PostgresBy[name] = t.Mem
		smp.Postgres.add(t.Mem)
		smp.Processes += t.N
		cpu["postgres"] += t.CPU
		cpu["pg:"+name] = t.CPU
	}
	if own, _, err := CPU(os.Getpid()); err == nil {
		cpu["self"] = own
	}
	s.mu.Lock()
	for name, pid := range s.others {
		if own, _, err := CPU(pid); err == nil {
			cpu["other:"+name] = own
		}
	}
	s.mu.Unlock()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			smp.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	sys := readSysTimes()
	if !s.lastAt.IsZero() {
		span := now.Sub(s.lastAt).Seconds()
		smp.MachineBusy, smp.Steal, smp.IOWait, smp.CPUPressure, smp.IOPressure = sys.since(s.lastSys, span)
		rate := func(key string) float64 {
			d := cpu[key] - s.last[key]
			if d < 0 {
				d = 0
			}
			return d.Seconds() / span
		}
		smp.ServeCPU, smp.PostgresCPU, smp.SelfCPU = rate("serve"), rate("postgres"), rate("self")
		for key := range cpu {
			if strings.HasPrefix(key, "other:") {
				smp.OtherCPU += rate(key)
			}
			if name, ok := strings.CutPrefix(key, "pg:"); ok {
				smp.PostgresCPUBy[name] = rate(key)
			}
		}
	}
	s.lastAt, s.lastSys = now, sys
	for k, v := range cpu {
		s.last[k] = v
	}
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
}

// sysTimes are the machine's cumulative CPU times (/proc/stat's first
// line, in clock ticks) and stall times (/proc/pressure/{cpu,io}, "some",
// in microseconds); a field is -1 when it could not be read.
type sysTimes struct {
	busy, steal, iowait int64
	cpuStall, ioStall   int64
}

func readSysTimes() sysTimes {
	t := sysTimes{busy: -1, steal: -1, iowait: -1, cpuStall: -1, ioStall: -1}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		if f := strings.Fields(line); len(f) >= 9 && f[0] == "cpu" {
			var v [8]int64
			for i := range v {
				v[i], _ = strconv.ParseInt(f[i+1], 10, 64)
			}
			// user nice system idle iowait irq softirq steal
			t.busy = v[0] + v[1] + v[2] + v[5] + v[6]
			t.iowait, t.steal = v[4], v[7]
		}
	}
	t.cpuStall, t.ioStall = pressureSome("/proc/pressure/cpu"), pressureSome("/proc/pressure/io")
	return t
}

// pressureSome returns the "some" line's total (µs), or -1.
func pressureSome(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "some "); ok {
			for _, f := range strings.Fields(rest) {
				if v, ok := strings.CutPrefix(f, "total="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err == nil {
						return n
					}
				}
			}
		}
	}
	return -1
}

// since turns two readings span seconds apart into cores (CPU) and shares
// of the time (pressure); a value that could not be read is 0.
func (t sysTimes) since(prev sysTimes, span float64) (busy, steal, iowait, cpuP, ioP float64) {
	ticks := func(a, b int64) float64 {
		if a < 0 || b < 0 || a < b || span <= 0 {
			return 0
		}
		return float64(a-b) / clockTicks / span
	}
	stall := func(a, b int64) float64 {
		if a < 0 || b < 0 || a < b || span <= 0 {
			return 0
		}
		return float64(a-b) / 1e6 / span
	}
	return ticks(t.busy, prev.busy), ticks(t.steal, prev.steal), ticks(t.iowait, prev.iowait),
		stall(t.cpuStall, prev.cpuStall), stall(t.ioStall, prev.ioStall)
}
