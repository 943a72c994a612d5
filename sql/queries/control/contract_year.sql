-- FarmsWithContract is every farm whose latest version counts by a
-- contract of its own (not the default): what `report contract --all`
-- writes.
-- name: FarmsWithContract :many
SELECT f.id
FROM farm f
WHERE (SELECT v.contract_id FROM farm_version v WHERE v.farm_id = f.id ORDER BY v.first_day DESC LIMIT 1) <> 1
ORDER BY f.id;

-- ContractYearToDate is each farm's contract year to date at @now (every
-- farm, or the one @farm_id names), as the status page and the API show
-- it: the year containing the farm-local day of @now (contract_year_of),
-- as farm_contract_year figures it, a row per contract month with
-- rolled-up days (scope month) and one for the year (scope year). Only the
-- farms whose year has a warranty, on the year row: the year's
-- (warranty_from year), else the latest period's when its periods differ
-- (latest period), else, before any day is rolled up, that of the
-- contract counting today (contract). below_points is the warranty minus
-- the contractual availability (negative: above it); no_reading lists the
-- year's days with no reading at all, not accepted (farm_day_status
-- incomplete, received 0), whose figures measure the missing data.
-- name: ContractYearToDate :many
WITH fy AS (
    SELECT f.id AS farm_id, t.today, contract_year_of(f.id, t.today) AS year
    FROM farm f
    CROSS JOIN LATERAL (SELECT (sqlc.arg(now)::timestamptz AT TIME ZONE f.timezone)::date AS today) AS t
    WHERE (sqlc.narg(farm_id)::text IS NULL OR f.id = sqlc.narg(farm_id)::text)
      -- figured only for a farm that has counted by a contract with a
      -- warranty (the page is read often; most farms have none)
      AND EXISTS (SELECT 1 FROM farm_version v JOIN availability_contract k ON k.id = v.contract_id
                  WHERE v.farm_id = f.id AND k.warranty_pm IS NOT NULL)
), r AS (
    SELECT fy.farm_id, fy.today, fy.year, x.scope, x.first_day, x.last_day, x.contract, x.currency, x.days,
           x.warranty_pm, x.contractual_availability, x.ld, x.bonus, x.ld_capped
    FROM fy
    CROSS JOIN LATERAL farm_contract_year(fy.farm_id, fy.year)
         AS x(scope, first_day, last_day, contract_id, contract, currency, days, turbine_days, days_in_year, counted_slots,
              available_slots, excluded_slots, counted_hours, actual_wh, lost_wh, counted_potential_wh, warranty_pm,
              contractual_availability, production_based_availability, shortfall_points, shortfall_turbine_hours,
              shortfall_mwh, ld, bonus, ld_capped)
), held AS (
    SELECT y.farm_id,
           coalesce(y.warranty_pm, lp.warranty_pm, CASE WHEN y.days IS NULL THEN k.warranty_pm END) AS warranty_pm,
           CASE WHEN y.warranty_pm IS NOT NULL THEN 'year'
                WHEN lp.warranty_pm IS NOT NULL THEN 'latest period'
                WHEN y.days IS NULL AND k.warranty_pm IS NOT NULL THEN 'contract' END AS warranty_from
    FROM r y
    LEFT JOIN LATERAL (
        SELECT p.warranty_pm FROM r p
        WHERE p.farm_id = y.farm_id AND p.scope = 'period' AND p.warranty_pm IS NOT NULL
        ORDER BY p.last_day DESC LIMIT 1
    ) AS lp ON true
    LEFT JOIN availability_contract k ON k.id = (farm_day_version(y.farm_id, y.today)).contract_id
    WHERE y.scope = 'year'
), no_reading AS (
    SELECT y.farm_id, array_agg(d.day ORDER BY d.day) AS days
    FROM r y
    CROSS JOIN LATERAL (
        SELECT td.day FROM turbine_day td
        WHERE td.farm_id = y.farm_id AND td.day BETWEEN y.first_day AND y.today
        GROUP BY td.day
        HAVING sum(td.expected) > 0 AND sum(td.received) = 0
    ) AS d
    CROSS JOIN LATERAL farm_day_status(y.farm_id, d.day, sqlc.arg(now)::timestamptz)
         AS s(farm_id, day, day_start, day_end, registered_turbines, turbines, turbines_in_service, expected, received, available,
              late, early, beyond_cadence, out_of_service, last_received_at, oldest_computed_at, computed_at, closed_at,
              computed_after_close, pending, status, held_back, notes, why)
    WHERE y.scope = 'year' AND s.status = 'incomplete'
    GROUP BY y.farm_id
), fig AS (
    -- the figures, each NULL when there is none (no day rolled up, a month
    -- under two warranties, no money terms); joined so, sqlc reads them
    -- as nullable
    SELECT r.farm_id, r.scope, r.first_day,
           (w.pm / 10.0)::float8 AS warranty_pct,
           round(100 * r.contractual_availability, 4)::float8 AS contractual_availability_pct,
           round(w.pm / 10.0 - 100 * r.contractual_availability, 4)::float8 AS below_points,
           r.ld::text AS ld, r.bonus::text AS bonus
    FROM r
    JOIN held h ON h.farm_id = r.farm_id
    CROSS JOIN LATERAL (SELECT CASE WHEN r.scope = 'year' THEN h.warranty_pm ELSE r.warranty_pm END AS pm) AS w
)
SELECT r.farm_id, r.scope::text AS scope, r.year::integer AS year, r.today::date AS today,
       r.first_day::date AS first_day, r.last_day::date AS last_day,
       coalesce(r.contract, '')::text AS contract, coalesce(r.currency, '')::text AS currency,
       coalesce(r.days, 0)::integer AS days, coalesce(CASE WHEN r.scope = 'year' THEN h.warranty_from END, '')::text AS warranty_from,
       v.warranty_pct, v.contractual_availability_pct, v.below_points, v.ld, v.bonus,
       coalesce(r.ld_capped, false)::boolean AS ld_capped,
       coalesce(CASE WHEN r.scope = 'year' THEN nr.days END, '{}')::date[] AS no_reading
FROM r
JOIN held h ON h.farm_id = r.farm_id AND h.warranty_pm IS NOT NULL
LEFT JOIN no_reading nr ON nr.farm_id = r.farm_id
LEFT JOIN fig v ON v.farm_id = r.farm_id AND v.scope = r.scope AND v.first_day = r.first_day
WHERE r.scope IN ('month', 'year')
ORDER BY r.farm_id, r.scope = 'year', r.first_day;
