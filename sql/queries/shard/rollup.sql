-- TurbineDayCompute recomputes, from scratch, the counts of one farm-local
-- day for the given turbines on this shard. The turbines' calendar facts
-- (cadence, service interval) come from the control database as arrays, so
-- expected and received are computed side by side in one statement; a
-- turbine with no readings still gets its row (received 0). The day's bounds
-- are computed here, in the database's own zone rules, and written inline so
-- the planner prunes partitions.
-- name: TurbineDayCompute :many
SELECT t.turbine_id::text AS turbine_id,
       floor(extract(epoch FROM greatest(
                 least((sqlc.arg(day)::date + 1)::timestamp AT TIME ZONE sqlc.arg(timezone)::text, t.service_to)
               - greatest((sqlc.arg(day)::date)::timestamp AT TIME ZONE sqlc.arg(timezone)::text, t.service_from),
               interval '0')) / t.cadence_seconds)::integer AS expected,
       coalesce(a.received, 0)::integer AS received,
       coalesce(a.available, 0)::integer AS available,
       coalesce(a.late, 0)::integer AS late,
       coalesce(a.early, 0)::integer AS early,
       coalesce(a.min_lag_ms, 0)::bigint AS min_lag_ms,
       coalesce(a.max_lag_ms, 0)::bigint AS max_lag_ms,
       coalesce(a.last_received_at, 'epoch')::timestamptz AS last_received_at
FROM (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
             unnest(sqlc.arg(cadence_seconds)::integer[]) AS cadence_seconds,
             unnest(sqlc.arg(service_from)::timestamptz[]) AS service_from,
             unnest(sqlc.arg(service_to)::timestamptz[]) AS service_to) AS t
LEFT JOIN (
    SELECT r.turbine_id,
           count(*) AS received,
           count(*) FILTER (WHERE r.available) AS available,
           count(*) FILTER (WHERE r.received_at - r.recorded_at > (sqlc.arg(lane_threshold_seconds)::float8 * interval '1 second')) AS late,
           count(*) FILTER (WHERE r.recorded_at - r.received_at > (sqlc.arg(early_tolerance_seconds)::float8 * interval '1 second')) AS early,
           (extract(epoch FROM min(r.received_at - r.recorded_at)) * 1000)::bigint AS min_lag_ms,
           (extract(epoch FROM max(r.received_at - r.recorded_at)) * 1000)::bigint AS max_lag_ms,
           max(r.received_at) AS last_received_at
    FROM readings r
    WHERE r.turbine_id = ANY (sqlc.arg(turbine_ids)::text[])
      AND r.recorded_at >= (sqlc.arg(day)::date)::timestamp AT TIME ZONE sqlc.arg(timezone)::text
      AND r.recorded_at < (sqlc.arg(day)::date + 1)::timestamp AT TIME ZONE sqlc.arg(timezone)::text
    GROUP BY r.turbine_id
) AS a ON a.turbine_id = t.turbine_id
ORDER BY t.turbine_id;
