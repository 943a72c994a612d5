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

-- StatusDayExtras is what the status page and the API show beside a day
-- of the monthly report (report_monthly_availability, control 00011, the
-- one home of a day's counts, rates, provenance and final/provisional
-- rule): its windows as published (day_provenance: how many, how many
-- final, the sum of their revisions), its fast-vs-final divergence as last
-- measured (reconciliation_pm) and the alerts raised for it. One row per
-- day of [@from_day, @to_day] that has any of them.
-- name: StatusDayExtras :many
WITH dp AS (
    SELECT * FROM day_provenance
    WHERE farm_id = sqlc.arg(farm_id)::text AND day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
), rc AS (
    SELECT * FROM reconciliation_pm
    WHERE farm_id = sqlc.arg(farm_id)::text AND scope = 'day' AND day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
), al AS (
    SELECT a.day,
           bool_or(a.kind = 'divergence' AND a.scope = 'day') AS divergence_alert,
           bool_or(a.kind = 'completeness') AS completeness_alert
    FROM alert a
    WHERE a.farm_id = sqlc.arg(farm_id)::text AND a.day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
    GROUP BY a.day
), d AS (
    SELECT coalesce(dp.day, rc.day) AS day, dp.windows, dp.final_windows, dp.revision,
           rc.farm_id AS rc_farm, rc.windows AS rc_windows, rc.fast_received, rc.final_received, rc.fast_available, rc.final_available,
           rc.received_divergence_pm, rc.available_divergence_pm, rc.measured_at
    FROM dp FULL JOIN rc ON rc.day = dp.day
)
SELECT coalesce(d.day, al.day)::date AS day,
       coalesce(d.windows, 0)::integer AS windows,
       coalesce(d.final_windows, 0)::integer AS final_windows,
       coalesce(d.revision, 0)::bigint AS revision,
       (d.rc_farm IS NOT NULL)::boolean AS reconciled,
       coalesce(d.rc_windows, 0)::integer AS reconciled_windows,
       coalesce(d.fast_received, 0)::bigint AS fast_received,
       coalesce(d.final_received, 0)::bigint AS final_received,
       coalesce(d.fast_available, 0)::bigint AS fast_available,
       coalesce(d.final_available, 0)::bigint AS final_available,
       coalesce(d.received_divergence_pm, 0)::double precision AS received_divergence_pm,
       coalesce(d.available_divergence_pm, 0)::double precision AS available_divergence_pm,
       coalesce(d.measured_at, 'epoch')::timestamptz AS reconciled_at,
       coalesce(al.divergence_alert, false)::boolean AS divergence_alert,
       coalesce(al.completeness_alert, false)::boolean AS completeness_alert
FROM d FULL JOIN al ON al.day = d.day
ORDER BY 1;

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
