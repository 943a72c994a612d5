package soak

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCPUGroupRefusesWithoutController: SOAK_CPUS is read as a number of
// CPUs of at least 0.01, and a folder that is not a cgroup v1 cpu
// hierarchy is refused naming the file it lacks, creating nothing.
func TestCPUGroupRefusesWithoutController(t *testing.T) {
	if c, err := ParseCPUs("1.2"); err != nil || c != 1.2 {
		t.Fatalf("ParseCPUs(1.2) = %v, %v; want 1.2", c, err)
	}
	for _, bad := range []string{"", "two", "0", "-1", "0.001", "NaN", "Inf"} {
		if _, err := ParseCPUs(bad); err == nil || !strings.Contains(err.Error(), "SOAK_CPUS=") {
			t.Fatalf("ParseCPUs(%q): %v, want an error naming SOAK_CPUS", bad, err)
		}
	}
	dir := t.TempDir()
	_, err := NewCPUGroup(dir, "soak", 1.2)
	if err == nil || !strings.Contains(err.Error(), "cgroup v1 cpu controller") || !strings.Contains(err.Error(), "cpu.cfs_quota_us") {
		t.Fatalf("NewCPUGroup on a plain folder: %v, want an error naming the cgroup v1 cpu controller and cpu.cfs_quota_us", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the refused group left %d entries in %s, want 0", len(entries), dir)
	}
}

// TestCPUGroupCapsAndIsRemoved, on this machine's cgroup v1 cpu
// controller (as root): a group of 0.25 CPUs has cpu.cfs_quota_us 25000
// over cpu.cfs_period_us 100000, holds the process joined to it, is not
// removed while that process lives (the error names its pid), and is
// removed once it has exited.
func TestCPUGroupCapsAndIsRemoved(t *testing.T) {
	if _, err := os.Stat(filepath.Join(CPUMount, "cpu.cfs_quota_us")); err != nil || os.Geteuid() != 0 {
		t.Skipf("needs root and the cgroup v1 cpu controller at %s (%v)", CPUMount, err)
	}
	g, err := NewCPUGroup(CPUMount, fmt.Sprintf("galewatch-test-%d", os.Getpid()), 0.25)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Remove() })
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join(g.Dir, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if q, p := read("cpu.cfs_quota_us"), read("cpu.cfs_period_us"); q != "25000" || p != "100000" || g.Quota != 25000 || g.Period != 100000 {
		t.Fatalf("quota %s over period %s (group says %d / %d), want 25000 over 100000", q, p, g.Quota, g.Period)
	}
	if !strings.Contains(g.String(), "cpu.cfs_quota_us 25000 over cpu.cfs_period_us 100000 (0.25 CPUs)") {
		t.Fatalf("String() = %q", g.String())
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := g.Join(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if procs, err := g.Procs(); err != nil || !slices.Equal(procs, []int{cmd.Process.Pid}) {
		t.Fatalf("the group holds %v (%v), want [%d]", procs, err, cmd.Process.Pid)
	}
	err = g.Remove()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("1 processes still in it: %d (sleep)", cmd.Process.Pid)) {
		t.Fatalf("Remove with sleep in the group: %v, want an error naming 1 process, %d (sleep)", err, cmd.Process.Pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := g.Remove(); err != nil {
		t.Fatalf("Remove once sleep has exited: %v", err)
	}
	if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
		t.Fatalf("%s after Remove: %v, want it gone", g.Dir, err)
	}
}
