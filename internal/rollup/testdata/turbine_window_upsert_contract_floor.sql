-- The floor of availability contracts' cost (BenchmarkRollupFarmDay): the
-- window statement before contracts (turbine_window_upsert_before_contracts.sql)
-- with only what any per-reading contract must add in the same statement:
-- each reading's category key, actual and potential energy, and one sum of
-- each per window. No split of a window's categories, no arrays, nothing
-- more written (the sums are referenced, times 0, so that they are computed).
-- $15..$22: the contract's state codes and keys, the available, unavailable
-- and environment keys, cut-in and cut-out, the power curve.
-- The statement as it was before availability contracts (commit 994a426, sqlc's text):
-- bench-rollup times it against today's on the same data (BenchmarkRollupFarmDay).
-- name: TurbineWindowUpsert :many
WITH run AS (
    SELECT u.turbine_id, u.cadence_seconds AS c, u.w0, u.w1,
           greatest($1::timestamptz, u.service_from) AS origin,
           least($2::timestamptz, u.service_to) AS stop
    FROM (SELECT unnest($3::text[]) AS turbine_id, unnest($4::integer[]) AS cadence_seconds,
                 unnest($5::timestamptz[]) AS service_from, unnest($6::timestamptz[]) AS service_to,
                 unnest($7::integer[]) AS w0, unnest($8::integer[]) AS w1) AS u
), t AS (
    SELECT run.turbine_id, run.c, run.w0, run.w1, run.origin, run.stop,
           CASE WHEN run.stop > run.origin THEN floor(extract(epoch FROM run.stop - run.origin) / run.c)::integer ELSE 0 END AS e,
           extract(epoch FROM run.origin - $1::timestamptz) AS off
    FROM run
), r AS (
    SELECT t.turbine_id, t.c, t.w0, t.w1, t.origin, t.stop, t.e, t.off,
           -- first slot that starts after the run's last window
           least(t.e, greatest(0, ceil(((t.w1 + 1) * $9::integer - t.off) / t.c)))::integer AS k_after,
           $1::timestamptz + t.w0 * $9::integer * interval '1 second' AS lo,
           least($1::timestamptz + (t.w1 + 1) * $9::integer * interval '1 second', $2::timestamptz) AS we1
    FROM t
), span AS (
    SELECT r.turbine_id, r.c, r.w0, r.w1, r.origin, r.stop, r.e, r.off, r.lo,
           r.c * interval '1 second' AS cadence,
           -- the arguments each reading is compared with, made intervals
           -- once (a generic plan would otherwise do it for every reading)
           $9::integer * interval '1 second' AS window_len,
           $10::float8 * interval '1 second' AS lane,
           $11::float8 * interval '1 second' AS tolerance,
           -- the start of the last slot (a reading after it, in a slot the
           -- day's or the service's end cut short, counts in it)
           CASE WHEN r.e > 0 THEN r.origin + (r.e - 1) * r.c * interval '1 second' END AS last_slot,
           -- the start of the window after the run's last
           $1::timestamptz + (r.w1 + 1) * $9::integer * interval '1 second' AS lo_next,
           least($2::timestamptz, greatest(r.we1,
               CASE WHEN r.k_after >= r.e THEN r.stop ELSE r.origin + r.k_after * r.c * interval '1 second' END)) AS hi
    FROM r
), win AS (
    SELECT s.turbine_id, w.i,
           $1::timestamptz + w.i * $9::integer * interval '1 second' AS window_start,
           least($1::timestamptz + (w.i + 1) * $9::integer * interval '1 second', $2::timestamptz) AS window_end,
           slot_count(w.i * $9::integer, (w.i + 1) * $9::integer, s.off, s.c, s.e) AS expected
    FROM span s CROSS JOIN LATERAL generate_series(s.w0, s.w1) AS w(i)
), agg AS (
    SELECT s.turbine_id, a.window_start, a.received, a.unavailable_slots, a.in_service, a.out_of_service, a.late, a.early, a.min_lag_ms, a.max_lag_ms, a.last_received_at, a.input_hash, a.k1, a.sa, a.sp
    FROM span s
    CROSS JOIN LATERAL (
        SELECT x.window_start,
               count(DISTINCT x.slot) AS received,
               count(DISTINCT x.slot) FILTER (WHERE NOT x.available) AS unavailable_slots,
               count(*) FILTER (WHERE x.in_service) AS in_service,
               count(*) FILTER (WHERE NOT x.in_service) AS out_of_service,
               count(*) FILTER (WHERE x.late) AS late,
               count(*) FILTER (WHERE x.early) AS early,
               (extract(epoch FROM min(x.lag)) * 1000)::bigint AS min_lag_ms,
               (extract(epoch FROM max(x.lag)) * 1000)::bigint AS max_lag_ms,
               max(x.received_at) AS last_received_at,
               sum(x.fp)::bigint AS input_hash,
               -- and one sum of each (a window of one category needs no more)
               min(x.key) AS k1, sum(x.actual_wh) AS sa, sum(x.potential_wh) AS sp
        FROM (SELECT y.in_service, y.slot, y.available, y.lag, y.late, y.early, y.received_at, y.fp, y.key, y.actual_wh, y.potential_wh,
                     -- the reading's window: its slot's, or (out of service)
                     -- its own time's
                     date_bin(s.window_len, coalesce(y.slot, y.recorded_at), $1::timestamptz) AS window_start
              -- Per reading, timestamps only (date_bin and comparisons: exact
              -- microsecond arithmetic, by value); the interval lag is kept
              -- for its minimum and maximum alone (slots as epoch seconds
              -- divided in floating point, and late/early as interval
              -- comparisons, cost more per reading).
              FROM (SELECT rd.recorded_at >= s.origin AND rd.recorded_at < s.stop AS in_service,
                           -- the start of the reading's cadence slot
                           slot_start(rd.recorded_at, s.origin, s.stop, s.cadence, s.last_slot) AS slot,
                           rd.recorded_at, rd.available,
                           rd.received_at - rd.recorded_at AS lag,
                           rd.received_at > rd.recorded_at + s.lane AS late,
                           rd.recorded_at > rd.received_at + s.tolerance AS early,
                           rd.received_at,
                           input_fingerprint(rd.recorded_at, rd.available) AS fp,
                           -- the least each reading needs for a contract:
                           -- its category key, actual and potential energy
                           -- (TurbineWindowUpsert's expressions)
                           reading_category_key(rd.available, rd.state, rd.wind_ms, $15::text[], $16::integer[], $17::integer, $18::integer, $19::integer,
                                                $20::float8, $21::float8) AS key,
                           round(greatest(rd.power_kw, 0) * s.c / 3.6 * 1000) AS actual_wh,
                           round(curve_kw(rd.wind_ms, $22::float8[]) * s.c / 3.6 * 1000) AS potential_wh
                    FROM readings rd
                    WHERE rd.turbine_id = s.turbine_id
                      AND rd.recorded_at >= s.lo
                      AND rd.recorded_at < s.hi
                      -- the day's bounds as arguments: the planner keeps
                      -- the day's partitions only (with s.lo and s.hi alone
                      -- it plans and locks every partition retention
                      -- keeps; TestWindowsPlanTheirDayPartitions)
                      AND rd.recorded_at >= $1::timestamptz
                      AND rd.recorded_at < $2::timestamptz
                    OFFSET 0) AS y
              -- OFFSET 0: the window is computed once a reading, not
              -- again in the filter below and in the sort
              OFFSET 0) AS x
        WHERE x.window_start >= s.lo AND x.window_start < s.lo_next
        GROUP BY x.window_start
    ) AS a
), ins AS (
    INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
                                beyond_cadence, out_of_service, late, early, min_lag_ms, max_lag_ms, last_received_at, computed_at,
                                input_hash)
    SELECT w.turbine_id, w.window_start, w.window_end, $12::text, $13::date, w.expected,
           coalesce(a.received, 0), coalesce(a.received - a.unavailable_slots, 0),
           coalesce(a.in_service - a.received, 0), coalesce(a.out_of_service, 0),
           coalesce(a.late, 0), coalesce(a.early, 0), a.min_lag_ms, a.max_lag_ms, a.last_received_at,
           $14::timestamptz, coalesce(a.input_hash, 0) + coalesce(a.k1 * 0 + (a.sa * 0)::bigint + (a.sp * 0)::bigint, 0)
    FROM win w
    LEFT JOIN agg a ON a.turbine_id = w.turbine_id AND a.window_start = w.window_start
    ON CONFLICT (turbine_id, window_start) DO UPDATE
    SET window_end = EXCLUDED.window_end, farm_id = EXCLUDED.farm_id, day = EXCLUDED.day,
        expected = EXCLUDED.expected, received = EXCLUDED.received, available = EXCLUDED.available,
        beyond_cadence = EXCLUDED.beyond_cadence, out_of_service = EXCLUDED.out_of_service,
        late = EXCLUDED.late, early = EXCLUDED.early,
        min_lag_ms = EXCLUDED.min_lag_ms, max_lag_ms = EXCLUDED.max_lag_ms,
        last_received_at = EXCLUDED.last_received_at, computed_at = EXCLUDED.computed_at,
        input_hash = EXCLUDED.input_hash
    RETURNING farm_id, window_start, window_end, day, expected, received, available, late,
              received + beyond_cadence + out_of_service AS readings
), delta AS (
    -- The change to this shard's farm-window sums: the rows written, less
    -- the rows they replaced.
    SELECT i.farm_id, i.window_start, i.window_end, i.day, 1 AS turbines, i.expected::bigint AS expected,
           i.received::bigint AS received, i.available::bigint AS available, i.late::bigint AS late, i.readings::bigint AS readings,
           extract(epoch FROM i.window_end - i.window_start)::bigint AS span_s
    FROM ins i
    UNION ALL
    SELECT o.farm_id, o.window_start, o.window_end, o.day, -1, -o.expected::bigint, -o.received::bigint, -o.available::bigint,
           -o.late::bigint, -(o.received + o.beyond_cadence + o.out_of_service)::bigint,
           -extract(epoch FROM o.window_end - o.window_start)::bigint
    -- one key-range scan per run of the rows it replaces (the statement's
    -- snapshot: before the upsert), matched to the run's windows (OFFSET 0
    -- keeps it a range scan: a generic plan would otherwise hash the whole
    -- table)
    FROM span s
    CROSS JOIN LATERAL (SELECT tw.turbine_id, tw.window_start, tw.window_end, tw.farm_id, tw.day, tw.expected, tw.received, tw.available, tw.beyond_cadence, tw.out_of_service, tw.late, tw.early, tw.min_lag_ms, tw.max_lag_ms, tw.last_received_at, tw.computed_at, tw.input_hash FROM turbine_window tw
                        WHERE tw.turbine_id = s.turbine_id AND tw.window_start >= s.lo
                          AND tw.window_start < $1::timestamptz + (s.w1 + 1) * $9::integer * interval '1 second'
                        OFFSET 0) AS o
    JOIN win w ON w.turbine_id = o.turbine_id AND w.window_start = o.window_start
), sums AS (
    -- An upsert, not an update of the rows that exist: its conflict check
    -- always probes the key, where an UPDATE ... FROM is planned from the
    -- table's statistics, and right after a day's first rows (before
    -- autovacuum has analysed them) that plan can scan every row per window.
    INSERT INTO farm_window_sum AS fs (farm_id, window_start, window_end, day, turbines, expected, received, available, late, readings, span_s)
    SELECT d.farm_id, d.window_start,
           coalesce(max(d.window_end) FILTER (WHERE d.turbines > 0), max(d.window_end)),
           coalesce(max(d.day) FILTER (WHERE d.turbines > 0), max(d.day)),
           sum(d.turbines), sum(d.expected), sum(d.received), sum(d.available), sum(d.late), sum(d.readings), sum(d.span_s)
    FROM delta d
    GROUP BY d.farm_id, d.window_start
    ON CONFLICT (farm_id, window_start) DO UPDATE
    SET window_end = EXCLUDED.window_end, day = EXCLUDED.day,
        turbines = fs.turbines + EXCLUDED.turbines, expected = fs.expected + EXCLUDED.expected,
        received = fs.received + EXCLUDED.received, available = fs.available + EXCLUDED.available,
        late = fs.late + EXCLUDED.late, readings = fs.readings + EXCLUDED.readings, span_s = fs.span_s + EXCLUDED.span_s
    RETURNING fs.window_start, fs.window_end, fs.day, fs.turbines, fs.expected, fs.received, fs.available, fs.late, fs.readings, fs.span_s
), written AS (
    SELECT count(*)::bigint AS windows, coalesce(sum(ins.readings), 0)::bigint AS rows_read FROM ins
)
SELECT w.windows, w.rows_read, x.window_start, x.window_end, x.day, x.turbines, x.expected, x.received, x.available, x.late, x.readings,
       x.span_s, (pg_current_xact_id()::text)::bigint AS shard_xid
FROM written w
CROSS JOIN sums AS x
ORDER BY x.window_start

