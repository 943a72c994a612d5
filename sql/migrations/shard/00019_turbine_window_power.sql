-- +goose Up
-- What the stalled-turbine watcher reads (control's turbine_stall, fed by
-- the fast path): per turbine-window, the highest power reported and the
-- wind summed over its readings in service. Written by TurbineWindowUpsert
-- in the statement that counts the window.
ALTER TABLE turbine_window
    ADD COLUMN power_max_kw  real,
    ADD COLUMN wind_sum_ms   double precision NOT NULL DEFAULT 0,
    ADD COLUMN wind_readings integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN turbine_window.power_max_kw IS 'The highest power_kw of the window''s readings in service; NULL when it has none. A turbine reporting available whose highest power is at or under the watcher''s floor produced nothing (turbine_stall).';
COMMENT ON COLUMN turbine_window.wind_sum_ms IS 'The sum of wind_ms over the window''s readings in service (their mean: wind_sum_ms / wind_readings, computed at read time).';
COMMENT ON COLUMN turbine_window.wind_readings IS 'How many readings wind_sum_ms adds up (the window''s readings in service).';

-- +goose Down
ALTER TABLE turbine_window DROP COLUMN power_max_kw, DROP COLUMN wind_sum_ms, DROP COLUMN wind_readings;
