package rollup_test

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/simulate"
	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/window"
)

// BenchmarkRollupFarmDay: one Ardnave farm-day (12,960,000 readings on 3
// shards). The figure is the wall time from enqueueing the farm-day's jobs
// to all of them completed; the floor is the same aggregate SQL run bare on
// the 3 shards in parallel, in the same run, alternating. Each of the three
// rounds then runs one dirty turbine-day nine times through the job path,
// set beside that round's farm-day; then the rows and pages one turbine
// reads with and without the covering key.
// Run: make bench-rollup.
func BenchmarkRollupFarmDay(b *testing.B) {
	for i := 0; i < b.N; i++ {
		benchRollupFarmDay(b)
	}
}

func benchRollupFarmDay(b *testing.B) {
	ctx := context.Background()
	report := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		fmt.Println(msg)
		b.Log(msg)
	}
	tb := setup(b, benchFleet, pipelinetest.Options{WorkersPerShard: 2})
	env := tb.Env
	var version string
	testdb.Must(b, env.Control.QueryRow(ctx, `SHOW server_version`).Scan(&version), "version")
	report("machine: %d CPUs, %s, Postgres %s", runtime.NumCPU(), runtime.Version(), version)

	sc, err := simulate.FarmConfig(env.Plan, "ardnave-point", time.Date(2026, 8, 1, 0, 0, 0, 0, london), time.Date(2026, 8, 2, 0, 0, 0, 0, london), 42)
	testdb.Must(b, err, "config")
	sc.ExactClocks = true // every reading inside the local day: exactly 12,960,000 rows to aggregate
	// Loaded once every simulated arrival has happened (the delay tail
	// reaches into 3 August; ingest refuses received_at from the future).
	tb.Clock.Set(time.Date(2026, 8, 4, 3, 0, 0, 0, london))
	loadStart := time.Now()
	tb.Load(b, sc)
	report("loaded  12,960,000 readings through ingest in %.1f s", time.Since(loadStart).Seconds())
	shards := []string{"s1", "s2", "s3"}
	for _, s := range shards {
		// What autovacuum does on its own after a load; done here so that
		// every run sees the same visibility map and statistics.
		testdb.Exec(b, env.Shards.Pool(s), `VACUUM (ANALYZE) readings`)
		testdb.Exec(b, env.Shards.Pool(s), `TRUNCATE dirty_mark`)
	}
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	history(b, tb, shards, report)

	quiesce(b, tb, shards, report, "before the farm-day runs")
	bare := func() time.Duration { return bareSQL(b, tb, shards, day, nil) }
	var farmWork, events, farmTook []time.Duration
	took := &tookRecorder{}
	tb.Computer.OnResult = took.add
	defer func() { tb.Computer.OnResult = nil }()
	viaJobs := func() time.Duration {
		took.take()
		defer func() { farmTook = append(farmTook, slices.Max(took.take())) }()
		start := time.Now()
		ids := tb.Enqueue(b, "ardnave-point", "2026-08-01", rollup.ReasonManual, jobs.PriorityManual)
		work, last := waitJobsDone(b, tb, ids)
		farmWork = append(farmWork, work)
		events = append(events, time.Since(start))
		return last.Sub(start)
	}
	bare() // warm the cache for both
	// Rounds: the farm-day (its floor, then its jobs), then one dirty
	// turbine-day nine times, so that each round's turbine is set beside a
	// farm-day measured minutes before it, on the machine as it was then.
	// This machine's speed drifts by up to half between minutes (the same
	// statement 47 then 70 ms, 2026-12-01), and three farm-days followed by
	// all the turbines set them minutes apart: the ratio moved 0.93-1.33 %
	// between runs of the same code. Each round starts quiet.
	const rounds, perRound = 3, 9
	var floors, runs []time.Duration
	var dirty, dirtyWork, dirtyTook []time.Duration
	var paired, pairedWork []float64
	for r := 0; r < rounds; r++ {
		if r > 0 {
			quiesce(b, tb, shards, report, fmt.Sprintf("before round %d's farm-day", r+1))
		}
		floors = append(floors, bare())
		runs = append(runs, viaJobs())
		// One dirty turbine-day through the job path: a pending request
		// naming one turbine and its dirty job, as the drain would enqueue
		// them.
		quiesce(b, tb, shards, report, fmt.Sprintf("before round %d's dirty turbine-days", r+1))
		took.take()
		var round, roundWork []time.Duration
		for i := 0; i < perRound; i++ {
			start := time.Now()
			id := enqueueDirty(b, tb, "AP-050", "s1")
			work, last := waitJobsDone(b, tb, []int64{id})
			round = append(round, last.Sub(start))
			roundWork = append(roundWork, work)
			dirtyTook = append(dirtyTook, took.take()...)
		}
		dirty, dirtyWork = append(dirty, round...), append(dirtyWork, roundWork...)
		paired = append(paired, 100*median(round).Seconds()/runs[r].Seconds())
		pairedWork = append(pairedWork, 100*median(roundWork).Seconds()/farmWork[r].Seconds())
		report("round   %d: farm-day floor %.2f s, jobs %.2f s; one turbine-day %.3f s (runs %v) = %.2f %% of this round's farm-day",
			r+1, floors[r].Seconds(), runs[r].Seconds(), median(round).Seconds(), round, paired[r])
	}
	tb.Computer.OnResult = nil
	floor, job := median(floors), median(runs)
	const rows = 12_960_000
	report("floor   same aggregate SQL, bare, 3 shards in parallel: %6.2f s  %9.0f rows/s  (runs %v)", floor.Seconds(), rows/floor.Seconds(), floors)
	report("rollup  enqueue → 3 rollup_day jobs done (River):       %6.2f s  %9.0f rows/s  (runs %v)  ratio to floor %.2f", job.Seconds(), rows/job.Seconds(), runs, job.Seconds()/floor.Seconds())
	report("        (done: the last job's finalized_at, its rows committed; the completion events came %.2f s after enqueue, runs %v:", median(events).Seconds(), events)
	report("        River's completer records job states in batches every 250 ms)")
	b.ReportMetric(floor.Seconds(), "floor-s")
	b.ReportMetric(job.Seconds(), "jobs-s")
	b.ReportMetric(job.Seconds()/floor.Seconds(), "ratio")
	if n := testdb.Int(b, env.Control, `SELECT sum(received) FROM turbine_day WHERE farm_id = 'ardnave-point' AND day = '2026-08-01'`); n != rows {
		b.Fatalf("the jobs counted %d readings, want %d", n, rows)
	}
	minimal := countFloor(b, tb, shards, day)
	report("        plain count(*) GROUP BY turbine, 3 shards:      %6.2f s  (context: the cheapest aggregate over the same rows)", minimal.Seconds())
	// The input fingerprint's cost: the farm-day's own statements, bare,
	// with input_fingerprint as it is and with it made a constant on the
	// shards (the sums still added up, no reading hashed), in five pairs
	// whose order alternates against the machine's drift; the median of the
	// pairs' differences against this run's farm-day.
	withFP, withoutFP := fingerprintSwitch(b, tb, shards)
	var diffs []float64
	var hashed, constant []time.Duration
	for i := 0; i < 5; i++ {
		var h, c time.Duration
		if i%2 == 0 {
			withoutFP()
			c = bare()
			withFP()
			h = bare()
		} else {
			h = bare()
			withoutFP()
			c = bare()
			withFP()
		}
		hashed, constant = append(hashed, h), append(constant, c)
		diffs = append(diffs, (h - c).Seconds())
	}
	fp := medianFloat(diffs)
	report("fingerprint the farm-day's statements bare, hashing each reading vs not: %+.3f s (median of 5 pairs' differences %.3f; medians %.3f s vs %.3f s) = %.2f %% of the farm-day's floor, %.2f %% of its jobs (target ≤ 5 %%)",
		fp, diffs, median(hashed).Seconds(), median(constant).Seconds(), 100*fp/floor.Seconds(), 100*fp/job.Seconds())
	b.ReportMetric(100*fp/job.Seconds(), "fingerprint-%")

	// Availability contracts' cost (categories and energy): the farm-day's
	// bare statements as they are and as they were before contracts
	// (testdata), on the same readings, in five rounds whose order rotates
	// against the machine's drift. The third set is the floor: the
	// statements before contracts plus only each reading's category key and
	// energy and one sum of each, what any contract computed per reading in
	// the same statement pays.
	// The fourth set is the same statement without categories, as a farm on
	// the default contract without a power curve runs it: what such a farm
	// pays over the statements before contracts.
	var now, before, floorRuns, countsRuns []time.Duration
	var cdiffs, fdiffs, ddiffs []float64
	for i := 0; i < 5; i++ {
		var n, o, f, d time.Duration
		runs := []func(){
			func() { o = bareStatements(b, tb, shards, day, nil, statementsBefore) },
			func() { n = bare() },
			func() { f = bareStatements(b, tb, shards, day, nil, statementsFloor) },
			func() { d = bareStatements(b, tb, shards, day, nil, statementsCountsOnly) },
		}
		for k := range runs {
			runs[(i+k)%len(runs)]()
		}
		now, before, floorRuns, countsRuns = append(now, n), append(before, o), append(floorRuns, f), append(countsRuns, d)
		cdiffs = append(cdiffs, (n - o).Seconds())
		fdiffs = append(fdiffs, (f - o).Seconds())
		ddiffs = append(ddiffs, (d - o).Seconds())
	}
	cost, floorCost, defaultCost := medianFloat(cdiffs), medianFloat(fdiffs), medianFloat(ddiffs)
	report("contract the farm-day's statements bare, with categories and energy vs before them: %+.3f s (median of 5 rounds' differences %.3f; medians %.3f s vs %.3f s) = %+.1f %% of the statements before (target ≤ 15 %%)",
		cost, cdiffs, median(now).Seconds(), median(before).Seconds(), 100*cost/median(before).Seconds())
	report("        its floor, the statements before plus each reading's category key, actual and potential energy and one sum of each (no split, no arrays): %+.3f s (differences %.3f; median %.3f s) = %+.1f %% of the statements before",
		floorCost, fdiffs, median(floorRuns).Seconds(), 100*floorCost/median(before).Seconds())
	report("        the contract's statements over their floor: %+.1f points (target ≤ 10)", 100*(cost-floorCost)/median(before).Seconds())
	report("default  the farm-day's statements bare without categories (a farm on the default contract, no power curve) vs before contracts: %+.3f s (differences %.3f; median %.3f s) = %+.1f %% of the statements before (target ≈ 0)",
		defaultCost, ddiffs, median(countsRuns).Seconds(), 100*defaultCost/median(before).Seconds())
	b.ReportMetric(100*cost/median(before).Seconds(), "contract-%")
	b.ReportMetric(100*floorCost/median(before).Seconds(), "contract-floor-%")
	b.ReportMetric(100*defaultCost/median(before).Seconds(), "default-%")

	one, oneWork, fullWork := median(dirty), median(dirtyWork), median(farmWork)
	onePct := medianFloat(paired)
	report("dirty   one turbine-day (AP-050) via its rollup_day job, enqueue→done: %.2f %% of its round's farm-day (median of the rounds %.2f); all %d runs' median %.3f s = %.2f %% of the farm-days' median %.2f s (runs %v)",
		onePct, paired, len(dirty), one.Seconds(), 100*one.Seconds()/job.Seconds(), job.Seconds(), dirty)
	report("        recompute time inside the jobs (attempted→finalized, longest job): %.2f %% of its round's (rounds %.2f); medians: one turbine %6.3f s vs farm-day %6.3f s = %.2f %%",
		medianFloat(pairedWork), pairedWork, oneWork.Seconds(), fullWork.Seconds(), 100*oneWork.Seconds()/fullWork.Seconds())
	report("        the recompute itself (Result.Took: shard BEGIN → shard commit, River's pickup and completion left out): one turbine %6.3f s (runs %v) vs farm-day %6.3f s (longest shard, runs %v) = %.2f %%",
		median(dirtyTook).Seconds(), dirtyTook, median(farmTook).Seconds(), farmTook, 100*median(dirtyTook).Seconds()/median(farmTook).Seconds())
	report("        %d of the %d one-turbine corrections computed their ranges on two shard sessions (a helper session beside the job's)", took.helped, len(dirtyTook))
	b.ReportMetric(onePct, "dirty-%-of-farm-day")
	b.ReportMetric(medianFloat(pairedWork), "dirty-work-%")
	oneBare := bareSQL(b, tb, []string{"s1"}, day, []string{"AP-050"})
	report("        the same SQL bare, one turbine:                   %6.3f s", oneBare.Seconds())
	explainOne(b, tb, report)
	fastWindowReads(b, tb, report)
	replayWork(b, tb, report)
}

// history gives the farm its previous 30 days, as a month of service
// leaves them: on the control database, 3 shards' parts and a fast and a
// final row per window; on each shard, every turbine's windows and their
// sums. The statements of a recompute must cost the day they touch, not
// the history. The control rows are not analysed here (autovacuum decides
// when, as in production); the shards' month-old rows are.
func history(b *testing.B, tb *bundle, shards []string, report func(string, ...any)) {
	first := time.Date(2026, 7, 1, 23, 0, 0, 0, time.UTC) // local midnight of 2 July, Europe/London
	testdb.Exec(b, tb.Env.Control, `
		INSERT INTO farm_window_part (farm_id, window_start, shard_name, window_end, day, expected, received, available, late, readings, shard_xid, computed_at)
		SELECT 'ardnave-point', $1::timestamptz + m * interval '1 minute', s, $1::timestamptz + (m + 1) * interval '1 minute',
		       date '2026-07-02' + m / 1440, 3000, 2990, 2980, 0, 2990, 1, $1::timestamptz + interval '31 days'
		FROM generate_series(0, 30 * 1440 - 1) AS m, unnest(ARRAY['s1', 's2', 's3']) AS s`, first)
	testdb.Exec(b, tb.Env.Control, `
		INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late, readings,
		                         computed_at, complete_through, revision)
		SELECT 'ardnave-point', $1::timestamptz + m * interval '1 minute', p, $1::timestamptz + (m + 1) * interval '1 minute',
		       date '2026-07-02' + m / 1440, 9000, 8970, 8940, 0, 8970, $1::timestamptz + interval '31 days', $1::timestamptz + interval '31 days',
		       CASE p WHEN 'fast' THEN 0 ELSE 1 END
		FROM generate_series(0, 30 * 1440 - 1) AS m, unnest(ARRAY['fast', 'final']) AS p`, first)
	var wg sync.WaitGroup
	for _, s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool := tb.Env.Shards.Pool(s)
			testdb.Exec(b, pool, `
				INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
				                            beyond_cadence, out_of_service, late, early, computed_at)
				SELECT t.id, $1::timestamptz + m * interval '1 minute', $1::timestamptz + (m + 1) * interval '1 minute', 'ardnave-point',
				       date '2026-07-02' + m / 1440, 30, 30, 30, 0, 0, 0, 0, $1::timestamptz + interval '31 days'
				FROM unnest($2::text[]) AS t(id), generate_series(0, 30 * 1440 - 1) AS m`, first, tb.turbinesOn(b, s))
			testdb.Exec(b, pool, `
				INSERT INTO farm_window_sum (farm_id, window_start, window_end, day, turbines, expected, received, available, late, readings, span_s)
				SELECT 'ardnave-point', $1::timestamptz + m * interval '1 minute', $1::timestamptz + (m + 1) * interval '1 minute',
				       date '2026-07-02' + m / 1440, $2::integer, 30 * $2::integer, 30 * $2::integer, 30 * $2::integer, 0, 30 * $2::integer, 60 * $2::integer
				FROM generate_series(0, 30 * 1440 - 1) AS m`, first, len(tb.turbinesOn(b, s)))
			testdb.Exec(b, pool, `VACUUM (ANALYZE) turbine_window, farm_window_sum`)
		}()
	}
	wg.Wait()
	var windows int64
	for _, s := range shards {
		windows += testdb.Int(b, tb.Env.Shards.Pool(s), `SELECT count(*) FROM turbine_window WHERE farm_id = 'ardnave-point' AND day < '2026-08-01'`)
	}
	report("history the farm's previous 30 days: on the control database %d parts, %d fast and final windows; on the shards %d turbine windows",
		testdb.Int(b, tb.Env.Control, `SELECT count(*) FROM farm_window_part WHERE farm_id = 'ardnave-point' AND day < '2026-08-01'`),
		testdb.Int(b, tb.Env.Control, `SELECT count(*) FROM farm_window WHERE farm_id = 'ardnave-point' AND day < '2026-08-01'`), windows)
}

// turbinesOn lists the farm's turbines on shard s.
func (tb *bundle) turbinesOn(b *testing.B, s string) []string {
	ts, err := controldb.New(tb.Env.Control).TurbineRollupList(context.Background(), controldb.TurbineRollupListParams{FarmID: "ardnave-point", ShardName: s, DayStart: time.Now().AddDate(0, 0, -1), DayEnd: time.Now()})
	testdb.Must(b, err, "turbines of %s", s)
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}

// fastWindowReads measures what the fast path's statement reads for one
// window (12:00 local, every turbine of shard s1) over the loaded day: the
// index entries and heap rows it touched on the readings partitions (this
// transaction's statistics), against the readings the window holds and the
// day's partition.
func fastWindowReads(b *testing.B, tb *bundle, report func(string, ...any)) {
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	farm, err := controldb.New(tb.Env.Control).FarmDayGet(ctx, controldb.FarmDayGetParams{ID: "ardnave-point", Day: day})
	testdb.Must(b, err, "farm")
	rules := fleet.RulesOfDay(farm)
	g := window.GridOfDay(farm, day)
	ts, err := controldb.New(tb.Env.Control).TurbineRollupList(ctx, controldb.TurbineRollupListParams{FarmID: "ardnave-point", ShardName: "s1", DayStart: farm.DayStart, DayEnd: farm.DayEnd})
	testdb.Must(b, err, "turbines")
	turbines := window.TurbinesOf(ts)
	const w = 720 // 12:00 local
	pairs := window.Pairs{}
	pairs.AddRange(turbines, w, w+1)
	var idxRead, heapFetch, seqRead int64
	var work window.ShardWork
	start := time.Now()
	// The counters of this backend that are not yet flushed include earlier
	// statements on the connection: read them before and after.
	counters := func(tx pgx.Tx) (idx, fetch, seq int64, err error) {
		err = tx.QueryRow(ctx, `SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)::bigint,
				coalesce(sum(pg_stat_get_xact_tuples_fetched(i.indexrelid)), 0)::bigint,
				coalesce((SELECT sum(seq_tup_read) FROM pg_stat_xact_user_tables WHERE relname LIKE 'readings_p%'), 0)::bigint
			FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname LIKE 'readings_p%'`).Scan(&idx, &fetch, &seq)
		return
	}
	err = pgx.BeginFunc(ctx, tb.Env.Shards.Pool("s1"), func(tx pgx.Tx) error {
		i0, f0, s0, err := counters(tx)
		if err != nil {
			return err
		}
		start = time.Now()
		if work, err = window.Compute(ctx, sharddb.New(tx), g, turbines, rules, pairs, []int{w}, false, time.Now()); err != nil {
			return err
		}
		i1, f1, s1, err := counters(tx)
		if err != nil {
			return err
		}
		idxRead, heapFetch, seqRead = i1-i0, f1-f0, s1-s0
		return errRollback
	})
	took := time.Since(start)
	if !errors.Is(err, errRollback) {
		testdb.Must(b, err, "fast window")
	}
	dayRows := testdb.Int(b, tb.Env.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE recorded_at >= $1 AND recorded_at < $2`, g.Start, g.End)
	report("fast    one window (12:00, 100 turbines of s1): %d readings counted; read %d index entries, %d heap fetches, %d rows by sequential scan (the day on s1: %d readings) in %s",
		work.RowsRead, idxRead, heapFetch, seqRead, dayRows, took.Round(time.Millisecond))
	b.ReportMetric(float64(idxRead+seqRead)/float64(max(1, work.RowsRead)), "fast-rows-read-per-window-reading")
}

var errRollback = errors.New("rollback")

// replayWork: the story's Tuesday replay of the Ardnave hole (2,997,000
// readings) arrives in 60 batches, one a second, with the periodic drain
// after each, into the day loaded above (the hole deleted first). It prints
// how many recomputes that caused per farm-day-shard and the rows they read
// per row ingested.
func replayWork(b *testing.B, tb *bundle, report func(string, ...any)) {
	ctx := context.Background()
	hole0, hole1 := time.Date(2026, 8, 1, 5, 58, 0, 0, london), time.Date(2026, 8, 1, 11, 31, 0, 0, london)
	for _, s := range []string{"s1", "s2", "s3"} {
		testdb.Exec(b, tb.Env.Shards.Pool(s), `DELETE FROM readings WHERE recorded_at >= $1 AND recorded_at < $2`, hole0, hole1)
		testdb.Exec(b, tb.Env.Shards.Pool(s), `TRUNCATE dirty_mark`)
	}
	replay, err := simulate.Scenario("ardnave-saturday", tb.Env.Plan, simulate.PhaseReplay, 42)
	testdb.Must(b, err, "scenario")
	replay.ExactClocks = true
	var rowsRead, recomputes atomic.Int64
	tb.Computer.OnResult = func(r rollup.Request, res rollup.Result) {
		if r.Reason == rollup.ReasonDirty && !res.Skipped {
			recomputes.Add(1)
			rowsRead.Add(res.RowsRead)
		}
	}
	defer func() { tb.Computer.OnResult = nil }()
	dec, wait := simulate.Stream(ctx, replay)
	const batches = 60
	per := 2_997_000 / batches
	now := time.Date(2026, 8, 4, 11, 0, 0, 0, london)
	var ingested int64
	start := time.Now()
	for i := 0; i < batches; i++ {
		tb.Clock.Set(now)
		sum, err := tb.In.Ingest(ctx, "replay", &chunk{dec: dec, left: per})
		testdb.Must(b, err, "ingest batch %d", i)
		ingested += sum.Accepted
		_, err = tb.Drainer.Drain(ctx, jobs.RollupDayEnqueue(tb.Client))
		testdb.Must(b, err, "drain")
		now = now.Add(time.Second)
	}
	_, err = wait()
	testdb.Must(b, err, "simulate")
	tb.Clock.Set(now.Add(11 * time.Second))
	_, err = tb.Drainer.Drain(ctx, jobs.RollupDayEnqueue(tb.Client))
	testdb.Must(b, err, "final drain")
	tb.WaitJobs(b)
	report("replay  the hole (%d rows) in %d batches with the drain running: %d recomputes over 3 farm-day-shards (%.1f each), %d rows read = %.2f per row ingested (%.1f s)",
		ingested, batches, recomputes.Load(), float64(recomputes.Load())/3, rowsRead.Load(), float64(rowsRead.Load())/float64(ingested), time.Since(start).Seconds())
	b.ReportMetric(float64(rowsRead.Load())/float64(ingested), "replay-rows-read-per-row")

	// One turbine-day in the state a dirty recompute really meets: right
	// after the replay, its replayed rows not yet all-visible (autovacuum has
	// not been by), so the covering key needs heap fetches for them.
	var fresh []time.Duration
	for i := 0; i < 3; i++ {
		id := enqueueDirty(b, tb, "AP-050", "s1")
		fresh = append(fresh, waitJobs(b, tb, []int64{id}))
	}
	report("dirty   one turbine-day right after the replay: %6.3f s inside its job (runs %v); plain aggregate %s",
		median(fresh).Seconds(), fresh, explainTurbine(b, tb, "readings"))
	b.ReportMetric(median(fresh).Seconds()*1000, "dirty-after-replay-ms")
}

// chunk reads at most left records of dec, then says io.EOF (dec goes on
// in the next chunk).
type chunk struct {
	dec  reading.Decoder
	left int
}

func (c *chunk) Next() (*reading.Record, error) {
	if c.left == 0 {
		return nil, io.EOF
	}
	c.left--
	return c.dec.Next()
}

// benchFleet is ArdnaveFleet with a power curve and a contract on Ardnave
// Point: the farm-day counts categories and energy as a contracted farm's.
var benchFleet = strings.Replace(testdb.ArdnaveFleet, "    timezone: Europe/London\n", `    timezone: Europe/London
    model: B3
    contract: {name: bench, cut_in_ms: 3.5, cut_out_ms: 25, states: {"17": requested_shutdown}, excluded: [out_of_environmental_spec]}
`, 1) + `models:
  - {name: B3, curve: [[3, 0], [5, 300], [8, 1400], [11, 2900], [12.5, 3000], [25, 3000]]}
`

// bareSQL runs the job's own shard statements (the windows of the day from
// the readings, their sums, the day added up from them) directly on each
// shard in parallel, in one transaction each, without River, locks or the
// control database.
func bareSQL(b *testing.B, tb *bundle, shards []string, day time.Time, only []string) time.Duration {
	return bareStatements(b, tb, shards, day, only, statementsNow)
}

// The window and day statements as they were before availability contracts
// (testdata, sqlc's text of 994a426): what the categories and energy are
// measured against; and the window statement's contract floor (the same
// with each reading's category key and energy and one sum of each).
var (
	//go:embed testdata/turbine_window_upsert_before_contracts.sql
	upsertBeforeContracts string
	//go:embed testdata/turbine_day_from_windows_before_contracts.sql
	dayBeforeContracts string
	//go:embed testdata/turbine_window_upsert_contract_floor.sql
	upsertContractFloor string
)

// Which statements bareStatements runs.
type statements int

const (
	statementsNow        statements = iota // today's (sharddb)
	statementsBefore                       // before contracts (testdata)
	statementsFloor                        // before contracts plus the contract floor (testdata)
	statementsCountsOnly                   // today's, without categories (a default farm's)
)

// bareStatements is bareSQL, with the given statements.
func bareStatements(b *testing.B, tb *bundle, shards []string, day time.Time, only []string, which statements) time.Duration {
	ctx := context.Background()
	farm, err := controldb.New(tb.Env.Control).FarmDayGet(ctx, controldb.FarmDayGetParams{ID: "ardnave-point", Day: day})
	testdb.Must(b, err, "farm")
	rules := fleet.RulesOfDay(farm)
	g := window.GridOfDay(farm, day)
	type shardArgs struct {
		turbines []window.Turbine
		pairs    window.Pairs
		ids      []string
	}
	args := map[string]shardArgs{}
	for _, s := range shards {
		ts, err := controldb.New(tb.Env.Control).TurbineRollupList(ctx, controldb.TurbineRollupListParams{FarmID: "ardnave-point", ShardName: s, OnlyIds: only, DayStart: farm.DayStart, DayEnd: farm.DayEnd})
		testdb.Must(b, err, "turbines")
		a := shardArgs{turbines: window.TurbinesOf(ts), pairs: window.Pairs{}}
		a.pairs.AddRange(a.turbines, 0, g.Len())
		for _, t := range a.turbines {
			a.ids = append(a.ids, t.ID)
		}
		args[s] = a
	}
	windows := make([]int, g.Len())
	for i := range windows {
		windows[i] = i
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := args[s]
			err := pgx.BeginFunc(ctx, tb.Env.Shards.Pool(s), func(tx pgx.Tx) error {
				sq := sharddb.New(tx)
				if which != statementsNow && which != statementsCountsOnly {
					u := a.pairs.UpsertParams(g, a.turbines, rules, time.Now())
					args := []any{u.DayStart, u.DayEnd, u.TurbineIds, u.CadenceSeconds, u.ServiceFrom, u.ServiceTo,
						u.FirstWindow, u.LastWindow, u.WindowS, u.LaneThresholdSeconds, u.EarlyToleranceSeconds, u.FarmID, u.Day, u.ComputedAt}
					text := upsertBeforeContracts
					if which == statementsFloor {
						text = upsertContractFloor
						args = append(args, u.StateCodes, u.StateKeys, u.KeyAvailable, u.KeyUnavailable, u.KeyEnvironment, u.CutInMs, u.CutOutMs, u.Curve)
					}
					if _, err := tx.Exec(ctx, text, args...); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, dayBeforeContracts, g.Start, a.ids, g.End, g.FarmID, day)
					return err
				}
				if which == statementsCountsOnly {
					u := a.pairs.UpsertParams(g, a.turbines, rules, time.Now())
					u.Categories, u.Curve = false, nil
					if _, err := sq.TurbineWindowUpsert(ctx, u); err != nil {
						return err
					}
				} else if _, err := window.Compute(ctx, sq, g, a.turbines, rules, a.pairs, windows, false, time.Now()); err != nil {
					return err
				}
				_, err := sq.TurbineDayFromWindows(ctx, sharddb.TurbineDayFromWindowsParams{DayStart: g.Start, DayEnd: g.End, FarmID: g.FarmID, Day: day, TurbineIds: a.ids})
				return err
			})
			testdb.Must(b, err, "bare SQL on %s", s)
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// fingerprintSwitch returns functions that put input_fingerprint back as
// the migration made it, and make it a constant 0, on every shard.
func fingerprintSwitch(b *testing.B, tb *bundle, shards []string) (with, without func()) {
	const fn = "input_fingerprint(timestamptz, boolean)"
	defs := map[string]string{}
	for _, s := range shards {
		var def string
		testdb.Must(b, tb.Env.Shards.Pool(s).QueryRow(context.Background(), `SELECT pg_get_functiondef($1::regprocedure)`, fn).Scan(&def), "definition of %s", fn)
		defs[s] = def
	}
	set := func(def func(shard string) string) {
		for _, s := range shards {
			testdb.Exec(b, tb.Env.Shards.Pool(s), def(s))
		}
	}
	with = func() { set(func(s string) string { return defs[s] }) }
	without = func() {
		set(func(string) string {
			return `CREATE OR REPLACE FUNCTION input_fingerprint(p_recorded_at timestamptz, p_available boolean) RETURNS integer
				LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 0 $$`
		})
	}
	return with, without
}

// countFloor times the cheapest aggregate over the day's readings, on the
// shards in parallel.
func countFloor(b *testing.B, tb *bundle, shards []string, day time.Time) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			testdb.Exec(b, tb.Env.Shards.Pool(s), `SELECT turbine_id, count(*), count(*) FILTER (WHERE available) FROM readings
				WHERE recorded_at >= '2026-07-31T23:00:00Z' AND recorded_at < '2026-08-01T23:00:00Z' GROUP BY turbine_id`)
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func enqueueDirty(b *testing.B, tb *bundle, turbine, shard string) int64 {
	ctx := context.Background()
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	// The marks a whole-day replay of the turbine in 60 batches leaves, as
	// ingest writes them: every window of its day dirty, one run of
	// consecutive windows per batch.
	farm, err := controldb.New(tb.Env.Control).FarmDayGet(ctx, controldb.FarmDayGetParams{ID: "ardnave-point", Day: day})
	testdb.Must(b, err, "farm")
	g := window.GridOfDay(farm, day)
	marks := sharddb.DirtyWindowInsertParams{FarmID: "ardnave-point", MarkedAt: tb.Clock.Now()}
	const batches = 60
	for k := 0; k < batches; k++ {
		first, next := k*g.Len()/batches, (k+1)*g.Len()/batches
		s, _ := g.Bounds(first)
		_, e := g.Bounds(next - 1)
		marks.Days = append(marks.Days, day)
		marks.TurbineIds = append(marks.TurbineIds, turbine)
		marks.WindowStarts = append(marks.WindowStarts, s)
		marks.WindowEnds = append(marks.WindowEnds, e)
		marks.Windows = append(marks.Windows, int32(next-first))
	}
	testdb.Must(b, sharddb.New(tb.Env.Shards.Pool(shard)).DirtyWindowInsert(ctx, marks), "dirty windows")
	var id int64
	err = pgx.BeginFunc(ctx, tb.Env.Control, func(tx pgx.Tx) error {
		res, err := tb.Client.InsertTx(ctx, tx, jobs.RollupDayArgs{FarmID: "ardnave-point", Day: "2026-08-01", Shard: shard, Reason: rollup.ReasonDirty},
			&river.InsertOpts{Priority: jobs.PriorityDirty})
		if err != nil {
			return err
		}
		id = res.Job.ID
		return controldb.New(tx).RollupPendingPut(ctx, controldb.RollupPendingPutParams{
			FarmID: "ardnave-point", Day: day, ShardName: shard,
			TurbineIds: []string{turbine}, JobID: id, RequestedAt: time.Now(),
		})
	})
	testdb.Must(b, err, "enqueue dirty")
	return id
}

// waitJobs waits for the jobs to complete and returns the longest time one
// of them spent working (attempted_at → finalized_at).
func waitJobs(b *testing.B, tb *bundle, ids []int64) time.Duration {
	longest, _ := waitJobsDone(b, tb, ids)
	return longest
}

// waitJobsDone waits for the jobs to complete and returns the longest time
// one of them spent working (attempted_at → finalized_at) and when the last
// of them finished (its finalized_at: the executor's clock when the work
// returned, its transactions committed). River's completer records the
// state, and so delivers the completion events, in batches every 250 ms.
func waitJobsDone(b *testing.B, tb *bundle, ids []int64) (time.Duration, time.Time) {
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var longest time.Duration
	var last time.Time
	for len(want) > 0 {
		select {
		case ev := <-tb.Events:
			if !want[ev.Job.ID] {
				continue
			}
			if ev.Kind != river.EventKindJobCompleted {
				b.Fatalf("job %d failed: %v", ev.Job.ID, ev.Job.Errors)
			}
			if ev.Job.AttemptedAt == nil || ev.Job.FinalizedAt == nil {
				b.Fatalf("job %d completed without attempted_at or finalized_at", ev.Job.ID)
			}
			longest = max(longest, ev.Job.FinalizedAt.Sub(*ev.Job.AttemptedAt))
			if ev.Job.FinalizedAt.After(last) {
				last = *ev.Job.FinalizedAt
			}
			delete(want, ev.Job.ID)
		case <-time.After(5 * time.Minute):
			b.Fatalf("jobs %v not complete after 5 minutes", want)
		}
	}
	return longest, last
}

// explainOne reports the rows and buffers one turbine's day reads through
// the covering key, and through a plain key on a copy of the same rows.
// explainTurbine is EXPLAIN ANALYZE of a plain aggregate over AP-050's
// local day of 1 August on shard s1, read from table.
func explainTurbine(b *testing.B, tb *bundle, table string) string {
	const q = `SELECT turbine_id, count(*), count(*) FILTER (WHERE available), min(received_at - recorded_at), max(received_at)
		FROM %s WHERE turbine_id = 'AP-050' AND recorded_at >= '2026-07-31T23:00:00Z' AND recorded_at < '2026-08-01T23:00:00Z' GROUP BY turbine_id`
	var plan []map[string]any
	testdb.Must(b, tb.Env.Shards.Pool("s1").QueryRow(context.Background(), `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+fmt.Sprintf(q, table)).Scan(&plan), "explain")
	root := plan[0]["Plan"].(map[string]any)
	return fmt.Sprintf("%.1f ms, shared buffers hit %v read %v, scan %s", plan[0]["Execution Time"], root["Shared Hit Blocks"], root["Shared Read Blocks"], scanKinds(root))
}

func explainOne(b *testing.B, tb *bundle, report func(string, ...any)) {
	pool := tb.Env.Shards.Pool("s1")
	explain := func(table string) string { return explainTurbine(b, tb, table) }
	report("key     one turbine-day, covering key: %s", explain("readings"))
	testdb.Exec(b, pool, `CREATE TABLE readings_plainkey (LIKE readings, PRIMARY KEY (turbine_id, recorded_at))`)
	testdb.Exec(b, pool, `INSERT INTO readings_plainkey SELECT * FROM readings WHERE recorded_at >= '2026-07-31T23:00:00Z' AND recorded_at < '2026-08-01T23:00:00Z'`)
	testdb.Exec(b, pool, `VACUUM (ANALYZE) readings_plainkey`)
	explain("readings_plainkey") // warm, as the covering run was
	report("        one turbine-day, plain key:    %s", explain("readings_plainkey"))
	var pages int64
	testdb.Must(b, pool.QueryRow(context.Background(), `SELECT relpages FROM pg_class WHERE relname = 'readings_plainkey'`).Scan(&pages), "pages")
	report("        (the day's heap on this shard: %d pages)", pages)
}

func scanKinds(node map[string]any) string {
	kind := fmt.Sprint(node["Node Type"])
	if f, ok := node["Heap Fetches"]; ok {
		kind += fmt.Sprintf(" (heap fetches %v)", f)
	}
	if kids, ok := node["Plans"].([]any); ok {
		for _, k := range kids {
			kind += " > " + scanKinds(k.(map[string]any))
		}
	}
	return kind
}

func medianFloat(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// quiesce does, before a measured phase, the background work the phase
// before it left for Postgres to do on its own: vacuum and analyse the
// window tables it rewrote (what autovacuum would do, at a time of its
// choosing), then a checkpoint (the one the WAL of that phase would
// start). Either, running in the background of a 60 ms job on 2 cores,
// was the largest source of spread between runs.
func quiesce(b *testing.B, tb *bundle, shards []string, report func(string, ...any), when string) {
	ctx := context.Background()
	start := time.Now()
	for _, s := range shards {
		testdb.Exec(b, tb.Env.Shards.Pool(s), `VACUUM (ANALYZE) turbine_window, farm_window_sum`)
	}
	testdb.Exec(b, tb.Env.Control, `VACUUM (ANALYZE) farm_window_part, farm_window, reconciliation, turbine_day`)
	for _, p := range append([]*pgxpool.Pool{tb.Env.Control}, shardPools(tb, shards)...) {
		if _, err := p.Exec(ctx, `CHECKPOINT`); err != nil {
			b.Fatalf("checkpoint: %v", err)
		}
	}
	report("quiet   %s: vacuumed the window tables and checkpointed in %.1f s", when, time.Since(start).Seconds())
}

func shardPools(tb *bundle, shards []string) []*pgxpool.Pool {
	var out []*pgxpool.Pool
	for _, s := range shards {
		out = append(out, tb.Env.Shards.Pool(s))
	}
	return out
}

// tookRecorder keeps the wall time of every recompute that did work
// (Result.Took), for the benchmark to set beside its jobs' times.
type tookRecorder struct {
	mu   sync.Mutex
	took []time.Duration
	// helped counts the recomputes whose ranges ran on two shard sessions.
	helped int
}

func (r *tookRecorder) add(_ rollup.Request, res rollup.Result) {
	if res.Skipped || res.Windows == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.took = append(r.took, res.Took)
	if res.Sessions == 2 {
		r.helped++
	}
}

// take returns the times recorded since the last take.
func (r *tookRecorder) take() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.took
	r.took = nil
	return out
}
