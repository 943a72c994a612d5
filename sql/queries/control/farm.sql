-- farm, and the farm_rules view (each farm's rules in force: fleet_rules with its overrides).

-- name: FarmUpsert :exec
INSERT INTO farm (id, name, timezone, cadence_seconds,
                  lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s, mark_margin_s,
                  allowed_lateness_s, divergence_alert_pm, completeness_alert_pm, power_min_kw, power_max_kw, wind_max_ms)
VALUES (@id, @name, @timezone, @cadence_seconds,
        sqlc.narg(lane_threshold_ms), sqlc.narg(early_tolerance_ms), sqlc.narg(future_limit_s),
        sqlc.narg(max_age_days), sqlc.narg(window_s), sqlc.narg(mark_margin_s),
        sqlc.narg(allowed_lateness_s), sqlc.narg(divergence_alert_pm), sqlc.narg(completeness_alert_pm),
        sqlc.narg(power_min_kw), sqlc.narg(power_max_kw), sqlc.narg(wind_max_ms))
ON CONFLICT (id) DO UPDATE
SET name = EXCLUDED.name, timezone = EXCLUDED.timezone, cadence_seconds = EXCLUDED.cadence_seconds,
    lane_threshold_ms = EXCLUDED.lane_threshold_ms, early_tolerance_ms = EXCLUDED.early_tolerance_ms,
    future_limit_s = EXCLUDED.future_limit_s, max_age_days = EXCLUDED.max_age_days,
    window_s = EXCLUDED.window_s, mark_margin_s = EXCLUDED.mark_margin_s,
    allowed_lateness_s = EXCLUDED.allowed_lateness_s, divergence_alert_pm = EXCLUDED.divergence_alert_pm,
    completeness_alert_pm = EXCLUDED.completeness_alert_pm,
    power_min_kw = EXCLUDED.power_min_kw, power_max_kw = EXCLUDED.power_max_kw, wind_max_ms = EXCLUDED.wind_max_ms,
    updated_at = now()
WHERE (farm.name, farm.timezone, farm.cadence_seconds, farm.lane_threshold_ms, farm.early_tolerance_ms,
       farm.future_limit_s, farm.max_age_days, farm.window_s, farm.mark_margin_s,
       farm.allowed_lateness_s, farm.divergence_alert_pm, farm.completeness_alert_pm,
       farm.power_min_kw, farm.power_max_kw, farm.wind_max_ms)
      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.timezone, EXCLUDED.cadence_seconds, EXCLUDED.lane_threshold_ms,
       EXCLUDED.early_tolerance_ms, EXCLUDED.future_limit_s, EXCLUDED.max_age_days, EXCLUDED.window_s,
       EXCLUDED.mark_margin_s, EXCLUDED.allowed_lateness_s, EXCLUDED.divergence_alert_pm, EXCLUDED.completeness_alert_pm,
       EXCLUDED.power_min_kw, EXCLUDED.power_max_kw, EXCLUDED.wind_max_ms);

-- name: FarmList :many
SELECT id, name, timezone, cadence_seconds FROM farm ORDER BY id;

-- FarmDayGet is what a computation of one farm-local day needs from the
-- control database: the farm's version governing that day (its zone and
-- rules, farm_day_version) and the day's bounds: it ends at midnight in its
-- version's zone and starts where the day before ended (farm_day_start), so
-- days tile time and a zone change moves no day before it.
-- The bounds are computed here, on the control database, and passed to the
-- shard: a shard server's zone data cannot cut the day differently.
-- name: FarmDayGet :one
SELECT v.farm_id AS id, v.timezone, v.lane_threshold_ms, v.early_tolerance_ms, v.future_limit_s, v.max_age_days,
       v.window_s, v.mark_margin_s, v.allowed_lateness_s, v.divergence_alert_pm, v.completeness_alert_pm,
       v.power_min_kw, v.power_max_kw, v.wind_max_ms,
       farm_day_start(v.farm_id, sqlc.arg(day)::date)::timestamptz     AS day_start,
       local_day_start(v.timezone, sqlc.arg(day)::date + 1)::timestamptz AS day_end,
       -- the day's availability contract, as the window statement takes it
       v.contract_id, k.state_codes::text[] AS state_codes, k.state_keys::integer[] AS state_keys,
       k.key_available::integer AS key_available, k.key_unavailable::integer AS key_unavailable,
       k.key_environment::integer AS key_environment, c.cut_in_ms, c.cut_out_ms,
       contract_key(v.contract_id, 13::smallint)::integer AS key_missing,
       -- the farm's power curve, sampled when its model was recorded (NULL:
       -- no model)
       m.curve_lut::float8[] AS curve,
       -- the operator events in force over the day, one element per event
       -- and turbine ('' = every turbine of the farm), keyed by the contract
       ev.event_turbines, ev.event_from, ev.event_to, ev.event_keys
FROM farm_version v
JOIN availability_contract c ON c.id = v.contract_id
LEFT JOIN turbine_model m ON m.id = v.model_id
CROSS JOIN LATERAL contract_keys(v.contract_id) AS k(state_codes, state_keys, key_available, key_unavailable, key_environment, cut_in_ms, cut_out_ms)
CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(coalesce(t.turbine_id, '') ORDER BY e.id, t.turbine_id), '{}')::text[] AS event_turbines,
           coalesce(array_agg(e.from_at ORDER BY e.id, t.turbine_id), '{}')::timestamptz[] AS event_from,
           coalesce(array_agg(e.to_at ORDER BY e.id, t.turbine_id), '{}')::timestamptz[] AS event_to,
           coalesce(array_agg(contract_key(v.contract_id, e.category_id) ORDER BY e.id, t.turbine_id), '{}')::integer[] AS event_keys
    FROM operator_event e
    LEFT JOIN LATERAL unnest(nullif(e.turbine_ids, '{}')) AS t(turbine_id) ON true
    WHERE e.farm_id = v.farm_id AND e.voided_at IS NULL
      AND e.from_at < local_day_start(v.timezone, sqlc.arg(day)::date + 1)
      AND e.to_at > farm_day_start(v.farm_id, sqlc.arg(day)::date)
) AS ev
WHERE v.farm_id = sqlc.arg(id)
  AND v.first_day = (SELECT max(x.first_day) FROM farm_version x
                     WHERE x.farm_id = sqlc.arg(id) AND x.first_day <= sqlc.arg(day)::date);

-- FarmRulesList is the rules in force for every farm.
-- name: FarmRulesList :many
SELECT sqlc.embed(farm_rules)
FROM farm_rules
ORDER BY farm_id;

-- FarmRetention gives, per farm, the start of the oldest farm-local day that
-- retention keeps: the day holding @now minus @days days, at its start in
-- the farm's zone. "The day holding @now" is the one whose bounds hold it
-- (not always its wall-clock date: in a fall back over midnight the
-- repeated hour belongs to the day before), as everywhere else.
-- name: FarmRetention :many
SELECT f.id,
       local_day_start(f.timezone, (CASE WHEN local_day_start(f.timezone, d.wall) > sqlc.arg(now)::timestamptz THEN d.wall - 1 ELSE d.wall END)
                                   - sqlc.arg(days)::integer)::timestamptz AS keep_from
FROM farm f
CROSS JOIN LATERAL (SELECT (sqlc.arg(now)::timestamptz AT TIME ZONE f.timezone)::date AS wall) AS d
ORDER BY f.id;

-- FarmPublicationList lists every farm with its window rules, for the
-- fast path.
-- name: FarmPublicationList :many
SELECT f.id, f.timezone, r.window_s, r.allowed_lateness_s
FROM farm f JOIN farm_rules r ON r.farm_id = f.id
ORDER BY f.id;

-- FarmInServiceOnDay says whether any turbine of the farm (on any shard)
-- is in service some time during the farm-local day [@day_start,
-- @day_end) (turbine_in_service, the rule farm_day_status counts by).
-- name: FarmInServiceOnDay :one
SELECT EXISTS (
    SELECT 1 FROM turbine t
    WHERE t.farm_id = @farm_id
      AND turbine_in_service(t.commissioned_at, t.decommissioned_at, @day_start::timestamptz, @day_end::timestamptz)
) AS in_service;

-- name: FarmShards :many
SELECT DISTINCT shard_name FROM turbine WHERE farm_id = @farm_id ORDER BY shard_name;

-- FarmStatusList lists the farms (one farm with @farm_id, every farm when it is
-- NULL) with what is shown beside their numbers: zone, turbines in service
-- at @now, the shards holding them, and the rules in force that frame the
-- charts (window, allowed lateness, alert thresholds).
-- name: FarmStatusList :many
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

-- FarmFreshness is every farm's freshness; published is false for a farm
-- the fast path has not published yet (its times are then 'epoch').
-- name: FarmFreshness :many
SELECT farm_id, (published_through IS NOT NULL)::boolean AS published,
       coalesce(published_through, 'epoch')::timestamptz AS published_through,
       coalesce(complete_through, 'epoch')::timestamptz AS complete_through,
       coalesce(last_published_at, 'epoch')::timestamptz AS last_published_at
FROM farm_freshness ORDER BY farm_id;
