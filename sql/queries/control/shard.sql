-- shard: the registry of shard servers, and shard_drain: how far the drain has read each shard's
-- marks.

-- name: ShardUpsert :exec
INSERT INTO shard (name, dsn, database)
VALUES (@name, sqlc.narg(dsn), @database)
ON CONFLICT (name) DO UPDATE
SET dsn = EXCLUDED.dsn, database = EXCLUDED.database, updated_at = now()
WHERE shard.dsn IS DISTINCT FROM EXCLUDED.dsn OR shard.database IS DISTINCT FROM EXCLUDED.database;

-- name: ShardList :many
SELECT name, dsn, database FROM shard ORDER BY name;

-- ShardDrainRecord says the drain has read every mark the shard had
-- committed before @drained_through (the drainer's clock taken before the
-- read opened) and recorded each as a request or as settling.
-- name: ShardDrainRecord :exec
INSERT INTO shard_drain (shard_name, drained_through, shard_clock_at, marks_read)
VALUES (@shard_name, @drained_through, @shard_clock_at, @marks_read)
ON CONFLICT (shard_name) DO UPDATE
SET drained_through = EXCLUDED.drained_through, shard_clock_at = EXCLUDED.shard_clock_at, marks_read = EXCLUDED.marks_read;
