-- turbine_move: moves of a turbine's readings between shards (internal/move).

-- TurbineMoveOpen is the unfinished move of each turbine that has one.
-- name: TurbineMoveOpen :many
SELECT id, turbine_id, from_shard, to_shard, state FROM turbine_move WHERE state <> 'done' ORDER BY id;

-- name: TurbineMoveInsert :one
INSERT INTO turbine_move (turbine_id, farm_id, from_shard, to_shard, apply_id, requested_at, updated_at)
VALUES (@turbine_id, @farm_id, @from_shard, @to_shard, @apply_id, @requested_at, @requested_at)
RETURNING id;

-- TurbineMoveGet reads a move and locks it: one step at a time per move.
-- name: TurbineMoveGet :one
SELECT * FROM turbine_move WHERE id = @id FOR UPDATE;

-- name: TurbineMoveCopyPlanned :exec
UPDATE turbine_move SET first_day = sqlc.narg(first_day)::date, days_total = @days_total, updated_at = @now
WHERE id = @id;

-- name: TurbineMoveDayCopied :exec
UPDATE turbine_move SET days_copied = days_copied + 1, rows_copied = rows_copied + @rows, updated_at = @now, last_error = NULL
WHERE id = @id;

-- TurbineMoveSwitch points ingest and the rollups at the new shard: the
-- turbine row, and the version in force closed at @now with a copy of it
-- on the new shard from @now (written by the apply that asked for the move).
-- name: TurbineMoveSwitch :exec
WITH m AS (
    UPDATE turbine_move SET state = 'switched', switched_at = @now, updated_at = @now, last_error = NULL
    WHERE turbine_move.id = @id AND turbine_move.state = 'copying'
    RETURNING turbine_id, to_shard, apply_id
), t AS (
    UPDATE turbine SET shard_name = m.to_shard, updated_at = now() FROM m WHERE turbine.id = m.turbine_id
    RETURNING turbine.id
), closed AS (
    UPDATE turbine_version v SET valid_to = @now
    FROM m
    WHERE v.turbine_id = m.turbine_id AND v.valid_to IS NULL AND v.valid_from < @now
    RETURNING v.*
)
INSERT INTO turbine_version (turbine_id, valid_from, valid_to, farm_id, shard_name, cadence_seconds,
                             commissioned_at, decommissioned_at, apply_id)
SELECT c.turbine_id, @now, NULL, c.farm_id, m.to_shard, c.cadence_seconds, c.commissioned_at, c.decommissioned_at, m.apply_id
FROM closed c JOIN m ON m.turbine_id = c.turbine_id;

-- name: TurbineMoveFenced :exec
UPDATE turbine_move SET state = 'fenced', fence_snapshot = @fence_snapshot, updated_at = @now, last_error = NULL
WHERE id = @id AND state = 'switched';

-- name: TurbineMoveVerified :exec
UPDATE turbine_move SET state = 'verified', rows_caught_up = @rows_caught_up, rows_verified = @rows_verified, updated_at = @now, last_error = NULL
WHERE id = @id AND state = 'fenced';

-- name: TurbineMoveDone :exec
UPDATE turbine_move SET state = 'done', rows_deleted = @rows_deleted, updated_at = @now, finished_at = @now, last_error = NULL
WHERE id = @id AND state = 'verified';

-- TurbineMoveOthersOpen counts the farm's unfinished moves other than
-- @id (under the farm's move lock): the last to finish queues the
-- recompute for all.
-- name: TurbineMoveOthersOpen :one
SELECT count(*)::bigint AS open FROM turbine_move WHERE farm_id = @farm_id AND state <> 'done' AND id <> @id;

-- TurbineMoveRecomputeFrom is the earliest first day of the farm's
-- finished moves whose recompute is not queued yet.
-- name: TurbineMoveRecomputeFrom :one
SELECT min(first_day)::date AS first_day FROM turbine_move
WHERE farm_id = @farm_id AND state = 'done' AND recompute_queued_at IS NULL;

-- name: TurbineMoveRecomputeQueued :exec
UPDATE turbine_move SET recompute_queued_at = @now
WHERE farm_id = @farm_id AND state = 'done' AND recompute_queued_at IS NULL;

-- name: TurbineMoveFailed :exec
UPDATE turbine_move SET last_error = @last_error, updated_at = @now WHERE id = @id;

-- TurbineMoveDaysComputed are the farm's days from @from_day that have
-- numbers stored (turbine_day rows or window parts): what a move must
-- recompute. A day with none is left to its nightly rollup, which reads
-- the new shard (a recompute would close days the farm never rolled up).
-- name: TurbineMoveDaysComputed :many
SELECT u.day::date AS day
FROM (SELECT td.day FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id)::text AND td.day >= sqlc.arg(from_day)::date
      UNION
      SELECT p.day FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id)::text AND p.day >= sqlc.arg(from_day)::date) AS u
ORDER BY 1;

-- TurbineMoveFarmShards are the shards holding turbines of the farm now.
-- name: TurbineMoveFarmShards :many
SELECT DISTINCT shard_name FROM turbine WHERE farm_id = @farm_id ORDER BY shard_name;

-- TurbineMoveForgetShardParts deletes the farm's window parts from
-- @from_day of shards that hold none of its turbines any more (their last
-- one moved away): no recompute there would replace them.
-- name: TurbineMoveForgetShardParts :execrows
DELETE FROM farm_window_part p
WHERE p.farm_id = @farm_id AND p.day >= @from_day::date
  AND NOT EXISTS (SELECT 1 FROM turbine t WHERE t.farm_id = p.farm_id AND t.shard_name = p.shard_name);

-- TurbineMoveList is every move, newest first, for orchestrator fleet moves.
-- name: TurbineMoveList :many
SELECT id, turbine_id, farm_id, from_shard, to_shard, state, requested_at, days_total, days_copied, rows_copied,
       switched_at, rows_caught_up, rows_verified, rows_deleted, finished_at, coalesce(last_error, '')::text AS last_error
FROM turbine_move
ORDER BY id DESC
LIMIT @max_rows;
