-- +goose Up
-- readings_ensure_partition: a second writer that waited on the advisory
-- lock while the first created the day's partition could still miss it
-- (waiting on an advisory lock does not refresh the catalog snapshot that
-- to_regclass reads) and fail its batch with "relation ... already exists"
-- (seen in TestHungShardFailsItsLinesWithinTheBound under load). Losing
-- that race now means the partition is there, as asked: it returns false.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION readings_ensure_partition(p_day date) RETURNS boolean
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
    BEGIN
        EXECUTE format('CREATE TABLE %I (LIKE readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
    EXCEPTION WHEN duplicate_table THEN
        -- Created by a writer that committed while this one waited.
        RETURN false;
    END;
    EXECUTE format('ALTER TABLE readings ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   part,
                   (p_day::timestamp AT TIME ZONE 'UTC'),
                   ((p_day + 1)::timestamp AT TIME ZONE 'UTC'));
    RETURN true;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION readings_ensure_partition(p_day date) RETURNS boolean
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
