-- +goose Up
-- /metrics reads each farm's dirty backlog on every scrape
-- (MetricsDirtyBacklog): the oldest marked turbine-window of a farm through
-- this index, and the windows counted through the key up to a bound, so a
-- scrape's cost does not grow with a replay's backlog.
CREATE INDEX dirty_window_farm_marked_idx ON dirty_window (farm_id, marked_at);

-- +goose Down
DROP INDEX dirty_window_farm_marked_idx;
