-- +goose Up
-- Readings, one row per turbine per cadence slot, range-partitioned by UTC day
-- on the turbine's own clock (recorded_at). The primary key refuses a
-- re-delivered reading; it INCLUDEs the two columns the rollup reads besides
-- the key so that one turbine's day can be recomputed from the index alone
-- (see docs/design.md, "Covering key").
CREATE TABLE readings (
    turbine_id   text COLLATE "C" NOT NULL,
    recorded_at  timestamptz NOT NULL,
    received_at  timestamptz NOT NULL,
    available    boolean NOT NULL,
    power_kw     real NOT NULL,
    wind_ms      real NOT NULL,
    PRIMARY KEY (turbine_id, recorded_at) INCLUDE (received_at, available)
) PARTITION BY RANGE (recorded_at);
COMMENT ON TABLE readings IS 'Raw readings, partitioned by UTC day of recorded_at (readings_pYYYYMMDD).';
COMMENT ON COLUMN readings.recorded_at IS 'Event time: the turbine''s own, possibly wrong, clock.';
COMMENT ON COLUMN readings.received_at IS 'Processing time: stamped by the ingest box (or by our ingest when absent).';

-- readings_ensure_partition creates the partition of one UTC day if it does
-- not exist yet and reports whether it did. Safe to call concurrently.
-- +goose StatementBegin
CREATE FUNCTION readings_ensure_partition(p_day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    part text := 'readings_p' || to_char(p_day, 'YYYYMMDD');
BEGIN
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('galewatch.readings_ensure_partition'));
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- CREATE ... PARTITION OF would take an ACCESS EXCLUSIVE lock on
    -- readings and queue every live COPY behind any running rollup. Creating
    -- the table, then attaching it, takes only SHARE UPDATE EXCLUSIVE on the
    -- parent. lock_timeout turns a long wait into an error the writer reports.
    PERFORM set_config('lock_timeout', '10s', true);
    EXECUTE format('CREATE TABLE %I (LIKE readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
    EXECUTE format('ALTER TABLE readings ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   part,
                   (p_day::timestamp AT TIME ZONE 'UTC'),
                   ((p_day + 1)::timestamp AT TIME ZONE 'UTC'));
    RETURN true;
END
$$;
-- +goose StatementEnd

-- readings_drop_partitions_before drops whole partitions of days before
-- p_day (retention) and returns how many it dropped.
-- +goose StatementBegin
CREATE FUNCTION readings_drop_partitions_before(p_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    part record;
    dropped integer := 0;
BEGIN
    -- DROP takes an ACCESS EXCLUSIVE lock on readings: give up (and try at
    -- the next upkeep) rather than hold live writes behind it.
    PERFORM set_config('lock_timeout', '5s', true);
    FOR part IN
        SELECT c.relname
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'readings'::regclass
          AND c.relname ~ '^readings_p[0-9]{8}$'
          AND to_date(substr(c.relname, 11), 'YYYYMMDD') < p_day
        ORDER BY c.relname
    LOOP
        EXECUTE format('DROP TABLE %I', part.relname);
        dropped := dropped + 1;
    END LOOP;
    RETURN dropped;
END
$$;
-- +goose StatementEnd

-- A dirty mark says: readings landed in this farm-local day after it may
-- already have been rolled up (or a window of it published). It is written in
-- the same transaction as the readings and merged per (farm, day), so a long
-- replay leaves one mark per farm-day on this shard, not one per row.
CREATE TABLE dirty_mark (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    farm_id            text NOT NULL,
    day                date NOT NULL,
    turbine_ids        text[] NOT NULL,
    first_recorded_at  timestamptz NOT NULL,
    last_recorded_at   timestamptz NOT NULL,
    readings           bigint NOT NULL,
    version            bigint NOT NULL DEFAULT 1,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (farm_id, day)
);
COMMENT ON TABLE dirty_mark IS 'Farm-days touched by late inserts on this shard, waiting to be recomputed. Written in the same transaction as the readings; deleted only after the recompute job is committed.';
COMMENT ON COLUMN dirty_mark.turbine_ids IS 'Turbines whose readings landed (sorted, distinct).';
COMMENT ON COLUMN dirty_mark.first_recorded_at IS 'Earliest event time touched.';
COMMENT ON COLUMN dirty_mark.last_recorded_at IS 'Latest event time touched.';
COMMENT ON COLUMN dirty_mark.readings IS 'Readings inserted under this mark (duplicates excluded).';
COMMENT ON COLUMN dirty_mark.version IS 'Bumped on every merge; the drainer deletes a mark only at the version it enqueued.';

-- +goose Down
DROP TABLE dirty_mark;
DROP FUNCTION readings_drop_partitions_before(date);
DROP FUNCTION readings_ensure_partition(date);
DROP TABLE readings;
