-- farm_day (the view over turbine_day) and what the status page shows beside a day.

-- name: FarmDayList :many
SELECT farm_id, day, turbines, expected, received, available,
       coalesce(availability, 0)::float8 AS availability, coalesce(completeness, 0)::float8 AS completeness,
       computed_at::timestamptz AS computed_at, computed_after_day_end::boolean AS computed_after_day_end, pending::boolean AS pending
FROM farm_day
WHERE farm_id = ANY (@farm_ids::text[]) AND day BETWEEN @from_day AND @to_day
ORDER BY farm_id, day;

-- FarmDayStatusExtras is what the status page and the API show beside a day
-- of the monthly report (report_monthly_availability, control 00011, the
-- one home of a day's counts, rates, provenance and final/provisional
-- rule): its windows as published (day_provenance: how many, how many
-- final, the sum of their revisions), its fast-vs-final divergence as last
-- measured (reconciliation_pm) and the alerts raised for it; and how many
-- of the day's windows are past the watermark at @now (windows_due: all
-- of a day once it has closed), so that a day summed from its windows
-- says which part of it the sum covers. One row per day of [@from_day,
-- @to_day] that has any of them.
-- name: FarmDayStatusExtras :many
WITH dp AS (
    SELECT * FROM day_provenance
    WHERE farm_id = sqlc.arg(farm_id)::text AND day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
), rc AS (
    SELECT * FROM reconciliation_pm
    WHERE farm_id = sqlc.arg(farm_id)::text AND scope = 'day' AND day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
), al AS (
    SELECT a.day,
           bool_or(a.kind = 'divergence' AND a.scope = 'day') AS divergence_alert,
           bool_or(a.kind = 'completeness') AS completeness_alert
    FROM alert a
    WHERE a.farm_id = sqlc.arg(farm_id)::text AND a.day BETWEEN sqlc.arg(from_day)::date AND sqlc.arg(to_day)::date
    GROUP BY a.day
), d AS (
    SELECT coalesce(dp.day, rc.day) AS day, dp.windows, dp.final_windows, dp.revision,
           rc.farm_id AS rc_farm, rc.windows AS rc_windows, rc.fast_received, rc.final_received, rc.fast_available, rc.final_available,
           rc.received_divergence_pm, rc.available_divergence_pm, rc.measured_at
    FROM dp FULL JOIN rc ON rc.day = dp.day
)
SELECT coalesce(d.day, al.day)::date AS day,
       coalesce(d.windows, 0)::integer AS windows,
       due.windows_due::integer AS windows_due,
       coalesce(d.final_windows, 0)::integer AS final_windows,
       coalesce(d.revision, 0)::bigint AS revision,
       (d.rc_farm IS NOT NULL)::boolean AS reconciled,
       coalesce(d.rc_windows, 0)::integer AS reconciled_windows,
       coalesce(d.fast_received, 0)::bigint AS fast_received,
       coalesce(d.final_received, 0)::bigint AS final_received,
       coalesce(d.fast_available, 0)::bigint AS fast_available,
       coalesce(d.final_available, 0)::bigint AS final_available,
       coalesce(d.received_divergence_pm, 0)::double precision AS received_divergence_pm,
       coalesce(d.available_divergence_pm, 0)::double precision AS available_divergence_pm,
       coalesce(d.measured_at, 'epoch')::timestamptz AS reconciled_at,
       coalesce(al.divergence_alert, false)::boolean AS divergence_alert,
       coalesce(al.completeness_alert, false)::boolean AS completeness_alert
FROM d FULL JOIN al ON al.day = d.day
CROSS JOIN LATERAL (
    -- the day's grid under the version governing it (as the window engine
    -- cuts it): window i is past the watermark once min(its end, the
    -- day's end) + the allowed lateness has passed
    SELECT CASE WHEN g.mark >= g.day_end THEN ceil(extract(epoch FROM g.day_end - g.day_start) / g.window_s)
                WHEN g.mark <= g.day_start THEN 0
                ELSE floor(extract(epoch FROM g.mark - g.day_start) / g.window_s) END AS windows_due
    FROM (SELECT farm_day_start(sqlc.arg(farm_id)::text, v.day) AS day_start, farm_day_start(sqlc.arg(farm_id)::text, v.day + 1) AS day_end,
                 (v.version).window_s AS window_s,
                 sqlc.arg(now)::timestamptz - (v.version).allowed_lateness_s * interval '1 second' AS mark
          FROM (SELECT coalesce(d.day, al.day)::date AS day, farm_day_version(sqlc.arg(farm_id)::text, coalesce(d.day, al.day)::date) AS version) AS v) AS g
) AS due
ORDER BY 1;

-- FarmDayAccept records an operator's acceptance of an incomplete
-- farm-day (farm_day_acceptance: the audit trail, who from current_user,
-- when from the caller's clock @now) and returns the day as farm_day_status judged it at @now, with the
-- acceptance (id NULL: refused, the day was not incomplete; status and why
-- say what it is). No row: no such farm.
-- name: FarmDayAccept :one
WITH s AS (
    SELECT st.farm_id, st.day, st.expected, st.received, st.status, st.why
    FROM farm_day_status(sqlc.arg(farm_id)::text, sqlc.arg(day)::date, sqlc.arg(now)::timestamptz)
         AS st(farm_id, day, day_start, day_end, registered_turbines, turbines, turbines_in_service, expected, received, available,
               late, early, beyond_cadence, out_of_service, last_received_at, oldest_computed_at, computed_at, closed_at,
               computed_after_close, pending, status, held_back, notes, why)
), ins AS (
    INSERT INTO farm_day_acceptance (farm_id, day, expected, received, note, accepted_at)
    SELECT s.farm_id::text, s.day::date, s.expected::bigint, s.received::bigint, sqlc.arg(note)::text, sqlc.arg(now)::timestamptz
    FROM s
    WHERE s.status = 'incomplete'
    RETURNING farm_day_acceptance.id, farm_day_acceptance.accepted_by, farm_day_acceptance.accepted_at
)
SELECT s.status::text AS status, coalesce(s.why, '')::text AS why,
       coalesce(s.expected, 0)::bigint AS expected, coalesce(s.received, 0)::bigint AS received,
       ins.id AS acceptance_id, ins.accepted_by, ins.accepted_at
FROM s LEFT JOIN ins ON true;
