-- +goose Up
-- The ingest role: galewatch_ingest may write readings and the
-- dirty marks that go with them, and nothing else -- no reading of the
-- readings' values, no update or delete (deleting a mark would lose a
-- recompute: that is the drain's, with the owner's rights), no rollup
-- tables. A loader logs in with a member role (CREATE ROLE loader LOGIN
-- PASSWORD '...' IN ROLE galewatch_ingest). The control database grants it
-- nothing.
--
-- Exactly what the ingest writer's statements need (sql/queries/shard):
--   readings      INSERT (COPY, and INSERT ... SELECT from the staging
--                 table); SELECT of the key columns only, because
--                 ON CONFLICT (turbine_id, recorded_at) DO NOTHING RETURNING
--                 the key (the exactly-once path) needs it: Postgres checks
--                 SELECT on a conflict target's columns.
--   readings_staging
--                 SELECT: the session's temporary staging table is created
--                 LIKE it (always empty: a CHECK (false) refuses any row).
--   dirty_window  INSERT; SELECT of its key (ON CONFLICT ... DO NOTHING).
--   dirty_mark    INSERT; the merge of a mark into an existing one
--                 (ON CONFLICT (farm_id, day) DO UPDATE) reads and widens
--                 it: SELECT and UPDATE of those columns, not DELETE.
-- Partitions: writes go through the partitioned table readings, where the
-- partitions' own privileges are not checked, so partitions created later
-- (readings_ensure_partition, by the orchestrator ahead of time) need no
-- default privileges; none are set, and the partitions grant nothing to
-- anyone, so no role reads them directly. Creating a missing partition needs
-- CREATE on the schema, which this role does not have: partitions are the
-- orchestrator's (7 days ahead, and on demand for its own writes).
--
-- Roles belong to the cluster: the role is created only when missing (a
-- concurrent creator in another database is not an error); see Down.
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_ingest') THEN
        BEGIN
            CREATE ROLE galewatch_ingest NOLOGIN;
            COMMENT ON ROLE galewatch_ingest IS 'Galewatch ingest group: INSERT of readings and dirty marks on the shards, nothing else. Log in with a member role (CREATE ROLE loader LOGIN PASSWORD ... IN ROLE galewatch_ingest).';
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL; -- another database's migration created it meanwhile
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'role galewatch_ingest does not exist and % may not create roles: create it (CREATE ROLE galewatch_ingest NOLOGIN) or grant CREATEROLE, then migrate again', current_user;
        END;
    END IF;
END
$$;
-- +goose StatementEnd

GRANT INSERT, SELECT (turbine_id, recorded_at) ON readings TO galewatch_ingest;
GRANT SELECT ON readings_staging TO galewatch_ingest;
GRANT INSERT, SELECT (farm_id, day, turbine_id, window_start) ON dirty_window TO galewatch_ingest;
GRANT INSERT,
      SELECT (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, version, updated_at),
      UPDATE (turbine_ids, first_recorded_at, last_recorded_at, readings, version, updated_at)
    ON dirty_mark TO galewatch_ingest;

-- +goose Down
-- This database's grants go; the role is dropped only when no role is a
-- member of it and no other database grants it something (DROP ROLE
-- refuses then: other shards, or the other shards' server).
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_ingest') THEN
        RETURN;
    END IF;
    REVOKE ALL ON readings, readings_staging, dirty_window, dirty_mark FROM galewatch_ingest;
    IF EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid WHERE r.rolname = 'galewatch_ingest') THEN
        RAISE NOTICE 'role galewatch_ingest kept: other roles are members of it';
        RETURN;
    END IF;
    BEGIN
        DROP ROLE galewatch_ingest;
    EXCEPTION WHEN dependent_objects_still_exist THEN
        RAISE NOTICE 'role galewatch_ingest kept: another database still grants it privileges';
    END;
END
$$;
-- +goose StatementEnd
