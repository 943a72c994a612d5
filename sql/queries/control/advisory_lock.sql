-- Advisory locks: session locks that serialise migrations across processes, and keyed locks
-- (hashtextextended of a name) that serialise publication, drains and rollups. Only the pipeline roles
-- may take them (pg_advisory_* is revoked from PUBLIC).

-- Session-level advisory locks that serialise migrations across processes.
-- name: AdvisoryLock :exec
SELECT pg_advisory_lock(@key::bigint);

-- name: AdvisoryUnlock :exec
SELECT pg_advisory_unlock(@key::bigint);

-- Transaction-level advisory lock keyed by text, serialising recomputes of
-- one farm-day-shard: taken before the shard snapshot opens, released by
-- the commit of the upsert.
-- name: AdvisoryXactLockKey :exec
SELECT pg_advisory_xact_lock(hashtextextended(@key::text, 0));

-- Session-level advisory lock keyed by text, taken without waiting: one
-- drain per shard at a time, across processes (released by
-- AdvisoryUnlockKey or the end of the session).
-- name: AdvisoryTryLockKey :one
SELECT pg_try_advisory_lock(hashtextextended(@key::text, 0)) AS locked;

-- name: AdvisoryUnlockKey :exec
SELECT pg_advisory_unlock(hashtextextended(@key::text, 0));
