-- +goose Up
-- The monthly availability report, defined once. The psql file
-- sql/reports/monthly_availability.sql calls this function with its psql
-- variables; `orchestrator report monthly` and the JSON API run that same
-- file (embedded, the variables bound as parameters); the reporting role
-- may call it directly.
--
-- One row per farm-local day of the month (scope 'day') and one month row
-- (scope 'month'). Counts are summed; availability (available / expected)
-- and completeness (received / expected) are computed here from the sums,
-- at read time, never by averaging daily rates.
--
-- turbines is how many turbines in service that day have rows, against
-- registered_turbines, how many the registry had in service (days only).
-- computed_at is the newest computation among a day's numbers;
-- complete_through the instant every reading stored before is counted
-- (rows: the oldest row's computation; windows: their earliest watermark).
--
-- A day's numbers are its turbine_day rows once the day has been rolled up
-- (source 'turbine_day', path 'final'); before that, the sum of its windows
-- as published so far (source 'farm_window': a window's final row when it
-- has one, else its fast row -- window_provenance's rule, read here only for
-- the month's days that have no turbine_day rows, since that view evaluates
-- its pending flag for every window of the farm's history).
--
-- A day is final when none of these holds it back (its `held_back` lists
-- the ones that do, in this order; `why` adds the details):
--   not ended          the farm-local day has not ended (p_now < its end).
--   no rollup          it has ended, turbines were in service, and it has no
--                      turbine_day rows yet.
--   turbines missing   fewer turbine rows of turbines in service that day
--                      than the registry has in service (a shard's rollup
--                      has not landed).
--   rolled up before the day closed
--                      a turbine row was computed before the day's end +
--                      the farm's allowed lateness (farm_rules). The mark
--                      rule (docs/dirty-marks.md) guarantees that a reading
--                      which wrote no mark committed before its window's
--                      end + allowed lateness, so a row computed after that
--                      instant counts every unmarked reading of the day.
--   readings arrived after the rollup
--                      readings were stored after the rows were computed:
--                      their dirty marks have been drained into a
--                      rollup_pending request whose job has not yet claimed
--                      it.
--   recompute pending  a rollup_day job of the day is queued or running
--                      (rollup_day_unfinished), or a request waits for a
--                      day without rows.
-- So "rolled up after its last accepted reading" is known from the control
-- database as: rows computed after the day closed, and no request or job
-- pending. What it cannot see: marks still on a shard, not yet drained
-- (the drain turns a mark into a request within a minute of the reading's
-- arrival; longer while that shard is unreachable).
--
-- The month is final when every day is. Its `why` names the days that hold
-- it back, per reason, as dates and ranges of dates.
--
-- p_now is the clock "not ended" is judged by (default: the transaction's
-- now()); tests inject it. Bad input is an error naming the parameter (in
-- the error's COLUMN field, which `internal/report` maps to its sentinel
-- errors), never an empty report.
-- +goose StatementBegin
CREATE FUNCTION report_monthly_availability(p_farm text, p_month text, p_now timestamptz DEFAULT now())
RETURNS TABLE (
    farm_id             text,
    month               text,
    scope               text,
    day                 date,
    expected            bigint,
    received            bigint,
    available           bigint,
    availability        numeric,
    completeness        numeric,
    turbines            integer,
    registered_turbines integer,
    source              text,
    path                text,
    computed_at         timestamptz,
    complete_through    timestamptz,
    pending             boolean,
    status              text,
    held_back           text[],
    why                 text)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    -- The reasons a day is held back, in the order they are listed.
    reasons    CONSTANT text[] := ARRAY['not ended', 'no rollup', 'turbines missing',
                                        'rolled up before the day closed',
                                        'readings arrived after the rollup', 'recompute pending'];
    v_timezone text;
    v_lateness interval;
    v_first    date;
    v_last     date;
BEGIN
    IF coalesce(p_farm, '') = '' THEN
        RAISE EXCEPTION 'farm: none given (psql -v farm=FARM_ID -v month=YYYY-MM -f sql/reports/monthly_availability.sql)'
            USING ERRCODE = 'invalid_parameter_value', COLUMN = 'farm';
    END IF;
    SELECT f.timezone, make_interval(secs => r.allowed_lateness_s)
    INTO v_timezone, v_lateness
    FROM farm f JOIN farm_rules r ON r.farm_id = f.id
    WHERE f.id = p_farm;
    IF NOT FOUND THEN
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
        -- Farm-local day bounds, as everywhere on this database (FarmDayGet,
        -- farm_day): [d AT TIME ZONE zone, d + 1 AT TIME ZONE zone).
        SELECT g::date AS day,
               (g::date::timestamp AT TIME ZONE v_timezone)       AS day_start,
               ((g::date + 1)::timestamp AT TIME ZONE v_timezone) AS day_end
        FROM generate_series(v_first::timestamp, v_last::timestamp, interval '1 day') AS g
    ),
    rolled AS (
        SELECT fd.day, fd.turbines, fd.turbines_in_service, fd.registered_turbines,
               fd.expected, fd.received, fd.available, fd.computed_at, fd.oldest_computed_at
        FROM farm_day fd
        WHERE fd.farm_id = p_farm AND fd.day BETWEEN v_first AND v_last
    ),
    shown AS (
        SELECT DISTINCT ON (fw.window_start)
               fw.day, fw.path, fw.expected, fw.received, fw.available, fw.computed_at, fw.complete_through
        FROM farm_window fw
        WHERE fw.farm_id = p_farm AND fw.day BETWEEN v_first AND v_last
          AND NOT EXISTS (SELECT 1 FROM rolled r WHERE r.day = fw.day)
        ORDER BY fw.window_start, (fw.path = 'final') DESC
    ),
    windowed AS (
        SELECT s.day,
               sum(s.expected)::bigint AS expected, sum(s.received)::bigint AS received, sum(s.available)::bigint AS available,
               CASE WHEN bool_and(s.path = 'final') THEN 'final' ELSE 'fast' END AS path,
               max(s.computed_at) AS computed_at, min(s.complete_through) AS complete_through
        FROM shown s
        GROUP BY s.day
    ),
    requested AS (
        SELECT p.day, max(p.requested_at) AS requested_at
        FROM rollup_pending p
        WHERE p.farm_id = p_farm AND p.day BETWEEN v_first AND v_last
        GROUP BY p.day
    ),
    facts AS (
        SELECT d.day, d.day_start, d.day_end,
               p_now < d.day_end AS open,
               EXISTS (SELECT 1 FROM turbine t
                       WHERE t.farm_id = p_farm
                         AND (t.commissioned_at IS NULL OR t.commissioned_at < d.day_end)
                         AND (t.decommissioned_at IS NULL OR t.decommissioned_at > d.day_start)) AS in_service,
               r.day IS NOT NULL AS has_rows,
               r.turbines, r.turbines_in_service, r.registered_turbines,
               coalesce(r.expected, w.expected)   AS expected,
               coalesce(r.received, w.received)   AS received,
               coalesce(r.available, w.available) AS available,
               CASE WHEN r.day IS NOT NULL THEN 'turbine_day' WHEN w.day IS NOT NULL THEN 'farm_window' END AS source,
               CASE WHEN r.day IS NOT NULL THEN 'final' ELSE w.path END AS path,
               coalesce(r.computed_at, w.computed_at) AS computed_at,
               -- rows: every reading stored before the oldest row was
               -- computed is counted (later ones are marked); windows: the
               -- earliest watermark they were published or corrected at.
               coalesce(r.oldest_computed_at, w.complete_through) AS complete_through,
               r.oldest_computed_at,
               q.requested_at,
               rollup_day_unfinished(p_farm, d.day) AS job_unfinished
        FROM days d
        LEFT JOIN rolled r ON r.day = d.day
        LEFT JOIN windowed w ON w.day = d.day
        LEFT JOIN requested q ON q.day = d.day
    ),
    judged AS (
        SELECT f.*, j.held_back, j.why
        FROM facts f
        CROSS JOIN LATERAL (
            SELECT array_agg(v.reason ORDER BY v.ord) AS held_back,
                   string_agg(v.reason || coalesce(' (' || v.detail || ')', ''), '; ' ORDER BY v.ord) AS why
            FROM (VALUES
                (1, reasons[1], NULL::text, f.open),
                (2, reasons[2], NULL::text, NOT f.open AND NOT f.has_rows AND f.in_service),
                (3, reasons[3], format('rolled up %s of %s', f.turbines_in_service, f.registered_turbines),
                    NOT f.open AND f.has_rows AND f.turbines_in_service < f.registered_turbines),
                (4, reasons[4], format('computed %s, closed %s',
                                       to_char(f.oldest_computed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC',
                                       to_char((f.day_end + v_lateness) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC'),
                    NOT f.open AND f.has_rows AND f.oldest_computed_at < f.day_end + v_lateness),
                (5, reasons[5], 'recompute requested ' || to_char(f.requested_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC',
                    NOT f.open AND f.has_rows AND f.requested_at IS NOT NULL),
                (6, reasons[6], NULL::text,
                    NOT f.open AND (f.job_unfinished OR f.requested_at IS NOT NULL) AND NOT (f.has_rows AND f.requested_at IS NOT NULL))
            ) AS v(ord, reason, detail, applies)
            WHERE v.applies
        ) AS j
    ),
    -- The days holding the month back, per reason, as runs of consecutive
    -- days (a day minus its rank within the reason is constant along a run).
    runs AS (
        SELECT h.reason, min(h.day) AS first_day, max(h.day) AS last_day
        FROM (SELECT u.reason, jd.day,
                     jd.day - (row_number() OVER (PARTITION BY u.reason ORDER BY jd.day))::integer AS run
              FROM judged jd CROSS JOIN LATERAL unnest(jd.held_back) AS u(reason)) AS h
        GROUP BY h.reason, h.run
    ),
    month_why AS (
        SELECT array_agg(x.reason ORDER BY array_position(reasons, x.reason)) AS held_back,
               string_agg(x.reason || ': ' || x.days, '; ' ORDER BY array_position(reasons, x.reason)) AS why
        FROM (SELECT rn.reason,
                     string_agg(CASE WHEN rn.first_day = rn.last_day THEN to_char(rn.first_day, 'YYYY-MM-DD')
                                     ELSE to_char(rn.first_day, 'YYYY-MM-DD') || '..' || to_char(rn.last_day, 'YYYY-MM-DD') END,
                                ', ' ORDER BY rn.first_day) AS days
              FROM runs rn
              GROUP BY rn.reason) AS x
    )
    SELECT p_farm, p_month, 'day'::text, jd.day,
           jd.expected, jd.received, jd.available,
           round(jd.available::numeric / nullif(jd.expected, 0), 6),
           round(jd.received::numeric / nullif(jd.expected, 0), 6),
           jd.turbines_in_service, jd.registered_turbines,
           jd.source, jd.path, jd.computed_at, jd.complete_through,
           (jd.requested_at IS NOT NULL OR jd.job_unfinished),
           CASE WHEN jd.held_back IS NULL THEN 'final' ELSE 'provisional' END,
           jd.held_back, jd.why
    FROM judged jd
    UNION ALL
    SELECT p_farm, p_month, 'month'::text, NULL::date,
           sum(jd.expected)::bigint, sum(jd.received)::bigint, sum(jd.available)::bigint,
           round(sum(jd.available)::numeric / nullif(sum(jd.expected), 0), 6),
           round(sum(jd.received)::numeric / nullif(sum(jd.expected), 0), 6),
           NULL::integer, NULL::integer,
           CASE WHEN count(jd.source) = 0 THEN NULL
                WHEN count(DISTINCT jd.source) = 1 THEN min(jd.source)
                ELSE 'mixed' END,
           CASE WHEN count(jd.path) = 0 THEN NULL
                WHEN bool_or(jd.path = 'fast') THEN 'fast'
                ELSE 'final' END,
           max(jd.computed_at), min(jd.complete_through),
           bool_or(jd.requested_at IS NOT NULL OR jd.job_unfinished),
           CASE WHEN bool_and(jd.held_back IS NULL) THEN 'final' ELSE 'provisional' END,
           (SELECT mw.held_back FROM month_why mw), (SELECT mw.why FROM month_why mw)
    FROM judged jd
    ORDER BY 3, 4;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION report_monthly_availability(text, text, timestamptz) IS
'The monthly availability report of a farm (p_month YYYY-MM): one row per farm-local day and a month row (scope month), counts summed and rates computed from the sums; status final only when every day has ended, was rolled up after it closed, and has no recompute requested or running; held_back/why say what holds a day or the month back. sql/reports/monthly_availability.sql formats it; orchestrator report monthly runs that file.';

-- +goose Down
DROP FUNCTION report_monthly_availability(text, text, timestamptz);
