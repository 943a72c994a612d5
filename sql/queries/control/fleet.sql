-- name: ShardUpsert :exec
INSERT INTO shard (name, dsn, database)
VALUES (@name, sqlc.narg(dsn), @database)
ON CONFLICT (name) DO UPDATE
SET dsn = EXCLUDED.dsn, database = EXCLUDED.database, updated_at = now()
WHERE shard.dsn IS DISTINCT FROM EXCLUDED.dsn OR shard.database IS DISTINCT FROM EXCLUDED.database;

-- name: ShardList :many
SELECT name, dsn, database FROM shard ORDER BY name;

-- name: FarmUpsert :exec
INSERT INTO farm (id, name, timezone, cadence_seconds)
VALUES (@id, @name, @timezone, @cadence_seconds)
ON CONFLICT (id) DO UPDATE
SET name = EXCLUDED.name, timezone = EXCLUDED.timezone,
    cadence_seconds = EXCLUDED.cadence_seconds, updated_at = now()
WHERE (farm.name, farm.timezone, farm.cadence_seconds)
      IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.timezone, EXCLUDED.cadence_seconds);

-- name: FarmList :many
SELECT id, name, timezone, cadence_seconds FROM farm ORDER BY id;

-- name: FarmGet :one
SELECT id, name, timezone, cadence_seconds FROM farm WHERE id = @id;

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

-- TurbineRoutes is everything ingest needs to route and validate a reading.
-- name: TurbineRoutes :many
SELECT t.id, t.farm_id, t.shard_name, t.cadence_seconds, t.commissioned_at, t.decommissioned_at,
       f.timezone
FROM turbine t
JOIN farm f ON f.id = t.farm_id
ORDER BY t.id;

-- name: FleetCounts :one
SELECT (SELECT count(*) FROM shard)::bigint AS shards,
       (SELECT count(*) FROM farm)::bigint AS farms,
       (SELECT count(*) FROM turbine WHERE in_fleet_file)::bigint AS turbines,
       (SELECT count(*) FROM turbine WHERE NOT in_fleet_file)::bigint AS retired;

-- name: TimezoneKnown :one
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names WHERE name = @name::text) AS known;

-- FarmRetention gives, per farm, the start of the oldest farm-local day that
-- retention keeps: the local date of @now minus @days days, at local
-- midnight in the farm's zone (Postgres's zone rules, like every day bound).
-- name: FarmRetention :many
SELECT f.id,
       ((((@now::timestamptz) AT TIME ZONE f.timezone)::date - @days::integer)::timestamp AT TIME ZONE f.timezone)::timestamptz AS keep_from
FROM farm f
ORDER BY f.id;
