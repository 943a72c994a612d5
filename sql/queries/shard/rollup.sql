-- turbine_day's counts are added up from turbine_window (window.sql:
-- TurbineWindowUpsert applies the slot rule, TurbineDayFromWindows sums a
-- day), so a day and its windows can never disagree.

-- ReadingsDayLost says whether retention has dropped readings of a
-- farm-local day: a recompute of such a day would overwrite a good row with
-- a partial one, so it is refused.
-- name: ReadingsDayLost :one
SELECT coalesce(rr.dropped_before > sqlc.arg(day_start)::timestamptz, false)::boolean AS lost,
       coalesce(rr.dropped_before, 'epoch')::timestamptz AS dropped_before
FROM (SELECT 1) AS one
LEFT JOIN readings_retention rr ON true;
