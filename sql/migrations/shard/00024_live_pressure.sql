-- +goose Up
-- live_pressure_held says some session of this database holds the live
-- pressure lock: the shared two-key advisory lock (1, 1) a process holds
-- while its live writes to this shard are behind (internal/livefirst;
-- LivePressureHold). pg_locks shows a two-key advisory lock with objsubid 2;
-- reading it never waits on a lock. A function so that the query that asks
-- (LivePressureHeld) is checked against the schema like every other.
-- +goose StatementBegin
CREATE FUNCTION live_pressure_held() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.classid = 1::oid AND l.objid = 1::oid
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = current_database()))
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION live_pressure_held() IS 'True while some process signals that its live writes to this shard are behind: writers of replayed readings wait (internal/livefirst).';

-- +goose Down
DROP FUNCTION live_pressure_held();
