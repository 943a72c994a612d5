-- Monthly availability of one farm: one row per farm-local day of the month
-- and a total row whose rates come from the summed counts (never from
-- averaging the days). status is final only when every day has ended, was
-- rolled up after it closed, has its marks drained (a reading stored before
-- the report ran and not yet counted holds its day back) and no recompute
-- pending; otherwise provisional, and why says which days hold it back and
-- for what reason.
--
--   psql -v farm=ardnave-point -v month=2026-08 -f sql/reports/monthly_availability.sql
--   psql --csv -v farm=ardnave-point -v month=2026-08 -f sql/reports/monthly_availability.sql > ardnave-point_2026-08.csv
--
-- Optional: -v now='2026-09-01 00:00+00' judges "not ended" by that clock
-- instead of the server's.
--
-- The rows come from report_monthly_availability() (each day judged by
-- farm_day_status, where the rule is written down), the contract's figures
-- from report_monthly_contract() (per day with rolled-up rows, and the
-- month, in percent and MWh: the columns after why); this file only
-- formats them the
-- same whatever the session's settings: ISO dates, times in UTC
-- (YYYY-MM-DD HH:MM:SS), dot decimals, true/false. `orchestrator report
-- monthly` runs this very file (embedded): it drops the backslash lines and
-- binds the psql variables below as query parameters.
\set ON_ERROR_STOP on
\if :{?farm}
\else
\set farm ''
\endif
\if :{?month}
\else
\set month ''
\endif
\if :{?now}
\else
\set now now
\endif
SELECT r.farm_id AS farm,
       coalesce(to_char(r.day, 'YYYY-MM-DD'), 'total') AS day,
       r.expected,
       r.received,
       r.available,
       r.availability,
       r.completeness,
       r.turbines,
       r.registered_turbines,
       r.source,
       r.path,
       to_char(r.computed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS computed_at_utc,
       to_char(r.complete_through AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS complete_through_utc,
       CASE WHEN r.pending THEN 'true' ELSE 'false' END AS pending,
       r.status,
       r.why,
       c.contract,
       c.warranty_pct,
       c.contractual_availability_pct,
       c.time_based_availability_pct,
       c.production_based_availability_pct,
       c.information_unavailable_pct,
       c.lost_mwh,
       c.lost_mwh_by_category
FROM report_monthly_availability(:'farm', :'month', CAST(:'now' AS text)::timestamptz) AS r
LEFT JOIN report_monthly_contract(:'farm', :'month') AS c ON c.scope = r.scope AND c.day IS NOT DISTINCT FROM r.day
ORDER BY r.scope, r.day;
