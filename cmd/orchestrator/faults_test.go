//go:build faults || soak

// The fault tests (make test-faults): the real orchestrator binary as
// subprocesses, the control database and each shard on a Postgres server of
// its own (testdb.NewSeparate), and faults made to those processes: kill -9,
// a server stopped, a server hung (SIGSTOP), the control database
// restarted. Each compares the final counts with a clean run of the same
// simulated data. They wait on real events (a line a process prints, a
// job's state, a process exit), never on a fixed sleep, and they run one at
// a time: the servers are shared, and a test stops them.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// faultFleet: farm fa over two shards, farm fb on a third, 30 s cadence (2
// slots a 60 s window, 2,880 a day), FA-002 stopped in the data.
const faultFleet = `
shards:
  - name: s1
  - name: s2
  - name: s3
farms:
  - id: fa
    name: Farm A
    timezone: Europe/London
    cadence_seconds: 30
    turbines:
      - {prefix: FA-, from: 1, to: 3, shard: s1}
      - {prefix: FA-, from: 4, to: 6, shard: s2}
  - id: fb
    name: Farm B
    timezone: America/Chicago
    cadence_seconds: 30
    turbines:
      - {prefix: FB-, from: 1, to: 3, shard: s3}
`

const faultSeed = 11

// faultBinary is the orchestrator binary the fault tests run (buildBinary's).
// faultRun is what a fault test on servers of its own starts from: the
// binary, the day's data and the rows a clean run leaves of it, the
// servers (control and shards, each a cluster that can be stopped) and the
// environment of a process on them.
type faultRun struct {
	bin   string
	day   localday.Date
	file  string
	total int64
	want  finals
	sep   *testdb.Separate
	env   []string
}

func newFaultRun(t *testing.T) faultRun {
	t.Helper()
	f := faultRun{bin: faultBinary(t), day: faultDay()}
	f.file, f.total = dayData(t, f.day)
	f.want = cleanFinals(t, f.file, f.day)
	f.sep = testdb.NewSeparate(t, faultFleet)
	f.env = orchEnv(f.sep.ControlDSN)
	return f
}

func faultBinary(t *testing.T) string { t.Helper(); return buildBinary(t) }

// faultDay is the simulated farm-local day: three days ago, long ended.
func faultDay() localday.Date {
	return localday.DateOf(time.Now().UTC().AddDate(0, 0, -3))
}

// dayData writes the day's readings of every farm of faultFleet (skewed
// clocks, simulate.DefaultDelay's delay mixture, FA-002 stopped) to an NDJSON file
// and returns its path and line count.
func dayData(t *testing.T, day localday.Date) (string, int64) {
	t.Helper()
	plan, err := fleet.Parse("faults", strings.NewReader(faultFleet))
	testdb.Must(t, err, "parse fleet")
	path := filepath.Join(t.TempDir(), "day.ndjson")
	f, err := os.Create(path)
	testdb.Must(t, err, "create data file")
	defer f.Close()
	enc := reading.NewEncoder(reading.NDJSON, f)
	var lines int64
	for _, farm := range plan.Farms {
		loc, err := time.LoadLocation(farm.Timezone)
		testdb.Must(t, err, "zone")
		from, to := localday.Bounds(day, loc)
		cfg, err := simulate.FarmConfig(plan, farm.ID, from, to, faultSeed)
		testdb.Must(t, err, "simulate %s", farm.ID)
		if farm.ID == "fa" {
			cfg.Stopped = []string{"FA-002"}
		}
		st, err := simulate.Generate(cfg, func(r *reading.Reading) error { return enc.Encode(r) })
		testdb.Must(t, err, "generate %s", farm.ID)
		lines += st.Readings
	}
	testdb.Must(t, enc.Flush(), "flush")
	return path, lines
}

// finals are the rows a clean run and a faulted one must agree on: every
// turbine_day row and every final farm_window row, as text. The data's day
// and the days its skewed clocks reach into, and yesterday, which each
// start of serve or work --until-idle rolls up (nothing received).
type finals struct {
	TurbineDays []string
	Windows     []string
	// Totals per farm: expected, received, available over the day.
	Totals map[string][3]int64
}

func readFinals(t *testing.T, control *pgxpool.Pool, day localday.Date) finals {
	t.Helper()
	ctx := context.Background()
	collect := func(sql string) []string {
		rows, err := control.Query(ctx, sql, day.UTC())
		testdb.Must(t, err, "%s", sql)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		testdb.Must(t, err, "%s", sql)
		return out
	}
	f := finals{Totals: map[string][3]int64{}}
	f.TurbineDays = collect(`SELECT concat_ws(' ', day, turbine_id, farm_id, shard_name, expected, received, available, late, early,
	       beyond_cadence, out_of_service, min_lag_ms, max_lag_ms, to_char(last_received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), silent_hours)
	FROM turbine_day WHERE $1::date IS NOT NULL ORDER BY day, turbine_id`)
	f.Windows = collect(`SELECT concat_ws(' ', farm_id, to_char(window_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'),
	       to_char(window_end AT TIME ZONE 'UTC', 'HH24:MI:SS'), expected, received, available, late, readings)
	FROM farm_window WHERE path = 'final' AND $1::date IS NOT NULL AND window_start < '` + finalsBefore.Format(time.RFC3339) + `'
	ORDER BY farm_id, window_start`)
	rows, err := control.Query(ctx, `SELECT farm_id, sum(expected)::bigint, sum(received)::bigint, sum(available)::bigint FROM turbine_day WHERE day = $1 GROUP BY farm_id`, day.UTC())
	testdb.Must(t, err, "totals")
	for rows.Next() {
		var farm string
		var e, r, a int64
		testdb.Must(t, rows.Scan(&farm, &e, &r, &a), "scan totals")
		f.Totals[farm] = [3]int64{e, r, a}
	}
	testdb.Must(t, rows.Err(), "totals")
	return f
}

// assertSameFinals fails with the first rows that differ.
func assertSameFinals(t *testing.T, got, want finals) {
	t.Helper()
	diff := func(what string, g, w []string) {
		t.Helper()
		if slices.Equal(g, w) {
			return
		}
		for i := 0; i < max(len(g), len(w)); i++ {
			var gi, wi string
			if i < len(g) {
				gi = g[i]
			}
			if i < len(w) {
				wi = w[i]
			}
			if gi != wi {
				t.Fatalf("%s: %d rows, the clean run %d; first difference at row %d:\n  got   %q\n  clean %q", what, len(g), len(w), i, gi, wi)
			}
		}
	}
	diff("turbine_day", got.TurbineDays, want.TurbineDays)
	diff("farm_window final", got.Windows, want.Windows)
	if fmt.Sprint(got.Totals) != fmt.Sprint(want.Totals) {
		t.Fatalf("totals %v, the clean run %v", got.Totals, want.Totals)
	}
}

var (
	cleanOnce sync.Once
	clean     finals
	// finalsBefore leaves out of the comparison the windows of the last
	// half hour, where some tests send live readings the clean run has not.
	finalsBefore = time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Minute)
)

// cleanFinals is the clean run of the day's data: the same binary's
// ingest, then `work --until-idle`, on databases of the default cluster,
// nothing faulted. Computed once, by the first test that asks.
func cleanFinals(t *testing.T, file string, day localday.Date) finals {
	t.Helper()
	cleanOnce.Do(func() {
		env := testdb.New(t, faultFleet)
		bin := faultBinary(t)
		vars := orchEnv(env.ControlDSN)
		sum := ingestCLI(t, bin, vars, file)
		if sum.Failed != 0 || sum.Rejected != 0 {
			t.Fatalf("clean run: ingest %+v", sum)
		}
		out, code := runCLI(t, bin, vars, "work", "--until-idle")
		if code != 0 {
			t.Fatalf("clean run: work --until-idle exited %d:\n%s", code, out)
		}
		clean = readFinals(t, env.Control, day)
		if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_day WHERE day = $1`, day.UTC()); n != 9 {
			t.Fatalf("clean run: %d turbine_day rows of %s, want 9", n, day)
		}
		t.Logf("clean run: totals %v, %d final windows", clean.Totals, len(clean.Windows))
	})
	if clean.Totals == nil {
		t.Fatal("the clean run failed in an earlier test")
	}
	return clean
}

// orchEnv is the environment of an orchestrator subprocess on control dsn.
func orchEnv(controlDSN string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "GALEWATCH_FAULTPOINT=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "DATABASE_URL="+controlDSN), extra...)
}

// runCLI runs the binary to its end and returns its output and exit code.
func runCLI(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	testdb.Must(t, err, "orchestrator %v", args)
	return out.String(), 0
}

// ingestCLI runs `orchestrator ingest --json file` and returns its summary.
func ingestCLI(t *testing.T, bin string, env []string, file string) ingest.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "ingest", "--json", file)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	var sum ingest.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("ingest --json printed %q (stderr %q): %v", stdout.String(), stderr.String(), err)
	}
	return sum
}

// orchestrator is a running `orchestrator serve` (or other command) whose
// output lines the test can wait for.
type orchestrator struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string // serve's http://host:port
	mu     sync.Mutex
	lines  []string
	notify chan struct{} // closed at each new line, then replaced
	exited chan struct{}
}

// serveProc starts `orchestrator serve` on a free loopback port with extra
// environment, and returns once it listens.
func serveProc(t *testing.T, bin string, env []string, args ...string) *orchestrator {
	t.Helper()
	o := startProcess(t, bin, env, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	line := o.waitFor("serving on ", 2*time.Minute)
	_, after, _ := strings.Cut(line, "serving on ")
	o.base = strings.Fields(after)[0]
	return o
}

func startProcess(t *testing.T, bin string, env []string, args ...string) *orchestrator {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	testdb.Must(t, err, "stdout")
	stderr, err := cmd.StderrPipe()
	testdb.Must(t, err, "stderr")
	testdb.Must(t, cmd.Start(), "start %v", args)
	o := &orchestrator{t: t, cmd: cmd, notify: make(chan struct{}), exited: make(chan struct{})}
	var wg sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		wg.Go(func() {
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				o.mu.Lock()
				o.lines = append(o.lines, sc.Text())
				close(o.notify)
				o.notify = make(chan struct{})
				o.mu.Unlock()
			}
		})
	}
	go func() {
		wg.Wait()
		_ = cmd.Wait()
		close(o.exited)
	}()
	t.Cleanup(func() {
		o.interrupt()
		if t.Failed() {
			o.dump(60)
		}
	})
	return o
}

// waitFor returns the first line containing substr, waiting up to within;
// it fails the test if the process exits or time runs out first.
func (o *orchestrator) waitFor(substr string, within time.Duration) string {
	o.t.Helper()
	deadline := time.After(within)
	seen := 0
	for {
		o.mu.Lock()
		for ; seen < len(o.lines); seen++ {
			if strings.Contains(o.lines[seen], substr) {
				line := o.lines[seen]
				o.mu.Unlock()
				return line
			}
		}
		notify := o.notify
		o.mu.Unlock()
		select {
		case <-notify:
		case <-o.exited:
			o.dump(40)
			o.t.Fatalf("%v exited (%v) before printing %q", o.cmd.Args[1:], o.cmd.ProcessState, substr)
		case <-deadline:
			o.dump(40)
			o.t.Fatalf("%v did not print %q within %v", o.cmd.Args[1:], substr, within)
		}
	}
}

// count says how many lines so far contain substr.
func (o *orchestrator) count(substr string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, l := range o.lines {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

func (o *orchestrator) dump(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	from := max(0, len(o.lines)-n)
	o.t.Logf("last %d lines of %v:\n%s", len(o.lines)-from, o.cmd.Args[1:], strings.Join(o.lines[from:], "\n"))
}

// kill9 kills the process with SIGKILL and waits until it is gone.
func (o *orchestrator) kill9() {
	o.t.Helper()
	_ = o.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-o.exited:
	case <-time.After(30 * time.Second):
		o.t.Fatal("process did not exit within 30 s of SIGKILL")
	}
}

// interrupt stops the process as ^C does and waits (killing it after 30 s).
func (o *orchestrator) interrupt() {
	select {
	case <-o.exited:
		return
	default:
	}
	_ = o.cmd.Process.Signal(os.Interrupt)
	select {
	case <-o.exited:
	case <-time.After(30 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.exited
	}
}

// get fetches path from serve within within and returns the status and body.
func (o *orchestrator) get(path string, within time.Duration) (int, []byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.base+path, nil)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, time.Since(start), err
}

// settled says whether nothing is left to do for the day's data: no
// rollup_day job unfinished, no recompute request, no mark on any shard.
func settled(ctx context.Context, sep *testdb.Separate) (bool, string) {
	var jobs, pending int64
	if err := sep.Control.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'rollup_day' AND river_state_unfinished(state::text)`).Scan(&jobs); err != nil {
		return false, err.Error()
	}
	if err := sep.Control.QueryRow(ctx, `SELECT count(*) FROM rollup_pending`).Scan(&pending); err != nil {
		return false, err.Error()
	}
	if jobs+pending > 0 {
		return false, fmt.Sprintf("%d rollup_day job(s) unfinished, %d request(s) pending", jobs, pending)
	}
	for _, name := range sep.Shards.Names() {
		var marks, windows int64
		pool := sep.Shards.Pool(name)
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM dirty_mark), (SELECT count(*) FROM dirty_window)`).Scan(&marks, &windows); err != nil {
			return false, fmt.Sprintf("shard %s: %v", name, err)
		}
		if marks+windows > 0 {
			return false, fmt.Sprintf("shard %s: %d dirty mark(s), %d dirty window(s)", name, marks, windows)
		}
	}
	return true, ""
}

// waitSettled polls until settled (every 200 ms, up to within), then waits
// for the turbine_day rows of the day: every one of the fleet's 9 turbines.
func waitSettled(t *testing.T, sep *testdb.Separate, day localday.Date, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	ctx := context.Background()
	last := ""
	for time.Since(start) < within {
		ok, why := settled(ctx, sep)
		if ok {
			var rows int64
			_ = sep.Control.QueryRow(ctx, `SELECT count(*) FROM turbine_day WHERE day = $1`, day.UTC()).Scan(&rows)
			if rows == 9 {
				return time.Since(start)
			}
			why = fmt.Sprintf("%d turbine_day rows of %s", rows, day)
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	var stuck []string
	rows, err := sep.Control.Query(ctx, `SELECT format('%s %s %s attempt %s by %s at %s', id, kind, state, attempt, attempted_by, attempted_at) FROM river_job WHERE river_state_unfinished(state::text) ORDER BY id`)
	if err == nil {
		stuck, _ = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	t.Fatalf("not settled within %v: %s; unfinished jobs:\n  %s", within, last, strings.Join(stuck, "\n  "))
	return 0
}

// fastRows is every fast farm_window row: window → its values and when it
// was published.
func fastRows(t *testing.T, control *pgxpool.Pool) map[string]string {
	t.Helper()
	rows, err := control.Query(context.Background(), `SELECT farm_id || ' ' || window_start::text,
	       concat_ws(' ', expected, received, available, late, readings, computed_at)
	FROM farm_window WHERE path = 'fast'`)
	testdb.Must(t, err, "fast rows")
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		testdb.Must(t, rows.Scan(&k, &v), "scan")
		out[k] = v
	}
	testdb.Must(t, rows.Err(), "fast rows")
	return out
}

// assertFastPublishedOnce checks that no window has two fast rows and that
// every fast row in before is still there, unchanged (published once,
// never rewritten).
func assertFastPublishedOnce(t *testing.T, control *pgxpool.Pool, before map[string]string) map[string]string {
	t.Helper()
	if n := testdb.Int(t, control, `SELECT count(*) FROM (SELECT 1 FROM farm_window WHERE path = 'fast' GROUP BY farm_id, window_start HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d windows have more than one fast row", n)
	}
	after := fastRows(t, control)
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("fast row %s was %q before the fault and is %q after: a fast row is published once, never rewritten", k, v, after[k])
		}
	}
	return after
}

// assertContiguousFast checks that each farm's fast windows, from its first
// to its last, leave no window out, and returns how many there are.
func assertContiguousFast(t *testing.T, control *pgxpool.Pool) int64 {
	t.Helper()
	gaps := testdb.Int(t, control, `SELECT count(*) FROM (
	    SELECT window_start, lag(window_end) OVER (PARTITION BY farm_id ORDER BY window_start) AS prev_end
	    FROM farm_window WHERE path = 'fast') w
	WHERE prev_end IS NOT NULL AND prev_end <> window_start`)
	if gaps != 0 {
		t.Fatalf("%d gaps between fast windows: a window was never published", gaps)
	}
	return testdb.Int(t, control, `SELECT count(*) FROM farm_window WHERE path = 'fast'`)
}
