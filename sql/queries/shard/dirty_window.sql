-- dirty_window: turbine-windows marked by late readings, claimed by the fast path or a correction.

-- DirtyWindowInsert records the turbine-windows an inserted batch may have
-- changed after their publication (the mark rule, docs/dirty-marks.md), as
-- runs of consecutive windows of one turbine ([window_start, window_end),
-- `windows` windows). Append-only: the batch's marks are rows of their own,
-- even for windows an earlier batch marked, so a writer never waits on a
-- claim and a claim never takes a mark whose readings it cannot see (it
-- takes only the rows its snapshot sees; this batch's commit together with
-- its readings).
-- name: DirtyWindowInsert :exec
INSERT INTO dirty_window (farm_id, day, turbine_id, window_start, window_end, windows, marked_at)
SELECT sqlc.arg(farm_id)::text, u.day, u.turbine_id, u.window_start, u.window_end, u.windows, sqlc.arg(marked_at)::timestamptz
FROM (SELECT unnest(sqlc.arg(days)::date[]) AS day, unnest(sqlc.arg(turbine_ids)::text[]) AS turbine_id,
             unnest(sqlc.arg(window_starts)::timestamptz[]) AS window_start, unnest(sqlc.arg(window_ends)::timestamptz[]) AS window_end,
             unnest(sqlc.arg(windows)::integer[]) AS windows) AS u;

-- DirtyWindowClaim takes the farm-day's dirty turbine-windows that start
-- before @before (the windows already published; on the window grid, or
-- the day's end), returning each claimed run as its turbine and its first
-- and last window index in the day (runs may overlap: the caller adds them
-- to a set). Run after WindowLock, in the transaction that recomputes
-- them: it deletes the runs its snapshot sees that start before @before,
-- whose readings committed with them and so are visible to the reads that
-- follow, and writes back the part of a run from @before on (a row of its
-- own, same marked_at); runs committed later, or not yet, stay for the
-- next recompute. It never waits on a writer (writers only insert).
-- name: DirtyWindowClaim :many
WITH claimed AS (
    DELETE FROM dirty_window d
    WHERE d.farm_id = sqlc.arg(farm_id) AND d.day = sqlc.arg(day) AND d.window_start < sqlc.arg(before)::timestamptz
    RETURNING d.farm_id, d.day, d.turbine_id, d.window_start, d.window_end, d.windows, d.marked_at
), rest AS (
    INSERT INTO dirty_window (farm_id, day, turbine_id, window_start, window_end, windows, marked_at)
    SELECT c.farm_id, c.day, c.turbine_id, sqlc.arg(before)::timestamptz, c.window_end,
           c.windows - (extract(epoch FROM sqlc.arg(before)::timestamptz - c.window_start) / sqlc.arg(window_s)::integer)::integer, c.marked_at
    FROM claimed c
    WHERE c.window_end > sqlc.arg(before)::timestamptz
    RETURNING 1
)
SELECT c.turbine_id,
       floor(extract(epoch FROM c.window_start - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer AS first_window,
       ceil(extract(epoch FROM least(c.window_end, sqlc.arg(before)::timestamptz) - sqlc.arg(day_start)::timestamptz) / sqlc.arg(window_s)::integer)::integer - 1 AS last_window
FROM claimed c
ORDER BY 1, 2;

-- DirtyWindowClaimRange takes the farm-day's dirty turbine-windows in
-- [@from_t, @to_t) (window bounds; @to_t may be the day's end): what the
-- fast path absorbs when it computes those windows (its snapshot holds the
-- readings that marked them; runs committed later stay, as in
-- DirtyWindowClaim). The parts of a run outside the range are written back
-- as rows of their own. Returns how many runs it took.
-- name: DirtyWindowClaimRange :one
WITH claimed AS (
    DELETE FROM dirty_window d
    WHERE d.farm_id = sqlc.arg(farm_id) AND d.day = sqlc.arg(day)
      AND d.window_start < sqlc.arg(to_t)::timestamptz AND d.window_end > sqlc.arg(from_t)::timestamptz
    RETURNING d.farm_id, d.day, d.turbine_id, d.window_start, d.window_end, d.windows, d.marked_at
), split AS (
    SELECT c.*,
           CASE WHEN c.window_start < sqlc.arg(from_t)::timestamptz
                THEN (extract(epoch FROM sqlc.arg(from_t)::timestamptz - c.window_start) / sqlc.arg(window_s)::integer)::integer ELSE 0 END AS before_n,
           ceil(extract(epoch FROM least(c.window_end, sqlc.arg(to_t)::timestamptz) - greatest(c.window_start, sqlc.arg(from_t)::timestamptz))
                / sqlc.arg(window_s)::integer)::integer AS inside_n
    FROM claimed c
), rest AS (
    INSERT INTO dirty_window (farm_id, day, turbine_id, window_start, window_end, windows, marked_at)
    SELECT s.farm_id, s.day, s.turbine_id, s.window_start, sqlc.arg(from_t)::timestamptz, s.before_n, s.marked_at
    FROM split s WHERE s.before_n > 0
    UNION ALL
    SELECT s.farm_id, s.day, s.turbine_id, sqlc.arg(to_t)::timestamptz, s.window_end, s.windows - s.before_n - s.inside_n, s.marked_at
    FROM split s WHERE s.window_end > sqlc.arg(to_t)::timestamptz
    RETURNING 1
)
SELECT count(*)::bigint AS runs FROM claimed;

-- DirtyWindowTrim deletes the farm's dirty marks and dirty windows of days before
-- @keep_day: a recompute of those days is refused, so they would only make
-- the drain enqueue jobs that are cancelled. Returns how many of each.
-- name: DirtyWindowTrim :one
WITH w AS (
    DELETE FROM dirty_window d WHERE d.farm_id = sqlc.arg(farm_id) AND d.day < sqlc.arg(keep_day)::date RETURNING 1
), m AS (
    DELETE FROM dirty_mark d WHERE d.farm_id = sqlc.arg(farm_id) AND d.day < sqlc.arg(keep_day)::date RETURNING 1
)
SELECT (SELECT count(*) FROM w)::bigint AS dirty_windows, (SELECT count(*) FROM m)::bigint AS dirty_marks;

-- DirtyBacklogGet is this shard's dirty backlog per farm (one farm with
-- @farm_id, every farm when it is NULL), for the status page and /metrics
-- alike: the farm-days marked (dirty_mark, waiting for the drain: how many,
-- which, the readings under them), the turbine-windows marked (dirty_window,
-- waiting for a correction or the fast path; summed over the marked runs, so
-- a window two batches marked counts twice) and when the oldest mark of
-- either kind was written (both are stamped with the writer's clock).
--
-- /metrics runs it on every scrape, so its cost is bounded whatever the
-- backlog: the farms come from a skip scan of dirty_window's claim index
-- (one probe per farm) and dirty_mark (one row per farm-day, so bounded by
-- the days a reading may be late for); the turbine-windows are summed over
-- at most @max_runs marked runs per farm (10,000 when NULL; a replay of one
-- farm-day marks about 100,000 turbine-windows on a shard, in runs of
-- consecutive windows per turbine and batch): past that many runs,
-- windows_capped is true and the sum a lower bound. The oldest window is
-- the first of dirty_window (farm_id, marked_at).
-- name: DirtyBacklogGet :many
WITH RECURSIVE window_farms AS (
    (SELECT dw.farm_id FROM dirty_window dw
     WHERE sqlc.narg(farm_id)::text IS NULL OR dw.farm_id = sqlc.narg(farm_id)::text
     ORDER BY dw.farm_id LIMIT 1)
    UNION ALL
    SELECT (SELECT dw.farm_id FROM dirty_window dw
            WHERE dw.farm_id > wf.farm_id AND (sqlc.narg(farm_id)::text IS NULL OR dw.farm_id = sqlc.narg(farm_id)::text)
            ORDER BY dw.farm_id LIMIT 1)
    FROM window_farms wf
    WHERE wf.farm_id IS NOT NULL
),
farms AS (
    SELECT wf.farm_id FROM window_farms wf WHERE wf.farm_id IS NOT NULL
    UNION
    SELECT dm.farm_id FROM dirty_mark dm WHERE sqlc.narg(farm_id)::text IS NULL OR dm.farm_id = sqlc.narg(farm_id)::text
),
cap AS (
    SELECT coalesce(sqlc.narg(max_runs)::bigint, 10000) AS runs
)
SELECT f.farm_id::text AS farm_id,
       m.marks::bigint AS marks,
       m.readings::bigint AS mark_readings,
       m.days::date[] AS marked_days,
       w.windows::bigint AS windows,
       (w.runs > cap.runs)::boolean AS windows_capped,
       least(m.oldest, o.oldest)::timestamptz AS oldest_marked_at
FROM farms f
CROSS JOIN cap
CROSS JOIN LATERAL (
    SELECT count(*) AS marks, coalesce(sum(dm.readings), 0) AS readings,
           coalesce(array_agg(dm.day ORDER BY dm.day), '{}') AS days, min(dm.created_at) AS oldest
    FROM dirty_mark dm WHERE dm.farm_id = f.farm_id
) AS m
CROSS JOIN LATERAL (
    SELECT coalesce(sum(c.windows) FILTER (WHERE c.n <= cap.runs), 0) AS windows, count(*) AS runs
    FROM (SELECT dw.windows, row_number() OVER () AS n
          FROM dirty_window dw WHERE dw.farm_id = f.farm_id LIMIT cap.runs + 1) AS c
) AS w
CROSS JOIN LATERAL (
    SELECT min(x.marked_at) AS oldest
    FROM (SELECT dw.marked_at FROM dirty_window dw WHERE dw.farm_id = f.farm_id ORDER BY dw.marked_at LIMIT 1) AS x
) AS o
ORDER BY f.farm_id;
