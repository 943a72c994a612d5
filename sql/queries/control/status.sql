-- What the status page and the JSON API read (internal/server). Counts
-- only: rates are computed from them when they are shown.

-- StatusFarms lists the farms (one farm with @farm_id, every farm when it is
-- NULL) with what is shown beside their numbers: zone, turbines in service
-- at @now, the shards holding them, and the rules in force that frame the
-- charts (window, allowed lateness, alert thresholds).
-- name: StatusFarms :many
SELECT f.id, f.name, f.timezone,
       (SELECT count(*) FROM turbine t
        WHERE t.farm_id = f.id
          AND (t.commissioned_at IS NULL OR t.commissioned_at <= sqlc.arg(now)::timestamptz)
          AND (t.decommissioned_at IS NULL OR t.decommissioned_at > sqlc.arg(now)::timestamptz))::integer AS turbines,
       coalesce((SELECT array_agg(DISTINCT t.shard_name ORDER BY t.shard_name) FROM turbine t WHERE t.farm_id = f.id), '{}')::text[] AS shards,
       r.window_s::integer AS window_s, r.allowed_lateness_s::integer AS allowed_lateness_s,
       r.divergence_alert_pm::integer AS divergence_alert_pm, r.completeness_alert_pm::integer AS completeness_alert_pm
FROM farm f
JOIN farm_rules r ON r.farm_id = f.id
WHERE sqlc.narg(farm_id)::text IS NULL OR f.id = sqlc.narg(farm_id)::text
ORDER BY f.id;

-- StatusDays is one farm's days in [@from_day, @to_day] that have a number,
-- each with its provenance, its fast-vs-final divergence and why it is not
-- final yet (held_back; empty = final).
--
-- A closed day (its turbine_day rows written, farm_day) shows those counts;
-- a day not closed shows the sum of the windows published so far
-- (day_provenance). Path, complete_through and the window counts come from
-- day_provenance (a closed day with no window rows, rolled up before
-- windows existed, is path final, complete through its rollup's watermark).
--
-- held_back codes: open (not closed: no turbine_day rows yet), pending (a
-- recompute is requested or running), marked (late readings wait on a shard
-- for the drain: @marked_days, read from the shards), fast_windows (some
-- windows have no final row), rolled_up_early (rolled up before the day
-- ended), turbines_missing (fewer turbine rows than turbines in service).
-- name: StatusDays :many
WITH f AS (
    SELECT f.id, f.timezone, r.allowed_lateness_s
    FROM farm f JOIN farm_rules r ON r.farm_id = f.id
    WHERE f.id = sqlc.arg(farm_id)::text
), fd AS (
    SELECT * FROM farm_day
    WHERE farm_id = sqlc.arg(farm_id)::text AND day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
), dp AS (
    SELECT * FROM day_provenance
    WHERE farm_id = sqlc.arg(farm_id)::text AND day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
), days AS (
    SELECT coalesce(fd.day, dp.day) AS day,
           fd.day IS NOT NULL AS closed,
           coalesce(fd.expected, dp.expected) AS expected,
           coalesce(fd.received, dp.received) AS received,
           coalesce(fd.available, dp.available) AS available,
           coalesce(fd.turbines_in_service, 0) AS turbines_rolled_up,
           coalesce(fd.registered_turbines, 0) AS registered_turbines,
           coalesce(dp.first_window_start, (coalesce(fd.day, dp.day)::timestamp AT TIME ZONE f.timezone)) AS first_window_start,
           coalesce(dp.last_window_end, ((coalesce(fd.day, dp.day) + 1)::timestamp AT TIME ZONE f.timezone)) AS last_window_end,
           coalesce(dp.path, 'final') AS path,
           coalesce(dp.windows, 0) AS windows,
           coalesce(dp.final_windows, 0) AS final_windows,
           coalesce(dp.revision, 0) AS revision,
           greatest(fd.computed_at, dp.computed_at) AS computed_at,
           -- a closed day with no window rows: complete through its
           -- rollup's watermark, as a window's is
           coalesce(dp.complete_through, fd.computed_at - f.allowed_lateness_s * interval '1 second') AS complete_through,
           coalesce(fd.pending, false) OR coalesce(dp.pending, false) AS pending,
           coalesce(fd.computed_after_day_end, true) AS computed_after_day_end
    FROM fd FULL JOIN dp ON dp.day = fd.day
    CROSS JOIN f
)
SELECT d.day::date AS day,
       d.closed::boolean AS closed,
       d.expected::bigint AS expected,
       d.received::bigint AS received,
       d.available::bigint AS available,
       d.turbines_rolled_up::integer AS turbines_rolled_up,
       d.registered_turbines::integer AS registered_turbines,
       d.first_window_start::timestamptz AS first_window_start,
       d.last_window_end::timestamptz AS last_window_end,
       d.path::text AS path,
       d.windows::integer AS windows,
       d.final_windows::integer AS final_windows,
       d.revision::bigint AS revision,
       d.computed_at::timestamptz AS computed_at,
       d.complete_through::timestamptz AS complete_through,
       d.pending::boolean AS pending,
       array_remove(ARRAY[
           CASE WHEN NOT d.closed THEN 'open' END,
           CASE WHEN d.pending THEN 'pending' END,
           CASE WHEN d.day = ANY (sqlc.arg(marked_days)::date[]) THEN 'marked' END,
           CASE WHEN d.path <> 'final' THEN 'fast_windows' END,
           CASE WHEN d.closed AND NOT d.computed_after_day_end THEN 'rolled_up_early' END,
           CASE WHEN d.closed AND d.turbines_rolled_up < d.registered_turbines THEN 'turbines_missing' END
       ], NULL)::text[] AS held_back,
       (rc.farm_id IS NOT NULL)::boolean AS reconciled,
       coalesce(rc.windows, 0)::integer AS reconciled_windows,
       coalesce(rc.fast_received, 0)::bigint AS fast_received,
       coalesce(rc.final_received, 0)::bigint AS final_received,
       coalesce(rc.fast_available, 0)::bigint AS fast_available,
       coalesce(rc.final_available, 0)::bigint AS final_available,
       coalesce(rc.received_divergence_pm, 0)::double precision AS received_divergence_pm,
       coalesce(rc.available_divergence_pm, 0)::double precision AS available_divergence_pm,
       rc.measured_at AS reconciled_at,
       EXISTS (SELECT 1 FROM alert a WHERE a.kind = 'divergence' AND a.scope = 'day' AND a.farm_id = sqlc.arg(farm_id)::text AND a.day = d.day)::boolean AS divergence_alert,
       EXISTS (SELECT 1 FROM alert a WHERE a.kind = 'completeness' AND a.farm_id = sqlc.arg(farm_id)::text AND a.day = d.day)::boolean AS completeness_alert
FROM days d
LEFT JOIN reconciliation_pm rc ON rc.farm_id = sqlc.arg(farm_id)::text AND rc.scope = 'day' AND rc.day = d.day
ORDER BY d.day;

-- StatusTurbines is one farm-day per turbine: every turbine in service
-- that day and every turbine_day row of it (a turbine in service without a
-- row: its shard's rows are missing, or the day is not closed).
-- min_lag_ms is the day's smallest received_at - recorded_at: minus the
-- turbine's clock offset plus the fastest delivery (the plain-minimum
-- estimate; `orchestrator lateness` has the robust one).
-- name: StatusTurbines :many
WITH b AS (
    SELECT f.id,
           (sqlc.arg(day)::date::timestamp AT TIME ZONE f.timezone) AS day_start,
           ((sqlc.arg(day)::date + 1)::timestamp AT TIME ZONE f.timezone) AS day_end
    FROM farm f WHERE f.id = sqlc.arg(farm_id)::text
), reg AS (
    SELECT t.id, t.shard_name
    FROM turbine t, b
    WHERE t.farm_id = b.id
      AND (t.commissioned_at IS NULL OR t.commissioned_at < b.day_end)
      AND (t.decommissioned_at IS NULL OR t.decommissioned_at > b.day_start)
), td AS (
    SELECT * FROM turbine_day WHERE farm_id = sqlc.arg(farm_id)::text AND day = sqlc.arg(day)::date
)
SELECT coalesce(td.turbine_id, reg.id)::text AS turbine_id,
       coalesce(td.shard_name, reg.shard_name)::text AS shard_name,
       (td.turbine_id IS NOT NULL)::boolean AS rolled_up,
       (reg.id IS NOT NULL)::boolean AS in_service,
       coalesce(td.expected, 0)::bigint AS expected,
       coalesce(td.received, 0)::bigint AS received,
       coalesce(td.available, 0)::bigint AS available,
       coalesce(td.late, 0)::bigint AS late,
       coalesce(td.early, 0)::bigint AS early,
       coalesce(td.beyond_cadence, 0)::bigint AS beyond_cadence,
       coalesce(td.out_of_service, 0)::bigint AS out_of_service,
       td.min_lag_ms,
       td.max_lag_ms,
       coalesce(td.silent_hours, '{}')::integer[] AS silent_hours,
       td.last_received_at,
       td.computed_at
FROM reg FULL JOIN td ON td.turbine_id = reg.id
ORDER BY 1;

-- StatusRollupRequests is, per farm, the recomputes requested by drained
-- dirty marks whose job has not started (rollup_pending), and the oldest.
-- name: StatusRollupRequests :many
SELECT farm_id, count(*)::integer AS requests, min(requested_at)::timestamptz AS oldest_requested_at
FROM rollup_pending
GROUP BY farm_id
ORDER BY farm_id;
