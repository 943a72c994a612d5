-- Windows: the event-time windows of a farm-local day (the farm's window
-- rule, counted from local midnight; the last one cut at the day's end)
-- and the per-turbine counts of each (turbine_window). One rule, one
-- query (TurbineWindowUpsert) for the fast path and for the final path.

-- WindowLock serialises, on this shard, every writer of one farm-day's
-- turbine_window rows (fast path and rollup_day jobs) until its
-- transaction ends. Taken before the transaction's first read, so the
-- writer that takes it later reads a newer snapshot and writes last.
-- name: WindowLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('turbine_window/' || sqlc.arg(farm_id)::text || '/' || to_char(sqlc.arg(day)::date, 'YYYY-MM-DD'), 0));

-- DirtyWindowInsert records the turbine-windows an inserted batch may have
-- changed after their publication (the mark rule, docs/dirty-marks.md).
-- Callers pass them sorted by (day, turbine, window) so that concurrent
-- writers meet in the same order. A mark already there (an earlier batch's)
-- is updated, not skipped: the update locks it until this transaction
-- commits, so a claim cannot take it while this batch's readings are still
-- invisible to the claimer's reads (it skips the locked mark, which then
-- stays for the next recompute). Skipped, the mark would be the earlier
-- batch's only, and a claim between the two commits would lose this one.
-- name: DirtyWindowInsert :exec
INSERT INTO dirty_window (farm_id, day, turbine_id, window_start, window_end, marked_at)
SELECT sqlc.arg(farm_id)::text, u.day, u.turbine_id, u.window_start, u.window_end, sqlc.arg(marked_at)::timestamptz
FROM (SELECT unnest(sqlc.arg(days)::date[]) AS day, unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
             unnest(sqlc.arg(window_starts)::timestamptz[]) AS window_start, unnest(sqlc.arg(window_ends)::timestamptz[]) AS window_end) AS u
ON CONFLICT (farm_id, day, turbine_id, window_start) DO UPDATE SET marked_at = least(dirty_window.marked_at, EXCLUDED.marked_at);

-- DirtyWindowClaim takes (deletes) the farm-day's dirty turbine-windows
-- that start before @before (the windows already published), returning
-- their window index in the day. Run after WindowLock, in the transaction
-- that recomputes them: marks committed after this statement's snapshot
-- stay for the next recompute, and so do marks a writer still holds
-- locked (SKIP LOCKED: its readings are not committed yet, so the reads
-- that follow cannot count them; the claim never waits on a writer).
-- name: DirtyWindowClaim :many
DELETE FROM dirty_window d
USING (SELECT c.farm_id, c.day, c.turbine_id, c.window_start FROM dirty_window c
       WHERE c.farm_id = sqlc.arg(farm_id) AND c.day = sqlc.arg(day) AND c.window_start < sqlc.arg(before)::timestamptz
       FOR UPDATE SKIP LOCKED) AS claimed
WHERE d.farm_id = claimed.farm_id AND d.day = claimed.day AND d.turbine_id = claimed.turbine_id AND d.window_start = claimed.window_start
RETURNING d.turbine_id,
          floor(extract(epoch FROM d.window_start - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer AS window_index;

-- DirtyWindowClaimRange takes the farm-day's dirty turbine-windows starting
-- in [@from, @to): what the fast path absorbs when it computes those
-- windows (its snapshot holds the readings that marked them). Marks a
-- writer holds locked are left, as in DirtyWindowClaim.
-- name: DirtyWindowClaimRange :execrows
DELETE FROM dirty_window d
USING (SELECT c.farm_id, c.day, c.turbine_id, c.window_start FROM dirty_window c
       WHERE c.farm_id = sqlc.arg(farm_id) AND c.day = sqlc.arg(day)
         AND c.window_start >= sqlc.arg(from_t)::timestamptz AND c.window_start < sqlc.arg(to_t)::timestamptz
       FOR UPDATE SKIP LOCKED) AS claimed
WHERE d.farm_id = claimed.farm_id AND d.day = claimed.day AND d.turbine_id = claimed.turbine_id AND d.window_start = claimed.window_start;

-- DirtyWindowCount counts the farm-day's dirty turbine-windows (pending
-- corrections), by whether their window has been published.
-- name: DirtyWindowCount :one
SELECT count(*) FILTER (WHERE window_start < sqlc.arg(before)::timestamptz)::bigint AS published,
       count(*) FILTER (WHERE window_start >= sqlc.arg(before)::timestamptz)::bigint AS unpublished,
       coalesce(min(marked_at), 'infinity')::timestamptz AS oldest
FROM dirty_window
WHERE farm_id = sqlc.arg(farm_id) AND day = sqlc.arg(day);

-- TurbineWindowMissing lists, for the given turbines, the windows of the
-- day in [first_window, last_window] (on the farm's current window grid)
-- that have no turbine_window row.
-- name: TurbineWindowMissing :many
SELECT t.turbine_id::text AS turbine_id, w.i::integer AS window_index
FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
CROSS JOIN generate_series(greatest(sqlc.arg(first_window)::integer, 0),
                           least(sqlc.arg(last_window)::integer,
                                 ceil(extract(epoch FROM sqlc.arg(day_end)::timestamptz - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer - 1)) AS w(i)
WHERE NOT EXISTS (
    SELECT 1 FROM turbine_window tw
    WHERE tw.turbine_id = t.turbine_id
      AND tw.window_start = sqlc.arg(day_start)::timestamptz + w.i * sqlc.arg(window_s)::integer * interval '1 second'
      AND tw.window_end = least(sqlc.arg(day_start)::timestamptz + (w.i + 1) * sqlc.arg(window_s)::integer * interval '1 second', sqlc.arg(day_end)::timestamptz))
ORDER BY 1, 2;

-- TurbineWindowOffGridDelete removes the day's rows of the given turbines
-- that are not on the farm's current window grid (left by a window rule
-- that has since changed), so the day adds up from one grid.
-- name: TurbineWindowOffGridDelete :execrows
DELETE FROM turbine_window tw
WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.day = sqlc.arg(day) AND tw.turbine_id = ANY (sqlc.arg(turbine_ids)::text[])
  AND (mod(extract(epoch FROM tw.window_start - sqlc.arg(day_start)::timestamptz), sqlc.arg(window_s)::integer) <> 0
       OR tw.window_end <> least(tw.window_start + sqlc.arg(window_s)::integer * interval '1 second', sqlc.arg(day_end)::timestamptz));

-- TurbineWindowUpsert computes, from the readings, the counts of the given
-- runs of windows (turbine, first window index, last window index; runs
-- must not overlap) and upserts them into turbine_window. It returns how
-- many rows it wrote and how many readings it counted (its work).
--
-- The slot rule is turbine_day's (README, "The slot rule"): a turbine's
-- service time in the day, [origin, stop), is cut into E cadence slots; slot
-- k starts at origin + k * cadence and the last runs on to stop. A slot
-- belongs to the window in which it starts, so the windows of a day add up
-- exactly to the day: expected = slots starting in the window; received =
-- those with a reading; available = those none of whose readings says
-- unavailable; beyond_cadence = further readings in counted slots (and
-- readings in service when the service time holds no slot);
-- out_of_service = readings of the window (by recorded_at) outside the
-- service interval. A run reads its turbine's key range from its first
-- window's start to the end of the last slot that starts in its last
-- window (one LATERAL index range scan per run).
-- name: TurbineWindowUpsert :one
WITH run AS (
    SELECT u.turbine_id, u.cadence_seconds AS c, u.w0, u.w1,
           greatest(sqlc.arg(day_start)::timestamptz, u.service_from) AS origin,
           least(sqlc.arg(day_end)::timestamptz, u.service_to) AS stop
    FROM (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id, unnest(sqlc.arg(cadence_seconds)::integer[]) AS cadence_seconds,
                 unnest(sqlc.arg(service_from)::timestamptz[]) AS service_from, unnest(sqlc.arg(service_to)::timestamptz[]) AS service_to,
                 unnest(sqlc.arg(first_window)::integer[]) AS w0, unnest(sqlc.arg(last_window)::integer[]) AS w1) AS u
), t AS (
    SELECT run.turbine_id, run.c, run.w0, run.w1, run.origin, run.stop,
           CASE WHEN run.stop > run.origin THEN floor(extract(epoch FROM run.stop - run.origin) / run.c)::integer ELSE 0 END AS e,
           extract(epoch FROM run.origin - sqlc.arg(day_start)::timestamptz) AS off
    FROM run
), r AS (
    SELECT t.turbine_id, t.c, t.w0, t.w1, t.origin, t.stop, t.e, t.off,
           -- first slot that starts after the run's last window
           least(t.e, greatest(0, ceil(((t.w1 + 1) * sqlc.arg(window_s)::integer - t.off) / t.c)))::integer AS k_after,
           sqlc.arg(day_start)::timestamptz + t.w0 * sqlc.arg(window_s)::integer * interval '1 second' AS lo,
           least(sqlc.arg(day_start)::timestamptz + (t.w1 + 1) * sqlc.arg(window_s)::integer * interval '1 second', sqlc.arg(day_end)::timestamptz) AS we1,
           date_part('epoch', t.origin - sqlc.arg(day_start)::timestamptz) AS off_f
    FROM t
), span AS (
    SELECT r.turbine_id, r.c, r.w0, r.w1, r.origin, r.stop, r.e, r.off, r.off_f, r.lo,
           least(sqlc.arg(day_end)::timestamptz, greatest(r.we1,
               CASE WHEN r.k_after >= r.e THEN r.stop ELSE r.origin + r.k_after * r.c * interval '1 second' END)) AS hi
    FROM r
), win AS (
    SELECT s.turbine_id, w.i,
           sqlc.arg(day_start)::timestamptz + w.i * sqlc.arg(window_s)::integer * interval '1 second' AS window_start,
           least(sqlc.arg(day_start)::timestamptz + (w.i + 1) * sqlc.arg(window_s)::integer * interval '1 second', sqlc.arg(day_end)::timestamptz) AS window_end,
           greatest(0, least(s.e, ceil(((w.i + 1) * sqlc.arg(window_s)::integer - s.off) / s.c))
                       - greatest(0, ceil((w.i * sqlc.arg(window_s)::integer - s.off) / s.c)))::integer AS expected
    FROM span s CROSS JOIN LATERAL generate_series(s.w0, s.w1) AS w(i)
), agg AS (
    SELECT s.turbine_id, a.*
    FROM span s
    CROSS JOIN LATERAL (
        SELECT x.widx,
               count(DISTINCT x.slot) AS received,
               count(DISTINCT x.slot) FILTER (WHERE NOT x.available) AS unavailable_slots,
               count(*) FILTER (WHERE x.in_service) AS in_service,
               count(*) FILTER (WHERE NOT x.in_service) AS out_of_service,
               count(*) FILTER (WHERE x.lag > (sqlc.arg(lane_threshold_seconds)::float8 * interval '1 second')) AS late,
               count(*) FILTER (WHERE -x.lag > (sqlc.arg(early_tolerance_seconds)::float8 * interval '1 second')) AS early,
               (extract(epoch FROM min(x.lag)) * 1000)::bigint AS min_lag_ms,
               (extract(epoch FROM max(x.lag)) * 1000)::bigint AS max_lag_ms,
               max(x.received_at) AS last_received_at
        FROM (SELECT y.in_service, y.slot, y.available, y.lag, y.received_at,
                     CASE WHEN y.slot IS NOT NULL THEN floor((s.off_f + y.slot * s.c) / sqlc.arg(window_s)::integer)
                          ELSE floor(date_part('epoch', y.recorded_at - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)
                     END::integer AS widx
              FROM (SELECT rd.recorded_at >= s.origin AND rd.recorded_at < s.stop AS in_service,
                           CASE WHEN rd.recorded_at >= s.origin AND rd.recorded_at < s.stop AND s.e > 0
                                THEN least(floor(date_part('epoch', rd.recorded_at - s.origin) / s.c), s.e - 1)
                           END AS slot,
                           rd.recorded_at, rd.available,
                           rd.received_at - rd.recorded_at AS lag,
                           rd.received_at
                    FROM readings rd
                    WHERE rd.turbine_id = s.turbine_id
                      AND rd.recorded_at >= s.lo
                      AND rd.recorded_at < s.hi
                    OFFSET 0) AS y) AS x
        WHERE x.widx BETWEEN s.w0 AND s.w1
        GROUP BY x.widx
    ) AS a
), ins AS (
    INSERT INTO turbine_window (turbine_id, window_start, window_end, farm_id, day, expected, received, available,
                                beyond_cadence, out_of_service, late, early, min_lag_ms, max_lag_ms, last_received_at, computed_at)
    SELECT w.turbine_id, w.window_start, w.window_end, sqlc.arg(farm_id)::text, sqlc.arg(day)::date, w.expected,
           coalesce(a.received, 0), coalesce(a.received - a.unavailable_slots, 0),
           coalesce(a.in_service - a.received, 0), coalesce(a.out_of_service, 0),
           coalesce(a.late, 0), coalesce(a.early, 0), a.min_lag_ms, a.max_lag_ms, a.last_received_at,
           sqlc.arg(computed_at)::timestamptz
    FROM win w
    LEFT JOIN agg a ON a.turbine_id = w.turbine_id AND a.widx = w.i
    ON CONFLICT (turbine_id, window_start) DO UPDATE
    SET window_end = EXCLUDED.window_end, farm_id = EXCLUDED.farm_id, day = EXCLUDED.day,
        expected = EXCLUDED.expected, received = EXCLUDED.received, available = EXCLUDED.available,
        beyond_cadence = EXCLUDED.beyond_cadence, out_of_service = EXCLUDED.out_of_service,
        late = EXCLUDED.late, early = EXCLUDED.early,
        min_lag_ms = EXCLUDED.min_lag_ms, max_lag_ms = EXCLUDED.max_lag_ms,
        last_received_at = EXCLUDED.last_received_at, computed_at = EXCLUDED.computed_at
    RETURNING received + beyond_cadence + out_of_service AS readings
)
SELECT count(*)::bigint AS windows, coalesce(sum(readings), 0)::bigint AS rows_read FROM ins;

-- FarmWindowSums sums the farm's turbine_window rows on this shard for the
-- given windows: this shard's part of each farm window. shard_xid is this
-- transaction's id (after WindowLock: a later writer has a larger one).
-- name: FarmWindowSums :many
SELECT tw.window_start, max(tw.window_end)::timestamptz AS window_end, max(tw.day)::date AS day,
       sum(tw.expected)::bigint AS expected, sum(tw.received)::bigint AS received,
       sum(tw.available)::bigint AS available, sum(tw.late)::bigint AS late,
       sum(tw.received + tw.beyond_cadence + tw.out_of_service)::bigint AS readings,
       (pg_current_xact_id()::text)::bigint AS shard_xid
FROM turbine_window tw
WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.window_start = ANY (sqlc.arg(window_starts)::timestamptz[])
GROUP BY tw.window_start
ORDER BY tw.window_start;

-- TurbineDayFromWindows adds up the given turbines' windows of the day (on
-- the farm's current grid) into their turbine_day counts, with the local
-- hours (0 = the first hour of the day) in which a turbine expected
-- readings and received none.
-- name: TurbineDayFromWindows :many
SELECT tw.turbine_id,
       count(*)::integer AS windows,
       sum(tw.expected)::integer AS expected, sum(tw.received)::integer AS received,
       sum(tw.available)::integer AS available, sum(tw.beyond_cadence)::integer AS beyond_cadence,
       sum(tw.out_of_service)::integer AS out_of_service, sum(tw.late)::integer AS late, sum(tw.early)::integer AS early,
       coalesce(min(tw.min_lag_ms), 0)::bigint AS min_lag_ms, coalesce(max(tw.max_lag_ms), 0)::bigint AS max_lag_ms,
       coalesce(max(tw.last_received_at), 'epoch')::timestamptz AS last_received_at,
       coalesce((SELECT array_agg(h.hour ORDER BY h.hour)
                 FROM (SELECT floor(extract(epoch FROM tw2.window_start - sqlc.arg(day_start)::timestamptz) / 3600)::integer AS hour
                       FROM turbine_window tw2
                       WHERE tw2.turbine_id = tw.turbine_id AND tw2.farm_id = sqlc.arg(farm_id) AND tw2.day = sqlc.arg(day)
                       GROUP BY 1
                       HAVING sum(tw2.expected) > 0 AND sum(tw2.received) = 0) AS h), '{}')::integer[] AS silent_hours
FROM turbine_window tw
WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.day = sqlc.arg(day) AND tw.turbine_id = ANY (sqlc.arg(turbine_ids)::text[])
GROUP BY tw.turbine_id
ORDER BY tw.turbine_id;
