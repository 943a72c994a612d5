-- +goose Up
-- This shard's sums of each farm window over its turbine_window rows,
-- maintained in the same statement (and transaction) as every write of
-- turbine_window: the upsert adds the new rows and subtracts the rows they
-- replace, a delete subtracts what it removes. So a shard's part of a farm
-- window is read from one row instead of re-summing every turbine of the
-- farm each time one turbine changes. Closing a farm-day rebuilds its rows
-- from turbine_window and raises a window_sum alarm for any that differed
-- (rollup_day, "checkDay").
CREATE TABLE farm_window_sum (
    farm_id       text NOT NULL,
    window_start  timestamptz NOT NULL,
    window_end    timestamptz NOT NULL,
    day           date NOT NULL,
    turbines      integer NOT NULL,
    expected      bigint NOT NULL,
    received      bigint NOT NULL,
    available     bigint NOT NULL,
    late          bigint NOT NULL,
    readings      bigint NOT NULL,
    PRIMARY KEY (farm_id, window_start)
) WITH (fillfactor = 70);
COMMENT ON TABLE farm_window_sum IS 'Per farm window, the sums of this shard''s turbine_window rows (its part of the farm window), maintained by every write of turbine_window in the same statement. Rebuilt for a farm-day when the day is closed; a difference found then is a bug (window_sum alert).';
COMMENT ON COLUMN farm_window_sum.turbines IS 'turbine_window rows summed (0: none left; the row is ignored).';
COMMENT ON COLUMN farm_window_sum.readings IS 'Readings counted: received + beyond_cadence + out_of_service.';

INSERT INTO farm_window_sum (farm_id, window_start, window_end, day, turbines, expected, received, available, late, readings)
SELECT farm_id, window_start, max(window_end), max(day), count(*), sum(expected), sum(received), sum(available), sum(late),
       sum(received + beyond_cadence + out_of_service)
FROM turbine_window
GROUP BY farm_id, window_start;

-- Rows are rewritten in place by every correction: room on each page lets
-- the update stay on its page (HOT) without touching the indexes.
ALTER TABLE turbine_window SET (fillfactor = 70);

-- +goose Down
ALTER TABLE turbine_window RESET (fillfactor);
DROP TABLE farm_window_sum;
