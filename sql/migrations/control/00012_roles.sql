-- +goose Up
-- Database roles: galewatch_reporting, read-only, for DBAs,
-- account managers and report tools. People log in with a role of their
-- own that is a member (docs/dba.md, "Roles": CREATE ROLE alice LOGIN PASSWORD '...' IN
-- ROLE galewatch_reporting); the group itself cannot log in.
--
-- Roles belong to the cluster, not to a database: the control database, its
-- shards when they are databases of the same server, and other control
-- databases (tests create dozens at once) share them. So a role is created
-- only when missing (a concurrent creator elsewhere is not an error), only
-- its creator comments it, and Down drops it only when nothing else holds
-- on to it (see below).
--
-- What it may read: the rollups (turbine_day, farm_window and their parts,
-- reconciliation, alerts) and the views over them, the report function,
-- the registry and the rules, pending recompute requests, and the refused
-- lines without their raw text. What it may not: readings (they live on the
-- shards, where it is granted nothing), ingest_reject.raw/raw_bytes (a
-- sender's payload), shard.dsn (hosts and users), River's tables (it learns
-- whether a job is waiting only through the yes/no helpers below), and any
-- write. No default privileges are set: a table a later migration creates
-- is readable by this role only if that migration grants it, so nothing
-- becomes visible by accident (River's own later tables included).
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_reporting') THEN
        BEGIN
            CREATE ROLE galewatch_reporting NOLOGIN;
            COMMENT ON ROLE galewatch_reporting IS 'Galewatch read-only reporting group: rollups, views, the monthly report, the registry. Log in with a member role (CREATE ROLE alice LOGIN PASSWORD ... IN ROLE galewatch_reporting).';
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL; -- another database's migration created it meanwhile
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'role galewatch_reporting does not exist and % may not create roles: create it (CREATE ROLE galewatch_reporting NOLOGIN) or grant CREATEROLE, then migrate again', current_user;
        END;
    END IF;
END
$$;
-- +goose StatementEnd

GRANT SELECT ON turbine_day, farm_day, farm_month, farm_window, farm_window_part, reconciliation, reconciliation_pm,
                window_provenance, day_provenance, farm_freshness, publish_lag, alert, rollup_pending,
                farm, turbine, fleet_rules, farm_rules
    TO galewatch_reporting;
GRANT SELECT (name, database, created_at, updated_at) ON shard TO galewatch_reporting;
GRANT SELECT (id, source, line, reason, rejected_at, raw_escaped, raw_length) ON ingest_reject TO galewatch_reporting;
GRANT EXECUTE ON FUNCTION report_monthly_availability(text, text, timestamptz) TO galewatch_reporting;

-- The River helpers read river_job, which the reporting role may not: they
-- run as their owner (SECURITY DEFINER, search_path pinned to this schema)
-- and answer only yes or no. farm_day, farm_month, the provenance views and
-- the report call rollup_day_unfinished; DBAs use the other two on
-- rollup_pending.job_id. PUBLIC loses EXECUTE on them (definer functions are
-- granted, not public).
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION rollup_day_unfinished(text, date) SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION river_job_unfinished(bigint) SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION river_job_not_started(bigint) SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
END
$$;
-- +goose StatementEnd
REVOKE EXECUTE ON FUNCTION rollup_day_unfinished(text, date), river_job_unfinished(bigint), river_job_not_started(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rollup_day_unfinished(text, date), river_job_unfinished(bigint), river_job_not_started(bigint) TO galewatch_reporting;

-- +goose Down
-- This database's grants go; the role itself is dropped only when no role
-- is a member of it (a person's login would silently lose its access) and
-- no other database still grants it something (DROP ROLE refuses then).
ALTER FUNCTION rollup_day_unfinished(text, date) SECURITY INVOKER RESET search_path;
ALTER FUNCTION river_job_unfinished(bigint) SECURITY INVOKER RESET search_path;
ALTER FUNCTION river_job_not_started(bigint) SECURITY INVOKER RESET search_path;
GRANT EXECUTE ON FUNCTION rollup_day_unfinished(text, date), river_job_unfinished(bigint), river_job_not_started(bigint) TO PUBLIC;
-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_reporting') THEN
        RETURN;
    END IF;
    REVOKE ALL ON turbine_day, farm_day, farm_month, farm_window, farm_window_part, reconciliation, reconciliation_pm,
                  window_provenance, day_provenance, farm_freshness, publish_lag, alert, rollup_pending,
                  farm, turbine, fleet_rules, farm_rules, shard, ingest_reject
        FROM galewatch_reporting;
    REVOKE ALL ON FUNCTION report_monthly_availability(text, text, timestamptz),
                  rollup_day_unfinished(text, date), river_job_unfinished(bigint), river_job_not_started(bigint)
        FROM galewatch_reporting;
    IF EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid WHERE r.rolname = 'galewatch_reporting') THEN
        RAISE NOTICE 'role galewatch_reporting kept: other roles are members of it';
        RETURN;
    END IF;
    BEGIN
        DROP ROLE galewatch_reporting;
    EXCEPTION WHEN dependent_objects_still_exist THEN
        RAISE NOTICE 'role galewatch_reporting kept: another database still grants it privileges';
    END;
END
$$;
-- +goose StatementEnd
