-- +goose Up
-- A farm window's sum counts the turbine_window rows it sums (turbines),
-- but not whether they are all of the window: after a window rule change,
-- a turbine's row of the old grid can start where the new window starts
-- (12:00-12:01 beside 12:00-12:10). A correction took such a window as
-- whole and summed the two grids into one part and final row. span_s, the
-- rows' lengths added up, says it: a window is whole on its grid when
-- span_s = turbines x its length. Kept by the same statements as the other
-- sums; the existing rows are summed here once.
ALTER TABLE farm_window_sum ADD COLUMN span_s bigint NOT NULL DEFAULT 0;
UPDATE farm_window_sum fs
SET span_s = t.span_s
FROM (SELECT tw.farm_id, tw.window_start, sum(extract(epoch FROM tw.window_end - tw.window_start))::bigint AS span_s
      FROM turbine_window tw
      GROUP BY tw.farm_id, tw.window_start) t
WHERE fs.farm_id = t.farm_id AND fs.window_start = t.window_start;
COMMENT ON COLUMN farm_window_sum.span_s IS 'The summed turbine_window rows'' lengths, in seconds, added up: the window is whole on its grid when span_s = turbines x (window_end - window_start).';

-- +goose Down
ALTER TABLE farm_window_sum DROP COLUMN span_s;
