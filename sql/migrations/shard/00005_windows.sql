-- +goose Up
-- Per-turbine counts of one event-time window: the state every window and
-- day number is summed from. Windows are the farm's window rule (farm_rules.
-- window_s on the control database) counted from farm-local midnight; a
-- reading belongs to the window in which its cadence slot starts (the slot
-- rule of turbine_day), so a turbine's windows add up exactly to its day.
-- Written by the fast path when it publishes a window (every turbine of the
-- farm on this shard) and by rollup_day jobs (the windows marks name, and
-- the windows of an ended day that were never computed). Overwritten, never
-- incremented.
CREATE TABLE turbine_window (
    turbine_id        text NOT NULL,
    window_start      timestamptz NOT NULL,
    window_end        timestamptz NOT NULL,
    farm_id           text NOT NULL,
    day               date NOT NULL,
    expected          integer NOT NULL,
    received          integer NOT NULL,
    available         integer NOT NULL,
    beyond_cadence    integer NOT NULL,
    out_of_service    integer NOT NULL,
    late              integer NOT NULL,
    early             integer NOT NULL,
    min_lag_ms        bigint,
    max_lag_ms        bigint,
    last_received_at  timestamptz,
    computed_at       timestamptz NOT NULL,
    PRIMARY KEY (turbine_id, window_start)
);
CREATE INDEX turbine_window_farm_idx ON turbine_window (farm_id, window_start);
COMMENT ON TABLE turbine_window IS 'One row per turbine per event-time window: the counts of the slot rule (as turbine_day) for the slots that start in the window. A day''s windows add up to its turbine_day row.';
COMMENT ON COLUMN turbine_window.window_start IS 'Window start: farm-local midnight + k * window_s.';
COMMENT ON COLUMN turbine_window.window_end IS 'Window end (the day''s end for a last window cut short).';
COMMENT ON COLUMN turbine_window.day IS 'The farm-local day holding the window.';
COMMENT ON COLUMN turbine_window.expected IS 'Cadence slots of the turbine''s service time that start in the window.';
COMMENT ON COLUMN turbine_window.received IS 'Of those slots, the ones with a reading.';
COMMENT ON COLUMN turbine_window.available IS 'Of those slots, the ones none of whose readings says unavailable.';
COMMENT ON COLUMN turbine_window.beyond_cadence IS 'Readings in a slot already counted.';
COMMENT ON COLUMN turbine_window.out_of_service IS 'Readings in the window (by recorded_at) outside the turbine''s service interval.';
COMMENT ON COLUMN turbine_window.computed_at IS 'Clock of the computation that wrote the row.';

-- The (turbine, window) pairs dirtied by inserts that may have landed after
-- the window was published (the mark rule, docs/dirty-marks.md). Written in
-- the same transaction as the readings; claimed (deleted) by the
-- computation that recomputes them, in the same transaction as its read.
CREATE TABLE dirty_window (
    farm_id       text NOT NULL,
    day           date NOT NULL,
    turbine_id    text NOT NULL,
    window_start  timestamptz NOT NULL,
    window_end    timestamptz NOT NULL,
    marked_at     timestamptz NOT NULL,
    PRIMARY KEY (farm_id, day, turbine_id, window_start)
);
COMMENT ON TABLE dirty_window IS 'Turbine-windows touched by late inserts, waiting for their correction. Same transaction as the readings; deleted by the computation that reads them.';
COMMENT ON COLUMN dirty_window.marked_at IS 'Writer''s clock of the first insert that marked the pair.';

-- +goose Down
DROP TABLE dirty_window;
DROP TABLE turbine_window;
