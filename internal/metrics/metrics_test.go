package metrics_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/metrics"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/server"
	"github.com/galewatch/galewatch/internal/testdb"
)

// noon is the injected clock of these tests.
var noon = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// serveMetrics serves m behind the real server (its access rules, no
// token) over real HTTP and returns the /metrics URL.
func serveMetrics(t *testing.T, control *pgxpool.Pool, shards *fleet.Shards, m *metrics.Metrics) string {
	t.Helper()
	return serveMetricsWith(t, server.DefaultConfig(), control, shards, m)
}

func serveMetricsWith(t *testing.T, cfg server.Config, control *pgxpool.Pool, shards *fleet.Shards, m *metrics.Metrics) string {
	t.Helper()
	srv := server.New(control, shards, cfg)
	srv.MountMetrics(m.Handler())
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL + "/metrics"
}

// scrape GETs url and returns every sample, keyed by its series as the
// text format writes it (`name{label="v",...}`, labels sorted by name).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	testdb.Must(t, err, "GET %s", url)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		testdb.Must(t, err, "sample %q", line)
		samples[line[:i]] = v
	}
	testdb.Must(t, sc.Err(), "read /metrics")
	return samples
}

// expect checks each series' value; a missing series fails too.
func expect(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for series, w := range want {
		g, ok := got[series]
		switch {
		case !ok:
			t.Errorf("%s is missing from the scrape", series)
		case g != w:
			t.Errorf("%s = %v, want %v", series, g, w)
		}
	}
}

// absent checks that no series starts with any of prefixes.
func absent(t *testing.T, got map[string]float64, prefixes ...string) {
	t.Helper()
	for series := range got {
		for _, p := range prefixes {
			if strings.HasPrefix(series, p) {
				t.Errorf("%s is in the scrape, want it absent", series)
			}
		}
	}
}

func ndjson(id string, recorded, received time.Time) string {
	return fmt.Sprintf(`{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":1500,"wind_ms":9}`+"\n",
		id, recorded.Format(time.RFC3339), received.Format(time.RFC3339))
}

// TestCountersAfterIngestAndRollup ingests through the real pipeline and
// runs real rollup_day jobs through River, then scrapes /metrics over HTTP:
// every counter is exact, and the dirty backlog the ingest left is read
// back from the shard.
func TestCountersAfterIngestAndRollup(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, `
shards: [{name: s1}, {name: s2}]
rules: {allowed_lateness: 600s}
farms:
  - id: f
    timezone: UTC
    turbines: [{id: T-1, shard: s1}, {id: T-2, shard: s1}, {id: T-3, shard: s2}]
`)
	ctx, cancel := context.WithTimeout(context.Background(), testdb.Hang)
	defer cancel()
	clock := pipelinetest.NewClock(noon)
	m := metrics.New(env.Control, env.Shards, clock.Now, 0)
	url := serveMetrics(t, env.Control, env.Shards, m)
	p := pipelinetest.New(t, env, pipelinetest.Options{Now: clock.Now, NoStart: true,
		Ingest: func(c *ingest.Config) { c.Observer = m.Ingest() },
		Jobs:   func(c *jobs.Config) { c.Observer = m.Jobs() }})
	in := p.In
	run := func(body string) ingest.Summary {
		t.Helper()
		dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(body))
		testdb.Must(t, err, "decoder")
		sum, _ := in.Ingest(ctx, "test", dec)
		return sum
	}

	// Live: 60 readings of T-1 and 56 of T-3 in the last two minutes, 1 s
	// late (with 600 s of allowed lateness none of them marks a window),
	// and 4 of T-3 from a clock 4-10 s fast (live, early).
	var first strings.Builder
	for i := range 60 {
		at := noon.Add(-2*time.Minute + time.Duration(2*i)*time.Second)
		first.WriteString(ndjson("T-1", at, at.Add(time.Second)))
	}
	for i := range 56 {
		at := noon.Add(-2*time.Minute + time.Duration(2*i)*time.Second)
		first.WriteString(ndjson("T-3", at, at.Add(time.Second)))
	}
	for i := range 4 {
		first.WriteString(ndjson("T-3", noon.Add(time.Duration(4+2*i)*time.Second), noon))
	}
	// Backfill: 25 readings of T-2 from 08:00:10, four hours late: one
	// dirty farm-day and one dirty turbine-window on s1.
	for i := range 25 {
		first.WriteString(ndjson("T-2", time.Date(2026, 8, 1, 8, 0, 10+2*i, 0, time.UTC), noon))
	}
	// Rejects: two unknown turbines, a line that does not parse, a
	// received_at two days ahead of the ingest clock.
	first.WriteString(ndjson("T-9", noon, noon) + ndjson("T-9", noon, noon) + "{not json\n")
	first.WriteString(ndjson("T-1", noon.Add(48*time.Hour), noon.Add(48*time.Hour)))
	sum := run(first.String())
	if sum.Accepted != 145 || sum.Rejected != 4 || sum.Early != 4 || sum.Backfill != 25 || sum.Failed != 0 {
		t.Fatalf("first ingest: %+v, want 145 accepted (120 live + 25 backfill), 4 rejected, 4 early", sum)
	}
	// The same 10 readings of T-1 again: duplicates.
	var again strings.Builder
	for i := range 10 {
		at := noon.Add(-2*time.Minute + time.Duration(2*i)*time.Second)
		again.WriteString(ndjson("T-1", at, at.Add(time.Second)))
	}
	if sum := run(again.String()); sum.Duplicate != 10 || sum.Accepted != 0 {
		t.Fatalf("second ingest: %+v, want 10 duplicates", sum)
	}

	clock.Set(noon.Add(5 * time.Minute)) // the marks were written at noon
	got := scrape(t, url)
	expect(t, got, map[string]float64{
		`galewatch_ingest_rows_total{lane="live",outcome="accepted"}`:     120,
		`galewatch_ingest_rows_total{lane="live",outcome="duplicate"}`:    10,
		`galewatch_ingest_rows_total{lane="live",outcome="failed"}`:       0,
		`galewatch_ingest_rows_total{lane="backfill",outcome="accepted"}`: 25,
		`galewatch_ingest_rows_total{lane="none",outcome="rejected"}`:     4,
		`galewatch_ingest_rows_total{lane="none",outcome="failed"}`:       0,
		`galewatch_ingest_rejects_total{reason="unknown_turbine"}`:        2,
		`galewatch_ingest_rejects_total{reason="invalid"}`:                1,
		`galewatch_ingest_rejects_total{reason="future"}`:                 1,
		`galewatch_ingest_rejects_total{reason="too_old"}`:                0,
		`galewatch_ingest_early_rows_total`:                               4,
		`galewatch_control_up`:                                            1,
		`galewatch_shard_up{shard="s1"}`:                                  1,
		`galewatch_shard_up{shard="s2"}`:                                  1,
		`galewatch_dirty_marks{farm="f",shard="s1"}`:                      1,
		`galewatch_dirty_windows{farm="f",shard="s1"}`:                    1,
		`galewatch_dirty_oldest_mark_age_seconds{farm="f",shard="s1"}`:    300,
		`galewatch_dirty_marks{farm="f",shard="s2"}`:                      0,
		`galewatch_dirty_windows{farm="f",shard="s2"}`:                    0,
		`galewatch_rollup_pending{farm="f",shard="s1"}`:                   0,
	})
	absent(t, got, `galewatch_dirty_oldest_mark_age_seconds{farm="f",shard="s2"}`, "galewatch_job_runs_total")

	// Rollups through River: the farm-day on both shards (completed), an
	// unknown farm (fails; one attempt, so it is discarded) and a day that
	// does not parse (cancelled).
	client := p.Client
	ids, err := jobs.EnqueueFarmDay(ctx, env.Control, client, "f", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
	testdb.Must(t, err, "enqueue")
	for _, args := range []jobs.RollupDayArgs{
		{FarmID: "no-such-farm", Day: "2026-08-01", Shard: "s1", Reason: rollup.ReasonManual},
		{FarmID: "f", Day: "1 August", Shard: "s1", Reason: rollup.ReasonManual},
	} {
		res, err := client.Insert(ctx, args, &river.InsertOpts{MaxAttempts: 1})
		testdb.Must(t, err, "insert %+v", args)
		ids = append(ids, res.Job.ID)
	}
	p.StartJobs(t)
	gaveUp, err := jobs.Wait(ctx, client, ids, 50*time.Millisecond, nil)
	testdb.Must(t, err, "wait")
	if len(ids) != 4 || len(gaveUp) != 2 {
		t.Fatalf("%d jobs, %d given up: %+v; want 4 jobs, 2 given up", len(ids), len(gaveUp), gaveUp)
	}
	got = scrape(t, url)
	expect(t, got, map[string]float64{
		`galewatch_job_runs_total{kind="rollup_day",outcome="completed",shard="s1"}`: 1,
		`galewatch_job_runs_total{kind="rollup_day",outcome="completed",shard="s2"}`: 1,
		`galewatch_job_runs_total{kind="rollup_day",outcome="failed",shard="s1"}`:    1,
		`galewatch_job_runs_total{kind="rollup_day",outcome="cancelled",shard="s1"}`: 1,
		`galewatch_job_duration_seconds_count{kind="rollup_day",shard="s1"}`:         3,
		`galewatch_job_duration_seconds_count{kind="rollup_day",shard="s2"}`:         1,
		// Counters only go up: the ingest's are as they were.
		`galewatch_ingest_rows_total{lane="live",outcome="accepted"}`: 120,
	})
	absent(t, got, `galewatch_job_runs_total{kind="rollup_day",outcome="failed",shard="s2"}`)
}

// TestGaugesFromTheDatabases: the scrape-time gauges read exactly what
// the tables hold, ages on the injected clock; a shard that does not
// answer is up 0 and the scrape still succeeds; so does one whose control
// database does not answer.
func TestGaugesFromTheDatabases(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, `
shards: [{name: s1}, {name: s2}]
farms:
  - {id: f1, timezone: UTC, turbines: [{id: A-1, shard: s1}, {id: A-2, shard: s2}]}
  - {id: f2, timezone: UTC, turbines: [{id: B-1, shard: s2}]}
`)
	at := func(hms string) time.Time {
		tm, err := time.Parse(time.DateTime, "2026-08-01 "+hms)
		testdb.Must(t, err, "time %s", hms)
		return tm
	}
	// Two fast windows of f1 (the later published 3.5 s after end + 60 s)
	// and a final row, which is not a publication.
	for _, w := range []struct {
		start, path, computed string
	}{{"10:59:00", "fast", "11:01:01"}, {"11:00:00", "fast", "11:02:03.5"}, {"11:00:00", "final", "11:20:00"}} {
		start, computed := at(w.start), at(w.computed)
		testdb.Exec(t, env.Control, `INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late, readings, computed_at, complete_through, revision)
			VALUES ('f1', $1, $2, $3, '2026-08-01', 60, 60, 60, 0, 60, $4, $5, 0)`, start, w.path, start.Add(time.Minute), computed, computed.Add(-time.Minute))
	}
	// Fast against final: the latest window of f1 (100 and 200 per mille),
	// an older one, and its day (50 and 0).
	for _, r := range []struct {
		scope, start                         string
		fastRecv, finalRecv, fastAv, finalAv int
	}{{"window", "10:00:00", 1, 1, 1, 1}, {"window", "11:00:00", 90, 100, 80, 100}, {"day", "00:00:00", 950, 1000, 0, 0}} {
		testdb.Exec(t, env.Control, `INSERT INTO reconciliation (farm_id, scope, period_start, day, fast_expected, fast_received, fast_available, final_expected, final_received, final_available, windows, final_revision, measured_at)
			VALUES ('f1', $1, $2, '2026-08-01', 1000, $3, $4, 1000, $5, $6, 1, 1, $7)`, r.scope, at(r.start), r.fastRecv, r.fastAv, r.finalRecv, r.finalAv, at("11:20:00"))
	}
	for _, a := range []struct{ kind, start, raised string }{
		{"divergence", "10:00:00", "10:30:00"}, {"divergence", "11:00:00", "11:20:00"}, {"completeness", "00:00:00", "09:00:00"},
	} {
		testdb.Exec(t, env.Control, `INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, detail, message)
			VALUES ($1, 'f1', 'window', $2, '2026-08-01', $3, '{}', 'test')`, a.kind, at(a.start), at(a.raised))
	}
	testdb.Exec(t, env.Control, `INSERT INTO rollup_pending (farm_id, day, shard_name, job_id, requested_at) VALUES ('f1', '2026-08-01', 's1', 1, $1)`, at("11:24:00"))
	// One open stall of f1 and one cleared: 1 stalled now; f2 none.
	for _, s := range []struct {
		turbine string
		cleared any
	}{{"A-1", nil}, {"A-2", at("11:10:00")}} {
		testdb.Exec(t, env.Control, `INSERT INTO turbine_stall (farm_id, turbine_id, first_window, last_window, raised_at, cleared_at, detail, message)
			VALUES ('f1', $1, $2, $2, $2, $3, '{}', 'test')`, s.turbine, at("11:00:00"), s.cleared)
	}
	// The shards' marks: s1 has a farm-day of f1 marked at 11:00 and three
	// of its turbine-windows marked at 11:02.
	s1 := env.Shards.Pool("s1")
	testdb.Exec(t, s1, `INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, created_at, updated_at)
		VALUES ('f1', '2026-08-01', '{A-1}', $1, $1, 3, $2, $2)`, at("08:00:00"), at("11:00:00"))
	for i := range 3 {
		testdb.Exec(t, s1, `INSERT INTO dirty_window (farm_id, day, turbine_id, window_start, window_end, marked_at) VALUES ('f1', '2026-08-01', 'A-1', $1, $2, $3)`,
			at("08:00:00").Add(time.Duration(i)*time.Minute), at("08:01:00").Add(time.Duration(i)*time.Minute), at("11:02:00"))
	}
	now := func() time.Time { return at("11:25:00") }
	healthy := map[string]float64{
		`galewatch_dirty_marks{farm="f1",shard="s1"}`:                                  1,
		`galewatch_dirty_windows{farm="f1",shard="s1"}`:                                3,
		`galewatch_dirty_oldest_mark_age_seconds{farm="f1",shard="s1"}`:                1500,
		`galewatch_shard_up{shard="s1"}`:                                               1,
		`galewatch_shard_slow{shard="s1"}`:                                             0,
		`galewatch_control_up`:                                                         1,
		`galewatch_control_slow`:                                                       0,
		`galewatch_rollup_pending{farm="f1",shard="s1"}`:                               1,
		`galewatch_rollup_pending_oldest_age_seconds{farm="f1",shard="s1"}`:            60,
		`galewatch_rollup_pending{farm="f1",shard="s2"}`:                               0,
		`galewatch_rollup_pending{farm="f2",shard="s2"}`:                               0,
		`galewatch_publish_lag_seconds{farm="f1"}`:                                     3.5,
		`galewatch_farm_behind_seconds{farm="f1"}`:                                     at("11:25:00").Sub(at("11:01:03.5")).Seconds(),
		`galewatch_farm_published_through_timestamp_seconds{farm="f1"}`:                float64(at("11:01:00").Unix()),
		`galewatch_divergence_per_mille{farm="f1",measure="received",scope="window"}`:  100,
		`galewatch_divergence_per_mille{farm="f1",measure="available",scope="window"}`: 200,
		`galewatch_divergence_per_mille{farm="f1",measure="received",scope="day"}`:     50,
		`galewatch_divergence_per_mille{farm="f1",measure="available",scope="day"}`:    0,
		`galewatch_alerts{farm="f1",kind="divergence"}`:                                2,
		`galewatch_alerts{farm="f1",kind="completeness"}`:                              1,
		`galewatch_alert_last_raised_timestamp_seconds{farm="f1",kind="divergence"}`:   float64(at("11:20:00").Unix()),
		`galewatch_stalled_turbines{farm="f1"}`:                                        1,
		`galewatch_stalled_turbines{farm="f2"}`:                                        0,
	}

	t.Run("Healthy", func(t *testing.T) {
		got := scrape(t, serveMetrics(t, env.Control, env.Shards, metrics.New(env.Control, env.Shards, now, 0)))
		expect(t, got, healthy)
		expect(t, got, map[string]float64{
			`galewatch_shard_up{shard="s2"}`:                1,
			`galewatch_dirty_marks{farm="f1",shard="s2"}`:   0,
			`galewatch_dirty_marks{farm="f2",shard="s2"}`:   0,
			`galewatch_dirty_windows{farm="f2",shard="s2"}`: 0,
		})
		absent(t, got, `galewatch_publish_lag_seconds{farm="f2"}`, `galewatch_dirty_oldest_mark_age_seconds{farm="f2"`,
			`galewatch_rollup_pending_oldest_age_seconds{farm="f2"`)
	})

	// A scrape counts a farm's marked turbine-windows on a shard only up
	// to a bound, through the key, so its cost stays bounded: at the bound
	// the gauge means "at least". Here the bound is 2: s1 holds 3 marked
	// windows of f1. Alerts are counted exactly (alert_count, kept up to
	// date): 2 divergence alerts and 1 completeness alert.
	t.Run("CountsAreBounded", func(t *testing.T) {
		m := metrics.New(env.Control, env.Shards, now, 0)
		metrics.SetMaxRuns(m, 2)
		got := scrape(t, serveMetrics(t, env.Control, env.Shards, m))
		expect(t, got, map[string]float64{
			`galewatch_dirty_windows{farm="f1",shard="s1"}`:                 2,
			`galewatch_dirty_marks{farm="f1",shard="s1"}`:                   1,
			`galewatch_dirty_oldest_mark_age_seconds{farm="f1",shard="s1"}`: 1500,
			`galewatch_alerts{farm="f1",kind="divergence"}`:                 2,
			`galewatch_alerts{farm="f1",kind="completeness"}`:               1,
		})
	})

	// A shard that answers but not in time (here its dirty_mark is locked by
	// another transaction) is slow, not down: up stays 1, slow is 1, its
	// backlog gauges are left out, and the scrape ends at its timeout.
	t.Run("ShardSlow", func(t *testing.T) {
		ctx := context.Background()
		tx, err := env.Shards.Pool("s2").Begin(ctx)
		testdb.Must(t, err, "begin on s2")
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, `LOCK TABLE dirty_mark IN ACCESS EXCLUSIVE MODE`)
		testdb.Must(t, err, "lock s2's dirty_mark")
		const hang = 15 * time.Second // normal 1.0 s (the shard's timeout); 15 s catches a hang
		start := time.Now()
		got := scrape(t, serveMetrics(t, env.Control, env.Shards, metrics.New(env.Control, env.Shards, now, time.Second)))
		if took := time.Since(start); took > hang {
			t.Errorf("the scrape took %s with s2 slow: it hung past its 1 s timeout", took)
		}
		expect(t, got, healthy)
		expect(t, got, map[string]float64{`galewatch_shard_up{shard="s2"}`: 1, `galewatch_shard_slow{shard="s2"}`: 1})
		absent(t, got, `galewatch_dirty_marks{farm="f1",shard="s2"}`, `galewatch_dirty_marks{farm="f2",shard="s2"}`)
	})

	// The same for the control database (its rollup_pending locked).
	t.Run("ControlSlow", func(t *testing.T) {
		ctx := context.Background()
		tx, err := env.Control.Begin(ctx)
		testdb.Must(t, err, "begin on control")
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, `LOCK TABLE rollup_pending IN ACCESS EXCLUSIVE MODE`)
		testdb.Must(t, err, "lock rollup_pending")
		got := scrape(t, serveMetrics(t, env.Control, env.Shards, metrics.New(env.Control, env.Shards, now, time.Second)))
		expect(t, got, map[string]float64{`galewatch_control_up`: 1, `galewatch_control_slow`: 1, `galewatch_shard_up{shard="s1"}`: 1,
			`galewatch_dirty_windows{farm="f1",shard="s1"}`: 3})
		absent(t, got, "galewatch_rollup_pending", "galewatch_alerts", "galewatch_divergence_per_mille")
	})

	// s2 moved to a port nothing listens on: its gauges go, the rest stay.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	testdb.Must(t, err, "listen")
	dead := ln.Addr().String()
	ln.Close()
	testdb.Exec(t, env.Control, `UPDATE shard SET dsn = $1 WHERE name = 's2'`, "postgres://galewatch@"+dead+"/galewatch_s2?connect_timeout=1")
	shards, err := env.Registry.OpenShards(context.Background(), 2)
	testdb.Must(t, err, "open shards")
	t.Cleanup(shards.Close)

	t.Run("ShardDown", func(t *testing.T) {
		got := scrape(t, serveMetrics(t, env.Control, shards, metrics.New(env.Control, shards, now, 0)))
		expect(t, got, healthy)
		expect(t, got, map[string]float64{`galewatch_shard_up{shard="s2"}`: 0})
		absent(t, got, `galewatch_dirty_marks{farm="f1",shard="s2"}`, `galewatch_dirty_marks{farm="f2",shard="s2"}`, `galewatch_shard_slow{shard="s2"}`)
	})

	t.Run("ControlDown", func(t *testing.T) {
		down, err := pgxpool.New(context.Background(), "postgres://galewatch@"+dead+"/galewatch?connect_timeout=1")
		testdb.Must(t, err, "pool")
		t.Cleanup(down.Close)
		const hang = 10 * time.Second // normal 0.01 s (refused at once); 10 s catches a hang
		start := time.Now()
		got := scrape(t, serveMetrics(t, env.Control, shards, metrics.New(down, shards, now, time.Second)))
		if took := time.Since(start); took > hang {
			t.Errorf("the scrape took %s with the control database down: it hung", took)
		}
		expect(t, got, map[string]float64{
			`galewatch_control_up`:                          0,
			`galewatch_shard_up{shard="s1"}`:                1,
			`galewatch_shard_up{shard="s2"}`:                0,
			`galewatch_dirty_marks{farm="f1",shard="s1"}`:   1,
			`galewatch_dirty_windows{farm="f1",shard="s1"}`: 3,
		})
		absent(t, got, "galewatch_rollup_pending", "galewatch_publish_lag_seconds", "galewatch_alerts", "galewatch_divergence_per_mille")
	})

	// The alert counts follow the alert table (alert_count, kept by
	// triggers): a refreshed alert is not new, a deleted one goes, and the
	// latest raised is then the one left; the last one of a kind takes its
	// series with it.
	t.Run("AlertCountsFollowTheTable", func(t *testing.T) {
		testdb.Exec(t, env.Control, `INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, detail, message)
			VALUES ('divergence', 'f1', 'window', $1, '2026-08-01', $2, '{}', 'again') ON CONFLICT (kind, farm_id, scope, period_start) DO UPDATE SET message = EXCLUDED.message`,
			at("11:00:00"), at("11:24:00"))
		testdb.Exec(t, env.Control, `DELETE FROM alert WHERE kind = 'divergence' AND period_start = $1`, at("10:00:00"))
		testdb.Exec(t, env.Control, `DELETE FROM alert WHERE kind = 'completeness'`)
		got := scrape(t, serveMetrics(t, env.Control, env.Shards, metrics.New(env.Control, env.Shards, now, 0)))
		expect(t, got, map[string]float64{
			`galewatch_alerts{farm="f1",kind="divergence"}`:                              1,
			`galewatch_alert_last_raised_timestamp_seconds{farm="f1",kind="divergence"}`: float64(at("11:20:00").Unix()),
		})
		absent(t, got, `galewatch_alerts{farm="f1",kind="completeness"}`)
	})
}

// TestMetricsBehindTheToken: with a token, /metrics needs it like every
// endpoint but /healthz (Prometheus sends it as authorization credentials).
func TestMetricsBehindTheToken(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	cfg := server.DefaultConfig()
	cfg.Token = "s3cret"
	url := serveMetricsWith(t, cfg, env.Control, env.Shards, metrics.New(env.Control, env.Shards, time.Now, 0))
	resp, err := http.Get(url)
	testdb.Must(t, err, "GET /metrics")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without the token: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = http.DefaultClient.Do(req)
	testdb.Must(t, err, "GET /metrics with the token")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics with the token: %d, want 200", resp.StatusCode)
	}
}

// TestBodiesCountedByOutcome posts four bodies to the real server's
// POST /v1/readings over HTTP and scrapes /metrics from the same server:
// a body stored whole, a body with two refused lines beside its stored
// ones (the ingest command would exit 3 for it), a body repeating the
// first (already stored: stored), and a body in a type the endpoint does
// not take (nothing read: failed). Each counts once under its outcome:
// stored 2, with_rejects 1, failed 1.
func TestBodiesCountedByOutcome(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, `
shards: [{name: s1}]
farms:
  - {id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}
`)
	clock := pipelinetest.NewClock(noon)
	m := metrics.New(env.Control, env.Shards, clock.Now, 0)
	p := pipelinetest.New(t, env, pipelinetest.Options{Now: clock.Now, NoStart: true,
		Ingest: func(c *ingest.Config) { c.Observer = m.Ingest() }})
	srv := server.New(env.Control, env.Shards, server.DefaultConfig())
	srv.MountIngest(p.In, 1<<20, 2)
	srv.MountMetrics(m.Handler())
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	post := func(contentType, body string) (int, ingest.Summary) {
		t.Helper()
		resp, err := http.Post(ts.URL+"/v1/readings", contentType, strings.NewReader(body))
		testdb.Must(t, err, "POST /v1/readings")
		defer resp.Body.Close()
		var sum ingest.Summary
		testdb.Must(t, json.NewDecoder(resp.Body).Decode(&sum), "decode the summary")
		return resp.StatusCode, sum
	}
	var clean strings.Builder
	for i := range 3 {
		at := noon.Add(-time.Minute + time.Duration(2*i)*time.Second)
		clean.WriteString(ndjson("T-1", at, at.Add(time.Second)))
	}
	if code, sum := post("application/x-ndjson", clean.String()); code != 200 || sum.Accepted != 3 || sum.Rejected != 0 {
		t.Fatalf("clean body: %d %+v, want 200 and 3 accepted", code, sum)
	}
	withRejects := ndjson("T-1", noon.Add(-10*time.Second), noon) + ndjson("T-9", noon, noon) + "{not json\n"
	if code, sum := post("application/x-ndjson", withRejects); code != 200 || sum.Accepted != 1 || sum.Rejected != 2 {
		t.Fatalf("body with rejects: %d %+v, want 200, 1 accepted and 2 rejected", code, sum)
	}
	if code, sum := post("application/x-ndjson", clean.String()); code != 200 || sum.Duplicate != 3 {
		t.Fatalf("the clean body again: %d %+v, want 200 and 3 duplicates", code, sum)
	}
	if code, _ := post("text/plain", clean.String()); code != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain body: %d, want 415", code)
	}
	expect(t, scrape(t, ts.URL+"/metrics"), map[string]float64{
		`galewatch_ingest_bodies_total{outcome="stored"}`:             2,
		`galewatch_ingest_bodies_total{outcome="with_rejects"}`:       1,
		`galewatch_ingest_bodies_total{outcome="failed"}`:             1,
		`galewatch_ingest_rows_total{lane="none",outcome="rejected"}`: 2,
	})
}
