-- What the drain records of each shard's marks (internal/jobs Drainer), in
-- the control transaction that records their requests (rollup_pending).
-- The monthly report reads them (farm_day_status): a farm-day is final only
-- if every mark of it has reached the control database.

-- ShardDrainRecord says the drain has read every mark the shard had
-- committed before @drained_through (the drainer's clock taken before the
-- read opened) and recorded each as a request or as settling.
-- name: ShardDrainRecord :exec
INSERT INTO shard_drain (shard_name, drained_through, shard_clock_at, marks_read)
VALUES (@shard_name, @drained_through, @shard_clock_at, @marks_read)
ON CONFLICT (shard_name) DO UPDATE
SET drained_through = EXCLUDED.drained_through, shard_clock_at = EXCLUDED.shard_clock_at, marks_read = EXCLUDED.marks_read;

-- DirtyMarkSettlingClear forgets the marks a previous drain of the shard
-- left to settle (DirtyMarkSettlingPut records those still there).
-- name: DirtyMarkSettlingClear :exec
DELETE FROM dirty_mark_settling WHERE shard_name = @shard_name;

-- DirtyMarkSettlingPut records the marks this drain read on the shard and
-- left there to settle (a burst still arriving).
-- name: DirtyMarkSettlingPut :exec
INSERT INTO dirty_mark_settling (farm_id, day, shard_name, marked_at, updated_at)
SELECT unnest(@farm_ids::text[]), unnest(@days::date[]), @shard_name::text, unnest(@marked_at::timestamptz[]), unnest(@updated_at::timestamptz[]);
