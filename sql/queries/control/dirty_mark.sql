-- What the drain records of each shard's marks (internal/jobs Drainer), in the control transaction
-- that records their requests (rollup_pending): dirty_mark_settling and dirty_mark_announced. The
-- monthly report reads them (farm_day_status): a farm-day is final only if every mark of it has
-- reached the control database.

-- DirtyMarkSettlingClear forgets the marks a previous drain of the shard
-- left to settle (DirtyMarkSettlingPut records those still there).
-- name: DirtyMarkSettlingClear :exec
DELETE FROM dirty_mark_settling WHERE shard_name = @shard_name;

-- DirtyMarkSettlingPut records the marks this drain read on the shard and
-- left there to settle (a burst still arriving).
-- name: DirtyMarkSettlingPut :exec
INSERT INTO dirty_mark_settling (farm_id, day, shard_name, marked_at, updated_at)
SELECT unnest(@farm_ids::text[]), unnest(@days::date[]), @shard_name::text, unnest(@marked_at::timestamptz[]), unnest(@updated_at::timestamptz[]);

-- DirtyMarkAnnounce records, before the writer's shard transaction commits,
-- that it wrote marks of these farm-days on the shard (one statement per
-- batch and shard): until the shard's drain passes it, the days are not
-- final. Rows in key order, so concurrent writers lock them alike.
-- name: DirtyMarkAnnounce :exec
INSERT INTO dirty_mark_announced (farm_id, day, shard_name, xact, marked_at)
SELECT DISTINCT u.farm_id, u.day, @shard_name::text, @xact::bigint, @marked_at::timestamptz
FROM (SELECT unnest(@farm_ids::text[]) AS farm_id, unnest(@days::date[]) AS day) AS u
ORDER BY 1, 2
ON CONFLICT DO NOTHING;

-- DirtyMarkAnnouncedXacts lists the shard transactions that announced marks
-- on the shard and no drain has passed yet. The drain reads them before it
-- opens its read of the shard's marks.
-- name: DirtyMarkAnnouncedXacts :many
SELECT DISTINCT xact FROM dirty_mark_announced WHERE shard_name = @shard_name ORDER BY xact;

-- DirtyMarkAnnouncedPass deletes the announced marks of the transactions
-- the drain's read of the shard's marks saw finished (DirtyMarkXactsPassed),
-- in the control transaction that records what it read.
-- name: DirtyMarkAnnouncedPass :execrows
DELETE FROM dirty_mark_announced WHERE shard_name = @shard_name AND xact = ANY(@xacts::bigint[]);
