-- readings: the telemetry, partitioned by UTC day, and readings_retention (what retention dropped).

-- name: ReadingsEnsurePartition :one
SELECT readings_ensure_partition(@day::date) AS created;

-- ReadingsDropPartitionsBefore drops whole UTC-day partitions that end at or
-- before @before (retention; see the function's comment).
-- name: ReadingsDropPartitionsBefore :one
SELECT readings_drop_partitions_before(@before::timestamptz) AS dropped;

-- ReadingsStagingCreate creates this session's staging table. Being a
-- temporary table it shadows the never-written public.readings_staging, so
-- the queries below read and write the session's own rows.
-- name: ReadingsStagingCreate :exec
CREATE TEMP TABLE IF NOT EXISTS readings_staging (LIKE public.readings_staging) ON COMMIT DELETE ROWS;

-- ReadingsInsertFromStaging moves a staged batch into readings, skipping any
-- (turbine_id, recorded_at) already stored, and returns the rows it inserted.
-- name: ReadingsInsertFromStaging :many
INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state)
SELECT turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state
FROM readings_staging
ON CONFLICT (turbine_id, recorded_at) DO NOTHING
RETURNING turbine_id, recorded_at;

-- The writer's COPY into readings (and into the staging table after a batch
-- hit the key) is not generated here: sqlc's :copyfrom boxes every value of
-- a row into a fresh slice, and that garbage cost a tenth of ingest speed. It
-- lives in internal/ingest/copysource.go, with a test that checks its column
-- list against this schema.

-- ReadingsDayLost says whether retention has dropped readings of a
-- farm-local day: a recompute of such a day would overwrite a good row with
-- a partial one, so it is refused.
-- name: ReadingsDayLost :one
SELECT coalesce(rr.dropped_before > sqlc.arg(day_start)::timestamptz, false)::boolean AS lost,
       coalesce(rr.dropped_before, 'epoch')::timestamptz AS dropped_before
FROM (SELECT 1) AS one
LEFT JOIN readings_retention rr ON true;

-- ReadingsFingerprint recomputes, from the readings, the input fingerprint
-- of the given turbines' day [@day_start, @day_end): how many readings and
-- the sum of their input_fingerprint (what TurbineWindowUpsert adds up per
-- window and turbine_day keeps). It writes nothing (orchestrator verify).
-- name: ReadingsFingerprint :many
SELECT t.turbine_id::text AS turbine_id, count(r.recorded_at)::bigint AS readings,
       coalesce(sum(input_fingerprint(r.recorded_at, r.available)), 0)::bigint AS input_hash
FROM unnest(sqlc.arg(turbine_ids)::text[]) AS t(turbine_id)
LEFT JOIN LATERAL (SELECT r.recorded_at, r.available FROM readings r
                   WHERE r.turbine_id = t.turbine_id
                     AND r.recorded_at >= sqlc.arg(day_start)::timestamptz AND r.recorded_at < sqlc.arg(day_end)::timestamptz
                   OFFSET 0) AS r ON true
GROUP BY 1
ORDER BY 1;
