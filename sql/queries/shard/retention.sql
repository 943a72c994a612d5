-- Retention of what is derived from the readings (issue 27, item 3): a
-- farm-local day that starts before readings_retention.dropped_before has
-- lost readings, its rollup is refused (ReadingsDayLost), and its rows
-- here go too. The caller gives each farm's cut: the start (@keep_from) and
-- date (@keep_day) of its first day that starts at or after dropped_before.
-- Big tables go in batches of @max_rows (each its own transaction), by the
-- farm's key ranges; a day cut is never read again, so a pass cut short
-- leaves nothing a reader sees half-done and the next pass goes on.

-- TurbineWindowTrim deletes up to @max_rows of the farm's turbine_window
-- rows before @keep_from, oldest first, returning how many. The order is
-- turbine_window_farm_idx's, so the farm's range is read by that index
-- even when old rows are most of the table (retention just switched on),
-- where a LIMIT alone could be planned as a scan of the whole table.
-- name: TurbineWindowTrim :execrows
DELETE FROM turbine_window
WHERE ctid = ANY (ARRAY(SELECT tw.ctid FROM turbine_window tw
                        WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.window_start < sqlc.arg(keep_from)::timestamptz
                        ORDER BY tw.farm_id, tw.window_start
                        LIMIT sqlc.arg(max_rows)::integer));

-- FarmWindowSumTrim deletes up to @max_rows of the farm's farm_window_sum
-- rows before @keep_from, oldest first in its key's order, returning how many.
-- name: FarmWindowSumTrim :execrows
DELETE FROM farm_window_sum
WHERE ctid = ANY (ARRAY(SELECT fs.ctid FROM farm_window_sum fs
                        WHERE fs.farm_id = sqlc.arg(farm_id) AND fs.window_start < sqlc.arg(keep_from)::timestamptz
                        ORDER BY fs.farm_id, fs.window_start
                        LIMIT sqlc.arg(max_rows)::integer));

-- DirtyTrim deletes the farm's dirty marks and dirty windows of days before
-- @keep_day: a recompute of those days is refused, so they would only make
-- the drain enqueue jobs that are cancelled. Returns how many of each.
-- name: DirtyTrim :one
WITH w AS (
    DELETE FROM dirty_window d WHERE d.farm_id = sqlc.arg(farm_id) AND d.day < sqlc.arg(keep_day)::date RETURNING 1
), m AS (
    DELETE FROM dirty_mark d WHERE d.farm_id = sqlc.arg(farm_id) AND d.day < sqlc.arg(keep_day)::date RETURNING 1
)
SELECT (SELECT count(*) FROM w)::bigint AS dirty_windows, (SELECT count(*) FROM m)::bigint AS dirty_marks;
