-- The statement as it was before availability contracts (commit 994a426, sqlc's text):
-- bench-rollup times it against today's on the same data (BenchmarkRollupFarmDay).
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
       (sum(h.unhashed) = 0)::boolean AS fingerprinted
FROM (SELECT tw.turbine_id,
             floor(extract(epoch FROM tw.window_start - $1::timestamptz) / 3600)::integer AS hour,
             count(*) AS windows,
             sum(tw.expected) AS expected, sum(tw.received) AS received, sum(tw.available) AS available,
             sum(tw.beyond_cadence) AS beyond_cadence, sum(tw.out_of_service) AS out_of_service,
             sum(tw.late) AS late, sum(tw.early) AS early,
             min(tw.min_lag_ms) AS min_lag_ms, max(tw.max_lag_ms) AS max_lag_ms, max(tw.last_received_at) AS last_received_at,
             sum(tw.input_hash) AS input_hash, count(*) FILTER (WHERE tw.input_hash IS NULL) AS unhashed
      FROM unnest($2::text[]) AS t(turbine_id)
      -- the day's key range of each turbine (primary key), not the farm's
      -- day (OFFSET 0: as in TurbineWindowOffGridDelete)
      CROSS JOIN LATERAL (SELECT tw.turbine_id, tw.window_start, tw.window_end, tw.farm_id, tw.day, tw.expected, tw.received, tw.available, tw.beyond_cadence, tw.out_of_service, tw.late, tw.early, tw.min_lag_ms, tw.max_lag_ms, tw.last_received_at, tw.computed_at, tw.input_hash FROM turbine_window tw
                          WHERE tw.turbine_id = t.turbine_id
                            AND tw.window_start >= $1::timestamptz AND tw.window_start < $3::timestamptz
                          OFFSET 0) AS tw
      WHERE tw.farm_id = $4 AND tw.day = $5
      GROUP BY 1, 2) AS h
GROUP BY h.turbine_id
ORDER BY h.turbine_id

