-- FarmsForPublication lists every farm with its window rules, for the
-- fast path.
-- name: FarmsForPublication :many
SELECT f.id, f.timezone, r.window_s, r.allowed_lateness_s
FROM farm f JOIN farm_rules r ON r.farm_id = f.id
ORDER BY f.id;

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
    -- farm has ever had, for every farm in every round (30 days: 8-33 ms
    -- a farm instead of ~1; TestFastPathReadsItsLastWindow).
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

-- FarmWindowFastPublish publishes a window's fast row: the sum of its
-- parts, as they are now, once. A second publication of the same window
-- (another process, a restart) changes nothing and returns no row.
-- name: FarmWindowFastPublish :many
INSERT INTO farm_window (farm_id, window_start, path, window_end, day, expected, received, available, late,
                         readings, computed_at, complete_through, revision, job_id)
SELECT p.farm_id, p.window_start, 'fast', max(p.window_end), max(p.day),
       sum(p.expected), sum(p.received), sum(p.available), sum(p.late),
       sum(p.readings), sqlc.arg(published_at)::timestamptz,
       sqlc.arg(published_at)::timestamptz - sqlc.arg(allowed_lateness_s)::integer * interval '1 second', 0, sqlc.narg(job_id)::bigint
FROM farm_window_part p
WHERE p.farm_id = sqlc.arg(farm_id) AND p.window_start = sqlc.arg(window_start)
GROUP BY p.farm_id, p.window_start
ON CONFLICT (farm_id, window_start, path) DO NOTHING
RETURNING window_start, expected, received, available;

-- FarmWindowFinalLock serialises the writers of one farm-day's final
-- windows (one rollup_day job per shard may finish at the same time).
-- name: FarmWindowFinalLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('farm_window_final/' || sqlc.arg(farm_id)::text || '/' || to_char(sqlc.arg(day)::date, 'YYYY-MM-DD'), 0));

-- FarmWindowOffGridDelete deletes, for one farm-day, what the control
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
-- name: FarmWindowOffGridDelete :one
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
    -- where an old fast row does): the pairing rule of ReconcileWindows,
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
    -- recompute (ReconcileWindows) if any pair is left
    DELETE FROM reconciliation r
    WHERE r.farm_id = sqlc.arg(farm_id) AND r.scope = 'day' AND r.day = sqlc.arg(day)
      AND r.period_start >= (SELECT lo FROM span) AND r.period_start < (SELECT hi FROM span)
      AND EXISTS (SELECT 1 FROM measured)
    RETURNING 1
)
SELECT (SELECT count(*) FROM parts)::bigint AS parts, (SELECT count(*) FROM finals)::bigint AS finals,
       ((SELECT count(*) FROM measured) + (SELECT count(*) FROM measured_day))::bigint AS reconciliations;

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

-- ReconcileWindows measures fast against final for the given windows that
-- have both rows and, with with_days, for their farm-local days (every
-- window of the day with both rows). Without with_days it reads the given
-- windows' span only: a correction written in ranges measures each range's
-- windows as it writes them and its day once, with its last range (the day
-- re-read for every range was a quarter of the control side's work).
-- name: ReconcileWindows :exec
-- Every read is one range scan of farm_window, with no join (the windows'
-- span, then their days' bounds), so the plan holds with or without
-- statistics and never scans the farm's history (60 ms with 30 days,
-- growing daily; a join or a probe per window was planned as a scan per
-- window on an unanalysed table). TestControlWritesReadTheirWindows.
WITH touched AS (
    SELECT DISTINCT w.day
    FROM farm_window w
    WHERE w.farm_id = sqlc.arg(farm_id)
      AND w.window_start >= (SELECT min(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x)
      AND w.window_start <= (SELECT max(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x)
      AND w.window_start = ANY (sqlc.arg(window_starts)::timestamptz[])
), span AS (
    -- a window of day d starts in [local_day_start(d), local_day_start(d + 1));
    -- without the days, the given windows' span
    SELECT CASE WHEN sqlc.arg(with_days)::boolean THEN local_day_start(f.timezone, min(d.day))
                ELSE (SELECT min(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x) END AS lo,
           CASE WHEN sqlc.arg(with_days)::boolean THEN local_day_start(f.timezone, max(d.day) + 1)
                ELSE (SELECT max(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x) + interval '1 microsecond' END AS hi
    FROM touched d CROSS JOIN farm f WHERE f.id = sqlc.arg(farm_id)
    GROUP BY f.timezone
), pairs AS (
    -- each window's fast and final rows, from one scan
    SELECT w.farm_id, w.window_start, max(w.day) AS day,
           max(w.expected) FILTER (WHERE w.path = 'fast') AS fast_expected,
           max(w.received) FILTER (WHERE w.path = 'fast') AS fast_received,
           max(w.available) FILTER (WHERE w.path = 'fast') AS fast_available,
           max(w.expected) FILTER (WHERE w.path = 'final') AS final_expected,
           max(w.received) FILTER (WHERE w.path = 'final') AS final_received,
           max(w.available) FILTER (WHERE w.path = 'final') AS final_available,
           max(w.revision) FILTER (WHERE w.path = 'final') AS revision
    FROM farm_window w
    WHERE w.farm_id = sqlc.arg(farm_id)
      AND w.window_start >= (SELECT lo FROM span) AND w.window_start < (SELECT hi FROM span)
      AND w.day IN (SELECT d.day FROM touched d)
    GROUP BY w.farm_id, w.window_start
    -- both rows, of the same window: a fast row published on an earlier
    -- grid is not the final row's window (FarmWindowOffGridDelete)
    HAVING count(*) FILTER (WHERE w.path = 'fast') = 1 AND count(*) FILTER (WHERE w.path = 'final') = 1
       AND min(w.window_end) = max(w.window_end)
), win AS (
    INSERT INTO reconciliation (farm_id, scope, period_start, day, fast_expected, fast_received, fast_available,
                                final_expected, final_received, final_available, windows, final_revision, measured_at)
    SELECT farm_id, 'window', window_start, day, fast_expected, fast_received, fast_available,
           final_expected, final_received, final_available, 1, revision, sqlc.arg(measured_at)::timestamptz
    FROM pairs
    WHERE window_start IN (SELECT unnest(sqlc.arg(window_starts)::timestamptz[]))
    ON CONFLICT (farm_id, scope, period_start) DO UPDATE
    SET fast_expected = EXCLUDED.fast_expected, fast_received = EXCLUDED.fast_received, fast_available = EXCLUDED.fast_available,
        final_expected = EXCLUDED.final_expected, final_received = EXCLUDED.final_received,
        final_available = EXCLUDED.final_available, final_revision = EXCLUDED.final_revision, measured_at = EXCLUDED.measured_at
    RETURNING farm_id
), days AS (
    INSERT INTO reconciliation (farm_id, scope, period_start, day, fast_expected, fast_received, fast_available,
                                final_expected, final_received, final_available, windows, final_revision, measured_at)
    SELECT p.farm_id, 'day', local_day_start(f.timezone, p.day), p.day,
           sum(p.fast_expected), sum(p.fast_received), sum(p.fast_available),
           sum(p.final_expected), sum(p.final_received), sum(p.final_available), count(*), sum(p.revision), sqlc.arg(measured_at)::timestamptz
    FROM pairs p JOIN farm f ON f.id = p.farm_id
    WHERE sqlc.arg(with_days)::boolean
    GROUP BY p.farm_id, p.day, f.timezone
    ON CONFLICT (farm_id, scope, period_start) DO UPDATE
    SET fast_expected = EXCLUDED.fast_expected, fast_received = EXCLUDED.fast_received, fast_available = EXCLUDED.fast_available,
        final_expected = EXCLUDED.final_expected, final_received = EXCLUDED.final_received,
        final_available = EXCLUDED.final_available, windows = EXCLUDED.windows,
        final_revision = EXCLUDED.final_revision, measured_at = EXCLUDED.measured_at
    RETURNING farm_id
)
SELECT (SELECT count(*) FROM win) + (SELECT count(*) FROM days);

-- DivergenceAlertsRaise raises (or refreshes) a divergence alert for each of
-- the farm's reconciliation rows of the given days whose received or
-- available diverges by more than the farm's threshold, per mille of the
-- final; an alert whose divergence has come back under it is left as raised
-- (it happened) with its latest counts.
-- name: DivergenceAlertsRaise :execrows
INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, threshold_pm, detail, message)
SELECT 'divergence', r.farm_id, r.scope, r.period_start, r.day, sqlc.arg(raised_at)::timestamptz, fr.divergence_alert_pm,
       jsonb_build_object('fast_received', r.fast_received, 'final_received', r.final_received,
                          'fast_available', r.fast_available, 'final_available', r.final_available,
                          'windows', r.windows, 'final_revision', r.final_revision),
       format('%s %s %s: fast %s received / %s available, final %s / %s (threshold %s per mille)',
              r.farm_id, r.scope, r.period_start, r.fast_received, r.fast_available, r.final_received, r.final_available,
              fr.divergence_alert_pm)
FROM reconciliation r
JOIN farm_rules fr ON fr.farm_id = r.farm_id
WHERE r.farm_id = sqlc.arg(farm_id) AND r.day = ANY (sqlc.arg(days)::date[]) AND r.measured_at = sqlc.arg(raised_at)::timestamptz
  AND (abs(r.final_received - r.fast_received) * 1000 > fr.divergence_alert_pm * r.final_received
       OR abs(r.final_available - r.fast_available) * 1000 > fr.divergence_alert_pm * r.final_available)
ON CONFLICT (kind, farm_id, scope, period_start) DO UPDATE
SET detail = EXCLUDED.detail, message = EXCLUDED.message, threshold_pm = EXCLUDED.threshold_pm;

-- WindowSumCheck is the bug alarm's independent sum: for one farm-day on
-- one shard, the shard's final window parts against its turbine_day rows
-- (two groupings of the same turbine_window rows, written by different
-- statements). Returns the two received/expected sums; any difference is
-- a bug.
-- name: WindowSumCheck :one
SELECT coalesce((SELECT sum(p.expected) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day = sqlc.arg(day) AND p.shard_name = sqlc.arg(shard_name)), 0)::bigint AS windows_expected,
       coalesce((SELECT sum(p.received) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day = sqlc.arg(day) AND p.shard_name = sqlc.arg(shard_name)), 0)::bigint AS windows_received,
       coalesce((SELECT sum(p.available) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day = sqlc.arg(day) AND p.shard_name = sqlc.arg(shard_name)), 0)::bigint AS windows_available,
       coalesce((SELECT sum(td.expected) FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id) AND td.day = sqlc.arg(day) AND td.shard_name = sqlc.arg(shard_name)), 0)::bigint AS days_expected,
       coalesce((SELECT sum(td.received) FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id) AND td.day = sqlc.arg(day) AND td.shard_name = sqlc.arg(shard_name)), 0)::bigint AS days_received,
       coalesce((SELECT sum(td.available) FROM turbine_day td WHERE td.farm_id = sqlc.arg(farm_id) AND td.day = sqlc.arg(day) AND td.shard_name = sqlc.arg(shard_name)), 0)::bigint AS days_available;

-- AlertRaise raises (or refreshes) one alert.
-- name: AlertRaise :exec
INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, threshold_pm, detail, message)
VALUES (sqlc.arg(kind), sqlc.arg(farm_id), sqlc.arg(scope), sqlc.arg(period_start), sqlc.arg(day), sqlc.arg(raised_at), sqlc.narg(threshold_pm), sqlc.arg(detail), sqlc.arg(message))
ON CONFLICT (kind, farm_id, scope, period_start) DO UPDATE
SET detail = EXCLUDED.detail, message = EXCLUDED.message, threshold_pm = EXCLUDED.threshold_pm;

-- CompletenessCheck: a closed farm-day's received against its expected
-- (turbines in service, every shard), the farm's threshold, and its
-- silent turbines with their silent local hours.
-- name: CompletenessCheck :one
SELECT coalesce(sum(td.expected), 0)::bigint AS expected,
       coalesce(sum(td.received), 0)::bigint AS received,
       fr.completeness_alert_pm::integer AS threshold_pm,
       coalesce(jsonb_agg(jsonb_build_object('turbine_id', td.turbine_id, 'silent_hours', td.silent_hours, 'expected', td.expected, 'received', td.received)
                          ORDER BY td.turbine_id) FILTER (WHERE cardinality(td.silent_hours) > 0), '[]')::jsonb AS silent,
       local_day_start(f.timezone, sqlc.arg(day)::date)::timestamptz AS day_start
FROM farm f
JOIN farm_rules fr ON fr.farm_id = f.id
LEFT JOIN turbine_day td ON td.farm_id = f.id AND td.day = sqlc.arg(day)
WHERE f.id = sqlc.arg(farm_id)
GROUP BY fr.completeness_alert_pm, f.timezone;

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
