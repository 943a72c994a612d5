-- StatusDirtyBacklog is this shard's dirty backlog per farm-day (one farm
-- with @farm_id, every farm when it is NULL): the farm-day's mark, waiting
-- for the drain (readings under it, when it was first written), and the
-- turbine-windows marked for correction (how many, summed over the marked
-- runs: a window two batches marked counts twice; the oldest).
-- name: StatusDirtyBacklog :many
WITH w AS (
    SELECT farm_id, day, sum(windows) AS windows, min(marked_at)::timestamptz AS oldest_marked_at
    FROM dirty_window
    WHERE sqlc.narg(farm_id)::text IS NULL OR farm_id = sqlc.narg(farm_id)::text
    GROUP BY farm_id, day
), m AS (
    SELECT farm_id, day, readings, created_at
    FROM dirty_mark
    WHERE sqlc.narg(farm_id)::text IS NULL OR farm_id = sqlc.narg(farm_id)::text
)
SELECT coalesce(m.farm_id, w.farm_id)::text AS farm_id,
       coalesce(m.day, w.day)::date AS day,
       (m.farm_id IS NOT NULL)::boolean AS marked,
       coalesce(m.readings, 0)::bigint AS mark_readings,
       m.created_at AS mark_created_at,
       coalesce(w.windows, 0)::bigint AS dirty_windows,
       w.oldest_marked_at AS oldest_window_marked_at
FROM m FULL JOIN w ON w.farm_id = m.farm_id AND w.day = m.day
ORDER BY 1, 2;
