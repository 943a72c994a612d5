-- A turbine's readings moving between shards (internal/move): what the
-- old shard holds, copied to the new one through its staging table,
-- checked there, then deleted from the old.

-- TurbineMoveReadingDays are the UTC days (readings partitions) holding
-- the turbine's readings here.
-- name: TurbineMoveReadingDays :many
SELECT DISTINCT (date_trunc('day', recorded_at AT TIME ZONE 'UTC'))::date AS day
FROM readings WHERE turbine_id = @turbine_id
ORDER BY 1;

-- TurbineMoveReadings is the turbine's readings of one UTC day, every
-- column, in the staging table's column order.
-- name: TurbineMoveReadings :many
SELECT turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state
FROM readings
WHERE turbine_id = @turbine_id
  AND recorded_at >= (sqlc.arg(day)::date)::timestamp AT TIME ZONE 'UTC'
  AND recorded_at < (sqlc.arg(day)::date + 1)::timestamp AT TIME ZONE 'UTC'
ORDER BY recorded_at;

-- TurbineMoveMissing counts the staged rows (what the old shard holds)
-- that are not here, equal in every column (state may be NULL on both):
-- 0 once a copy is complete.
-- name: TurbineMoveMissing :one
SELECT count(*)::bigint AS missing, (SELECT count(*) FROM readings_staging)::bigint AS staged
FROM readings_staging s
WHERE NOT EXISTS (SELECT 1 FROM readings r
                  WHERE r.turbine_id = s.turbine_id AND r.recorded_at = s.recorded_at
                    AND r.received_at = s.received_at AND r.available = s.available
                    AND r.power_kw = s.power_kw AND r.wind_ms = s.wind_ms
                    AND r.state IS NOT DISTINCT FROM s.state);

-- TurbineFenceSet fences the turbine off this shard (it moved to
-- @moved_to) and returns the snapshot just after, whose in-progress
-- transactions may still be writing its readings here.
-- name: TurbineFenceSet :exec
INSERT INTO turbine_fence (turbine_id, moved_to, since) VALUES (@turbine_id, @moved_to, @since)
ON CONFLICT (turbine_id) DO UPDATE SET moved_to = EXCLUDED.moved_to, since = EXCLUDED.since;

-- TurbineFenceClear lets the turbine's readings here again (it moves back).
-- name: TurbineFenceClear :exec
DELETE FROM turbine_fence WHERE turbine_id = @turbine_id;

-- TurbineFenceList is every turbine fenced off this shard (ingest's check,
-- in its write transaction).
-- name: TurbineFenceList :many
SELECT turbine_id, moved_to FROM turbine_fence;

-- name: XactSnapshot :one
SELECT pg_current_snapshot()::text AS snapshot;

-- XactsStillRunning counts the transactions in progress at @snapshot that
-- still are.
-- name: XactsStillRunning :one
SELECT count(*)::bigint AS running
FROM pg_snapshot_xip(sqlc.arg(snapshot)::text::pg_snapshot) AS x(xid)
WHERE pg_xact_status(x.xid) = 'in progress';

-- TurbineMoveWindowDays are the farm-days holding the turbine's
-- turbine_window rows here.
-- name: TurbineMoveWindowDays :many
SELECT DISTINCT farm_id, day FROM turbine_window WHERE turbine_id = @turbine_id ORDER BY farm_id, day;

-- TurbineMoveWindowsDelete deletes the turbine's turbine_window rows of a
-- farm-day (taken under WindowLock) and subtracts them from their
-- farm_window_sum rows, in one statement as every write of turbine_window.
-- name: TurbineMoveWindowsDelete :one
WITH del AS (
    DELETE FROM turbine_window tw
    WHERE tw.turbine_id = @turbine_id AND tw.farm_id = @farm_id AND tw.day = @day
    RETURNING tw.farm_id, tw.window_start, tw.expected, tw.received, tw.available, tw.late,
              (tw.received + tw.beyond_cadence + tw.out_of_service) AS readings,
              extract(epoch FROM tw.window_end - tw.window_start)::bigint AS span_s
), sums AS (
    UPDATE farm_window_sum fs
    SET turbines = fs.turbines - d.turbines, expected = fs.expected - d.expected, received = fs.received - d.received,
        available = fs.available - d.available, late = fs.late - d.late, readings = fs.readings - d.readings,
        span_s = fs.span_s - d.span_s
    FROM (SELECT del.farm_id, del.window_start, count(*)::integer AS turbines, sum(del.expected)::bigint AS expected,
                 sum(del.received)::bigint AS received, sum(del.available)::bigint AS available,
                 sum(del.late)::bigint AS late, sum(del.readings)::bigint AS readings, sum(del.span_s)::bigint AS span_s
          FROM del GROUP BY del.farm_id, del.window_start) AS d
    WHERE fs.farm_id = d.farm_id AND fs.window_start = d.window_start
    RETURNING 1
)
SELECT count(*)::bigint AS removed FROM del;

-- TurbineMoveDirtyWindowsDelete drops the turbine's marked windows here:
-- its readings are counted on the shard it moved to (recomputed whole).
-- name: TurbineMoveDirtyWindowsDelete :execrows
DELETE FROM dirty_window WHERE turbine_id = @turbine_id;

-- TurbineMoveReadingsDelete deletes the turbine's readings of one UTC day.
-- name: TurbineMoveReadingsDelete :execrows
DELETE FROM readings
WHERE turbine_id = @turbine_id
  AND recorded_at >= (sqlc.arg(day)::date)::timestamp AT TIME ZONE 'UTC'
  AND recorded_at < (sqlc.arg(day)::date + 1)::timestamp AT TIME ZONE 'UTC';
