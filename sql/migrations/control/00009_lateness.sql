-- +goose Up
-- The buckets of the lag histogram (`orchestrator lateness`), defined once.
-- Lag is received_at - recorded_at in milliseconds. Each shard buckets its
-- readings with these bounds (the array is passed to it, as a day's bounds
-- are), and the control database merges the shards' histograms and reads
-- quantiles off the same buckets: per-shard percentiles cannot be merged,
-- histograms can.
--
-- Bucket i is [bounds[i], bounds[i+1]) (width_bucket's numbering; bucket 0
-- and the last one are open-ended). 1 ms wide within ±10 s; beyond, each
-- bound is floor(previous * 1.01), so a bucket is at most 1 % of the lag
-- wide, out to ±1000 days (about 23,200 bounds). Negative lags (a turbine
-- clock ahead) are bucketed the same way, mirrored.
-- +goose StatementBegin
CREATE FUNCTION lateness_lag_bounds_ms() RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH RECURSIVE coarse(b) AS (
        SELECT 10000::bigint
        UNION ALL
        SELECT floor(b * 1.01)::bigint FROM coarse WHERE b < 86400000000
    )
    SELECT array_agg(v ORDER BY v)
    FROM (SELECT -b AS v FROM coarse WHERE b > 10000
          UNION ALL
          SELECT generate_series(-10000::bigint, 10000::bigint)
          UNION ALL
          SELECT b FROM coarse WHERE b > 10000) AS s
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION lateness_lag_bounds_ms() IS 'Bucket bounds (ms) of the lag histogram of `orchestrator lateness`: 1 ms buckets within ±10 s, at most 1 % of the lag wide beyond, to ±1000 days. Bucket i is [bounds[i], bounds[i+1]), as width_bucket numbers them.';

-- +goose Down
DROP FUNCTION lateness_lag_bounds_ms();
