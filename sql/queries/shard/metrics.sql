-- MetricsDirtyBacklog is the shard's dirty backlog per farm: farm-days
-- marked (dirty_mark, waiting for the drain), turbine-windows marked
-- (dirty_window, waiting for a correction or the fast path), and the age of
-- the oldest mark of either kind on the caller's clock (both are stamped
-- with the writer's clock).
-- name: MetricsDirtyBacklog :many
SELECT b.farm_id, sum(b.marks)::bigint AS marks, sum(b.windows)::bigint AS windows,
       extract(epoch FROM sqlc.arg(now)::timestamptz - min(b.oldest))::float8 AS oldest_s
FROM (
    SELECT dm.farm_id, count(*) AS marks, 0::bigint AS windows, min(dm.created_at) AS oldest
    FROM dirty_mark dm GROUP BY dm.farm_id
    UNION ALL
    SELECT dw.farm_id, 0::bigint, count(*), min(dw.marked_at)
    FROM dirty_window dw GROUP BY dw.farm_id
) b
GROUP BY b.farm_id
ORDER BY b.farm_id;
