-- +goose Up
-- A process that dies in the middle of a River job (kill -9, a crash, a lost
-- host) leaves the job "running" with nobody working it. River's own
-- rescuer gives it back only after RescueStuckJobsAfter or the job kind's
-- timeout, whichever is longer (15 min for a rollup), and meanwhile a
-- unique periodic job (drain_dirty, publish_windows) cannot be inserted
-- again: the fast path and the drain stop for every farm. So each process
-- that runs River workers holds, for as long as it lives, a session
-- advisory lock named after its River client id (internal/jobs.Liveness),
-- and a job whose last worker holds no such lock is given back at once.

-- worker_liveness_key: the advisory lock a River client holds while its
-- process lives (a bigint key: pg_locks shows it as classid = high half,
-- objid = low half, objsubid = 1).
-- +goose StatementBegin
CREATE FUNCTION worker_liveness_key(p_client text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT hashtextextended('galewatch.worker/' || p_client, 0)
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION worker_liveness_key(text) IS 'The session advisory lock a River client (by its id) holds on the control database while its process lives (internal/jobs.Liveness).';

-- worker_alive: does a session of this database hold the client's lock?
-- +goose StatementBegin
CREATE FUNCTION worker_alive(p_client text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1
        FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = oid((worker_liveness_key(p_client) >> 32) & 4294967295)
          AND l.objid = oid(worker_liveness_key(p_client) & 4294967295))
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION worker_alive(text) IS 'True while the process of this River client id holds its liveness lock (worker_liveness_key).';

-- river_job_rescue_abandoned gives back every job running for at least
-- p_running_for_s seconds whose last worker is not alive: available again
-- at once (its attempt counted, an error saying why), or discarded when it
-- has used its attempts. It returns one line per job it gave back.
-- +goose StatementBegin
CREATE FUNCTION river_job_rescue_abandoned(p_now timestamptz, p_running_for_s integer) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    WITH abandoned AS (
        SELECT j.id, j.attempted_by[array_upper(j.attempted_by, 1)] AS client
        FROM river_job j
        WHERE j.state = 'running'
          AND j.attempted_at < p_now - make_interval(secs => p_running_for_s)
          AND cardinality(j.attempted_by) > 0
          AND NOT worker_alive(j.attempted_by[array_upper(j.attempted_by, 1)])
        FOR UPDATE SKIP LOCKED
    )
    UPDATE river_job j
    SET state = CASE WHEN j.attempt < j.max_attempts THEN 'available' ELSE 'discarded' END::river_job_state,
        scheduled_at = CASE WHEN j.attempt < j.max_attempts THEN p_now ELSE j.scheduled_at END,
        finalized_at = CASE WHEN j.attempt < j.max_attempts THEN NULL ELSE p_now END,
        errors = array_append(j.errors, jsonb_build_object(
            'at', p_now, 'attempt', j.attempt, 'trace', '',
            'error', format('the process working it (River client %s) is gone; given back by galewatch', a.client))),
        metadata = j.metadata || jsonb_build_object('galewatch:abandoned_by', a.client)
    FROM abandoned a
    WHERE j.id = a.id AND j.state = 'running'
    RETURNING format('job %s (%s, attempt %s of %s) of gone client %s: %s', j.id, j.kind, j.attempt, j.max_attempts, a.client, j.state);
END
$$;
-- +goose StatementEnd
-- It writes River's table: not for everyone (reporting logins included).
REVOKE EXECUTE ON FUNCTION river_job_rescue_abandoned(timestamptz, integer) FROM PUBLIC;
COMMENT ON FUNCTION river_job_rescue_abandoned(timestamptz, integer) IS 'Gives back River jobs running for at least p_running_for_s seconds whose worker process is gone (worker_alive false): available again, or discarded when out of attempts. Run by every serve/work process every few seconds.';

-- +goose Down
DROP FUNCTION river_job_rescue_abandoned(timestamptz, integer);
DROP FUNCTION worker_alive(text);
DROP FUNCTION worker_liveness_key(text);
