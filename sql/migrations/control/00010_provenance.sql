-- +goose Up
-- Provenance: for any window, day or a farm's latest tile, the number and
-- where it came from. One home: window_provenance picks the row a reader
-- should see (final when there is one, else fast); the others build on it.
CREATE VIEW window_provenance AS
SELECT DISTINCT ON (fw.farm_id, fw.window_start)
       fw.farm_id, fw.window_start, fw.window_end, fw.day, fw.path,
       fw.expected, fw.received, fw.available, fw.late,
       fw.computed_at, fw.complete_through, fw.revision,
       (EXISTS (SELECT 1 FROM rollup_pending p WHERE p.farm_id = fw.farm_id AND p.day = fw.day)
        OR coalesce(rollup_day_unfinished(fw.farm_id, fw.day), false))::boolean AS pending
FROM farm_window fw
ORDER BY fw.farm_id, fw.window_start, (fw.path = 'final') DESC;
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

-- Per farm-day, the sum of its windows as shown: final only when every
-- window published so far has a final row.
CREATE VIEW day_provenance AS
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

-- Freshness per farm: how far behind the clock its numbers are,
-- from the fast path's watermark.
CREATE VIEW farm_freshness AS
SELECT f.id AS farm_id,
       max(fw.window_end)::timestamptz AS published_through,
       max(fw.complete_through)::timestamptz AS complete_through,
       max(fw.computed_at)::timestamptz AS last_published_at,
       extract(epoch FROM now() - max(fw.complete_through))::double precision AS behind_s
FROM farm f
LEFT JOIN farm_window fw ON fw.farm_id = f.id AND fw.path = 'fast'
GROUP BY f.id;
COMMENT ON VIEW farm_freshness IS 'Per farm: the end of its last published window, the watermark it was published at, and now() - that watermark in seconds (behind_s). A farm whose behind grows is not being published (its shard down, the fast path stopped).';
COMMENT ON COLUMN farm_freshness.farm_id IS 'The farm.';
COMMENT ON COLUMN farm_freshness.published_through IS 'End of the last window published (fast).';
COMMENT ON COLUMN farm_freshness.complete_through IS 'The latest watermark published at.';
COMMENT ON COLUMN farm_freshness.last_published_at IS 'When the fast path last published for this farm.';
COMMENT ON COLUMN farm_freshness.behind_s IS 'now() - complete_through, in seconds (NULL before the first publication).';

-- Publish lag per window: how long after its watermark (end + allowed
-- lateness) the fast row was written.
CREATE VIEW publish_lag AS
SELECT fw.farm_id, fw.window_start, fw.window_end, fw.computed_at AS published_at,
       extract(epoch FROM fw.computed_at - fw.complete_through)::integer AS allowed_lateness_s,
       (extract(epoch FROM fw.complete_through - fw.window_end) * 1000)::bigint AS lag_ms
FROM farm_window fw
WHERE fw.path = 'fast';
COMMENT ON VIEW publish_lag IS 'Per published window: published_at - (window_end + allowed lateness), the delay of the fast path beyond its watermark.';
COMMENT ON COLUMN publish_lag.farm_id IS 'The farm.';
COMMENT ON COLUMN publish_lag.window_start IS 'Window start.';
COMMENT ON COLUMN publish_lag.window_end IS 'Window end.';
COMMENT ON COLUMN publish_lag.published_at IS 'When the fast row was written.';
COMMENT ON COLUMN publish_lag.allowed_lateness_s IS 'The allowed lateness it was published with.';
COMMENT ON COLUMN publish_lag.lag_ms IS 'How long after end + allowed lateness it was published, ms.';

-- +goose Down
DROP VIEW publish_lag;
DROP VIEW farm_freshness;
DROP VIEW day_provenance;
DROP VIEW window_provenance;
