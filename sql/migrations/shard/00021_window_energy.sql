-- +goose Up
-- Energy per information category of a turbine-window (Wh): actual, each
-- slot's reading's power × the cadence; potential, the farm's power curve
-- (control's model_curve_lut, passed to TurbineWindowUpsert) at the slot's
-- wind × the cadence.
ALTER TABLE turbine_window ADD COLUMN category_actual_wh bigint[], ADD COLUMN category_potential_wh bigint[];
COMMENT ON COLUMN turbine_window.category_actual_wh IS 'Energy produced per category (Wh, indexed by the control database''s availability_category.id). NULL: computed before energy.';
COMMENT ON COLUMN turbine_window.category_potential_wh IS 'Energy the farm''s power curve gives per category at the slots'' own wind (Wh). NULL: no model, or computed before energy.';

-- curve_kw is a power curve sampled every 0.01 m/s from 0 (model_curve_lut)
-- at wind p_wind rounded to 0.01 m/s (one array read a reading: the
-- interpolation between samples cost as much as the rest of the energy);
-- 0 outside [0, 30) m/s.
CREATE FUNCTION curve_kw(p_wind real, p_lut float8[]) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN p_wind >= 0 AND p_wind < 29.995 THEN p_lut[(p_wind * 100)::integer + 1] ELSE 0 END;
COMMENT ON FUNCTION curve_kw(real, float8[]) IS 'Power (kW) of a curve sampled every 0.01 m/s from 0 to 30 (control''s model_curve_lut) at wind p_wind rounded to 0.01 m/s: the curve itself for a wind given to 0.01 m/s and a curve whose points are on that grid; 0 below 0 or from 30 m/s. NULL when p_lut is NULL (no model).';

-- +goose Down
DROP FUNCTION curve_kw(real, float8[]);
ALTER TABLE turbine_window DROP COLUMN category_actual_wh, DROP COLUMN category_potential_wh;
