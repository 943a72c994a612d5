-- turbine_window: one row per turbine and window, counted from readings by the slot rule
-- (TurbineWindowUpsert); turbine_day is added up from it (TurbineDayFromWindows), so a day and its
-- windows never disagree.

-- WindowLock serialises, on this shard, every writer of one farm-day's
-- turbine_window rows (fast path and rollup_day jobs) until its
-- transaction ends. Taken before the transaction's first read, so the
-- writer that takes it later reads a newer snapshot and writes last.
-- name: WindowLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('turbine_window/' || sqlc.arg(farm_id)::text || '/' || to_char(sqlc.arg(day)::date, 'YYYY-MM-DD'), 0));

-- TurbineWindowMissing lists, for the given turbines, the windows of the
-- day in [first_window, last_window] (on the farm's current window grid)
-- that have no turbine_window row. Per turbine, the grid's window indexes
-- EXCEPT those of its rows in its key range of those windows (LATERAL,
-- OFFSET 0): a set operation, hashed or sorted, never a join the planner
-- could turn into a loop or a scan of the table. A NOT EXISTS was planned
-- as an anti join over the whole table (a sequential scan and an external
-- sort of every window retention keeps, for one recompute;
-- TestMissingWindowsReadTheirRange).
-- name: TurbineWindowMissing :many
SELECT t.turbine_id::text AS turbine_id, m.i::integer AS window_index
FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
CROSS JOIN LATERAL (
    SELECT w.i
    FROM generate_series(greatest(sqlc.arg(first_window)::integer, 0),
                         least(sqlc.arg(last_window)::integer,
                               ceil(extract(epoch FROM sqlc.arg(day_end)::timestamptz - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer - 1)) AS w(i)
    EXCEPT
    SELECT (date_part('epoch', tw.window_start - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer
    FROM (SELECT tw.window_start, tw.window_end FROM turbine_window tw
          WHERE tw.turbine_id = t.turbine_id
            AND tw.window_start >= sqlc.arg(day_start)::timestamptz + greatest(sqlc.arg(first_window)::integer, 0) * sqlc.arg(window_s)::integer * interval '1 second'
            AND tw.window_start <= sqlc.arg(day_start)::timestamptz + sqlc.arg(last_window)::integer * sqlc.arg(window_s)::integer * interval '1 second'
          OFFSET 0) AS tw
    -- on the grid: the window's start and end exactly
    WHERE mod(date_part('epoch', tw.window_start - sqlc.arg(day_start)::timestamptz)::numeric, sqlc.arg(window_s)::integer) = 0
      AND tw.window_end = least(tw.window_start + sqlc.arg(window_s)::integer * interval '1 second', sqlc.arg(day_end)::timestamptz)
) AS m
ORDER BY 1, 2;

-- TurbineWindowOffGridDelete removes the day's rows of the given turbines
-- that are not on the farm's current window grid (left by a window rule
-- that has since changed), so the day adds up from one grid, and takes
-- them out of farm_window_sum. Returns how many rows it removed.
-- name: TurbineWindowOffGridDelete :one
WITH off_grid AS (
    SELECT tw.turbine_id, tw.window_start
    FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
    -- the day's key range of each turbine (primary key), not the farm's
    -- day: OFFSET 0 keeps the farm and day tests out of the scan, so the
    -- planner cannot take the farm's index even when the table has no
    -- statistics yet (TestOneTurbineReadsItsKeyRange)
    CROSS JOIN LATERAL (SELECT tw.* FROM turbine_window tw
                        WHERE tw.turbine_id = t.turbine_id
                          AND tw.window_start >= sqlc.arg(day_start)::timestamptz - interval '1 day'
                          AND tw.window_start < sqlc.arg(day_end)::timestamptz + interval '1 day'
                        OFFSET 0) AS tw
    WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.day = sqlc.arg(day)
      AND (mod(extract(epoch FROM tw.window_start - sqlc.arg(day_start)::timestamptz), sqlc.arg(window_s)::integer) <> 0
           OR tw.window_end <> least(tw.window_start + sqlc.arg(window_s)::integer * interval '1 second', sqlc.arg(day_end)::timestamptz))
), del AS (
    DELETE FROM turbine_window tw
    USING off_grid o
    WHERE tw.turbine_id = o.turbine_id AND tw.window_start = o.window_start
    RETURNING tw.farm_id, tw.window_start, tw.expected, tw.received, tw.available, tw.late,
              tw.received + tw.beyond_cadence + tw.out_of_service AS readings,
              extract(epoch FROM tw.window_end - tw.window_start)::bigint AS span_s
), sub AS (
    UPDATE farm_window_sum fs
    SET turbines = fs.turbines - d.turbines, expected = fs.expected - d.expected, received = fs.received - d.received,
        available = fs.available - d.available, late = fs.late - d.late, readings = fs.readings - d.readings,
        span_s = fs.span_s - d.span_s
    FROM (SELECT del.farm_id, del.window_start, count(*)::integer AS turbines, sum(del.expected)::bigint AS expected,
                 sum(del.received)::bigint AS received, sum(del.available)::bigint AS available,
                 sum(del.late)::bigint AS late, sum(del.readings)::bigint AS readings, sum(del.span_s)::bigint AS span_s
          FROM del GROUP BY del.farm_id, del.window_start) AS d
    WHERE fs.farm_id = d.farm_id AND fs.window_start = d.window_start
    RETURNING 1
)
SELECT count(*)::bigint AS removed FROM del;

-- TurbineWindowUpsert computes the given runs of windows from the readings
-- (a run: a turbine and its consecutive windows first_window ..
-- last_window; runs must not overlap), upserts them into turbine_window and
-- keeps farm_window_sum (this shard's part of each farm window) in step: it
-- adds the rows written and subtracts the rows they replace. It returns,
-- one row per window written, the farm-window sum as the statement left it
-- (what FarmWindowSums would read next; its turbines, the rows summed, say
-- whether the window is whole here), beside how many turbine_window rows
-- it wrote and how many readings it counted (its work; the same on every
-- row).
--
-- The slot rule is turbine_day's (docs/dba.md, "The slot rule"): a
-- turbine's service time in the day, [origin, stop), is cut into e cadence
-- slots; slot k starts at origin + k × cadence and the last runs on to
-- stop. A slot belongs to the window in which it starts, so the windows of
-- a day add up exactly to the day: expected = slots starting in the
-- window; received = those with a reading; available = those none of whose
-- readings says unavailable; beyond_cadence = further readings in counted
-- slots (and readings in service when the service time holds no slot);
-- out_of_service = readings of the window (by recorded_at) outside the
-- service time.
--
-- categories (window.Grid.CountsOnly is false: the contract maps a state
-- code or has a wind range, the farm has a power curve, or an operator
-- event covers the day) also sorts every slot into its category and
-- measures each category's energy. Without, a slot's category follows from
-- its counts (full performance, forced outage, information unavailable)
-- and no reading pays for a key or an energy.
-- name: TurbineWindowUpsert :many
WITH slot_curve AS (
    -- 0. The power curve in mWh over one slot, for each cadence of the
    --    runs (curve_kw's table, each entry × cadence / 3.6 × 1000, rounded
    --    as a reading's energy always was): a reading's potential energy
    --    is then one lookup, not four operations.
    SELECT c.c, ARRAY(SELECT round(p.kw * c.c / 3.6 * 1000)
                      FROM unnest(sqlc.narg(curve)::float8[]) WITH ORDINALITY AS p(kw, i) ORDER BY p.i) AS curve_mwh
    FROM (SELECT DISTINCT unnest(sqlc.arg(cadence_seconds)::integer[]) AS c) AS c
    WHERE sqlc.narg(curve)::float8[] IS NOT NULL
), run AS (
    -- 1. Each run: its turbine's service time in the day, [origin, stop); the
    --    e slots that fit in it (slot k starts at origin + k × cadence; the
    --    last runs on to stop) and the start of the last; and the key range
    --    it reads, [lo, hi): from its first window's start to the end of the
    --    last slot that starts in its last window (the next slot's start,
    --    or stop).
    SELECT u.turbine_id, u.c, u.w0, u.w1, sv.origin, sv.stop, n.e, n.off,
           u.c * interval '1 second' AS cadence,
           -- the arguments each reading is compared with, made intervals
           -- once (a generic plan would otherwise do it for every reading)
           sqlc.arg(window_s)::integer * interval '1 second' AS window_len,
           sqlc.arg(lane_threshold_seconds)::float8 * interval '1 second' AS lane,
           sqlc.arg(early_tolerance_seconds)::float8 * interval '1 second' AS tolerance,
           CASE WHEN n.e > 0 THEN sv.origin + (n.e - 1) * u.c * interval '1 second' END AS last_slot,
           sqlc.arg(day_start)::timestamptz + u.w0 * sqlc.arg(window_s)::integer * interval '1 second' AS lo,
           sqlc.arg(day_start)::timestamptz + (u.w1 + 1) * sqlc.arg(window_s)::integer * interval '1 second' AS lo_next,
           least(sqlc.arg(day_end)::timestamptz,
                 greatest(sqlc.arg(day_start)::timestamptz + (u.w1 + 1) * sqlc.arg(window_s)::integer * interval '1 second',
                          CASE WHEN k.after >= n.e THEN sv.stop ELSE sv.origin + k.after * u.c * interval '1 second' END)) AS hi,
           sc.curve_mwh
    FROM (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id, unnest(sqlc.arg(cadence_seconds)::integer[]) AS c,
                 unnest(sqlc.arg(service_from)::timestamptz[]) AS service_from, unnest(sqlc.arg(service_to)::timestamptz[]) AS service_to,
                 unnest(sqlc.arg(first_window)::integer[]) AS w0, unnest(sqlc.arg(last_window)::integer[]) AS w1) AS u
    CROSS JOIN LATERAL (SELECT greatest(sqlc.arg(day_start)::timestamptz, u.service_from) AS origin,
                               least(sqlc.arg(day_end)::timestamptz, u.service_to) AS stop) AS sv
    CROSS JOIN LATERAL (SELECT CASE WHEN sv.stop > sv.origin THEN floor(extract(epoch FROM sv.stop - sv.origin) / u.c)::integer ELSE 0 END AS e,
                               extract(epoch FROM sv.origin - sqlc.arg(day_start)::timestamptz) AS off) AS n
    CROSS JOIN LATERAL (SELECT slot_after((u.w1 + 1) * sqlc.arg(window_s)::integer, n.off, u.c, n.e) AS after) AS k
    LEFT JOIN slot_curve sc ON sc.c = u.c
), win AS (
    -- 2. Each window of each run: its bounds, the slots that start in it
    --    (k0 .. k1 - 1: expected), and whether an operator event covers
    --    part of it (FarmDayGet gives the day's events, one element per
    --    event and turbine, '' = all).
    SELECT r.turbine_id, b.window_start, b.window_end, b.k0, b.k1, b.k1 - b.k0 AS expected,
           r.c, r.origin, r.stop, r.cadence, r.last_slot,
           cardinality(sqlc.arg(event_keys)::integer[]) > 0
               AND EXISTS (SELECT 1 FROM generate_subscripts(sqlc.arg(event_keys)::integer[], 1) AS j
                           WHERE (sqlc.arg(event_turbines)::text[])[j] IN ('', r.turbine_id)
                             AND (sqlc.arg(event_from)::timestamptz[])[j] < b.window_end
                             AND (sqlc.arg(event_to)::timestamptz[])[j] > b.window_start) AS evented
    FROM run r
    CROSS JOIN LATERAL generate_series(r.w0, r.w1) AS w(i)
    CROSS JOIN LATERAL (SELECT sqlc.arg(day_start)::timestamptz + w.i * sqlc.arg(window_s)::integer * interval '1 second' AS window_start,
                               least(sqlc.arg(day_start)::timestamptz + (w.i + 1) * sqlc.arg(window_s)::integer * interval '1 second',
                                     sqlc.arg(day_end)::timestamptz) AS window_end,
                               slot_after(w.i * sqlc.arg(window_s)::integer, r.off, r.c, r.e) AS k0,
                               slot_after((w.i + 1) * sqlc.arg(window_s)::integer, r.off, r.c, r.e) AS k1) AS b
), agg AS (
    -- 3. Each window's readings, counted in one pass over each run's key
    --    range: a reading counts in its slot's window (out of service, in
    --    its own time's). With categories, also each reading's key (the
    --    contract's: priority rank × 16 + category) and energy over its slot
    --    (kW × s / 3.6 = Wh, power drawn while idle is no production), in
    --    whole mWh as float8: sums of integers under 2^53 (the farm's power
    --    bounds: docs/dba.md, "Bounded sums"), exact in any order.
    SELECT r.turbine_id, a.*
    FROM run r
    CROSS JOIN LATERAL (
        SELECT x.window_start,
               count(DISTINCT x.slot) AS received,
               -- slots with a reading that says unavailable: these readings, when no
               -- slot holds two (in_service = received; else step 5 counts them)
               count(*) FILTER (WHERE x.in_service AND NOT x.available) AS unavailable_readings,
               count(*) FILTER (WHERE x.in_service) AS in_service,
               count(*) FILTER (WHERE NOT x.in_service) AS out_of_service,
               count(*) FILTER (WHERE x.late) AS late,
               count(*) FILTER (WHERE x.early) AS early,
               (extract(epoch FROM min(x.lag)) * 1000)::bigint AS min_lag_ms,
               (extract(epoch FROM max(x.lag)) * 1000)::bigint AS max_lag_ms,
               max(x.received_at) AS last_received_at,
               sum(x.fp)::bigint AS input_hash,
               min(x.key) AS k1, max(x.key) AS k2,
               sum(x.actual_mwh) AS actual_mwh, sum(x.potential_mwh) AS potential_mwh
        FROM (SELECT y.*, date_bin(r.window_len, coalesce(y.slot, y.recorded_at), sqlc.arg(day_start)::timestamptz) AS window_start
              -- Per reading, timestamps compared by value (exact
              -- microseconds); the interval lag kept for its minimum and
              -- maximum alone.
              FROM (SELECT rd.recorded_at >= r.origin AND rd.recorded_at < r.stop AS in_service,
                           slot_start(rd.recorded_at, r.origin, r.stop, r.cadence, r.last_slot) AS slot,
                           rd.recorded_at, rd.available,
                           rd.received_at - rd.recorded_at AS lag,
                           rd.received_at > rd.recorded_at + r.lane AS late,
                           rd.recorded_at > rd.received_at + r.tolerance AS early,
                           rd.received_at,
                           input_fingerprint(rd.recorded_at, rd.available) AS fp,
                           CASE WHEN sqlc.arg(categories)::boolean
                                THEN reading_category_key(rd.available, rd.state, rd.wind_ms, sqlc.arg(state_codes)::text[], sqlc.arg(state_keys)::integer[],
                                                          sqlc.arg(key_available)::integer, sqlc.arg(key_unavailable)::integer, sqlc.arg(key_environment)::integer,
                                                          sqlc.narg(cut_in_ms)::float8, sqlc.narg(cut_out_ms)::float8) END AS key,
                           CASE WHEN r.curve_mwh IS NOT NULL THEN round(greatest(rd.power_kw, 0) * r.c / 3.6 * 1000) END AS actual_mwh,
                           CASE WHEN r.curve_mwh IS NOT NULL THEN curve_kw(rd.wind_ms, r.curve_mwh) END AS potential_mwh
                    FROM readings rd
                    WHERE rd.turbine_id = r.turbine_id
                      AND rd.recorded_at >= r.lo
                      AND rd.recorded_at < r.hi
                      -- the day's bounds as arguments: the planner keeps
                      -- the day's partitions only (with r.lo and r.hi alone
                      -- it plans and locks every partition retention
                      -- keeps; TestWindowsPlanTheirDayPartitions)
                      AND rd.recorded_at >= sqlc.arg(day_start)::timestamptz
                      AND rd.recorded_at < sqlc.arg(day_end)::timestamptz
                    OFFSET 0) AS y
              -- OFFSET 0: the window is computed once a reading, not
              -- again in the filter below and in the sort
              OFFSET 0) AS x
        WHERE x.window_start >= r.lo AND x.window_start < r.lo_next
        GROUP BY x.window_start
    ) AS a
), ins AS (
    -- 4. Written: the counts, and the slots and energy per category
    --    (13 elements, by availability_category.id). Without categories,
    --    from the counts (full performance, forced outage, information
    --    unavailable; no energy). With, a window whose readings have one
    --    key is that key's category whole; one with two keys, a slot of
    --    two readings, a reading out of service or an operator event
    --    (rare) is sorted slot by slot (step 5).
    INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
                                beyond_cadence, out_of_service, late, early, min_lag_ms, max_lag_ms, last_received_at, computed_at,
                                input_hash, category_slots, category_actual_wh, category_potential_wh)
    SELECT w.turbine_id, w.window_start, w.window_end, sqlc.arg(farm_id)::text, sqlc.arg(day)::date, w.expected,
           coalesce(a.received, 0), coalesce(a.received, 0) - coalesce((s.by_slot).unavailable, a.unavailable_readings, 0),
           coalesce(a.in_service - a.received, 0), coalesce(a.out_of_service, 0),
           coalesce(a.late, 0), coalesce(a.early, 0), a.min_lag_ms, a.max_lag_ms, a.last_received_at,
           sqlc.arg(computed_at)::timestamptz, coalesce(a.input_hash, 0),
           CASE WHEN NOT sqlc.arg(categories)::boolean
                THEN ARRAY[coalesce(a.received, 0) - coalesce((s.by_slot).unavailable, a.unavailable_readings, 0), 0, 0, 0, 0, 0, 0, 0, 0,
                           coalesce((s.by_slot).unavailable, a.unavailable_readings, 0), 0, 0,
                           w.expected - coalesce(a.received, 0)]::integer[]
                ELSE coalesce((s.by_slot).slots, one_category_slots(coalesce(a.k1, sqlc.arg(key_missing)::integer) % 16, coalesce(a.received, 0)::integer,
                                                                    w.expected - coalesce(a.received, 0)::integer)) END,
           CASE WHEN sqlc.narg(curve)::float8[] IS NOT NULL
                THEN coalesce((s.by_slot).actual_wh, one_category_wh(coalesce(a.k1, sqlc.arg(key_missing)::integer) % 16, mwh_to_wh(coalesce(a.actual_mwh, 0)::bigint))) END,
           CASE WHEN sqlc.narg(curve)::float8[] IS NOT NULL
                THEN coalesce((s.by_slot).potential_wh, one_category_wh(coalesce(a.k1, sqlc.arg(key_missing)::integer) % 16, mwh_to_wh(coalesce(a.potential_mwh, 0)::bigint))) END
    FROM win w
    LEFT JOIN agg a ON a.turbine_id = w.turbine_id AND a.window_start = w.window_start
    -- 5. The slot-by-slot sort, only for the windows that need it (a
    --    subquery the CASE evaluates for those alone: a slot of two readings
    --    or a reading in a service time without slots, in either mode; with
    --    categories, two keys, a reading out of service or an operator
    --    event): every slot's category is the least of its readings' keys
    --    (none: information unavailable's) and of the keys of the events
    --    covering its start; its energy, its readings' mean power and curve
    --    over the slot; and whether one of its readings says unavailable.
    CROSS JOIN LATERAL (
        SELECT CASE WHEN a.in_service > a.received
                               OR (sqlc.arg(categories)::boolean AND (w.evented OR a.k1 <> a.k2 OR a.out_of_service > 0))
                    THEN (SELECT ROW(array_agg(coalesce(g.slots, 0) ORDER BY cat.id), array_agg(coalesce(g.actual_wh, 0) ORDER BY cat.id),
                                     array_agg(coalesce(g.potential_wh, 0) ORDER BY cat.id), coalesce(sum(g.unavailable), 0))::window_categories
                          FROM generate_series(1, 13) AS cat(id)
                          LEFT JOIN (
                              SELECT k.category, count(*)::integer AS slots, count(*) FILTER (WHERE k.down)::integer AS unavailable,
                                     mwh_to_wh(sum(k.actual_mwh)::bigint) AS actual_wh, mwh_to_wh(sum(k.potential_mwh)::bigint) AS potential_wh
                              FROM (SELECT least(coalesce(rs.key, sqlc.arg(key_missing)::integer), ev.key) % 16 AS category,
                                           coalesce(rs.actual_mwh, 0) AS actual_mwh, coalesce(rs.potential_mwh, 0) AS potential_mwh,
                                           coalesce(rs.down, false) AS down
                                    FROM generate_series(w.k0, w.k1 - 1) AS sl(k)
                                    LEFT JOIN (SELECT slot_start(rd.recorded_at, w.origin, w.stop, w.cadence, w.last_slot) AS slot,
                                                      min(reading_category_key(rd.available, rd.state, rd.wind_ms, sqlc.arg(state_codes)::text[], sqlc.arg(state_keys)::integer[],
                                                                               sqlc.arg(key_available)::integer, sqlc.arg(key_unavailable)::integer, sqlc.arg(key_environment)::integer,
                                                                               sqlc.narg(cut_in_ms)::float8, sqlc.narg(cut_out_ms)::float8)) AS key,
                                                      round(avg(greatest(rd.power_kw, 0)) * w.c / 3.6 * 1000)::bigint AS actual_mwh,
                                                      round(avg(curve_kw(rd.wind_ms, sqlc.narg(curve)::float8[])) * w.c / 3.6 * 1000)::bigint AS potential_mwh,
                                                      bool_or(NOT rd.available) AS down
                                               FROM readings rd
                                               -- the readings of the slots that start in the
                                               -- window: from its start to a cadence past its
                                               -- end (to the service's or day's end when its
                                               -- last slot is the day's last)
                                               WHERE rd.turbine_id = w.turbine_id
                                                 AND rd.recorded_at >= w.window_start
                                                 AND rd.recorded_at < greatest(w.window_end + w.cadence, CASE WHEN w.last_slot < w.window_end THEN w.stop END)
                                                 AND rd.recorded_at >= sqlc.arg(day_start)::timestamptz
                                                 AND rd.recorded_at < sqlc.arg(day_end)::timestamptz
                                               GROUP BY 1) AS rs ON rs.slot = w.origin + sl.k * w.cadence
                                    LEFT JOIN LATERAL (SELECT min((sqlc.arg(event_keys)::integer[])[j]) AS key
                                                       FROM generate_subscripts(sqlc.arg(event_keys)::integer[], 1) AS j
                                                       WHERE (sqlc.arg(event_turbines)::text[])[j] IN ('', w.turbine_id)
                                                         AND w.origin + sl.k * w.cadence >= (sqlc.arg(event_from)::timestamptz[])[j]
                                                         AND w.origin + sl.k * w.cadence < (sqlc.arg(event_to)::timestamptz[])[j]) AS ev ON true) AS k
                              GROUP BY k.category) AS g ON g.category = cat.id) END AS by_slot
        -- OFFSET 0: computed once a window, not once a column above
        OFFSET 0) AS s
    ON CONFLICT (turbine_id, window_start) DO UPDATE
    SET window_end = EXCLUDED.window_end, farm_id = EXCLUDED.farm_id, day = EXCLUDED.day,
        expected = EXCLUDED.expected, received = EXCLUDED.received, available = EXCLUDED.available,
        beyond_cadence = EXCLUDED.beyond_cadence, out_of_service = EXCLUDED.out_of_service,
        late = EXCLUDED.late, early = EXCLUDED.early,
        min_lag_ms = EXCLUDED.min_lag_ms, max_lag_ms = EXCLUDED.max_lag_ms,
        last_received_at = EXCLUDED.last_received_at, computed_at = EXCLUDED.computed_at,
        input_hash = EXCLUDED.input_hash, category_slots = EXCLUDED.category_slots,
        category_actual_wh = EXCLUDED.category_actual_wh, category_potential_wh = EXCLUDED.category_potential_wh
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
    FROM run s
    CROSS JOIN LATERAL (SELECT tw.* FROM turbine_window tw
                        WHERE tw.turbine_id = s.turbine_id AND tw.window_start >= s.lo
                          AND tw.window_start < s.lo_next
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
ORDER BY x.window_start;

-- TurbineDayFromWindows adds up the given turbines' windows of the day (on
-- the farm's current grid) into their turbine_day counts, with the local
-- hours (0 = the first hour of the day) in which a turbine expected
-- readings and received none. One pass: windows to hours, hours to the day.
-- name: TurbineDayFromWindows :many
SELECT h.turbine_id,
       sum(h.windows)::integer AS windows,
       sum(h.expected)::integer AS expected, sum(h.received)::integer AS received,
       sum(h.available)::integer AS available, sum(h.beyond_cadence)::integer AS beyond_cadence,
       sum(h.out_of_service)::integer AS out_of_service, sum(h.late)::integer AS late, sum(h.early)::integer AS early,
       coalesce(min(h.min_lag_ms), 0)::bigint AS min_lag_ms, coalesce(max(h.max_lag_ms), 0)::bigint AS max_lag_ms,
       coalesce(max(h.last_received_at), 'epoch')::timestamptz AS last_received_at,
       coalesce(array_agg(h.hour ORDER BY h.hour) FILTER (WHERE h.expected > 0 AND h.received = 0), '{}')::integer[] AS silent_hours,
       -- the input fingerprint: the windows' sum, none when a window has none
       (sum(h.received) + sum(h.beyond_cadence) + sum(h.out_of_service))::bigint AS input_readings,
       coalesce(sum(h.input_hash), 0)::bigint AS input_hash,
       (sum(h.unhashed) = 0)::boolean AS fingerprinted,
       -- slots per category, as a literal ('{n,...}', as silent_hours: arrays
       -- of arrays must be rectangular); '' when a window has none
       coalesce(CASE WHEN sum(h.uncategorised) = 0 THEN
                    ARRAY[sum(h.c1), sum(h.c2), sum(h.c3), sum(h.c4), sum(h.c5), sum(h.c6), sum(h.c7),
                          sum(h.c8), sum(h.c9), sum(h.c10), sum(h.c11), sum(h.c12), sum(h.c13)]::integer[]::text END, '')::text AS category_slots,
       -- energy per category, as literals ('' when a window has none)
       coalesce(CASE WHEN sum(h.unmeasured) = 0 THEN
                    ARRAY[sum(h.a1), sum(h.a2), sum(h.a3), sum(h.a4), sum(h.a5), sum(h.a6), sum(h.a7),
                          sum(h.a8), sum(h.a9), sum(h.a10), sum(h.a11), sum(h.a12), sum(h.a13)]::bigint[]::text END, '')::text AS category_actual_wh,
       coalesce(CASE WHEN sum(h.uncurved) = 0 THEN
                    ARRAY[sum(h.p1), sum(h.p2), sum(h.p3), sum(h.p4), sum(h.p5), sum(h.p6), sum(h.p7),
                          sum(h.p8), sum(h.p9), sum(h.p10), sum(h.p11), sum(h.p12), sum(h.p13)]::bigint[]::text END, '')::text AS category_potential_wh
FROM (SELECT tw.turbine_id,
             floor(extract(epoch FROM tw.window_start - sqlc.arg(day_start)::timestamptz) / 3600)::integer AS hour,
             count(*) AS windows,
             sum(tw.expected) AS expected, sum(tw.received) AS received, sum(tw.available) AS available,
             sum(tw.beyond_cadence) AS beyond_cadence, sum(tw.out_of_service) AS out_of_service,
             sum(tw.late) AS late, sum(tw.early) AS early,
             min(tw.min_lag_ms) AS min_lag_ms, max(tw.max_lag_ms) AS max_lag_ms, max(tw.last_received_at) AS last_received_at,
             sum(tw.input_hash) AS input_hash, count(*) FILTER (WHERE tw.input_hash IS NULL) AS unhashed,
             count(*) FILTER (WHERE tw.category_slots IS NULL) AS uncategorised,
             sum(tw.category_slots[1]) AS c1, sum(tw.category_slots[2]) AS c2, sum(tw.category_slots[3]) AS c3,
             sum(tw.category_slots[4]) AS c4, sum(tw.category_slots[5]) AS c5, sum(tw.category_slots[6]) AS c6,
             sum(tw.category_slots[7]) AS c7, sum(tw.category_slots[8]) AS c8, sum(tw.category_slots[9]) AS c9,
             sum(tw.category_slots[10]) AS c10, sum(tw.category_slots[11]) AS c11, sum(tw.category_slots[12]) AS c12,
             sum(tw.category_slots[13]) AS c13,
             count(*) FILTER (WHERE tw.category_actual_wh IS NULL) AS unmeasured,
             count(*) FILTER (WHERE tw.category_potential_wh IS NULL) AS uncurved,
             sum(tw.category_actual_wh[1]) AS a1, sum(tw.category_actual_wh[2]) AS a2, sum(tw.category_actual_wh[3]) AS a3, sum(tw.category_actual_wh[4]) AS a4,
             sum(tw.category_actual_wh[5]) AS a5, sum(tw.category_actual_wh[6]) AS a6, sum(tw.category_actual_wh[7]) AS a7, sum(tw.category_actual_wh[8]) AS a8,
             sum(tw.category_actual_wh[9]) AS a9, sum(tw.category_actual_wh[10]) AS a10, sum(tw.category_actual_wh[11]) AS a11, sum(tw.category_actual_wh[12]) AS a12,
             sum(tw.category_actual_wh[13]) AS a13,
             sum(tw.category_potential_wh[1]) AS p1, sum(tw.category_potential_wh[2]) AS p2, sum(tw.category_potential_wh[3]) AS p3, sum(tw.category_potential_wh[4]) AS p4,
             sum(tw.category_potential_wh[5]) AS p5, sum(tw.category_potential_wh[6]) AS p6, sum(tw.category_potential_wh[7]) AS p7, sum(tw.category_potential_wh[8]) AS p8,
             sum(tw.category_potential_wh[9]) AS p9, sum(tw.category_potential_wh[10]) AS p10, sum(tw.category_potential_wh[11]) AS p11, sum(tw.category_potential_wh[12]) AS p12,
             sum(tw.category_potential_wh[13]) AS p13
      FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
      -- the day's key range of each turbine (primary key), not the farm's
      -- day (OFFSET 0: as in TurbineWindowOffGridDelete)
      CROSS JOIN LATERAL (SELECT tw.* FROM turbine_window tw
                          WHERE tw.turbine_id = t.turbine_id
                            AND tw.window_start >= sqlc.arg(day_start)::timestamptz AND tw.window_start < sqlc.arg(day_end)::timestamptz
                          OFFSET 0) AS tw
      WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.day = sqlc.arg(day)
      GROUP BY 1, 2) AS h
GROUP BY h.turbine_id
ORDER BY h.turbine_id;

-- FarmDayHasRows says whether this shard holds anything of the farm-local
-- day [@day_start, @day_end) for the given turbines (the farm's on this
-- shard): a reading recorded in it, or a turbine_window row of it. A
-- recompute of a day with neither, when no turbine of the farm was in
-- service that day, has nothing to count.
-- name: FarmDayHasRows :one
SELECT EXISTS (SELECT 1 FROM turbine_window tw
               WHERE tw.farm_id = sqlc.arg(farm_id)
                 AND tw.window_start >= sqlc.arg(day_start)::timestamptz AND tw.window_start < sqlc.arg(day_end)::timestamptz)
    OR EXISTS (SELECT 1 FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
               CROSS JOIN LATERAL (SELECT 1 FROM readings r
                                   WHERE r.turbine_id = t.turbine_id
                                     AND r.recorded_at >= sqlc.arg(day_start)::timestamptz AND r.recorded_at < sqlc.arg(day_end)::timestamptz
                                   LIMIT 1) AS x) AS has_rows;

-- Retention (TurbineWindowTrim here, FarmWindowSumTrim, DirtyWindowTrim):
-- a farm-local day that starts before readings_retention.dropped_before has
-- lost readings, its rollup is refused (ReadingsDayLost), and its derived
-- rows go too. The caller gives each farm's cut: the start (@keep_from) and
-- date (@keep_day) of its first day that starts at or after dropped_before.
-- Big tables go in batches of @max_rows (each its own transaction), by the
-- farm's key ranges; a day cut is never read again, so a pass cut short
-- leaves nothing a reader sees half-done and the next pass goes on.
--
-- TurbineWindowTrim deletes up to @max_rows of the farm's turbine_window
-- rows before @keep_from, oldest first, returning how many. The order is
-- turbine_window_farm_idx's, so the farm's range is read by that index
-- even when old rows are most of the table (retention just switched on),
-- where a LIMIT alone could be planned as a scan of the whole table.
-- name: TurbineWindowTrim :execrows
DELETE FROM turbine_window
WHERE ctid = ANY (ARRAY(SELECT tw.ctid FROM turbine_window tw
                        WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.window_start < sqlc.arg(keep_from)::timestamptz
                        ORDER BY tw.farm_id, tw.window_start
                        LIMIT sqlc.arg(max_rows)::integer));

-- TurbineWindowStallStats is what the stalled-turbine watcher needs of a
-- farm's windows on this shard (control's StallJudge), read from the
-- readings of the given turbines (the farm's here) recorded in the ranges
-- [@range_from, @range_to) (runs of consecutive windows of one farm-local
-- day, cut from @day_start in windows of @window_s): per turbine and window
-- with readings, its index, how many readings, how many say available, the
-- highest power and the wind summed. One statement for all the windows a
-- publication or a correction judges; a range scan of readings_pkey per
-- turbine and range, power and wind in the key.
-- name: TurbineWindowStallStats :many
SELECT t.turbine_id::text AS turbine_id,
       floor(extract(epoch FROM r.recorded_at - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer AS window_index,
       count(*)::integer AS received,
       count(*) FILTER (WHERE r.available)::integer AS available,
       max(r.power_kw)::float8 AS power_max_kw, sum(r.wind_ms)::float8 AS wind_sum_ms, count(*)::integer AS wind_readings
FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
CROSS JOIN (SELECT unnest(sqlc.arg(range_from)::timestamptz[]) AS from_t, unnest(sqlc.arg(range_to)::timestamptz[]) AS to_t) AS g
CROSS JOIN LATERAL (SELECT rd.recorded_at, rd.available, rd.power_kw, rd.wind_ms FROM readings rd
                    WHERE rd.turbine_id = t.turbine_id
                      AND rd.recorded_at >= g.from_t AND rd.recorded_at < g.to_t
                    OFFSET 0) AS r
GROUP BY 1, 2
ORDER BY 2, 1;

-- TurbineFirstProduction gives, for each (turbine, span) asked, the first
-- reading recorded in [@from_t, @to_t) with power over @floor_kw (none:
-- no row): where the stalled-turbine watcher finds the window a stall
-- clears in, from the readings stored whenever they arrived. i is the
-- span's position (1-based). The first reading only: an index-only scan
-- of readings_pkey from @from_t, stopping at it.
-- name: TurbineFirstProduction :many
SELECT q.i::integer AS i, p.recorded_at::timestamptz AS produced_at
FROM (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id, unnest(sqlc.arg(from_t)::timestamptz[]) AS from_t,
             unnest(sqlc.arg(to_t)::timestamptz[]) AS to_t, generate_subscripts(sqlc.arg(turbine_ids)::text[], 1) AS i) AS q
CROSS JOIN LATERAL (SELECT rd.recorded_at FROM readings rd
                    WHERE rd.turbine_id = q.turbine_id AND rd.recorded_at >= q.from_t AND rd.recorded_at < q.to_t
                      AND rd.power_kw > sqlc.arg(floor_kw)::real
                    ORDER BY rd.recorded_at
                    LIMIT 1) AS p
ORDER BY q.i;
