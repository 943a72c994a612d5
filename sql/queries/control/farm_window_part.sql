-- farm_window_part: each shard's part of a farm window, summed into farm_window.

-- FarmWindowPartUpsert records shards' parts of farm windows. A part from
-- an older shard snapshot (smaller shard_xid) never replaces a newer one.
-- name: FarmWindowPartUpsert :exec
INSERT INTO farm_window_part (farm_id, window_start, shard_name, window_end, day, expected, received, available, late, readings, shard_xid, computed_at)
SELECT sqlc.arg(farm_id)::text, u.window_start, sqlc.arg(shard_name)::text, u.window_end, u.day, u.expected, u.received, u.available, u.late, u.readings,
       sqlc.arg(shard_xid)::bigint, sqlc.arg(computed_at)::timestamptz
FROM (SELECT unnest(sqlc.arg(window_starts)::timestamptz[]) AS window_start, unnest(sqlc.arg(window_ends)::timestamptz[]) AS window_end,
             unnest(sqlc.arg(days)::date[]) AS day, unnest(sqlc.arg(expected)::bigint[]) AS expected, unnest(sqlc.arg(received)::bigint[]) AS received,
             unnest(sqlc.arg(available)::bigint[]) AS available, unnest(sqlc.arg(late)::bigint[]) AS late,
             unnest(sqlc.arg(readings)::bigint[]) AS readings) AS u
ON CONFLICT (farm_id, window_start, shard_name) DO UPDATE
SET window_end = EXCLUDED.window_end, day = EXCLUDED.day, expected = EXCLUDED.expected,
    received = EXCLUDED.received, available = EXCLUDED.available, late = EXCLUDED.late, readings = EXCLUDED.readings,
    shard_xid = EXCLUDED.shard_xid, computed_at = EXCLUDED.computed_at
WHERE farm_window_part.shard_xid < EXCLUDED.shard_xid;

-- FarmWindowPartOffGridDelete deletes, for one farm-day, what the control
-- database holds on another grid than the day's (a window rule changed
-- under a computed day): the shard's parts, the final rows, and the
-- reconciliation of windows whose fast and final rows are no longer the
-- same window (with the day's, measured again after it). Those final rows
-- summed the old grid's parts; beside the new grid's they would count the
-- day twice, and the old parts would make the day check report a
-- window_sum alarm. Fast rows are what was published and stay. The day's
-- grid is its windows as FarmWindowsDue cuts them; each table is read by
-- its key range around the day, a day either side (as the shard's delete:
-- the farm's zone may have changed). Run under FarmWindowFinalLock.
-- TestOffGridDeleteReadsItsDay.
-- name: FarmWindowPartOffGridDelete :one
WITH grid AS (
    SELECT sqlc.arg(day_start)::timestamptz + i * sqlc.arg(window_s)::integer * interval '1 second' AS window_start,
           least(sqlc.arg(day_start)::timestamptz + (i + 1) * sqlc.arg(window_s)::integer * interval '1 second',
                 sqlc.arg(day_end)::timestamptz) AS window_end
    FROM generate_series(0, ceil(extract(epoch FROM sqlc.arg(day_end)::timestamptz - sqlc.arg(day_start)::timestamptz)
                                 / sqlc.arg(window_s)::integer)::integer - 1) AS i
), span AS (
    SELECT sqlc.arg(day_start)::timestamptz - interval '1 day' AS lo, sqlc.arg(day_end)::timestamptz + interval '1 day' AS hi
), parts AS (
    DELETE FROM farm_window_part p
    WHERE p.farm_id = sqlc.arg(farm_id) AND p.window_start >= (SELECT lo FROM span) AND p.window_start < (SELECT hi FROM span)
      AND p.shard_name = sqlc.arg(shard_name) AND p.day = sqlc.arg(day)
      AND (p.window_start, p.window_end) NOT IN (SELECT g.window_start, g.window_end FROM grid g)
    RETURNING 1
), finals AS (
    DELETE FROM farm_window w
    WHERE w.farm_id = sqlc.arg(farm_id) AND w.window_start >= (SELECT lo FROM span) AND w.window_start < (SELECT hi FROM span)
      AND w.path = 'final' AND w.day = sqlc.arg(day)
      AND (w.window_start, w.window_end) NOT IN (SELECT g.window_start, g.window_end FROM grid g)
    RETURNING w.window_start
), measured AS (
    -- a window's measurement stays only while its fast and final rows are
    -- of the same window (a final row rewritten on the new grid may start
    -- where an old fast row does): the pairing rule of ReconciliationWrite,
    -- asked per measurement through the key (a NOT EXISTS was planned as
    -- an anti join over the farm's every window); the statement's own
    -- deletes are not seen here, so the deleted finals are named
    DELETE FROM reconciliation r
    WHERE r.farm_id = sqlc.arg(farm_id) AND r.scope = 'window' AND r.day = sqlc.arg(day)
      AND r.period_start >= (SELECT lo FROM span) AND r.period_start < (SELECT hi FROM span)
      AND (r.period_start IN (SELECT f.window_start FROM finals f)
           OR NOT coalesce((SELECT count(*) FILTER (WHERE fw.path = 'fast') = 1 AND count(*) FILTER (WHERE fw.path = 'final') = 1
                                   AND min(fw.window_end) = max(fw.window_end)
                            FROM farm_window fw
                            WHERE fw.farm_id = r.farm_id AND fw.window_start = r.period_start), false))
    RETURNING 1
), measured_day AS (
    -- the day's measurement summed those windows: measured again by the
    -- recompute (ReconciliationWrite) if any pair is left
    DELETE FROM reconciliation r
    WHERE r.farm_id = sqlc.arg(farm_id) AND r.scope = 'day' AND r.day = sqlc.arg(day)
      AND r.period_start >= (SELECT lo FROM span) AND r.period_start < (SELECT hi FROM span)
      AND EXISTS (SELECT 1 FROM measured)
    RETURNING 1
)
SELECT (SELECT count(*) FROM parts)::bigint AS parts, (SELECT count(*) FROM finals)::bigint AS finals,
       ((SELECT count(*) FROM measured) + (SELECT count(*) FROM measured_day))::bigint AS reconciliations;

-- FarmWindowPartSumCheck is the bug alarm's independent sum: for one farm-day on
-- one shard, the shard's final window parts against its turbine_day rows
-- (two groupings of the same turbine_window rows, written by different
-- statements). Returns the two received/expected sums; any difference is
-- a bug.
-- name: FarmWindowPartSumCheck :one
SELECT coalesce((SELECT sum(p.expected) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day = sqlc.arg(day) AND p.shard_name = sqlc.arg(shard_name)), 0)::bigint AS windows_expected,
       coalesce((SELECT sum(p.received) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day = sqlc.arg(day) AND p.shard_name = sqlc.arg(shard_name)), 0)::bigint AS windows_received,
       coalesce((SELECT sum(p.available) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day = sqlc.arg(day) AND p.shard_name = sqlc.arg(shard_name)), 0)::bigint AS windows_available,
       coalesce((SELECT sum(td.expected) FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id) AND td.day = sqlc.arg(day) AND td.shard_name = sqlc.arg(shard_name)), 0)::bigint AS days_expected,
       coalesce((SELECT sum(td.received) FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id) AND td.day = sqlc.arg(day) AND td.shard_name = sqlc.arg(shard_name)), 0)::bigint AS days_received,
       coalesce((SELECT sum(td.available) FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id) AND td.day = sqlc.arg(day) AND td.shard_name = sqlc.arg(shard_name)), 0)::bigint AS days_available;
