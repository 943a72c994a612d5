-- farm_window_sum: this shard's sum of turbine_window per farm window, kept in step with it by the
-- statements that write turbine_window.

-- FarmWindowSums returns this shard's part of the given farm windows (its
-- farm_window_sum rows, kept in step with turbine_window, and how many
-- turbine_window rows each sums). shard_xid is
-- this transaction's id (after WindowLock: a later writer has a larger one).
-- name: FarmWindowSums :many
SELECT fs.window_start, fs.window_end, fs.day, fs.turbines, fs.expected, fs.received, fs.available, fs.late, fs.readings,
       fs.span_s, (pg_current_xact_id()::text)::bigint AS shard_xid
FROM farm_window_sum fs
WHERE fs.farm_id = sqlc.arg(farm_id) AND fs.window_start = ANY (sqlc.arg(window_starts)::timestamptz[]) AND fs.turbines > 0
ORDER BY fs.window_start;

-- FarmWindowSumRebuild rebuilds the farm-day's farm_window_sum rows from
-- turbine_window (run when a day is closed) and returns how many windows
-- differed, and the first of them: anything but 0 is a bug in the upkeep.
-- Both tables are read in the day's key range [day_start, day_end), the
-- range TurbineDayFromWindows adds up, not by the day column: that was a
-- scan of every row the shard holds, growing with retention
-- (TestDayCloseReadsItsDay).
-- name: FarmWindowSumRebuild :one
WITH truth AS (
    SELECT tw.farm_id, tw.window_start, max(tw.window_end) AS window_end, max(tw.day) AS day, count(*)::integer AS turbines,
           sum(tw.expected)::bigint AS expected, sum(tw.received)::bigint AS received, sum(tw.available)::bigint AS available,
           sum(tw.late)::bigint AS late, sum(tw.received + tw.beyond_cadence + tw.out_of_service)::bigint AS readings,
           sum(extract(epoch FROM tw.window_end - tw.window_start))::bigint AS span_s
    FROM turbine_window tw
    WHERE tw.farm_id = sqlc.arg(farm_id) AND tw.day = sqlc.arg(day)
      AND tw.window_start >= sqlc.arg(day_start)::timestamptz AND tw.window_start < sqlc.arg(day_end)::timestamptz
    GROUP BY tw.farm_id, tw.window_start
), kept AS (
    SELECT fs.* FROM farm_window_sum fs
    WHERE fs.farm_id = sqlc.arg(farm_id) AND fs.day = sqlc.arg(day)
      AND fs.window_start >= sqlc.arg(day_start)::timestamptz AND fs.window_start < sqlc.arg(day_end)::timestamptz
), cmp AS (
    -- One hash join of the two; the writes below take their rows from it
    -- (a NOT EXISTS or IN over the CTEs was planned, without statistics,
    -- as a loop of 1,440 x 1,440 comparisons).
    SELECT coalesce(t.window_start, k.window_start) AS window_start, t.window_start IS NULL AS gone,
           (t.window_start IS NULL AND k.turbines <> 0)
           OR (t.window_start IS NOT NULL AND (t.window_end, t.turbines, t.expected, t.received, t.available, t.late, t.readings, t.span_s)
               IS DISTINCT FROM (k.window_end, k.turbines, k.expected, k.received, k.available, k.late, k.readings, k.span_s)) AS differs,
           t.farm_id, t.window_end, t.day, t.turbines, t.expected, t.received, t.available, t.late, t.readings, t.span_s
    FROM truth t
    FULL JOIN kept k ON k.window_start = t.window_start
), diff AS (
    SELECT c.window_start FROM cmp c WHERE c.differs
), fix AS (
    INSERT INTO farm_window_sum AS fs (farm_id, window_start, window_end, day, turbines, expected, received, available, late, readings, span_s)
    SELECT c.farm_id, c.window_start, c.window_end, c.day, c.turbines, c.expected, c.received, c.available, c.late, c.readings, c.span_s
    FROM cmp c
    WHERE c.differs AND NOT c.gone
    ON CONFLICT (farm_id, window_start) DO UPDATE
    SET window_end = EXCLUDED.window_end, day = EXCLUDED.day, turbines = EXCLUDED.turbines, expected = EXCLUDED.expected,
        received = EXCLUDED.received, available = EXCLUDED.available, late = EXCLUDED.late, readings = EXCLUDED.readings,
        span_s = EXCLUDED.span_s
    RETURNING 1
), zero AS (
    -- sums of windows with no row left (drifted, or kept at 0 turbines)
    DELETE FROM farm_window_sum fs
    USING cmp c
    WHERE c.gone AND fs.farm_id = sqlc.arg(farm_id) AND fs.window_start = c.window_start
    RETURNING 1
)
SELECT count(*)::bigint AS differed, coalesce(min(diff.window_start), 'epoch')::timestamptz AS first_window FROM diff;

-- FarmWindowSumTrim deletes up to @max_rows of the farm's farm_window_sum
-- rows before @keep_from, oldest first in its key's order, returning how many.
-- name: FarmWindowSumTrim :execrows
DELETE FROM farm_window_sum
WHERE ctid = ANY (ARRAY(SELECT fs.ctid FROM farm_window_sum fs
                        WHERE fs.farm_id = sqlc.arg(farm_id) AND fs.window_start < sqlc.arg(keep_from)::timestamptz
                        ORDER BY fs.farm_id, fs.window_start
                        LIMIT sqlc.arg(max_rows)::integer));
