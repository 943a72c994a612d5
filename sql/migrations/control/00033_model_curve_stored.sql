-- +goose Up
-- A model's sampled power curve is a fact of its row: turbine_model.curve_lut
-- is computed once, when the model is recorded, where FarmDayGet rebuilt it
-- (3,001 samples, a subquery each) on every call — and the fast path calls it
-- for every farm every round.
DROP FUNCTION model_curve_lut(bigint);
-- +goose StatementBegin
CREATE FUNCTION model_curve_lut(p_wind real[], p_power real[]) RETURNS float8[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(coalesce(
               (SELECT p_power[j] + (p_power[j + 1] - p_power[j]) * (g.w - p_wind[j]) / (p_wind[j + 1] - p_wind[j])
                FROM generate_subscripts(p_wind, 1) AS j
                WHERE j < cardinality(p_wind) AND p_wind[j] <= g.w AND g.w <= p_wind[j + 1]
                ORDER BY j LIMIT 1), 0)::float8 ORDER BY g.i)
    FROM (SELECT i, i / 100.0::float8 AS w FROM generate_series(0, 3000) AS i) AS g
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION model_curve_lut(real[], real[]) IS 'A power curve (wind speeds p_wind ascending, powers p_power in kW) sampled at 0, 0.01, ..., 30 m/s: linear between its points, 0 outside them. turbine_model.curve_lut stores it per model.';
ALTER TABLE turbine_model ADD COLUMN curve_lut float8[] GENERATED ALWAYS AS (model_curve_lut(wind_ms, power_kw)) STORED;
COMMENT ON COLUMN turbine_model.curve_lut IS 'The curve sampled every 0.01 m/s from 0 to 30 m/s (model_curve_lut; 3,001 kW values): the window statement''s curve argument, read by the shard''s curve_kw at the reading''s wind rounded to 0.01 m/s.';

-- +goose Down
ALTER TABLE turbine_model DROP COLUMN curve_lut;
DROP FUNCTION model_curve_lut(real[], real[]);
-- +goose StatementBegin
CREATE FUNCTION model_curve_lut(p_model bigint) RETURNS float8[]
LANGUAGE sql STABLE AS $$
    SELECT array_agg(coalesce(
               (SELECT m.power_kw[j] + (m.power_kw[j + 1] - m.power_kw[j]) * (g.w - m.wind_ms[j]) / (m.wind_ms[j + 1] - m.wind_ms[j])
                FROM generate_subscripts(m.wind_ms, 1) AS j
                WHERE j < cardinality(m.wind_ms) AND m.wind_ms[j] <= g.w AND g.w <= m.wind_ms[j + 1]
                ORDER BY j LIMIT 1), 0)::float8 ORDER BY g.i)
    FROM turbine_model m
    CROSS JOIN LATERAL (SELECT i, i / 100.0::float8 AS w FROM generate_series(0, 3000) AS i) AS g
    WHERE m.id = p_model
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION model_curve_lut(bigint) IS 'Model p_model''s power curve (kW) sampled at 0, 0.01, ..., 30 m/s: linear between its points, 0 outside them. TurbineWindowUpsert takes it as its curve argument.';
