-- turbine_stall: the stalled-turbine watcher (stall_watch holds its thresholds).

-- StallJudge judges one published farm window from its turbines' stats
-- (TurbineWindowStallStats of every shard holding the farm; a turbine given
-- twice, during a move, counts once, with its most readings): raises a stall
-- for each turbine that reported only available slots at or under the power
-- floor while the farm's median wind was in range, its own mean wind at
-- least the range's low end, and more than
-- neighbours_pm per mille of its other turbines produced; extends a stall
-- already open; clears an open stall whose turbine produced. Judging a
-- window again changes nothing. Returns one row per stall touched.
-- name: StallJudge :many
WITH w AS (
    SELECT sw.power_floor_kw::float8 AS floor_kw, sw.wind_min_ms::float8 AS wind_min, sw.wind_max_ms::float8 AS wind_max, sw.neighbours_pm
    FROM stall_watch sw
), t AS (
    SELECT DISTINCT ON (u.turbine_id) u.turbine_id, u.received, u.available, u.power_max_kw, u.wind_sum_ms / u.wind_readings AS wind_ms
    FROM (SELECT unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id, unnest(sqlc.arg(received)::integer[]) AS received,
                 unnest(sqlc.arg(available)::integer[]) AS available, unnest(sqlc.arg(power_max_kw)::float8[]) AS power_max_kw,
                 unnest(sqlc.arg(wind_sum_ms)::float8[]) AS wind_sum_ms, unnest(sqlc.arg(wind_readings)::integer[]) AS wind_readings) AS u
    WHERE u.wind_readings > 0
    ORDER BY u.turbine_id, u.wind_readings DESC
), farm AS (
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t.wind_ms) AS median_wind,
           count(*) AS turbines,
           count(*) FILTER (WHERE t.power_max_kw > w.floor_kw) AS producing
    FROM t CROSS JOIN w
), stalled AS (
    SELECT t.turbine_id, t.power_max_kw, t.wind_ms, farm.median_wind, farm.turbines, farm.producing, w.floor_kw, w.wind_min, w.wind_max, w.neighbours_pm
    FROM t CROSS JOIN w CROSS JOIN farm
    WHERE t.received > 0 AND t.available = t.received AND t.power_max_kw <= w.floor_kw
      AND farm.median_wind BETWEEN w.wind_min AND w.wind_max
      -- its own wind too: a turbine in a lull of its own is not stalled
      AND t.wind_ms >= w.wind_min
      AND farm.producing * 1000 > w.neighbours_pm::bigint * (farm.turbines - 1)
), judged AS (
    SELECT st.turbine_id,
           jsonb_build_object('power_max_kw', st.power_max_kw, 'wind_ms', round(st.wind_ms::numeric, 1),
                              'farm_median_wind_ms', round(st.median_wind::numeric, 1), 'others_producing', st.producing,
                              'others', st.turbines - 1, 'power_floor_kw', st.floor_kw, 'wind_range_ms', jsonb_build_array(st.wind_min, st.wind_max),
                              'neighbours_pm', st.neighbours_pm) AS detail,
           format('%s stalled: reports available at no more than %s kW in the window from %s while the farm''s median wind is %s m/s and %s of its %s other turbines produce',
                  st.turbine_id, round(st.power_max_kw::numeric, 1), utc_text(sqlc.arg(window_start)::timestamptz),
                  round(st.median_wind::numeric, 1), st.producing, st.turbines - 1) AS message
    FROM stalled st
), continued AS (
    UPDATE turbine_stall s
    SET last_window = sqlc.arg(window_start)::timestamptz, windows = s.windows + 1, detail = j.detail, message = j.message
    FROM judged j
    WHERE s.turbine_id = j.turbine_id AND s.cleared_at IS NULL AND s.last_window < sqlc.arg(window_start)::timestamptz
    RETURNING s.turbine_id, 'continued'::text AS action, s.first_window, s.message
), raised AS (
    INSERT INTO turbine_stall (farm_id, turbine_id, first_window, last_window, raised_at, detail, message)
    SELECT sqlc.arg(farm_id)::text, j.turbine_id, sqlc.arg(window_start)::timestamptz, sqlc.arg(window_start)::timestamptz,
           sqlc.arg(judged_at)::timestamptz, j.detail, j.message
    FROM judged j
    WHERE NOT EXISTS (SELECT 1 FROM turbine_stall s WHERE s.turbine_id = j.turbine_id AND s.cleared_at IS NULL)
    RETURNING turbine_stall.turbine_id, 'raised'::text AS action, turbine_stall.first_window, turbine_stall.message
), cleared AS (
    UPDATE turbine_stall s
    SET cleared_at = sqlc.arg(judged_at)::timestamptz, cleared_window = sqlc.arg(window_start)::timestamptz
    FROM t CROSS JOIN w
    WHERE s.turbine_id = t.turbine_id AND s.farm_id = sqlc.arg(farm_id)::text AND s.cleared_at IS NULL
      AND s.last_window < sqlc.arg(window_start)::timestamptz AND t.power_max_kw > w.floor_kw
    RETURNING s.turbine_id, 'cleared'::text AS action, s.first_window, s.message
)
SELECT c.turbine_id::text AS turbine_id, c.action::text AS action, c.first_window::timestamptz AS first_window, c.message::text AS message FROM continued c
UNION ALL
SELECT r.turbine_id, r.action, r.first_window, r.message FROM raised r
UNION ALL
SELECT x.turbine_id, x.action, x.first_window, x.message FROM cleared x;

-- StallOpenList lists the open stalls of the given farms, oldest first.
-- name: StallOpenList :many
SELECT s.farm_id, s.turbine_id, s.first_window, s.last_window, s.windows, s.raised_at, s.message
FROM turbine_stall s
WHERE s.cleared_at IS NULL AND s.farm_id = ANY (sqlc.arg(farm_ids)::text[])
ORDER BY s.farm_id, s.first_window, s.turbine_id;

-- StallMetrics counts the open stalls per farm (every farm, 0 included).
-- name: StallMetrics :many
SELECT f.id AS farm_id, count(s.id)::bigint AS stalled
FROM farm f
LEFT JOIN turbine_stall s ON s.farm_id = f.id AND s.cleared_at IS NULL
GROUP BY f.id
ORDER BY f.id;
