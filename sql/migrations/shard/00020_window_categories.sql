-- +goose Up
-- The slots of a turbine-window per information category (IEC 61400-26-1),
-- sorted by the availability contract of the farm-day (control's
-- availability_contract, passed to TurbineWindowUpsert as contract_keys).
ALTER TABLE turbine_window ADD COLUMN category_slots integer[];
COMMENT ON COLUMN turbine_window.category_slots IS 'Slots of the window per information category, indexed by the control database''s availability_category.id (13 elements, summing to expected). NULL: computed before categories.';

-- reading_category_key is the category of one reading under a contract,
-- as a key (control's contract_keys: priority rank * 16 + category id): a
-- state code the contract maps decides alone; otherwise the better (least)
-- of what its available flag says (full performance or forced outage) and,
-- when its wind is outside [cut_in, cut_out), out of environmental
-- specification. A slot's category is its readings' least key (% 16).
CREATE FUNCTION reading_category_key(p_available boolean, p_state text, p_wind real,
                                     state_codes text[], state_keys integer[],
                                     key_available integer, key_unavailable integer, key_environment integer,
                                     cut_in float8, cut_out float8)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(CASE WHEN p_state IS NOT NULL THEN state_keys[array_position(state_codes, p_state)] END,
                least(CASE WHEN p_available THEN key_available ELSE key_unavailable END,
                      CASE WHEN p_wind < cut_in OR p_wind >= cut_out THEN key_environment END));
COMMENT ON FUNCTION reading_category_key(boolean, text, real, text[], integer[], integer, integer, integer, float8, float8) IS
'The category key of one reading under a contract (the arguments after p_wind are control''s contract_keys): a mapped state code alone, else the least of its available flag''s (full performance / forced outage) and, with wind outside [cut_in, cut_out), out of environmental specification''s. Key = priority rank * 16 + availability_category.id; a slot is its readings'' least key.';

-- +goose Down
DROP FUNCTION reading_category_key(boolean, text, real, text[], integer[], integer, integer, integer, float8, float8);
ALTER TABLE turbine_window DROP COLUMN category_slots;
