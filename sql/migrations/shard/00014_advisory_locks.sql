-- +goose Up
-- Advisory locks are the pipeline's alone. Any login may call
-- pg_advisory_lock and its siblings by default, and the pipeline's keys are
-- predictable (River's migration key, hashtextextended of
-- 'galewatch.publish/<farm>', 'galewatch.drain/<shard>', a farm-day-shard):
-- a reporting login holding one would stop a publication, a drain or a
-- start. So PUBLIC loses EXECUTE on every advisory-lock function in this
-- shard database and the role that migrates (the pipeline's own) gets it; a
-- superuser is never refused. Locks belong to one database, so this
-- database's functions are the ones that matter.
--
-- Only a superuser may change the grants of pg_catalog's functions. A
-- pipeline that migrates as an ordinary role leaves them as they are and
-- says so (WARNING); docs/dba.md ("Roles") gives the statements a DBA runs once.
-- +goose StatementBegin
DO $$
DECLARE
    f regprocedure;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE WARNING 'advisory-lock functions left executable by PUBLIC: % is not a superuser (see docs/dba.md, "Roles")', current_user;
        RETURN;
    END IF;
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname LIKE 'pg\_%advisory%'
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, current_user);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    f regprocedure;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RETURN;
    END IF;
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
             WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname LIKE 'pg\_%advisory%'
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO PUBLIC', f);
    END LOOP;
END
$$;
-- +goose StatementEnd
