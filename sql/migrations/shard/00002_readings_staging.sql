-- +goose Up
-- The shape of a batch staged for de-duplication. Never written: each writer
-- session creates a temporary table of the same name (LIKE this one), which
-- shadows it. The CHECK makes an accidental write here fail loudly.
CREATE TABLE readings_staging (
    turbine_id   text COLLATE "C" NOT NULL,
    recorded_at  timestamptz NOT NULL,
    received_at  timestamptz NOT NULL,
    available    boolean NOT NULL,
    power_kw     real NOT NULL,
    wind_ms      real NOT NULL,
    CONSTRAINT readings_staging_is_a_template CHECK (false) NO INHERIT
);
COMMENT ON TABLE readings_staging IS 'Template of the per-session temporary staging table used when a batch hits duplicate keys. Always empty.';

-- +goose Down
DROP TABLE readings_staging;
