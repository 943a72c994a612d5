-- The contract year of one farm: the warranty, the shortfall in percentage
-- points, turbine-hours and MWh, and the liquidated damages (or bonus) its
-- contract's terms make of them. Rows, in order: each period of the year
-- (a run of days counted by one contract, with its name and terms: a year
-- spanning a contract change is settled piecewise), each contract month
-- begun, the year to date, then every day accepted as it is, with its note.
-- status is final only when every day of the year so far is final (the
-- monthly report's rule, farm_day_status); why names the days holding it
-- back, and how the year was settled.
--
--   psql -v farm=ardnave-point -v year=2026 -f sql/reports/contract_year.sql
--   psql --csv -v farm=ardnave-point -v year=2026 -f sql/reports/contract_year.sql > ardnave-point_contract_2026.csv
--
-- year is the calendar year the contract year starts in (a contract year
-- from 1 April: 2026 is 2026-04-01..2027-03-31). Optional: -v now='2027-04-10
-- 00:00+00' judges "so far" and "not ended" by that clock instead of the
-- server's.
--
-- Units are in the column names; money is in the row's currency. The rows
-- come from report_contract_year() (figures from farm_contract_year(), where
-- the rules are written down); this file only formats them the same
-- whatever the session's settings. `orchestrator report contract` runs this
-- very file (embedded): it drops the backslash lines and binds the psql
-- variables below as query parameters.
\set ON_ERROR_STOP on
\if :{?farm}
\else
\set farm ''
\endif
\if :{?year}
\else
\set year ''
\endif
\if :{?now}
\else
\set now now
\endif
SELECT CAST(:'farm' AS text) AS farm,
       r.scope,
       to_char(r.first_day, 'YYYY-MM-DD') AS first_day,
       to_char(r.last_day, 'YYYY-MM-DD') AS last_day,
       r.contract,
       r.terms,
       r.currency,
       r.days::text AS days,
       r.turbine_days::text AS turbine_days,
       r.warranty_pct::text AS warranty_pct,
       r.contractual_availability_pct::text AS contractual_availability_pct,
       r.production_based_availability_pct::text AS production_based_availability_pct,
       r.counted_turbine_hours::text AS counted_turbine_hours,
       r.shortfall_points::text AS shortfall_points,
       r.shortfall_turbine_hours::text AS shortfall_turbine_hours,
       r.counted_potential_mwh::text AS counted_potential_mwh,
       r.shortfall_mwh::text AS shortfall_mwh,
       r.ld::text AS ld,
       r.bonus::text AS bonus,
       r.status,
       r.why
FROM report_contract_year(:'farm', :'year', CAST(:'now' AS text)::timestamptz) AS r;
