-- Session-level advisory locks that serialise migrations across processes.
-- name: AdvisoryLock :exec
SELECT pg_advisory_lock(@key::bigint);

-- name: AdvisoryUnlock :exec
SELECT pg_advisory_unlock(@key::bigint);

-- name: DatabaseExists :one
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = @name::text) AS present;

-- Session-level advisory lock keyed by text, serialising recomputes of one
-- farm-day-shard (held from before the shard snapshot until after the upsert).
-- name: AdvisoryLockKey :exec
SELECT pg_advisory_lock(hashtextextended(@key::text, 0));

-- name: AdvisoryUnlockKey :exec
SELECT pg_advisory_unlock(hashtextextended(@key::text, 0));
