-- turbine: the registry of turbines, their farm, shard, cadence and service interval.

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
-- farm (which may not change) and its shard (changed by a move only); and
-- whether the fleet file names it still and when its service ends (what
-- an apply leaving it out would retire).
-- name: TurbinePlacements :many
SELECT id, farm_id, shard_name, in_fleet_file, decommissioned_at FROM turbine ORDER BY id;

-- TurbineRoutes is everything ingest needs to route and validate a reading,
-- the farm's rules in force included.
-- name: TurbineRoutes :many
SELECT t.id, t.farm_id, t.shard_name, t.cadence_seconds, t.commissioned_at, t.decommissioned_at,
       f.timezone, sqlc.embed(r)
FROM turbine t
JOIN farm f ON f.id = t.farm_id
JOIN farm_rules r ON r.farm_id = t.farm_id
ORDER BY t.id;

-- TurbineRollupList lists the turbines a computation of one farm-day on one
-- shard covers, one row per version in force some time during the day
-- [@day_start, @day_end) on this farm (retired turbines included: their
-- history still counts), optionally only some of them. The shard is where
-- the turbine's readings are now (turbine.shard_name), whatever shard a
-- version of the day routed to: a move (turbine_move) copies every day's
-- readings before it switches it. The service interval is the turbine's
-- (turbine.commissioned_at, decommissioned_at).
-- name: TurbineRollupList :many
SELECT v.turbine_id AS id, v.cadence_seconds, t.commissioned_at, t.decommissioned_at,
       -- the version's span within the day (a first version starts at -infinity)
       greatest(v.valid_from, @day_start::timestamptz)::timestamptz AS valid_from,
       least(coalesce(v.valid_to, 'infinity'), @day_end::timestamptz)::timestamptz AS valid_to
FROM turbine_version v
JOIN turbine t ON t.id = v.turbine_id
WHERE v.farm_id = @farm_id
  AND t.shard_name = @shard_name
  AND v.valid_from < @day_end::timestamptz
  AND (v.valid_to IS NULL OR v.valid_to > @day_start::timestamptz)
  AND (sqlc.narg(only_ids)::text[] IS NULL OR v.turbine_id = ANY (sqlc.narg(only_ids)::text[]))
ORDER BY v.turbine_id, v.valid_from;

-- TurbineStatusList is one farm-day per turbine: every turbine in service
-- that day and every turbine_day row of it (a turbine in service without a
-- row: its shard's rows are missing, or the day is not closed).
-- min_lag_ms is the day's smallest received_at - recorded_at: minus the
-- turbine's clock offset plus the fastest delivery (the plain-minimum
-- estimate; `orchestrator lateness` has the robust one).
-- name: TurbineStatusList :many
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

-- TurbineFarmShards lists every farm and shard that holds turbines of it
-- (retired ones included: their history is there), so a backlog gauge can
-- say 0 rather than be absent.
-- name: TurbineFarmShards :many
SELECT DISTINCT farm_id, shard_name FROM turbine ORDER BY farm_id, shard_name;
