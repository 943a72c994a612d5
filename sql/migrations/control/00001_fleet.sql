-- +goose Up
-- The fleet registry: which shards exist, which farms (with their IANA time
-- zone) and which turbines, and which shard holds each turbine's readings.

CREATE TABLE shard (
    name        text PRIMARY KEY,
    dsn         text,
    database    text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE shard IS 'A readings shard. Each holds the readings of the turbines routed to it.';
COMMENT ON COLUMN shard.name IS 'Shard name as written in the fleet file (s1, s2, ...).';
COMMENT ON COLUMN shard.dsn IS 'Connection string of the shard database; NULL means a database of the control server (the embedded default).';
COMMENT ON COLUMN shard.database IS 'Database name on the control server when dsn is NULL; informational otherwise.';

CREATE TABLE farm (
    id               text PRIMARY KEY,
    name             text NOT NULL,
    timezone         text NOT NULL,
    cadence_seconds  integer NOT NULL DEFAULT 2 CHECK (cadence_seconds > 0),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE farm IS 'A wind farm. Its days are local days in its time zone.';
COMMENT ON COLUMN farm.timezone IS 'IANA time zone (Europe/London); days, months and expected counts follow it.';
COMMENT ON COLUMN farm.cadence_seconds IS 'Default reporting cadence of the farm''s turbines, in seconds.';

CREATE TABLE turbine (
    id                 text PRIMARY KEY,
    farm_id            text NOT NULL REFERENCES farm (id),
    shard_name         text NOT NULL REFERENCES shard (name),
    cadence_seconds    integer NOT NULL DEFAULT 2 CHECK (cadence_seconds > 0),
    commissioned_at    timestamptz,
    decommissioned_at  timestamptz,
    in_fleet_file      boolean NOT NULL DEFAULT true,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK (decommissioned_at IS NULL OR commissioned_at IS NULL OR decommissioned_at > commissioned_at)
);
CREATE INDEX turbine_farm_idx ON turbine (farm_id, shard_name, id);
COMMENT ON TABLE turbine IS 'A turbine, the farm it belongs to and the shard that holds its readings.';
COMMENT ON COLUMN turbine.cadence_seconds IS 'Seconds between readings; expected readings per day = seconds in service that day / cadence.';
COMMENT ON COLUMN turbine.commissioned_at IS 'Start of service; NULL = always. Expected counts are clipped to [commissioned_at, decommissioned_at).';
COMMENT ON COLUMN turbine.decommissioned_at IS 'End of service; NULL = in service. Set automatically when a turbine disappears from the fleet file.';
COMMENT ON COLUMN turbine.in_fleet_file IS 'False once the turbine was removed from the fleet file (its history is kept).';

-- +goose Down
DROP TABLE turbine;
DROP TABLE farm;
DROP TABLE shard;
