package soak

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CPUMount is where the cgroup v1 cpu controller is mounted.
const CPUMount = "/sys/fs/cgroup/cpu"

// CFSPeriod is the CPU cap's period (cpu.cfs_period_us, µs): a group of c
// CPUs may run c × CFSPeriod µs of every CFSPeriod.
const CFSPeriod = 100_000

// CPUGroup is a cgroup v1 cpu controller group capping every process in it,
// and every process they start, at Quota µs of CPU every Period µs: the
// soak short of CPU (SOAK_CPUS).
type CPUGroup struct {
	Dir           string
	Quota, Period int64
	// parent is the group this process was in when the group was made
	// (the new group is made inside it), where Leave returns a process.
	parent string
}

// ParseCPUs reads SOAK_CPUS: a number of CPUs, at least 0.01 (the
// kernel's smallest quota is 1 ms a period).
func ParseCPUs(v string) (float64, error) {
	cpus, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(cpus) || math.IsInf(cpus, 0) || cpus < 0.01 {
		return 0, fmt.Errorf("SOAK_CPUS=%q: want a number of CPUs of at least 0.01, such as 1.2", v)
	}
	return cpus, nil
}

// NewCPUGroup makes group name capped at cpus CPUs (cpu.cfs_quota_us =
// cpus × 100,000 over cpu.cfs_period_us 100,000), inside this process's own
// group of the cgroup v1 cpu hierarchy mounted at mount. Nothing is in it
// until Join.
func NewCPUGroup(mount, name string, cpus float64) (*CPUGroup, error) {
	if _, err := os.Stat(filepath.Join(mount, "cpu.cfs_quota_us")); err != nil {
		return nil, fmt.Errorf("a CPU cap needs the cgroup v1 cpu controller mounted at %s, with cpu.cfs_quota_us: %w", mount, err)
	}
	own, err := ownCPUGroup()
	if err != nil {
		return nil, err
	}
	g := &CPUGroup{Dir: filepath.Join(mount, own, name), Quota: int64(math.Round(cpus * CFSPeriod)), Period: CFSPeriod, parent: filepath.Join(mount, own)}
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup %s (a CPU cap needs root and a writable cgroup v1 cpu hierarchy): %w", g.Dir, err)
	}
	// The period first: a quota is checked against the period in force.
	for _, f := range []struct {
		file string
		v    int64
	}{{"cpu.cfs_period_us", g.Period}, {"cpu.cfs_quota_us", g.Quota}} {
		if err := os.WriteFile(filepath.Join(g.Dir, f.file), []byte(strconv.FormatInt(f.v, 10)), 0o644); err != nil {
			_ = os.Remove(g.Dir)
			return nil, fmt.Errorf("cgroup %s: write %d to %s: %w", g.Dir, f.v, f.file, err)
		}
	}
	return g, nil
}

// ownCPUGroup is this process's group in the cpu hierarchy
// (/proc/self/cgroup), "/" when it names none.
func ownCPUGroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
			return parts[2], nil
		}
	}
	return "/", sc.Err()
}

// Join moves process pid (every thread of it) into the group; what it
// starts from then on is in the group too.
func (g *CPUGroup) Join(pid int) error { return writePID(g.Dir, pid) }

// Leave moves process pid back to the group it was made in.
func (g *CPUGroup) Leave(pid int) error { return writePID(g.parent, pid) }

func writePID(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("move process %d to cgroup %s: %w", pid, dir, err)
	}
	return nil
}

// Procs lists the processes in the group.
func (g *CPUGroup) Procs() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(g.Dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// Remove deletes the group; with a process still in it, it says which
// (pid and command) and leaves the group.
func (g *CPUGroup) Remove() error {
	err := os.Remove(g.Dir)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	pids, _ := g.Procs()
	if len(pids) == 0 {
		return fmt.Errorf("remove cgroup %s: %w", g.Dir, err)
	}
	left := make([]string, len(pids))
	for i, pid := range pids {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		left[i] = fmt.Sprintf("%d (%s)", pid, strings.TrimSpace(string(comm)))
	}
	return fmt.Errorf("remove cgroup %s: %d processes still in it: %s: %w", g.Dir, len(pids), strings.Join(left, ", "), err)
}

// String says the cap as the report's settings give it.
func (g *CPUGroup) String() string {
	return fmt.Sprintf("cgroup v1 cpu group %s: cpu.cfs_quota_us %d over cpu.cfs_period_us %d (%.2f CPUs)",
		g.Dir, g.Quota, g.Period, float64(g.Quota)/float64(g.Period))
}
