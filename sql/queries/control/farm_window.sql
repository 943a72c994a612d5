-- farm_window: each farm's windows as published, fast (at once) and final (after the allowed
-- lateness), and their retention (with farm_window_part, reconciliation and alert).

-- FarmWindowsDue lists a farm's windows that the fast path should publish
-- at @now: every window after the last one published and not before
-- @start_from, in order, whose end + allowed lateness has passed, at
-- most @max_windows. Windows are cut here, from the day bounds of the
-- control database, the one source of farm-local days.
-- name: FarmWindowsDue :many
WITH f AS (
    SELECT f.id, f.timezone, r.window_s, r.allowed_lateness_s
    FROM farm f JOIN farm_rules r ON r.farm_id = f.id
    WHERE f.id = sqlc.arg(farm_id)
), cur AS (
    -- after the last published window; a fast path away for longer than
    -- its catch-up starts again at @start_from (the final path covers the
    -- gap). The last window is read through the key, the latest first (as
    -- FarmWindowFastThrough): a max(window_end) read every fast row the
    -- farm has ever had, for every farm in every round
    -- (TestFastPathReadsItsLastWindow).
    SELECT greatest((SELECT fw.window_end FROM farm_window fw WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.path = 'fast'
                     ORDER BY fw.window_start DESC LIMIT 1),
                    sqlc.arg(start_from)::timestamptz) AS from_t
), days AS (
    SELECT d::date AS day,
           local_day_start(f.timezone, d::date) AS day_start,
           local_day_start(f.timezone, d::date + 1) AS day_end
    FROM f, cur,
         generate_series(((cur.from_t AT TIME ZONE f.timezone)::date - 1)::timestamp,
                         (((sqlc.arg(now)::timestamptz - f.allowed_lateness_s * interval '1 second') AT TIME ZONE f.timezone)::date)::timestamp,
                         interval '1 day') AS d
), w AS (
    SELECT days.day, days.day_start, days.day_end, f.window_s, f.allowed_lateness_s,
           days.day_start + i * f.window_s * interval '1 second' AS window_start,
           least(days.day_start + (i + 1) * f.window_s * interval '1 second', days.day_end) AS window_end
    FROM days, f,
         generate_series(0, ceil(extract(epoch FROM days.day_end - days.day_start) / f.window_s)::integer - 1) AS i
)
SELECT w.day::date AS day, w.day_start::timestamptz AS day_start, w.day_end::timestamptz AS day_end,
       w.window_start::timestamptz AS window_start, w.window_end::timestamptz AS window_end,
       w.window_s::integer AS window_s, w.allowed_lateness_s::integer AS allowed_lateness_s
FROM w, cur
WHERE w.window_start >= cur.from_t
  -- a window the final path already wrote (the fast path was away) gets no
  -- fast row; the final rows looked at start no earlier than the first
  -- candidate (a scalar bound: planned as an anti join, the check read every
  -- final row the farm has)
  AND NOT EXISTS (SELECT 1 FROM farm_window fw
                  WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.window_start = w.window_start AND fw.path = 'final'
                    AND fw.window_start >= (SELECT c.from_t FROM cur c))
  AND w.window_end + w.allowed_lateness_s * interval '1 second' <= sqlc.arg(now)::timestamptz
ORDER BY w.window_start
LIMIT sqlc.arg(max_windows)::integer;

-- FarmWindowsGap lists the windows of the farm's today (the farm-local day
-- of its watermark, @now less the allowed lateness) that the fast path
-- skipped: after the farm's first fast window and before its latest, with
-- neither a fast nor a final row (the fast path was away for longer than
-- its catch-up and restarted an hour back), in order, at most
-- @max_windows, cut as FarmWindowsDue cuts them. The fast path fills them
-- in behind its live windows, so today's sum counts every window of today
-- up to the watermark. A farm whose first fast window is today is filled
-- from that window on. A day with a row of another grid (the window rule
-- changed today) gets nothing: a window of the new grid could lie inside
-- one of the old, and the day's close re-cuts it. The farm's rows are read
-- by key over today only (TestFillReadsOnlyToday).
-- name: FarmWindowsGap :many
WITH f AS (
    SELECT f.id, f.timezone, r.window_s, r.allowed_lateness_s,
           ((sqlc.arg(now)::timestamptz - r.allowed_lateness_s * interval '1 second') AT TIME ZONE f.timezone)::date AS day
    FROM farm f JOIN farm_rules r ON r.farm_id = f.id
    WHERE f.id = sqlc.arg(farm_id)
), d AS (
    SELECT f.*, local_day_start(f.timezone, f.day) AS day_start, local_day_start(f.timezone, f.day + 1) AS day_end
    FROM f
), span AS (
    -- the fast path's record, as scalars read through the key: its first
    -- window and its latest (NULL, and nothing to fill, before its first)
    SELECT (SELECT fw.window_start FROM farm_window fw WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.path = 'fast'
            ORDER BY fw.window_start LIMIT 1) AS first_start,
           (SELECT fw.window_start FROM farm_window fw WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.path = 'fast'
            ORDER BY fw.window_start DESC LIMIT 1) AS last_start
), today AS (
    -- today's rows of either path, one range of the key (scalar bounds)
    SELECT fw.window_start, fw.window_end
    FROM farm_window fw
    WHERE fw.farm_id = sqlc.arg(farm_id)
      AND fw.window_start >= (SELECT d.day_start FROM d) AND fw.window_start < (SELECT d.day_end FROM d)
), w AS (
    SELECT d.day, d.day_start, d.day_end, d.window_s, d.allowed_lateness_s,
           d.day_start + i * d.window_s * interval '1 second' AS window_start,
           least(d.day_start + (i + 1) * d.window_s * interval '1 second', d.day_end) AS window_end
    FROM d, generate_series(0, ceil(extract(epoch FROM d.day_end - d.day_start) / d.window_s)::integer - 1) AS i
    WHERE NOT EXISTS (SELECT 1 FROM today t
                      WHERE t.window_end <> least(t.window_start + d.window_s * interval '1 second', d.day_end)
                         OR extract(epoch FROM t.window_start - d.day_start)::bigint % d.window_s <> 0)
)
SELECT w.day::date AS day, w.day_start::timestamptz AS day_start, w.day_end::timestamptz AS day_end,
       w.window_start::timestamptz AS window_start, w.window_end::timestamptz AS window_end,
       w.window_s::integer AS window_s, w.allowed_lateness_s::integer AS allowed_lateness_s
FROM w, span
WHERE w.window_start > span.first_start AND w.window_start < span.last_start
  AND w.window_end + w.allowed_lateness_s * interval '1 second' <= sqlc.arg(now)::timestamptz
  AND NOT EXISTS (SELECT 1 FROM today t WHERE t.window_start = w.window_start)
ORDER BY w.window_start
LIMIT sqlc.arg(max_windows)::integer;

-- FarmWindowFastPublish publishes a window's fast row: the sum of its
-- parts, as they are now, once. A second publication of the same window
-- (another process, a restart) changes nothing and returns no row; nor
-- does a window with a final row (a correction of a skipped window the
-- fill-in was computing: FarmWindowsGap).
-- name: FarmWindowFastPublish :many
INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late,
                         readings, computed_at, complete_through, revision, job_id)
SELECT p.farm_id, p.window_start, 'fast', max(p.window_end), max(p.day),
       sum(p.expected), sum(p.received), sum(p.available), sum(p.late),
       sum(p.readings), sqlc.arg(published_at)::timestamptz,
       sqlc.arg(published_at)::timestamptz - sqlc.arg(allowed_lateness_s)::integer * interval '1 second', 0, sqlc.narg(job_id)::bigint
FROM farm_window_part p
WHERE p.farm_id = sqlc.arg(farm_id) AND p.window_start = sqlc.arg(window_start)
  AND NOT EXISTS (SELECT 1 FROM farm_window fw
                  WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.window_start = sqlc.arg(window_start) AND fw.path = 'final')
GROUP BY p.farm_id, p.window_start
ON CONFLICT (farm_id, window_start, path) DO NOTHING
RETURNING window_start, expected, received, available;

-- FarmWindowFinalLock serialises the writers of one farm-day's final
-- windows (one rollup_day job per shard may finish at the same time).
-- name: FarmWindowFinalLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('farm_window_final/' || sqlc.arg(farm_id)::text || '/' || to_char(sqlc.arg(day)::date, 'YYYY-MM-DD'), 0));

-- FarmWindowFinalWrite (re)writes the final rows of the given windows from
-- their parts, for windows every shard of the farm has a part of, and
-- returns what it wrote. Run under FarmWindowFinalLock.
-- name: FarmWindowFinalWrite :many
WITH sums AS (
    SELECT p.window_start, max(p.window_end) AS window_end, max(p.day) AS day,
           sum(p.expected) AS expected, sum(p.received) AS received, sum(p.available) AS available, sum(p.late) AS late,
           sum(p.readings) AS readings, count(*) AS parts
    FROM farm_window_part p
    -- The key range the windows span, then the windows themselves: no join,
    -- so the plan is one range scan of the farm's parts whatever the
    -- statistics say, never a scan of every part the farm has ever had (49
    -- ms with 30 days of parts, growing daily). A join or a probe per
    -- window was planned as a scan per window on an unanalysed table.
    -- TestControlWritesReadTheirWindows.
    WHERE p.farm_id = sqlc.arg(farm_id)
      AND p.window_start >= (SELECT min(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x)
      AND p.window_start <= (SELECT max(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x)
      AND p.window_start = ANY (sqlc.arg(window_starts)::timestamptz[])
    GROUP BY p.window_start
)
INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late,
                         readings, computed_at, complete_through, revision, job_id)
SELECT sqlc.arg(farm_id)::text, s.window_start, 'final', s.window_end, s.day, s.expected, s.received, s.available, s.late,
       s.readings, sqlc.arg(computed_at)::timestamptz,
       sqlc.arg(computed_at)::timestamptz - (SELECT allowed_lateness_s FROM farm_rules WHERE farm_id = sqlc.arg(farm_id)) * interval '1 second',
       1, sqlc.narg(job_id)::bigint
FROM sums s
-- a scalar subquery, run once: as a joined aggregate it was planned as the
-- inner side of a loop over the windows, counting the farm's turbines
-- 1,440 times
WHERE s.parts >= (SELECT count(DISTINCT t.shard_name) FROM turbine t WHERE t.farm_id = sqlc.arg(farm_id))
ON CONFLICT (farm_id, window_start, path) DO UPDATE
SET window_end = EXCLUDED.window_end, day = EXCLUDED.day, expected = EXCLUDED.expected, received = EXCLUDED.received,
    available = EXCLUDED.available, late = EXCLUDED.late, readings = EXCLUDED.readings,
    computed_at = EXCLUDED.computed_at, complete_through = EXCLUDED.complete_through,
    revision = farm_window.revision + 1, job_id = EXCLUDED.job_id
RETURNING window_start, day, revision;

-- FarmWindowFinalsWrittenAt lists the farm's final rows written at exactly
-- @computed_at (a simulated clock's tick: the experiment's correction log).
-- name: FarmWindowFinalsWrittenAt :many
SELECT window_start, received, revision
FROM farm_window
WHERE farm_id = sqlc.arg(farm_id) AND path = 'final' AND computed_at = sqlc.arg(computed_at)::timestamptz
ORDER BY window_start;

-- FarmWindowFastThrough is the end of the farm's latest fast window (no
-- row when the fast path has published none). The fast path publishes a
-- farm's windows in order, so it will never publish a window before this
-- one that it has not published yet; the windows after it are its own to
-- publish. Read through the key, the latest window first.
-- name: FarmWindowFastThrough :one
SELECT window_end
FROM farm_window
WHERE farm_id = sqlc.arg(farm_id) AND path = 'fast'
ORDER BY window_start DESC
LIMIT 1;

-- FarmWindowFastGet is one window's fast row.
-- name: FarmWindowFastGet :one
SELECT received, available, expected, computed_at
FROM farm_window
WHERE farm_id = sqlc.arg(farm_id) AND window_start = sqlc.arg(window_start) AND path = 'fast';

-- FarmWindowsFinalReceived counts the farm's windows starting in [from, to)
-- whose final row has received = @received.
-- name: FarmWindowsFinalReceived :one
SELECT count(*)::bigint
FROM farm_window
WHERE farm_id = sqlc.arg(farm_id) AND path = 'final' AND received = sqlc.arg(received)::bigint
  AND window_start >= sqlc.arg(from_t)::timestamptz AND window_start < sqlc.arg(to_t)::timestamptz;

-- FarmWindowPublicationMetrics is each farm's latest fast window (publish_lag) and how
-- far its watermark is behind @now (farm_freshness's behind_s, on the
-- caller's clock). The latest window published carries the latest
-- watermark as long as the farm's allowed lateness has not been raised
-- since. A farm the fast path has not published yet has no row. It reads
-- one window per farm through the key, where farm_freshness aggregates
-- every fast window of the farm: /metrics is scraped every few seconds.
-- name: FarmWindowPublicationMetrics :many
SELECT f.id AS farm_id, w.window_end, w.lag_ms::bigint AS lag_ms,
       extract(epoch FROM sqlc.arg(now)::timestamptz - w.complete_through)::float8 AS behind_s
FROM farm f
CROSS JOIN LATERAL (
    SELECT pl.window_end, pl.lag_ms, fw.complete_through
    FROM publish_lag pl
    JOIN farm_window fw ON fw.farm_id = pl.farm_id AND fw.window_start = pl.window_start AND fw.path = 'fast'
    WHERE pl.farm_id = f.id
    ORDER BY pl.window_start DESC
    LIMIT 1
) w
ORDER BY f.id;

-- WindowRetentionCuts gives, per farm, its first farm-local day that starts
-- at or after @cut (the UTC midnight before which retention dropped every
-- readings partition): that day's date and start, and the shards holding
-- the farm's turbines. Every day before it lost readings (its rollup is
-- refused) and leaves whole: windows, parts, final rows, reconciliation,
-- alerts. turbine_day stays (the day's number, which the report reads).
-- name: WindowRetentionCuts :many
SELECT f.id AS farm_id, k.day::date AS keep_day, local_day_start(f.timezone, k.day)::timestamptz AS keep_from,
       ARRAY(SELECT DISTINCT t.shard_name FROM turbine t WHERE t.farm_id = f.id ORDER BY 1)::text[] AS shards
FROM farm f
CROSS JOIN LATERAL (SELECT (sqlc.arg(cut)::timestamptz AT TIME ZONE f.timezone)::date AS wall) AS w
CROSS JOIN LATERAL (SELECT CASE WHEN local_day_start(f.timezone, w.wall) >= sqlc.arg(cut)::timestamptz THEN w.wall ELSE w.wall + 1 END AS day) AS k
ORDER BY f.id;

-- WindowRetentionOldestDay is the farm's oldest day before @keep_day that
-- still has a window, part, reconciliation or alert row (each read by its
-- (farm_id, day) index); found is false when there is none.
-- name: WindowRetentionOldestDay :one
SELECT (o.day IS NOT NULL)::boolean AS found, coalesce(o.day, '1970-01-01')::date AS day
FROM (SELECT least((SELECT min(fw.day) FROM farm_window fw WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.day < sqlc.arg(keep_day)::date),
                   (SELECT min(p.day) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day < sqlc.arg(keep_day)::date),
                   (SELECT min(r.day) FROM reconciliation r WHERE r.farm_id = sqlc.arg(farm_id) AND r.day < sqlc.arg(keep_day)::date),
                   (SELECT min(a.day) FROM alert a WHERE a.farm_id = sqlc.arg(farm_id) AND a.day < sqlc.arg(keep_day)::date)) AS day) AS o;

-- WindowRetentionDeleteDay takes one farm-day out of the control database's
-- window tables in one statement, so the day leaves whole: its fast and
-- final rows, every shard's parts, its reconciliation (windows and day) and
-- its alerts (alert_count follows by its trigger).
-- name: WindowRetentionDeleteDay :one
WITH fw AS (
    DELETE FROM farm_window x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
), p AS (
    DELETE FROM farm_window_part x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
), r AS (
    DELETE FROM reconciliation x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
), a AS (
    DELETE FROM alert x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
)
SELECT (SELECT count(*) FROM fw)::bigint AS windows, (SELECT count(*) FROM p)::bigint AS parts,
       (SELECT count(*) FROM r)::bigint AS reconciliations, (SELECT count(*) FROM a)::bigint AS alerts;
