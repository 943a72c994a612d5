//go:build soak

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/soak"
	"github.com/galewatch/galewatch/internal/testdb"
)

// soakMove is the move the soak runs beside its live feed and replay: an
// operator's `fleet apply` giving the first live farm's first turbines the
// next shard, worked by serve's move_turbine jobs while their readings
// keep arriving at 2 s.
type soakMove struct {
	rep      *soak.MoveReport
	turbines []string
	out      bytes.Buffer
	err      error
	done     chan struct{}
}

// startSoakMove writes the moved fleet file and applies it at `at`, in the
// background; not at all, or cut short, once ctx ends.
func startSoakMove(t *testing.T, ctx context.Context, bin string, sep *testdb.Separate, fl *soak.Fleet, n int, at time.Time) *soakMove {
	t.Helper()
	f := &fl.Farms[0]
	from := f.Shards[0]
	to := fl.Shards[(slices.Index(fl.Shards, from)+1)%len(fl.Shards)]
	file := filepath.Join(t.TempDir(), "soak-fleet-moved.yaml")
	// The file as the operator keeps it: each shard's dsn as applied (a
	// shard without one is the control server's, and apply refuses that).
	yaml := fl.Moving(0, n, to).YAML()
	for _, s := range sep.Plan.Shards {
		yaml = strings.Replace(yaml, "  - name: "+s.Name+"\n", "  - name: "+s.Name+"\n    dsn: '"+s.DSN+"'\n", 1)
	}
	testdb.Must(t, os.WriteFile(file, []byte(yaml), 0o644), "moved fleet file")
	m := &soakMove{rep: &soak.MoveReport{Farm: f.ID, From: from, To: to, Turbines: n}, done: make(chan struct{})}
	for i := 1; i <= n; i++ {
		m.turbines = append(m.turbines, f.TurbineID(i))
	}
	go func() {
		defer close(m.done)
		timer := time.NewTimer(time.Until(at))
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			m.err = context.Cause(ctx)
			return
		}
		m.rep.Applied = time.Now()
		cmd := exec.CommandContext(ctx, bin, "fleet", "apply", file)
		cmd.Env = orchEnv(sep.ControlDSN)
		cmd.Stdout, cmd.Stderr = &m.out, &m.out
		m.err = cmd.Run()
		m.rep.ApplyTook = time.Since(m.rep.Applied)
	}()
	return m
}

// wait waits for the apply, then until no move is open or the deadline
// passes; it fills the report from turbine_move.
func (m *soakMove) wait(t *testing.T, ctx context.Context, sep *testdb.Separate, deadline time.Time) {
	t.Helper()
	<-m.done
	for {
		stillOn(t, ctx, "waiting for the moves")
		var open int64
		var last *time.Time
		testdb.Must(t, sep.Control.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE state <> 'done'), max(finished_at),
			coalesce(sum(rows_copied), 0), coalesce(sum(rows_caught_up), 0), coalesce(sum(rows_verified), 0), coalesce(sum(rows_deleted), 0)
			FROM turbine_move`).Scan(&open, &last, &m.rep.Copied, &m.rep.CaughtUp, &m.rep.Verified, &m.rep.Deleted), "turbine_move")
		if open == 0 && last != nil {
			m.rep.Done = *last
			return
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Second)
	}
}

// checkMove: the apply queued every move, each ended, and the moved
// turbines' readings are all on the new shard, exactly once: what the
// sender sent them over the live feed. The live windows' counts (checked
// with every farm's) say the rollups read the right rows.
func checkMove(t *testing.T, rep *soak.Report, sep *testdb.Separate, m *soakMove) {
	t.Helper()
	ctx := context.Background()
	mr := m.rep
	n := int64(mr.Turbines)
	queued := strings.Count(m.out.String(), " queued;")
	rep.Check("move: fleet apply exits 0 and queues one move per moved turbine", m.err == nil && queued == mr.Turbines,
		fmt.Sprintf("exit 0, %d queued", mr.Turbines), "%v, %d queued (%q)", m.err, queued, lastLines(m.out.String(), 3))
	var done, failed, onNew int64
	testdb.Must(t, sep.Control.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'done'), count(*) FILTER (WHERE last_error IS NOT NULL)
		FROM turbine_move WHERE turbine_id = ANY($1)`, m.turbines).Scan(&done, &failed), "turbine_move")
	testdb.Must(t, sep.Control.QueryRow(ctx, `SELECT count(*) FROM turbine WHERE id = ANY($1) AND shard_name = $2`, m.turbines, mr.To).Scan(&onNew), "turbine")
	rep.Check("move: moves done, none with an error, the turbines on the new shard", done == n && failed == 0 && onNew == n,
		fmt.Sprintf("%d done, 0 errors, %d on %s", n, n, mr.To), "%d done, %d errors, %d on %s", done, failed, onNew, mr.To)
	perTurbine := int64(rep.LiveTo.Sub(rep.LiveFrom) / soak.Cadence)
	left := testdb.Int(t, sep.Shards.Pool(mr.From), `SELECT count(*) FROM readings WHERE turbine_id = ANY($1)`, m.turbines)
	there := testdb.Int(t, sep.Shards.Pool(mr.To), `SELECT count(*) FROM readings WHERE turbine_id = ANY($1)`, m.turbines)
	rep.Check("move: the moved turbines' readings on the old shard / the new (every one sent, once)", left == 0 && there == n*perTurbine,
		fmt.Sprintf("0 / %d", n*perTurbine), "%d / %d", left, there)
	rep.Check("move: readings copied + caught up = verified = deleted", mr.Copied+mr.CaughtUp == mr.Verified && mr.Verified == mr.Deleted && mr.Verified > 0,
		"equal, > 0", "%d + %d, %d, %d", mr.Copied, mr.CaughtUp, mr.Verified, mr.Deleted)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
