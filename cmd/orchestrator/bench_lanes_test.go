package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/demo"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// BenchmarkLanes (make bench-lanes): does the live lane
// wait? A live sender posts a 300-reading body of fresh readings (75 on each
// of the four shards, received_at stamped on arrival) every second to
// serve's ingest handler (its defaults: ingest.DefaultConfig, --max-bodies
// 64, 12 connections a shard), alone, then beside a backfill ingested at full
// speed by:
//
//	http       two HTTP senders posting a held-back half-day of Kilmore Sands
//	           (3,024,000 rows on s4, received 6 h after its end: backfill
//	           lane) in 50,000-line CSV bodies to the same server
//	cli        `orchestrator ingest FILE` of the same file (the built binary:
//	           a process of its own, as an operator runs it)
//	in-process the same file through the same pipeline's Ingestor, in-process
//	           (no HTTP)
//	story      the demo's path: the Ardnave Saturday's day phase
//	           (internal/demo Story.Phase, 9,963,000 readings over s1-s3 with
//	           their own received_at: most live by their lag, delivered days
//	           late), in-process through the same Ingestor, as `make run` does
//
// Each prints the live bodies' time to acknowledgement (p50/p99/max, nearest
// rank) beside the same figures alone (the floor) and the p99's ratio to it,
// and the backfill's rows/s beside the floor `psql \copy` of the same file
// into s4, measured just before each case, and their ratio. Target (printed, not
// asserted): live p99 <= 500 ms beside each. BENCH_LANES_CASES (comma list)
// runs some of the cases only.
func BenchmarkLanes(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchLanes(b)
	}
}

const liveTarget = 500 * time.Millisecond

func benchLanes(b *testing.B) {
	ctx := context.Background()
	report := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		fmt.Println(msg)
		b.Log(msg)
	}
	cases := map[string]bool{"http": true, "cli": true, "in-process": true, "story": true}
	if v := os.Getenv("BENCH_LANES_CASES"); v != "" {
		cases = map[string]bool{}
		for _, c := range strings.Split(v, ",") {
			cases[strings.TrimSpace(c)] = true
		}
	}
	bin := ""
	if cases["cli"] {
		bin = buildBinary(b)
	}
	env := testdb.New(b, testdb.ArdnaveFleet)
	var version string
	testdb.Must(b, env.Control.QueryRow(ctx, `SHOW server_version`).Scan(&version), "version")
	report("machine: %d CPUs, %s, Postgres %s, load average %s", runtime.NumCPU(), runtime.Version(), version, loadavg())

	// serve's pipeline on the wall clock, and its ingest endpoint.
	m := &Main{Config: testConfig(env), Now: time.Now}
	defer m.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the routes' refresh, before the pools close
	in, err := m.Ingestor(ctx)
	testdb.Must(b, err, "ingestor")
	defer in.Close()
	srv := httptest.NewServer(ingest.NewHandler(in, 64<<20, ingest.DefaultMaxBodies))
	defer srv.Close()

	// The held-back half-day: Kilmore Sands 00:00-12:00 local three days
	// ago, received 6 h after its end.
	dublin, _ := time.LoadLocation("Europe/Dublin")
	y, mo, d := time.Now().In(dublin).AddDate(0, 0, -3).Date()
	from := time.Date(y, mo, d, 0, 0, 0, 0, dublin)
	file, bodies, rows := writeHeldBack(b, env, from, from.Add(12*time.Hour), b.TempDir())
	truncate := func(shards ...string) {
		for _, s := range shards {
			testdb.Exec(b, env.Shards.Pool(s), `TRUNCATE readings, dirty_mark, dirty_window`)
			testdb.Exec(b, env.Shards.Pool(s), `CHECKPOINT`)
		}
	}

	// Floor: psql \copy of the same file into s4, measured before each
	// case (the machine's load moves between them).
	for _, day := range []time.Time{from.AddDate(0, 0, -1), from, from.AddDate(0, 0, 1)} {
		testdb.Exec(b, env.Shards.Pool("s4"), `SELECT readings_ensure_partition($1)`, day.UTC())
	}
	floor := func() float64 {
		start := time.Now()
		cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", env.Shards.Pool("s4").Config().ConnString(),
			"-c", `\copy readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state) FROM '`+file+`' WITH (FORMAT csv, HEADER true)`)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("psql \\copy: %v: %s", err, out)
		}
		rate := float64(rows) / time.Since(start).Seconds()
		truncate("s4")
		return rate
	}

	live := &liveSender{url: srv.URL, env: env}
	alone := live.run(func() { time.Sleep(30 * time.Second) })
	report("live   alone:        %s", alone)

	type backfill struct {
		name   string
		shards []string
		run    func() int64 // rows
	}
	all := []backfill{
		{"http", []string{"s4"}, func() int64 { return postBodies(b, srv.URL, file, bodies, 2) }},
		{"cli", []string{"s4"}, func() int64 {
			cmd := exec.Command(bin, "ingest", "--json", file)
			cmd.Env = append(os.Environ(), "DATABASE_URL="+env.ControlDSN)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), fmt.Sprintf(`"accepted":%d`, rows)) {
				b.Fatalf("orchestrator ingest: %v\n%s", err, out)
			}
			return rows
		}},
		{"in-process", []string{"s4"}, func() int64 {
			f, err := os.Open(file)
			testdb.Must(b, err, "open")
			defer f.Close()
			dec, err := reading.NewDecoder(reading.CSV, bufio.NewReaderSize(f, 1<<20))
			testdb.Must(b, err, "decoder")
			sum, err := in.Ingest(ctx, "bench:in-process", dec)
			if err != nil || sum.Accepted != rows {
				b.Fatalf("in-process ingest: %+v %v", sum, err)
			}
			return rows
		}},
		{"story", []string{"s1", "s2", "s3"}, func() int64 {
			london, _ := time.LoadLocation("Europe/London")
			story, err := demo.NewStory(env.Plan, demo.DefaultSaturday(time.Now(), london), 1)
			testdb.Must(b, err, "story")
			sum, err := story.Phase(ctx, in, simulate.PhaseDay, time.Now(), nil)
			if err != nil || sum.Accepted != story.DayReadings {
				b.Fatalf("story day phase: %+v %v", sum, err)
			}
			report("         story day phase: %d accepted, %d live lane, %d backfill lane", sum.Accepted, sum.Live, sum.Backfill)
			return sum.Accepted
		}},
	}
	for _, c := range all {
		if !cases[c.name] {
			continue
		}
		floorRate := floor()
		report("floor  psql \\copy of the held-back half-day into s4 (%d rows): %.0f rows/s", rows, floorRate)
		var n int64
		var took time.Duration
		load := loadavg()
		res := live.run(func() {
			start := time.Now()
			n = c.run()
			took = time.Since(start)
		})
		rate := float64(n) / took.Seconds()
		report("beside %-11s live %s  p99/alone %.2f  target p99 <= %d ms: %s", c.name+":", res, ratio(res.p99, alone.p99), liveTarget.Milliseconds(), verdict(res.p99 <= liveTarget))
		report("         backfill %d rows in %.1f s: %.0f rows/s, ratio to the floor %.2f  (load average before %s, after %s)",
			n, took.Seconds(), rate, rate/floorRate, load, loadavg())
		truncate(c.shards...)
	}
}

// liveSender posts a fresh 300-reading body every second.
type liveSender struct {
	url string
	env *testdb.Env
	ids []string
}

// liveResult is one run's times to acknowledgement.
type liveResult struct {
	n, failed     int
	p50, p99, max time.Duration
}

func (r liveResult) String() string {
	return fmt.Sprintf("p50 %4d ms  p99 %4d ms  max %4d ms  (%d bodies, %d not acknowledged 200 with 300 accepted)",
		r.p50.Milliseconds(), r.p99.Milliseconds(), r.max.Milliseconds(), r.n, r.failed)
}

// run posts every second while during runs, then waits for the bodies in
// flight.
func (l *liveSender) run(during func()) liveResult {
	if l.ids == nil {
		for _, first := range []int{1, 101, 201} {
			for i := range 75 {
				l.ids = append(l.ids, fmt.Sprintf("AP-%03d", first+i))
			}
		}
		for i := range 75 {
			l.ids = append(l.ids, fmt.Sprintf("KS-%03d", 1+i))
		}
	}
	var mu sync.Mutex
	var took []time.Duration
	var failed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case t := <-tick.C:
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, ok := l.post(t.Truncate(time.Second).Add(-time.Second))
					if !ok {
						failed.Add(1)
					}
					mu.Lock()
					took = append(took, d)
					mu.Unlock()
				}()
			}
		}
	}()
	during()
	close(stop)
	wg.Wait()
	slices.Sort(took)
	res := liveResult{n: len(took), failed: int(failed.Load())}
	if len(took) > 0 {
		rank := func(p float64) time.Duration {
			i := int(p*float64(len(took))+0.999999) - 1
			return took[max(0, min(i, len(took)-1))]
		}
		res.p50, res.p99, res.max = rank(0.50), rank(0.99), took[len(took)-1]
	}
	return res
}

// post sends one body recorded at at; it returns the time to the answer,
// and whether all 300 were acknowledged.
func (l *liveSender) post(at time.Time) (time.Duration, bool) {
	var body bytes.Buffer
	for _, id := range l.ids {
		fmt.Fprintf(&body, `{"turbine_id":%q,"recorded_at":%q,"available":true,"power_kw":1500,"wind_ms":9}`+"\n", id, at.UTC().Format(time.RFC3339))
	}
	start := time.Now()
	resp, err := http.Post(l.url, "application/x-ndjson", &body)
	if err != nil {
		return time.Since(start), false
	}
	defer resp.Body.Close()
	var sum ingest.Summary
	err = json.NewDecoder(resp.Body).Decode(&sum)
	return time.Since(start), err == nil && resp.StatusCode == http.StatusOK && sum.Accepted == int64(len(l.ids))
}

// writeHeldBack writes Kilmore Sands' readings of [from, to) (simulator seed
// 42, exact clocks) as CSV, each received 6 h after to; bodies are the
// file's byte ranges of 50,000 lines each, after the header.
func writeHeldBack(b *testing.B, env *testdb.Env, from, to time.Time, dir string) (string, [][2]int64, int64) {
	sc, err := simulate.FarmConfig(env.Plan, "kilmore-sands", from, to, 42)
	testdb.Must(b, err, "config")
	sc.ExactClocks = true
	path := filepath.Join(dir, "kilmore-held-back.csv")
	f, err := os.Create(path)
	testdb.Must(b, err, "create")
	cw := &countingWriter{w: f}
	w := bufio.NewWriterSize(cw, 1<<20)
	enc := reading.NewEncoder(reading.CSV, w)
	received := to.Add(6 * time.Hour)
	var bounds []int64
	var rows int64
	offset := func() int64 {
		testdb.Must(b, enc.Flush(), "flush")
		testdb.Must(b, w.Flush(), "flush")
		return cw.n
	}
	_, err = simulate.Generate(sc, func(r *reading.Reading) error {
		if rows%50_000 == 0 {
			bounds = append(bounds, offset())
		}
		r.ReceivedAt = received
		rows++
		return enc.Encode(r)
	})
	testdb.Must(b, err, "generate")
	bounds = append(bounds, offset())
	testdb.Must(b, f.Close(), "close")
	// The first body starts after the header line (written with the first row).
	data, err := os.ReadFile(path)
	testdb.Must(b, err, "read")
	bounds[0] = int64(bytes.IndexByte(data, '\n') + 1)
	bodies := make([][2]int64, 0, len(bounds)-1)
	for i := 1; i < len(bounds); i++ {
		bodies = append(bodies, [2]int64{bounds[i-1], bounds[i]})
	}
	return path, bodies, rows
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// postBodies posts the file's bodies (each with the file's header) from
// senders at once, as fast as they are acknowledged; a 503 is re-sent after
// its Retry-After (1 s). It returns the rows acknowledged.
func postBodies(b *testing.B, url, path string, bodies [][2]int64, senders int) int64 {
	f, err := os.Open(path)
	testdb.Must(b, err, "open")
	defer f.Close()
	header := make([]byte, bodies[0][0])
	_, err = f.ReadAt(header, 0)
	testdb.Must(b, err, "header")
	var next, accepted atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := next.Add(1) - 1
				if k >= int64(len(bodies)) {
					return
				}
				for {
					body := io.MultiReader(bytes.NewReader(header), io.NewSectionReader(f, bodies[k][0], bodies[k][1]-bodies[k][0]))
					resp, err := http.Post(url, "text/csv", body)
					if err != nil {
						errs <- err
						return
					}
					var sum ingest.Summary
					err = json.NewDecoder(resp.Body).Decode(&sum)
					resp.Body.Close()
					if resp.StatusCode == http.StatusServiceUnavailable && sum.Accepted == 0 && sum.Failed == 0 {
						time.Sleep(time.Second) // Retry-After: the pipeline was full
						continue
					}
					if err != nil || resp.StatusCode != http.StatusOK {
						errs <- fmt.Errorf("body %d: %d %+v %v", k, resp.StatusCode, sum, err)
						return
					}
					accepted.Add(sum.Accepted)
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("HTTP sender: %v", err)
	}
	return accepted.Load()
}

func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
