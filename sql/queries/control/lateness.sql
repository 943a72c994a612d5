-- LatenessFarmGet is the farm and the rules in force that a lateness
-- measurement (`orchestrator lateness`, internal/lateness) uses: the lane
-- threshold splits live from backfill, the early tolerance says what is
-- early. From farm_rules, never from a flag. (A YYYY-MM-DD --from/--to is
-- that day's start from FarmDayGet: one source for day bounds.)
-- name: LatenessFarmGet :one
SELECT f.id, f.timezone, r.lane_threshold_ms, r.early_tolerance_ms
FROM farm f JOIN farm_rules r ON r.farm_id = f.id
WHERE f.id = sqlc.arg(id);

-- LatenessShardTurbines lists, per shard holding turbines of the farm, those
-- turbines (retired ones included: their readings are history too).
-- name: LatenessShardTurbines :many
SELECT t.shard_name, array_agg(t.id ORDER BY t.id)::text[] AS turbine_ids
FROM turbine t
WHERE t.farm_id = sqlc.arg(farm_id)
GROUP BY t.shard_name
ORDER BY t.shard_name;

-- LatenessLagBounds is the histogram's bucket bounds, for the shards.
-- name: LatenessLagBounds :one
SELECT lateness_lag_bounds_ms()::bigint[] AS bounds;

-- LatenessResolution describes the buckets, read off the bounds themselves
-- so the text printed cannot drift from them: the finest width and how far
-- from zero it holds, the widest bucket beyond as a share of its smaller
-- bound, and the outermost bound (buckets past it are open-ended).
-- name: LatenessResolution :one
WITH b AS (
    SELECT lo, hi
    FROM (SELECT lateness_lag_bounds_ms() AS a) AS x
    CROSS JOIN LATERAL (SELECT x.a[i] AS lo, x.a[i + 1] AS hi
                        FROM generate_subscripts(x.a, 1) AS i
                        WHERE i < array_length(x.a, 1)) AS pairs
), fine AS (
    SELECT min(hi - lo) AS width FROM b
)
SELECT fine.width::bigint AS fine_width_ms,
       (SELECT min(least(abs(b.lo), abs(b.hi))) FROM b WHERE b.hi - b.lo > fine.width)::bigint AS fine_limit_ms,
       (SELECT max((b.hi - b.lo)::float8 / least(abs(b.lo), abs(b.hi))) FROM b WHERE b.hi - b.lo > fine.width)::float8 AS coarse_relative_width,
       (SELECT max(greatest(abs(b.lo), abs(b.hi))) FROM b)::bigint AS outer_limit_ms
FROM fine;

-- LatenessQuantiles merges the shards' lag histograms (rows of series,
-- bucket, readings and the bucket's exact smallest and largest lag, as
-- parallel arrays) and reads the quantiles off the merged counts: per series
-- ('live', 'backfill', 'corrected') and 'all' (live + backfill). The q
-- quantile is the nearest-rank one: the reading of rank ceil(q * n) in lag
-- order. It is reported as the largest lag of the bucket holding that rank,
-- so it is an observed lag at most one bucket width above the exact
-- quantile, never below it. min and max are exact.
--
-- allowed_lateness_s is the recommendation rule applied to the series: the
-- smallest positive multiple of 5 s at or above its p99, so at most 1 % of
-- its readings lag more. (internal/lateness recommends it off 'corrected'.)
-- name: LatenessQuantiles :many
WITH u AS (
    SELECT unnest(sqlc.arg(series)::text[]) AS series,
           unnest(sqlc.arg(bucket)::integer[]) AS bucket,
           unnest(sqlc.arg(readings)::bigint[]) AS readings,
           unnest(sqlc.arg(min_lag_ms)::float8[]) AS min_lag_ms,
           unnest(sqlc.arg(max_lag_ms)::float8[]) AS max_lag_ms
), h AS (
    SELECT u.series, u.bucket, sum(u.readings) AS readings, min(u.min_lag_ms) AS min_lag_ms, max(u.max_lag_ms) AS max_lag_ms
    FROM u
    GROUP BY u.series, u.bucket
    UNION ALL
    SELECT 'all', u.bucket, sum(u.readings), min(u.min_lag_ms), max(u.max_lag_ms)
    FROM u
    WHERE u.series IN ('live', 'backfill')
    GROUP BY u.bucket
), c AS (
    SELECT h.series, h.min_lag_ms, h.max_lag_ms,
           sum(h.readings) OVER (PARTITION BY h.series ORDER BY h.bucket) AS through,
           sum(h.readings) OVER (PARTITION BY h.series) AS total
    FROM h
), q AS (
    SELECT c.series,
           max(c.total) AS readings,
           min(c.min_lag_ms) AS min_ms,
           min(c.max_lag_ms) FILTER (WHERE c.through >= ceil(0.5 * c.total)) AS p50_ms,
           min(c.max_lag_ms) FILTER (WHERE c.through >= ceil(0.95 * c.total)) AS p95_ms,
           min(c.max_lag_ms) FILTER (WHERE c.through >= ceil(0.99 * c.total)) AS p99_ms,
           min(c.max_lag_ms) FILTER (WHERE c.through >= ceil(0.999 * c.total)) AS p999_ms,
           max(c.max_lag_ms) AS max_ms
    FROM c
    GROUP BY c.series
)
SELECT q.series::text AS series,
       q.readings::bigint AS readings,
       q.min_ms::float8 AS min_ms,
       q.p50_ms::float8 AS p50_ms,
       q.p95_ms::float8 AS p95_ms,
       q.p99_ms::float8 AS p99_ms,
       q.p999_ms::float8 AS p999_ms,
       q.max_ms::float8 AS max_ms,
       (5 * greatest(1, ceil(q.p99_ms / 5000)))::integer AS allowed_lateness_s
FROM q
ORDER BY q.series;

-- LatenessTurbineRank merges the shards' per-turbine clock estimates
-- (parallel arrays) and names the worst: the @worst turbines with the
-- largest |estimated offset| (ties by id), each with the totals over every
-- turbine measured.
-- name: LatenessTurbineRank :many
WITH u AS (
    SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
           unnest(sqlc.arg(shard_names)::text[]) AS shard_name,
           unnest(sqlc.arg(readings)::bigint[]) AS readings,
           unnest(sqlc.arg(windows)::integer[]) AS windows,
           unnest(sqlc.arg(early)::bigint[]) AS early,
           unnest(sqlc.arg(min_lag_ms)::float8[]) AS min_lag_ms,
           unnest(sqlc.arg(clock_offset_ms)::float8[]) AS clock_offset_ms
)
SELECT u.turbine_id::text AS turbine_id,
       u.shard_name::text AS shard_name,
       u.readings::bigint AS readings,
       u.windows::integer AS windows,
       u.early::bigint AS early,
       u.min_lag_ms::float8 AS min_lag_ms,
       u.clock_offset_ms::float8 AS clock_offset_ms,
       (count(*) OVER ())::integer AS turbines_measured,
       (sum(u.early) OVER ())::bigint AS early_readings,
       (count(*) FILTER (WHERE u.early > 0) OVER ())::integer AS turbines_with_early
FROM u
ORDER BY abs(u.clock_offset_ms) DESC, u.turbine_id
LIMIT sqlc.arg(worst)::integer;
