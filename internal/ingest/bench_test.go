package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// BenchmarkIngestFarmDay: one Ardnave farm-day (300 turbines × 43,200 =
// 12,960,000 readings) routed to its 3 shards, beside the floors measured in
// the same run: raw COPY of the same rows into the same tables (three ways),
// in passes that alternate floors and ingest (BENCH_INGEST_PASSES, default
// 2), each scored by its best pass. Then a replay where every row is a
// duplicate. Then the cost of the covering key, as raw COPY of one shard's
// share into the table with and without INCLUDE. Run: make bench-ingest.
func BenchmarkIngestFarmDay(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchIngestFarmDay(b)
	}
}

func benchIngestFarmDay(b *testing.B) {
	ctx := context.Background()
	env := testdb.New(b, testdb.ArdnaveFleet)
	london, _ := time.LoadLocation("Europe/London")
	sc, err := simulate.FarmConfig(env.Plan, "ardnave-point", time.Date(2026, 8, 1, 0, 0, 0, 0, london), time.Date(2026, 8, 2, 0, 0, 0, 0, london), 42)
	testdb.Must(b, err, "config")
	const rows = 12_960_000
	shardOf := map[string]string{}
	for _, t := range env.Plan.Turbines {
		shardOf[t.ID] = t.Shard
	}
	shards := []string{"s1", "s2", "s3"}
	truncate := func() {
		for _, s := range shards {
			testdb.Exec(b, env.Shards.Pool(s), `TRUNCATE readings, dirty_mark`)
			testdb.Exec(b, env.Shards.Pool(s), `CHECKPOINT`)
		}
	}
	report := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		fmt.Println(msg)
		b.Log(msg)
	}
	report("machine: %d CPUs, %s, Postgres %s", runtime.NumCPU(), runtime.Version(), serverVersion(b, env.Control))

	// Floor: raw COPY of the same rows into the same tables (partitions
	// made first; the ingest path makes them on demand).
	for _, s := range shards {
		for _, day := range []string{"2026-07-31", "2026-08-01", "2026-08-02"} {
			testdb.Exec(b, env.Shards.Pool(s), `SELECT readings_ensure_partition($1)`, day)
		}
	}
	pools := map[string]*pgxpool.Pool{"s1": env.Shards.Pool("s1"), "s2": env.Shards.Pool("s2"), "s3": env.Shards.Pool("s3")}
	// Three floors, the strongest of which the ingest must reach: pgx's
	// usual boxed values with 2 streams/20k rows and 1 stream/100k rows, and
	// the writer's own allocation-free row source (1 stream/100k rows), so
	// that the ingest's encoder is not what beats the floor.
	floors := []struct {
		name    string
		streams int
		batch   int
		free    bool
	}{
		{"raw COPY, 2 streams/shard, 20k rows/tx", 2, 20_000, false},
		{"raw COPY, 1 stream/shard, 100k rows/tx", 1, 100_000, false},
		{"raw COPY, 1 stream/shard, 100k rows/tx, allocation-free values", 1, 100_000, true},
	}
	// The ingest path: validate, route, lanes, exactly-once, dirty marks.
	// The ingest clock is fixed after the simulated day's last arrival, so
	// the benchmark means the same whenever it runs (the maximum age would
	// refuse August 2026 once it is 400 days old).
	ingestNow := func() time.Time { return time.Date(2026, 8, 4, 3, 0, 0, 0, time.UTC) }
	in := pipelinetest.Ingestor(b, env, ingestNow, ingest.DefaultConfig(), nil)
	run := func(name string) (ingest.Summary, time.Duration, int64) {
		debug.FreeOSMemory() // the floor's garbage is not the ingest's memory
		stop := sampleRSS()
		start := time.Now()
		dec, wait := simulate.Stream(ctx, sc)
		sum, err := in.Ingest(ctx, name, dec)
		testdb.Must(b, err, "ingest %s", name)
		_, err = wait()
		testdb.Must(b, err, "simulate")
		return sum, time.Since(start), stop()
	}

	// Passes alternate the floors and the ingest, so that both meet the
	// machine's moods alike (a floor's rate varied from 446k to 729k rows/s
	// between passes of one run); each is scored by its best pass, and the
	// ingest must reach the strongest floor's best.
	passes := 2
	if v, err := strconv.Atoi(os.Getenv("BENCH_INGEST_PASSES")); err == nil && v > 0 {
		passes = v
	}
	floorBest := make([]float64, len(floors))
	var rate float64
	var sum ingest.Summary
	var rss int64
	for pass := 1; pass <= passes; pass++ {
		var passFloor float64
		for i, f := range floors {
			took := rawCopy(b, sc, shardOf, pools, "readings", f.streams, f.batch, f.free)
			r := rows / took.Seconds()
			report("floor   pass %d  %-64s %8.0f rows/s  (%.1f s)", pass, f.name+":", r, took.Seconds())
			floorBest[i], passFloor = max(floorBest[i], r), max(passFloor, r)
			truncate()
		}
		s, took, m := run(fmt.Sprintf("new, pass %d", pass))
		r := rows / took.Seconds()
		report("ingest  pass %d  new readings (routed, marked):   %8.0f rows/s  (%.1f s)  ratio to this pass's strongest floor %.2f  peak RSS %d MB  %+v",
			pass, r, took.Seconds(), r/passFloor, m>>20, s)
		if s.Accepted != rows {
			b.Fatalf("pass %d: accepted %d, want %d", pass, s.Accepted, rows)
		}
		rate, sum, rss = max(rate, r), s, max(rss, m)
		if pass < passes {
			truncate()
		}
	}
	var floorRate float64
	var floorName string
	for i, f := range floors {
		if floorBest[i] > floorRate {
			floorRate, floorName = floorBest[i], f.name
		}
	}
	report("floor   strongest, best of %d passes: %s, %.0f rows/s", passes, floorName, floorRate)
	report("ingest  new readings, best of %d passes:          %8.0f rows/s  ratio to strongest floor %.2f  %+v", passes, rate, rate/floorRate, sum)
	b.ReportMetric(rate, "new-rows/s")
	b.ReportMetric(floorRate, "floor-rows/s")
	b.ReportMetric(rate/floorRate, "ratio")

	sum, took, rss2 := run("replay")
	dupRate := rows / took.Seconds()
	report("ingest  replay, every row a duplicate:           %8.0f rows/s  (%.1f s)  peak RSS %d MB  %+v", dupRate, took.Seconds(), rss2>>20, sum)
	if sum.Duplicate != rows || sum.Accepted != 0 {
		b.Fatalf("replay: %+v, want all %d duplicate", sum, rows)
	}
	b.ReportMetric(dupRate, "dup-rows/s")
	b.ReportMetric(float64(max(rss, rss2)>>20), "peak-RSS-MB")

	// NDJSON decoding on one core, for the text path (file or HTTP).
	report("parse   NDJSON decode, one core:                 %8.0f rows/s", parseRate(b, sc))

	if os.Getenv("BENCH_SKIP_KEY_COST") == "" {
		coveringKeyCost(b, env, sc, shardOf, report)
	}
}

// rawCopy streams the simulation's rows with plain COPY into table: per
// shard `streams` parallel COPY streams of `batch` rows per transaction,
// nothing else (no validation, no lanes, no marks).
func rawCopy(b *testing.B, sc simulate.Config, shardOf map[string]string, pools map[string]*pgxpool.Pool, table string, streams, batch int, allocationFree bool) time.Duration {
	ctx := context.Background()
	chans := map[string]chan []ingest.Row{}
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for name, pool := range pools {
		ch := make(chan []ingest.Row, streams)
		chans[name] = ch
		for i := 0; i < streams; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for chunk := range ch {
					err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
						var src pgx.CopyFromSource
						if allocationFree {
							src = ingest.NewCopySource(chunk)
						} else {
							src = boxedRows(chunk)
						}
						_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, ingest.ReadingsColumns, src)
						return err
					})
					if err != nil {
						failed.Store(err)
					}
				}
			}()
		}
	}
	bufs := map[string][]ingest.Row{}
	_, err := simulate.Generate(sc, func(r *reading.Reading) error {
		s := shardOf[r.TurbineID]
		if _, ok := pools[s]; !ok {
			return nil
		}
		bufs[s] = append(bufs[s], ingest.Row{TurbineID: r.TurbineID, RecordedAt: r.RecordedAt, ReceivedAt: r.ReceivedAt, Available: r.Available, PowerKw: r.PowerKW, WindMs: r.WindMS, State: r.State})
		if len(bufs[s]) == batch {
			chans[s] <- bufs[s]
			bufs[s] = nil
		}
		return nil
	})
	testdb.Must(b, err, "generate")
	for s, buf := range bufs {
		if len(buf) > 0 {
			chans[s] <- buf
		}
	}
	for _, ch := range chans {
		close(ch)
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("raw COPY: %v", err)
	}
	return time.Since(start)
}

// boxedRows is pgx's usual source: every row's values boxed into a fresh
// slice, as sqlc's :copyfrom and pgx.CopyFromRows callers do.
func boxedRows(rows []ingest.Row) pgx.CopyFromSource {
	i := -1
	return pgx.CopyFromFunc(func() ([]any, error) {
		i++
		if i >= len(rows) {
			return nil, nil
		}
		r := rows[i]
		var state any // NULL, as the writer stores no state
		if r.State != "" {
			state = r.State
		}
		return []any{r.TurbineID, r.RecordedAt, r.ReceivedAt, r.Available, r.PowerKw, r.WindMs, state}, nil
	})
}

// coveringKeyCost measures raw COPY of shard s1's share of the day into the
// readings table (key INCLUDEs received_at, available) and into a copy of it
// whose key has no INCLUDE, alternating to spread the machine's noise.
func coveringKeyCost(b *testing.B, env *testdb.Env, sc simulate.Config, shardOf map[string]string, report func(string, ...any)) {
	pool := env.Shards.Pool("s1")
	testdb.Exec(b, pool, `CREATE TABLE readings_plainkey (LIKE readings INCLUDING DEFAULTS, PRIMARY KEY (turbine_id, recorded_at)) PARTITION BY RANGE (recorded_at)`)
	testdb.Exec(b, pool, `CREATE TABLE readings_plainkey_a PARTITION OF readings_plainkey FOR VALUES FROM ('2026-07-31') TO ('2026-08-01')`)
	testdb.Exec(b, pool, `CREATE TABLE readings_plainkey_b PARTITION OF readings_plainkey FOR VALUES FROM ('2026-08-01') TO ('2026-08-02')`)
	var covering, plain time.Duration
	var coveringSize, plainSize int64
	for round := 0; round < 2; round++ {
		for _, table := range []string{"readings", "readings_plainkey"} {
			testdb.Exec(b, pool, `TRUNCATE readings, readings_plainkey`)
			testdb.Exec(b, pool, `CHECKPOINT`)
			took := rawCopy(b, sc, shardOf, map[string]*pgxpool.Pool{"s1": pool}, table, 1, 100_000, false)
			size := testdb.Int(b, pool, `SELECT sum(pg_indexes_size(c.oid))::bigint FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`, table)
			if table == "readings" {
				covering += took
				coveringSize = size
			} else {
				plain += took
				plainSize = size
			}
		}
	}
	const rows = 2 * 4_320_000
	report("key     raw COPY one shard (4.32M rows, 2 rounds): covering key %8.0f rows/s, plain key %8.0f rows/s, covering/plain %.2f; key size %d MB vs %d MB",
		rows/covering.Seconds(), rows/plain.Seconds(), plain.Seconds()/covering.Seconds(), coveringSize>>20, plainSize>>20)
}

func parseRate(b *testing.B, sc simulate.Config) float64 {
	var buf bytes.Buffer
	enc := reading.NewEncoder(reading.NDJSON, &buf)
	n := 0
	sc.To = sc.From.Add(2 * time.Hour) // 540,000 lines
	_, err := simulate.Generate(sc, func(r *reading.Reading) error { n++; return enc.Encode(r) })
	testdb.Must(b, err, "generate")
	testdb.Must(b, enc.Flush(), "flush")
	start := time.Now()
	dec, _ := reading.NewDecoder(reading.NDJSON, &buf)
	for {
		rec, err := dec.Next()
		if err != nil {
			break
		}
		if rec.Problem != "" {
			b.Fatalf("line %d: %s", rec.Line, rec.Problem)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// sampleRSS samples this process's resident memory every 50 ms until the
// returned function is called, which returns the peak in bytes.
func sampleRSS() func() int64 {
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if v := currentRSS(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 { close(done); return peak.Load() }
}

func currentRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func serverVersion(b *testing.B, pool *pgxpool.Pool) string {
	var v string
	testdb.Must(b, pool.QueryRow(context.Background(), `SHOW server_version`).Scan(&v), "version")
	return v
}
