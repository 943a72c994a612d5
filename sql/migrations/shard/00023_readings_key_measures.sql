-- +goose Up
-- readings_pkey covers every column a farm's windows read again: state,
-- power_kw and wind_ms too, so a contract farm's day (categories, energy) is
-- recomputed from the index alone — from the heap it cost three times the
-- day's statements before contracts (BENCHMARKS.md, "Rollups"). What made
-- the wide key cost 35 % more index than the narrow one was a NULL state:
-- an index entry with a NULL carries a null bitmap and is 8 bytes longer.
-- A reading without a state is now stored with '' (the writers say so; the
-- column's default), and its entry is 18 % larger than the narrow key's
-- instead. Readings stored before keep their NULL (the same "none" to every
-- reader; retention ages them out). Rebuilding the key takes an ACCESS
-- EXCLUSIVE lock on readings (docs/dba.md, "Upgrading").
ALTER TABLE readings ALTER COLUMN state SET DEFAULT '';
ALTER TABLE readings DROP CONSTRAINT readings_pkey;
ALTER TABLE readings ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at)
    INCLUDE (received_at, available, power_kw, wind_ms, state);
COMMENT ON COLUMN readings.state IS 'The controller''s status code as sent; '''' (or NULL, in readings stored before '''' was the writers'' "none"): none. The farm''s availability contract maps it to a category.';
-- '' and NULL are both "no state" (and a state code is never '': the fleet
-- file refuses it); a test of p_state <> '' is no array search a reading.
CREATE OR REPLACE FUNCTION reading_category_key(p_available boolean, p_state text, p_wind real,
                                                state_codes text[], state_keys integer[],
                                                key_available integer, key_unavailable integer, key_environment integer,
                                                cut_in float8, cut_out float8)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(CASE WHEN p_state <> '' THEN state_keys[array_position(state_codes, p_state)] END,
                least(CASE WHEN p_available THEN key_available ELSE key_unavailable END,
                      CASE WHEN p_wind < cut_in OR p_wind >= cut_out THEN key_environment END));

-- +goose Down
CREATE OR REPLACE FUNCTION reading_category_key(p_available boolean, p_state text, p_wind real,
                                                state_codes text[], state_keys integer[],
                                                key_available integer, key_unavailable integer, key_environment integer,
                                                cut_in float8, cut_out float8)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN coalesce(CASE WHEN p_state IS NOT NULL THEN state_keys[array_position(state_codes, p_state)] END,
                least(CASE WHEN p_available THEN key_available ELSE key_unavailable END,
                      CASE WHEN p_wind < cut_in OR p_wind >= cut_out THEN key_environment END));
COMMENT ON COLUMN readings.state IS 'The controller''s status code as sent (NULL: none); the farm''s availability contract maps it to a category.';
ALTER TABLE readings DROP CONSTRAINT readings_pkey;
ALTER TABLE readings ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at) INCLUDE (received_at, available);
ALTER TABLE readings ALTER COLUMN state DROP DEFAULT;
