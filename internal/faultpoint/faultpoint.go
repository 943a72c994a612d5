// Package faultpoint lets the fault tests stop a real orchestrator process
// at a named point in the middle of its work, so they can kill it there
// (kill -9) knowing exactly what it had and had not committed, instead of
// sleeping and hoping.
//
// A process started with GALEWATCH_FAULTPOINT=<name>[=<text>[+<text>...]][,...]
// blocks the first time it reaches each named point (with texts: the first
// time the point's detail, e.g. a rollup's reason and farm-day, contains
// every one of them): it
// writes one line "galewatch faultpoint <name> reached: <detail>" to stderr
// and waits until its context ends (the test kills the process meanwhile),
// or until the process gets SIGUSR1 (the test did something to the world,
// say stopped a shard's server, and lets the work go on). Without the
// variable every point is a map lookup that finds nothing.
package faultpoint

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// Env names the points to block at, separated by commas.
const Env = "GALEWATCH_FAULTPOINT"

// The points. Each sits between two commits whose order matters.
const (
	// RollupBeforeControlCommit: a rollup_day job has read the shard and
	// not yet committed anything: its control transaction (advisory lock,
	// claim; a large correction's window parts and final rows, written
	// while the shard computed) and its shard transaction are both open.
	RollupBeforeControlCommit = "rollup.before_control_commit"
	// RollupBetweenCommits: a rollup_day job has committed its control
	// side (parts, final windows, turbine_day) but not yet its shard side
	// (the claims of its dirty windows, turbine_window).
	RollupBetweenCommits = "rollup.between_commits"
	// DrainBeforeMarkDelete: the drain has committed a recompute request
	// and its job on the control database, and not yet deleted the mark.
	DrainBeforeMarkDelete = "drain.before_mark_delete"
	// FastPathBeforePublish: the fast path's shards have committed their
	// windows (and absorbed those windows' marks) and the farm's fast rows
	// are not yet published.
	FastPathBeforePublish = "fastpath.before_publish"
	// MoveAfterStep: a turbine move has committed a step; the detail is
	// the state it reached ("copying" after each day copied, "switched",
	// "fenced", "verified", "done").
	MoveAfterStep = "move.after_step"
)

var (
	armed   = parse(os.Getenv(Env)) // point → the texts its detail must contain
	mu      sync.Mutex
	hit     = map[string]bool{}
	release = make(chan os.Signal, 1)
)

func init() {
	if len(armed) > 0 {
		// Registered before any point can be reached, so that SIGUSR1
		// never takes its default action (ending the process).
		signal.Notify(release, syscall.SIGUSR1)
	}
}

func parse(v string) map[string]string {
	if v == "" {
		return nil
	}
	out := map[string]string{}
	for _, spec := range strings.Split(v, ",") {
		name, text, _ := strings.Cut(strings.TrimSpace(spec), "=")
		if name != "" {
			out[name] = text
		}
	}
	return out
}

// Reached blocks at point name when this process was started with it armed
// (and detail contains the armed text) and has not blocked there yet: it
// says so on stderr, then returns nil on SIGUSR1 or ctx's error once ctx
// ends. Otherwise it returns nil at once.
func Reached(ctx context.Context, name, detail string) error {
	texts, ok := armed[name]
	if !ok {
		return nil
	}
	for _, text := range strings.Split(texts, "+") {
		if !strings.Contains(detail, text) {
			return nil
		}
	}
	mu.Lock()
	first := !hit[name]
	hit[name] = true
	mu.Unlock()
	if !first {
		return nil
	}
	fmt.Fprintf(os.Stderr, "galewatch faultpoint %s reached: %s\n", name, detail)
	select {
	case <-release:
		fmt.Fprintf(os.Stderr, "galewatch faultpoint %s released\n", name)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
