-- +goose Up
-- A final day proves its input: each turbine_day row keeps the fingerprint
-- of the readings its counts were computed from, on its shard (the sum of
-- its windows' turbine_window.input_hash). `orchestrator verify` recomputes
-- it from the readings without writing.
ALTER TABLE turbine_day
    ADD COLUMN input_readings bigint,
    ADD COLUMN input_hash bigint;
COMMENT ON COLUMN turbine_day.input_readings IS 'Readings the counts were computed from (received + beyond_cadence + out_of_service), with input_hash the row''s input fingerprint. NULL: computed before fingerprints existed (recompute the day to fingerprint it).';
COMMENT ON COLUMN turbine_day.input_hash IS 'Order-independent hash of those readings'' (recorded_at, available) on shard_name: the sum of its windows'' turbine_window.input_hash. orchestrator verify recomputes it from the readings.';

-- +goose Down
ALTER TABLE turbine_day DROP COLUMN input_readings, DROP COLUMN input_hash;
