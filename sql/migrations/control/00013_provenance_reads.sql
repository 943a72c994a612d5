-- +goose Up
-- The provenance views (00010), read for a month or a farm's latest window
-- by the status page and the API, with the same rows and columns as before
-- and a cost that does not grow with the farm's history:
--
-- * window_provenance picks its row per (farm, day, window) instead of per
--   (farm, window). A window's day is fixed by its start, so the rows are the
--   same; a filter on day (day_provenance, a month) now reaches farm_window's
--   (farm_id, day) index instead of sorting every window the farm ever had.
-- * pending is evaluated for the rows a query returns, not for every window
--   the view sorts, and once per day in day_provenance (it depends on the
--   farm-day only).
-- * farm_freshness reads each farm's latest fast window instead of
--   aggregating all of them: the fast path publishes a farm's windows in
--   order (each after the last one published, at a later watermark), so the
--   latest one carries the latest end, watermark and publication time (the
--   watermark: unless the allowed lateness was raised while the fast path
--   was more than a window behind; /metrics reads freshness the same way).
--
-- Measured on Ardnave Point with two months of 60 s windows (175,680 rows,
-- fast and final): a month of day_provenance 1.4 s -> 72 ms; the latest
-- window (ProvenanceTile) 1.3 s -> 0.8 ms; farm_freshness 30 ms -> 0.7 ms.
-- The old definitions grew with every window the farm ever had.

-- provenance_pending: a recompute of the farm-day is requested (a dirty
-- request waits in rollup_pending) or a rollup_day job for it is unfinished.
-- +goose StatementBegin
CREATE FUNCTION provenance_pending(p_farm text, p_day date) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM rollup_pending p WHERE p.farm_id = p_farm AND p.day = p_day)
           OR coalesce(rollup_day_unfinished(p_farm, p_day), false)
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION provenance_pending(text, date) IS 'True while a recompute of the farm-day is requested (rollup_pending) or a rollup_day job for it is unfinished: its numbers may still change. The pending column of window_provenance and day_provenance.';

CREATE OR REPLACE VIEW window_provenance AS
SELECT s.farm_id, s.window_start, s.window_end, s.day, s.path,
       s.expected, s.received, s.available, s.late,
       s.computed_at, s.complete_through, s.revision,
       provenance_pending(s.farm_id, s.day) AS pending
FROM (SELECT DISTINCT ON (fw.farm_id, fw.day, fw.window_start)
             fw.farm_id, fw.window_start, fw.window_end, fw.day, fw.path,
             fw.expected, fw.received, fw.available, fw.late,
             fw.computed_at, fw.complete_through, fw.revision
      FROM farm_window fw
      ORDER BY fw.farm_id, fw.day, fw.window_start, (fw.path = 'final') DESC) s;

CREATE OR REPLACE VIEW day_provenance AS
SELECT wp.farm_id, wp.day,
       min(wp.window_start)::timestamptz AS first_window_start, max(wp.window_end)::timestamptz AS last_window_end,
       count(*)::integer AS windows,
       (count(*) FILTER (WHERE wp.path = 'final'))::integer AS final_windows,
       CASE WHEN bool_and(wp.path = 'final') THEN 'final' ELSE 'fast' END AS path,
       sum(wp.expected)::bigint AS expected, sum(wp.received)::bigint AS received, sum(wp.available)::bigint AS available,
       max(wp.computed_at)::timestamptz AS computed_at, min(wp.complete_through)::timestamptz AS complete_through,
       sum(wp.revision)::bigint AS revision, provenance_pending(wp.farm_id, wp.day) AS pending
FROM window_provenance wp
GROUP BY wp.farm_id, wp.day;

CREATE OR REPLACE VIEW farm_freshness AS
SELECT f.id AS farm_id,
       fw.window_end::timestamptz AS published_through,
       fw.complete_through::timestamptz AS complete_through,
       fw.computed_at::timestamptz AS last_published_at,
       extract(epoch FROM now() - fw.complete_through)::double precision AS behind_s
FROM farm f
LEFT JOIN LATERAL (
    SELECT w.window_end, w.complete_through, w.computed_at
    FROM farm_window w
    WHERE w.farm_id = f.id AND w.path = 'fast'
    ORDER BY w.window_start DESC
    LIMIT 1
) fw ON true;

-- The comments again, unchanged (sqlc reads a replaced view as a new one).
COMMENT ON VIEW window_provenance IS 'Per farm window, the number to show: the final row when there is one, else the fast row; with its path, when it was computed, what it is complete through, its revision, and whether a recompute of its farm-day is requested or running.';
COMMENT ON COLUMN window_provenance.farm_id IS 'The farm.';
COMMENT ON COLUMN window_provenance.window_start IS 'Window start.';
COMMENT ON COLUMN window_provenance.window_end IS 'Window end.';
COMMENT ON COLUMN window_provenance.day IS 'The farm-local day.';
COMMENT ON COLUMN window_provenance.path IS 'fast or final: which path made this number.';
COMMENT ON COLUMN window_provenance.expected IS 'Expected slots (see farm_window).';
COMMENT ON COLUMN window_provenance.received IS 'Received slots.';
COMMENT ON COLUMN window_provenance.available IS 'Available slots.';
COMMENT ON COLUMN window_provenance.late IS 'Readings that came in the backfill lane.';
COMMENT ON COLUMN window_provenance.computed_at IS 'When the row was written.';
COMMENT ON COLUMN window_provenance.complete_through IS 'The watermark it is complete through (computed_at - allowed lateness).';
COMMENT ON COLUMN window_provenance.revision IS '0 for fast; the final row''s revision.';
COMMENT ON COLUMN window_provenance.pending IS 'A recompute of the farm-day is requested or running. Marks written in the last seconds and not yet drained are on the shards (dirty_window), not counted here.';
COMMENT ON VIEW day_provenance IS 'Per farm-day, the sum of its windows as window_provenance shows them: path final only when every window so far has a final row. turbine_day/farm_day hold the closed day''s rows.';
COMMENT ON COLUMN day_provenance.farm_id IS 'The farm.';
COMMENT ON COLUMN day_provenance.day IS 'The farm-local day.';
COMMENT ON COLUMN day_provenance.first_window_start IS 'Start of its first window shown.';
COMMENT ON COLUMN day_provenance.last_window_end IS 'End of its last window shown.';
COMMENT ON COLUMN day_provenance.windows IS 'Windows shown.';
COMMENT ON COLUMN day_provenance.final_windows IS 'Of those, windows with a final row.';
COMMENT ON COLUMN day_provenance.path IS 'final when every window shown is final, else fast.';
COMMENT ON COLUMN day_provenance.expected IS 'Sum of the windows'' expected.';
COMMENT ON COLUMN day_provenance.received IS 'Sum of the windows'' received.';
COMMENT ON COLUMN day_provenance.available IS 'Sum of the windows'' available.';
COMMENT ON COLUMN day_provenance.computed_at IS 'Latest computed_at of its windows.';
COMMENT ON COLUMN day_provenance.complete_through IS 'Earliest complete_through of its windows: the day is complete through this watermark.';
COMMENT ON COLUMN day_provenance.revision IS 'Sum of its windows'' revisions.';
COMMENT ON COLUMN day_provenance.pending IS 'A recompute of the day is requested or running.';
COMMENT ON VIEW farm_freshness IS 'Per farm: the end of its last published window, the watermark it was published at, and now() - that watermark in seconds (behind_s). A farm whose behind grows is not being published (its shard down, the fast path stopped).';
COMMENT ON COLUMN farm_freshness.farm_id IS 'The farm.';
COMMENT ON COLUMN farm_freshness.published_through IS 'End of the last window published (fast).';
COMMENT ON COLUMN farm_freshness.complete_through IS 'The latest watermark published at.';
COMMENT ON COLUMN farm_freshness.last_published_at IS 'When the fast path last published for this farm.';
COMMENT ON COLUMN farm_freshness.behind_s IS 'now() - complete_through, in seconds (NULL before the first publication).';

-- +goose Down
CREATE OR REPLACE VIEW farm_freshness AS
SELECT f.id AS farm_id,
       max(fw.window_end)::timestamptz AS published_through,
       max(fw.complete_through)::timestamptz AS complete_through,
       max(fw.computed_at)::timestamptz AS last_published_at,
       extract(epoch FROM now() - max(fw.complete_through))::double precision AS behind_s
FROM farm f
LEFT JOIN farm_window fw ON fw.farm_id = f.id AND fw.path = 'fast'
GROUP BY f.id;

CREATE OR REPLACE VIEW day_provenance AS
SELECT wp.farm_id, wp.day,
       min(wp.window_start)::timestamptz AS first_window_start, max(wp.window_end)::timestamptz AS last_window_end,
       count(*)::integer AS windows,
       (count(*) FILTER (WHERE wp.path = 'final'))::integer AS final_windows,
       CASE WHEN bool_and(wp.path = 'final') THEN 'final' ELSE 'fast' END AS path,
       sum(wp.expected)::bigint AS expected, sum(wp.received)::bigint AS received, sum(wp.available)::bigint AS available,
       max(wp.computed_at)::timestamptz AS computed_at, min(wp.complete_through)::timestamptz AS complete_through,
       sum(wp.revision)::bigint AS revision, bool_or(wp.pending) AS pending
FROM window_provenance wp
GROUP BY wp.farm_id, wp.day;

CREATE OR REPLACE VIEW window_provenance AS
SELECT DISTINCT ON (fw.farm_id, fw.window_start)
       fw.farm_id, fw.window_start, fw.window_end, fw.day, fw.path,
       fw.expected, fw.received, fw.available, fw.late,
       fw.computed_at, fw.complete_through, fw.revision,
       (EXISTS (SELECT 1 FROM rollup_pending p WHERE p.farm_id = fw.farm_id AND p.day = fw.day)
        OR coalesce(rollup_day_unfinished(fw.farm_id, fw.day), false))::boolean AS pending
FROM farm_window fw
ORDER BY fw.farm_id, fw.window_start, (fw.path = 'final') DESC;

DROP FUNCTION provenance_pending(text, date);
