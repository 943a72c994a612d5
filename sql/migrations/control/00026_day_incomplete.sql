-- +goose Up
-- Final means resolved. A farm-day whose slots without a reading (expected
-- - received: IEC 61400-26's "information unavailable") exceed the farm's
-- completeness_alert_pm (per mille of expected, under the version governing
-- the day) is "incomplete", not final, however settled its rollup: until its
-- readings arrive, or an operator accepts it (farm_day_acceptance, written by
-- `orchestrator day accept`). A month with an incomplete day is incomplete.
-- The threshold is the completeness alert's: one rule, two effects.
CREATE TABLE farm_day_acceptance (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    farm_id     text NOT NULL REFERENCES farm (id),
    day         date NOT NULL,
    expected    bigint NOT NULL CHECK (expected > 0),
    received    bigint NOT NULL CHECK (received >= 0 AND received <= expected),
    note        text NOT NULL CHECK (btrim(note) <> ''),
    accepted_by text NOT NULL DEFAULT current_user,
    accepted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX farm_day_acceptance_day_idx ON farm_day_acceptance (farm_id, day, accepted_at DESC);
COMMENT ON TABLE farm_day_acceptance IS 'Operators'' acceptances of incomplete farm-days (orchestrator day accept), never deleted: the audit trail. The latest of a day makes it final while no more of its slots are missing than when it was accepted (farm_day_status notes who, when and why). docs/report-user.md: Incomplete days.';
COMMENT ON COLUMN farm_day_acceptance.id IS 'Identity.';
COMMENT ON COLUMN farm_day_acceptance.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_day_acceptance.day IS 'The farm-local day accepted.';
COMMENT ON COLUMN farm_day_acceptance.expected IS 'The day''s expected slots when accepted (farm_day_status.expected).';
COMMENT ON COLUMN farm_day_acceptance.received IS 'The day''s received slots when accepted: the acceptance covers the day while no more of its slots are missing (expected - received) than then.';
COMMENT ON COLUMN farm_day_acceptance.note IS 'Why the day is accepted as it is (the operator''s words, required).';
COMMENT ON COLUMN farm_day_acceptance.accepted_by IS 'The database user who accepted it.';
COMMENT ON COLUMN farm_day_acceptance.accepted_at IS 'When it was accepted.';
GRANT SELECT ON farm_day_acceptance TO galewatch_reporting;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_reasons() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['not ended', 'no rollup', 'turbines missing', 'rolled up before the day closed',
                 'readings arrived after the rollup', 'shard not drained', 'recompute pending',
                 'information unavailable']
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_reasons() IS 'The reasons farm_day_status may hold a farm-day back, in the order it lists them. The last, information unavailable, alone makes the day incomplete; any other, provisional.';

-- farm_day_waiting as before, each shard named once (a shard with nine
-- announced transactions read "marked on s1, s1, s1, ...").
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_waiting(p_farm text, p_day date)
RETURNS TABLE (
    requested_at     timestamptz,
    settling_at      timestamptz,
    settling_shards  text,
    announced_at     timestamptz,
    announced_shards text,
    job_unfinished   boolean,
    pending          boolean)
LANGUAGE sql STABLE AS $$
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
-- +goose StatementEnd

-- farm_day_status as before, with the day's bounds from the version
-- governing it (farm_day_start) and reason 8:
--   information unavailable
--                      the day has ended and has rows, more of its slots
--                      have no reading than completeness_alert_pm per mille
--                      of expected, and no acceptance covers it. Judged
--                      only when no other reason holds the day back (its
--                      numbers have settled); the status is then incomplete.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_status(p_farm text, p_day date, p_now timestamptz DEFAULT now())
RETURNS TABLE (
    farm_id              text,
    day                  date,
    day_start            timestamptz,
    day_end              timestamptz,
    registered_turbines  integer,
    turbines             integer,
    turbines_in_service  integer,
    expected             bigint,
    received             bigint,
    available            bigint,
    late                 bigint,
    early                bigint,
    beyond_cadence       bigint,
    out_of_service       bigint,
    last_received_at     timestamptz,
    oldest_computed_at   timestamptz,
    computed_at          timestamptz,
    closed_at            timestamptz,
    computed_after_close boolean,
    pending              boolean,
    status               text,
    held_back            text[],
    notes                text[],
    why                  text)
-- plpgsql: its plan is cached per session, and a caller's plan stays small
-- (inlined as SQL, a month's LATERAL grew costly enough to be JIT-compiled:
-- 1.5-2.3 s for 31 days with jit on, 60-70 ms so).
LANGUAGE plpgsql STABLE ROWS 1 AS $$
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
           w.job_unfinished, w.pending,
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
            WHEN i0.held_back = ARRAY[rs.reason[8]] THEN 'incomplete'
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
            AND NOT (f.has_rows AND (f.requested_at IS NOT NULL OR f.marked_at IS NOT NULL)))
    ) AS v(ord, reason, detail, applies)
    WHERE v.applies
) AS j
-- reason 8, when no other holds the day back (settled numbers, judged):
-- alone, it makes the day incomplete rather than provisional; an
-- acceptance covers it while no more slots are missing than then
LEFT JOIN LATERAL (
    SELECT coalesce(j.held_back, ARRAY[rs.reason[8]]) AS held_back,
           coalesce(j.why, rs.reason[8] || format(' (%s of %s slots without a reading, %s %%, over the farm''s %s ‰; '
                                                || 'until the readings arrive or the day is accepted: orchestrator day accept)',
                                                to_char(f.missing, 'FM999,999,999,999,990'), to_char(f.expected, 'FM999,999,999,999,990'),
                                                round(100.0 * f.missing / f.expected, 2), f.unresolved_pm)) AS why
    WHERE j.held_back IS NOT NULL OR (f.unresolved AND NOT coalesce(f.missing <= f.accepted_missing, false))
) AS i0 ON true;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_status(text, date, timestamptz) IS 'One farm-day judged at p_now (default now()): its turbine_day sums, turbines in service, and status final, incomplete or provisional with held_back (reasons, in farm_day_reasons() order), notes (no turbines in service; an acceptance) and why. Provisional while the pipeline may still change it; incomplete when only its missing slots hold it back (more than completeness_alert_pm per mille of expected, not accepted: farm_day_acceptance). Never final while a mark of the day announced on a shard (dirty_mark_announced) is not passed by that shard''s drain, nor while a shard holding its turbines was never drained. The one home of the final rule: farm_day, farm_month and report_monthly_availability call it. docs/report-user.md: The monthly report.';

-- report_monthly_availability as before; the month is incomplete when
-- every day is final or incomplete and some day incomplete.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_monthly_availability(p_farm text, p_month text, p_now timestamptz DEFAULT now())
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
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION report_monthly_availability(text, text, timestamptz) IS
'The monthly availability report of a farm (p_month YYYY-MM): one row per farm-local day and a month row (scope month), counts summed and rates computed from the sums; each day judged by farm_day_status (final only when it has ended, was rolled up after it closed, every mark of it is drained, no recompute is requested or running, and its missing slots are within the farm''s threshold or accepted; incomplete when only the missing slots hold it back); the month is final when every day is, incomplete when every day is final or incomplete. held_back/why say what holds a day or the month back. sql/reports/monthly_availability.sql formats it; orchestrator report monthly runs that file.';
COMMENT ON COLUMN farm_day.status IS 'final, incomplete or provisional, judged now by farm_day_status (the monthly report''s rule).';
COMMENT ON COLUMN farm_day.held_back IS 'The reasons the day is provisional or incomplete (farm_day_reasons() order); NULL when final.';
COMMENT ON COLUMN farm_month.status IS 'final, incomplete or provisional: the monthly report''s month row judged now (report_monthly_availability), over every calendar day of the month.';
COMMENT ON COLUMN farm_month.held_back IS 'The reasons some day of the month is provisional or incomplete; NULL when final.';

-- +goose Down
-- The functions as 00020 and 00016 left them, then the table.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_waiting(p_farm text, p_day date)
RETURNS TABLE (
    requested_at     timestamptz,
    settling_at      timestamptz,
    settling_shards  text,
    announced_at     timestamptz,
    announced_shards text,
    job_unfinished   boolean,
    pending          boolean)
LANGUAGE sql STABLE AS $$
    SELECT q.requested_at, s.marked_at, s.shards, a.marked_at, a.shards, j.unfinished,
           (q.requested_at IS NOT NULL OR s.marked_at IS NOT NULL OR a.marked_at IS NOT NULL OR j.unfinished)
    FROM (SELECT max(p.requested_at) AS requested_at
          FROM rollup_pending p WHERE p.farm_id = p_farm AND p.day = p_day) AS q,
         (SELECT min(m.marked_at) AS marked_at, string_agg(m.shard_name, ', ' ORDER BY m.shard_name) AS shards
          FROM dirty_mark_settling m WHERE m.farm_id = p_farm AND m.day = p_day) AS s,
         (SELECT max(x.marked_at) AS marked_at, string_agg(x.shard_name, ', ' ORDER BY x.shard_name) AS shards
          FROM dirty_mark_announced x WHERE x.farm_id = p_farm AND x.day = p_day) AS a,
         (SELECT coalesce(rollup_day_unfinished(p_farm, p_day), false) AS unfinished) AS j
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_status(p_farm text, p_day date, p_now timestamptz DEFAULT now())
RETURNS TABLE (
    farm_id              text,
    day                  date,
    day_start            timestamptz,
    day_end              timestamptz,
    registered_turbines  integer,
    turbines             integer,
    turbines_in_service  integer,
    expected             bigint,
    received             bigint,
    available            bigint,
    late                 bigint,
    early                bigint,
    beyond_cadence       bigint,
    out_of_service       bigint,
    last_received_at     timestamptz,
    oldest_computed_at   timestamptz,
    computed_at          timestamptz,
    closed_at            timestamptz,
    computed_after_close boolean,
    pending              boolean,
    status               text,
    held_back            text[],
    notes                text[],
    why                  text)
-- plpgsql: its plan is cached per session, and a caller's plan stays small
-- (inlined as SQL, a month's LATERAL grew costly enough to be JIT-compiled:
-- 1.5-2.3 s for 31 days with jit on, 60-70 ms so).
LANGUAGE plpgsql STABLE ROWS 1 AS $$
#variable_conflict use_column
BEGIN
RETURN QUERY
WITH b AS (
    SELECT f.id, local_day_start(f.timezone, p_day) AS day_start, local_day_start(f.timezone, p_day + 1) AS day_end
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
facts AS (
    SELECT b.id, b.day_start, b.day_end,
           p_now < b.day_end AS open,
           rc.registered,
           r.*,
           r.turbines > 0 AS has_rows,
           w.requested_at, w.settling_at AS marked_at, w.settling_shards, u.undrained,
           w.job_unfinished, w.pending
    FROM b, rc, r, w, u
)
SELECT f.id, p_day, f.day_start, f.day_end, f.registered,
       f.turbines, f.turbines_in_service, f.expected, f.received, f.available, f.late, f.early,
       f.beyond_cadence, f.out_of_service, f.last_received_at, f.oldest_computed_at, f.computed_at, f.closed_at,
       f.computed_after_close,
       f.pending,
       CASE WHEN j.held_back IS NULL THEN 'final' ELSE 'provisional' END,
       j.held_back, n.notes,
       nullif(concat_ws('; ', j.why, array_to_string(n.notes, '; ')), '')
FROM facts f
CROSS JOIN (SELECT farm_day_reasons() AS reason) AS rs
CROSS JOIN LATERAL (
    SELECT CASE WHEN f.registered = 0 THEN ARRAY['no turbines in service'] END AS notes
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
            AND NOT (f.has_rows AND (f.requested_at IS NOT NULL OR f.marked_at IS NOT NULL)))
    ) AS v(ord, reason, detail, applies)
    WHERE v.applies
) AS j;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION report_monthly_availability(p_farm text, p_month text, p_now timestamptz DEFAULT now())
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
           CASE WHEN bool_and(sh.status = 'final') THEN 'final' ELSE 'provisional' END,
           (SELECT mw.held_back FROM month_why mw), (SELECT mw.why FROM month_why mw)
    FROM shown sh
    ORDER BY 3, 4;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_reasons() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['not ended', 'no rollup', 'turbines missing', 'rolled up before the day closed',
                 'readings arrived after the rollup', 'shard not drained', 'recompute pending']
$$;
-- +goose StatementEnd
DROP TABLE farm_day_acceptance;
