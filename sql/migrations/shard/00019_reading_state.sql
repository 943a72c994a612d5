-- +goose Up
-- A reading may carry its controller's status code (state), which an
-- availability contract maps to an IEC 61400-26 category. The covering key
-- grows to every column the rollups read (state, power_kw and wind_ms for the
-- categories, the lost energy and the stalled-turbine watcher), so a turbine's
-- day is still recomputed from the index alone: a rollup that reads one column
-- from the heap costs 2.5 times as much (docs/design.md, "Covering key").
-- Rebuilding the key takes an ACCESS EXCLUSIVE lock on readings while every
-- partition's index is built again (docs/dba.md, "Upgrading").
ALTER TABLE readings ADD COLUMN state text;
ALTER TABLE readings_staging ADD COLUMN state text;
ALTER TABLE readings DROP CONSTRAINT readings_pkey;
ALTER TABLE readings ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at)
    INCLUDE (received_at, available, state, power_kw, wind_ms);
COMMENT ON COLUMN readings.state IS 'The controller''s status code as sent (NULL: none); the farm''s availability contract maps it to a category.';

-- +goose Down
ALTER TABLE readings DROP CONSTRAINT readings_pkey;
ALTER TABLE readings ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at) INCLUDE (received_at, available);
ALTER TABLE readings_staging DROP COLUMN state;
ALTER TABLE readings DROP COLUMN state;
