-- LatenessTurbineClocks is the first of what one shard contributes to a
-- lateness measurement (`orchestrator lateness`, internal/lateness) of one
-- farm over [from_at, to_at) of recorded_at: each turbine's estimated clock
-- offset, its readings and its early ones (lag < -early tolerance). Lag is
-- received_at - recorded_at, in whole µs (exact: timestamps are whole µs,
-- and date_part's float8 is rounded back), reported in ms. It and
-- LatenessLagHistogram run in one repeatable-read transaction, so they see
-- the same rows.
--
-- The estimator: lag = delay - offset with delay >= 0, so a low quantile of
-- lag estimates -offset. Per 10-minute window of recorded_at we take the
-- smallest lag (for a prompt link, some reading of a window's few hundred
-- arrives within milliseconds), and the estimate is minus the median
-- (the lower one, percentile_disc) of those window minima. The minimum alone
-- is not robust: one glitching timestamp would set it. Through the median,
-- a glitch or an outage delaying a whole window moves only its window's
-- minimum; the estimate moves only when half of the windows or more are
-- affected. Its bias is the median window's smallest delay (~10 ms for a
-- 2 s turbine on a link delaying 0-3 s), always towards a slower clock. A
-- range shorter than 10 minutes has one window: the estimate is then the
-- plain minimum.
-- name: LatenessTurbineClocks :many
WITH w AS (
    SELECT l.turbine_id,
           count(*) AS readings,
           count(*) FILTER (WHERE l.lag_us < -1000 * sqlc.arg(early_tolerance_ms)::bigint) AS early,
           min(l.lag_us) AS min_lag_us
    FROM (SELECT r.turbine_id,
                 date_bin('10 minutes', r.recorded_at, '1970-01-01 00:00:00+00'::timestamptz) AS win,
                 round(date_part('epoch', r.received_at - r.recorded_at) * 1000000)::bigint AS lag_us
          FROM readings r
          WHERE r.turbine_id = ANY (sqlc.arg(turbine_ids)::text[])
            AND r.recorded_at >= sqlc.arg(from_at)::timestamptz
            AND r.recorded_at < sqlc.arg(to_at)::timestamptz) AS l
    GROUP BY l.turbine_id, l.win
)
SELECT w.turbine_id::text AS turbine_id,
       sum(w.readings)::bigint AS readings,
       count(*)::integer AS windows,
       sum(w.early)::bigint AS early,
       (min(w.min_lag_us)::float8 / 1000)::float8 AS min_lag_ms,
       ((-percentile_disc(0.5) WITHIN GROUP (ORDER BY w.min_lag_us))::float8 / 1000)::float8 AS clock_offset_ms
FROM w
GROUP BY w.turbine_id
ORDER BY w.turbine_id;

-- LatenessLagHistogram buckets every reading's lag two ways: by lane,
-- series 'live' (lag <= the lane threshold) and 'backfill' (the rest), whose
-- sum is every reading; and series 'corrected': lag plus the turbine's
-- estimated clock offset (from LatenessTurbineClocks), i.e. the network
-- delay. Buckets are numbered by width_bucket over the bounds passed in
-- (lateness_lag_bounds_ms() on the control database: their one home); each
-- row carries its bucket's exact smallest and largest lag, so the merged
-- extremes are exact and a quantile is an observed lag. The two series come
-- from two scans: a LATERAL pair of rows per reading took about twice as
-- long as scanning again.
-- name: LatenessLagHistogram :many
WITH l AS NOT MATERIALIZED (
    SELECT round(date_part('epoch', r.received_at - r.recorded_at) * 1000000)::bigint AS lag_us,
           e.clock_offset_us
    FROM readings r
    JOIN (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
                 round(unnest(sqlc.arg(clock_offset_ms)::float8[]) * 1000)::bigint AS clock_offset_us) AS e
      ON e.turbine_id = r.turbine_id
    WHERE r.recorded_at >= sqlc.arg(from_at)::timestamptz
      AND r.recorded_at < sqlc.arg(to_at)::timestamptz
)
SELECT h.series::text AS series,
       width_bucket(floor(h.lag_us::float8 / 1000)::bigint, sqlc.arg(bounds)::bigint[])::integer AS bucket,
       count(*)::bigint AS readings,
       (min(h.lag_us)::float8 / 1000)::float8 AS min_lag_ms,
       (max(h.lag_us)::float8 / 1000)::float8 AS max_lag_ms
FROM (SELECT CASE WHEN l.lag_us <= 1000 * sqlc.arg(lane_threshold_ms)::bigint THEN 'live' ELSE 'backfill' END AS series, l.lag_us
      FROM l
      UNION ALL
      SELECT 'corrected', l.lag_us + l.clock_offset_us
      FROM l) AS h
GROUP BY 1, 2
ORDER BY 1, 2;
