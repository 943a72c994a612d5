-- +goose Up
-- The monthly report speaks the contract: per farm-local day with rolled-up
-- rows (farm_day_contract) and for the month, the contract's figures beside
-- the time-based one, as percentages and MWh. Rates come from summed counts
-- (never averaged days), at read time like every rate.
-- +goose StatementBegin
CREATE FUNCTION report_monthly_contract(p_farm text, p_month text)
RETURNS TABLE (
    scope                             text,
    day                               date,
    contract                          text,
    warranty_pct                      numeric,
    contractual_availability_pct      numeric,
    time_based_availability_pct       numeric,
    production_based_availability_pct numeric,
    information_unavailable_pct       numeric,
    lost_mwh                          numeric,
    lost_mwh_by_category              text)
LANGUAGE sql STABLE AS $$
    WITH d AS (
        SELECT c.*
        FROM farm_day_contract c
        WHERE c.farm_id = p_farm
          AND p_month ~ '^[1-9][0-9]{3}-(0[1-9]|1[0-2])$'
          AND c.day >= to_date(p_month || '-01', 'YYYY-MM-DD')
          AND c.day < to_date(p_month || '-01', 'YYYY-MM-DD') + interval '1 month'
    ), lost AS (
        -- lost Wh per category, per day and for the month
        SELECT d.day, l.id, l.wh
        FROM d CROSS JOIN LATERAL unnest(d.category_lost_wh) WITH ORDINALITY AS l(wh, id)
        WHERE d.category_lost_wh IS NOT NULL
    ), rows AS (
        SELECT 'day'::text AS scope, d.day, d.contract, d.warranty_pm::numeric AS warranty_pm,
               d.contract_available::numeric AS c_available, d.contract_unavailable::numeric AS c_unavailable,
               d.available::numeric AS available, d.expected::numeric AS expected, d.category_slots[13]::numeric AS missing,
               d.actual_wh::numeric AS actual_wh, d.lost_wh::numeric AS lost_wh
        FROM d
        UNION ALL
        SELECT 'month', NULL, string_agg(DISTINCT d.contract, ', '),
               CASE WHEN count(DISTINCT d.warranty_pm) = 1 THEN max(d.warranty_pm) END,
               sum(d.contract_available), sum(d.contract_unavailable), sum(d.available), sum(d.expected), sum(d.category_slots[13]),
               sum(d.actual_wh) FILTER (WHERE d.lost_wh IS NOT NULL), sum(d.lost_wh)
        FROM d
        HAVING count(*) > 0
    )
    SELECT r.scope, r.day, r.contract, round(r.warranty_pm / 10, 1),
           round(100 * r.c_available / nullif(r.c_available + r.c_unavailable, 0), 4),
           round(100 * r.available / nullif(r.expected, 0), 4),
           round(100 * r.actual_wh / nullif(r.actual_wh + r.lost_wh, 0), 4),
           round(100 * r.missing / nullif(r.expected, 0), 4),
           round(r.lost_wh / 1e6, 3),
           (SELECT string_agg(c.code || ' ' || round(x.wh / 1e6, 3), '; ' ORDER BY x.id)
            FROM (SELECT l.id, sum(l.wh) AS wh FROM lost l WHERE r.day IS NULL OR l.day = r.day GROUP BY l.id) AS x
            JOIN availability_category c ON c.id = x.id
            WHERE x.wh > 0)
    FROM rows r
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION report_monthly_contract(text, text) IS 'The monthly report''s contract columns (sql/reports/monthly_availability.sql joins them): per farm-local day with turbine_day rows (scope day) and for the month (scope month, from the summed counts): the contract, its warranty (%), contractual, time-based and production-based availability (%), the information-unavailable share (%), lost MWh over the contract''s unavailable categories and per category (code MWh; ..., the categories that lost any).';

-- +goose Down
DROP FUNCTION report_monthly_contract(text, text);
