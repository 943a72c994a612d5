-- The server's catalog: databases and time zones.

-- name: DatabaseExists :one
SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_database WHERE datname = @name::text) AS present;

-- TimezoneCheck fails with 22023 (invalid_parameter_value) when the
-- server's time zone database has no zone @name: setting TimeZone for the
-- statement's own transaction loads that one zone, where
-- pg_timezone_names reads every zone the server has, on each call.
-- name: TimezoneCheck :exec
SELECT set_config('TimeZone', @name::text, true);

-- LocalDayStarts is when each of @days dates from @first begins in @zone,
-- by Postgres's rule (local_day_start, control 00016): what the rollup SQL
-- and the views use as day bounds.
-- name: LocalDayStarts :many
SELECT local_day_start(sqlc.arg(zone)::text, sqlc.arg(first)::date + g.i)::timestamptz AS day_start
FROM generate_series(0, sqlc.arg(days)::integer - 1) AS g(i)
ORDER BY g.i;
