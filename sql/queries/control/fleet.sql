-- name: ShardUpsert :exec
INSERT INTO shard (name, dsn, database)
VALUES (@name, sqlc.narg(dsn), @database)
ON CONFLICT (name) DO UPDATE
SET dsn = EXCLUDED.dsn, database = EXCLUDED.database, updated_at = now()
WHERE shard.dsn IS DISTINCT FROM EXCLUDED.dsn OR shard.database IS DISTINCT FROM EXCLUDED.database;

-- name: ShardList :many
SELECT name, dsn, database FROM shard ORDER BY name;

-- name: FarmUpsert :exec
INSERT INTO farm (id, name, timezone, cadence_seconds,
                  lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s, mark_margin_s,
                  allowed_lateness_s, divergence_alert_pm, completeness_alert_pm)
VALUES (@id, @name, @timezone, @cadence_seconds,
        sqlc.narg(lane_threshold_ms), sqlc.narg(early_tolerance_ms), sqlc.narg(future_limit_s),
        sqlc.narg(max_age_days), sqlc.narg(window_s), sqlc.narg(mark_margin_s),
        sqlc.narg(allowed_lateness_s), sqlc.narg(divergence_alert_pm), sqlc.narg(completeness_alert_pm))
ON CONFLICT (id) DO UPDATE
SET name = EXCLUDED.name, timezone = EXCLUDED.timezone, cadence_seconds = EXCLUDED.cadence_seconds,
    lane_threshold_ms = EXCLUDED.lane_threshold_ms, early_tolerance_ms = EXCLUDED.early_tolerance_ms,
    future_limit_s = EXCLUDED.future_limit_s, max_age_days = EXCLUDED.max_age_days,
    window_s = EXCLUDED.window_s, mark_margin_s = EXCLUDED.mark_margin_s,
    allowed_lateness_s = EXCLUDED.allowed_lateness_s, divergence_alert_pm = EXCLUDED.divergence_alert_pm,
    completeness_alert_pm = EXCLUDED.completeness_alert_pm,
    updated_at = now()
WHERE (farm.name, farm.timezone, farm.cadence_seconds, farm.lane_threshold_ms, farm.early_tolerance_ms,
       farm.future_limit_s, farm.max_age_days, farm.window_s, farm.mark_margin_s,
       farm.allowed_lateness_s, farm.divergence_alert_pm, farm.completeness_alert_pm)
      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.timezone, EXCLUDED.cadence_seconds, EXCLUDED.lane_threshold_ms,
       EXCLUDED.early_tolerance_ms, EXCLUDED.future_limit_s, EXCLUDED.max_age_days, EXCLUDED.window_s,
       EXCLUDED.mark_margin_s, EXCLUDED.allowed_lateness_s, EXCLUDED.divergence_alert_pm, EXCLUDED.completeness_alert_pm);

-- FleetRulesPut sets the fleet-wide defaults and the fleet-wide reject
-- rules (the fleet file's rules:).
-- name: FleetRulesPut :exec
UPDATE fleet_rules
SET lane_threshold_ms = @lane_threshold_ms, early_tolerance_ms = @early_tolerance_ms,
    future_limit_s = @future_limit_s, max_age_days = @max_age_days,
    window_s = @window_s, mark_margin_s = @mark_margin_s,
    allowed_lateness_s = @allowed_lateness_s, divergence_alert_pm = @divergence_alert_pm,
    completeness_alert_pm = @completeness_alert_pm,
    reject_rows_kept = @reject_rows_kept, reject_retention_days = @reject_retention_days, updated_at = now()
WHERE (lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s, mark_margin_s,
       allowed_lateness_s, divergence_alert_pm, completeness_alert_pm, reject_rows_kept, reject_retention_days)
      IS DISTINCT FROM (@lane_threshold_ms, @early_tolerance_ms, @future_limit_s, @max_age_days, @window_s, @mark_margin_s,
       @allowed_lateness_s, @divergence_alert_pm, @completeness_alert_pm, @reject_rows_kept, @reject_retention_days);

-- FarmRulesList is the rules in force for every farm.
-- name: FarmRulesList :many
SELECT sqlc.embed(farm_rules)
FROM farm_rules
ORDER BY farm_id;

-- name: FarmList :many
SELECT id, name, timezone, cadence_seconds FROM farm ORDER BY id;

-- FarmDayGet is what a recompute of one farm-local day needs from the
-- control database: the rules in force, and the day's bounds
-- (local_day_start, control 00016). The bounds are computed here, on the
-- control database, and passed to the shard: a shard server's zone data
-- cannot cut the day differently.
-- name: FarmDayGet :one
SELECT f.id, f.timezone, sqlc.embed(r),
       local_day_start(f.timezone, sqlc.arg(day)::date)::timestamptz     AS day_start,
       local_day_start(f.timezone, sqlc.arg(day)::date + 1)::timestamptz AS day_end
FROM farm f JOIN farm_rules r ON r.farm_id = f.id
WHERE f.id = sqlc.arg(id);

-- name: TurbineUpsert :batchexec
INSERT INTO turbine (id, farm_id, shard_name, cadence_seconds, commissioned_at, decommissioned_at, in_fleet_file)
VALUES (@id, @farm_id, @shard_name, @cadence_seconds, sqlc.narg(commissioned_at), sqlc.narg(decommissioned_at), true)
ON CONFLICT (id) DO UPDATE
SET farm_id = EXCLUDED.farm_id, shard_name = EXCLUDED.shard_name,
    cadence_seconds = EXCLUDED.cadence_seconds,
    commissioned_at = EXCLUDED.commissioned_at,
    decommissioned_at = EXCLUDED.decommissioned_at,
    in_fleet_file = true, updated_at = now()
WHERE (turbine.farm_id, turbine.shard_name, turbine.cadence_seconds, turbine.commissioned_at,
       turbine.decommissioned_at, turbine.in_fleet_file)
      IS DISTINCT FROM (EXCLUDED.farm_id, EXCLUDED.shard_name, EXCLUDED.cadence_seconds,
       EXCLUDED.commissioned_at, EXCLUDED.decommissioned_at, true);

-- TurbineRetire marks turbines that are no longer in the fleet file as
-- decommissioned (at @now unless they already carry a date); rows are kept.
-- name: TurbineRetire :execrows
UPDATE turbine
SET in_fleet_file = false,
    decommissioned_at = coalesce(decommissioned_at, @now::timestamptz),
    updated_at = now()
WHERE in_fleet_file AND NOT (id = ANY (@keep_ids::text[]));

-- TurbinePlacements is where each registered turbine's history lives: its
-- farm and its shard (neither may change).
-- name: TurbinePlacements :many
SELECT id, farm_id, shard_name FROM turbine;

-- TurbineRoutes is everything ingest needs to route and validate a reading,
-- the farm's rules in force included.
-- name: TurbineRoutes :many
SELECT t.id, t.farm_id, t.shard_name, t.cadence_seconds, t.commissioned_at, t.decommissioned_at,
       f.timezone, sqlc.embed(r)
FROM turbine t
JOIN farm f ON f.id = t.farm_id
JOIN farm_rules r ON r.farm_id = t.farm_id
ORDER BY t.id;

-- name: FleetCounts :one
SELECT (SELECT count(*) FROM shard)::bigint AS shards,
       (SELECT count(*) FROM farm)::bigint AS farms,
       (SELECT count(*) FROM turbine WHERE in_fleet_file)::bigint AS turbines,
       (SELECT count(*) FROM turbine WHERE NOT in_fleet_file)::bigint AS retired;

-- TimezoneCheck fails with 22023 (invalid_parameter_value) when the
-- server's time zone database has no zone @name: setting TimeZone for the
-- statement's own transaction loads that one zone, where
-- pg_timezone_names reads every zone the server has (200 ms, each call).
-- name: TimezoneCheck :exec
SELECT set_config('TimeZone', @name::text, true);

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

-- LocalDayStarts is when each of @days dates from @first begins in @zone,
-- by Postgres's rule (local_day_start, control 00016): what the rollup SQL
-- and the views use as day bounds.
-- name: LocalDayStarts :many
SELECT local_day_start(sqlc.arg(zone)::text, sqlc.arg(first)::date + g.i)::timestamptz AS day_start
FROM generate_series(0, sqlc.arg(days)::integer - 1) AS g(i)
ORDER BY g.i;
