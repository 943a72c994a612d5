-- +goose Up
-- Retention now also takes the windows of every farm-local day that starts
-- before readings_retention.dropped_before (the rollup
-- refuses those days, so their windows can never be recomputed). That cut
-- must not depend on which partitions happened to exist: the function now
-- records the UTC midnight at or before p_before, before which no partition
-- is left, even when it had nothing to drop (a day with no partition had no
-- readings). Before, it recorded only the end of the latest partition it
-- dropped.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION readings_drop_partitions_before(p_before timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    part record;
    dropped integer := 0;
    part_end timestamptz;
    cut timestamptz := date_trunc('day', p_before AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
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
        CONTINUE WHEN part_end > cut;
        EXECUTE format('DROP TABLE %I', part.relname);
        dropped := dropped + 1;
    END LOOP;
    INSERT INTO readings_retention (dropped_before) VALUES (cut)
    ON CONFLICT (id) DO UPDATE
    SET dropped_before = greatest(readings_retention.dropped_before, EXCLUDED.dropped_before),
        updated_at = CASE WHEN EXCLUDED.dropped_before > readings_retention.dropped_before THEN now() ELSE readings_retention.updated_at END;
    RETURN dropped;
END
$$;
-- +goose StatementEnd
COMMENT ON COLUMN readings_retention.dropped_before IS 'The UTC midnight before which retention has dropped every readings partition: readings before it are gone, and a day that starts before it is neither recomputed nor kept in turbine_window, farm_window_sum or the dirty marks.';
COMMENT ON COLUMN readings_retention.updated_at IS 'When retention last moved dropped_before.';

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION readings_drop_partitions_before(p_before timestamptz) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    part record;
    dropped integer := 0;
    part_end timestamptz;
    latest timestamptz;
BEGIN
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
COMMENT ON COLUMN readings_retention.dropped_before IS 'End of the latest partition retention dropped: readings before it are gone.';
COMMENT ON COLUMN readings_retention.updated_at IS 'When retention last dropped a partition.';
