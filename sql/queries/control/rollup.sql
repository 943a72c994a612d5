-- RollupTurbines lists the turbines a rollup of one farm on one shard
-- covers (retired ones included: their history still counts), optionally
-- only some of them.
-- name: RollupTurbines :many
SELECT t.id, t.cadence_seconds, t.commissioned_at, t.decommissioned_at
FROM turbine t
WHERE t.farm_id = @farm_id
  AND t.shard_name = @shard_name
  AND (sqlc.narg(only_ids)::text[] IS NULL OR t.id = ANY (sqlc.narg(only_ids)::text[]))
ORDER BY t.id;

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

-- TurbineDayUpsert writes a farm-day-shard's rows. Each records when its
-- day counted as closed by the rules in force at the write
-- (farm_day_closes_at: its end + the farm's allowed lateness), which the
-- final rule compares computed_at with (farm_day_status).
-- name: TurbineDayUpsert :execrows
INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early,
                         beyond_cadence, out_of_service, min_lag_ms, max_lag_ms, last_received_at, silent_hours, computed_at, job_id,
                         closed_at)
SELECT u.turbine_id, @day::date, @farm_id::text, @shard_name::text, u.expected, u.received, u.available, u.late, u.early,
       u.beyond_cadence, u.out_of_service,
       CASE WHEN u.received + u.beyond_cadence + u.out_of_service > 0 THEN u.min_lag_ms END,
       CASE WHEN u.received + u.beyond_cadence + u.out_of_service > 0 THEN u.max_lag_ms END,
       CASE WHEN u.received + u.beyond_cadence + u.out_of_service > 0 THEN u.last_received_at END,
       u.silent_hours::integer[],
       @computed_at::timestamptz, sqlc.narg(job_id)::bigint,
       c.closed_at
FROM (SELECT farm_day_closes_at(@farm_id::text, @day::date) AS closed_at) AS c,
     (SELECT unnest(@turbine_ids::text[]) AS turbine_id,
             unnest(@expected::integer[]) AS expected,
             unnest(@received::integer[]) AS received,
             unnest(@available::integer[]) AS available,
             unnest(@late::integer[]) AS late,
             unnest(@early::integer[]) AS early,
             unnest(@beyond_cadence::integer[]) AS beyond_cadence,
             unnest(@out_of_service::integer[]) AS out_of_service,
             unnest(@min_lag_ms::bigint[]) AS min_lag_ms,
             unnest(@max_lag_ms::bigint[]) AS max_lag_ms,
             unnest(@last_received_at::timestamptz[]) AS last_received_at,
             -- one '{h,h,...}' literal per turbine (arrays of arrays must be rectangular)
             unnest(@silent_hours::text[]) AS silent_hours) AS u
ON CONFLICT (turbine_id, day) DO UPDATE
SET farm_id = EXCLUDED.farm_id, shard_name = EXCLUDED.shard_name,
    expected = EXCLUDED.expected, received = EXCLUDED.received, available = EXCLUDED.available,
    late = EXCLUDED.late, early = EXCLUDED.early,
    beyond_cadence = EXCLUDED.beyond_cadence, out_of_service = EXCLUDED.out_of_service,
    min_lag_ms = EXCLUDED.min_lag_ms, max_lag_ms = EXCLUDED.max_lag_ms,
    last_received_at = EXCLUDED.last_received_at, silent_hours = EXCLUDED.silent_hours,
    computed_at = EXCLUDED.computed_at, job_id = EXCLUDED.job_id, closed_at = EXCLUDED.closed_at;

-- RollupPendingLock reads (and locks) the request of a farm-day-shard, with
-- whether its job is still waiting to claim it.
-- name: RollupPendingLock :one
SELECT p.turbine_ids, p.job_id, river_job_not_started(p.job_id) AS waiting
FROM rollup_pending p
WHERE p.farm_id = @farm_id AND p.day = @day AND p.shard_name = @shard_name
FOR UPDATE;

-- RollupPendingMerge widens a waiting request (NULL turbines = all).
-- name: RollupPendingMerge :exec
UPDATE rollup_pending
SET turbine_ids = CASE WHEN turbine_ids IS NULL OR sqlc.narg(turbine_ids)::text[] IS NULL THEN NULL
                       ELSE ARRAY(SELECT DISTINCT u FROM unnest(turbine_ids || sqlc.narg(turbine_ids)::text[]) AS u ORDER BY 1) END,
    requested_at = @requested_at
WHERE farm_id = @farm_id AND day = @day AND shard_name = @shard_name;

-- RollupPendingPut records a request and the job enqueued for it. An
-- existing request (whose job has started, or will never start) is widened,
-- never replaced: its turbines may not have been claimed yet.
-- name: RollupPendingPut :exec
INSERT INTO rollup_pending (farm_id, day, shard_name, turbine_ids, job_id, requested_at)
VALUES (@farm_id, @day, @shard_name, sqlc.narg(turbine_ids)::text[], @job_id, @requested_at)
ON CONFLICT (farm_id, day, shard_name) DO UPDATE
SET turbine_ids = CASE WHEN rollup_pending.turbine_ids IS NULL OR EXCLUDED.turbine_ids IS NULL THEN NULL
                       ELSE ARRAY(SELECT DISTINCT u FROM unnest(rollup_pending.turbine_ids || EXCLUDED.turbine_ids) AS u ORDER BY 1) END,
    job_id = EXCLUDED.job_id, requested_at = EXCLUDED.requested_at;

-- RollupPendingOrphans lists requests whose job will never claim them (it
-- was cancelled, discarded or deleted); the drain gives them a new job.
-- name: RollupPendingOrphans :many
SELECT farm_id, day, shard_name, turbine_ids
FROM rollup_pending
WHERE NOT river_job_unfinished(job_id)
ORDER BY farm_id, day, shard_name
LIMIT 1000;

-- name: RollupPendingOrphanCount :one
SELECT count(*) FROM rollup_pending WHERE NOT river_job_unfinished(job_id);

-- RollupPendingClaim takes the request of a farm-day-shard for the job about
-- to recompute it.
-- name: RollupPendingClaim :one
DELETE FROM rollup_pending
WHERE farm_id = @farm_id AND day = @day AND shard_name = @shard_name
RETURNING turbine_ids, job_id;


-- name: FarmDayList :many
SELECT farm_id, day, turbines, expected, received, available,
       coalesce(availability, 0)::float8 AS availability, coalesce(completeness, 0)::float8 AS completeness,
       computed_at::timestamptz AS computed_at, computed_after_day_end::boolean AS computed_after_day_end, pending::boolean AS pending
FROM farm_day
WHERE farm_id = ANY (@farm_ids::text[]) AND day BETWEEN @from_day AND @to_day
ORDER BY farm_id, day;
