-- rollup_pending: the farm-day-shards whose recompute the drain requested from dirty marks, claimed
-- by rollup jobs (a command's or the nightly close's whole farm-day jobs are enqueued without one).

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

-- RollupPendingStatus is, per farm, the recomputes requested by drained
-- dirty marks whose job has not started (rollup_pending), and the oldest.
-- name: RollupPendingStatus :many
SELECT farm_id, count(*)::integer AS requests, min(requested_at)::timestamptz AS oldest_requested_at
FROM rollup_pending
GROUP BY farm_id
ORDER BY farm_id;

-- RollupPendingMetrics counts the recomputes requested by the drain whose
-- job has not started, per farm and shard, and the age of the oldest on
-- the caller's clock.
-- name: RollupPendingMetrics :many
SELECT farm_id, shard_name, count(*)::bigint AS requests,
       extract(epoch FROM sqlc.arg(now)::timestamptz - min(requested_at))::float8 AS oldest_s
FROM rollup_pending
GROUP BY farm_id, shard_name
ORDER BY farm_id, shard_name;
