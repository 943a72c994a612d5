-- turbine_stall: the stalled-turbine watcher (stall_watch holds its thresholds).

-- StallJudge is the watcher's rule. It judges farm windows from their
-- turbines' stats (TurbineWindowStallStats of every shard holding the farm,
-- a row per turbine and window; a turbine given twice in a window, during a
-- move, counts once, with its most readings): a turbine is stalled in a
-- window when it reported only available slots at or under the power floor
-- while the farm's median wind was in range, its own mean wind at least
-- the range's low end, and more than neighbours_pm per mille of its other
-- turbines produced; it produced when its highest power is over the floor.
-- Returns, by window then turbine, every turbine-window of the turbines
-- whose stalls these windows may change: those stalled in one of them, and
-- those with a stall not cleared before the first (the others have nothing
-- to extend, cut or clear); recorded: judged stalled before
-- (turbine_stall_window). It writes nothing: the watcher places each
-- verdict among the turbine's stalls (internal/publish, stall.go).
-- name: StallJudge :many
WITH w AS (
    SELECT sw.power_floor_kw::float8 AS floor_kw, sw.wind_min_ms::float8 AS wind_min, sw.wind_max_ms::float8 AS wind_max, sw.neighbours_pm
    FROM stall_watch sw
), u AS (
    SELECT unnest(sqlc.arg(window_starts)::timestamptz[]) AS window_start, unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
           unnest(sqlc.arg(received)::integer[]) AS received, unnest(sqlc.arg(available)::integer[]) AS available,
           unnest(sqlc.arg(power_max_kw)::float8[]) AS power_max_kw, unnest(sqlc.arg(wind_sum_ms)::float8[]) AS wind_sum_ms,
           unnest(sqlc.arg(wind_readings)::integer[]) AS wind_readings
), t AS (
    SELECT DISTINCT ON (u.window_start, u.turbine_id) u.window_start, u.turbine_id, u.received, u.available, u.power_max_kw,
           u.wind_sum_ms / u.wind_readings AS wind_ms
    FROM u
    WHERE u.wind_readings > 0
    ORDER BY u.window_start, u.turbine_id, u.wind_readings DESC
), farm AS (
    SELECT t.window_start,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY t.wind_ms) AS median_wind,
           count(*) AS turbines,
           count(*) FILTER (WHERE t.power_max_kw > w.floor_kw) AS producing
    FROM t CROSS JOIN w
    GROUP BY t.window_start
), v AS (
    SELECT t.window_start, t.turbine_id, t.power_max_kw, t.wind_ms, farm.median_wind, farm.turbines, farm.producing,
           w.floor_kw, w.wind_min, w.wind_max, w.neighbours_pm,
           (t.received > 0 AND t.available = t.received AND t.power_max_kw <= w.floor_kw
            AND farm.median_wind BETWEEN w.wind_min AND w.wind_max
            -- its own wind too: a turbine in a lull of its own is not stalled
            AND t.wind_ms >= w.wind_min
            AND farm.producing * 1000 > w.neighbours_pm::bigint * (farm.turbines - 1)) AS stalled
    FROM t JOIN farm ON farm.window_start = t.window_start CROSS JOIN w
), watched AS (
    SELECT v.turbine_id FROM v WHERE v.stalled
    UNION
    SELECT s.turbine_id
    FROM turbine_stall s
    WHERE s.farm_id = sqlc.arg(farm_id)::text
      AND (s.cleared_at IS NULL OR s.cleared_window > (SELECT min(u.window_start) FROM u)
           OR s.last_window >= (SELECT min(u.window_start) FROM u))
)
SELECT v.window_start::timestamptz AS window_start, v.turbine_id::text AS turbine_id, v.stalled::boolean AS stalled,
       (v.power_max_kw > v.floor_kw)::boolean AS produced, v.floor_kw::float8 AS floor_kw,
       EXISTS (SELECT 1 FROM turbine_stall_window c WHERE c.turbine_id = v.turbine_id AND c.window_start = v.window_start)::boolean AS recorded,
       coalesce(CASE WHEN v.stalled THEN
           jsonb_build_object('power_max_kw', v.power_max_kw, 'wind_ms', round(v.wind_ms::numeric, 1),
                              'farm_median_wind_ms', round(v.median_wind::numeric, 1), 'others_producing', v.producing,
                              'others', v.turbines - 1, 'power_floor_kw', v.floor_kw, 'wind_range_ms', jsonb_build_array(v.wind_min, v.wind_max),
                              'neighbours_pm', v.neighbours_pm) END, '{}')::jsonb AS detail,
       coalesce(CASE WHEN v.stalled THEN
           format('%s stalled: reports available at no more than %s kW in the window from %s while the farm''s median wind is %s m/s and %s of its %s other turbines produce',
                  v.turbine_id, round(v.power_max_kw::numeric, 1), utc_text(v.window_start),
                  round(v.median_wind::numeric, 1), v.producing, v.turbines - 1) END, '')::text AS message
FROM v
WHERE v.turbine_id IN (SELECT wt.turbine_id FROM watched wt)
ORDER BY v.window_start, v.turbine_id;

-- StallsOfTurbines lists every stall of the given turbines, by turbine and
-- first window (the watcher places a verdict among them).
-- name: StallsOfTurbines :many
SELECT * FROM turbine_stall
WHERE turbine_id = ANY (sqlc.arg(turbine_ids)::text[])
ORDER BY turbine_id, first_window;

-- StallWindowAdd records that a turbine was judged stalled in a window. A
-- window recorded already is left as it is (0 rows): judging it again
-- changes nothing.
-- name: StallWindowAdd :execrows
INSERT INTO turbine_stall_window (turbine_id, window_start, window_end, judged_at, late)
VALUES (@turbine_id, @window_start, @window_end, @judged_at, @late)
ON CONFLICT (turbine_id, window_start) DO NOTHING;

-- StallWindowRemove forgets a window judged again and found not stalled
-- (its late readings changed the verdict).
-- name: StallWindowRemove :execrows
DELETE FROM turbine_stall_window WHERE turbine_id = @turbine_id AND window_start = @window_start;

-- StallRaise opens a stall at one stalled window, cleared at once when the
-- turbine is known to have produced after it (@cleared_window: the window
-- of that reading).
-- name: StallRaise :one
INSERT INTO turbine_stall (farm_id, turbine_id, first_window, last_window, windows, raised_at, cleared_at, cleared_window,
                           detail, message, found_late, found_at, first_window_end)
VALUES (@farm_id, @turbine_id, @window_start, @window_start, 1, @judged_at,
        CASE WHEN sqlc.narg(cleared_window)::timestamptz IS NOT NULL THEN @judged_at::timestamptz END, sqlc.narg(cleared_window)::timestamptz,
        @detail, @message, @late, @judged_at, @window_end::timestamptz)
RETURNING *;

-- StallJoin adds a newly recorded stalled window to a stall: after its last
-- (the detail and message are then the window's), before its first (how
-- the stall was found is then the window's), or between.
-- name: StallJoin :one
UPDATE turbine_stall s
SET first_window = least(s.first_window, @window_start::timestamptz),
    last_window = greatest(s.last_window, @window_start::timestamptz),
    windows = s.windows + 1,
    found_late = CASE WHEN @window_start::timestamptz < s.first_window THEN @late::boolean ELSE s.found_late END,
    found_at = CASE WHEN @window_start::timestamptz < s.first_window THEN @judged_at::timestamptz ELSE s.found_at END,
    first_window_end = CASE WHEN @window_start::timestamptz < s.first_window THEN @window_end::timestamptz ELSE s.first_window_end END,
    detail = CASE WHEN @window_start::timestamptz > s.last_window THEN @detail::jsonb ELSE s.detail END,
    message = CASE WHEN @window_start::timestamptz > s.last_window THEN @message::text ELSE s.message END
WHERE s.id = @id
RETURNING *;

-- StallClear clears a stall at the first window after its last in which
-- its turbine is known to have produced (an earlier one found later moves
-- it back).
-- name: StallClear :one
UPDATE turbine_stall
SET cleared_at = @judged_at::timestamptz, cleared_window = @window_start::timestamptz
WHERE id = @id
RETURNING *;

-- StallCut ends a stall at a window inside it in which its turbine
-- produced: it keeps its windows before that window, and is cleared at it.
-- Its windows after are made a stall of their own (StallSplitOff).
-- name: StallCut :one
UPDATE turbine_stall s
SET last_window = b.last_window, windows = b.windows, cleared_at = @judged_at::timestamptz, cleared_window = @window_start::timestamptz
FROM (SELECT max(c.window_start) AS last_window, count(*)::integer AS windows
      FROM turbine_stall x
      JOIN turbine_stall_window c ON c.turbine_id = x.turbine_id AND c.window_start >= x.first_window AND c.window_start < @window_start::timestamptz
      WHERE x.id = @id) AS b
WHERE s.id = @id
RETURNING s.*;

-- StallSplitOff makes a turbine's stalled windows in (@after, @through] a
-- stall of their own: what a cut left after the window the turbine produced
-- in, with the cut stall's clearing, detail and message. It was raised when
-- the first of them was judged, and is found as its first window was.
-- name: StallSplitOff :one
INSERT INTO turbine_stall (farm_id, turbine_id, first_window, last_window, windows, raised_at, cleared_at, cleared_window,
                           detail, message, found_late, found_at, first_window_end)
SELECT @farm_id, @turbine_id, min(c.window_start), max(c.window_start), count(*)::integer, min(c.judged_at),
       sqlc.narg(cleared_at)::timestamptz, sqlc.narg(cleared_window)::timestamptz, @detail, @message,
       (array_agg(c.late ORDER BY c.window_start))[1], (array_agg(c.judged_at ORDER BY c.window_start))[1],
       (array_agg(c.window_end ORDER BY c.window_start))[1]
FROM turbine_stall_window c
WHERE c.turbine_id = @turbine_id AND c.window_start > @after::timestamptz AND c.window_start <= @through::timestamptz
HAVING count(*) > 0
RETURNING *;

-- StallRefresh recounts a stall from its recorded windows after one was
-- forgotten (StallWindowRemove): its first and last, how many, how its
-- first was found. No row: none is left (StallDelete).
-- name: StallRefresh :many
UPDATE turbine_stall s
SET first_window = a.first_window, last_window = a.last_window, windows = a.windows,
    found_late = a.found_late, found_at = a.found_at, first_window_end = a.first_window_end
FROM (SELECT min(c.window_start) AS first_window, max(c.window_start) AS last_window, count(*)::integer AS windows,
             (array_agg(c.late ORDER BY c.window_start))[1] AS found_late,
             (array_agg(c.judged_at ORDER BY c.window_start))[1] AS found_at,
             (array_agg(c.window_end ORDER BY c.window_start))[1] AS first_window_end
      FROM turbine_stall x
      JOIN turbine_stall_window c ON c.turbine_id = x.turbine_id AND c.window_start BETWEEN x.first_window AND x.last_window
      WHERE x.id = @id) AS a
WHERE s.id = @id AND a.windows > 0
RETURNING s.*;

-- StallDelete deletes a stall none of whose windows is stalled any more.
-- name: StallDelete :exec
DELETE FROM turbine_stall WHERE id = @id;

-- StallOpenList lists the open stalls of the given farms, oldest first,
-- with how each was found (found_at is raised_at in a row written before
-- the watcher kept it).
-- name: StallOpenList :many
SELECT s.farm_id, s.turbine_id, s.first_window, s.last_window, s.windows, s.raised_at, s.message,
       s.found_late, coalesce(s.found_at, s.raised_at)::timestamptz AS found_at, s.first_window_end
FROM turbine_stall s
WHERE s.cleared_at IS NULL AND s.farm_id = ANY (sqlc.arg(farm_ids)::text[])
ORDER BY s.farm_id, s.first_window, s.turbine_id;

-- StallDayList lists the farm's stalls, open or cleared, with a stalled
-- window in [@day_start, @day_end) or one on each side (the farm-day page),
-- by first window.
-- name: StallDayList :many
SELECT s.turbine_id, s.first_window, s.last_window, s.windows, s.cleared_window, s.message,
       s.found_late, coalesce(s.found_at, s.raised_at)::timestamptz AS found_at, s.first_window_end
FROM turbine_stall s
WHERE s.farm_id = @farm_id AND s.first_window < @day_end::timestamptz AND s.last_window >= @day_start::timestamptz
ORDER BY s.first_window, s.turbine_id;

-- StallMetrics counts the open stalls per farm (every farm, 0 included).
-- name: StallMetrics :many
SELECT f.id AS farm_id, count(s.id)::bigint AS stalled
FROM farm f
LEFT JOIN turbine_stall s ON s.farm_id = f.id AND s.cleared_at IS NULL
GROUP BY f.id
ORDER BY f.id;
