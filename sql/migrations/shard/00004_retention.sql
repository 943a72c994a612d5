-- +goose Up
-- Retention drops whole partitions. What was dropped is remembered, so a
-- recompute can tell a day whose readings are gone from a day with none.
CREATE TABLE readings_retention (
    id              boolean PRIMARY KEY DEFAULT true CHECK (id),
    dropped_before  timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE readings_retention IS 'One row once retention has dropped a partition: readings recorded before dropped_before may be gone, so a day that starts before it can no longer be recomputed.';
COMMENT ON COLUMN readings_retention.id IS 'Always true: the table holds at most one row.';
COMMENT ON COLUMN readings_retention.dropped_before IS 'End of the latest partition retention dropped: readings before it are gone.';
COMMENT ON COLUMN readings_retention.updated_at IS 'When retention last dropped a partition.';

DROP FUNCTION readings_drop_partitions_before(date);

-- readings_drop_partitions_before drops the partitions whose whole UTC day
-- ends at or before p_before (the start of the oldest farm-local day kept,
-- over every farm, so no kept farm-local day loses a partition), records the
-- latest end dropped, and returns how many partitions it dropped.
-- +goose StatementBegin
CREATE FUNCTION readings_drop_partitions_before(p_before timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    part record;
    dropped integer := 0;
    part_end timestamptz;
    latest timestamptz;
BEGIN
    -- DROP takes an ACCESS EXCLUSIVE lock on readings: give up (and try at
    -- the next upkeep) rather than hold live writes behind it.
    PERFORM set_config('lock_timeout', '5s', true);
    FOR part IN
        SELECT c.relname, to_date(substr(c.relname, 11), 'YYYYMMDD') AS day
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'readings'::regclass
          AND c.relname ~ '^readings_p[0-9]{8}$'
        ORDER BY c.relname
    LOOP
        part_end := (part.day + 1)::timestamp AT TIME ZONE 'UTC';
        CONTINUE WHEN part_end > p_before;
        EXECUTE format('DROP TABLE %I', part.relname);
        dropped := dropped + 1;
        latest := greatest(latest, part_end);
    END LOOP;
    IF latest IS NOT NULL THEN
        INSERT INTO readings_retention (dropped_before) VALUES (latest)
        ON CONFLICT (id) DO UPDATE
        SET dropped_before = greatest(readings_retention.dropped_before, EXCLUDED.dropped_before),
            updated_at = now();
    END IF;
    RETURN dropped;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION readings_drop_partitions_before(timestamptz);
DROP TABLE readings_retention;
-- +goose StatementBegin
CREATE FUNCTION readings_drop_partitions_before(p_day date) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    part record;
    dropped integer := 0;
BEGIN
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
