-- +goose Up
-- The warranty year. A contract warrants its availability over a contract
-- year (from year_start, e.g. 1 April) and settles a shortfall as
-- liquidated damages: per percentage point below the warranty (per turbine
-- or per farm, for a whole year) or per MWh lost below the warranty's
-- energy, optionally capped, with an optional bonus above a threshold.
-- The terms are part of the contract's content (its hash), so they are
-- effective-dated with the farm's versions like the rest of it; a year that
-- spans a change is settled piecewise, one period per run of days counted
-- by one contract. Every figure is computed here from the stored counts and
-- energy (turbine_day), at read time.
ALTER TABLE availability_contract
    ADD COLUMN year_start_month smallint NOT NULL DEFAULT 1 CHECK (year_start_month BETWEEN 1 AND 12),
    ADD COLUMN year_start_day   smallint NOT NULL DEFAULT 1,
    ADD COLUMN currency         text CHECK (currency ~ '^[A-Z]{3}$'),
    ADD COLUMN ld_per_point     numeric(14, 2) CHECK (ld_per_point >= 0),
    ADD COLUMN ld_per           text CHECK (ld_per IN ('turbine', 'farm')),
    ADD COLUMN ld_per_mwh       numeric(14, 2) CHECK (ld_per_mwh >= 0),
    ADD COLUMN ld_cap           numeric(14, 2) CHECK (ld_cap >= 0),
    ADD COLUMN bonus_above_pm   integer CHECK (bonus_above_pm BETWEEN 1 AND 1000),
    ADD COLUMN bonus_per_point  numeric(14, 2) CHECK (bonus_per_point >= 0),
    ADD COLUMN bonus_per        text CHECK (bonus_per IN ('turbine', 'farm')),
    -- every month has the day a contract month starts on
    ADD CONSTRAINT availability_contract_year_start_check CHECK (year_start_day BETWEEN 1 AND 28),
    ADD CONSTRAINT availability_contract_ld_check CHECK (
        (ld_per_point IS NULL) = (ld_per IS NULL)
        AND NOT (ld_per_point IS NOT NULL AND ld_per_mwh IS NOT NULL)
        AND (ld_cap IS NULL OR ld_per_point IS NOT NULL OR ld_per_mwh IS NOT NULL)
        AND (bonus_above_pm IS NULL) = (bonus_per_point IS NULL)
        AND (bonus_per_point IS NULL) = (bonus_per IS NULL)
        AND (bonus_above_pm IS NULL OR bonus_above_pm > warranty_pm)
        AND (coalesce(ld_per_point, ld_per_mwh, bonus_per_point) IS NULL OR (warranty_pm IS NOT NULL AND currency IS NOT NULL)));
-- A change of terms alone recounts no day: counting_hash is the hash of
-- what sorts slots (the contract without its name, warranty, year and
-- settlement terms), which fleet apply compares to decide which rolled-up
-- days a new version changes. A contract recorded before it has its hash
-- there: a first change of its name or warranty recounts, as before.
ALTER TABLE availability_contract ADD COLUMN counting_hash text;
UPDATE availability_contract SET counting_hash = hash;
ALTER TABLE availability_contract ALTER COLUMN counting_hash SET NOT NULL;
COMMENT ON COLUMN availability_contract.counting_hash IS 'sha256 of the contract''s canonical form without its name, warranty, year start and settlement terms (''default'' for row 1; a contract recorded before this column: its hash): two contracts with the same counting_hash sort every slot alike, so a version that changes only those recounts no day.';
COMMENT ON COLUMN availability_contract.year_start_month IS 'The month the contract year starts in (1-12; default January).';
COMMENT ON COLUMN availability_contract.year_start_day IS 'The day of year_start_month the contract year starts on, 1-28: each contract month starts on that day of its month, which every month has.';
COMMENT ON COLUMN availability_contract.currency IS 'The currency the money terms are in (ISO 4217 code, a label: nothing is converted). Required with any of them.';
COMMENT ON COLUMN availability_contract.ld_per_point IS 'Liquidated damages per percentage point of contractual availability below the warranty, for a whole contract year of one turbine (ld_per turbine) or of the farm (ld_per farm); a period shorter than the year pays its share (turbine_days or days / days in the year). NULL: not this style.';
COMMENT ON COLUMN availability_contract.ld_per IS 'turbine or farm: what ld_per_point is per.';
COMMENT ON COLUMN availability_contract.ld_per_mwh IS 'Liquidated damages per MWh of the shortfall in energy: (warranty - contractual availability) x the potential energy of the counted (not excluded) time. NULL: not this style.';
COMMENT ON COLUMN availability_contract.ld_cap IS 'The most liquidated damages a contract year pays (the cap of the contract governing the year''s last counted day). NULL: no cap.';
COMMENT ON COLUMN availability_contract.bonus_above_pm IS 'Contractual availability above which a bonus is paid, per mille (above warranty_pm). NULL: no bonus.';
COMMENT ON COLUMN availability_contract.bonus_per_point IS 'The bonus per percentage point above bonus_above_pm, for a whole year of one turbine or the farm (bonus_per), shared as ld_per_point is.';
COMMENT ON COLUMN availability_contract.bonus_per IS 'turbine or farm: what bonus_per_point is per.';

-- contract_terms says a contract's settlement terms in one line, as the
-- contract year report prints them above its figures.
-- +goose StatementBegin
CREATE FUNCTION contract_terms(p_contract bigint) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT concat_ws('; ',
        'year from ' || to_char(make_date(2001, k.year_start_month, k.year_start_day), 'FMDD FMMonth'),
        'warranty ' || round(k.warranty_pm / 10.0, 1) || ' %',
        CASE WHEN k.ld_per_point IS NOT NULL THEN
            'LDs ' || k.ld_per_point || ' ' || k.currency || ' per point below the warranty per ' || k.ld_per || '-year' END,
        CASE WHEN k.ld_per_mwh IS NOT NULL THEN
            'LDs ' || k.ld_per_mwh || ' ' || k.currency || ' per MWh of the shortfall' END,
        CASE WHEN k.ld_cap IS NOT NULL THEN 'capped at ' || k.ld_cap || ' ' || k.currency || ' a year' END,
        CASE WHEN k.bonus_above_pm IS NOT NULL THEN
            'bonus ' || k.bonus_per_point || ' ' || k.currency || ' per point above ' || round(k.bonus_above_pm / 10.0, 1)
            || ' % per ' || k.bonus_per || '-year' END)
    FROM availability_contract k WHERE k.id = p_contract
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION contract_terms(bigint) IS 'A contract''s year start and settlement terms in words (warranty, LDs, cap, bonus, currency), as report_contract_year prints them.';

-- contract_year_start is the first day of a farm's contract year p_year:
-- year_start of the contract of its latest version (the grid of years is
-- the contract's as it stands; each period of a year is still settled by
-- the contract that governed its days).
-- +goose StatementBegin
CREATE FUNCTION contract_year_start(p_farm text, p_year integer) RETURNS date
LANGUAGE sql STABLE AS $$
    SELECT make_date(p_year, k.year_start_month, k.year_start_day)
    FROM farm_version v
    JOIN availability_contract k ON k.id = v.contract_id
    WHERE v.farm_id = p_farm
    ORDER BY v.first_day DESC
    LIMIT 1
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION contract_year_start(text, integer) IS 'The first farm-local day of farm p_farm''s contract year p_year: p_year with the year_start of the contract of the farm''s latest version (NULL for no farm). The year ends the day before the same date a year later.';

-- +goose StatementBegin
CREATE FUNCTION contract_year_of(p_farm text, p_day date) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN p_day >= contract_year_start(p_farm, extract(year FROM p_day)::integer)
                THEN extract(year FROM p_day)::integer ELSE extract(year FROM p_day)::integer - 1 END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION contract_year_of(text, date) IS 'The contract year (by the calendar year it starts in) of farm p_farm that farm-local day p_day belongs to.';

-- farm_contract_year: the year's figures from the rolled-up days
-- (farm_day_contract), per period (a run of days counted by one contract),
-- per contract month, and for the year to date.
-- +goose StatementBegin
CREATE FUNCTION farm_contract_year(p_farm text, p_year integer)
RETURNS TABLE (
    scope                      text,
    first_day                  date,
    last_day                   date,
    contract_id                bigint,
    contract                   text,
    currency                   text,
    days                       integer,
    turbine_days               bigint,
    days_in_year               integer,
    counted_slots              bigint,
    available_slots            bigint,
    excluded_slots             bigint,
    counted_hours              numeric,
    actual_wh                  bigint,
    lost_wh                    bigint,
    counted_potential_wh       bigint,
    warranty_pm                integer,
    contractual_availability   numeric,
    production_based_availability numeric,
    shortfall_points           numeric,
    shortfall_turbine_hours    numeric,
    shortfall_mwh              numeric,
    ld                         numeric,
    bonus                      numeric,
    ld_capped                  boolean)
LANGUAGE sql STABLE AS $$
    WITH y AS (
        SELECT s.first_day, (s.first_day + interval '1 year')::date - 1 AS last_day,
               (s.first_day + interval '1 year')::date - s.first_day AS days_in_year
        FROM (SELECT contract_year_start(p_farm, p_year) AS first_day) AS s
        WHERE s.first_day IS NOT NULL
    ), d AS (
        -- each rolled-up day of the year, with the contract that counted it
        SELECT c.day, v.contract_id, c.turbines, c.contract_available, c.contract_unavailable, c.contract_excluded,
               (c.contract_available + c.contract_unavailable) * v.cadence_seconds AS counted_s,
               c.actual_wh, c.lost_wh,
               (SELECT sum(p.wh) FROM unnest(c.category_potential_wh) WITH ORDINALITY AS p(wh, id)
                WHERE NOT p.id = ANY (k.excluded))::bigint AS counted_potential_wh,
               -- a period is a run of days counted by one contract
               row_number() OVER (ORDER BY c.day) - row_number() OVER (PARTITION BY v.contract_id ORDER BY c.day) AS run,
               (extract(year FROM age(c.day, y.first_day)) * 12 + extract(month FROM age(c.day, y.first_day)))::integer AS month_no
        FROM y
        -- the bounds written out, not y's: a CTE's columns do not reach
        -- into the view's grouping, which would sum every day of the farm
        JOIN farm_day_contract c ON c.farm_id = p_farm
                                AND c.day BETWEEN contract_year_start(p_farm, p_year)
                                              AND (contract_year_start(p_farm, p_year) + interval '1 year')::date - 1
        CROSS JOIN LATERAL farm_day_version(p_farm, c.day) AS v
        JOIN availability_contract k ON k.id = v.contract_id
        WHERE c.contract_available IS NOT NULL
    ), piece AS (
        -- sums per period (scope period) and per contract month and period
        -- (a month counted by two contracts is two pieces)
        SELECT g.scope, g.month_no, d.contract_id, d.run,
               min(d.day) AS first_day, max(d.day) AS last_day,
               count(*)::integer AS days, sum(d.turbines)::bigint AS turbine_days,
               sum(d.contract_available + d.contract_unavailable)::bigint AS counted_slots,
               sum(d.contract_available)::bigint AS available_slots,
               sum(d.contract_excluded)::bigint AS excluded_slots,
               sum(d.counted_s) / 3600.0 AS counted_hours,
               sum(d.actual_wh)::bigint AS actual_wh, sum(d.lost_wh)::bigint AS lost_wh,
               sum(d.counted_potential_wh)::bigint AS counted_potential_wh
        FROM d
        CROSS JOIN LATERAL (VALUES ('period', NULL::integer), ('month', d.month_no)) AS g(scope, month_no)
        GROUP BY g.scope, g.month_no, d.contract_id, d.run
    ), settled AS (
        SELECT p.*, k.name AS contract, k.currency, k.warranty_pm, k.ld_per_point, k.ld_per, k.ld_per_mwh, k.ld_cap,
               k.bonus_above_pm, k.bonus_per_point, k.bonus_per, y.days_in_year,
               p.available_slots::numeric / nullif(p.counted_slots, 0) AS availability,
               -- greatest() would make a missing warranty 0: none, no shortfall
               CASE WHEN k.warranty_pm IS NOT NULL THEN
                   greatest(k.warranty_pm / 1000.0 - p.available_slots::numeric / nullif(p.counted_slots, 0), 0) END AS shortfall,
               CASE WHEN k.bonus_above_pm IS NOT NULL THEN
                   greatest(p.available_slots::numeric / nullif(p.counted_slots, 0) - k.bonus_above_pm / 1000.0, 0) END AS surplus
        FROM piece p
        CROSS JOIN y
        JOIN availability_contract k ON k.id = p.contract_id
    ), figured AS (
        SELECT s.*,
               s.shortfall * s.counted_hours AS shortfall_hours,
               s.shortfall * s.counted_potential_wh / 1e6 AS shortfall_mwh,
               -- what a period pays: its share of a year (turbine-days or
               -- days over the days of the year), to the cent
               round(CASE WHEN s.ld_per_point IS NOT NULL THEN
                              100 * s.shortfall * s.ld_per_point
                              * CASE s.ld_per WHEN 'turbine' THEN s.turbine_days ELSE s.days END / s.days_in_year
                          WHEN s.ld_per_mwh IS NOT NULL THEN s.shortfall * s.counted_potential_wh / 1e6 * s.ld_per_mwh END, 2) AS ld,
               round(100 * s.surplus * s.bonus_per_point
                     * CASE s.bonus_per WHEN 'turbine' THEN s.turbine_days ELSE s.days END / s.days_in_year, 2) AS bonus
        FROM settled s
    ), months AS (
        SELECT f.month_no,
               (y.first_day + make_interval(months => f.month_no))::date AS first_day,
               (y.first_day + make_interval(months => f.month_no + 1))::date - 1 AS last_day,
               f.days, f.turbine_days, f.counted_slots, f.available_slots, f.excluded_slots, f.counted_hours,
               f.actual_wh, f.lost_wh, f.counted_potential_wh, f.shortfall_hours, f.shortfall_mwh,
               f.contract_id, f.contract, f.currency, f.warranty_pm, y.days_in_year
        FROM figured f CROSS JOIN y
        WHERE f.scope = 'month'
    ), periods AS (
        SELECT * FROM figured f WHERE f.scope = 'period'
    ), year_cap AS (
        -- the cap of the contract governing the year's last counted day
        SELECT p.ld_cap FROM periods p ORDER BY p.last_day DESC LIMIT 1
    )
    SELECT 'period'::text, p.first_day, p.last_day, p.contract_id, p.contract, p.currency, p.days, p.turbine_days, p.days_in_year,
           p.counted_slots, p.available_slots, p.excluded_slots, p.counted_hours, p.actual_wh, p.lost_wh, p.counted_potential_wh,
           p.warranty_pm, p.availability, p.actual_wh::numeric / nullif(p.actual_wh + p.lost_wh, 0),
           100 * p.shortfall, p.shortfall_hours, p.shortfall_mwh, p.ld, p.bonus, NULL::boolean
    FROM periods p
    UNION ALL
    SELECT 'month', min(m.first_day), min(m.last_day),
           CASE WHEN count(DISTINCT m.contract_id) = 1 THEN min(m.contract_id) END,
           string_agg(DISTINCT m.contract, ', '), string_agg(DISTINCT m.currency, ', '),
           sum(m.days)::integer, sum(m.turbine_days)::bigint, min(m.days_in_year),
           sum(m.counted_slots)::bigint, sum(m.available_slots)::bigint, sum(m.excluded_slots)::bigint, sum(m.counted_hours),
           sum(m.actual_wh)::bigint, sum(m.lost_wh)::bigint, sum(m.counted_potential_wh)::bigint,
           CASE WHEN count(DISTINCT m.warranty_pm) = 1 AND count(m.warranty_pm) = count(*) THEN min(m.warranty_pm) END,
           sum(m.available_slots)::numeric / nullif(sum(m.counted_slots), 0),
           sum(m.actual_wh)::numeric / nullif(sum(m.actual_wh) + sum(m.lost_wh), 0),
           100 * sum(m.shortfall_hours) / nullif(sum(m.counted_hours), 0),
           sum(m.shortfall_hours), sum(m.shortfall_mwh), NULL::numeric, NULL::numeric, NULL::boolean
    FROM months m
    GROUP BY m.month_no
    UNION ALL
    SELECT 'year', y.first_day, y.last_day,
           CASE WHEN count(DISTINCT p.contract_id) = 1 THEN min(p.contract_id) END,
           string_agg(DISTINCT p.contract, ', '), string_agg(DISTINCT p.currency, ', '),
           sum(p.days)::integer, sum(p.turbine_days)::bigint, y.days_in_year,
           sum(p.counted_slots)::bigint, sum(p.available_slots)::bigint, sum(p.excluded_slots)::bigint, sum(p.counted_hours),
           sum(p.actual_wh)::bigint, sum(p.lost_wh)::bigint, sum(p.counted_potential_wh)::bigint,
           CASE WHEN count(DISTINCT p.warranty_pm) = 1 AND count(p.warranty_pm) = count(*) THEN min(p.warranty_pm) END,
           sum(p.available_slots)::numeric / nullif(sum(p.counted_slots), 0),
           sum(p.actual_wh)::numeric / nullif(sum(p.actual_wh) + sum(p.lost_wh), 0),
           -- the periods' shortfalls weighted by their counted hours
           100 * sum(p.shortfall_hours) / nullif(sum(p.counted_hours), 0),
           sum(p.shortfall_hours), sum(p.shortfall_mwh),
           -- money only in one currency: a year in two has no total
           CASE WHEN count(DISTINCT p.currency) <= 1 THEN
               CASE WHEN (SELECT c.ld_cap FROM year_cap c) < sum(p.ld) THEN (SELECT c.ld_cap FROM year_cap c) ELSE sum(p.ld) END END,
           CASE WHEN count(DISTINCT p.currency) <= 1 THEN sum(p.bonus) END,
           CASE WHEN count(DISTINCT p.currency) <= 1 THEN coalesce((SELECT c.ld_cap FROM year_cap c) < sum(p.ld), false) END
    FROM y LEFT JOIN periods p ON true
    GROUP BY y.first_day, y.last_day, y.days_in_year
    ORDER BY 1, 2
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_contract_year(text, integer) IS 'Farm p_farm''s contract year p_year (contract_year_start) to date, from its rolled-up days (farm_day_contract): one row per period (scope period: a run of days counted by one contract, settled by that contract''s terms), per contract month (scope month) and for the year (scope year). Counts and energy are sums; contractual availability = available / counted slots (counted = not excluded); shortfall = warranty - availability (never negative) in points, in turbine-hours (of the counted time, a slot being its farm version''s cadence) and in MWh (of the counted time''s potential energy); a period''s LDs are shortfall points x ld_per_point x (turbine_days or days) / days_in_year, or shortfall MWh x ld_per_mwh, to the cent; its bonus likewise above bonus_above_pm. The year sums its periods (its shortfall points weighted by counted hours), caps the LDs at the ld_cap of its last period (ld_capped), and gives no money total when its periods are in two currencies. docs/report-user.md: The contract year.';

-- report_contract_year: what sql/reports/contract_year.sql prints. The
-- periods first (each contract's name and terms above the figures), then
-- the months of the year so far, the year, and every day accepted with its
-- note. A month or the year is final only when each of its days so far is
-- (farm_day_status, the rule of the monthly report), incomplete when only
-- missing slots hold days back, provisional otherwise; why names the days.
-- +goose StatementBegin
CREATE FUNCTION report_contract_year(p_farm text, p_year text, p_now timestamp with time zone DEFAULT now())
RETURNS TABLE (
    scope                             text,
    first_day                         date,
    last_day                          date,
    contract                          text,
    terms                             text,
    currency                          text,
    days                              integer,
    turbine_days                      bigint,
    warranty_pct                      numeric,
    contractual_availability_pct      numeric,
    production_based_availability_pct numeric,
    counted_turbine_hours             numeric,
    shortfall_points                  numeric,
    shortfall_turbine_hours           numeric,
    counted_potential_mwh             numeric,
    shortfall_mwh                     numeric,
    ld                                numeric,
    bonus                             numeric,
    status                            text,
    why                               text)
LANGUAGE plpgsql STABLE AS $fn$
#variable_conflict use_column
DECLARE
    v_year  integer;
    v_first date;
    v_last  date;
BEGIN
    IF coalesce(p_farm, '') = '' THEN
        RAISE EXCEPTION 'farm: none given (psql -v farm=FARM_ID -v year=YYYY -f sql/reports/contract_year.sql)'
            USING ERRCODE = 'invalid_parameter_value', COLUMN = 'farm';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM farm f WHERE f.id = p_farm) THEN
        RAISE EXCEPTION 'farm "%": no such farm (SELECT id FROM farm lists them)', p_farm
            USING ERRCODE = 'no_data_found', COLUMN = 'farm';
    END IF;
    IF coalesce(p_year, '') !~ '^[1-9][0-9]{3}$' THEN
        RAISE EXCEPTION 'year "%": want the contract year as YYYY, the calendar year it starts in, e.g. 2026', coalesce(p_year, '')
            USING ERRCODE = 'invalid_parameter_value', COLUMN = 'year';
    END IF;
    v_year := p_year::integer;
    v_first := contract_year_start(p_farm, v_year);
    v_last := (v_first + interval '1 year')::date - 1;

    RETURN QUERY
    WITH f AS (
        SELECT * FROM farm_contract_year(p_farm, v_year)
    ), so_far AS (
        -- the days of the year begun by p_now, each judged as the monthly
        -- report judges it
        SELECT s.day, s.status, s.held_back, s.notes,
               (extract(year FROM age(s.day, v_first)) * 12 + extract(month FROM age(s.day, v_first)))::integer AS month_no
        FROM generate_series(v_first::timestamp, v_last::timestamp, interval '1 day') AS g
        CROSS JOIN LATERAL farm_day_status(p_farm, g::date, p_now) AS s
        WHERE farm_day_start(p_farm, g::date) <= p_now
    ), spans AS (
        -- what each row of the report covers: a period's days, a contract
        -- month's days so far, the year so far
        SELECT 1 AS part, x.first_day, x.last_day FROM f x WHERE x.scope = 'period'
        UNION ALL
        SELECT 2, min(sf.day), max(sf.day) FROM so_far sf GROUP BY sf.month_no
        UNION ALL
        SELECT 3, v_first, (SELECT max(sf.day) FROM so_far sf)
    ), judged AS (
        -- per span: its status and the days holding it back, per reason,
        -- as runs of consecutive days (a day minus its rank is constant
        -- along a run)
        SELECT sp.part, sp.first_day,
               CASE WHEN bool_and(sf.status = 'final') THEN 'final'
                    WHEN bool_and(sf.status IN ('final', 'incomplete')) THEN 'incomplete'
                    ELSE 'provisional' END AS status,
               (SELECT string_agg(r.reason || ': ' || r.days, '; ' ORDER BY array_position(farm_day_reasons(), r.reason))
                FROM (SELECT rn.reason,
                             string_agg(CASE WHEN rn.a = rn.b THEN to_char(rn.a, 'YYYY-MM-DD')
                                             ELSE to_char(rn.a, 'YYYY-MM-DD') || '..' || to_char(rn.b, 'YYYY-MM-DD') END,
                                        ', ' ORDER BY rn.a) AS days
                      FROM (SELECT h.reason, min(h.day) AS a, max(h.day) AS b
                            FROM (SELECT x.reason, s2.day,
                                         s2.day - (row_number() OVER (PARTITION BY x.reason ORDER BY s2.day))::integer AS run
                                  FROM so_far s2 CROSS JOIN LATERAL unnest(s2.held_back) AS x(reason)
                                  WHERE s2.day BETWEEN sp.first_day AND sp.last_day) AS h
                            GROUP BY h.reason, h.run) AS rn
                      GROUP BY rn.reason) AS r) AS held
        FROM spans sp
        JOIN so_far sf ON sf.day BETWEEN sp.first_day AND sp.last_day
        GROUP BY sp.part, sp.first_day, sp.last_day
    ), shown AS (
        SELECT 1 AS part, x.first_day, x.last_day, x.contract, contract_terms(x.contract_id) AS terms, x.currency, x.days, x.turbine_days,
               x.warranty_pm, x.contractual_availability, x.production_based_availability, x.counted_hours, x.shortfall_points,
               x.shortfall_turbine_hours, x.counted_potential_wh, x.shortfall_mwh, x.ld, x.bonus, NULL::text AS note
        FROM f x WHERE x.scope = 'period'
        UNION ALL
        -- every month of the year so far, with figures once it has rolled-up days
        SELECT 2, m.first_day, (m.first_day + interval '1 month')::date - 1, x.contract, NULL, x.currency, x.days, x.turbine_days,
               x.warranty_pm, x.contractual_availability, x.production_based_availability, x.counted_hours, x.shortfall_points,
               x.shortfall_turbine_hours, x.counted_potential_wh, x.shortfall_mwh, NULL, NULL, NULL
        FROM (SELECT (v_first + make_interval(months => sf.month_no))::date AS first_day
              FROM so_far sf GROUP BY sf.month_no) AS m
        LEFT JOIN f x ON x.scope = 'month' AND x.first_day = m.first_day
        UNION ALL
        SELECT 3, v_first, v_last, x.contract, NULL, x.currency, x.days, x.turbine_days,
               x.warranty_pm, x.contractual_availability, x.production_based_availability, x.counted_hours, x.shortfall_points,
               x.shortfall_turbine_hours, x.counted_potential_wh, x.shortfall_mwh, x.ld, x.bonus,
               nullif(concat_ws('; ',
                   CASE WHEN (SELECT count(*) FROM f p WHERE p.scope = 'period') > 1 THEN
                       'settled in ' || (SELECT count(*) FROM f p WHERE p.scope = 'period') || ' periods, each by its contract: '
                       || (SELECT string_agg(p.contract || ' ' || to_char(p.first_day, 'YYYY-MM-DD') || '..' || to_char(p.last_day, 'YYYY-MM-DD'),
                                             ', ' ORDER BY p.first_day) FROM f p WHERE p.scope = 'period') END,
                   CASE WHEN x.ld_capped THEN 'LDs capped at the year''s cap (' || round(x.ld, 2) || ' ' || x.currency || ')' END,
                   CASE WHEN x.currency LIKE '%,%' THEN 'no money total: the periods are in different currencies' END), '')
        FROM f x WHERE x.scope = 'year'
        UNION ALL
        -- every day accepted as it is, with who, when and why
        SELECT 4, sf.day, sf.day, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, n
        FROM so_far sf CROSS JOIN LATERAL unnest(sf.notes) AS n
        WHERE n LIKE 'accepted with %'
    )
    SELECT (ARRAY['period', 'month', 'year', 'accepted'])[s.part], s.first_day, s.last_day, s.contract, s.terms, s.currency,
           s.days, s.turbine_days, round(s.warranty_pm / 10.0, 1),
           round(100 * s.contractual_availability, 4), round(100 * s.production_based_availability, 4),
           round(s.counted_hours, 2), round(s.shortfall_points, 4), round(s.shortfall_turbine_hours, 2),
           round(s.counted_potential_wh / 1e6, 3), round(s.shortfall_mwh, 3), s.ld, s.bonus,
           CASE WHEN s.part = 4 THEN 'final' ELSE coalesce(j.status, 'provisional') END,
           nullif(concat_ws('; ', CASE WHEN s.part < 4 THEN coalesce(j.held, CASE WHEN j.status IS NULL THEN 'not begun' END) END, s.note), '')
    FROM shown s
    LEFT JOIN judged j ON j.part = s.part AND j.first_day = s.first_day
    ORDER BY s.part, s.first_day;
END
$fn$;
-- +goose StatementEnd
COMMENT ON FUNCTION report_contract_year(text, text, timestamp with time zone) IS 'The contract year report of farm p_farm, year p_year (YYYY, the calendar year it starts in), judged at p_now: rows period (each run of days counted by one contract: its name and terms, figures, LDs and bonus), month (each contract month begun), year (to date: LDs capped, and how it was settled) and accepted (each accepted day with its note). Percentages, turbine-hours, MWh and money rounded for print from farm_contract_year. status: final when every day so far is final (farm_day_status), incomplete when only missing slots hold days back, provisional otherwise; why names the days by reason. sql/reports/contract_year.sql formats it; orchestrator report contract runs that file.';


-- +goose Down
DROP FUNCTION report_contract_year(text, text, timestamp with time zone);
DROP FUNCTION farm_contract_year(text, integer);
DROP FUNCTION contract_year_of(text, date);
DROP FUNCTION contract_year_start(text, integer);
DROP FUNCTION contract_terms(bigint);
ALTER TABLE availability_contract
    DROP CONSTRAINT availability_contract_ld_check,
    DROP CONSTRAINT availability_contract_year_start_check,
    DROP COLUMN bonus_per, DROP COLUMN bonus_per_point, DROP COLUMN bonus_above_pm, DROP COLUMN ld_cap,
    DROP COLUMN ld_per_mwh, DROP COLUMN ld_per, DROP COLUMN ld_per_point, DROP COLUMN currency,
    DROP COLUMN year_start_day, DROP COLUMN year_start_month, DROP COLUMN counting_hash;
