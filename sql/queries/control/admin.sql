-- Session-level advisory locks that serialise migrations across processes.
-- name: AdvisoryLock :exec
SELECT pg_advisory_lock(@key::bigint);

-- name: AdvisoryUnlock :exec
SELECT pg_advisory_unlock(@key::bigint);

-- name: DatabaseExists :one
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = @name::text) AS present;

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
