-- +goose Up
-- Each turbine_window row records a fingerprint of the readings it was
-- counted from, computed in the same statement as its counts
-- (TurbineWindowUpsert): the sum over those readings of the top 40 bits of
-- a 64-bit hash of (recorded_at, available). A sum is order-independent
-- and adds up: a day's is the sum of its windows', and a reading deleted,
-- added or edited changes it. 40 bits keep a day's sum inside a bigint.
-- Its companion, the number of readings, is received + beyond_cadence +
-- out_of_service.
ALTER TABLE turbine_window ADD COLUMN input_hash bigint;
COMMENT ON COLUMN turbine_window.input_hash IS 'Order-independent fingerprint of the readings counted in this row: sum of input_fingerprint(recorded_at, available). NULL: computed before fingerprints existed.';

-- +goose StatementBegin
CREATE FUNCTION input_fingerprint(p_recorded_at timestamptz, p_available boolean) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT timestamp_hash_extended(p_recorded_at AT TIME ZONE 'UTC', p_available::integer::bigint) >> 24
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION input_fingerprint(timestamptz, boolean) IS 'One reading''s share of a fingerprint: the top 40 bits of a 64-bit hash of its recorded_at (as UTC, so no session setting changes it) seeded by its available flag.';

-- +goose Down
DROP FUNCTION input_fingerprint(timestamptz, boolean);
ALTER TABLE turbine_window DROP COLUMN input_hash;
