-- Live first across processes (internal/livefirst): a process whose live
-- writes to this shard are behind holds a shared session advisory lock,
-- key (1, 1) (the two-key form: 1 = galewatch ingest, 1 = live pressure), on
-- a connection of its own; writers of replayed readings in any process ask
-- live_pressure_held() before each batch and wait while it is true. A
-- session lock goes with its connection: a process that dies stops
-- signalling. Only the pipeline's role may take advisory locks on a shard,
-- so no other login can hold replays back.

-- name: LivePressureHold :exec
SELECT pg_advisory_lock_shared(1, 1);

-- name: LivePressureRelease :one
SELECT pg_advisory_unlock_shared(1, 1) AS released;

-- name: LivePressureHeld :one
SELECT live_pressure_held() AS held;
