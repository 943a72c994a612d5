package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
)

// BenchmarkIngestFile: `orchestrator ingest FILE.csv` (the path an operator
// uses for a replayed file) against the floor `psql \copy` of the same CSV
// into the same table(s), alternately in the same run: one farm-day on one
// shard (Kilmore Sands, 6,048,000 rows), and Ardnave Point's farm-day over
// its three shards (12,960,000 rows; the floor is three psql \copy in
// parallel, one per shard's share). Run: make bench-ingest-file.
func BenchmarkIngestFile(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchIngestFile(b)
	}
}

func benchIngestFile(b *testing.B) {
	ctx := context.Background()
	bin := buildBinary(b)
	env := testdb.New(b, testdb.ArdnaveFleet)
	dir := b.TempDir()
	report := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		fmt.Println(msg)
		b.Log(msg)
	}
	var version string
	testdb.Must(b, env.Control.QueryRow(ctx, `SHOW server_version`).Scan(&version), "version")
	report("machine: %d CPUs, %s, Postgres %s", runtime.NumCPU(), runtime.Version(), version)

	london, _ := time.LoadLocation("Europe/London")
	for _, tc := range []struct {
		farm   string
		shards []string
		rows   int
	}{
		{"kilmore-sands", []string{"s4"}, 6_048_000},
		{"ardnave-point", []string{"s1", "s2", "s3"}, 12_960_000},
	} {
		whole, parts := writeFarmDayCSV(b, env.Plan, tc.farm, dir, london)
		truncate := func() {
			for _, s := range tc.shards {
				pool := env.Shards.Pool(s)
				testdb.Exec(b, pool, `TRUNCATE readings, dirty_mark`)
				for _, day := range []string{"2026-07-31", "2026-08-01", "2026-08-02"} {
					testdb.Exec(b, pool, `SELECT readings_ensure_partition($1)`, day)
				}
				testdb.Exec(b, pool, `CHECKPOINT`)
			}
		}
		floor := func() time.Duration {
			truncate()
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, len(tc.shards))
			for _, s := range tc.shards {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", env.Shards.Pool(s).Config().ConnString(),
						"-c", `\copy readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state) FROM '`+parts[s]+`' WITH (FORMAT csv, HEADER true)`)
					if out, err := cmd.CombinedOutput(); err != nil {
						errs <- fmt.Errorf("psql \\copy %s: %v: %s", s, err, out)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		cli := func() time.Duration {
			truncate()
			start := time.Now()
			cmd := exec.Command(bin, "ingest", "--json", whole)
			cmd.Env = append(os.Environ(), "DATABASE_URL="+env.ControlDSN)
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err != nil || !strings.Contains(string(out), fmt.Sprintf(`"accepted":%d`, tc.rows)) {
				b.Fatalf("orchestrator ingest %s: %v\n%s", whole, err, out)
			}
			return took
		}
		var floors, clis []time.Duration
		for round := 0; round < 2; round++ {
			floors = append(floors, floor())
			clis = append(clis, cli())
		}
		f, c := median(floors), median(clis)
		report("%s (%d shard(s), %d rows): psql \\copy %.1f s (%.0f rows/s), orchestrator ingest %.1f s (%.0f rows/s): ratio %.2f  (runs: floor %v, cli %v)",
			tc.farm, len(tc.shards), tc.rows, f.Seconds(), float64(tc.rows)/f.Seconds(), c.Seconds(), float64(tc.rows)/c.Seconds(), f.Seconds()/c.Seconds(), floors, clis)
		b.ReportMetric(f.Seconds()/c.Seconds(), tc.farm+"-ratio")
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// writeFarmDayCSV writes one farm-day (simulator seed 42, exact clocks) as a
// CSV file, and the same rows split per shard for the floor.
func writeFarmDayCSV(b *testing.B, plan *fleet.Plan, farm, dir string, loc *time.Location) (string, map[string]string) {
	sc, err := simulate.FarmConfig(plan, farm, time.Date(2026, 8, 1, 0, 0, 0, 0, loc), time.Date(2026, 8, 2, 0, 0, 0, 0, loc), 42)
	testdb.Must(b, err, "config")
	shardOf := map[string]string{}
	for _, t := range plan.Turbines {
		shardOf[t.ID] = t.Shard
	}
	open := func(path string) (*os.File, *bufio.Writer, *reading.Encoder) {
		f, err := os.Create(path)
		testdb.Must(b, err, "create %s", path)
		w := bufio.NewWriterSize(f, 1<<20)
		return f, w, reading.NewEncoder(reading.CSV, w)
	}
	whole := filepath.Join(dir, farm+".csv")
	wf, ww, we := open(whole)
	parts := map[string]string{}
	type out struct {
		f   *os.File
		w   *bufio.Writer
		enc *reading.Encoder
	}
	per := map[string]*out{}
	_, err = simulate.Generate(sc, func(r *reading.Reading) error {
		if err := we.Encode(r); err != nil {
			return err
		}
		s := shardOf[r.TurbineID]
		o := per[s]
		if o == nil {
			parts[s] = filepath.Join(dir, farm+"-"+s+".csv")
			f, w, e := open(parts[s])
			o = &out{f, w, e}
			per[s] = o
		}
		return o.enc.Encode(r)
	})
	testdb.Must(b, err, "generate")
	for _, o := range append([]*out{{wf, ww, we}}, values(per)...) {
		testdb.Must(b, o.enc.Flush(), "flush")
		testdb.Must(b, o.w.Flush(), "flush")
		testdb.Must(b, o.f.Close(), "close")
	}
	return whole, parts
}

func values[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
