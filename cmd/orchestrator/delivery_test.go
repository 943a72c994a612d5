package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/clock"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// orchestrators runs the scenario on real orchestrator processes (the
// built binary) sharing one test database and one clock file: `serves`
// serve processes and `works` work processes, all working the same River
// queues. It is a pipelinetest.Driver; send is how a delivery is sent.
type orchestrators struct {
	bin, dir, clockFile string
	env                 *testdb.Env
	environ             []string
	serves, works       int
	urls                []string
	send                func(t testing.TB, k int, d pipelinetest.Delivery) []ingest.Summary
	ctx                 context.Context
}

func newOrchestrators(t *testing.T, bin string, serves, works int) *orchestrators {
	t.Helper()
	env := testdb.New(t, pipelinetest.Fleet)
	dir := t.TempDir()
	o := &orchestrators{bin: bin, dir: dir, clockFile: filepath.Join(dir, "clock"), env: env, serves: serves, works: works}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, server.TokenEnv+"=") && !strings.HasPrefix(kv, clock.FileEnv+"=") {
			o.environ = append(o.environ, kv)
		}
	}
	o.environ = append(o.environ, "DATABASE_URL="+env.ControlDSN, clock.FileEnv+"="+o.clockFile)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	o.ctx = ctx
	return o
}

// start runs `orchestrator args...` until the test ends (interrupted, then
// waited for); its stderr is shown if the test fails. It returns the
// process's stdout lines.
func (o *orchestrators) start(t testing.TB, name string, args ...string) <-chan string {
	t.Helper()
	cmd := exec.Command(o.bin, args...)
	cmd.Env = o.environ
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	testdb.Must(t, err, "%s: stdout", name)
	testdb.Must(t, cmd.Start(), "start %s", name)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, stderr.String())
		}
	})
	return lines
}

// Start writes the clock and starts the processes; it returns once their
// leader has run what it runs on start and published the windows due.
func (o *orchestrators) Start(t testing.TB, at time.Time) {
	t.Helper()
	o.SetClock(t, at)
	for i := 0; i < o.serves; i++ {
		lines := o.start(t, fmt.Sprintf("serve %d", i+1), "serve", "--addr", "127.0.0.1:0", "--drain-every", "500ms", "--publish-every", "500ms")
		select {
		case line := <-lines:
			_, after, ok := strings.Cut(line, "serving on ")
			if !ok {
				t.Fatalf("serve %d printed %q before its address", i+1, line)
			}
			o.urls = append(o.urls, strings.Fields(after)[0])
		case <-time.After(60 * time.Second):
			t.Fatalf("serve %d did not print its address within 60 s", i+1)
		}
	}
	for i := 0; i < o.works; i++ {
		o.start(t, fmt.Sprintf("work %d", i+1), "work", "--drain-every", "500ms", "--publish-every", "500ms")
	}
	pipelinetest.WaitSettled(t, o.env, at, pipelinetest.WaitOptions{Startup: true})
}

func (o *orchestrators) SetClock(t testing.TB, at time.Time) {
	t.Helper()
	testdb.Must(t, clock.Write(o.clockFile, at), "write the clock")
}

func (o *orchestrators) Published(t testing.TB, at time.Time) {
	t.Helper()
	pipelinetest.WaitSettled(t, o.env, at, pipelinetest.WaitOptions{PublishedOnly: true})
}

func (o *orchestrators) Settle(t testing.TB, at time.Time) {
	t.Helper()
	pipelinetest.WaitSettled(t, o.env, at, pipelinetest.WaitOptions{})
}

func (o *orchestrators) Deliver(t testing.TB, k int, d pipelinetest.Delivery) []ingest.Summary {
	t.Helper()
	return o.send(t, k, d)
}

// Close runs `work --until-idle` at the clock: the day's close.
func (o *orchestrators) Close(t testing.TB, at time.Time) {
	t.Helper()
	o.SetClock(t, at)
	out, err := o.run("work", "--until-idle", "--drain-every", "500ms", "--publish-every", "500ms")
	testdb.Must(t, err, "work --until-idle: %s", out)
	pipelinetest.WaitSettled(t, o.env, at, pipelinetest.WaitOptions{})
}

// run runs `orchestrator args...` to its end and returns its stdout.
func (o *orchestrators) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(o.ctx, testdb.Hang)
	defer cancel()
	cmd := exec.CommandContext(ctx, o.bin, args...)
	cmd.Env = o.environ
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("orchestrator %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// ingestFile runs `orchestrator ingest --json FILE` and returns its summary.
func (o *orchestrators) ingestFile(path string) (ingest.Summary, error) {
	out, err := o.run("ingest", "--json", path)
	if err != nil {
		return ingest.Summary{}, err
	}
	var sum ingest.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		return sum, fmt.Errorf("ingest --json printed %q: %w", out, err)
	}
	return sum, nil
}

// post sends an NDJSON body to a serve process's POST /v1/readings.
func (o *orchestrators) post(url string, body []byte) (ingest.Summary, error) {
	resp, err := http.Post(url+"/v1/readings", "application/x-ndjson", bytes.NewReader(body))
	if err != nil {
		return ingest.Summary{}, err
	}
	defer resp.Body.Close()
	var sum ingest.Summary
	if err := json.NewDecoder(resp.Body).Decode(&sum); err != nil {
		return sum, fmt.Errorf("POST /v1/readings: status %d: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return sum, fmt.Errorf("POST /v1/readings: status %d: %+v", resp.StatusCode, sum)
	}
	return sum, nil
}

// all runs the senders at once and returns their summaries.
func all(t testing.TB, k int, senders ...func() (ingest.Summary, error)) []ingest.Summary {
	t.Helper()
	sums := make([]ingest.Summary, len(senders))
	errs := make([]error, len(senders))
	var wg sync.WaitGroup
	for i, send := range senders {
		wg.Add(1)
		go func() { defer wg.Done(); sums[i], errs[i] = send() }()
	}
	wg.Wait()
	for i, err := range errs {
		testdb.Must(t, err, "delivery %d, sender %d", k, i+1)
	}
	return sums
}

// checkJobs fails when a River job of the run failed an attempt, was
// discarded or cancelled.
func (o *orchestrators) checkJobs(t testing.TB) {
	t.Helper()
	rows, err := o.env.Control.Query(context.Background(), `
		SELECT format('%s %s %s attempt %s: %s', id, kind, state, attempt, errors) FROM river_job
		WHERE cardinality(errors) > 0 OR state IN ('discarded', 'cancelled') ORDER BY id`)
	testdb.Must(t, err, "river jobs")
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var s string
		testdb.Must(t, rows.Scan(&s), "scan")
		bad = append(bad, s)
	}
	if len(bad) > 0 {
		t.Fatalf("%d River job(s) with errors, discarded or cancelled, want none:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	var jobs int64
	testdb.Must(t, o.env.Control.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'rollup_day'`).Scan(&jobs), "count")
	t.Logf("%d rollup_day jobs, none with an error", jobs)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestEveryDeliveryThreeTimesAtOnce is at-least-once delivery through the
// real binary: with a `serve` and a `work` process running the pipeline on
// the scenario's clock (both working the same River queues), every
// delivery is sent three times at once — `orchestrator ingest` of the same
// file by two processes, and POST /v1/readings to the server. Each reading
// is stored once and counted a duplicate exactly twice, no River job
// fails, and the outcome is the clean run's, row for row (windows fast and
// final with their revisions, turbine_day, reconciliation, alerts): with
// deliveries sent once the work due is done, which process did it changes
// nothing.
func TestEveryDeliveryThreeTimesAtOnce(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	want := pipelinetest.Clean(t)
	sc := pipelinetest.NewScenario(t)
	o := newOrchestrators(t, bin, 1, 1)
	o.send = func(t testing.TB, k int, d pipelinetest.Delivery) []ingest.Summary {
		file := filepath.Join(o.dir, fmt.Sprintf("delivery-%d.ndjson", k))
		testdb.Must(t, os.WriteFile(file, d.Body, 0o644), "write delivery")
		return all(t, k,
			func() (ingest.Summary, error) { return o.ingestFile(file) },
			func() (ingest.Summary, error) { return o.ingestFile(file) },
			func() (ingest.Summary, error) { return o.post(o.urls[0], d.Body) })
	}
	o.play(t, sc, false, 3, want.Outcome, pipelinetest.AllSections, "three deliveries at once")
}

// TestSeveralOrchestrators runs two `serve` processes and a `work` process
// on the same databases and River queues while the scenario's data arrives
// (each delivery split between the servers, sent at once, while the
// previous delivery's corrections still run): no River job fails, every
// window is published once by the fast path (the fast rows are the clean
// run's: same windows, counts and publication times), and the turbine_day
// rows, final windows, reconciliation and alerts count what the clean run
// counts (their revisions depend on timing here: a correction may take two
// deliveries' marks at once). One serve and one work with deliveries sent
// once the work is done, row for row with revisions, is
// TestEveryDeliveryThreeTimesAtOnce.
func TestSeveralOrchestrators(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	want := pipelinetest.Clean(t)
	sc := pipelinetest.NewScenario(t)
	o := newOrchestrators(t, bin, 2, 1)
	o.send = func(t testing.TB, k int, d pipelinetest.Delivery) []ingest.Summary {
		var senders []func() (ingest.Summary, error)
		for i, part := range d.Lines(2) {
			url := o.urls[i%len(o.urls)]
			senders = append(senders, func() (ingest.Summary, error) { return o.post(url, part) })
		}
		return all(t, k, senders...)
	}
	o.play(t, sc, true, 1, want.Outcome, pipelinetest.Counts, "2 serve and 1 work processes")
}

// play plays sc through the processes (overlap as pipelinetest.Play's)
// and fails unless each delivery's copies account for every reading, no
// River job failed, and the outcome is want over sections.
func (o *orchestrators) play(t *testing.T, sc pipelinetest.Scenario, overlap bool, copies int, want pipelinetest.Outcome, sections []string, what string) {
	t.Helper()
	for k, s := range pipelinetest.Play(t, o, sc, overlap) {
		pipelinetest.CheckDelivered(t, k, sc.Deliveries[k], copies, s)
	}
	o.checkJobs(t)
	if diff := pipelinetest.Read(t, o.env.Control).Diff(want, sections...); diff != "" {
		t.Fatalf("%s left a different outcome from the clean run:\n%s", what, diff)
	}
}
