-- +goose Up
-- Each turbine_window row records a fingerprint of the readings it was
-- counted from, computed in the same statement as its counts
-- (TurbineWindowUpsert): the sum over those readings of a 32-bit hash of
-- (recorded_at, available). A sum is order-independent and adds up: a
-- day's is the sum of its windows', and a reading deleted, added or edited
-- changes it. Its companion, the number of readings, is received +
-- beyond_cadence + out_of_service.
ALTER TABLE turbine_window ADD COLUMN input_hash bigint;
COMMENT ON COLUMN turbine_window.input_hash IS 'Order-independent fingerprint of the readings counted in this row: sum of input_fingerprint(recorded_at, available). NULL: computed before fingerprints existed.';

-- The hash of an instant is of its distance from the epoch (an interval:
-- no time zone or session setting enters it), its last bit flipped for an
-- available reading. The cheapest hash of a reading Postgres has: the
-- fingerprint is computed for every reading the farm-day statements read.
-- +goose StatementBegin
CREATE FUNCTION input_fingerprint(p_recorded_at timestamptz, p_available boolean) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT interval_hash(p_recorded_at - timestamptz 'epoch') # p_available::integer
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION input_fingerprint(timestamptz, boolean) IS 'One reading''s share of a fingerprint: a 32-bit hash of its recorded_at (as its distance from the epoch, so no session setting changes it), the last bit flipped when it says available.';

-- +goose Down
DROP FUNCTION input_fingerprint(timestamptz, boolean);
ALTER TABLE turbine_window DROP COLUMN input_hash;
