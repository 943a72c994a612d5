-- +goose Up
-- readings_pkey covers again only what every farm's windows read
-- (received_at, available; TurbineWindowUpsertCounts), not state, power_kw
-- and wind_ms. The wider key made every reading's index entry 35 % larger
-- and its insert 6-11 % slower (3,000,000 rows, alternating), and at the
-- design load the soak's replay then timed a fast-path window out on a
-- shard; the farms whose windows read those columns (a contract that maps
-- states or has a wind range, a power curve, an event) read them from the
-- heap in their recompute instead (BENCHMARKS.md, "Rollups"). Rebuilding
-- the key takes an ACCESS EXCLUSIVE lock on readings (docs/dba.md,
-- "Upgrading").
ALTER TABLE readings DROP CONSTRAINT readings_pkey;
ALTER TABLE readings ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at) INCLUDE (received_at, available);

-- +goose Down
ALTER TABLE readings DROP CONSTRAINT readings_pkey;
ALTER TABLE readings ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at)
    INCLUDE (received_at, available, state, power_kw, wind_ms);
