-- +goose Up
-- farm_day_status divided by a day's expected slots in its "information
-- unavailable" reason even for a day that expects none (every turbine of
-- the farm commissioned after the day ended, rolled up by the nightly
-- job): the planner evaluates the reason's text beside the join that
-- discards it, and the whole report failed with "division by zero" (seen
-- on the status page after a fleet apply in the hour after a farm's local
-- midnight). The same function, the divisor guarded.
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
                                                round(100.0 * f.missing / nullif(f.expected, 0), 2), f.unresolved_pm)) AS why
    WHERE j.held_back IS NOT NULL OR (f.unresolved AND NOT coalesce(f.missing <= f.accepted_missing, false))
) AS i0 ON true;
END
$$;
-- +goose StatementEnd

-- +goose Down
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
