-- +goose Up
-- The stalled-turbine watcher (its job: speak up "when one turbine sits at
-- zero output for a minute while its neighbours turn"). The fast path
-- judges each farm window it publishes (StallJudge): a turbine is stalled
-- in it when every slot it reported says available, yet its highest power
-- is at or under power_floor_kw, while the farm's median wind (over its
-- turbines' mean winds in the window) is within [wind_min_ms, wind_max_ms],
-- its own mean wind is at least wind_min_ms, and more than neighbours_pm per mille of the farm's other turbines with
-- readings produced above the floor. One open turbine_stall per turbine;
-- it is cleared by the first window in which the turbine produces again.
CREATE TABLE stall_watch (
    id             boolean PRIMARY KEY DEFAULT true CHECK (id),
    power_floor_kw real NOT NULL DEFAULT 1 CHECK (power_floor_kw >= 0),
    wind_min_ms    real NOT NULL DEFAULT 4 CHECK (wind_min_ms >= 0),
    wind_max_ms    real NOT NULL DEFAULT 25 CHECK (wind_max_ms > wind_min_ms),
    neighbours_pm  integer NOT NULL DEFAULT 500 CHECK (neighbours_pm BETWEEN 0 AND 1000),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO stall_watch DEFAULT VALUES;
COMMENT ON TABLE stall_watch IS 'The stalled-turbine watcher''s thresholds (one row; a DBA may UPDATE it). They define alerts, not stored counts. docs/operator.md: The stalled-turbine watcher.';
COMMENT ON COLUMN stall_watch.id IS 'Always true: the table holds one row.';
COMMENT ON COLUMN stall_watch.power_floor_kw IS 'A turbine whose highest power in a window is at or under this produced nothing in it.';
COMMENT ON COLUMN stall_watch.wind_min_ms IS 'The operating range''s low end: under it the farm''s median wind, or the turbine''s own, is too calm to expect production.';
COMMENT ON COLUMN stall_watch.wind_max_ms IS 'The operating range''s high end: over it turbines may stop for the wind (cut-out).';
COMMENT ON COLUMN stall_watch.neighbours_pm IS 'More than this many per mille of the farm''s other turbines with readings must produce for a turbine at zero to be stalled.';
COMMENT ON COLUMN stall_watch.updated_at IS 'When the thresholds were last changed.';

CREATE TABLE turbine_stall (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    farm_id        text NOT NULL REFERENCES farm (id),
    turbine_id     text NOT NULL,
    first_window   timestamptz NOT NULL,
    last_window    timestamptz NOT NULL,
    windows        integer NOT NULL DEFAULT 1 CHECK (windows > 0),
    raised_at      timestamptz NOT NULL,
    cleared_at     timestamptz,
    cleared_window timestamptz,
    detail         jsonb NOT NULL,
    message        text NOT NULL
);
CREATE UNIQUE INDEX turbine_stall_open_idx ON turbine_stall (turbine_id) WHERE cleared_at IS NULL;
CREATE INDEX turbine_stall_farm_idx ON turbine_stall (farm_id, raised_at);
COMMENT ON TABLE turbine_stall IS 'Stalled turbines: available, producing nothing, while the farm''s wind is in range and its neighbours produce (stall_watch). One row per stall, open until the turbine produces again; kept after it clears. Written by the fast path (StallJudge).';
COMMENT ON COLUMN turbine_stall.id IS 'Identity.';
COMMENT ON COLUMN turbine_stall.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN turbine_stall.turbine_id IS 'The stalled turbine.';
COMMENT ON COLUMN turbine_stall.first_window IS 'Start of the first window it was stalled in.';
COMMENT ON COLUMN turbine_stall.last_window IS 'Start of the latest window it was stalled in.';
COMMENT ON COLUMN turbine_stall.windows IS 'How many windows it was judged stalled in.';
COMMENT ON COLUMN turbine_stall.raised_at IS 'When the fast path raised it (its clock).';
COMMENT ON COLUMN turbine_stall.cleared_at IS 'When it was cleared (the turbine produced again); NULL while open.';
COMMENT ON COLUMN turbine_stall.cleared_window IS 'Start of the window in which it produced again.';
COMMENT ON COLUMN turbine_stall.detail IS 'What the latest judgement measured: the turbine''s highest power and mean wind, the farm''s median wind, how many other turbines produced of how many, the thresholds.';
COMMENT ON COLUMN turbine_stall.message IS 'One line for an operator.';
GRANT SELECT ON stall_watch, turbine_stall TO galewatch_reporting;

-- +goose Down
DROP TABLE turbine_stall;
DROP TABLE stall_watch;
