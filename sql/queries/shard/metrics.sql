-- MetricsDirtyBacklog is the shard's dirty backlog per farm: farm-days
-- marked (dirty_mark, waiting for the drain), turbine-windows marked
-- (dirty_window, waiting for a correction or the fast path) and the age of
-- the oldest mark of either kind on the caller's clock (both are stamped
-- with the writer's clock).
--
-- /metrics runs it on every scrape, so its cost is bounded whatever the
-- backlog: the farms come from a skip scan of dirty_window's claim index
-- (one probe per farm) and dirty_mark (one row per farm-day, so bounded by the days a
-- reading may be late for); the turbine-windows are summed over at most
-- @max_count marked runs per farm (past that many runs the sum is a lower bound); the
-- oldest window is the first of dirty_window (farm_id, marked_at).
-- name: MetricsDirtyBacklog :many
WITH RECURSIVE window_farms AS (
    (SELECT dw.farm_id FROM dirty_window dw ORDER BY dw.farm_id LIMIT 1)
    UNION ALL
    SELECT (SELECT dw.farm_id FROM dirty_window dw WHERE dw.farm_id > wf.farm_id ORDER BY dw.farm_id LIMIT 1)
    FROM window_farms wf
    WHERE wf.farm_id IS NOT NULL
),
farms AS (
    SELECT wf.farm_id FROM window_farms wf WHERE wf.farm_id IS NOT NULL
    UNION
    SELECT dm.farm_id FROM dirty_mark dm
)
SELECT f.farm_id::text AS farm_id, m.marks::bigint AS marks, w.windows::bigint AS windows,
       extract(epoch FROM sqlc.arg(now)::timestamptz - least(m.oldest, o.oldest))::float8 AS oldest_s
FROM farms f
CROSS JOIN LATERAL (SELECT count(*) AS marks, min(dm.created_at) AS oldest FROM dirty_mark dm WHERE dm.farm_id = f.farm_id) AS m
CROSS JOIN LATERAL (
    SELECT coalesce(sum(c.windows), 0) AS windows
    FROM (SELECT dw.windows FROM dirty_window dw WHERE dw.farm_id = f.farm_id LIMIT sqlc.arg(max_count)::bigint) AS c
) AS w
CROSS JOIN LATERAL (
    SELECT min(x.marked_at) AS oldest
    FROM (SELECT dw.marked_at FROM dirty_window dw WHERE dw.farm_id = f.farm_id ORDER BY dw.marked_at LIMIT 1) AS x
) AS o
ORDER BY f.farm_id;
