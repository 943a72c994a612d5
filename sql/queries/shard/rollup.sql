-- TurbineDayCompute recomputes, from scratch, the counts of one farm-local
-- day for the given turbines on this shard. The turbines' calendar facts
-- (cadence, service interval) come from the control database as arrays, so
-- expected and received are computed side by side in one statement; a
-- turbine with no readings still gets its row (received 0). The day's bounds
-- come from the control database too (FarmDayGet: one source for them);
-- plans are custom per call, so the planner prunes partitions on them.
--
-- The slot rule (README, "received and available"): a turbine's service
-- time in the day, [origin, stop), is cut into `expected` cadence slots;
-- slot k starts at origin + k * cadence and the last slot runs on to stop
-- (so a cadence that does not divide the day loses no reading); service
-- time shorter than one cadence has no slot (expected 0). received
-- counts slots with a reading, available the slots none of whose readings
-- says unavailable, so neither can exceed expected. Readings in a slot
-- already counted are beyond_cadence; readings of the day outside the
-- service interval are out_of_service. late, early and the lags describe
-- every reading of the day.
--
-- Each turbine is one LATERAL index range scan (its rows arrive in key
-- order); OFFSET 0 makes each row's slot be computed once, not once per
-- aggregate that reads it.
-- name: TurbineDayCompute :many
WITH t AS (
    SELECT s.turbine_id, s.cadence_seconds, s.origin, s.stop,
           floor(extract(epoch FROM greatest(s.stop - s.origin, interval '0')) / s.cadence_seconds)::integer AS expected
    FROM (SELECT u.turbine_id, u.cadence_seconds,
                 greatest(sqlc.arg(day_start)::timestamptz, u.service_from) AS origin,
                 least(sqlc.arg(day_end)::timestamptz, u.service_to) AS stop
          FROM (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
                       unnest(sqlc.arg(cadence_seconds)::integer[]) AS cadence_seconds,
                       unnest(sqlc.arg(service_from)::timestamptz[]) AS service_from,
                       unnest(sqlc.arg(service_to)::timestamptz[]) AS service_to) AS u) AS s
)
SELECT t.turbine_id::text AS turbine_id,
       t.expected::integer AS expected,
       a.received::integer AS received,
       (a.received - a.unavailable_slots)::integer AS available,
       (a.in_service - a.received)::integer AS beyond_cadence,
       a.out_of_service::integer AS out_of_service,
       a.late::integer AS late,
       a.early::integer AS early,
       coalesce(a.min_lag_ms, 0)::bigint AS min_lag_ms,
       coalesce(a.max_lag_ms, 0)::bigint AS max_lag_ms,
       coalesce(a.last_received_at, 'epoch')::timestamptz AS last_received_at
FROM t
CROSS JOIN LATERAL (
    SELECT count(DISTINCT x.slot) AS received,
           count(DISTINCT x.slot) FILTER (WHERE NOT x.available) AS unavailable_slots,
           count(*) FILTER (WHERE x.in_service) AS in_service,
           count(*) FILTER (WHERE NOT x.in_service) AS out_of_service,
           count(*) FILTER (WHERE x.lag > (sqlc.arg(lane_threshold_seconds)::float8 * interval '1 second')) AS late,
           count(*) FILTER (WHERE -x.lag > (sqlc.arg(early_tolerance_seconds)::float8 * interval '1 second')) AS early,
           (extract(epoch FROM min(x.lag)) * 1000)::bigint AS min_lag_ms,
           (extract(epoch FROM max(x.lag)) * 1000)::bigint AS max_lag_ms,
           max(x.received_at) AS last_received_at
    FROM (SELECT r.recorded_at >= t.origin AND r.recorded_at < t.stop AS in_service,
                 -- No slot when the service time is shorter than one cadence
                 -- (expected 0): such a reading is beyond_cadence.
                 CASE WHEN r.recorded_at >= t.origin AND r.recorded_at < t.stop AND t.expected > 0
                      THEN least(floor(date_part('epoch', r.recorded_at - t.origin) / t.cadence_seconds), t.expected - 1)
                 END AS slot,
                 r.available,
                 r.received_at - r.recorded_at AS lag,
                 r.received_at
          FROM readings r
          WHERE r.turbine_id = t.turbine_id
            AND r.recorded_at >= sqlc.arg(day_start)::timestamptz
            AND r.recorded_at < sqlc.arg(day_end)::timestamptz
          OFFSET 0) AS x
) AS a
ORDER BY t.turbine_id;

-- ReadingsDayLost says whether retention has dropped readings of a
-- farm-local day: a recompute of such a day would overwrite a good row with
-- a partial one, so it is refused.
-- name: ReadingsDayLost :one
SELECT coalesce(rr.dropped_before > sqlc.arg(day_start)::timestamptz, false)::boolean AS lost,
       coalesce(rr.dropped_before, 'epoch')::timestamptz AS dropped_before
FROM (SELECT 1) AS one
LEFT JOIN readings_retention rr ON true;
