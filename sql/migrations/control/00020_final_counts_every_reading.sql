-- +goose Up
-- A farm-day is never final while a reading stored before the report ran
-- is missing from its counts, with no grace window: a writer announces its
-- marks here before they commit on the shard, and the shard's drain passes
-- them once it has read them (docs/dirty-marks.md, "Announced marks").

CREATE TABLE dirty_mark_announced (
    farm_id    text NOT NULL,
    day        date NOT NULL,
    shard_name text NOT NULL REFERENCES shard (name) ON DELETE CASCADE,
    xact       bigint NOT NULL,
    marked_at  timestamptz NOT NULL,
    PRIMARY KEY (farm_id, day, shard_name, xact)
);
-- the drain reads and passes a shard's rows
CREATE INDEX dirty_mark_announced_shard ON dirty_mark_announced (shard_name, xact);
COMMENT ON TABLE dirty_mark_announced IS 'Dirty marks a writer announced before committing them on a shard, one row per farm-day and shard transaction, not yet passed by that shard''s drain: while a row remains, readings of its farm-day may be stored and not counted, and the day is not final (farm_day_status: shard not drained). Inserted by ingest (one statement per batch and shard), deleted by the drain whose read of the marks began after that transaction had finished. docs/dirty-marks.md.';
COMMENT ON COLUMN dirty_mark_announced.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN dirty_mark_announced.day IS 'The farm-local day marked.';
COMMENT ON COLUMN dirty_mark_announced.shard_name IS 'The shard the marks are written on.';
COMMENT ON COLUMN dirty_mark_announced.xact IS 'The writing shard transaction (pg_current_xact_id() on the shard, as a number): a drain whose snapshot of the shard saw it finished has read its marks, or it rolled back.';
COMMENT ON COLUMN dirty_mark_announced.marked_at IS 'The writer''s clock of that batch (its marks'' created_at/updated_at).';
GRANT SELECT ON dirty_mark_announced TO galewatch_reporting;

COMMENT ON TABLE shard_drain IS 'Per shard, when the drain last read its dirty marks and recorded them all (in rollup_pending or dirty_mark_settling), passing the announced marks whose transactions had finished (dirty_mark_announced). A shard with no row was never drained: the monthly report holds back its farms'' days (shard not drained).';
COMMENT ON COLUMN shard_drain.drained_through IS 'The drainer''s clock taken before it opened the read of the shard''s marks: every mark committed before it was read. Advanced only by a drain that read every mark and recorded them all. Shown, not judged by: finality follows dirty_mark_announced.';

-- Marks already on the shards were never announced: every shard counts as
-- never drained until its next drain has read them.
DELETE FROM shard_drain;

-- What a farm-day is waiting for, in one place: a recompute requested, a
-- mark settling, a mark announced and not drained, or a rollup_day job.
-- +goose StatementBegin
CREATE FUNCTION farm_day_waiting(p_farm text, p_day date)
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
COMMENT ON FUNCTION farm_day_waiting(text, date) IS 'What a farm-day waits for: the latest recompute requested (rollup_pending), marks settling (dirty_mark_settling: earliest, shards), marks announced and not yet drained (dirty_mark_announced: latest, shards), an unfinished rollup_day job; pending when any. farm_day_status and provenance_pending read it.';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION provenance_pending(p_farm text, p_day date) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT w.pending FROM farm_day_waiting(p_farm, p_day) AS w
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION provenance_pending(text, date) IS 'farm_day_waiting(...).pending: a recompute of the farm-day is requested or running, or marks of it are settling or announced and not drained: its numbers may still change. The pending column of window_provenance and day_provenance.';
COMMENT ON COLUMN window_provenance.pending IS 'Its farm-day''s numbers may still change: a recompute requested or running, or marks of the day settling or announced and not yet drained (provenance_pending).';
COMMENT ON COLUMN day_provenance.pending IS 'The day''s numbers may still change: a recompute requested or running, or marks of it settling or announced and not yet drained (provenance_pending).';
COMMENT ON COLUMN farm_day.pending IS 'A recompute of this day is requested (rollup_pending), marks of it are settling (dirty_mark_settling) or announced and not yet drained (dirty_mark_announced), or a rollup_day job of it is queued or running. True: the numbers are about to change.';
COMMENT ON COLUMN farm_month.pending IS 'Some rolled-up day of the month is pending (farm_day.pending).';

-- farm_day_status as before but for "shard not drained", which no longer
-- trusts a recent drain (drain_grace) to have seen every mark:
--   shard not drained  marks of the day were announced on a shard and its
--                      drain has not read them yet (stored, not counted),
--                      or a shard holding turbines in service that day has
--                      never been drained.
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
COMMENT ON FUNCTION farm_day_status(text, date, timestamptz) IS 'One farm-day judged at p_now (default now()): its turbine_day sums, turbines in service, and status final or provisional with held_back (reasons, in farm_day_reasons() order), notes (no turbines in service) and why. Never final while a mark of the day announced on a shard (dirty_mark_announced) is not passed by that shard''s drain, nor while a shard holding its turbines was never drained. The one home of the final rule: farm_day, farm_month and report_monthly_availability call it. docs/report-user.md: The monthly report.';

DROP FUNCTION drain_grace();

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION drain_grace() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '10 seconds'
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION drain_grace() IS 'Two drain intervals (10 s): a farm-day judged at now is held back (shard not drained) when a shard holding its turbines has not drained since now - this.';
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
q AS (
    SELECT max(p.requested_at) AS requested_at
    FROM rollup_pending p
    WHERE p.farm_id = p_farm AND p.day = p_day
),
s AS (
    SELECT min(m.marked_at) AS marked_at, string_agg(m.shard_name, ', ' ORDER BY m.shard_name) AS shards
    FROM dirty_mark_settling m
    WHERE m.farm_id = p_farm AND m.day = p_day
),
u AS (
    SELECT string_agg(x.shard_name || CASE WHEN d.drained_through IS NULL THEN ' never' ELSE ' since ' || utc_text(d.drained_through) END,
                      ', ' ORDER BY x.shard_name) AS undrained
    FROM (SELECT DISTINCT reg.shard_name FROM reg) AS x
    LEFT JOIN shard_drain d ON d.shard_name = x.shard_name
    WHERE d.drained_through IS NULL OR d.drained_through < p_now - drain_grace()
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
           q.requested_at, s.marked_at, s.shards AS settling_shards, u.undrained,
           rollup_day_unfinished(p_farm, p_day) AS job_unfinished
    FROM b, rc, r, q, s, u
)
SELECT f.id, p_day, f.day_start, f.day_end, f.registered,
       f.turbines, f.turbines_in_service, f.expected, f.received, f.available, f.late, f.early,
       f.beyond_cadence, f.out_of_service, f.last_received_at, f.oldest_computed_at, f.computed_at, f.closed_at,
       f.computed_after_close,
       (f.requested_at IS NOT NULL OR f.marked_at IS NOT NULL OR f.job_unfinished),
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
COMMENT ON FUNCTION farm_day_status(text, date, timestamptz) IS 'One farm-day judged at p_now (default now()): its turbine_day sums, turbines in service, and status final or provisional with held_back (reasons, in farm_day_reasons() order), notes (no turbines in service) and why. The one home of the final rule: farm_day, farm_month and report_monthly_availability call it. docs/report-user.md: The monthly report.';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION provenance_pending(p_farm text, p_day date) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM rollup_pending p WHERE p.farm_id = p_farm AND p.day = p_day)
           OR coalesce(rollup_day_unfinished(p_farm, p_day), false)
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION provenance_pending(text, date) IS 'True while a recompute of the farm-day is requested (rollup_pending) or a rollup_day job for it is unfinished: its numbers may still change. The pending column of window_provenance and day_provenance.';
COMMENT ON COLUMN window_provenance.pending IS 'A recompute of the farm-day is requested or running. Marks written in the last seconds and not yet drained are on the shards (dirty_window), not counted here.';
COMMENT ON COLUMN day_provenance.pending IS 'A recompute of the day is requested or running.';
COMMENT ON COLUMN farm_day.pending IS 'A recompute of this day is requested (rollup_pending), its marks were read on a shard and are settling (dirty_mark_settling), or a rollup_day job of it is queued or running. True: the numbers are about to change.';
COMMENT ON COLUMN farm_month.pending IS 'Some rolled-up day of the month has a recompute requested, settling or queued (farm_day.pending).';
DROP FUNCTION farm_day_waiting(text, date);
COMMENT ON TABLE shard_drain IS 'Per shard, how far the drain has read its dirty marks: every mark committed on the shard before drained_through is in rollup_pending or dirty_mark_settling (or already recomputed). A shard that cannot be drained (down, failing) keeps an old drained_through, and the monthly report holds its farms'' days back (shard not drained).';
COMMENT ON COLUMN shard_drain.drained_through IS 'The drainer''s clock taken before it opened the read of the shard''s marks: every mark committed before it was read. Advanced only by a drain that read every mark and recorded them all.';
REVOKE ALL ON dirty_mark_announced FROM galewatch_reporting;
DROP TABLE dirty_mark_announced;
