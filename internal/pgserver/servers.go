package pgserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// serversDir is where the named clusters live, beside the default one.
const serversDir = "servers"

// SmallSettings size a named cluster: several of them share a development
// machine (one per shard, and one for the control database in the fault
// tests), so each gets a fraction of the default cluster's memory.
var SmallSettings = []string{
	"shared_buffers = 256MB",
	"max_connections = 200",
	"max_wal_size = 2GB",
}

var serverName = regexp.MustCompile(`^[a-z0-9]+([_-][a-z0-9]+)*$`)

// CheckServerName refuses a name that cannot name a folder and a database
// suffix plainly (the same rule as shard names: lower-case letters and
// digits separated by single '_' or '-').
func CheckServerName(name string) error {
	if len(name) > 57 || !serverName.MatchString(name) {
		return fmt.Errorf("server name %q: want lower-case letters and digits separated by single '_' or '-', at most 57 characters", name)
	}
	return nil
}

// Named returns the embedded cluster called name beside the default one,
// in home/servers/<name>: its own data folder, postmaster, port, socket and
// password file (same authentication rules: SCRAM, no trust), as production
// runs one Postgres server per shard. Nothing is started until Up.
func Named(home, name string) *Server {
	s := New(filepath.Join(home, serversDir, name))
	s.Settings = SmallSettings
	return s
}

// TestHome is where make test keeps its own clusters for a home: home/test
// (the Makefile's TEST_HOME), removed when the run ends; db down --all
// stops them too.
func TestHome(home string) string { return filepath.Join(home, "test") }

// ServerNames lists the named clusters that exist under home, in name order.
func ServerNames(home string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(home, serversDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && CheckServerName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// PostmasterPID is the running server's postmaster process id, read from
// its postmaster.pid.
func (s *Server) PostmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("the server in %s is not running: %w", s.Home, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: no process id on its first line", filepath.Join(s.dataDir(), "postmaster.pid"))
	}
	return pid, nil
}

// StopImmediate stops the server as a crash would (pg_ctl stop -m
// immediate): every backend is killed at once, nothing is checkpointed,
// and the next Up recovers from the WAL.
func (s *Server) StopImmediate(ctx context.Context) error {
	bin, err := FindBinDir(s.BinDir)
	if err != nil {
		return err
	}
	out, err := s.pgCtl(ctx, bin, "stop", "-D", s.dataDir(), "-m", "immediate", "-w").CombinedOutput()
	if err != nil {
		return fmt.Errorf("stop postgres (immediate): %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Pause makes the server hang instead of refusing: SIGSTOP to its
// postmaster, then to every process it forked (backends, background
// workers). Stopping the postmaster alone would leave the existing
// sessions answering; stopping it first means no new child appears while
// the children are listed. New connections then wait in the listen backlog
// and queries on open ones wait for ever, until Resume.
func (s *Server) Pause() error {
	return s.signalTree(syscall.SIGSTOP, true)
}

// Resume undoes Pause (SIGCONT to the children, then the postmaster). It is
// harmless on a server that is not paused.
func (s *Server) Resume() error {
	return s.signalTree(syscall.SIGCONT, false)
}

func (s *Server) signalTree(sig syscall.Signal, postmasterFirst bool) error {
	pid, err := s.PostmasterPID()
	if err != nil {
		return err
	}
	if postmasterFirst {
		if err := syscall.Kill(pid, sig); err != nil {
			return fmt.Errorf("signal postmaster %d: %w", pid, err)
		}
	}
	children, err := childrenOf(pid)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range children {
		// A backend may have exited since it was listed.
		if err := syscall.Kill(c, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("signal %d: %w", c, err))
		}
	}
	if !postmasterFirst {
		if err := syscall.Kill(pid, sig); err != nil {
			errs = append(errs, fmt.Errorf("signal postmaster %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// childrenOf lists the processes whose parent is pid (from /proc).
func childrenOf(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses,
		// so read from the last ')'.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
			out = append(out, child)
		}
	}
	return out, nil
}
