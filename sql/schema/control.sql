-- The control database's schema as sql/migrations/control and River's migrations leave it:
-- pg_dump --schema-only, normalised. Written by `make schema`; do not edit.
-- `make verify` fails when it differs from what the migrations give.

-- Name: river_job_state; Type: TYPE; Schema: public

CREATE TYPE public.river_job_state AS ENUM (
    'available',
    'cancelled',
    'completed',
    'discarded',
    'pending',
    'retryable',
    'running',
    'scheduled'
);

-- Name: alert_count_deleted(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.alert_count_deleted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    -- A farm and kind with none left goes first (the update below would
    -- leave it at 0 otherwise), then the others are counted down.
    DELETE FROM alert_count c
    USING (SELECT o.farm_id, o.kind, count(*) AS alerts FROM deleted o GROUP BY o.farm_id, o.kind) AS d
    WHERE c.farm_id = d.farm_id AND c.kind = d.kind AND c.alerts <= d.alerts;
    UPDATE alert_count c
    SET alerts = c.alerts - d.alerts,
        last_raised_at = coalesce((SELECT max(a.raised_at) FROM alert a WHERE a.farm_id = c.farm_id AND a.kind = c.kind), c.last_raised_at)
    FROM (SELECT o.farm_id, o.kind, count(*) AS alerts FROM deleted o GROUP BY o.farm_id, o.kind) AS d
    WHERE c.farm_id = d.farm_id AND c.kind = d.kind;
    RETURN NULL;
END
$$;

-- Name: FUNCTION alert_count_deleted(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.alert_count_deleted() IS 'Takes the alerts a statement deleted off alert_count.';

-- Name: alert_count_inserted(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.alert_count_inserted() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO alert_count (farm_id, kind, alerts, last_raised_at)
    SELECT n.farm_id, n.kind, count(*), max(n.raised_at)
    FROM inserted n
    GROUP BY n.farm_id, n.kind
    ORDER BY n.farm_id, n.kind
    ON CONFLICT (farm_id, kind) DO UPDATE
    SET alerts = alert_count.alerts + EXCLUDED.alerts,
        last_raised_at = greatest(alert_count.last_raised_at, EXCLUDED.last_raised_at);
    RETURN NULL;
END
$$;

-- Name: FUNCTION alert_count_inserted(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.alert_count_inserted() IS 'Adds the alerts a statement inserted to alert_count.';

-- Name: alert_count_truncated(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.alert_count_truncated() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM alert_count;
    RETURN NULL;
END
$$;

-- Name: FUNCTION alert_count_truncated(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.alert_count_truncated() IS 'Empties alert_count when alert is truncated.';

-- Name: audit_trail_truncate_guard(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.audit_trail_truncate_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION '% is an audit trail: never truncated', TG_TABLE_NAME;
END
$$;

-- Name: FUNCTION audit_trail_truncate_guard(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.audit_trail_truncate_guard() IS 'Refuses TRUNCATE of an audit trail (operator_event, farm_day_acceptance).';

-- Name: availability_contract; Type: TABLE; Schema: public

CREATE TABLE public.availability_contract (
    id bigint NOT NULL,
    hash text NOT NULL,
    name text NOT NULL,
    state_codes text[] DEFAULT '{}'::text[] NOT NULL,
    state_categories smallint[] DEFAULT '{}'::smallint[] NOT NULL,
    cut_in_ms real,
    cut_out_ms real,
    priority smallint[] NOT NULL,
    available smallint[] NOT NULL,
    excluded smallint[] NOT NULL,
    warranty_pm integer,
    year_start_month smallint DEFAULT 1 NOT NULL,
    year_start_day smallint DEFAULT 1 NOT NULL,
    currency text,
    ld_per_point numeric(14,2),
    ld_per text,
    ld_per_mwh numeric(14,2),
    ld_cap numeric(14,2),
    bonus_above_pm integer,
    bonus_per_point numeric(14,2),
    bonus_per text,
    counting_hash text NOT NULL,
    CONSTRAINT availability_contract_bonus_above_pm_check CHECK (((bonus_above_pm >= 1) AND (bonus_above_pm <= 1000))),
    CONSTRAINT availability_contract_bonus_per_check CHECK ((bonus_per = ANY (ARRAY['turbine'::text, 'farm'::text]))),
    CONSTRAINT availability_contract_bonus_per_point_check CHECK ((bonus_per_point >= (0)::numeric)),
    CONSTRAINT availability_contract_check CHECK ((cardinality(state_codes) = cardinality(state_categories))),
    CONSTRAINT availability_contract_check1 CHECK (((cut_in_ms IS NULL) OR (cut_out_ms IS NULL) OR (cut_in_ms < cut_out_ms))),
    CONSTRAINT availability_contract_check2 CHECK ((NOT (available && excluded))),
    CONSTRAINT availability_contract_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT availability_contract_ld_cap_check CHECK ((ld_cap >= (0)::numeric)),
    CONSTRAINT availability_contract_ld_check CHECK ((((ld_per_point IS NULL) = (ld_per IS NULL)) AND (NOT ((ld_per_point IS NOT NULL) AND (ld_per_mwh IS NOT NULL))) AND ((ld_cap IS NULL) OR (ld_per_point IS NOT NULL) OR (ld_per_mwh IS NOT NULL)) AND ((bonus_above_pm IS NULL) = (bonus_per_point IS NULL)) AND ((bonus_per_point IS NULL) = (bonus_per IS NULL)) AND ((bonus_above_pm IS NULL) OR (bonus_above_pm > warranty_pm)) AND ((COALESCE(ld_per_point, ld_per_mwh, bonus_per_point) IS NULL) OR ((warranty_pm IS NOT NULL) AND (currency IS NOT NULL))))),
    CONSTRAINT availability_contract_ld_per_check CHECK ((ld_per = ANY (ARRAY['turbine'::text, 'farm'::text]))),
    CONSTRAINT availability_contract_ld_per_mwh_check CHECK ((ld_per_mwh >= (0)::numeric)),
    CONSTRAINT availability_contract_ld_per_point_check CHECK ((ld_per_point >= (0)::numeric)),
    CONSTRAINT availability_contract_priority_check CHECK ((cardinality(priority) = 13)),
    CONSTRAINT availability_contract_warranty_pm_check CHECK (((warranty_pm >= 1) AND (warranty_pm <= 1000))),
    CONSTRAINT availability_contract_year_start_check CHECK (((year_start_day >= 1) AND (year_start_day <= 28))),
    CONSTRAINT availability_contract_year_start_month_check CHECK (((year_start_month >= 1) AND (year_start_month <= 12)))
);

-- Name: TABLE availability_contract; Type: COMMENT; Schema: public

COMMENT ON TABLE public.availability_contract IS 'Availability contracts as fleet files give them (farm: contract:), one row per distinct content; farm_version.contract_id names the one a day counts by. Row 1 is the default: no state codes, no wind range, so a slot is full performance when its readings say available, forced outage when one says unavailable, information unavailable without a reading (the counts before contracts, exactly).';

-- Name: COLUMN availability_contract.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.id IS 'Identity; farm_version.contract_id names it (1: the default).';

-- Name: COLUMN availability_contract.hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.hash IS 'sha256 of the contract''s canonical form (''default'' for row 1): the same content is the same row.';

-- Name: COLUMN availability_contract.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.name IS 'The contract''s name in the fleet file.';

-- Name: COLUMN availability_contract.state_codes; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.state_codes IS 'Controller state codes (readings.state) the contract maps; state_categories[i] is the category (availability_category.id) of state_codes[i]. A mapped code decides its reading''s category alone.';

-- Name: COLUMN availability_contract.state_categories; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.state_categories IS 'The category (availability_category.id) of each of state_codes, in the same order.';

-- Name: COLUMN availability_contract.cut_in_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.cut_in_ms IS 'A reading no code maps, with wind_ms below this, is out of environmental specification (besides what its available flag says; the priority decides). NULL: no lower bound.';

-- Name: COLUMN availability_contract.cut_out_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.cut_out_ms IS 'As cut_in_ms, for wind_ms at or above this. NULL: no upper bound.';

-- Name: COLUMN availability_contract.priority; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.priority IS 'Every category id, highest priority first: a slot whose readings (or events) name several categories is the first of them here.';

-- Name: COLUMN availability_contract.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.available IS 'Categories counted as available (numerator and denominator of contractual availability).';

-- Name: COLUMN availability_contract.excluded; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.excluded IS 'Categories excluded from both sides; every other category counts as unavailable (denominator only).';

-- Name: COLUMN availability_contract.warranty_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.warranty_pm IS 'The warranted contractual availability, per mille (NULL: none given); the fleet table compares the month with it.';

-- Name: COLUMN availability_contract.year_start_month; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.year_start_month IS 'The month the contract year starts in (1-12; default January).';

-- Name: COLUMN availability_contract.year_start_day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.year_start_day IS 'The day of year_start_month the contract year starts on, 1-28: each contract month starts on that day of its month, which every month has.';

-- Name: COLUMN availability_contract.currency; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.currency IS 'The currency the money terms are in (ISO 4217 code, a label: nothing is converted). Required with any of them.';

-- Name: COLUMN availability_contract.ld_per_point; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.ld_per_point IS 'Liquidated damages per percentage point of contractual availability below the warranty, for a whole contract year of one turbine (ld_per turbine) or of the farm (ld_per farm); a period shorter than the year pays its share (turbine_days or days / days in the year). NULL: not this style.';

-- Name: COLUMN availability_contract.ld_per; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.ld_per IS 'turbine or farm: what ld_per_point is per.';

-- Name: COLUMN availability_contract.ld_per_mwh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.ld_per_mwh IS 'Liquidated damages per MWh of the shortfall in energy: (warranty - contractual availability) x the potential energy of the counted (not excluded) time. NULL: not this style.';

-- Name: COLUMN availability_contract.ld_cap; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.ld_cap IS 'The most liquidated damages a contract year pays (the cap of the contract governing the year''s last counted day). NULL: no cap.';

-- Name: COLUMN availability_contract.bonus_above_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.bonus_above_pm IS 'Contractual availability above which a bonus is paid, per mille (above warranty_pm). NULL: no bonus.';

-- Name: COLUMN availability_contract.bonus_per_point; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.bonus_per_point IS 'The bonus per percentage point above bonus_above_pm, for a whole year of one turbine or the farm (bonus_per), shared as ld_per_point is.';

-- Name: COLUMN availability_contract.bonus_per; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.bonus_per IS 'turbine or farm: what bonus_per_point is per.';

-- Name: COLUMN availability_contract.counting_hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_contract.counting_hash IS 'sha256 of the contract''s canonical form without its name, warranty, year start and settlement terms (''default'' for row 1; a contract recorded before this column: its hash): two contracts with the same counting_hash sort every slot alike, so a version that changes only those recounts no day.';

-- Name: contract_key(bigint, smallint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.contract_key(p_contract bigint, p_category smallint) RETURNS integer
    LANGUAGE sql STABLE
    RETURN (SELECT ((array_position(c.priority, contract_key.p_category) * 16) + contract_key.p_category) FROM public.availability_contract c WHERE (c.id = contract_key.p_contract));

-- Name: FUNCTION contract_key(p_contract bigint, p_category smallint); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.contract_key(p_contract bigint, p_category smallint) IS 'Category p_category''s key under contract p_contract: priority rank × 16 + id (TurbineWindowUpsert''s slot key; the least wins). An operator event''s key, and information unavailable''s for a slot without a reading.';

-- Name: contract_keys(bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.contract_keys(p_contract bigint, OUT state_codes text[], OUT state_keys integer[], OUT key_available integer, OUT key_unavailable integer, OUT key_environment integer, OUT cut_in_ms double precision, OUT cut_out_ms double precision) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    SELECT c.state_codes,
           coalesce((SELECT array_agg(array_position(c.priority, sc.cat) * 16 + sc.cat ORDER BY sc.i)
                     FROM unnest(c.state_categories) WITH ORDINALITY AS sc(cat, i)), '{}'),
           array_position(c.priority, 1::smallint) * 16 + 1,
           array_position(c.priority, 10::smallint) * 16 + 10,
           array_position(c.priority, 5::smallint) * 16 + 5,
           c.cut_in_ms, c.cut_out_ms
    FROM availability_contract c WHERE c.id = p_contract
$$;

-- Name: FUNCTION contract_keys(p_contract bigint, OUT state_codes text[], OUT state_keys integer[], OUT key_available integer, OUT key_unavailable integer, OUT key_environment integer, OUT cut_in_ms double precision, OUT cut_out_ms double precision); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.contract_keys(p_contract bigint, OUT state_codes text[], OUT state_keys integer[], OUT key_available integer, OUT key_unavailable integer, OUT key_environment integer, OUT cut_in_ms double precision, OUT cut_out_ms double precision) IS 'A contract as TurbineWindowUpsert''s arguments: per mapped state code, and for a reading no code maps (available: full performance; unavailable: forced outage; wind outside [cut_in_ms, cut_out_ms): out of environmental specification), the key priority rank * 16 + category id. The least key of a slot''s readings is its category.';

-- Name: contract_slots(integer[], bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.contract_slots(p_slots integer[], p_contract bigint, OUT available bigint, OUT unavailable bigint, OUT excluded bigint) RETURNS record
    LANGUAGE sql STABLE
    AS $$
    SELECT coalesce(sum(s.n) FILTER (WHERE s.id = ANY (c.available)), 0)::bigint,
           coalesce(sum(s.n) FILTER (WHERE NOT s.id = ANY (c.available) AND NOT s.id = ANY (c.excluded)), 0)::bigint,
           coalesce(sum(s.n) FILTER (WHERE s.id = ANY (c.excluded)), 0)::bigint
    FROM availability_contract c
    CROSS JOIN LATERAL unnest(p_slots) WITH ORDINALITY AS s(n, id)
    WHERE c.id = p_contract
$$;

-- Name: FUNCTION contract_slots(p_slots integer[], p_contract bigint, OUT available bigint, OUT unavailable bigint, OUT excluded bigint); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.contract_slots(p_slots integer[], p_contract bigint, OUT available bigint, OUT unavailable bigint, OUT excluded bigint) IS 'A category_slots array sorted by contract p_contract''s classes: slots available, unavailable (every category neither available nor excluded) and excluded. Contractual availability = available / (available + unavailable).';

-- Name: contract_terms(bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.contract_terms(p_contract bigint) RETURNS text
    LANGUAGE sql STABLE
    AS $$
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

-- Name: FUNCTION contract_terms(p_contract bigint); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.contract_terms(p_contract bigint) IS 'A contract''s year start and settlement terms in words (warranty, LDs, cap, bonus, currency), as report_contract_year prints them.';

-- Name: contract_year_of(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.contract_year_of(p_farm text, p_day date) RETURNS integer
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN p_day >= contract_year_start(p_farm, extract(year FROM p_day)::integer)
                THEN extract(year FROM p_day)::integer ELSE extract(year FROM p_day)::integer - 1 END
$$;

-- Name: FUNCTION contract_year_of(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.contract_year_of(p_farm text, p_day date) IS 'The contract year (by the calendar year it starts in) of farm p_farm that farm-local day p_day belongs to.';

-- Name: contract_year_start(text, integer); Type: FUNCTION; Schema: public

CREATE FUNCTION public.contract_year_start(p_farm text, p_year integer) RETURNS date
    LANGUAGE sql STABLE
    AS $$
    SELECT make_date(p_year, k.year_start_month, k.year_start_day)
    FROM farm_version v
    JOIN availability_contract k ON k.id = v.contract_id
    WHERE v.farm_id = p_farm
    ORDER BY v.first_day DESC
    LIMIT 1
$$;

-- Name: FUNCTION contract_year_start(p_farm text, p_year integer); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.contract_year_start(p_farm text, p_year integer) IS 'The first farm-local day of farm p_farm''s contract year p_year: p_year with the year_start of the contract of the farm''s latest version (NULL for no farm). The year ends the day before the same date a year later.';

-- Name: farm_contract_year(text, integer); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_contract_year(p_farm text, p_year integer) RETURNS TABLE(scope text, first_day date, last_day date, contract_id bigint, contract text, currency text, days integer, turbine_days bigint, days_in_year integer, counted_slots bigint, available_slots bigint, excluded_slots bigint, counted_hours numeric, actual_wh bigint, lost_wh bigint, counted_potential_wh bigint, warranty_pm integer, contractual_availability numeric, production_based_availability numeric, shortfall_points numeric, shortfall_turbine_hours numeric, shortfall_mwh numeric, ld numeric, bonus numeric, ld_capped boolean)
    LANGUAGE sql STABLE
    AS $$
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

-- Name: FUNCTION farm_contract_year(p_farm text, p_year integer); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_contract_year(p_farm text, p_year integer) IS 'Farm p_farm''s contract year p_year (contract_year_start) to date, from its rolled-up days (farm_day_contract): one row per period (scope period: a run of days counted by one contract, settled by that contract''s terms), per contract month (scope month) and for the year (scope year). Counts and energy are sums; contractual availability = available / counted slots (counted = not excluded); shortfall = warranty - availability (never negative) in points, in turbine-hours (of the counted time, a slot being its farm version''s cadence) and in MWh (of the counted time''s potential energy); a period''s LDs are shortfall points x ld_per_point x (turbine_days or days) / days_in_year, or shortfall MWh x ld_per_mwh, to the cent; its bonus likewise above bonus_above_pm. The year sums its periods (its shortfall points weighted by counted hours), caps the LDs at the ld_cap of its last period (ld_capped), and gives no money total when its periods are in two currencies. docs/report-user.md: The contract year.';

-- Name: farm_day_acceptance_guard(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_acceptance_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'farm_day_acceptance % is never deleted: it records who accepted farm % day %, when and why', OLD.id, OLD.farm_id, OLD.day;
    END IF;
    RAISE EXCEPTION 'farm_day_acceptance % is never edited: it records who accepted farm % day %, when and why', OLD.id, OLD.farm_id, OLD.day;
END
$$;

-- Name: FUNCTION farm_day_acceptance_guard(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_acceptance_guard() IS 'Keeps farm_day_acceptance an audit trail: refuses a delete and an edit.';

-- Name: farm_day_closes_at(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_closes_at(p_farm text, p_day date) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT local_day_start(f.timezone, p_day + 1) + make_interval(secs => r.allowed_lateness_s)
    FROM farm f JOIN farm_rules r ON r.farm_id = f.id
    WHERE f.id = p_farm
$$;

-- Name: FUNCTION farm_day_closes_at(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_closes_at(p_farm text, p_day date) IS 'The instant the farm-day counts as closed by the rules in force now: its end + the farm''s allowed lateness. turbine_day.closed_at records it when a row is written.';

-- Name: farm_day_reasons(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_reasons() RETURNS text[]
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT ARRAY['not ended', 'no rollup', 'turbines missing', 'rolled up before the day closed',
                 'readings arrived after the rollup', 'shard not drained', 'recompute pending',
                 'recompute failed', 'information unavailable']
$$;

-- Name: FUNCTION farm_day_reasons(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_reasons() IS 'The reasons farm_day_status may hold a farm-day back, in the order it lists them. The last, information unavailable, alone makes the day incomplete; any other, provisional.';

-- Name: farm_day_start(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_start(p_farm text, p_day date) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
    SELECT local_day_start((farm_day_version(p_farm, p_day - 1)).timezone, p_day)
$$;

-- Name: FUNCTION farm_day_start(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_start(p_farm text, p_day date) IS 'Start of farm-local day p_day: the end of the day before, midnight in the zone of the version governing that day. A day ends at midnight in its own zone, so days tile time and a zone change moves no day before the one it starts on (that day starts at the old midnight).';

-- Name: farm_day_status(text, date, timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_status(p_farm text, p_day date, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(farm_id text, day date, day_start timestamp with time zone, day_end timestamp with time zone, registered_turbines integer, turbines integer, turbines_in_service integer, expected bigint, received bigint, available bigint, late bigint, early bigint, beyond_cadence bigint, out_of_service bigint, last_received_at timestamp with time zone, oldest_computed_at timestamp with time zone, computed_at timestamp with time zone, closed_at timestamp with time zone, computed_after_close boolean, pending boolean, status text, held_back text[], notes text[], why text)
    LANGUAGE plpgsql STABLE ROWS 1
    AS $$
#variable_conflict use_column
BEGIN
RETURN QUERY
WITH b AS (
    -- the day's bounds and threshold under the version governing it
    SELECT f.id, farm_day_start(p_farm, p_day) AS day_start, farm_day_start(p_farm, p_day + 1) AS day_end,
           (farm_day_version(p_farm, p_day)).completeness_alert_pm AS unresolved_pm
    FROM farm f
    WHERE f.id = p_farm
),
reg AS (
    SELECT t.id, t.shard_name
    FROM turbine t JOIN b ON t.farm_id = b.id
    WHERE turbine_in_service(t.commissioned_at, t.decommissioned_at, b.day_start, b.day_end)
),
r AS (
    SELECT count(*)::integer AS turbines,
           count(reg.id)::integer AS turbines_in_service,
           sum(td.expected)::bigint AS expected, sum(td.received)::bigint AS received, sum(td.available)::bigint AS available,
           sum(td.late)::bigint AS late, sum(td.early)::bigint AS early,
           sum(td.beyond_cadence)::bigint AS beyond_cadence, sum(td.out_of_service)::bigint AS out_of_service,
           max(td.last_received_at) AS last_received_at,
           min(td.computed_at) AS oldest_computed_at, max(td.computed_at) AS computed_at,
           max(td.closed_at) AS closed_at,
           bool_and(td.computed_at >= td.closed_at) AS computed_after_close,
           -- the earliest row computed before its day closed
           (array_agg(td.computed_at ORDER BY td.computed_at) FILTER (WHERE td.computed_at < td.closed_at))[1] AS early_computed_at,
           (array_agg(td.closed_at ORDER BY td.computed_at) FILTER (WHERE td.computed_at < td.closed_at))[1] AS early_closed_at
    FROM turbine_day td
    LEFT JOIN reg ON reg.id = td.turbine_id
    WHERE td.farm_id = p_farm AND td.day = p_day
),
w AS (
    SELECT * FROM farm_day_waiting(p_farm, p_day)
),
u AS (
    -- marks of the day announced on a shard that no drain has passed yet,
    -- then the shards holding its turbines that were never drained
    SELECT nullif(concat_ws(', ',
               'marked on ' || w.announced_shards || ' at ' || utc_text(w.announced_at) || ', not drained yet',
               (SELECT string_agg(x.shard_name || ' never drained', ', ' ORDER BY x.shard_name)
                FROM (SELECT DISTINCT reg.shard_name FROM reg) AS x
                WHERE NOT EXISTS (SELECT 1 FROM shard_drain d WHERE d.shard_name = x.shard_name))), '') AS undrained
    FROM w
),
rc AS (
    SELECT count(*)::integer AS registered FROM reg
),
acc AS (
    -- the latest acceptance of the day (an operator's, audited)
    SELECT a.accepted_by, a.accepted_at, a.note, a.expected - a.received AS missing
    FROM farm_day_acceptance a
    WHERE a.farm_id = p_farm AND a.day = p_day
    ORDER BY a.accepted_at DESC, a.id DESC
    LIMIT 1
),
facts AS (
    SELECT b.id, b.day_start, b.day_end,
           p_now < b.day_end AS open,
           rc.registered,
           r.*,
           r.turbines > 0 AS has_rows,
           w.requested_at, w.settling_at AS marked_at, w.settling_shards, u.undrained,
           w.job_unfinished, w.pending, rollup_day_failure(p_farm, p_day) AS failure,
           r.expected - r.received AS missing,
           -- information unavailable: more slots without a reading than
           -- the farm's threshold allows, per mille of expected
           p_now >= b.day_end AND r.turbines > 0 AND r.expected > 0
               AND (r.expected - r.received) * 1000 > b.unresolved_pm::bigint * r.expected AS unresolved,
           b.unresolved_pm,
           acc.accepted_by, acc.accepted_at, acc.note AS accepted_note, acc.missing AS accepted_missing
    FROM b CROSS JOIN rc CROSS JOIN r CROSS JOIN w CROSS JOIN u
    LEFT JOIN acc ON true
)
SELECT f.id, p_day, f.day_start, f.day_end, f.registered,
       f.turbines, f.turbines_in_service, f.expected, f.received, f.available, f.late, f.early,
       f.beyond_cadence, f.out_of_service, f.last_received_at, f.oldest_computed_at, f.computed_at, f.closed_at,
       f.computed_after_close,
       f.pending,
       CASE WHEN i0.held_back IS NULL THEN 'final'
            WHEN i0.held_back = ARRAY[rs.reason[9]] THEN 'incomplete'
            ELSE 'provisional' END,
       i0.held_back, n.notes,
       nullif(concat_ws('; ', i0.why, array_to_string(n.notes, '; ')), '')
FROM facts f
CROSS JOIN (SELECT farm_day_reasons() AS reason) AS rs
CROSS JOIN LATERAL (
    SELECT CASE WHEN f.registered = 0 THEN ARRAY['no turbines in service']
                WHEN f.unresolved AND f.missing <= f.accepted_missing
                THEN ARRAY[format('accepted with %s of %s slots without a reading by %s at %s: %s',
                                  to_char(f.missing, 'FM999,999,999,999,990'), to_char(f.expected, 'FM999,999,999,999,990'),
                                  f.accepted_by, utc_text(f.accepted_at), f.accepted_note)] END AS notes
) AS n
CROSS JOIN LATERAL (
    SELECT array_agg(v.reason ORDER BY v.ord) AS held_back,
           string_agg(v.reason || coalesce(' (' || v.detail || ')', ''), '; ' ORDER BY v.ord) AS why
    FROM (VALUES
        (1, rs.reason[1], NULL::text, f.open),
        (2, rs.reason[2], NULL::text, NOT f.open AND NOT f.has_rows AND f.registered > 0),
        (3, rs.reason[3], format('rolled up %s of %s', f.turbines_in_service, f.registered),
            NOT f.open AND f.has_rows AND f.turbines_in_service < f.registered),
        (4, rs.reason[4], format('computed %s, closed %s', utc_text(f.early_computed_at), utc_text(f.early_closed_at)),
            NOT f.open AND f.has_rows AND NOT f.computed_after_close),
        (5, rs.reason[5], concat_ws(', ', 'recompute requested ' || utc_text(f.requested_at),
                                          'marked on ' || f.settling_shards || ' at ' || utc_text(f.marked_at) || ', settling'),
            NOT f.open AND f.has_rows AND (f.requested_at IS NOT NULL OR f.marked_at IS NOT NULL)),
        (6, rs.reason[6], f.undrained,
            NOT f.open AND f.has_rows AND f.undrained IS NOT NULL),
        -- (with rows, a request or settling mark is reason 5 already)
        (7, rs.reason[7], NULL::text,
            NOT f.open AND f.registered > 0 AND (f.job_unfinished OR f.requested_at IS NOT NULL OR f.marked_at IS NOT NULL)
            AND NOT (f.has_rows AND (f.requested_at IS NOT NULL OR f.marked_at IS NOT NULL))),
        -- the day's last recompute failed and none has succeeded since,
        -- whether the day has ended or not: its error, named
        (8, rs.reason[8], f.failure, f.failure IS NOT NULL)
    ) AS v(ord, reason, detail, applies)
    WHERE v.applies
) AS j
-- reason 9, when no other holds the day back (settled numbers, judged):
-- alone, it makes the day incomplete rather than provisional; an
-- acceptance covers it while no more slots are missing than then
LEFT JOIN LATERAL (
    SELECT coalesce(j.held_back, ARRAY[rs.reason[9]]) AS held_back,
           coalesce(j.why, rs.reason[9] || format(' (%s of %s slots without a reading, %s %%, over the farm''s %s ‰; '
                                                || 'until the readings arrive or the day is accepted: orchestrator day accept)',
                                                to_char(f.missing, 'FM999,999,999,999,990'), to_char(f.expected, 'FM999,999,999,999,990'),
                                                round(100.0 * f.missing / nullif(f.expected, 0), 2), f.unresolved_pm)) AS why
    WHERE j.held_back IS NOT NULL OR (f.unresolved AND NOT coalesce(f.missing <= f.accepted_missing, false))
) AS i0 ON true;
END
$$;

-- Name: FUNCTION farm_day_status(p_farm text, p_day date, p_now timestamp with time zone); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_status(p_farm text, p_day date, p_now timestamp with time zone) IS 'One farm-day judged at p_now (default now()): its turbine_day sums, turbines in service, and status final, incomplete or provisional with held_back (reasons, in farm_day_reasons() order), notes (no turbines in service; an acceptance) and why. Provisional while the pipeline may still change it; incomplete when only its missing slots hold it back (more than completeness_alert_pm per mille of expected, not accepted: farm_day_acceptance). Never final while a mark of the day announced on a shard (dirty_mark_announced) is not passed by that shard''s drain, nor while a shard holding its turbines was never drained. The one home of the final rule: farm_day, farm_month and report_monthly_availability call it. docs/report-user.md: The monthly report.';

-- Name: farm_version; Type: TABLE; Schema: public

CREATE TABLE public.farm_version (
    farm_id text NOT NULL,
    first_day date NOT NULL,
    valid_from timestamp with time zone NOT NULL,
    valid_to timestamp with time zone,
    name text NOT NULL,
    timezone text NOT NULL,
    cadence_seconds integer NOT NULL,
    lane_threshold_ms integer NOT NULL,
    early_tolerance_ms integer NOT NULL,
    future_limit_s integer NOT NULL,
    max_age_days integer NOT NULL,
    window_s integer NOT NULL,
    mark_margin_s integer NOT NULL,
    allowed_lateness_s integer NOT NULL,
    divergence_alert_pm integer NOT NULL,
    completeness_alert_pm integer NOT NULL,
    apply_id bigint NOT NULL,
    contract_id bigint DEFAULT 1 NOT NULL,
    model_id bigint,
    power_min_kw integer NOT NULL,
    power_max_kw integer NOT NULL,
    wind_max_ms integer NOT NULL,
    CONSTRAINT farm_version_cadence_seconds_check CHECK ((cadence_seconds > 0)),
    CONSTRAINT farm_version_check CHECK (((valid_to IS NULL) OR (valid_to > valid_from))),
    CONSTRAINT farm_version_power_max_kw_check CHECK (((power_max_kw >= '-100000'::integer) AND (power_max_kw <= 100000))),
    CONSTRAINT farm_version_power_min_kw_check CHECK (((power_min_kw >= '-100000'::integer) AND (power_min_kw <= 100000))),
    CONSTRAINT farm_version_wind_max_ms_check CHECK (((wind_max_ms >= 1) AND (wind_max_ms <= 200))),
    CONSTRAINT farm_version_window_s_check CHECK ((window_s > 0))
);

-- Name: TABLE farm_version; Type: COMMENT; Schema: public

COMMENT ON TABLE public.farm_version IS 'Versions of a farm''s calendar and rules in force (the fleet file''s rules over the fleet defaults, resolved): day first_day onward until the next version''s first_day. A day ends at midnight in its version''s zone and starts where the day before ended (farm_day_start).';

-- Name: COLUMN farm_version.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_version.first_day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.first_day IS 'The first farm-local day this version governs (-infinity: since before the registry kept versions).';

-- Name: COLUMN farm_version.valid_from; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.valid_from IS 'The instant first_day starts: midnight in the previous version''s zone (farm_day_start; -infinity for the first version).';

-- Name: COLUMN farm_version.valid_to; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.valid_to IS 'The instant the next version starts; NULL = the version in force.';

-- Name: COLUMN farm_version.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.name IS 'Display name.';

-- Name: COLUMN farm_version.timezone; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.timezone IS 'IANA zone of the farm-local days this version governs.';

-- Name: COLUMN farm_version.cadence_seconds; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.cadence_seconds IS 'Default cadence of the farm''s turbine entries (each turbine''s own is in turbine_version).';

-- Name: COLUMN farm_version.lane_threshold_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.lane_threshold_ms IS 'farm_rules.lane_threshold_ms in force under this version.';

-- Name: COLUMN farm_version.early_tolerance_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.early_tolerance_ms IS 'farm_rules.early_tolerance_ms in force under this version.';

-- Name: COLUMN farm_version.future_limit_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.future_limit_s IS 'farm_rules.future_limit_s in force under this version.';

-- Name: COLUMN farm_version.max_age_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.max_age_days IS 'farm_rules.max_age_days in force under this version.';

-- Name: COLUMN farm_version.window_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.window_s IS 'farm_rules.window_s in force under this version: the window grid of its days.';

-- Name: COLUMN farm_version.mark_margin_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.mark_margin_s IS 'farm_rules.mark_margin_s in force under this version.';

-- Name: COLUMN farm_version.allowed_lateness_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.allowed_lateness_s IS 'farm_rules.allowed_lateness_s in force under this version.';

-- Name: COLUMN farm_version.divergence_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.divergence_alert_pm IS 'farm_rules.divergence_alert_pm in force under this version.';

-- Name: COLUMN farm_version.completeness_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.completeness_alert_pm IS 'farm_rules.completeness_alert_pm in force under this version.';

-- Name: COLUMN farm_version.apply_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.apply_id IS 'The fleet apply that wrote it (fleet_apply.id).';

-- Name: COLUMN farm_version.contract_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.contract_id IS 'The availability contract (availability_contract.id) the days of this version are counted by; 1 = the default.';

-- Name: COLUMN farm_version.model_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.model_id IS 'The turbine model (turbine_model.id) of the farm''s turbines under this version; NULL: none given, so no potential energy.';

-- Name: COLUMN farm_version.power_min_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.power_min_kw IS 'farm_rules.power_min_kw in force under this version.';

-- Name: COLUMN farm_version.power_max_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.power_max_kw IS 'farm_rules.power_max_kw in force under this version.';

-- Name: COLUMN farm_version.wind_max_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_version.wind_max_ms IS 'farm_rules.wind_max_ms in force under this version.';

-- Name: farm_day_version(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_version(p_farm text, p_day date) RETURNS public.farm_version
    LANGUAGE sql STABLE
    AS $$
    SELECT v.* FROM farm_version v
    WHERE v.farm_id = p_farm AND v.first_day <= p_day
    ORDER BY v.first_day DESC
    LIMIT 1
$$;

-- Name: FUNCTION farm_day_version(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_version(p_farm text, p_day date) IS 'The farm_version governing farm-local day p_day (the latest with first_day <= p_day).';

-- Name: farm_day_waiting(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.farm_day_waiting(p_farm text, p_day date) RETURNS TABLE(requested_at timestamp with time zone, settling_at timestamp with time zone, settling_shards text, announced_at timestamp with time zone, announced_shards text, job_unfinished boolean, pending boolean)
    LANGUAGE sql STABLE
    AS $$
    SELECT q.requested_at, s.marked_at, s.shards, a.marked_at, a.shards, j.unfinished,
           (q.requested_at IS NOT NULL OR s.marked_at IS NOT NULL OR a.marked_at IS NOT NULL OR j.unfinished)
    FROM (SELECT max(p.requested_at) AS requested_at
          FROM rollup_pending p WHERE p.farm_id = p_farm AND p.day = p_day) AS q,
         (SELECT min(m.marked_at) AS marked_at, string_agg(DISTINCT m.shard_name, ', ' ORDER BY m.shard_name) AS shards
          FROM dirty_mark_settling m WHERE m.farm_id = p_farm AND m.day = p_day) AS s,
         (SELECT max(x.marked_at) AS marked_at, string_agg(DISTINCT x.shard_name, ', ' ORDER BY x.shard_name) AS shards
          FROM dirty_mark_announced x WHERE x.farm_id = p_farm AND x.day = p_day) AS a,
         (SELECT coalesce(rollup_day_unfinished(p_farm, p_day), false) AS unfinished) AS j
$$;

-- Name: FUNCTION farm_day_waiting(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.farm_day_waiting(p_farm text, p_day date) IS 'What a farm-day waits for: the latest recompute requested (rollup_pending), marks settling (dirty_mark_settling: earliest, shards), marks announced and not yet drained (dirty_mark_announced: latest, shards), an unfinished rollup_day job; pending when any. farm_day_status and provenance_pending read it.';

-- Name: lateness_lag_bounds_ms(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.lateness_lag_bounds_ms() RETURNS bigint[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    WITH RECURSIVE coarse(b) AS (
        SELECT 10000::bigint
        UNION ALL
        SELECT floor(b * 1.01)::bigint FROM coarse WHERE b < 86400000000
    )
    SELECT array_agg(v ORDER BY v)
    FROM (SELECT -b AS v FROM coarse WHERE b > 10000
          UNION ALL
          SELECT generate_series(-10000::bigint, 10000::bigint)
          UNION ALL
          SELECT b FROM coarse WHERE b > 10000) AS s
$$;

-- Name: FUNCTION lateness_lag_bounds_ms(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.lateness_lag_bounds_ms() IS 'Bucket bounds (ms) of the lag histogram of `orchestrator lateness`: 1 ms buckets within ±10 s, at most 1 % of the lag wide beyond, to ±1000 days. Bucket i is [bounds[i], bounds[i+1]), as width_bucket numbers them.';

-- Name: local_day_start(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.local_day_start(p_timezone text, p_day date) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT (p_day::timestamp AT TIME ZONE p_timezone)
$$;

-- Name: FUNCTION local_day_start(p_timezone text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.local_day_start(p_timezone text, p_day date) IS 'Start of the local day p_day in p_timezone (its end is the next day''s start): the farm-local day bounds of the control database.';

-- Name: model_curve_lut(real[], real[]); Type: FUNCTION; Schema: public

CREATE FUNCTION public.model_curve_lut(p_wind real[], p_power real[]) RETURNS double precision[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT array_agg(coalesce(
               (SELECT p_power[j] + (p_power[j + 1] - p_power[j]) * (g.w - p_wind[j]) / (p_wind[j + 1] - p_wind[j])
                FROM generate_subscripts(p_wind, 1) AS j
                WHERE j < cardinality(p_wind) AND p_wind[j] <= g.w AND g.w <= p_wind[j + 1]
                ORDER BY j LIMIT 1), 0)::float8 ORDER BY g.i)
    FROM (SELECT i, i / 100.0::float8 AS w FROM generate_series(0, 3000) AS i) AS g
$$;

-- Name: FUNCTION model_curve_lut(p_wind real[], p_power real[]); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.model_curve_lut(p_wind real[], p_power real[]) IS 'A power curve (wind speeds p_wind ascending, powers p_power in kW) sampled at 0, 0.01, ..., 30 m/s: linear between its points, 0 outside them. turbine_model.curve_lut stores it per model.';

-- Name: operator_event_guard(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.operator_event_guard() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'operator_event % is never deleted: void it (orchestrator event void)', OLD.id;
    END IF;
    IF OLD.voided_at IS NOT NULL THEN
        RAISE EXCEPTION 'operator_event % is already voided', OLD.id;
    END IF;
    IF (NEW.farm_id, NEW.turbine_ids, NEW.from_at, NEW.to_at, NEW.category_id, NEW.note, NEW.entered_by, NEW.entered_at, NEW.entered_db_user)
       IS DISTINCT FROM (OLD.farm_id, OLD.turbine_ids, OLD.from_at, OLD.to_at, OLD.category_id, OLD.note, OLD.entered_by, OLD.entered_at, OLD.entered_db_user) THEN
        RAISE EXCEPTION 'operator_event % is never edited: void it and enter another', OLD.id;
    END IF;
    RETURN NEW;
END
$$;

-- Name: FUNCTION operator_event_guard(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.operator_event_guard() IS 'Keeps operator_event an audit trail: refuses a delete, an edit, and a second void.';

-- Name: operator_event_text(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.operator_event_text() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NOT (operator_text_ok(NEW.note) AND operator_text_ok(NEW.entered_by)) THEN
        RAISE EXCEPTION 'operator_event: note and entered_by must be operator text (operator_text_ok)'
            USING ERRCODE = 'check_violation';
    END IF;
    IF NOT coalesce(operator_text_ok(NEW.voided_by) AND operator_text_ok(NEW.void_note), true) THEN
        RAISE EXCEPTION 'operator_event %: voided_by and void_note must be operator text (operator_text_ok)', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;

-- Name: FUNCTION operator_event_text(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.operator_event_text() IS 'Holds an operator_event''s words to operator_text_ok as they are written: the note and entered_by on insert, voided_by and void_note on a void.';

-- Name: operator_text_ok(text); Type: FUNCTION; Schema: public

CREATE FUNCTION public.operator_text_ok(v text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((octet_length(v) <= 2000) AND (v !~ '[\u0001-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]'::text));

-- Name: FUNCTION operator_text_ok(v text); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.operator_text_ok(v text) IS 'Whether v is operator text: at most 2,000 bytes without a control character (Unicode Cc: C0 with tab and line breaks, DEL, C1), format character (Cf: bidi controls, zero-width characters, soft hyphen, tags and the rest, as of Unicode 15) or line or paragraph separator (U+2028, U+2029). internal/text.Check is the same rule with the reason (TestSQLAgrees). docs/operator.md: Operator events.';

-- Name: provenance_pending(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.provenance_pending(p_farm text, p_day date) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT w.pending FROM farm_day_waiting(p_farm, p_day) AS w
$$;

-- Name: FUNCTION provenance_pending(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.provenance_pending(p_farm text, p_day date) IS 'farm_day_waiting(...).pending: a recompute of the farm-day is requested or running, or marks of it are settling or announced and not drained: its numbers may still change. The pending column of window_provenance and day_provenance.';

-- Name: report_contract_year(text, text, timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.report_contract_year(p_farm text, p_year text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(scope text, first_day date, last_day date, contract text, terms text, currency text, days integer, turbine_days bigint, warranty_pct numeric, contractual_availability_pct numeric, production_based_availability_pct numeric, counted_turbine_hours numeric, shortfall_points numeric, shortfall_turbine_hours numeric, counted_potential_mwh numeric, shortfall_mwh numeric, ld numeric, bonus numeric, status text, why text)
    LANGUAGE plpgsql STABLE
    AS $_$
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
$_$;

-- Name: FUNCTION report_contract_year(p_farm text, p_year text, p_now timestamp with time zone); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.report_contract_year(p_farm text, p_year text, p_now timestamp with time zone) IS 'The contract year report of farm p_farm, year p_year (YYYY, the calendar year it starts in), judged at p_now: rows period (each run of days counted by one contract: its name and terms, figures, LDs and bonus), month (each contract month begun), year (to date: LDs capped, and how it was settled) and accepted (each accepted day with its note). Percentages, turbine-hours, MWh and money rounded for print from farm_contract_year. status: final when every day so far is final (farm_day_status), incomplete when only missing slots hold days back, provisional otherwise; why names the days by reason. sql/reports/contract_year.sql formats it; orchestrator report contract runs that file.';

-- Name: report_monthly_availability(text, text, timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.report_monthly_availability(p_farm text, p_month text, p_now timestamp with time zone DEFAULT now()) RETURNS TABLE(farm_id text, month text, scope text, day date, expected bigint, received bigint, available bigint, availability numeric, completeness numeric, turbines integer, registered_turbines integer, source text, path text, computed_at timestamp with time zone, complete_through timestamp with time zone, pending boolean, status text, held_back text[], why text)
    LANGUAGE plpgsql STABLE
    AS $_$
#variable_conflict use_column
DECLARE
    v_first date;
    v_last  date;
BEGIN
    IF coalesce(p_farm, '') = '' THEN
        RAISE EXCEPTION 'farm: none given (psql -v farm=FARM_ID -v month=YYYY-MM -f sql/reports/monthly_availability.sql)'
            USING ERRCODE = 'invalid_parameter_value', COLUMN = 'farm';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM farm f WHERE f.id = p_farm) THEN
        RAISE EXCEPTION 'farm "%": no such farm (SELECT id FROM farm lists them)', p_farm
            USING ERRCODE = 'no_data_found', COLUMN = 'farm';
    END IF;
    IF coalesce(p_month, '') !~ '^[1-9][0-9]{3}-(0[1-9]|1[0-2])$' THEN
        RAISE EXCEPTION 'month "%": want a calendar month as YYYY-MM, e.g. 2026-08', coalesce(p_month, '')
            USING ERRCODE = 'invalid_parameter_value', COLUMN = 'month';
    END IF;
    v_first := to_date(p_month || '-01', 'YYYY-MM-DD');
    v_last := (v_first + interval '1 month')::date - 1;

    RETURN QUERY
    WITH days AS (
        SELECT s.*, s.turbines > 0 AS has_rows
        FROM generate_series(v_first::timestamp, v_last::timestamp, interval '1 day') AS g
        CROSS JOIN LATERAL farm_day_status(p_farm, g::date, p_now) AS s
    ),
    shown AS (
        -- A day without rows shows its windows as day_provenance sums them
        -- (window_provenance's pick: a window's final row, else its fast row).
        SELECT d.*,
               coalesce(d.expected, w.expected)   AS n_expected,
               coalesce(d.received, w.received)   AS n_received,
               coalesce(d.available, w.available) AS n_available,
               CASE WHEN d.has_rows THEN 'turbine_day' WHEN w.expected IS NOT NULL THEN 'farm_window' END AS n_source,
               CASE WHEN d.has_rows THEN 'final' ELSE w.path END AS n_path,
               coalesce(d.computed_at, w.computed_at) AS n_computed_at,
               -- rows: every reading stored before the oldest row was
               -- computed is counted (later ones are marked); windows: the
               -- earliest watermark they were published or corrected at.
               coalesce(d.oldest_computed_at, w.complete_through) AS n_complete_through
        FROM days d
        LEFT JOIN LATERAL (
            SELECT dp.expected, dp.received, dp.available, dp.path, dp.computed_at, dp.complete_through
            FROM day_provenance dp
            WHERE NOT d.has_rows AND dp.farm_id = p_farm AND dp.day = d.day
        ) AS w ON true
    ),
    -- The days holding the month back, per reason, and the days of each
    -- note, as runs of consecutive days (a day minus its rank within the
    -- reason is constant along a run).
    runs AS (
        SELECT h.kind, h.reason, min(h.day) AS first_day, max(h.day) AS last_day
        FROM (SELECT u.kind, u.reason, sh.day,
                     sh.day - (row_number() OVER (PARTITION BY u.kind, u.reason ORDER BY sh.day))::integer AS run
              FROM shown sh
              CROSS JOIN LATERAL (SELECT 1 AS kind, x AS reason FROM unnest(sh.held_back) AS x
                                  UNION ALL
                                  SELECT 2, x FROM unnest(sh.notes) AS x) AS u) AS h
        GROUP BY h.kind, h.reason, h.run
    ),
    month_why AS (
        SELECT array_agg(x.reason ORDER BY array_position(farm_day_reasons(), x.reason)) FILTER (WHERE x.kind = 1) AS held_back,
               string_agg(x.reason || ': ' || x.days, '; ' ORDER BY x.kind, array_position(farm_day_reasons(), x.reason), x.reason) AS why
        FROM (SELECT rn.kind, rn.reason,
                     string_agg(CASE WHEN rn.first_day = rn.last_day THEN to_char(rn.first_day, 'YYYY-MM-DD')
                                     ELSE to_char(rn.first_day, 'YYYY-MM-DD') || '..' || to_char(rn.last_day, 'YYYY-MM-DD') END,
                                ', ' ORDER BY rn.first_day) AS days
              FROM runs rn
              GROUP BY rn.kind, rn.reason) AS x
    )
    SELECT p_farm, p_month, 'day'::text, sh.day,
           sh.n_expected, sh.n_received, sh.n_available,
           round(sh.n_available::numeric / nullif(sh.n_expected, 0), 6),
           round(sh.n_received::numeric / nullif(sh.n_expected, 0), 6),
           CASE WHEN sh.has_rows THEN sh.turbines_in_service END,
           CASE WHEN sh.has_rows THEN sh.registered_turbines END,
           sh.n_source, sh.n_path, sh.n_computed_at, sh.n_complete_through,
           sh.pending, sh.status, sh.held_back, sh.why
    FROM shown sh
    UNION ALL
    -- The total: a day with turbines in service and no numbers makes it
    -- partial (it sums the other days only).
    SELECT p_farm, p_month, 'month'::text, NULL::date,
           sum(sh.n_expected)::bigint, sum(sh.n_received)::bigint, sum(sh.n_available)::bigint,
           round(sum(sh.n_available)::numeric / nullif(sum(sh.n_expected), 0), 6),
           round(sum(sh.n_received)::numeric / nullif(sum(sh.n_expected), 0), 6),
           NULL::integer, NULL::integer,
           CASE WHEN count(sh.n_source) = 0 THEN NULL
                WHEN bool_or(sh.n_source IS NULL AND sh.registered_turbines > 0) THEN 'partial'
                WHEN count(DISTINCT sh.n_source) = 1 THEN min(sh.n_source)
                ELSE 'mixed' END,
           CASE WHEN count(sh.n_path) = 0 THEN NULL
                WHEN bool_or(sh.n_source IS NULL AND sh.registered_turbines > 0) THEN 'partial'
                WHEN bool_or(sh.n_path = 'fast') THEN 'fast'
                ELSE 'final' END,
           max(sh.n_computed_at), min(sh.n_complete_through),
           bool_or(sh.pending),
           CASE WHEN bool_and(sh.status = 'final') THEN 'final'
                WHEN bool_and(sh.status IN ('final', 'incomplete')) THEN 'incomplete'
                ELSE 'provisional' END,
           (SELECT mw.held_back FROM month_why mw), (SELECT mw.why FROM month_why mw)
    FROM shown sh
    ORDER BY 3, 4;
END
$_$;

-- Name: FUNCTION report_monthly_availability(p_farm text, p_month text, p_now timestamp with time zone); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.report_monthly_availability(p_farm text, p_month text, p_now timestamp with time zone) IS 'The monthly availability report of a farm (p_month YYYY-MM): one row per farm-local day and a month row (scope month), counts summed and rates computed from the sums; each day judged by farm_day_status (final only when it has ended, was rolled up after it closed, every mark of it is drained, no recompute is requested or running, and its missing slots are within the farm''s threshold or accepted; incomplete when only the missing slots hold it back); the month is final when every day is, incomplete when every day is final or incomplete. held_back/why say what holds a day or the month back. sql/reports/monthly_availability.sql formats it; orchestrator report monthly runs that file.';

-- Name: report_monthly_contract(text, text); Type: FUNCTION; Schema: public

CREATE FUNCTION public.report_monthly_contract(p_farm text, p_month text) RETURNS TABLE(scope text, day date, contract text, warranty_pct numeric, contractual_availability_pct numeric, time_based_availability_pct numeric, production_based_availability_pct numeric, information_unavailable_pct numeric, lost_mwh numeric, lost_mwh_by_category text)
    LANGUAGE sql STABLE
    AS $_$
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
$_$;

-- Name: FUNCTION report_monthly_contract(p_farm text, p_month text); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.report_monthly_contract(p_farm text, p_month text) IS 'The monthly report''s contract columns (sql/reports/monthly_availability.sql joins them): per farm-local day with turbine_day rows (scope day) and for the month (scope month, from the summed counts): the contract, its warranty (%), contractual, time-based and production-based availability (%), the information-unavailable share (%), lost MWh over the contract''s unavailable categories and per category (code MWh; ..., the categories that lost any).';

-- Name: river_job_not_started(bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.river_job_not_started(p_job_id bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM river_job WHERE id = p_job_id AND river_state_not_started(state::text));
END
$$;

-- Name: river_job_rescue_abandoned(timestamp with time zone, integer); Type: FUNCTION; Schema: public

CREATE FUNCTION public.river_job_rescue_abandoned(p_now timestamp with time zone, p_running_for_s integer) RETURNS SETOF text
    LANGUAGE plpgsql
    AS $$
BEGIN
    RETURN QUERY
    WITH abandoned AS (
        SELECT j.id, j.attempted_by[array_upper(j.attempted_by, 1)] AS client
        FROM river_job j
        WHERE j.state = 'running'
          AND j.attempted_at < p_now - make_interval(secs => p_running_for_s)
          AND cardinality(j.attempted_by) > 0
          AND NOT worker_alive(j.attempted_by[array_upper(j.attempted_by, 1)])
        FOR UPDATE SKIP LOCKED
    )
    UPDATE river_job j
    SET state = CASE WHEN j.attempt < j.max_attempts THEN 'available' ELSE 'discarded' END::river_job_state,
        scheduled_at = CASE WHEN j.attempt < j.max_attempts THEN p_now ELSE j.scheduled_at END,
        finalized_at = CASE WHEN j.attempt < j.max_attempts THEN NULL ELSE p_now END,
        errors = array_append(j.errors, jsonb_build_object(
            'at', p_now, 'attempt', j.attempt, 'trace', '',
            'error', format('the process working it (River client %s) is gone; given back by galewatch', a.client))),
        metadata = j.metadata || jsonb_build_object('galewatch:abandoned_by', a.client)
    FROM abandoned a
    WHERE j.id = a.id AND j.state = 'running'
    RETURNING format('job %s (%s, attempt %s of %s) of gone client %s: %s', j.id, j.kind, j.attempt, j.max_attempts, a.client, j.state);
END
$$;

-- Name: FUNCTION river_job_rescue_abandoned(p_now timestamp with time zone, p_running_for_s integer); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.river_job_rescue_abandoned(p_now timestamp with time zone, p_running_for_s integer) IS 'Gives back River jobs running for at least p_running_for_s seconds whose worker process is gone (worker_alive false): available again, or discarded when out of attempts. Run by every serve/work process every few seconds.';

-- Name: river_job_state_in_bitmask(bit, public.river_job_state); Type: FUNCTION; Schema: public

CREATE FUNCTION public.river_job_state_in_bitmask(bitmask bit, state public.river_job_state) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE state
        WHEN 'available' THEN get_bit(bitmask, 7)
        WHEN 'cancelled' THEN get_bit(bitmask, 6)
        WHEN 'completed' THEN get_bit(bitmask, 5)
        WHEN 'discarded' THEN get_bit(bitmask, 4)
        WHEN 'pending'   THEN get_bit(bitmask, 3)
        WHEN 'retryable' THEN get_bit(bitmask, 2)
        WHEN 'running'   THEN get_bit(bitmask, 1)
        WHEN 'scheduled' THEN get_bit(bitmask, 0)
        ELSE 0
    END = 1;
$$;

-- Name: river_job_unfinished(bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.river_job_unfinished(p_job_id bigint) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM river_job WHERE id = p_job_id AND river_state_unfinished(state::text));
END
$$;

-- Name: river_state_not_started(text); Type: FUNCTION; Schema: public

CREATE FUNCTION public.river_state_not_started(p_state text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT p_state IN ('available', 'pending', 'retryable', 'scheduled')
$$;

-- Name: FUNCTION river_state_not_started(p_state text); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.river_state_not_started(p_state text) IS 'A River job in this state has yet to start (jobs.NotStartedStates).';

-- Name: river_state_unfinished(text); Type: FUNCTION; Schema: public

CREATE FUNCTION public.river_state_unfinished(p_state text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT river_state_not_started(p_state) OR p_state = 'running'
$$;

-- Name: FUNCTION river_state_unfinished(p_state text); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.river_state_unfinished(p_state text) IS 'A River job in this state will still run, or is running (jobs.UnfinishedStates).';

-- Name: rollup_day_failure(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.rollup_day_failure(p_farm text, p_day date) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN (
        WITH job AS (
            SELECT j.id, j.state::text AS state, j.max_attempts, j.args ->> 'shard' AS shard,
                   j.finalized_at, j.errors[array_length(j.errors, 1)] AS error
            FROM river_job j
            -- the args containment: River's GIN index on args answers it
            WHERE j.kind = 'rollup_day'
              AND j.args @> jsonb_build_object('farm_id', p_farm, 'day', to_char(p_day, 'YYYY-MM-DD'))
        ),
        failed AS (
            -- a job cancelled was refused or stopped on purpose, with its
            -- reason: not a failure
            SELECT f.id, f.state, f.max_attempts, f.shard, (f.error ->> 'at')::timestamptz AS at,
                   (f.error ->> 'attempt')::integer AS attempt, f.error ->> 'error' AS error
            FROM job f
            WHERE f.state NOT IN ('completed', 'cancelled') AND f.error IS NOT NULL
              -- recomputed since: a job of the shard completed after the
              -- error, or a later job wrote rows of the day there
              AND NOT EXISTS (SELECT 1 FROM job k
                              WHERE k.state = 'completed' AND k.shard = f.shard
                                AND k.finalized_at > (f.error ->> 'at')::timestamptz)
              AND NOT EXISTS (SELECT 1 FROM turbine_day td
                              WHERE td.farm_id = p_farm AND td.day = p_day AND td.shard_name = f.shard AND td.job_id > f.id)
        )
        SELECT format('rollup_day %s/%s on %s, job %s, attempt %s of %s at %s, %s: %s%s',
                      p_farm, to_char(p_day, 'YYYY-MM-DD'), f.shard, f.id, f.attempt, f.max_attempts, utc_text(f.at),
                      CASE f.state WHEN 'discarded' THEN 'no attempt left' WHEN 'running' THEN 'retrying' ELSE 'to be retried' END,
                      CASE WHEN length(f.error) > 400 THEN left(f.error, 400) || '…' ELSE f.error END,
                      (SELECT ', also failing on ' || string_agg(DISTINCT o.shard, ', ' ORDER BY o.shard)
                       FROM failed o WHERE o.shard <> f.shard))
        FROM failed f
        ORDER BY f.at DESC, f.id DESC
        LIMIT 1);
END
$$;

-- Name: FUNCTION rollup_day_failure(p_farm text, p_day date); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.rollup_day_failure(p_farm text, p_day date) IS 'The last error of a rollup_day job of farm-day (p_farm, p_day) whose last attempt failed (not completed, not cancelled), unless the day was recomputed on its shard since (a job of the farm-day and shard completed after the error, or a later job wrote turbine_day rows of it there): which shard, job and attempt, when, whether River retries it, and River''s error (river_job.errors); NULL when none. farm_day_status holds the day back with it (recompute failed).';

-- Name: rollup_day_unfinished(text, date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.rollup_day_unfinished(p_farm text, p_day date) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'public', 'pg_temp'
    AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM river_job
        WHERE kind = 'rollup_day'
          AND river_state_unfinished(state::text)
          AND args ->> 'farm_id' = p_farm
          AND args ->> 'day' = to_char(p_day, 'YYYY-MM-DD'));
END
$$;

-- Name: turbine_day_closed_at_default(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.turbine_day_closed_at_default() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.closed_at IS NULL THEN
        NEW.closed_at := farm_day_closes_at(NEW.farm_id, NEW.day);
    END IF;
    RETURN NEW;
END
$$;

-- Name: FUNCTION turbine_day_closed_at_default(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.turbine_day_closed_at_default() IS 'Fills turbine_day.closed_at, when a writer leaves it NULL, with farm_day_closes_at at the write.';

-- Name: turbine_in_service(timestamp with time zone, timestamp with time zone, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.turbine_in_service(p_commissioned_at timestamp with time zone, p_decommissioned_at timestamp with time zone, p_day_start timestamp with time zone, p_day_end timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT (p_commissioned_at IS NULL OR p_commissioned_at < p_day_end)
       AND (p_decommissioned_at IS NULL OR p_decommissioned_at > p_day_start)
$$;

-- Name: FUNCTION turbine_in_service(p_commissioned_at timestamp with time zone, p_decommissioned_at timestamp with time zone, p_day_start timestamp with time zone, p_day_end timestamp with time zone); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.turbine_in_service(p_commissioned_at timestamp with time zone, p_decommissioned_at timestamp with time zone, p_day_start timestamp with time zone, p_day_end timestamp with time zone) IS 'A turbine (commissioned_at, decommissioned_at; NULL = open) is in service some time during [p_day_start, p_day_end).';

-- Name: utc_text(timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.utc_text(p_at timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC'
$$;

-- Name: FUNCTION utc_text(p_at timestamp with time zone); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.utc_text(p_at timestamp with time zone) IS 'An instant as the reasons write it: YYYY-MM-DD HH:MM:SS UTC.';

-- Name: worker_alive(text); Type: FUNCTION; Schema: public

CREATE FUNCTION public.worker_alive(p_client text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT EXISTS (
        SELECT 1
        FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND l.classid = oid((worker_liveness_key(p_client) >> 32) & 4294967295)
          AND l.objid = oid(worker_liveness_key(p_client) & 4294967295))
$$;

-- Name: FUNCTION worker_alive(p_client text); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.worker_alive(p_client text) IS 'True while the process of this River client id holds its liveness lock (worker_liveness_key).';

-- Name: worker_liveness_key(text); Type: FUNCTION; Schema: public

CREATE FUNCTION public.worker_liveness_key(p_client text) RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT hashtextextended('galewatch.worker/' || p_client, 0)
$$;

-- Name: FUNCTION worker_liveness_key(p_client text); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.worker_liveness_key(p_client text) IS 'The session advisory lock a River client (by its id) holds on the control database while its process lives (internal/jobs.Liveness).';

-- Name: alert; Type: TABLE; Schema: public

CREATE TABLE public.alert (
    kind text NOT NULL,
    farm_id text NOT NULL,
    scope text NOT NULL,
    period_start timestamp with time zone NOT NULL,
    day date NOT NULL,
    raised_at timestamp with time zone NOT NULL,
    threshold_pm integer,
    detail jsonb NOT NULL,
    message text NOT NULL,
    CONSTRAINT alert_kind_check CHECK ((kind = ANY (ARRAY['divergence'::text, 'completeness'::text, 'window_sum'::text]))),
    CONSTRAINT alert_scope_check CHECK ((scope = ANY (ARRAY['window'::text, 'day'::text])))
);

-- Name: TABLE alert; Type: COMMENT; Schema: public

COMMENT ON TABLE public.alert IS 'Raised conditions: divergence (fast vs final above divergence_alert_pm), completeness (a closed day short of expected by more than completeness_alert_pm; detail names the silent turbines and hours), window_sum (a bug alarm: a day''s windows do not add up to its turbine_day rows).';

-- Name: COLUMN alert.kind; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.kind IS 'divergence, completeness or window_sum (a bug alarm).';

-- Name: COLUMN alert.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN alert.scope; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.scope IS 'window or day.';

-- Name: COLUMN alert.period_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.period_start IS 'The window''s start, or the farm-local day''s start.';

-- Name: COLUMN alert.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.day IS 'The farm-local day.';

-- Name: COLUMN alert.raised_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.raised_at IS 'When first raised (later measurements update detail and message, not this).';

-- Name: COLUMN alert.threshold_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.threshold_pm IS 'The threshold in force when raised, per mille (NULL for a bug alarm).';

-- Name: COLUMN alert.detail; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.detail IS 'The counts measured (and for completeness, the silent turbines and their silent hours).';

-- Name: COLUMN alert.message; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert.message IS 'One line for an operator.';

-- Name: alert_count; Type: TABLE; Schema: public

CREATE TABLE public.alert_count (
    farm_id text NOT NULL,
    kind text NOT NULL,
    alerts bigint NOT NULL,
    last_raised_at timestamp with time zone NOT NULL,
    CONSTRAINT alert_count_alerts_check CHECK ((alerts > 0))
);

-- Name: TABLE alert_count; Type: COMMENT; Schema: public

COMMENT ON TABLE public.alert_count IS 'Per farm and kind, how many alerts are raised and when the latest was: kept up to date by triggers on alert, so /metrics does not group the alert table on every scrape.';

-- Name: COLUMN alert_count.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert_count.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN alert_count.kind; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert_count.kind IS 'The alert kind (divergence, completeness, window_sum).';

-- Name: COLUMN alert_count.alerts; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert_count.alerts IS 'Alerts of the farm and kind in the alert table.';

-- Name: COLUMN alert_count.last_raised_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.alert_count.last_raised_at IS 'The latest raised_at among them.';

-- Name: availability_category; Type: TABLE; Schema: public

CREATE TABLE public.availability_category (
    id smallint NOT NULL,
    code text NOT NULL,
    name text NOT NULL,
    default_priority smallint NOT NULL,
    default_class text NOT NULL,
    CONSTRAINT availability_category_default_class_check CHECK ((default_class = ANY (ARRAY['available'::text, 'unavailable'::text, 'excluded'::text]))),
    CONSTRAINT availability_category_id_check CHECK (((id >= 1) AND (id <= 15)))
);

-- Name: TABLE availability_category; Type: COMMENT; Schema: public

COMMENT ON TABLE public.availability_category IS 'The IEC 61400-26-1 information categories a slot is sorted into; category_slots arrays are indexed by id. docs/report-user.md, "Categories".';

-- Name: COLUMN availability_category.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_category.id IS 'Index into category_slots (1-based); at most 15 (TurbineWindowUpsert packs priority*16 + id).';

-- Name: COLUMN availability_category.code; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_category.code IS 'The name the fleet file''s contract uses.';

-- Name: COLUMN availability_category.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_category.name IS 'The standard''s name.';

-- Name: COLUMN availability_category.default_priority; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_category.default_priority IS 'Rank when a contract gives no priority (1 wins over 2): reasons outside the turbine outrank its own, planned work outranks a fault, operating states come last, and any information outranks none.';

-- Name: COLUMN availability_category.default_class; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.availability_category.default_class IS 'available, unavailable or excluded when a contract lists no classes (IEC 61400-26-1''s time-based availability; information unavailable counts as unavailable).';

-- Name: availability_contract_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.availability_contract ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.availability_contract_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: farm_window; Type: TABLE; Schema: public

CREATE TABLE public.farm_window (
    farm_id text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    path text NOT NULL,
    window_end timestamp with time zone NOT NULL,
    day date NOT NULL,
    expected bigint NOT NULL,
    received bigint NOT NULL,
    available bigint NOT NULL,
    late bigint NOT NULL,
    readings bigint NOT NULL,
    computed_at timestamp with time zone NOT NULL,
    complete_through timestamp with time zone NOT NULL,
    revision integer NOT NULL,
    job_id bigint,
    CONSTRAINT farm_window_path_check CHECK ((path = ANY (ARRAY['fast'::text, 'final'::text])))
)
WITH (fillfactor='70');

-- Name: TABLE farm_window; Type: COMMENT; Schema: public

COMMENT ON TABLE public.farm_window IS 'A farm''s counts per event-time window, by path: fast (published once at the watermark) and final (corrected by late readings, rewritten with a new revision). Sum of every turbine of the farm on every shard.';

-- Name: COLUMN farm_window.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_window.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.window_start IS 'Window start: farm-local midnight + k * window_s.';

-- Name: COLUMN farm_window.path; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.path IS 'fast: published at window end + allowed lateness, never changed. final: recomputed after late readings or at the close of the day.';

-- Name: COLUMN farm_window.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.window_end IS 'Window end (the day''s end for a last window cut short).';

-- Name: COLUMN farm_window.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.day IS 'The farm-local day holding the window.';

-- Name: COLUMN farm_window.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.expected IS 'Cadence slots starting in the window, over the farm''s turbines in service.';

-- Name: COLUMN farm_window.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.received IS 'Of those, slots with a reading.';

-- Name: COLUMN farm_window.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.available IS 'Of those, slots reported available.';

-- Name: COLUMN farm_window.late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.late IS 'Readings of the window that came in the backfill lane.';

-- Name: COLUMN farm_window.readings; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.readings IS 'Readings of the window counted (received slots'' readings, beyond cadence, out of service), all turbines.';

-- Name: COLUMN farm_window.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.computed_at IS 'When the row was written (for fast: its publication).';

-- Name: COLUMN farm_window.complete_through; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.complete_through IS 'The watermark the row is complete through: computed_at - allowed lateness. Readings of the window that arrived after it are in a later final revision.';

-- Name: COLUMN farm_window.revision; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.revision IS 'fast: 0. final: 1 on first write, + 1 on each rewrite.';

-- Name: COLUMN farm_window.job_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window.job_id IS 'The River job that wrote the row (publish_windows or rollup_day); NULL outside River.';

-- Name: window_provenance; Type: VIEW; Schema: public

CREATE VIEW public.window_provenance AS
 SELECT s.farm_id,
    s.window_start,
    s.window_end,
    s.day,
    s.path,
    s.expected,
    s.received,
    s.available,
    s.late,
    s.computed_at,
    s.complete_through,
    s.revision,
    public.provenance_pending(s.farm_id, s.day) AS pending
   FROM ( SELECT DISTINCT ON (fw.farm_id, fw.day, fw.window_start) fw.farm_id,
            fw.window_start,
            fw.window_end,
            fw.day,
            fw.path,
            fw.expected,
            fw.received,
            fw.available,
            fw.late,
            fw.computed_at,
            fw.complete_through,
            fw.revision
           FROM public.farm_window fw
          ORDER BY fw.farm_id, fw.day, fw.window_start, (fw.path = 'final'::text) DESC) s;

-- Name: VIEW window_provenance; Type: COMMENT; Schema: public

COMMENT ON VIEW public.window_provenance IS 'Per farm window, the number to show: the final row when there is one, else the fast row; with its path, when it was computed, what it is complete through, its revision, and whether a recompute of its farm-day is requested or running.';

-- Name: COLUMN window_provenance.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.farm_id IS 'The farm.';

-- Name: COLUMN window_provenance.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.window_start IS 'Window start.';

-- Name: COLUMN window_provenance.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.window_end IS 'Window end.';

-- Name: COLUMN window_provenance.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.day IS 'The farm-local day.';

-- Name: COLUMN window_provenance.path; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.path IS 'fast or final: which path made this number.';

-- Name: COLUMN window_provenance.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.expected IS 'Expected slots (see farm_window).';

-- Name: COLUMN window_provenance.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.received IS 'Received slots.';

-- Name: COLUMN window_provenance.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.available IS 'Available slots.';

-- Name: COLUMN window_provenance.late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.late IS 'Readings that came in the backfill lane.';

-- Name: COLUMN window_provenance.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.computed_at IS 'When the row was written.';

-- Name: COLUMN window_provenance.complete_through; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.complete_through IS 'The watermark it is complete through (computed_at - allowed lateness).';

-- Name: COLUMN window_provenance.revision; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.revision IS '0 for fast; the final row''s revision.';

-- Name: COLUMN window_provenance.pending; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.window_provenance.pending IS 'Its farm-day''s numbers may still change: a recompute requested or running, or marks of the day settling or announced and not yet drained (provenance_pending).';

-- Name: day_provenance; Type: VIEW; Schema: public

CREATE VIEW public.day_provenance AS
 SELECT wp.farm_id,
    wp.day,
    min(wp.window_start) AS first_window_start,
    max(wp.window_end) AS last_window_end,
    (count(*))::integer AS windows,
    (count(*) FILTER (WHERE (wp.path = 'final'::text)))::integer AS final_windows,
        CASE
            WHEN bool_and((wp.path = 'final'::text)) THEN 'final'::text
            ELSE 'fast'::text
        END AS path,
    (sum(wp.expected))::bigint AS expected,
    (sum(wp.received))::bigint AS received,
    (sum(wp.available))::bigint AS available,
    max(wp.computed_at) AS computed_at,
    min(wp.complete_through) AS complete_through,
    sum(wp.revision) AS revision,
    public.provenance_pending(wp.farm_id, wp.day) AS pending
   FROM public.window_provenance wp
  GROUP BY wp.farm_id, wp.day;

-- Name: VIEW day_provenance; Type: COMMENT; Schema: public

COMMENT ON VIEW public.day_provenance IS 'Per farm-day, the sum of its windows as window_provenance shows them: path final only when every window so far has a final row. turbine_day/farm_day hold the closed day''s rows.';

-- Name: COLUMN day_provenance.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.farm_id IS 'The farm.';

-- Name: COLUMN day_provenance.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.day IS 'The farm-local day.';

-- Name: COLUMN day_provenance.first_window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.first_window_start IS 'Start of its first window shown.';

-- Name: COLUMN day_provenance.last_window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.last_window_end IS 'End of its last window shown.';

-- Name: COLUMN day_provenance.windows; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.windows IS 'Windows shown.';

-- Name: COLUMN day_provenance.final_windows; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.final_windows IS 'Of those, windows with a final row.';

-- Name: COLUMN day_provenance.path; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.path IS 'final when every window shown is final, else fast.';

-- Name: COLUMN day_provenance.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.expected IS 'Sum of the windows'' expected.';

-- Name: COLUMN day_provenance.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.received IS 'Sum of the windows'' received.';

-- Name: COLUMN day_provenance.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.available IS 'Sum of the windows'' available.';

-- Name: COLUMN day_provenance.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.computed_at IS 'Latest computed_at of its windows.';

-- Name: COLUMN day_provenance.complete_through; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.complete_through IS 'Earliest complete_through of its windows: the day is complete through this watermark.';

-- Name: COLUMN day_provenance.revision; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.revision IS 'Sum of its windows'' revisions.';

-- Name: COLUMN day_provenance.pending; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.day_provenance.pending IS 'The day''s numbers may still change: a recompute requested or running, or marks of it settling or announced and not yet drained (provenance_pending).';

-- Name: dirty_mark_announced; Type: TABLE; Schema: public

CREATE TABLE public.dirty_mark_announced (
    farm_id text NOT NULL,
    day date NOT NULL,
    shard_name text NOT NULL,
    xact bigint NOT NULL,
    marked_at timestamp with time zone NOT NULL
);

-- Name: TABLE dirty_mark_announced; Type: COMMENT; Schema: public

COMMENT ON TABLE public.dirty_mark_announced IS 'Dirty marks a writer announced before committing them on a shard, one row per farm-day and shard transaction, not yet passed by that shard''s drain: while a row remains, readings of its farm-day may be stored and not counted, and the day is not final (farm_day_status: shard not drained). Inserted by ingest (one statement per batch and shard), deleted by the drain whose read of the marks began after that transaction had finished. docs/dirty-marks.md.';

-- Name: COLUMN dirty_mark_announced.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_announced.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN dirty_mark_announced.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_announced.day IS 'The farm-local day marked.';

-- Name: COLUMN dirty_mark_announced.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_announced.shard_name IS 'The shard the marks are written on.';

-- Name: COLUMN dirty_mark_announced.xact; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_announced.xact IS 'The writing shard transaction (pg_current_xact_id() on the shard, as a number): a drain whose snapshot of the shard saw it finished has read its marks, or it rolled back.';

-- Name: COLUMN dirty_mark_announced.marked_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_announced.marked_at IS 'The writer''s clock of that batch (its marks'' created_at/updated_at).';

-- Name: dirty_mark_settling; Type: TABLE; Schema: public

CREATE TABLE public.dirty_mark_settling (
    farm_id text NOT NULL,
    day date NOT NULL,
    shard_name text NOT NULL,
    marked_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

-- Name: TABLE dirty_mark_settling; Type: COMMENT; Schema: public

COMMENT ON TABLE public.dirty_mark_settling IS 'Dirty marks the drain has read on a shard and left there to settle (a burst of late readings still arriving becomes one recompute, docs/dirty-marks.md): their day has readings its numbers do not count yet. Replaced by every drain of the shard.';

-- Name: COLUMN dirty_mark_settling.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_settling.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN dirty_mark_settling.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_settling.day IS 'The farm-local day marked.';

-- Name: COLUMN dirty_mark_settling.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_settling.shard_name IS 'The shard holding the mark.';

-- Name: COLUMN dirty_mark_settling.marked_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_settling.marked_at IS 'When the mark was first written (the writer''s clock).';

-- Name: COLUMN dirty_mark_settling.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark_settling.updated_at IS 'When it was last widened (the writer''s clock).';

-- Name: farm; Type: TABLE; Schema: public

CREATE TABLE public.farm (
    id text NOT NULL,
    name text NOT NULL,
    timezone text NOT NULL,
    cadence_seconds integer DEFAULT 2 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    lane_threshold_ms integer,
    early_tolerance_ms integer,
    future_limit_s integer,
    max_age_days integer,
    window_s integer,
    mark_margin_s integer,
    allowed_lateness_s integer,
    divergence_alert_pm integer,
    completeness_alert_pm integer,
    power_min_kw integer,
    power_max_kw integer,
    wind_max_ms integer,
    CONSTRAINT farm_allowed_lateness_s_check CHECK (((allowed_lateness_s >= 0) AND (allowed_lateness_s <= 86400))),
    CONSTRAINT farm_cadence_seconds_check CHECK ((cadence_seconds > 0)),
    CONSTRAINT farm_completeness_alert_pm_check CHECK (((completeness_alert_pm > 0) AND (completeness_alert_pm <= 1000))),
    CONSTRAINT farm_divergence_alert_pm_check CHECK ((divergence_alert_pm > 0)),
    CONSTRAINT farm_early_tolerance_ms_check CHECK ((early_tolerance_ms >= 0)),
    CONSTRAINT farm_future_limit_s_check CHECK ((future_limit_s > 0)),
    CONSTRAINT farm_lane_threshold_ms_check CHECK ((lane_threshold_ms > 0)),
    CONSTRAINT farm_mark_margin_s_check CHECK ((mark_margin_s >= 30)),
    CONSTRAINT farm_max_age_days_check CHECK ((max_age_days > 0)),
    CONSTRAINT farm_power_max_kw_check CHECK (((power_max_kw >= '-100000'::integer) AND (power_max_kw <= 100000))),
    CONSTRAINT farm_power_min_kw_check CHECK (((power_min_kw >= '-100000'::integer) AND (power_min_kw <= 100000))),
    CONSTRAINT farm_wind_max_ms_check CHECK (((wind_max_ms >= 1) AND (wind_max_ms <= 200))),
    CONSTRAINT farm_window_s_check CHECK ((window_s > 0))
);

-- Name: TABLE farm; Type: COMMENT; Schema: public

COMMENT ON TABLE public.farm IS 'A wind farm as the last fleet apply left it; farm_version keeps every version. Its days are local days in the zone of the version governing each (farm_day_start).';

-- Name: COLUMN farm.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.id IS 'Farm id as written in the fleet file (ardnave-point).';

-- Name: COLUMN farm.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.name IS 'Display name.';

-- Name: COLUMN farm.timezone; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.timezone IS 'IANA time zone in force now (Europe/London): today, yesterday and the fast path''s windows follow it; a day already past is cut in the zone of its own version (farm_version.timezone, farm_day_start).';

-- Name: COLUMN farm.cadence_seconds; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.cadence_seconds IS 'Default reporting cadence of the farm''s turbines, in seconds.';

-- Name: COLUMN farm.created_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.created_at IS 'When the farm was first registered.';

-- Name: COLUMN farm.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.updated_at IS 'When a fleet apply last changed the farm.';

-- Name: COLUMN farm.lane_threshold_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.lane_threshold_ms IS 'Override of fleet_rules.lane_threshold_ms for this farm; NULL = the fleet default.';

-- Name: COLUMN farm.early_tolerance_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.early_tolerance_ms IS 'Override of fleet_rules.early_tolerance_ms; NULL = the fleet default.';

-- Name: COLUMN farm.future_limit_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.future_limit_s IS 'Override of fleet_rules.future_limit_s; NULL = the fleet default.';

-- Name: COLUMN farm.max_age_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.max_age_days IS 'Override of fleet_rules.max_age_days; NULL = the fleet default.';

-- Name: COLUMN farm.window_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.window_s IS 'Override of fleet_rules.window_s (e.g. 600 for the 10-minute SCADA convention); NULL = the fleet default.';

-- Name: COLUMN farm.mark_margin_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.mark_margin_s IS 'Override of fleet_rules.mark_margin_s; NULL = the fleet default.';

-- Name: COLUMN farm.allowed_lateness_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.allowed_lateness_s IS 'Override of fleet_rules.allowed_lateness_s; NULL = the fleet default.';

-- Name: COLUMN farm.divergence_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.divergence_alert_pm IS 'Override of fleet_rules.divergence_alert_pm; NULL = the fleet default.';

-- Name: COLUMN farm.completeness_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.completeness_alert_pm IS 'Override of fleet_rules.completeness_alert_pm; NULL = the fleet default.';

-- Name: COLUMN farm.power_min_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.power_min_kw IS 'Override of fleet_rules.power_min_kw; NULL = the fleet default.';

-- Name: COLUMN farm.power_max_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.power_max_kw IS 'Override of fleet_rules.power_max_kw; NULL = the fleet default.';

-- Name: COLUMN farm.wind_max_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm.wind_max_ms IS 'Override of fleet_rules.wind_max_ms; NULL = the fleet default.';

-- Name: turbine_day; Type: TABLE; Schema: public

CREATE TABLE public.turbine_day (
    turbine_id text NOT NULL,
    day date NOT NULL,
    farm_id text NOT NULL,
    shard_name text NOT NULL,
    expected integer NOT NULL,
    received integer NOT NULL,
    available integer NOT NULL,
    late integer NOT NULL,
    early integer NOT NULL,
    min_lag_ms bigint,
    max_lag_ms bigint,
    last_received_at timestamp with time zone,
    computed_at timestamp with time zone NOT NULL,
    job_id bigint,
    beyond_cadence integer DEFAULT 0 NOT NULL,
    out_of_service integer DEFAULT 0 NOT NULL,
    silent_hours integer[] DEFAULT '{}'::integer[] NOT NULL,
    closed_at timestamp with time zone NOT NULL,
    input_readings bigint,
    input_hash bigint,
    category_slots integer[],
    category_actual_wh bigint[],
    category_potential_wh bigint[]
);

-- Name: TABLE turbine_day; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_day IS 'One row per turbine per farm-local day: expected, received and available cadence slots (the slot rule), with counts and lags of the day''s readings. Added up from the day''s turbine_window rows on the turbine''s shard (TurbineDayFromWindows) and overwritten whole, never incremented, by each rollup_day job of the farm-day.';

-- Name: COLUMN turbine_day.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.turbine_id IS 'The turbine (turbine.id).';

-- Name: COLUMN turbine_day.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.day IS 'The farm-local calendar day (farm.timezone).';

-- Name: COLUMN turbine_day.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.farm_id IS 'The turbine''s farm (farm.id).';

-- Name: COLUMN turbine_day.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.shard_name IS 'The shard the counts were read from.';

-- Name: COLUMN turbine_day.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.expected IS 'Cadence slots the calendar expects: floor(seconds of the local day (23, 24 or 25 h) inside the turbine''s service interval / cadence). Slot k starts k cadences after the later of the day''s start and commissioning; the last slot runs to the end of the service interval in the day.';

-- Name: COLUMN turbine_day.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.received IS 'Slots with at least one stored reading (by recorded_at, the turbine''s clock). Never more than expected.';

-- Name: COLUMN turbine_day.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.available IS 'Slots whose every reading reports the turbine available (a slot with any unavailable reading is unavailable). Never more than received.';

-- Name: COLUMN turbine_day.late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.late IS 'Readings (not slots) that came in the backfill lane (recorded_at behind received_at by more than the lane threshold, default 60 s).';

-- Name: COLUMN turbine_day.early; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.early IS 'Readings (not slots) stamped ahead of their received_at by more than the early tolerance (default 2 s): a fast clock.';

-- Name: COLUMN turbine_day.min_lag_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.min_lag_ms IS 'Minimum of received_at - recorded_at in ms: the turbine''s clock offset estimate (negative = fast clock). NULL with no readings.';

-- Name: COLUMN turbine_day.max_lag_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.max_lag_ms IS 'Maximum of received_at - recorded_at in ms. NULL with no readings.';

-- Name: COLUMN turbine_day.last_received_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.last_received_at IS 'Latest received_at among the day''s readings: what the row is complete through, as far as arrivals go.';

-- Name: COLUMN turbine_day.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.computed_at IS 'When the recompute that wrote this row ran (its shard snapshot was opened just before).';

-- Name: COLUMN turbine_day.job_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.job_id IS 'The River job (river_job.id) that wrote the row; NULL when computed outside River.';

-- Name: COLUMN turbine_day.beyond_cadence; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.beyond_cadence IS 'Readings in service that landed in a slot already counted: the turbine reported faster than its registered cadence. Not in received or available.';

-- Name: COLUMN turbine_day.out_of_service; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.out_of_service IS 'Readings of the local day outside the turbine''s service interval (before commissioning, at or after decommissioning). Not in received or available.';

-- Name: COLUMN turbine_day.silent_hours; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.silent_hours IS 'Local hours of the day (0 = the hour from local midnight) in which the turbine expected readings and received none.';

-- Name: COLUMN turbine_day.closed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.closed_at IS 'When the day counted as closed when this row was written: its end + the farm''s allowed lateness then in force (farm_day_closes_at). A row computed at or after it counts every reading that wrote no dirty mark.';

-- Name: COLUMN turbine_day.input_readings; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.input_readings IS 'Readings the counts were computed from (received + beyond_cadence + out_of_service), with input_hash the row''s input fingerprint. NULL: computed before fingerprints existed (recompute the day to fingerprint it).';

-- Name: COLUMN turbine_day.input_hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.input_hash IS 'Order-independent hash of those readings'' (recorded_at, available) on shard_name: the sum of its windows'' turbine_window.input_hash. orchestrator verify recomputes it from the readings.';

-- Name: COLUMN turbine_day.category_slots; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.category_slots IS 'Slots of the day per information category, indexed by availability_category.id (13 elements, summing to expected), sorted by the contract of the farm''s version governing the day. NULL: computed before categories.';

-- Name: COLUMN turbine_day.category_actual_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.category_actual_wh IS 'Energy produced per information category (Wh, indexed by availability_category.id): each slot''s reading''s power × the cadence. NULL: computed before energy.';

-- Name: COLUMN turbine_day.category_potential_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day.category_potential_wh IS 'Energy the power curve gives per category (Wh): the curve at each slot''s own wind × the cadence; a slot without a reading has none. NULL: no model, or computed before energy.';

-- Name: farm_day; Type: VIEW; Schema: public

CREATE VIEW public.farm_day AS
 SELECT k.farm_id,
    k.day,
    s.turbines,
    s.turbines_in_service,
    s.expected,
    s.received,
    s.available,
    round(((s.available)::numeric / (NULLIF(s.expected, 0))::numeric), 6) AS availability,
    round(((s.received)::numeric / (NULLIF(s.expected, 0))::numeric), 6) AS completeness,
    round((((s.expected - s.received))::numeric / (NULLIF(s.expected, 0))::numeric), 6) AS unknown,
    s.late,
    s.early,
    s.beyond_cadence,
    s.out_of_service,
    s.last_received_at,
    s.oldest_computed_at,
    s.computed_at,
    s.computed_after_close AS computed_after_day_end,
    s.pending,
    s.registered_turbines,
    s.closed_at,
    s.status,
    s.held_back,
    s.notes,
    s.why
   FROM (( SELECT DISTINCT td.farm_id,
            td.day
           FROM public.turbine_day td) k
     CROSS JOIN LATERAL public.farm_day_status(k.farm_id, k.day, now()) s(farm_id, day, day_start, day_end, registered_turbines, turbines, turbines_in_service, expected, received, available, late, early, beyond_cadence, out_of_service, last_received_at, oldest_computed_at, computed_at, closed_at, computed_after_close, pending, status, held_back, notes, why));

-- Name: VIEW farm_day; Type: COMMENT; Schema: public

COMMENT ON VIEW public.farm_day IS 'Per farm and farm-local day with turbine_day rows: the sums and the rates computed from them at read time, and whether the day is final now (farm_day_status, the rule the monthly report uses). Filter on farm_id and day: each row asks River and the drain about its day.';

-- Name: COLUMN farm_day.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_day.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.day IS 'The farm-local calendar day.';

-- Name: COLUMN farm_day.turbines; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.turbines IS 'Turbine rows for the day (retired turbines included: their rows are kept).';

-- Name: COLUMN farm_day.turbines_in_service; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.turbines_in_service IS 'Turbine rows of turbines in service some time that day (per the registry now, turbine_in_service).';

-- Name: COLUMN farm_day.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.expected IS 'Sum of turbine_day.expected: cadence slots the calendar expects.';

-- Name: COLUMN farm_day.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.received IS 'Sum of turbine_day.received: slots with a reading.';

-- Name: COLUMN farm_day.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.available IS 'Sum of turbine_day.available: slots reporting the turbine available.';

-- Name: COLUMN farm_day.availability; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.availability IS 'available / expected. Conservative: silence counts against the farm, since missing telemetry is not missing at random.';

-- Name: COLUMN farm_day.completeness; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.completeness IS 'received / expected.';

-- Name: COLUMN farm_day.unknown; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.unknown IS '(expected - received) / expected: the share of the day we have no reading for.';

-- Name: COLUMN farm_day.late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.late IS 'Sum of turbine_day.late: readings that came in the backfill lane.';

-- Name: COLUMN farm_day.early; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.early IS 'Sum of turbine_day.early: readings stamped by a fast clock.';

-- Name: COLUMN farm_day.beyond_cadence; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.beyond_cadence IS 'Sum of turbine_day.beyond_cadence: readings faster than the registered cadence, not counted as received.';

-- Name: COLUMN farm_day.out_of_service; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.out_of_service IS 'Sum of turbine_day.out_of_service: readings outside the turbines'' service intervals, not counted.';

-- Name: COLUMN farm_day.last_received_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.last_received_at IS 'Latest arrival counted in the day.';

-- Name: COLUMN farm_day.oldest_computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.oldest_computed_at IS 'The oldest turbine row''s recompute time: every reading stored before it is counted (later ones are marked).';

-- Name: COLUMN farm_day.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.computed_at IS 'The newest turbine row''s recompute time.';

-- Name: COLUMN farm_day.computed_after_day_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.computed_after_day_end IS 'Every turbine row was computed at or after its day closed (turbine_day.closed_at: the day''s end + the allowed lateness in force when the row was written). False: rolled up before the day closed, provisional.';

-- Name: COLUMN farm_day.pending; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.pending IS 'A recompute of this day is requested (rollup_pending), marks of it are settling (dirty_mark_settling) or announced and not yet drained (dirty_mark_announced), or a rollup_day job of it is queued or running. True: the numbers are about to change.';

-- Name: COLUMN farm_day.registered_turbines; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.registered_turbines IS 'Turbines of the farm in service some time that day, per the registry. turbines_in_service < registered_turbines means a shard''s rollup has not landed: the day is incomplete, whatever its rates say.';

-- Name: COLUMN farm_day.closed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.closed_at IS 'The latest turbine_day.closed_at of its rows: when the day counted as closed when they were written.';

-- Name: COLUMN farm_day.status; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.status IS 'final, incomplete or provisional, judged now by farm_day_status (the monthly report''s rule).';

-- Name: COLUMN farm_day.held_back; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.held_back IS 'The reasons the day is provisional or incomplete (farm_day_reasons() order); NULL when final.';

-- Name: COLUMN farm_day.notes; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.notes IS 'Facts that do not hold the day back: no turbines in service; who accepted it, when and why (farm_day_acceptance).';

-- Name: COLUMN farm_day.why; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day.why IS 'held_back with details, then the notes; NULL when there is nothing to say.';

-- Name: farm_day_acceptance; Type: TABLE; Schema: public

CREATE TABLE public.farm_day_acceptance (
    id bigint NOT NULL,
    farm_id text NOT NULL,
    day date NOT NULL,
    expected bigint NOT NULL,
    received bigint NOT NULL,
    note text NOT NULL,
    accepted_by text DEFAULT CURRENT_USER NOT NULL,
    accepted_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT farm_day_acceptance_check CHECK (((received >= 0) AND (received <= expected))),
    CONSTRAINT farm_day_acceptance_expected_check CHECK ((expected > 0)),
    CONSTRAINT farm_day_acceptance_note_check CHECK ((btrim(note) <> ''::text))
);

-- Name: TABLE farm_day_acceptance; Type: COMMENT; Schema: public

COMMENT ON TABLE public.farm_day_acceptance IS 'Operators'' acceptances of incomplete farm-days (orchestrator day accept), never deleted, edited or truncated (farm_day_acceptance_guard, farm_day_acceptance_no_truncate): the audit trail. The latest of a day makes it final while no more of its slots are missing than when it was accepted (farm_day_status notes who, when and why). docs/report-user.md: Incomplete days.';

-- Name: COLUMN farm_day_acceptance.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.id IS 'Identity.';

-- Name: COLUMN farm_day_acceptance.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_day_acceptance.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.day IS 'The farm-local day accepted.';

-- Name: COLUMN farm_day_acceptance.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.expected IS 'The day''s expected slots when accepted (farm_day_status.expected).';

-- Name: COLUMN farm_day_acceptance.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.received IS 'The day''s received slots when accepted: the acceptance covers the day while no more of its slots are missing (expected - received) than then.';

-- Name: COLUMN farm_day_acceptance.note; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.note IS 'Why the day is accepted as it is (the operator''s words, required).';

-- Name: COLUMN farm_day_acceptance.accepted_by; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.accepted_by IS 'The database user who accepted it.';

-- Name: COLUMN farm_day_acceptance.accepted_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_acceptance.accepted_at IS 'When it was accepted.';

-- Name: farm_day_acceptance_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.farm_day_acceptance ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.farm_day_acceptance_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: farm_day_contract; Type: VIEW; Schema: public

CREATE VIEW public.farm_day_contract AS
 SELECT d.farm_id,
    d.day,
    k.name AS contract,
    d.turbines,
    d.expected,
    d.available,
    d.category_slots,
    s.available AS contract_available,
    s.unavailable AS contract_unavailable,
    s.excluded AS contract_excluded,
    round(((s.available)::numeric / (NULLIF((s.available + s.unavailable), 0))::numeric), 6) AS contractual_availability,
    round(((d.available)::numeric / (NULLIF(d.expected, 0))::numeric), 6) AS time_based_availability,
    round(((d.category_slots[13])::numeric / (NULLIF(d.expected, 0))::numeric), 6) AS information_unavailable,
    k.warranty_pm,
    d.category_actual_wh,
    d.category_potential_wh,
    ( SELECT (sum(x.x))::bigint AS sum
           FROM unnest(d.category_actual_wh) x(x)) AS actual_wh,
    e.lost_wh,
    e.category_lost_wh,
    round(((e.actual_wh)::numeric / (NULLIF((e.actual_wh + e.lost_wh), 0))::numeric), 6) AS production_based_availability
   FROM ((((( SELECT td.farm_id,
            td.day,
            (count(*))::integer AS turbines,
            sum(td.expected) AS expected,
            sum(td.available) AS available,
                CASE
                    WHEN (count(td.category_slots) = count(*)) THEN ARRAY[sum(td.category_slots[1]), sum(td.category_slots[2]), sum(td.category_slots[3]), sum(td.category_slots[4]), sum(td.category_slots[5]), sum(td.category_slots[6]), sum(td.category_slots[7]), sum(td.category_slots[8]), sum(td.category_slots[9]), sum(td.category_slots[10]), sum(td.category_slots[11]), sum(td.category_slots[12]), sum(td.category_slots[13])]
                    ELSE NULL::bigint[]
                END AS category_slots,
                CASE
                    WHEN (count(td.category_actual_wh) = count(*)) THEN ARRAY[(sum(td.category_actual_wh[1]))::bigint, (sum(td.category_actual_wh[2]))::bigint, (sum(td.category_actual_wh[3]))::bigint, (sum(td.category_actual_wh[4]))::bigint, (sum(td.category_actual_wh[5]))::bigint, (sum(td.category_actual_wh[6]))::bigint, (sum(td.category_actual_wh[7]))::bigint, (sum(td.category_actual_wh[8]))::bigint, (sum(td.category_actual_wh[9]))::bigint, (sum(td.category_actual_wh[10]))::bigint, (sum(td.category_actual_wh[11]))::bigint, (sum(td.category_actual_wh[12]))::bigint, (sum(td.category_actual_wh[13]))::bigint]
                    ELSE NULL::bigint[]
                END AS category_actual_wh,
                CASE
                    WHEN (count(td.category_potential_wh) = count(*)) THEN ARRAY[(sum(td.category_potential_wh[1]))::bigint, (sum(td.category_potential_wh[2]))::bigint, (sum(td.category_potential_wh[3]))::bigint, (sum(td.category_potential_wh[4]))::bigint, (sum(td.category_potential_wh[5]))::bigint, (sum(td.category_potential_wh[6]))::bigint, (sum(td.category_potential_wh[7]))::bigint, (sum(td.category_potential_wh[8]))::bigint, (sum(td.category_potential_wh[9]))::bigint, (sum(td.category_potential_wh[10]))::bigint, (sum(td.category_potential_wh[11]))::bigint, (sum(td.category_potential_wh[12]))::bigint, (sum(td.category_potential_wh[13]))::bigint]
                    ELSE NULL::bigint[]
                END AS category_potential_wh
           FROM public.turbine_day td
          GROUP BY td.farm_id, td.day) d
     CROSS JOIN LATERAL ( SELECT (public.farm_day_version(d.farm_id, d.day)).contract_id AS contract_id) v(contract_id))
     JOIN public.availability_contract k ON ((k.id = v.contract_id)))
     LEFT JOIN LATERAL ( SELECT x.available,
            x.unavailable,
            x.excluded
           FROM public.contract_slots((d.category_slots)::integer[], v.contract_id) x(available, unavailable, excluded)
          WHERE (d.category_slots IS NOT NULL)) s ON (true))
     LEFT JOIN LATERAL ( SELECT (( SELECT sum(a.a) AS sum
                   FROM unnest(d.category_actual_wh) a(a)))::bigint AS actual_wh,
            (COALESCE(sum(GREATEST((p.p - p.a), (0)::bigint)) FILTER (WHERE ((NOT (p.id = ANY (k.available))) AND (NOT (p.id = ANY (k.excluded))))), (0)::numeric))::bigint AS lost_wh,
            array_agg(GREATEST((p.p - p.a), (0)::bigint) ORDER BY p.id) AS category_lost_wh
           FROM UNNEST(d.category_potential_wh, d.category_actual_wh) WITH ORDINALITY p(p, a, id)
          WHERE ((d.category_potential_wh IS NOT NULL) AND (d.category_actual_wh IS NOT NULL))
         HAVING (count(*) > 0)) e ON (true));

-- Name: VIEW farm_day_contract; Type: COMMENT; Schema: public

COMMENT ON VIEW public.farm_day_contract IS 'Per farm-day: slots per information category (summed turbine_day.category_slots; NULL while a row was computed before categories), the contract governing the day and its classes'' sums, contractual availability = contract_available / (contract_available + contract_unavailable), time-based availability = available / expected (the counts before contracts), the information-unavailable share of expected; energy per category (Wh), lost = potential - actual (never negative) and production-based availability = actual / (actual + lost over the contract''s unavailable categories), NULL without a model.';

-- Name: COLUMN farm_day_contract.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.farm_id IS 'The farm.';

-- Name: COLUMN farm_day_contract.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.day IS 'The farm-local day.';

-- Name: COLUMN farm_day_contract.contract; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.contract IS 'The contract''s name (availability_contract.name; ''default'' when the fleet file gives none).';

-- Name: COLUMN farm_day_contract.turbines; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.turbines IS 'turbine_day rows summed.';

-- Name: COLUMN farm_day_contract.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.expected IS 'Sum of turbine_day.expected: the slots of the day.';

-- Name: COLUMN farm_day_contract.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.available IS 'Sum of turbine_day.available: slots whose readings say available.';

-- Name: COLUMN farm_day_contract.category_slots; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.category_slots IS 'Slots per category, indexed by availability_category.id.';

-- Name: COLUMN farm_day_contract.contract_available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.contract_available IS 'Slots in the categories the contract counts available.';

-- Name: COLUMN farm_day_contract.contract_unavailable; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.contract_unavailable IS 'Slots in the categories neither available nor excluded.';

-- Name: COLUMN farm_day_contract.contract_excluded; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.contract_excluded IS 'Slots in the categories the contract excludes from both sides.';

-- Name: COLUMN farm_day_contract.contractual_availability; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.contractual_availability IS 'contract_available / (contract_available + contract_unavailable).';

-- Name: COLUMN farm_day_contract.time_based_availability; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.time_based_availability IS 'available / expected: the slots whose readings say available, over every slot (the counts before contracts).';

-- Name: COLUMN farm_day_contract.information_unavailable; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.information_unavailable IS 'Slots without a reading (category information_unavailable) / expected.';

-- Name: COLUMN farm_day_contract.warranty_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.warranty_pm IS 'The contract''s warranted availability, per mille (NULL: none).';

-- Name: COLUMN farm_day_contract.category_actual_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.category_actual_wh IS 'Energy produced per category (Wh), summed turbine_day.category_actual_wh.';

-- Name: COLUMN farm_day_contract.category_potential_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.category_potential_wh IS 'The power curve''s energy per category (Wh), summed turbine_day.category_potential_wh; NULL without a model.';

-- Name: COLUMN farm_day_contract.actual_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.actual_wh IS 'Energy produced (Wh), every category.';

-- Name: COLUMN farm_day_contract.lost_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.lost_wh IS 'Energy lost (Wh) in the contract''s unavailable categories: potential - actual, per category never negative.';

-- Name: COLUMN farm_day_contract.category_lost_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.category_lost_wh IS 'Potential - actual per category (Wh, never negative), indexed by availability_category.id.';

-- Name: COLUMN farm_day_contract.production_based_availability; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_day_contract.production_based_availability IS 'actual_wh / (actual_wh + lost_wh); NULL without a model.';

-- Name: farm_freshness; Type: VIEW; Schema: public

CREATE VIEW public.farm_freshness AS
 SELECT f.id AS farm_id,
    fw.window_end AS published_through,
    fw.complete_through,
    fw.computed_at AS last_published_at,
    (EXTRACT(epoch FROM (now() - fw.complete_through)))::double precision AS behind_s
   FROM (public.farm f
     LEFT JOIN LATERAL ( SELECT w.window_end,
            w.complete_through,
            w.computed_at
           FROM public.farm_window w
          WHERE ((w.farm_id = f.id) AND (w.path = 'fast'::text))
          ORDER BY w.window_start DESC
         LIMIT 1) fw ON (true));

-- Name: VIEW farm_freshness; Type: COMMENT; Schema: public

COMMENT ON VIEW public.farm_freshness IS 'Per farm: the end of its last published window, the watermark it was published at, and now() - that watermark in seconds (behind_s). A farm whose behind grows is not being published (its shard down, the fast path stopped).';

-- Name: COLUMN farm_freshness.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_freshness.farm_id IS 'The farm.';

-- Name: COLUMN farm_freshness.published_through; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_freshness.published_through IS 'End of the last window published (fast).';

-- Name: COLUMN farm_freshness.complete_through; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_freshness.complete_through IS 'The latest watermark published at.';

-- Name: COLUMN farm_freshness.last_published_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_freshness.last_published_at IS 'When the fast path last published for this farm.';

-- Name: COLUMN farm_freshness.behind_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_freshness.behind_s IS 'now() - complete_through, in seconds (NULL before the first publication).';

-- Name: fleet_apply; Type: TABLE; Schema: public

CREATE TABLE public.fleet_apply (
    id bigint NOT NULL,
    fleet_hash text NOT NULL,
    applied_by text DEFAULT CURRENT_USER NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL,
    effective_from timestamp with time zone NOT NULL,
    reopened_days text[] DEFAULT '{}'::text[] NOT NULL
);

-- Name: TABLE fleet_apply; Type: COMMENT; Schema: public

COMMENT ON TABLE public.fleet_apply IS 'One row per fleet apply that wrote a version: the fleet file''s hash, the database user who applied it, when, from which instant, and the farm-days it reopened (--reopen).';

-- Name: COLUMN fleet_apply.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_apply.id IS 'The apply; farm_version.apply_id and turbine_version.apply_id name it.';

-- Name: COLUMN fleet_apply.fleet_hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_apply.fleet_hash IS 'sha256 of the fleet file''s bytes (hex); ''registry before versions'' for the versions made from the rows that existed before the registry was effective-dated.';

-- Name: COLUMN fleet_apply.applied_by; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_apply.applied_by IS 'The database user (current_user) who applied it.';

-- Name: COLUMN fleet_apply.applied_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_apply.applied_at IS 'When the apply committed (the database clock).';

-- Name: COLUMN fleet_apply.effective_from; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_apply.effective_from IS 'The instant its versions start (--effective-from, default the time of the apply); a farm''s versions start at the farm-local day holding it.';

-- Name: COLUMN fleet_apply.reopened_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_apply.reopened_days IS 'Farm-days (farm/YYYY-MM-DD) already rolled up that this apply changed and queued for recompute (--reopen); empty otherwise.';

-- Name: farm_history; Type: VIEW; Schema: public

CREATE VIEW public.farm_history AS
 SELECT v.farm_id,
    v.name,
    v.timezone,
    v.cadence_seconds,
    v.window_s,
    v.lane_threshold_ms,
    v.early_tolerance_ms,
    v.future_limit_s,
    v.max_age_days,
    v.mark_margin_s,
    v.allowed_lateness_s,
    v.divergence_alert_pm,
    v.completeness_alert_pm,
    v.first_day,
    v.valid_from,
    v.valid_to,
    a.fleet_hash,
    a.applied_by,
    a.applied_at,
    v.power_min_kw,
    v.power_max_kw,
    v.wind_max_ms
   FROM (public.farm_version v
     JOIN public.fleet_apply a ON ((a.id = v.apply_id)));

-- Name: VIEW farm_history; Type: COMMENT; Schema: public

COMMENT ON VIEW public.farm_history IS 'What the registry said about each farm over time: one row per version, in force over [valid_from, valid_to) (valid_to NULL = now), from first_day; who applied which fleet file.';

-- Name: COLUMN farm_history.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.farm_id IS 'The farm.';

-- Name: COLUMN farm_history.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.name IS 'Display name.';

-- Name: COLUMN farm_history.timezone; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.timezone IS 'IANA zone of the days the version governs.';

-- Name: COLUMN farm_history.cadence_seconds; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.cadence_seconds IS 'Default cadence of the farm''s turbine entries.';

-- Name: COLUMN farm_history.window_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.window_s IS 'Window grid of its days, s.';

-- Name: COLUMN farm_history.lane_threshold_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.lane_threshold_ms IS 'Backfill lane / turbine_day.late threshold, ms.';

-- Name: COLUMN farm_history.early_tolerance_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.early_tolerance_ms IS 'turbine_day.early tolerance, ms.';

-- Name: COLUMN farm_history.future_limit_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.future_limit_s IS 'Future limit at ingest, s.';

-- Name: COLUMN farm_history.max_age_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.max_age_days IS 'Maximum age at ingest, days.';

-- Name: COLUMN farm_history.mark_margin_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.mark_margin_s IS 'Margin of the dirty-mark rule, s.';

-- Name: COLUMN farm_history.allowed_lateness_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.allowed_lateness_s IS 'Allowed lateness of the fast path, s.';

-- Name: COLUMN farm_history.divergence_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.divergence_alert_pm IS 'Divergence alert threshold, per mille.';

-- Name: COLUMN farm_history.completeness_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.completeness_alert_pm IS 'Completeness alert threshold, per mille.';

-- Name: COLUMN farm_history.first_day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.first_day IS 'The first farm-local day the version governs.';

-- Name: COLUMN farm_history.valid_from; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.valid_from IS 'Start of first_day (midnight in the previous version''s zone); -infinity for the version made from the registry before it kept history.';

-- Name: COLUMN farm_history.valid_to; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.valid_to IS 'Where the next version starts; NULL = in force now.';

-- Name: COLUMN farm_history.fleet_hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.fleet_hash IS 'sha256 of the fleet file that wrote the version.';

-- Name: COLUMN farm_history.applied_by; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.applied_by IS 'The database user who applied it.';

-- Name: COLUMN farm_history.applied_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.applied_at IS 'When the apply that wrote it committed.';

-- Name: COLUMN farm_history.power_min_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.power_min_kw IS 'Least power_kw accepted at ingest, kW.';

-- Name: COLUMN farm_history.power_max_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.power_max_kw IS 'Greatest power_kw accepted at ingest, kW.';

-- Name: COLUMN farm_history.wind_max_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_history.wind_max_ms IS 'Greatest wind_ms accepted at ingest, m/s.';

-- Name: farm_month; Type: VIEW; Schema: public

CREATE VIEW public.farm_month AS
 SELECT g.farm_id,
    g.month,
    g.days,
    g.days_in_month,
    g.turbine_days,
    g.expected,
    g.received,
    g.available,
    g.availability,
    g.completeness,
    g.unknown,
    g.beyond_cadence,
    g.out_of_service,
    g.last_received_at,
    g.computed_at,
    g.computed_after_days_end,
    g.pending,
    g.all_turbines_rolled_up,
    m.status,
    m.held_back,
    m.why
   FROM (( SELECT fd.farm_id,
            (date_trunc('month'::text, (fd.day)::timestamp with time zone))::date AS month,
            (count(*))::integer AS days,
            (EXTRACT(day FROM (date_trunc('month'::text, (fd.day)::timestamp with time zone) + '1 mon -1 days'::interval)))::integer AS days_in_month,
            sum(fd.turbines) AS turbine_days,
            (sum(fd.expected))::bigint AS expected,
            (sum(fd.received))::bigint AS received,
            (sum(fd.available))::bigint AS available,
            round((sum(fd.available) / NULLIF(sum(fd.expected), (0)::numeric)), 6) AS availability,
            round((sum(fd.received) / NULLIF(sum(fd.expected), (0)::numeric)), 6) AS completeness,
            round(((sum(fd.expected) - sum(fd.received)) / NULLIF(sum(fd.expected), (0)::numeric)), 6) AS unknown,
            (sum(fd.beyond_cadence))::bigint AS beyond_cadence,
            (sum(fd.out_of_service))::bigint AS out_of_service,
            max(fd.last_received_at) AS last_received_at,
            max(fd.computed_at) AS computed_at,
            bool_and(fd.computed_after_day_end) AS computed_after_days_end,
            bool_or(fd.pending) AS pending,
            bool_and((fd.turbines_in_service >= fd.registered_turbines)) AS all_turbines_rolled_up
           FROM public.farm_day fd
          GROUP BY fd.farm_id, (date_trunc('month'::text, (fd.day)::timestamp with time zone))) g
     CROSS JOIN LATERAL ( SELECT r.status,
            r.held_back,
            r.why
           FROM public.report_monthly_availability(g.farm_id, to_char((g.month)::timestamp with time zone, 'YYYY-MM'::text)) r(farm_id, month, scope, day, expected, received, available, availability, completeness, turbines, registered_turbines, source, path, computed_at, complete_through, pending, status, held_back, why)
          WHERE (r.scope = 'month'::text)) m);

-- Name: VIEW farm_month; Type: COMMENT; Schema: public

COMMENT ON VIEW public.farm_month IS 'Per farm and calendar month in the farm''s zone with rolled-up days: sums of farm_day and rates computed at read time, and the month''s status as the monthly report judges it now.';

-- Name: COLUMN farm_month.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_month.month; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.month IS 'First day of the calendar month, in the farm''s zone.';

-- Name: COLUMN farm_month.days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.days IS 'Days of the month with rollup rows; compare with days_in_month before quoting the month.';

-- Name: COLUMN farm_month.days_in_month; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.days_in_month IS 'Calendar days in the month.';

-- Name: COLUMN farm_month.turbine_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.turbine_days IS 'Turbine-day rows summed.';

-- Name: COLUMN farm_month.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.expected IS 'Sum of expected slots over the month''s rolled-up days.';

-- Name: COLUMN farm_month.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.received IS 'Sum of received slots.';

-- Name: COLUMN farm_month.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.available IS 'Sum of available slots.';

-- Name: COLUMN farm_month.availability; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.availability IS 'available / expected over the month.';

-- Name: COLUMN farm_month.completeness; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.completeness IS 'received / expected over the month.';

-- Name: COLUMN farm_month.unknown; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.unknown IS '(expected - received) / expected over the month.';

-- Name: COLUMN farm_month.beyond_cadence; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.beyond_cadence IS 'Readings faster than the registered cadence over the month, not counted.';

-- Name: COLUMN farm_month.out_of_service; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.out_of_service IS 'Readings outside service intervals over the month, not counted.';

-- Name: COLUMN farm_month.last_received_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.last_received_at IS 'Latest arrival counted in the month.';

-- Name: COLUMN farm_month.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.computed_at IS 'The newest recompute among the month''s rows.';

-- Name: COLUMN farm_month.computed_after_days_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.computed_after_days_end IS 'Every rolled-up day''s rows were computed at or after that day closed (farm_day.computed_after_day_end).';

-- Name: COLUMN farm_month.pending; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.pending IS 'Some rolled-up day of the month is pending (farm_day.pending).';

-- Name: COLUMN farm_month.all_turbines_rolled_up; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.all_turbines_rolled_up IS 'Every rolled-up day has a row for every turbine the registry had in service that day (rows of retired turbines do not count towards it); days without rows are not counted here (see status).';

-- Name: COLUMN farm_month.status; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.status IS 'final, incomplete or provisional: the monthly report''s month row judged now (report_monthly_availability), over every calendar day of the month.';

-- Name: COLUMN farm_month.held_back; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.held_back IS 'The reasons some day of the month is provisional or incomplete; NULL when final.';

-- Name: COLUMN farm_month.why; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_month.why IS 'The days holding the month back, per reason, and the days'' notes (no turbines in service, acceptances), as the report''s total row says them.';

-- Name: fleet_rules; Type: TABLE; Schema: public

CREATE TABLE public.fleet_rules (
    id boolean DEFAULT true NOT NULL,
    lane_threshold_ms integer DEFAULT 60000 NOT NULL,
    early_tolerance_ms integer DEFAULT 2000 NOT NULL,
    future_limit_s integer DEFAULT 86400 NOT NULL,
    max_age_days integer DEFAULT 400 NOT NULL,
    window_s integer DEFAULT 60 NOT NULL,
    mark_margin_s integer DEFAULT 30 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    allowed_lateness_s integer DEFAULT 60 NOT NULL,
    divergence_alert_pm integer DEFAULT 30 NOT NULL,
    completeness_alert_pm integer DEFAULT 10 NOT NULL,
    reject_rows_kept integer DEFAULT 1000 NOT NULL,
    reject_retention_days integer DEFAULT 30 NOT NULL,
    power_min_kw integer DEFAULT '-1000'::integer NOT NULL,
    power_max_kw integer DEFAULT 20000 NOT NULL,
    wind_max_ms integer DEFAULT 100 NOT NULL,
    CONSTRAINT fleet_rules_allowed_lateness_s_check CHECK (((allowed_lateness_s >= 0) AND (allowed_lateness_s <= 86400))),
    CONSTRAINT fleet_rules_completeness_alert_pm_check CHECK (((completeness_alert_pm > 0) AND (completeness_alert_pm <= 1000))),
    CONSTRAINT fleet_rules_divergence_alert_pm_check CHECK ((divergence_alert_pm > 0)),
    CONSTRAINT fleet_rules_early_tolerance_ms_check CHECK ((early_tolerance_ms >= 0)),
    CONSTRAINT fleet_rules_future_limit_s_check CHECK ((future_limit_s > 0)),
    CONSTRAINT fleet_rules_id_check CHECK (id),
    CONSTRAINT fleet_rules_lane_threshold_ms_check CHECK ((lane_threshold_ms > 0)),
    CONSTRAINT fleet_rules_mark_margin_s_check CHECK ((mark_margin_s >= 30)),
    CONSTRAINT fleet_rules_max_age_days_check CHECK ((max_age_days > 0)),
    CONSTRAINT fleet_rules_power_max_kw_check CHECK (((power_max_kw >= '-100000'::integer) AND (power_max_kw <= 100000))),
    CONSTRAINT fleet_rules_power_min_kw_check CHECK (((power_min_kw >= '-100000'::integer) AND (power_min_kw <= 100000))),
    CONSTRAINT fleet_rules_power_range_check CHECK ((power_min_kw < power_max_kw)),
    CONSTRAINT fleet_rules_reject_retention_days_check CHECK (((reject_retention_days > 0) AND (reject_retention_days <= 100000))),
    CONSTRAINT fleet_rules_reject_rows_kept_check CHECK (((reject_rows_kept >= 0) AND (reject_rows_kept <= 1000000))),
    CONSTRAINT fleet_rules_wind_max_ms_check CHECK (((wind_max_ms >= 1) AND (wind_max_ms <= 200))),
    CONSTRAINT fleet_rules_window_s_check CHECK ((window_s > 0))
);

-- Name: TABLE fleet_rules; Type: COMMENT; Schema: public

COMMENT ON TABLE public.fleet_rules IS 'Fleet-wide defaults of the rules that define stored counts (one row, from the fleet file''s rules: section). A farm may override each but reject_rows_kept and reject_retention_days (farm.*); farm_rules gives the values in force.';

-- Name: COLUMN fleet_rules.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.id IS 'Always true: the table holds one row.';

-- Name: COLUMN fleet_rules.lane_threshold_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.lane_threshold_ms IS 'A reading whose recorded_at is more than this behind its received_at is backfill lane, and counted in turbine_day.late.';

-- Name: COLUMN fleet_rules.early_tolerance_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.early_tolerance_ms IS 'A reading whose recorded_at is more than this ahead of its received_at is early (a fast clock), counted in turbine_day.early.';

-- Name: COLUMN fleet_rules.future_limit_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.future_limit_s IS 'A clock further ahead than this is rejected at ingest: recorded_at of received_at, or either of the ingest clock.';

-- Name: COLUMN fleet_rules.max_age_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.max_age_days IS 'A reading recorded longer ago than this (by the ingest clock) is rejected at ingest.';

-- Name: COLUMN fleet_rules.window_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.window_s IS 'Event-time window length of the fast path and of corrections (default 60 s; 600 s is the 10-minute SCADA convention), counted from farm-local midnight. Also the unit of the dirty-mark rule.';

-- Name: COLUMN fleet_rules.mark_margin_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.mark_margin_s IS 'The write bound of the dirty-mark rule: an inserted reading marks its turbine-window when written at or after (window end + allowed lateness - this margin). At least 30 s: ingest bounds a write transaction at 20 s.';

-- Name: COLUMN fleet_rules.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.updated_at IS 'When a fleet apply last changed the defaults.';

-- Name: COLUMN fleet_rules.allowed_lateness_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.allowed_lateness_s IS 'The fast path publishes a window once its end + this much has passed on the clock (the watermark is now - allowed lateness). orchestrator lateness measures what it should be.';

-- Name: COLUMN fleet_rules.divergence_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.divergence_alert_pm IS 'A final window or farm-day whose received or available differs from the fast number by more than this, per mille of the final, raises a divergence alert.';

-- Name: COLUMN fleet_rules.completeness_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.completeness_alert_pm IS 'A closed farm-day whose received falls short of expected by more than this, per mille, raises a completeness alert naming the silent turbines and hours.';

-- Name: COLUMN fleet_rules.reject_rows_kept; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.reject_rows_kept IS 'Refused lines of one body or file stored verbatim in ingest_reject (the first ones, in line order); the rest are counted per reason in one ingest_reject_summary row. Fleet-wide only.';

-- Name: COLUMN fleet_rules.reject_retention_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.reject_retention_days IS 'ingest_reject and ingest_reject_summary rows older than this many days (by rejected_at, the ingest clock) are deleted by the partitions job. Fleet-wide only.';

-- Name: COLUMN fleet_rules.power_min_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.power_min_kw IS 'A reading whose power_kw is below this (kW) is refused at ingest (kind implausible). Between -100000 and 100000, below power_max_kw.';

-- Name: COLUMN fleet_rules.power_max_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.power_max_kw IS 'A reading whose power_kw is above this (kW) is refused at ingest (kind implausible): a controller''s sentinel such as 3.0e38 never reaches a sum. At most 100000, the ceiling every energy sum is proved for.';

-- Name: COLUMN fleet_rules.wind_max_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.fleet_rules.wind_max_ms IS 'A reading whose wind_ms is above this (m/s), or below 0, is refused at ingest (kind implausible). Between 1 and 200.';

-- Name: farm_rules; Type: VIEW; Schema: public

CREATE VIEW public.farm_rules AS
 SELECT f.id AS farm_id,
    COALESCE(f.lane_threshold_ms, r.lane_threshold_ms) AS lane_threshold_ms,
    COALESCE(f.early_tolerance_ms, r.early_tolerance_ms) AS early_tolerance_ms,
    COALESCE(f.future_limit_s, r.future_limit_s) AS future_limit_s,
    COALESCE(f.max_age_days, r.max_age_days) AS max_age_days,
    COALESCE(f.window_s, r.window_s) AS window_s,
    COALESCE(f.mark_margin_s, r.mark_margin_s) AS mark_margin_s,
    COALESCE(f.allowed_lateness_s, r.allowed_lateness_s) AS allowed_lateness_s,
    COALESCE(f.divergence_alert_pm, r.divergence_alert_pm) AS divergence_alert_pm,
    COALESCE(f.completeness_alert_pm, r.completeness_alert_pm) AS completeness_alert_pm,
    COALESCE(f.power_min_kw, r.power_min_kw) AS power_min_kw,
    COALESCE(f.power_max_kw, r.power_max_kw) AS power_max_kw,
    COALESCE(f.wind_max_ms, r.wind_max_ms) AS wind_max_ms
   FROM (public.farm f
     CROSS JOIN public.fleet_rules r);

-- Name: VIEW farm_rules; Type: COMMENT; Schema: public

COMMENT ON VIEW public.farm_rules IS 'The rules in force for each farm now: its override, else the fleet default. Ingest, the fast path and the alerts read them here; a day''s counts use the rules of the farm_version governing that day.';

-- Name: COLUMN farm_rules.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_rules.lane_threshold_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.lane_threshold_ms IS 'Backfill lane / turbine_day.late threshold in force, ms.';

-- Name: COLUMN farm_rules.early_tolerance_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.early_tolerance_ms IS 'Early / turbine_day.early tolerance in force, ms.';

-- Name: COLUMN farm_rules.future_limit_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.future_limit_s IS 'Future limit in force at ingest, s.';

-- Name: COLUMN farm_rules.max_age_days; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.max_age_days IS 'Maximum age in force at ingest, days.';

-- Name: COLUMN farm_rules.window_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.window_s IS 'Window of the dirty-mark rule in force, s.';

-- Name: COLUMN farm_rules.mark_margin_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.mark_margin_s IS 'Margin of the dirty-mark rule in force, s.';

-- Name: COLUMN farm_rules.allowed_lateness_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.allowed_lateness_s IS 'Allowed lateness of the fast path in force, s.';

-- Name: COLUMN farm_rules.divergence_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.divergence_alert_pm IS 'Divergence alert threshold in force, per mille.';

-- Name: COLUMN farm_rules.completeness_alert_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.completeness_alert_pm IS 'Completeness alert threshold in force, per mille short of expected.';

-- Name: COLUMN farm_rules.power_min_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.power_min_kw IS 'Least power_kw accepted at ingest, kW.';

-- Name: COLUMN farm_rules.power_max_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.power_max_kw IS 'Greatest power_kw accepted at ingest, kW.';

-- Name: COLUMN farm_rules.wind_max_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_rules.wind_max_ms IS 'Greatest wind_ms accepted at ingest, m/s (the least is 0).';

-- Name: farm_window_part; Type: TABLE; Schema: public

CREATE TABLE public.farm_window_part (
    farm_id text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    shard_name text NOT NULL,
    window_end timestamp with time zone NOT NULL,
    day date NOT NULL,
    expected bigint NOT NULL,
    received bigint NOT NULL,
    available bigint NOT NULL,
    late bigint NOT NULL,
    readings bigint NOT NULL,
    shard_xid bigint NOT NULL,
    computed_at timestamp with time zone NOT NULL
)
WITH (fillfactor='70');

-- Name: TABLE farm_window_part; Type: COMMENT; Schema: public

COMMENT ON TABLE public.farm_window_part IS 'One shard''s share of a farm''s window (its turbines of the farm). Written by the fast path and rollup_day jobs; a final farm_window row is the sum over the farm''s shards.';

-- Name: COLUMN farm_window_part.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN farm_window_part.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.window_start IS 'Window start.';

-- Name: COLUMN farm_window_part.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.shard_name IS 'The shard whose turbines of the farm this part sums.';

-- Name: COLUMN farm_window_part.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.window_end IS 'Window end.';

-- Name: COLUMN farm_window_part.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.day IS 'The farm-local day holding the window.';

-- Name: COLUMN farm_window_part.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.expected IS 'Cadence slots starting in the window, this shard''s turbines of the farm.';

-- Name: COLUMN farm_window_part.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.received IS 'Of those, slots with a reading.';

-- Name: COLUMN farm_window_part.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.available IS 'Of those, slots reported available.';

-- Name: COLUMN farm_window_part.late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.late IS 'Readings of the window that came in the backfill lane.';

-- Name: COLUMN farm_window_part.readings; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.readings IS 'Readings of the window counted.';

-- Name: COLUMN farm_window_part.shard_xid; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.shard_xid IS 'The shard transaction that computed it (pg_current_xact_id): writes of one farm-day on a shard are serialised, so a larger id is a newer snapshot.';

-- Name: COLUMN farm_window_part.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_part.computed_at IS 'Clock of the computation that wrote the part.';

-- Name: fleet_apply_id_seq; Type: SEQUENCE; Schema: public

CREATE SEQUENCE public.fleet_apply_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: fleet_apply_id_seq; Type: SEQUENCE OWNED BY; Schema: public

ALTER SEQUENCE public.fleet_apply_id_seq OWNED BY public.fleet_apply.id;

-- Name: goose_db_version; Type: TABLE; Schema: public

CREATE TABLE public.goose_db_version (
    id integer NOT NULL,
    version_id bigint NOT NULL,
    is_applied boolean NOT NULL,
    tstamp timestamp without time zone DEFAULT now() NOT NULL
);

-- Name: goose_db_version_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.goose_db_version ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.goose_db_version_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: ingest_reject; Type: TABLE; Schema: public

CREATE TABLE public.ingest_reject (
    id bigint NOT NULL,
    source text NOT NULL,
    line bigint NOT NULL,
    raw text NOT NULL,
    reason text NOT NULL,
    rejected_at timestamp with time zone DEFAULT now() NOT NULL,
    raw_escaped boolean DEFAULT false NOT NULL,
    raw_bytes bytea,
    raw_length integer,
    kind text
);

-- Name: TABLE ingest_reject; Type: COMMENT; Schema: public

COMMENT ON TABLE public.ingest_reject IS 'Lines refused at ingest, one row per line with the reason: the first fleet_rules.reject_rows_kept of each body or file; the rest are counted in its ingest_reject_summary row. The body''s other lines are stored.';

-- Name: COLUMN ingest_reject.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.id IS 'Row id, in order of rejection.';

-- Name: COLUMN ingest_reject.source; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.source IS 'Where the line came from: a file path, "-" for stdin, or "http:<remote address>".';

-- Name: COLUMN ingest_reject.line; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.line IS 'Line number in the source (1-based; a CSV header is line 1).';

-- Name: COLUMN ingest_reject.raw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.raw IS 'The line as received, cut to its first 4 KiB on a character boundary. Bytes that are not UTF-8 text (invalid sequences, NUL) are written as \xNN; raw_escaped says so.';

-- Name: COLUMN ingest_reject.reason; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.reason IS 'What was wrong, naming the field and value.';

-- Name: COLUMN ingest_reject.rejected_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.rejected_at IS 'When ingest refused the line (the ingest clock).';

-- Name: COLUMN ingest_reject.raw_escaped; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.raw_escaped IS 'True when raw had bytes written as \xNN; raw_bytes then holds the exact bytes.';

-- Name: COLUMN ingest_reject.raw_bytes; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.raw_bytes IS 'The exact bytes of the line (first 4 KiB) when they are not storable as text; NULL otherwise.';

-- Name: COLUMN ingest_reject.raw_length; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.raw_length IS 'Length of the whole line in bytes (raw keeps at most 4 KiB of it). NULL for rows rejected before this column existed.';

-- Name: COLUMN ingest_reject.kind; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject.kind IS 'The kind of reason (invalid, unknown_turbine, future, too_old, retention, out_of_service, implausible): what ingest_reject_summary counts by. NULL for rows refused before this column existed.';

-- Name: ingest_reject_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.ingest_reject ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.ingest_reject_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: ingest_reject_summary; Type: TABLE; Schema: public

CREATE TABLE public.ingest_reject_summary (
    id bigint NOT NULL,
    source text NOT NULL,
    kept bigint NOT NULL,
    not_kept bigint NOT NULL,
    not_kept_by_kind jsonb NOT NULL,
    first_line_not_kept bigint NOT NULL,
    last_line_not_kept bigint NOT NULL,
    rows_kept_limit integer NOT NULL,
    rejected_at timestamp with time zone NOT NULL,
    CONSTRAINT ingest_reject_summary_kept_check CHECK ((kept >= 0)),
    CONSTRAINT ingest_reject_summary_not_kept_check CHECK ((not_kept > 0))
);

-- Name: TABLE ingest_reject_summary; Type: COMMENT; Schema: public

COMMENT ON TABLE public.ingest_reject_summary IS 'One row per body or file that refused more lines than fleet_rules.reject_rows_kept: the lines not kept in ingest_reject, counted per kind of reason. Every refused line is a row of ingest_reject or counted here.';

-- Name: COLUMN ingest_reject_summary.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.id IS 'Row id, in order of writing.';

-- Name: COLUMN ingest_reject_summary.source; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.source IS 'Where the lines came from, as ingest_reject.source: a file path, "-" for stdin, or "http:<remote address>".';

-- Name: COLUMN ingest_reject_summary.kept; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.kept IS 'Refused lines of the body or file stored verbatim in ingest_reject (the first ones).';

-- Name: COLUMN ingest_reject_summary.not_kept; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.not_kept IS 'Refused lines of the body or file beyond the cap: counted here, not stored.';

-- Name: COLUMN ingest_reject_summary.not_kept_by_kind; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.not_kept_by_kind IS 'not_kept per kind of reason (ingest_reject.kind), e.g. {"invalid": 3200, "unknown_turbine": 800}.';

-- Name: COLUMN ingest_reject_summary.first_line_not_kept; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.first_line_not_kept IS 'Line number of the first refused line not kept.';

-- Name: COLUMN ingest_reject_summary.last_line_not_kept; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.last_line_not_kept IS 'Line number of the last refused line not kept.';

-- Name: COLUMN ingest_reject_summary.rows_kept_limit; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.rows_kept_limit IS 'fleet_rules.reject_rows_kept in force for this ingest.';

-- Name: COLUMN ingest_reject_summary.rejected_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.ingest_reject_summary.rejected_at IS 'When the ingest of the body or file ended (the ingest clock); retention goes by it.';

-- Name: ingest_reject_summary_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.ingest_reject_summary ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.ingest_reject_summary_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: operator_event; Type: TABLE; Schema: public

CREATE TABLE public.operator_event (
    id bigint NOT NULL,
    farm_id text NOT NULL,
    turbine_ids text[] DEFAULT '{}'::text[] NOT NULL,
    from_at timestamp with time zone NOT NULL,
    to_at timestamp with time zone NOT NULL,
    category_id smallint NOT NULL,
    note text NOT NULL,
    entered_by text NOT NULL,
    entered_at timestamp with time zone DEFAULT now() NOT NULL,
    entered_db_user text DEFAULT CURRENT_USER NOT NULL,
    voided_by text,
    voided_at timestamp with time zone,
    void_note text,
    CONSTRAINT operator_event_category_id_check CHECK ((category_id <> 13)),
    CONSTRAINT operator_event_check CHECK ((to_at > from_at)),
    CONSTRAINT operator_event_check1 CHECK (((note <> ''::text) AND (entered_by <> ''::text))),
    CONSTRAINT operator_event_check2 CHECK ((((voided_at IS NULL) = (voided_by IS NULL)) AND ((voided_at IS NULL) = (void_note IS NULL)))),
    CONSTRAINT operator_event_check3 CHECK (((voided_by IS NULL) OR ((voided_by <> ''::text) AND (void_note <> ''::text))))
);

-- Name: TABLE operator_event; Type: COMMENT; Schema: public

COMMENT ON TABLE public.operator_event IS 'Operator events: an interval of an availability category on a farm''s turbines, entered by a person (orchestrator event add, POST /api/v1/events). Never deleted, edited or truncated (operator_event_guard, operator_event_no_truncate); a void (voided_*) takes it out of the counts and keeps it in the trail. docs/operator.md, "Operator events".';

-- Name: COLUMN operator_event.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.id IS 'The event''s number (event void ID).';

-- Name: COLUMN operator_event.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.farm_id IS 'The farm.';

-- Name: COLUMN operator_event.turbine_ids; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.turbine_ids IS 'The turbines it covers; empty: every turbine of the farm.';

-- Name: COLUMN operator_event.from_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.from_at IS 'Start (inclusive): a slot starting at or after it is covered.';

-- Name: COLUMN operator_event.to_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.to_at IS 'End (exclusive): a slot starting before it is covered.';

-- Name: COLUMN operator_event.category_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.category_id IS 'The category (availability_category.id; not information unavailable).';

-- Name: COLUMN operator_event.note; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.note IS 'Why, in the operator''s words (required).';

-- Name: COLUMN operator_event.entered_by; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.entered_by IS 'Who entered it (the CLI''s --by, by default the OS user; the API''s entered_by).';

-- Name: COLUMN operator_event.entered_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.entered_at IS 'When it was entered.';

-- Name: COLUMN operator_event.entered_db_user; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.entered_db_user IS 'The database role that inserted it.';

-- Name: COLUMN operator_event.voided_by; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.voided_by IS 'Who voided it (NULL: in force).';

-- Name: COLUMN operator_event.voided_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.voided_at IS 'When it was voided.';

-- Name: COLUMN operator_event.void_note; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.operator_event.void_note IS 'Why it was voided.';

-- Name: operator_event_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.operator_event ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.operator_event_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: publish_lag; Type: VIEW; Schema: public

CREATE VIEW public.publish_lag AS
 SELECT fw.farm_id,
    fw.window_start,
    fw.window_end,
    fw.computed_at AS published_at,
    (EXTRACT(epoch FROM (fw.computed_at - fw.complete_through)))::integer AS allowed_lateness_s,
    ((EXTRACT(epoch FROM (fw.complete_through - fw.window_end)) * (1000)::numeric))::bigint AS lag_ms
   FROM public.farm_window fw
  WHERE (fw.path = 'fast'::text);

-- Name: VIEW publish_lag; Type: COMMENT; Schema: public

COMMENT ON VIEW public.publish_lag IS 'Per published window: published_at - (window_end + allowed lateness), the delay of the fast path beyond its watermark.';

-- Name: COLUMN publish_lag.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.publish_lag.farm_id IS 'The farm.';

-- Name: COLUMN publish_lag.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.publish_lag.window_start IS 'Window start.';

-- Name: COLUMN publish_lag.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.publish_lag.window_end IS 'Window end.';

-- Name: COLUMN publish_lag.published_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.publish_lag.published_at IS 'When the fast row was written.';

-- Name: COLUMN publish_lag.allowed_lateness_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.publish_lag.allowed_lateness_s IS 'The allowed lateness it was published with.';

-- Name: COLUMN publish_lag.lag_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.publish_lag.lag_ms IS 'How long after end + allowed lateness it was published, ms.';

-- Name: reconciliation; Type: TABLE; Schema: public

CREATE TABLE public.reconciliation (
    farm_id text NOT NULL,
    scope text NOT NULL,
    period_start timestamp with time zone NOT NULL,
    day date NOT NULL,
    fast_expected bigint NOT NULL,
    fast_received bigint NOT NULL,
    fast_available bigint NOT NULL,
    final_expected bigint NOT NULL,
    final_received bigint NOT NULL,
    final_available bigint NOT NULL,
    windows integer NOT NULL,
    final_revision integer NOT NULL,
    measured_at timestamp with time zone NOT NULL,
    CONSTRAINT reconciliation_scope_check CHECK ((scope = ANY (ARRAY['window'::text, 'day'::text])))
);

-- Name: TABLE reconciliation; Type: COMMENT; Schema: public

COMMENT ON TABLE public.reconciliation IS 'The fast number against the final one, per window and per farm-day, as last measured (each final write re-measures). Per mille in reconciliation_pm.';

-- Name: COLUMN reconciliation.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN reconciliation.scope; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.scope IS 'window: one window (period_start = its start). day: the farm-local day''s windows that have both a fast and a final row (period_start = the day''s start).';

-- Name: COLUMN reconciliation.period_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.period_start IS 'Window start (scope window) or the farm-local day''s start (scope day).';

-- Name: COLUMN reconciliation.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.day IS 'The farm-local day.';

-- Name: COLUMN reconciliation.fast_expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.fast_expected IS 'Expected slots in the fast row(s).';

-- Name: COLUMN reconciliation.fast_received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.fast_received IS 'Received slots in the fast row(s).';

-- Name: COLUMN reconciliation.fast_available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.fast_available IS 'Available slots in the fast row(s).';

-- Name: COLUMN reconciliation.final_expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.final_expected IS 'Expected slots in the final row(s).';

-- Name: COLUMN reconciliation.final_received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.final_received IS 'Received slots in the final row(s).';

-- Name: COLUMN reconciliation.final_available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.final_available IS 'Available slots in the final row(s).';

-- Name: COLUMN reconciliation.windows; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.windows IS 'Windows compared (1 for scope window).';

-- Name: COLUMN reconciliation.final_revision; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.final_revision IS 'The final row''s revision measured (for a day: the sum of its windows'' revisions).';

-- Name: COLUMN reconciliation.measured_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation.measured_at IS 'When this comparison was made (the final write that triggered it).';

-- Name: reconciliation_pm; Type: VIEW; Schema: public

CREATE VIEW public.reconciliation_pm AS
 SELECT r.farm_id,
    r.scope,
    r.period_start,
    r.day,
    r.fast_expected,
    r.fast_received,
    r.fast_available,
    r.final_expected,
    r.final_received,
    r.final_available,
    r.windows,
    r.final_revision,
    r.measured_at,
        CASE
            WHEN (r.final_received = 0) THEN (0)::numeric
            ELSE round(((1000.0 * ((r.final_received - r.fast_received))::numeric) / (r.final_received)::numeric), 3)
        END AS received_divergence_pm,
        CASE
            WHEN (r.final_available = 0) THEN (0)::numeric
            ELSE round(((1000.0 * ((r.final_available - r.fast_available))::numeric) / (r.final_available)::numeric), 3)
        END AS available_divergence_pm
   FROM public.reconciliation r;

-- Name: VIEW reconciliation_pm; Type: COMMENT; Schema: public

COMMENT ON VIEW public.reconciliation_pm IS 'reconciliation with the divergence (final - fast) / final in per mille, computed at read time.';

-- Name: COLUMN reconciliation_pm.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.farm_id IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.scope; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.scope IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.period_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.period_start IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.day IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.fast_expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.fast_expected IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.fast_received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.fast_received IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.fast_available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.fast_available IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.final_expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.final_expected IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.final_received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.final_received IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.final_available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.final_available IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.windows; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.windows IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.final_revision; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.final_revision IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.measured_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.measured_at IS 'See reconciliation.';

-- Name: COLUMN reconciliation_pm.received_divergence_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.received_divergence_pm IS '(final_received - fast_received) / final_received, per mille (0 when final_received is 0).';

-- Name: COLUMN reconciliation_pm.available_divergence_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.reconciliation_pm.available_divergence_pm IS '(final_available - fast_available) / final_available, per mille (0 when final_available is 0).';

-- Name: river_job; Type: TABLE; Schema: public

CREATE TABLE public.river_job (
    id bigint NOT NULL,
    state public.river_job_state DEFAULT 'available'::public.river_job_state NOT NULL,
    attempt smallint DEFAULT 0 NOT NULL,
    max_attempts smallint DEFAULT 25 NOT NULL,
    attempted_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finalized_at timestamp with time zone,
    scheduled_at timestamp with time zone DEFAULT now() NOT NULL,
    priority smallint DEFAULT 1 NOT NULL,
    args jsonb NOT NULL,
    attempted_by text[],
    errors jsonb[],
    kind text NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    queue text DEFAULT 'default'::text NOT NULL,
    tags character varying(255)[] DEFAULT '{}'::character varying[] NOT NULL,
    unique_key bytea,
    unique_states bit(8),
    CONSTRAINT finalized_or_finalized_at_null CHECK ((((finalized_at IS NULL) AND (state <> ALL (ARRAY['cancelled'::public.river_job_state, 'completed'::public.river_job_state, 'discarded'::public.river_job_state]))) OR ((finalized_at IS NOT NULL) AND (state = ANY (ARRAY['cancelled'::public.river_job_state, 'completed'::public.river_job_state, 'discarded'::public.river_job_state]))))),
    CONSTRAINT kind_length CHECK (((char_length(kind) > 0) AND (char_length(kind) < 128))),
    CONSTRAINT max_attempts_is_positive CHECK ((max_attempts > 0)),
    CONSTRAINT priority_in_range CHECK (((priority >= 1) AND (priority <= 4))),
    CONSTRAINT queue_length CHECK (((char_length(queue) > 0) AND (char_length(queue) < 128)))
);

-- Name: river_job_id_seq; Type: SEQUENCE; Schema: public

CREATE SEQUENCE public.river_job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: river_job_id_seq; Type: SEQUENCE OWNED BY; Schema: public

ALTER SEQUENCE public.river_job_id_seq OWNED BY public.river_job.id;

-- Name: river_leader; Type: TABLE; Schema: public

CREATE UNLOGGED TABLE public.river_leader (
    elected_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    leader_id text NOT NULL,
    name text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT leader_id_length CHECK (((char_length(leader_id) > 0) AND (char_length(leader_id) < 128))),
    CONSTRAINT name_length CHECK ((name = 'default'::text))
);

-- Name: river_migration; Type: TABLE; Schema: public

CREATE TABLE public.river_migration (
    line text NOT NULL,
    version bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT line_length CHECK (((char_length(line) > 0) AND (char_length(line) < 128))),
    CONSTRAINT version_gte_1 CHECK ((version >= 1))
);

-- Name: river_notification; Type: TABLE; Schema: public

CREATE TABLE public.river_notification (
    id bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    payload text NOT NULL,
    topic text NOT NULL,
    CONSTRAINT topic_length CHECK (((length(topic) > 0) AND (length(topic) < 128)))
);

-- Name: river_notification_id_seq; Type: SEQUENCE; Schema: public

CREATE SEQUENCE public.river_notification_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: river_notification_id_seq; Type: SEQUENCE OWNED BY; Schema: public

ALTER SEQUENCE public.river_notification_id_seq OWNED BY public.river_notification.id;

-- Name: river_queue; Type: TABLE; Schema: public

CREATE TABLE public.river_queue (
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    paused_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);

-- Name: rollup_pending; Type: TABLE; Schema: public

CREATE TABLE public.rollup_pending (
    farm_id text NOT NULL,
    day date NOT NULL,
    shard_name text NOT NULL,
    turbine_ids text[],
    job_id bigint NOT NULL,
    requested_at timestamp with time zone NOT NULL
);

-- Name: TABLE rollup_pending; Type: COMMENT; Schema: public

COMMENT ON TABLE public.rollup_pending IS 'Farm-day-shards the drain found dirtied by late readings, whose rollup_day job has not claimed them yet: the job claims (deletes) the row before reading the shard. A request whose job will never run (cancelled, discarded) is given a new job by the next drain.';

-- Name: COLUMN rollup_pending.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.rollup_pending.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN rollup_pending.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.rollup_pending.day IS 'The farm-local day to recompute.';

-- Name: COLUMN rollup_pending.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.rollup_pending.shard_name IS 'The shard whose turbines of the farm are recomputed.';

-- Name: COLUMN rollup_pending.turbine_ids; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.rollup_pending.turbine_ids IS 'Turbines to recompute; NULL = every turbine of the farm on that shard.';

-- Name: COLUMN rollup_pending.job_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.rollup_pending.job_id IS 'The queued rollup_day job that will claim this request.';

-- Name: COLUMN rollup_pending.requested_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.rollup_pending.requested_at IS 'When the latest dirty mark was folded into this request.';

-- Name: shard; Type: TABLE; Schema: public

CREATE TABLE public.shard (
    name text NOT NULL,
    dsn text,
    database text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- Name: TABLE shard; Type: COMMENT; Schema: public

COMMENT ON TABLE public.shard IS 'A readings shard. Each holds the readings of the turbines routed to it.';

-- Name: COLUMN shard.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard.name IS 'Shard name as written in the fleet file (s1, s2, ...).';

-- Name: COLUMN shard.dsn; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard.dsn IS 'Connection string of the shard database without a password (passwords come from the environment or a pgpass file); NULL means a database of the control server (the embedded default).';

-- Name: COLUMN shard.database; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard.database IS 'Database name on the control server when dsn is NULL; informational otherwise.';

-- Name: COLUMN shard.created_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard.created_at IS 'When the shard was first registered.';

-- Name: COLUMN shard.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard.updated_at IS 'When a fleet apply last changed the shard.';

-- Name: shard_drain; Type: TABLE; Schema: public

CREATE TABLE public.shard_drain (
    shard_name text NOT NULL,
    drained_through timestamp with time zone NOT NULL,
    shard_clock_at timestamp with time zone NOT NULL,
    marks_read integer NOT NULL
);

-- Name: TABLE shard_drain; Type: COMMENT; Schema: public

COMMENT ON TABLE public.shard_drain IS 'Per shard, when the drain last read its dirty marks and recorded them all (in rollup_pending or dirty_mark_settling), passing the announced marks whose transactions had finished (dirty_mark_announced). A shard with no row was never drained: the monthly report holds back its farms'' days (shard not drained).';

-- Name: COLUMN shard_drain.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard_drain.shard_name IS 'The shard (shard.name).';

-- Name: COLUMN shard_drain.drained_through; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard_drain.drained_through IS 'The drainer''s clock taken before it opened the read of the shard''s marks: every mark committed before it was read. Advanced only by a drain that read every mark and recorded them all. Shown, not judged by: finality follows dirty_mark_announced.';

-- Name: COLUMN shard_drain.shard_clock_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard_drain.shard_clock_at IS 'The shard''s own clock (now()) in the transaction that read the marks; beside drained_through it shows the skew between the two clocks.';

-- Name: COLUMN shard_drain.marks_read; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.shard_drain.marks_read IS 'How many marks that drain read.';

-- Name: stall_watch; Type: TABLE; Schema: public

CREATE TABLE public.stall_watch (
    id boolean DEFAULT true NOT NULL,
    power_floor_kw real DEFAULT 1 NOT NULL,
    wind_min_ms real DEFAULT 4 NOT NULL,
    wind_max_ms real DEFAULT 25 NOT NULL,
    neighbours_pm integer DEFAULT 500 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT stall_watch_check CHECK ((wind_max_ms > wind_min_ms)),
    CONSTRAINT stall_watch_id_check CHECK (id),
    CONSTRAINT stall_watch_neighbours_pm_check CHECK (((neighbours_pm >= 0) AND (neighbours_pm <= 1000))),
    CONSTRAINT stall_watch_power_floor_kw_check CHECK ((power_floor_kw >= (0)::double precision)),
    CONSTRAINT stall_watch_wind_min_ms_check CHECK ((wind_min_ms >= (0)::double precision))
);

-- Name: TABLE stall_watch; Type: COMMENT; Schema: public

COMMENT ON TABLE public.stall_watch IS 'The stalled-turbine watcher''s thresholds (one row; a DBA may UPDATE it). They define alerts, not stored counts. docs/operator.md: The stalled-turbine watcher.';

-- Name: COLUMN stall_watch.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.stall_watch.id IS 'Always true: the table holds one row.';

-- Name: COLUMN stall_watch.power_floor_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.stall_watch.power_floor_kw IS 'A turbine whose highest power in a window is at or under this produced nothing in it.';

-- Name: COLUMN stall_watch.wind_min_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.stall_watch.wind_min_ms IS 'The operating range''s low end: under it the farm''s median wind, or the turbine''s own, is too calm to expect production.';

-- Name: COLUMN stall_watch.wind_max_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.stall_watch.wind_max_ms IS 'The operating range''s high end: over it turbines may stop for the wind (cut-out).';

-- Name: COLUMN stall_watch.neighbours_pm; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.stall_watch.neighbours_pm IS 'More than this many per mille of the farm''s other turbines with readings must produce for a turbine at zero to be stalled.';

-- Name: COLUMN stall_watch.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.stall_watch.updated_at IS 'When the thresholds were last changed.';

-- Name: turbine; Type: TABLE; Schema: public

CREATE TABLE public.turbine (
    id text NOT NULL,
    farm_id text NOT NULL,
    shard_name text NOT NULL,
    cadence_seconds integer DEFAULT 2 NOT NULL,
    commissioned_at timestamp with time zone,
    decommissioned_at timestamp with time zone,
    in_fleet_file boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT turbine_cadence_seconds_check CHECK ((cadence_seconds > 0)),
    CONSTRAINT turbine_check CHECK (((decommissioned_at IS NULL) OR (commissioned_at IS NULL) OR (decommissioned_at > commissioned_at)))
);

-- Name: TABLE turbine; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine IS 'A turbine as the last fleet apply or move left it: its farm, the shard that holds its readings, its cadence and service interval; turbine_version keeps every version.';

-- Name: COLUMN turbine.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.id IS 'Turbine id as it appears in readings (AP-001).';

-- Name: COLUMN turbine.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN turbine.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.shard_name IS 'The shard holding the turbine''s readings (shard.name): ingest routes by it and every computation reads the turbine there. Changed only by a move (turbine_move), which copies the readings to the new shard first.';

-- Name: COLUMN turbine.cadence_seconds; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.cadence_seconds IS 'Seconds between readings, as the last apply left it (a day''s slots follow turbine_version.cadence_seconds): expected slots = floor(seconds in service / cadence).';

-- Name: COLUMN turbine.commissioned_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.commissioned_at IS 'Start of service: the fleet file''s commissioned_at, else the instant the apply that registered the turbine took effect; NULL = always (turbines registered before that rule). Expected counts are clipped to [commissioned_at, decommissioned_at).';

-- Name: COLUMN turbine.decommissioned_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.decommissioned_at IS 'End of service; NULL = in service. The fleet file''s decommissioned_at, or the apply''s effective instant when an apply retires a turbine the file no longer names (refused for a turbine in service unless --retire-missing).';

-- Name: COLUMN turbine.in_fleet_file; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.in_fleet_file IS 'False once the turbine was removed from the fleet file (its history is kept).';

-- Name: COLUMN turbine.created_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.created_at IS 'When the turbine was first registered.';

-- Name: COLUMN turbine.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine.updated_at IS 'When a fleet apply last changed the turbine.';

-- Name: turbine_day_category; Type: VIEW; Schema: public

CREATE VIEW public.turbine_day_category AS
 SELECT td.turbine_id,
    td.day,
    td.farm_id,
    c.code AS category,
    td.category_slots[c.id] AS slots,
        CASE
            WHEN (c.id = ANY (k.available)) THEN 'available'::text
            WHEN (c.id = ANY (k.excluded)) THEN 'excluded'::text
            ELSE 'unavailable'::text
        END AS class,
    k.name AS contract
   FROM (((public.turbine_day td
     CROSS JOIN LATERAL ( SELECT (public.farm_day_version(td.farm_id, td.day)).contract_id AS contract_id) v(contract_id))
     JOIN public.availability_contract k ON ((k.id = v.contract_id)))
     CROSS JOIN public.availability_category c)
  WHERE (td.category_slots IS NOT NULL);

-- Name: VIEW turbine_day_category; Type: COMMENT; Schema: public

COMMENT ON VIEW public.turbine_day_category IS 'turbine_day.category_slots unnested: one row per turbine-day and category, with the class the contract governing the day gives it.';

-- Name: COLUMN turbine_day_category.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.turbine_id IS 'The turbine (turbine_day.turbine_id).';

-- Name: COLUMN turbine_day_category.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.day IS 'The farm-local day.';

-- Name: COLUMN turbine_day_category.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.farm_id IS 'The farm the row was counted for.';

-- Name: COLUMN turbine_day_category.category; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.category IS 'The category''s code (availability_category.code).';

-- Name: COLUMN turbine_day_category.slots; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.slots IS 'Slots of the turbine-day in the category.';

-- Name: COLUMN turbine_day_category.class; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.class IS 'available, unavailable or excluded, by the contract governing the day.';

-- Name: COLUMN turbine_day_category.contract; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_day_category.contract IS 'That contract''s name.';

-- Name: turbine_version; Type: TABLE; Schema: public

CREATE TABLE public.turbine_version (
    turbine_id text NOT NULL,
    valid_from timestamp with time zone NOT NULL,
    valid_to timestamp with time zone,
    farm_id text NOT NULL,
    shard_name text NOT NULL,
    cadence_seconds integer NOT NULL,
    commissioned_at timestamp with time zone,
    decommissioned_at timestamp with time zone,
    apply_id bigint NOT NULL,
    CONSTRAINT turbine_version_cadence_seconds_check CHECK ((cadence_seconds > 0)),
    CONSTRAINT turbine_version_check CHECK (((valid_to IS NULL) OR (valid_to > valid_from)))
);

-- Name: TABLE turbine_version; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_version IS 'Versions of a turbine''s farm, shard, cadence and service interval, each in force over [valid_from, valid_to). A day''s expected count is cut at the instants its versions change.';

-- Name: COLUMN turbine_version.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.turbine_id IS 'The turbine (turbine.id).';

-- Name: COLUMN turbine_version.valid_from; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.valid_from IS 'The instant this version starts (-infinity: since before the registry kept versions).';

-- Name: COLUMN turbine_version.valid_to; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.valid_to IS 'The instant the next version starts; NULL = the version in force.';

-- Name: COLUMN turbine_version.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.farm_id IS 'The farm it belonged to.';

-- Name: COLUMN turbine_version.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.shard_name IS 'The shard that held its readings.';

-- Name: COLUMN turbine_version.cadence_seconds; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.cadence_seconds IS 'Seconds between readings: the slots of the windows that start in this version.';

-- Name: COLUMN turbine_version.commissioned_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.commissioned_at IS 'Start of service as this version recorded it (NULL = always). The service interval is the turbine''s life, not a fact of one period: a day is computed with the one in the version in force now (turbine.commissioned_at).';

-- Name: COLUMN turbine_version.decommissioned_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.decommissioned_at IS 'End of service as this version recorded it (NULL = in service).';

-- Name: COLUMN turbine_version.apply_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_version.apply_id IS 'The fleet apply that wrote it (fleet_apply.id).';

-- Name: turbine_history; Type: VIEW; Schema: public

CREATE VIEW public.turbine_history AS
 SELECT v.turbine_id,
    v.farm_id,
    v.shard_name,
    v.cadence_seconds,
    v.commissioned_at,
    v.decommissioned_at,
    v.valid_from,
    v.valid_to,
    a.fleet_hash,
    a.applied_by,
    a.applied_at
   FROM (public.turbine_version v
     JOIN public.fleet_apply a ON ((a.id = v.apply_id)));

-- Name: VIEW turbine_history; Type: COMMENT; Schema: public

COMMENT ON VIEW public.turbine_history IS 'What the registry said about each turbine over time: its farm, shard, cadence and service interval in force over [valid_from, valid_to) (valid_to NULL = now). Where was T at instant X: WHERE turbine_id = T AND valid_from <= X AND (valid_to IS NULL OR valid_to > X).';

-- Name: COLUMN turbine_history.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.turbine_id IS 'The turbine.';

-- Name: COLUMN turbine_history.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.farm_id IS 'The farm it belonged to.';

-- Name: COLUMN turbine_history.shard_name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.shard_name IS 'The shard that held its readings.';

-- Name: COLUMN turbine_history.cadence_seconds; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.cadence_seconds IS 'Seconds between readings under this version.';

-- Name: COLUMN turbine_history.commissioned_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.commissioned_at IS 'Start of service as this version recorded it (NULL = always).';

-- Name: COLUMN turbine_history.decommissioned_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.decommissioned_at IS 'End of service as this version recorded it (NULL = in service).';

-- Name: COLUMN turbine_history.valid_from; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.valid_from IS 'Start of the version; -infinity for the version made from the registry before it kept history.';

-- Name: COLUMN turbine_history.valid_to; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.valid_to IS 'Where the next version starts; NULL = in force now.';

-- Name: COLUMN turbine_history.fleet_hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.fleet_hash IS 'sha256 of the fleet file that wrote the version.';

-- Name: COLUMN turbine_history.applied_by; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.applied_by IS 'The database user who applied it.';

-- Name: COLUMN turbine_history.applied_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_history.applied_at IS 'When the apply that wrote it committed.';

-- Name: turbine_model; Type: TABLE; Schema: public

CREATE TABLE public.turbine_model (
    id bigint NOT NULL,
    hash text NOT NULL,
    name text NOT NULL,
    wind_ms real[] NOT NULL,
    power_kw real[] NOT NULL,
    curve_lut double precision[] GENERATED ALWAYS AS (public.model_curve_lut(wind_ms, power_kw)) STORED,
    CONSTRAINT turbine_model_check CHECK (((cardinality(wind_ms) = cardinality(power_kw)) AND (cardinality(wind_ms) >= 2)))
);

-- Name: TABLE turbine_model; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_model IS 'Turbine models and their power curves as fleet files give them (models:), one row per distinct content; farm_version.model_id names the model of a farm''s turbines.';

-- Name: COLUMN turbine_model.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_model.id IS 'Identity; farm_version.model_id names it.';

-- Name: COLUMN turbine_model.hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_model.hash IS 'sha256 of the model''s canonical form: the same content is the same row.';

-- Name: COLUMN turbine_model.name; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_model.name IS 'The model''s name in the fleet file.';

-- Name: COLUMN turbine_model.wind_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_model.wind_ms IS 'The curve''s wind speeds, ascending (m/s).';

-- Name: COLUMN turbine_model.power_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_model.power_kw IS 'The power at each wind speed (kW); linear between points, 0 outside [first, last].';

-- Name: COLUMN turbine_model.curve_lut; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_model.curve_lut IS 'The curve sampled every 0.01 m/s from 0 to 30 m/s (model_curve_lut; 3,001 kW values): the window statement''s curve argument, read by the shard''s curve_kw at the reading''s wind rounded to 0.01 m/s.';

-- Name: turbine_model_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.turbine_model ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.turbine_model_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: turbine_move; Type: TABLE; Schema: public

CREATE TABLE public.turbine_move (
    id bigint NOT NULL,
    turbine_id text NOT NULL,
    farm_id text NOT NULL,
    from_shard text NOT NULL,
    to_shard text NOT NULL,
    state text DEFAULT 'copying'::text NOT NULL,
    apply_id bigint NOT NULL,
    requested_at timestamp with time zone NOT NULL,
    first_day date,
    days_total integer DEFAULT 0 NOT NULL,
    days_copied integer DEFAULT 0 NOT NULL,
    rows_copied bigint DEFAULT 0 NOT NULL,
    switched_at timestamp with time zone,
    fence_snapshot text,
    rows_caught_up bigint,
    rows_verified bigint,
    rows_deleted bigint,
    updated_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    recompute_queued_at timestamp with time zone,
    last_error text,
    CONSTRAINT turbine_move_check CHECK ((from_shard <> to_shard)),
    CONSTRAINT turbine_move_state_check CHECK ((state = ANY (ARRAY['copying'::text, 'switched'::text, 'fenced'::text, 'verified'::text, 'done'::text])))
);

-- Name: TABLE turbine_move; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_move IS 'Moves of a turbine''s readings between shards, one row each, with the step reached (orchestrator fleet moves). At most one unfinished move per turbine.';

-- Name: COLUMN turbine_move.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.id IS 'The move (orchestrator fleet moves lists it; the move_turbine job''s args name it).';

-- Name: COLUMN turbine_move.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.turbine_id IS 'The turbine whose readings move.';

-- Name: COLUMN turbine_move.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.farm_id IS 'Its farm (whose days are recomputed when the farm''s last move ends).';

-- Name: COLUMN turbine_move.from_shard; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.from_shard IS 'The shard that held its readings.';

-- Name: COLUMN turbine_move.to_shard; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.to_shard IS 'The shard that holds them once the move switched.';

-- Name: COLUMN turbine_move.state; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.state IS 'copying, switched, fenced, verified or done: the last step committed (see internal/move).';

-- Name: COLUMN turbine_move.apply_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.apply_id IS 'The fleet apply that asked for it (fleet_apply.id); the turbine_version of the new shard names it too.';

-- Name: COLUMN turbine_move.requested_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.requested_at IS 'When the fleet apply asked for the move.';

-- Name: COLUMN turbine_move.first_day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.first_day IS 'The first UTC day (readings partition) of the turbine on the old shard when the copy began.';

-- Name: COLUMN turbine_move.days_total; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.days_total IS 'UTC days of readings to copy.';

-- Name: COLUMN turbine_move.days_copied; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.days_copied IS 'Of them, how many are copied (the copy resumes after them).';

-- Name: COLUMN turbine_move.rows_copied; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.rows_copied IS 'Readings inserted on the new shard by the first copy.';

-- Name: COLUMN turbine_move.switched_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.switched_at IS 'When ingest''s routing and the rollups switched to the new shard (the new turbine_version starts here).';

-- Name: COLUMN turbine_move.fence_snapshot; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.fence_snapshot IS 'pg_current_snapshot() of the old shard just after its fence committed: the move waits for its in-progress transactions.';

-- Name: COLUMN turbine_move.rows_caught_up; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.rows_caught_up IS 'Readings that reached the old shard after the first copy, copied by the second.';

-- Name: COLUMN turbine_move.rows_verified; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.rows_verified IS 'Readings of the old shard each found, equal, on the new shard.';

-- Name: COLUMN turbine_move.rows_deleted; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.rows_deleted IS 'Readings deleted from the old shard.';

-- Name: COLUMN turbine_move.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.updated_at IS 'When a step last wrote the row.';

-- Name: COLUMN turbine_move.finished_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.finished_at IS 'When the move ended (state done).';

-- Name: COLUMN turbine_move.recompute_queued_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.recompute_queued_at IS 'When the recompute of the farm''s days was queued: by the last of the farm''s moves to finish, for all of them (a batch of moves costs one recompute per farm-day and shard).';

-- Name: COLUMN turbine_move.last_error; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_move.last_error IS 'The last step''s error, if it failed (the job retries).';

-- Name: turbine_move_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.turbine_move ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.turbine_move_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: turbine_stall; Type: TABLE; Schema: public

CREATE TABLE public.turbine_stall (
    id bigint NOT NULL,
    farm_id text NOT NULL,
    turbine_id text NOT NULL,
    first_window timestamp with time zone NOT NULL,
    last_window timestamp with time zone NOT NULL,
    windows integer DEFAULT 1 NOT NULL,
    raised_at timestamp with time zone NOT NULL,
    cleared_at timestamp with time zone,
    cleared_window timestamp with time zone,
    detail jsonb NOT NULL,
    message text NOT NULL,
    found_late boolean DEFAULT false NOT NULL,
    found_at timestamp with time zone,
    first_window_end timestamp with time zone,
    CONSTRAINT turbine_stall_windows_check CHECK ((windows > 0))
);

-- Name: TABLE turbine_stall; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_stall IS 'Stalled turbines: available, producing nothing, while the farm''s wind is in range and its neighbours produce (stall_watch). One row per stall: a run of a turbine''s stalled windows (turbine_stall_window) with no reading over the power floor between them, open until the turbine produces again; kept after it clears. Written by the stalled-turbine watcher, at each window''s publication and after each correction (judge_stalls).';

-- Name: COLUMN turbine_stall.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.id IS 'Identity.';

-- Name: COLUMN turbine_stall.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.farm_id IS 'The farm (farm.id).';

-- Name: COLUMN turbine_stall.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.turbine_id IS 'The stalled turbine.';

-- Name: COLUMN turbine_stall.first_window; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.first_window IS 'Start of the first window it was stalled in (turbine_stall_window).';

-- Name: COLUMN turbine_stall.last_window; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.last_window IS 'Start of the latest window it was stalled in (turbine_stall_window).';

-- Name: COLUMN turbine_stall.windows; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.windows IS 'How many windows it was judged stalled in (its turbine_stall_window rows).';

-- Name: COLUMN turbine_stall.raised_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.raised_at IS 'When the first of its windows was judged stalled (the clock of the process judging).';

-- Name: COLUMN turbine_stall.cleared_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.cleared_at IS 'When it was cleared (the turbine produced again); NULL while open.';

-- Name: COLUMN turbine_stall.cleared_window; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.cleared_window IS 'Start of the first window after its last in which the turbine produced (a reading over the power floor), whenever that reading arrived.';

-- Name: COLUMN turbine_stall.detail; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.detail IS 'What the latest judgement measured: the turbine''s highest power and mean wind, the farm''s median wind, how many other turbines produced of how many, the thresholds.';

-- Name: COLUMN turbine_stall.message; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.message IS 'One line for an operator.';

-- Name: COLUMN turbine_stall.found_late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.found_late IS 'Its first window was judged stalled by a correction (turbine_stall_window.late): the readings showing it arrived after the window was published.';

-- Name: COLUMN turbine_stall.found_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.found_at IS 'When its first window was judged stalled (raised_at, unless a window found later moved first_window back). How late it was found: found_at - first_window_end.';

-- Name: COLUMN turbine_stall.first_window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall.first_window_end IS 'End of its first window.';

-- Name: turbine_stall_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.turbine_stall ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.turbine_stall_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: turbine_stall_window; Type: TABLE; Schema: public

CREATE TABLE public.turbine_stall_window (
    turbine_id text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    window_end timestamp with time zone NOT NULL,
    judged_at timestamp with time zone NOT NULL,
    late boolean NOT NULL,
    CONSTRAINT turbine_stall_window_check CHECK ((window_end > window_start))
);

-- Name: TABLE turbine_stall_window; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_stall_window IS 'The windows a turbine was judged stalled in (StallJudge), one row each: the stall holding it is the turbine''s turbine_stall whose [first_window, last_window] holds window_start. Written by the stalled-turbine watcher; a window judged stalled again is left as it is, one judged not stalled is deleted.';

-- Name: COLUMN turbine_stall_window.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall_window.turbine_id IS 'The turbine.';

-- Name: COLUMN turbine_stall_window.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall_window.window_start IS 'Start of the window it was stalled in.';

-- Name: COLUMN turbine_stall_window.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall_window.window_end IS 'End of that window.';

-- Name: COLUMN turbine_stall_window.judged_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall_window.judged_at IS 'When the watcher first judged it stalled in the window (the clock of the process judging).';

-- Name: COLUMN turbine_stall_window.late; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_stall_window.late IS 'Judged by a correction (judge_stalls: its readings arrived after the window was published), not at the window''s publication.';

-- Name: fleet_apply id; Type: DEFAULT; Schema: public

ALTER TABLE ONLY public.fleet_apply ALTER COLUMN id SET DEFAULT nextval('public.fleet_apply_id_seq'::regclass);

-- Name: river_job id; Type: DEFAULT; Schema: public

ALTER TABLE ONLY public.river_job ALTER COLUMN id SET DEFAULT nextval('public.river_job_id_seq'::regclass);

-- Name: river_notification id; Type: DEFAULT; Schema: public

ALTER TABLE ONLY public.river_notification ALTER COLUMN id SET DEFAULT nextval('public.river_notification_id_seq'::regclass);

-- Name: alert_count alert_count_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.alert_count
    ADD CONSTRAINT alert_count_pkey PRIMARY KEY (farm_id, kind);

-- Name: alert alert_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.alert
    ADD CONSTRAINT alert_pkey PRIMARY KEY (kind, farm_id, scope, period_start);

-- Name: availability_category availability_category_code_key; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.availability_category
    ADD CONSTRAINT availability_category_code_key UNIQUE (code);

-- Name: availability_category availability_category_default_priority_key; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.availability_category
    ADD CONSTRAINT availability_category_default_priority_key UNIQUE (default_priority);

-- Name: availability_category availability_category_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.availability_category
    ADD CONSTRAINT availability_category_pkey PRIMARY KEY (id);

-- Name: availability_contract availability_contract_hash_key; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.availability_contract
    ADD CONSTRAINT availability_contract_hash_key UNIQUE (hash);

-- Name: availability_contract availability_contract_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.availability_contract
    ADD CONSTRAINT availability_contract_pkey PRIMARY KEY (id);

-- Name: dirty_mark_announced dirty_mark_announced_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.dirty_mark_announced
    ADD CONSTRAINT dirty_mark_announced_pkey PRIMARY KEY (farm_id, day, shard_name, xact);

-- Name: dirty_mark_settling dirty_mark_settling_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.dirty_mark_settling
    ADD CONSTRAINT dirty_mark_settling_pkey PRIMARY KEY (farm_id, day, shard_name);

-- Name: farm_day_acceptance farm_day_acceptance_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_day_acceptance
    ADD CONSTRAINT farm_day_acceptance_pkey PRIMARY KEY (id);

-- Name: farm_day_acceptance farm_day_acceptance_text; Type: CHECK CONSTRAINT; Schema: public

ALTER TABLE public.farm_day_acceptance
    ADD CONSTRAINT farm_day_acceptance_text CHECK ((public.operator_text_ok(note) AND public.operator_text_ok(accepted_by))) NOT VALID;

-- Name: CONSTRAINT farm_day_acceptance_text ON farm_day_acceptance; Type: COMMENT; Schema: public

COMMENT ON CONSTRAINT farm_day_acceptance_text ON public.farm_day_acceptance IS 'The note and who accepted are operator text (operator_text_ok): the report prints them in why.';

-- Name: farm farm_id_bounded; Type: CHECK CONSTRAINT; Schema: public

ALTER TABLE public.farm
    ADD CONSTRAINT farm_id_bounded CHECK (((char_length(id) <= 111) AND (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]*$'::text))) NOT VALID;

-- Name: CONSTRAINT farm_id_bounded ON farm; Type: COMMENT; Schema: public

COMMENT ON CONSTRAINT farm_id_bounded ON public.farm IS 'At most 111 characters (River periodic job id rollup_schedule_<id>, under 128), letters, digits, . _ - (internal/fleet MaxFarmID).';

-- Name: farm farm_name_bounded; Type: CHECK CONSTRAINT; Schema: public

ALTER TABLE public.farm
    ADD CONSTRAINT farm_name_bounded CHECK (((name = id) OR (((char_length(name) >= 1) AND (char_length(name) <= 100)) AND (name !~ '[\u0001-\u001f\u007f-\u009f]'::text)))) NOT VALID;

-- Name: CONSTRAINT farm_name_bounded ON farm; Type: COMMENT; Schema: public

COMMENT ON CONSTRAINT farm_name_bounded ON public.farm IS 'A display name of 1 to 100 characters without control characters (internal/fleet MaxFarmName), or the farm id when the fleet file gives no name.';

-- Name: farm farm_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm
    ADD CONSTRAINT farm_pkey PRIMARY KEY (id);

-- Name: farm_version farm_version_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_version
    ADD CONSTRAINT farm_version_pkey PRIMARY KEY (farm_id, first_day);

-- Name: farm_window_part farm_window_part_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_window_part
    ADD CONSTRAINT farm_window_part_pkey PRIMARY KEY (farm_id, window_start, shard_name);

-- Name: farm_window farm_window_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_window
    ADD CONSTRAINT farm_window_pkey PRIMARY KEY (farm_id, window_start, path);

-- Name: fleet_apply fleet_apply_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.fleet_apply
    ADD CONSTRAINT fleet_apply_pkey PRIMARY KEY (id);

-- Name: fleet_rules fleet_rules_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.fleet_rules
    ADD CONSTRAINT fleet_rules_pkey PRIMARY KEY (id);

-- Name: goose_db_version goose_db_version_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.goose_db_version
    ADD CONSTRAINT goose_db_version_pkey PRIMARY KEY (id);

-- Name: ingest_reject ingest_reject_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.ingest_reject
    ADD CONSTRAINT ingest_reject_pkey PRIMARY KEY (id);

-- Name: ingest_reject_summary ingest_reject_summary_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.ingest_reject_summary
    ADD CONSTRAINT ingest_reject_summary_pkey PRIMARY KEY (id);

-- Name: operator_event operator_event_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.operator_event
    ADD CONSTRAINT operator_event_pkey PRIMARY KEY (id);

-- Name: reconciliation reconciliation_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.reconciliation
    ADD CONSTRAINT reconciliation_pkey PRIMARY KEY (farm_id, scope, period_start);

-- Name: river_job river_job_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.river_job
    ADD CONSTRAINT river_job_pkey PRIMARY KEY (id);

-- Name: river_leader river_leader_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.river_leader
    ADD CONSTRAINT river_leader_pkey PRIMARY KEY (name);

-- Name: river_migration river_migration_pkey1; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.river_migration
    ADD CONSTRAINT river_migration_pkey1 PRIMARY KEY (line, version);

-- Name: river_notification river_notification_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.river_notification
    ADD CONSTRAINT river_notification_pkey PRIMARY KEY (id);

-- Name: river_queue river_queue_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.river_queue
    ADD CONSTRAINT river_queue_pkey PRIMARY KEY (name);

-- Name: rollup_pending rollup_pending_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.rollup_pending
    ADD CONSTRAINT rollup_pending_pkey PRIMARY KEY (farm_id, day, shard_name);

-- Name: shard_drain shard_drain_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.shard_drain
    ADD CONSTRAINT shard_drain_pkey PRIMARY KEY (shard_name);

-- Name: shard shard_name_bounded; Type: CHECK CONSTRAINT; Schema: public

ALTER TABLE public.shard
    ADD CONSTRAINT shard_name_bounded CHECK (((char_length(name) <= 57) AND (name ~ '^[a-z0-9]+([_-][a-z0-9]+)*$'::text))) NOT VALID;

-- Name: CONSTRAINT shard_name_bounded ON shard; Type: COMMENT; Schema: public

COMMENT ON CONSTRAINT shard_name_bounded ON public.shard IS 'At most 57 characters (River queue rollup_<name>, 64), lower-case letters and digits separated by single _ or - (internal/fleet MaxShardName).';

-- Name: shard shard_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.shard
    ADD CONSTRAINT shard_pkey PRIMARY KEY (name);

-- Name: stall_watch stall_watch_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.stall_watch
    ADD CONSTRAINT stall_watch_pkey PRIMARY KEY (id);

-- Name: turbine_day turbine_day_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_day
    ADD CONSTRAINT turbine_day_pkey PRIMARY KEY (turbine_id, day);

-- Name: turbine turbine_id_bounded; Type: CHECK CONSTRAINT; Schema: public

ALTER TABLE public.turbine
    ADD CONSTRAINT turbine_id_bounded CHECK (((NOT in_fleet_file) OR ((char_length(id) <= 111) AND (id ~ '^[A-Za-z0-9][A-Za-z0-9._-]*$'::text)))) NOT VALID;

-- Name: CONSTRAINT turbine_id_bounded ON turbine; Type: COMMENT; Schema: public

COMMENT ON CONSTRAINT turbine_id_bounded ON public.turbine IS 'A turbine in the fleet file has an id of at most 111 characters, letters, digits, . _ - (internal/fleet MaxTurbineID); a retired one may keep an older id.';

-- Name: turbine_model turbine_model_hash_key; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_model
    ADD CONSTRAINT turbine_model_hash_key UNIQUE (hash);

-- Name: turbine_model turbine_model_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_model
    ADD CONSTRAINT turbine_model_pkey PRIMARY KEY (id);

-- Name: turbine_move turbine_move_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_move
    ADD CONSTRAINT turbine_move_pkey PRIMARY KEY (id);

-- Name: turbine turbine_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine
    ADD CONSTRAINT turbine_pkey PRIMARY KEY (id);

-- Name: turbine_stall turbine_stall_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_stall
    ADD CONSTRAINT turbine_stall_pkey PRIMARY KEY (id);

-- Name: turbine_stall_window turbine_stall_window_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_stall_window
    ADD CONSTRAINT turbine_stall_window_pkey PRIMARY KEY (turbine_id, window_start);

-- Name: turbine_version turbine_version_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_version
    ADD CONSTRAINT turbine_version_pkey PRIMARY KEY (turbine_id, valid_from);

-- Name: alert_farm_day_idx; Type: INDEX; Schema: public

CREATE INDEX alert_farm_day_idx ON public.alert USING btree (farm_id, day);

-- Name: alert_farm_kind_raised_idx; Type: INDEX; Schema: public

CREATE INDEX alert_farm_kind_raised_idx ON public.alert USING btree (farm_id, kind, raised_at);

-- Name: alert_raised_idx; Type: INDEX; Schema: public

CREATE INDEX alert_raised_idx ON public.alert USING btree (raised_at);

-- Name: dirty_mark_announced_shard; Type: INDEX; Schema: public

CREATE INDEX dirty_mark_announced_shard ON public.dirty_mark_announced USING btree (shard_name, xact);

-- Name: farm_day_acceptance_day_idx; Type: INDEX; Schema: public

CREATE INDEX farm_day_acceptance_day_idx ON public.farm_day_acceptance USING btree (farm_id, day, accepted_at DESC);

-- Name: farm_version_current_idx; Type: INDEX; Schema: public

CREATE UNIQUE INDEX farm_version_current_idx ON public.farm_version USING btree (farm_id) WHERE (valid_to IS NULL);

-- Name: farm_window_day_idx; Type: INDEX; Schema: public

CREATE INDEX farm_window_day_idx ON public.farm_window USING btree (farm_id, day);

-- Name: farm_window_part_day_idx; Type: INDEX; Schema: public

CREATE INDEX farm_window_part_day_idx ON public.farm_window_part USING btree (farm_id, day);

-- Name: ingest_reject_rejected_at_idx; Type: INDEX; Schema: public

CREATE INDEX ingest_reject_rejected_at_idx ON public.ingest_reject USING btree (rejected_at);

-- Name: ingest_reject_summary_rejected_at_idx; Type: INDEX; Schema: public

CREATE INDEX ingest_reject_summary_rejected_at_idx ON public.ingest_reject_summary USING btree (rejected_at);

-- Name: operator_event_farm_idx; Type: INDEX; Schema: public

CREATE INDEX operator_event_farm_idx ON public.operator_event USING btree (farm_id, from_at);

-- Name: reconciliation_day_idx; Type: INDEX; Schema: public

CREATE INDEX reconciliation_day_idx ON public.reconciliation USING btree (farm_id, day);

-- Name: river_job_args_index; Type: INDEX; Schema: public

CREATE INDEX river_job_args_index ON public.river_job USING gin (args);

-- Name: river_job_kind; Type: INDEX; Schema: public

CREATE INDEX river_job_kind ON public.river_job USING btree (kind);

-- Name: river_job_metadata_index; Type: INDEX; Schema: public

CREATE INDEX river_job_metadata_index ON public.river_job USING gin (metadata);

-- Name: river_job_prioritized_fetching_index; Type: INDEX; Schema: public

CREATE INDEX river_job_prioritized_fetching_index ON public.river_job USING btree (state, queue, priority, scheduled_at, id);

-- Name: river_job_state_and_finalized_at_index; Type: INDEX; Schema: public

CREATE INDEX river_job_state_and_finalized_at_index ON public.river_job USING btree (state, finalized_at) WHERE (finalized_at IS NOT NULL);

-- Name: river_job_unique_idx; Type: INDEX; Schema: public

CREATE UNIQUE INDEX river_job_unique_idx ON public.river_job USING btree (unique_key) WHERE ((unique_key IS NOT NULL) AND (unique_states IS NOT NULL) AND public.river_job_state_in_bitmask(unique_states, state));

-- Name: river_notification_created_at_idx; Type: INDEX; Schema: public

CREATE INDEX river_notification_created_at_idx ON public.river_notification USING btree (created_at);

-- Name: river_notification_topic_id_idx; Type: INDEX; Schema: public

CREATE INDEX river_notification_topic_id_idx ON public.river_notification USING btree (topic, id);

-- Name: turbine_day_farm_day_idx; Type: INDEX; Schema: public

CREATE INDEX turbine_day_farm_day_idx ON public.turbine_day USING btree (farm_id, day);

-- Name: turbine_farm_idx; Type: INDEX; Schema: public

CREATE INDEX turbine_farm_idx ON public.turbine USING btree (farm_id, shard_name, id);

-- Name: turbine_move_one_open; Type: INDEX; Schema: public

CREATE UNIQUE INDEX turbine_move_one_open ON public.turbine_move USING btree (turbine_id) WHERE (state <> 'done'::text);

-- Name: turbine_stall_farm_idx; Type: INDEX; Schema: public

CREATE INDEX turbine_stall_farm_idx ON public.turbine_stall USING btree (farm_id, raised_at);

-- Name: turbine_stall_open_idx; Type: INDEX; Schema: public

CREATE UNIQUE INDEX turbine_stall_open_idx ON public.turbine_stall USING btree (turbine_id) WHERE (cleared_at IS NULL);

-- Name: turbine_stall_turbine_idx; Type: INDEX; Schema: public

CREATE INDEX turbine_stall_turbine_idx ON public.turbine_stall USING btree (turbine_id, first_window);

-- Name: turbine_version_current_idx; Type: INDEX; Schema: public

CREATE UNIQUE INDEX turbine_version_current_idx ON public.turbine_version USING btree (turbine_id) WHERE (valid_to IS NULL);

-- Name: turbine_version_farm_idx; Type: INDEX; Schema: public

CREATE INDEX turbine_version_farm_idx ON public.turbine_version USING btree (farm_id, shard_name, valid_from);

-- Name: alert alert_count_deleted; Type: TRIGGER; Schema: public

CREATE TRIGGER alert_count_deleted AFTER DELETE ON public.alert REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION public.alert_count_deleted();

-- Name: alert alert_count_inserted; Type: TRIGGER; Schema: public

CREATE TRIGGER alert_count_inserted AFTER INSERT ON public.alert REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION public.alert_count_inserted();

-- Name: alert alert_count_truncated; Type: TRIGGER; Schema: public

CREATE TRIGGER alert_count_truncated AFTER TRUNCATE ON public.alert FOR EACH STATEMENT EXECUTE FUNCTION public.alert_count_truncated();

-- Name: farm_day_acceptance farm_day_acceptance_guard; Type: TRIGGER; Schema: public

CREATE TRIGGER farm_day_acceptance_guard BEFORE DELETE OR UPDATE ON public.farm_day_acceptance FOR EACH ROW EXECUTE FUNCTION public.farm_day_acceptance_guard();

ALTER TABLE public.farm_day_acceptance ENABLE ALWAYS TRIGGER farm_day_acceptance_guard;

-- Name: TRIGGER farm_day_acceptance_guard ON farm_day_acceptance; Type: COMMENT; Schema: public

COMMENT ON TRIGGER farm_day_acceptance_guard ON public.farm_day_acceptance IS 'Refuses a delete and an edit of an acceptance (farm_day_acceptance_guard).';

-- Name: farm_day_acceptance farm_day_acceptance_no_truncate; Type: TRIGGER; Schema: public

CREATE TRIGGER farm_day_acceptance_no_truncate BEFORE TRUNCATE ON public.farm_day_acceptance FOR EACH STATEMENT EXECUTE FUNCTION public.audit_trail_truncate_guard();

ALTER TABLE public.farm_day_acceptance ENABLE ALWAYS TRIGGER farm_day_acceptance_no_truncate;

-- Name: TRIGGER farm_day_acceptance_no_truncate ON farm_day_acceptance; Type: COMMENT; Schema: public

COMMENT ON TRIGGER farm_day_acceptance_no_truncate ON public.farm_day_acceptance IS 'Refuses TRUNCATE of the acceptances (audit_trail_truncate_guard).';

-- Name: operator_event operator_event_guard; Type: TRIGGER; Schema: public

CREATE TRIGGER operator_event_guard BEFORE DELETE OR UPDATE ON public.operator_event FOR EACH ROW EXECUTE FUNCTION public.operator_event_guard();

ALTER TABLE public.operator_event ENABLE ALWAYS TRIGGER operator_event_guard;

-- Name: TRIGGER operator_event_guard ON operator_event; Type: COMMENT; Schema: public

COMMENT ON TRIGGER operator_event_guard ON public.operator_event IS 'Refuses a delete, an edit and a second void of an event (operator_event_guard).';

-- Name: operator_event operator_event_no_truncate; Type: TRIGGER; Schema: public

CREATE TRIGGER operator_event_no_truncate BEFORE TRUNCATE ON public.operator_event FOR EACH STATEMENT EXECUTE FUNCTION public.audit_trail_truncate_guard();

ALTER TABLE public.operator_event ENABLE ALWAYS TRIGGER operator_event_no_truncate;

-- Name: TRIGGER operator_event_no_truncate ON operator_event; Type: COMMENT; Schema: public

COMMENT ON TRIGGER operator_event_no_truncate ON public.operator_event IS 'Refuses TRUNCATE of the events (audit_trail_truncate_guard): a mistaken event is voided.';

-- Name: operator_event operator_event_text; Type: TRIGGER; Schema: public

CREATE TRIGGER operator_event_text BEFORE INSERT OR UPDATE ON public.operator_event FOR EACH ROW EXECUTE FUNCTION public.operator_event_text();

ALTER TABLE public.operator_event ENABLE ALWAYS TRIGGER operator_event_text;

-- Name: TRIGGER operator_event_text ON operator_event; Type: COMMENT; Schema: public

COMMENT ON TRIGGER operator_event_text ON public.operator_event IS 'Refuses an event or a void whose words are not operator text (operator_event_text).';

-- Name: turbine_day turbine_day_closed_at; Type: TRIGGER; Schema: public

CREATE TRIGGER turbine_day_closed_at BEFORE INSERT ON public.turbine_day FOR EACH ROW EXECUTE FUNCTION public.turbine_day_closed_at_default();

-- Name: alert alert_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.alert
    ADD CONSTRAINT alert_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: dirty_mark_announced dirty_mark_announced_shard_name_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.dirty_mark_announced
    ADD CONSTRAINT dirty_mark_announced_shard_name_fkey FOREIGN KEY (shard_name) REFERENCES public.shard(name) ON DELETE CASCADE;

-- Name: dirty_mark_settling dirty_mark_settling_shard_name_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.dirty_mark_settling
    ADD CONSTRAINT dirty_mark_settling_shard_name_fkey FOREIGN KEY (shard_name) REFERENCES public.shard(name) ON DELETE CASCADE;

-- Name: farm_day_acceptance farm_day_acceptance_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_day_acceptance
    ADD CONSTRAINT farm_day_acceptance_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: farm_version farm_version_apply_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_version
    ADD CONSTRAINT farm_version_apply_id_fkey FOREIGN KEY (apply_id) REFERENCES public.fleet_apply(id);

-- Name: farm_version farm_version_contract_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_version
    ADD CONSTRAINT farm_version_contract_id_fkey FOREIGN KEY (contract_id) REFERENCES public.availability_contract(id);

-- Name: farm_version farm_version_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_version
    ADD CONSTRAINT farm_version_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: farm_version farm_version_model_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_version
    ADD CONSTRAINT farm_version_model_id_fkey FOREIGN KEY (model_id) REFERENCES public.turbine_model(id);

-- Name: farm_window farm_window_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_window
    ADD CONSTRAINT farm_window_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: farm_window_part farm_window_part_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_window_part
    ADD CONSTRAINT farm_window_part_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: operator_event operator_event_category_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.operator_event
    ADD CONSTRAINT operator_event_category_id_fkey FOREIGN KEY (category_id) REFERENCES public.availability_category(id);

-- Name: operator_event operator_event_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.operator_event
    ADD CONSTRAINT operator_event_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: reconciliation reconciliation_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.reconciliation
    ADD CONSTRAINT reconciliation_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: shard_drain shard_drain_shard_name_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.shard_drain
    ADD CONSTRAINT shard_drain_shard_name_fkey FOREIGN KEY (shard_name) REFERENCES public.shard(name) ON DELETE CASCADE;

-- Name: turbine turbine_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine
    ADD CONSTRAINT turbine_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: turbine_move turbine_move_apply_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_move
    ADD CONSTRAINT turbine_move_apply_id_fkey FOREIGN KEY (apply_id) REFERENCES public.fleet_apply(id);

-- Name: turbine_move turbine_move_turbine_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_move
    ADD CONSTRAINT turbine_move_turbine_id_fkey FOREIGN KEY (turbine_id) REFERENCES public.turbine(id);

-- Name: turbine turbine_shard_name_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine
    ADD CONSTRAINT turbine_shard_name_fkey FOREIGN KEY (shard_name) REFERENCES public.shard(name);

-- Name: turbine_stall turbine_stall_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_stall
    ADD CONSTRAINT turbine_stall_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: turbine_version turbine_version_apply_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_version
    ADD CONSTRAINT turbine_version_apply_id_fkey FOREIGN KEY (apply_id) REFERENCES public.fleet_apply(id);

-- Name: turbine_version turbine_version_farm_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_version
    ADD CONSTRAINT turbine_version_farm_id_fkey FOREIGN KEY (farm_id) REFERENCES public.farm(id);

-- Name: turbine_version turbine_version_shard_name_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_version
    ADD CONSTRAINT turbine_version_shard_name_fkey FOREIGN KEY (shard_name) REFERENCES public.shard(name);

-- Name: turbine_version turbine_version_turbine_id_fkey; Type: FK CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_version
    ADD CONSTRAINT turbine_version_turbine_id_fkey FOREIGN KEY (turbine_id) REFERENCES public.turbine(id);

-- Name: FUNCTION pg_advisory_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock_all(); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;

-- Name: TABLE availability_contract; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.availability_contract TO galewatch_reporting;

-- Name: TABLE farm_version; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_version TO galewatch_reporting;

-- Name: FUNCTION report_monthly_availability(p_farm text, p_month text, p_now timestamp with time zone); Type: ACL; Schema: public

GRANT ALL ON FUNCTION public.report_monthly_availability(p_farm text, p_month text, p_now timestamp with time zone) TO galewatch_reporting;

-- Name: FUNCTION river_job_not_started(p_job_id bigint); Type: ACL; Schema: public

REVOKE ALL ON FUNCTION public.river_job_not_started(p_job_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.river_job_not_started(p_job_id bigint) TO galewatch_reporting;

-- Name: FUNCTION river_job_rescue_abandoned(p_now timestamp with time zone, p_running_for_s integer); Type: ACL; Schema: public

REVOKE ALL ON FUNCTION public.river_job_rescue_abandoned(p_now timestamp with time zone, p_running_for_s integer) FROM PUBLIC;

-- Name: FUNCTION river_job_unfinished(p_job_id bigint); Type: ACL; Schema: public

REVOKE ALL ON FUNCTION public.river_job_unfinished(p_job_id bigint) FROM PUBLIC;
GRANT ALL ON FUNCTION public.river_job_unfinished(p_job_id bigint) TO galewatch_reporting;

-- Name: FUNCTION rollup_day_failure(p_farm text, p_day date); Type: ACL; Schema: public

REVOKE ALL ON FUNCTION public.rollup_day_failure(p_farm text, p_day date) FROM PUBLIC;
GRANT ALL ON FUNCTION public.rollup_day_failure(p_farm text, p_day date) TO galewatch_reporting;

-- Name: FUNCTION rollup_day_unfinished(p_farm text, p_day date); Type: ACL; Schema: public

REVOKE ALL ON FUNCTION public.rollup_day_unfinished(p_farm text, p_day date) FROM PUBLIC;
GRANT ALL ON FUNCTION public.rollup_day_unfinished(p_farm text, p_day date) TO galewatch_reporting;

-- Name: TABLE alert; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.alert TO galewatch_reporting;

-- Name: TABLE alert_count; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.alert_count TO galewatch_reporting;

-- Name: TABLE availability_category; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.availability_category TO galewatch_reporting;

-- Name: TABLE farm_window; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_window TO galewatch_reporting;

-- Name: TABLE window_provenance; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.window_provenance TO galewatch_reporting;

-- Name: TABLE day_provenance; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.day_provenance TO galewatch_reporting;

-- Name: TABLE dirty_mark_announced; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.dirty_mark_announced TO galewatch_reporting;

-- Name: TABLE dirty_mark_settling; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.dirty_mark_settling TO galewatch_reporting;

-- Name: TABLE farm; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm TO galewatch_reporting;

-- Name: TABLE turbine_day; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_day TO galewatch_reporting;

-- Name: TABLE farm_day; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_day TO galewatch_reporting;

-- Name: TABLE farm_day_acceptance; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_day_acceptance TO galewatch_reporting;

-- Name: TABLE farm_day_contract; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_day_contract TO galewatch_reporting;

-- Name: TABLE farm_freshness; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_freshness TO galewatch_reporting;

-- Name: TABLE fleet_apply; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.fleet_apply TO galewatch_reporting;

-- Name: TABLE farm_history; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_history TO galewatch_reporting;

-- Name: TABLE farm_month; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_month TO galewatch_reporting;

-- Name: TABLE fleet_rules; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.fleet_rules TO galewatch_reporting;

-- Name: TABLE farm_rules; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_rules TO galewatch_reporting;

-- Name: TABLE farm_window_part; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.farm_window_part TO galewatch_reporting;

-- Name: COLUMN ingest_reject.id; Type: ACL; Schema: public

GRANT SELECT(id) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.source; Type: ACL; Schema: public

GRANT SELECT(source) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.line; Type: ACL; Schema: public

GRANT SELECT(line) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.reason; Type: ACL; Schema: public

GRANT SELECT(reason) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.rejected_at; Type: ACL; Schema: public

GRANT SELECT(rejected_at) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.raw_escaped; Type: ACL; Schema: public

GRANT SELECT(raw_escaped) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.raw_length; Type: ACL; Schema: public

GRANT SELECT(raw_length) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: COLUMN ingest_reject.kind; Type: ACL; Schema: public

GRANT SELECT(kind) ON TABLE public.ingest_reject TO galewatch_reporting;

-- Name: TABLE ingest_reject_summary; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.ingest_reject_summary TO galewatch_reporting;

-- Name: TABLE publish_lag; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.publish_lag TO galewatch_reporting;

-- Name: TABLE reconciliation; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.reconciliation TO galewatch_reporting;

-- Name: TABLE reconciliation_pm; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.reconciliation_pm TO galewatch_reporting;

-- Name: TABLE rollup_pending; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.rollup_pending TO galewatch_reporting;

-- Name: COLUMN shard.name; Type: ACL; Schema: public

GRANT SELECT(name) ON TABLE public.shard TO galewatch_reporting;

-- Name: COLUMN shard.database; Type: ACL; Schema: public

GRANT SELECT(database) ON TABLE public.shard TO galewatch_reporting;

-- Name: COLUMN shard.created_at; Type: ACL; Schema: public

GRANT SELECT(created_at) ON TABLE public.shard TO galewatch_reporting;

-- Name: COLUMN shard.updated_at; Type: ACL; Schema: public

GRANT SELECT(updated_at) ON TABLE public.shard TO galewatch_reporting;

-- Name: TABLE shard_drain; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.shard_drain TO galewatch_reporting;

-- Name: TABLE stall_watch; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.stall_watch TO galewatch_reporting;

-- Name: TABLE turbine; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine TO galewatch_reporting;

-- Name: TABLE turbine_day_category; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_day_category TO galewatch_reporting;

-- Name: TABLE turbine_version; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_version TO galewatch_reporting;

-- Name: TABLE turbine_history; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_history TO galewatch_reporting;

-- Name: TABLE turbine_model; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_model TO galewatch_reporting;

-- Name: TABLE turbine_move; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_move TO galewatch_reporting;

-- Name: TABLE turbine_stall; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_stall TO galewatch_reporting;

-- Name: TABLE turbine_stall_window; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_stall_window TO galewatch_reporting;
