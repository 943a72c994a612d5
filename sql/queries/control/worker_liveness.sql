-- Which River clients' processes are alive (worker_liveness), and the rescue of jobs whose process
-- died.

-- WorkerLivenessLock (worker_liveness_key) takes the lock that says a River client's process is
-- alive, on the session of that process's own liveness connection (held
-- until the session ends).
-- name: WorkerLivenessLock :one
SELECT pg_try_advisory_lock(worker_liveness_key(@client_id::text)) AS locked;

-- name: WorkerAlive :one
SELECT worker_alive(@client_id::text) AS alive;

-- RiverJobRescueAbandoned gives back the jobs running for at least
-- running_for_s seconds whose worker is gone; one line per job.
-- name: RiverJobRescueAbandoned :many
SELECT river_job_rescue_abandoned(@now::timestamptz, @running_for_s::integer)::text AS rescued;
