-- +goose Up
COMMENT ON COLUMN readings.turbine_id IS 'The turbine (turbine.id in the control database).';
COMMENT ON COLUMN readings.available IS 'The turbine reported itself available.';
COMMENT ON COLUMN readings.power_kw IS 'Active power, kW.';
COMMENT ON COLUMN readings.wind_ms IS 'Wind speed, m/s.';
COMMENT ON COLUMN dirty_mark.id IS 'Row id.';
COMMENT ON COLUMN dirty_mark.farm_id IS 'The farm (farm.id in the control database).';
COMMENT ON COLUMN dirty_mark.day IS 'The farm-local day dirtied.';
COMMENT ON COLUMN dirty_mark.created_at IS 'When the first reading of this mark landed.';
COMMENT ON COLUMN dirty_mark.updated_at IS 'When the mark was last widened.';

-- +goose Down
SELECT 1;
