-- +goose Up
-- When is a farm-day final? One home for the rule: farm_day_status(farm,
-- day, now) judges one farm-day, and the monthly
-- report, farm_day and farm_month all call it. Before this migration three
-- copies disagreed: farm_day.computed_after_day_end compared computed_at
-- with the day's end (no lateness), the report with the end + the allowed
-- lateness in force *now* (raising a farm's lateness turned every past
-- month provisional), and the report copied the day bounds and the
-- in-service test. It also adds what the report could not see: dirty marks
-- still on a shard (the drain now records, per shard, how far it has read
-- the shard's marks: shard_drain, dirty_mark_settling), and it says so when
-- a day has no turbine in service instead of calling its empty numbers
-- final.

-- A farm-local day starts at local midnight: [d AT TIME ZONE zone,
-- d + 1 AT TIME ZONE zone). Where a zone skips or repeats midnight,
-- Postgres's rule (the later reading) applies; internal/localday follows
-- it (TestMatchesPostgres).
-- +goose StatementBegin
CREATE FUNCTION local_day_start(p_timezone text, p_day date) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p_day::timestamp AT TIME ZONE p_timezone)
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION local_day_start(text, date) IS 'Start of the local day p_day in p_timezone (its end is the next day''s start): the farm-local day bounds of the control database.';

-- A turbine is in service on a day when its commissioning interval
-- overlaps the day (NULL ends are open).
-- +goose StatementBegin
CREATE FUNCTION turbine_in_service(p_commissioned_at timestamptz, p_decommissioned_at timestamptz,
                                   p_day_start timestamptz, p_day_end timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT (p_commissioned_at IS NULL OR p_commissioned_at < p_day_end)
       AND (p_decommissioned_at IS NULL OR p_decommissioned_at > p_day_start)
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION turbine_in_service(timestamptz, timestamptz, timestamptz, timestamptz) IS 'A turbine (commissioned_at, decommissioned_at; NULL = open) is in service some time during [p_day_start, p_day_end).';

-- When a farm-day counts as closed, by the rules in force now: its end +
-- the farm's allowed lateness. The mark rule (docs/dirty-marks.md) makes
-- every reading committed after this instant write a dirty mark.
-- +goose StatementBegin
CREATE FUNCTION farm_day_closes_at(p_farm text, p_day date) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT local_day_start(f.timezone, p_day + 1) + make_interval(secs => r.allowed_lateness_s)
    FROM farm f JOIN farm_rules r ON r.farm_id = f.id
    WHERE f.id = p_farm
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_closes_at(text, date) IS 'The instant the farm-day counts as closed by the rules in force now: its end + the farm''s allowed lateness. turbine_day.closed_at records it when a row is written.';

-- Each turbine_day row records when its day counted as closed when it was
-- written, so a later change of the allowed lateness does not reopen days
-- rolled up under the old one. Rows from before this migration get the
-- lateness in force now (the best there is).
ALTER TABLE turbine_day ADD COLUMN closed_at timestamptz;
UPDATE turbine_day SET closed_at = farm_day_closes_at(farm_id, day);
-- A row of a farm no longer registered (none are expected): closed when computed.
UPDATE turbine_day SET closed_at = computed_at WHERE closed_at IS NULL;
ALTER TABLE turbine_day ALTER COLUMN closed_at SET NOT NULL;
COMMENT ON COLUMN turbine_day.closed_at IS 'When the day counted as closed when this row was written: its end + the farm''s allowed lateness then in force (farm_day_closes_at). A row computed at or after it counts every reading that wrote no dirty mark.';

-- Writers that do not give closed_at (TurbineDayUpsert does) get the rules
-- in force at the write.
-- +goose StatementBegin
CREATE FUNCTION turbine_day_closed_at_default() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.closed_at IS NULL THEN
        NEW.closed_at := farm_day_closes_at(NEW.farm_id, NEW.day);
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION turbine_day_closed_at_default() IS 'Fills turbine_day.closed_at, when a writer leaves it NULL, with farm_day_closes_at at the write.';
CREATE TRIGGER turbine_day_closed_at BEFORE INSERT ON turbine_day
    FOR EACH ROW EXECUTE FUNCTION turbine_day_closed_at_default();

-- What the drain has read of each shard's marks (internal/jobs Drainer).
-- Written in the control transaction that records the marks' requests
-- (rollup_pending), so "drained through T" means every mark a shard had
-- committed by T is either a request, or recorded below as settling.
CREATE TABLE shard_drain (
    shard_name      text PRIMARY KEY REFERENCES shard (name) ON DELETE CASCADE,
    drained_through timestamptz NOT NULL,
    shard_clock_at  timestamptz NOT NULL,
    marks_read      integer NOT NULL
);
COMMENT ON TABLE shard_drain IS 'Per shard, how far the drain has read its dirty marks: every mark committed on the shard before drained_through is in rollup_pending or dirty_mark_settling (or already recomputed). A shard that cannot be drained (down, failing) keeps an old drained_through, and the monthly report holds its farms'' days back (shard not drained).';
COMMENT ON COLUMN shard_drain.shard_name IS 'The shard (shard.name).';
COMMENT ON COLUMN shard_drain.drained_through IS 'The drainer''s clock taken before it opened the read of the shard''s marks: every mark committed before it was read. Advanced only by a drain that read every mark and recorded them all.';
COMMENT ON COLUMN shard_drain.shard_clock_at IS 'The shard''s own clock (now()) in the transaction that read the marks; beside drained_through it shows the skew between the two clocks.';
COMMENT ON COLUMN shard_drain.marks_read IS 'How many marks that drain read.';

CREATE TABLE dirty_mark_settling (
    farm_id    text NOT NULL,
    day        date NOT NULL,
    shard_name text NOT NULL REFERENCES shard (name) ON DELETE CASCADE,
    marked_at  timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (farm_id, day, shard_name)
);
COMMENT ON TABLE dirty_mark_settling IS 'Dirty marks the drain has read on a shard and left there to settle (a burst of late readings still arriving becomes one recompute, docs/dirty-marks.md): their day has readings its numbers do not count yet. Replaced by every drain of the shard.';
COMMENT ON COLUMN dirty_mark_settling.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN dirty_mark_settling.day IS 'The farm-local day marked.';
COMMENT ON COLUMN dirty_mark_settling.shard_name IS 'The shard holding the mark.';
COMMENT ON COLUMN dirty_mark_settling.marked_at IS 'When the mark was first written (the writer''s clock).';
COMMENT ON COLUMN dirty_mark_settling.updated_at IS 'When it was last widened (the writer''s clock).';

-- How long a shard may go undrained before the report stops trusting that
-- its marks are in the control database: two drain intervals (jobs:
-- DefaultConfig().DrainEvery, 5 s; TestDrainGraceIsTwoDrainIntervals).
-- +goose StatementBegin
CREATE FUNCTION drain_grace() RETURNS interval
LANGUAGE sql IMMUTABLE AS $$
    SELECT interval '10 seconds'
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION drain_grace() IS 'Two drain intervals (10 s): a farm-day judged at now is held back (shard not drained) when a shard holding its turbines has not drained since now - this.';

-- The reasons a farm-day is held back, in the order they are listed.
-- +goose StatementBegin
CREATE FUNCTION farm_day_reasons() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['not ended', 'no rollup', 'turbines missing', 'rolled up before the day closed',
                 'readings arrived after the rollup', 'shard not drained', 'recompute pending']
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_reasons() IS 'The reasons farm_day_status may hold a farm-day back, in the order it lists them.';

-- +goose StatementBegin
CREATE FUNCTION utc_text(p_at timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC'
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION utc_text(timestamptz) IS 'An instant as the reasons write it: YYYY-MM-DD HH:MM:SS UTC.';

-- farm_day_status: one farm-day, its sums and whether it is final at p_now.
--
-- The sums are those of its turbine_day rows; turbines_in_service counts the
-- rows of turbines the registry has in service that day, against
-- registered_turbines. The day is final when it has ended and none of
-- these holds it back (held_back lists those that do, in this order; why
-- adds the details):
--   not ended          p_now is before the day's end.
--   no rollup          turbines were in service and it has no turbine_day rows.
--   turbines missing   fewer rows of turbines in service than the registry
--                      has in service (a shard's rollup has not landed).
--   rolled up before the day closed
--                      a row was computed before the day closed as recorded
--                      on the row (turbine_day.closed_at: its end + the
--                      allowed lateness in force when written). The mark
--                      rule makes a reading that wrote no mark commit before
--                      then, so a row computed after counts every unmarked
--                      reading.
--   readings arrived after the rollup
--                      their marks have reached the control database: a
--                      rollup_pending request whose job has not started, or
--                      a mark the drain has read and left to settle
--                      (dirty_mark_settling).
--   shard not drained  a shard holding turbines in service that day has not
--                      been drained since p_now - drain_grace(): marks
--                      committed there since may not be in the control
--                      database yet (the shard is down, or its drain fails).
--   recompute pending  a rollup_day job of the day is queued or running, or
--                      a request waits for a day without rows.
-- So "rolled up after its last accepted reading" is: rows computed after
-- the day closed, every mark of it drained, and nothing requested or
-- running. A day with no turbine in service has nothing expected: it is
-- final once it has ended, with the note "no turbines in service" (notes).
-- +goose StatementBegin
CREATE FUNCTION farm_day_status(p_farm text, p_day date, p_now timestamptz DEFAULT now())
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

-- farm_day: the same columns as before (00007), each from farm_day_status
-- judged at now(), plus its closed_at, status, held_back, notes and why.
-- computed_after_day_end now means what the report means: every row was
-- computed at or after its day closed (its end + the lateness then in force).
CREATE OR REPLACE VIEW farm_day AS
-- (farm_id and day from k, so a filter on them reaches turbine_day's key)
SELECT k.farm_id::text                                                       AS farm_id,
       k.day::date                                                           AS day,
       s.turbines::integer                                                   AS turbines,
       s.turbines_in_service::integer                                        AS turbines_in_service,
       s.expected::bigint                                                    AS expected,
       s.received::bigint                                                    AS received,
       s.available::bigint                                                   AS available,
       round(s.available::numeric / nullif(s.expected, 0), 6)                AS availability,
       round(s.received::numeric / nullif(s.expected, 0), 6)                 AS completeness,
       round((s.expected - s.received)::numeric / nullif(s.expected, 0), 6)  AS unknown,
       s.late::bigint                                                        AS late,
       s.early::bigint                                                       AS early,
       s.beyond_cadence::bigint                                              AS beyond_cadence,
       s.out_of_service::bigint                                              AS out_of_service,
       s.last_received_at::timestamptz                                       AS last_received_at,
       s.oldest_computed_at::timestamptz                                     AS oldest_computed_at,
       s.computed_at::timestamptz                                            AS computed_at,
       s.computed_after_close::boolean                                       AS computed_after_day_end,
       s.pending::boolean                                                    AS pending,
       s.registered_turbines::integer                                        AS registered_turbines,
       s.closed_at::timestamptz                                              AS closed_at,
       s.status::text                                                        AS status,
       s.held_back::text[]                                                   AS held_back,
       s.notes::text[]                                                       AS notes,
       s.why::text                                                           AS why
FROM (SELECT DISTINCT td.farm_id, td.day FROM turbine_day td) AS k
CROSS JOIN LATERAL farm_day_status(k.farm_id, k.day, now())
    AS s (farm_id, day, day_start, day_end, registered_turbines, turbines, turbines_in_service, expected, received, available, late, early, beyond_cadence, out_of_service, last_received_at, oldest_computed_at, computed_at, closed_at, computed_after_close, pending, status, held_back, notes, why);
COMMENT ON VIEW farm_day IS 'Per farm and farm-local day with turbine_day rows: the sums and the rates computed from them at read time, and whether the day is final now (farm_day_status, the rule the monthly report uses). Filter on farm_id and day: each row asks River and the drain about its day.';
-- The comments again (sqlc reads a replaced view as a new one), changed
-- where the meaning is.
COMMENT ON COLUMN farm_day.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_day.day IS 'The farm-local calendar day.';
COMMENT ON COLUMN farm_day.turbines IS 'Turbine rows for the day (retired turbines included: their rows are kept).';
COMMENT ON COLUMN farm_day.turbines_in_service IS 'Turbine rows of turbines in service some time that day (per the registry now, turbine_in_service).';
COMMENT ON COLUMN farm_day.expected IS 'Sum of turbine_day.expected: cadence slots the calendar expects.';
COMMENT ON COLUMN farm_day.received IS 'Sum of turbine_day.received: slots with a reading.';
COMMENT ON COLUMN farm_day.available IS 'Sum of turbine_day.available: slots reporting the turbine available.';
COMMENT ON COLUMN farm_day.availability IS 'available / expected. Conservative: silence counts against the farm, since missing telemetry is not missing at random.';
COMMENT ON COLUMN farm_day.completeness IS 'received / expected.';
COMMENT ON COLUMN farm_day.unknown IS '(expected - received) / expected: the share of the day we have no reading for.';
COMMENT ON COLUMN farm_day.late IS 'Sum of turbine_day.late: readings that came in the backfill lane.';
COMMENT ON COLUMN farm_day.early IS 'Sum of turbine_day.early: readings stamped by a fast clock.';
COMMENT ON COLUMN farm_day.beyond_cadence IS 'Sum of turbine_day.beyond_cadence: readings faster than the registered cadence, not counted as received.';
COMMENT ON COLUMN farm_day.out_of_service IS 'Sum of turbine_day.out_of_service: readings outside the turbines'' service intervals, not counted.';
COMMENT ON COLUMN farm_day.last_received_at IS 'Latest arrival counted in the day.';
COMMENT ON COLUMN farm_day.oldest_computed_at IS 'The oldest turbine row''s recompute time: every reading stored before it is counted (later ones are marked).';
COMMENT ON COLUMN farm_day.computed_at IS 'The newest turbine row''s recompute time.';
COMMENT ON COLUMN farm_day.registered_turbines IS 'Turbines of the farm in service some time that day, per the registry. turbines_in_service < registered_turbines means a shard''s rollup has not landed: the day is incomplete, whatever its rates say.';
COMMENT ON COLUMN farm_day.computed_after_day_end IS 'Every turbine row was computed at or after its day closed (turbine_day.closed_at: the day''s end + the allowed lateness in force when the row was written). False: rolled up before the day closed, provisional.';
COMMENT ON COLUMN farm_day.pending IS 'A recompute of this day is requested (rollup_pending), its marks were read on a shard and are settling (dirty_mark_settling), or a rollup_day job of it is queued or running. True: the numbers are about to change.';
COMMENT ON COLUMN farm_day.closed_at IS 'The latest turbine_day.closed_at of its rows: when the day counted as closed when they were written.';
COMMENT ON COLUMN farm_day.status IS 'final or provisional, judged now by farm_day_status (the monthly report''s rule).';
COMMENT ON COLUMN farm_day.held_back IS 'The reasons the day is provisional (farm_day_reasons() order); NULL when final.';
COMMENT ON COLUMN farm_day.notes IS 'Facts that do not hold the day back: no turbines in service.';
COMMENT ON COLUMN farm_day.why IS 'held_back with details, then the notes; NULL when there is nothing to say.';

-- farm_month: the same columns as before (00005), plus the month's status
-- and why as the monthly report judges them now (every calendar day, not
-- only the days with rows).
CREATE OR REPLACE VIEW farm_month AS
SELECT g.*, m.status::text AS status, m.held_back::text[] AS held_back, m.why::text AS why
FROM (
    SELECT fd.farm_id,
           date_trunc('month', fd.day)::date                          AS month,
           count(*)::integer                                          AS days,
           extract(day FROM (date_trunc('month', fd.day) + interval '1 month - 1 day'))::integer AS days_in_month,
           sum(fd.turbines)::bigint                                   AS turbine_days,
           sum(fd.expected)::bigint                                   AS expected,
           sum(fd.received)::bigint                                   AS received,
           sum(fd.available)::bigint                                  AS available,
           round(sum(fd.available)::numeric / nullif(sum(fd.expected), 0), 6)                   AS availability,
           round(sum(fd.received)::numeric / nullif(sum(fd.expected), 0), 6)                    AS completeness,
           round((sum(fd.expected) - sum(fd.received))::numeric / nullif(sum(fd.expected), 0), 6) AS unknown,
           sum(fd.beyond_cadence)::bigint                             AS beyond_cadence,
           sum(fd.out_of_service)::bigint                             AS out_of_service,
           max(fd.last_received_at)                                   AS last_received_at,
           max(fd.computed_at)                                        AS computed_at,
           bool_and(fd.computed_after_day_end)                        AS computed_after_days_end,
           bool_or(fd.pending)                                        AS pending,
           bool_and(fd.turbines_in_service >= fd.registered_turbines) AS all_turbines_rolled_up
    FROM farm_day fd
    GROUP BY fd.farm_id, date_trunc('month', fd.day)
) AS g
CROSS JOIN LATERAL (
    SELECT r.status, r.held_back, r.why
    FROM report_monthly_availability(g.farm_id, to_char(g.month, 'YYYY-MM'))
        AS r (farm_id, month, scope, day, expected, received, available, availability, completeness, turbines,
              registered_turbines, source, path, computed_at, complete_through, pending, status, held_back, why)
    WHERE r.scope = 'month'
) AS m;
COMMENT ON VIEW farm_month IS 'Per farm and calendar month in the farm''s zone with rolled-up days: sums of farm_day and rates computed at read time, and the month''s status as the monthly report judges it now.';
COMMENT ON COLUMN farm_month.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_month.month IS 'First day of the calendar month, in the farm''s zone.';
COMMENT ON COLUMN farm_month.days IS 'Days of the month with rollup rows; compare with days_in_month before quoting the month.';
COMMENT ON COLUMN farm_month.days_in_month IS 'Calendar days in the month.';
COMMENT ON COLUMN farm_month.turbine_days IS 'Turbine-day rows summed.';
COMMENT ON COLUMN farm_month.expected IS 'Sum of expected slots over the month''s rolled-up days.';
COMMENT ON COLUMN farm_month.received IS 'Sum of received slots.';
COMMENT ON COLUMN farm_month.available IS 'Sum of available slots.';
COMMENT ON COLUMN farm_month.availability IS 'available / expected over the month.';
COMMENT ON COLUMN farm_month.completeness IS 'received / expected over the month.';
COMMENT ON COLUMN farm_month.unknown IS '(expected - received) / expected over the month.';
COMMENT ON COLUMN farm_month.beyond_cadence IS 'Readings faster than the registered cadence over the month, not counted.';
COMMENT ON COLUMN farm_month.out_of_service IS 'Readings outside service intervals over the month, not counted.';
COMMENT ON COLUMN farm_month.last_received_at IS 'Latest arrival counted in the month.';
COMMENT ON COLUMN farm_month.computed_at IS 'The newest recompute among the month''s rows.';
COMMENT ON COLUMN farm_month.pending IS 'Some rolled-up day of the month has a recompute requested, settling or queued (farm_day.pending).';
COMMENT ON COLUMN farm_month.computed_after_days_end IS 'Every rolled-up day''s rows were computed at or after that day closed (farm_day.computed_after_day_end).';
COMMENT ON COLUMN farm_month.all_turbines_rolled_up IS 'Every rolled-up day has a row for every turbine the registry had in service that day (rows of retired turbines do not count towards it); days without rows are not counted here (see status).';
COMMENT ON COLUMN farm_month.status IS 'final or provisional: the monthly report''s month row judged now (report_monthly_availability), over every calendar day of the month.';
COMMENT ON COLUMN farm_month.held_back IS 'The reasons some day of the month is provisional; NULL when final.';
COMMENT ON COLUMN farm_month.why IS 'The days holding the month back, per reason, and the notes (no turbines in service), as the report''s total row says them.';

-- The report: one row per farm-local day (farm_day_status judges it; its
-- numbers are its turbine_day rows, else the sum of its windows as
-- day_provenance shows them) and the month total from the summed counts.
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
COMMENT ON FUNCTION report_monthly_availability(text, text, timestamptz) IS
'The monthly availability report of a farm (p_month YYYY-MM): one row per farm-local day and a month row (scope month), counts summed and rates computed from the sums; each day judged by farm_day_status (final only when it has ended, was rolled up after it closed, every mark of it is drained and no recompute is requested or running); the month is final when every day is. held_back/why say what holds a day or the month back. sql/reports/monthly_availability.sql formats it; orchestrator report monthly runs that file.';

GRANT SELECT ON shard_drain, dirty_mark_settling TO galewatch_reporting;

-- +goose Down
-- farm_month and farm_day as 00005/00007 left them (a view cannot drop
-- columns with CREATE OR REPLACE: dropped and created, grants again).
DROP VIEW farm_month;
DROP VIEW farm_day;
DROP FUNCTION farm_day_status(text, date, timestamptz);
REVOKE ALL ON shard_drain, dirty_mark_settling FROM galewatch_reporting;
DROP TABLE dirty_mark_settling;
DROP TABLE shard_drain;
DROP TRIGGER turbine_day_closed_at ON turbine_day;
DROP FUNCTION turbine_day_closed_at_default();
-- before farm_day is made again: its td.* would take the column in
ALTER TABLE turbine_day DROP COLUMN closed_at;
CREATE VIEW farm_day AS
WITH rows AS (
    SELECT td.*, f.timezone,
           (td.day::timestamp AT TIME ZONE f.timezone)       AS day_start,
           ((td.day + 1)::timestamp AT TIME ZONE f.timezone) AS day_end,
           t.commissioned_at, t.decommissioned_at
    FROM turbine_day td
    JOIN farm f ON f.id = td.farm_id
    LEFT JOIN turbine t ON t.id = td.turbine_id
)
SELECT r.farm_id,
       r.day,
       count(*)::integer                                         AS turbines,
       count(*) FILTER (WHERE (r.commissioned_at IS NULL OR r.commissioned_at < r.day_end)
                          AND (r.decommissioned_at IS NULL OR r.decommissioned_at > r.day_start))::integer AS turbines_in_service,
       sum(r.expected)::bigint                                   AS expected,
       sum(r.received)::bigint                                   AS received,
       sum(r.available)::bigint                                  AS available,
       round(sum(r.available)::numeric / nullif(sum(r.expected), 0), 6)                  AS availability,
       round(sum(r.received)::numeric / nullif(sum(r.expected), 0), 6)                   AS completeness,
       round((sum(r.expected) - sum(r.received))::numeric / nullif(sum(r.expected), 0), 6) AS unknown,
       sum(r.late)::bigint                                       AS late,
       sum(r.early)::bigint                                      AS early,
       sum(r.beyond_cadence)::bigint                             AS beyond_cadence,
       sum(r.out_of_service)::bigint                             AS out_of_service,
       max(r.last_received_at)                                   AS last_received_at,
       min(r.computed_at)                                        AS oldest_computed_at,
       max(r.computed_at)                                        AS computed_at,
       min(r.computed_at) >= min(r.day_end)                      AS computed_after_day_end,
       (EXISTS (SELECT 1 FROM rollup_pending p WHERE p.farm_id = r.farm_id AND p.day = r.day)
        OR rollup_day_unfinished(r.farm_id, r.day))                AS pending,
       (SELECT count(*)::integer FROM turbine t
        WHERE t.farm_id = r.farm_id
          AND (t.commissioned_at IS NULL OR t.commissioned_at < min(r.day_end))
          AND (t.decommissioned_at IS NULL OR t.decommissioned_at > min(r.day_start))) AS registered_turbines
FROM rows r
GROUP BY r.farm_id, r.day;
COMMENT ON VIEW farm_day IS 'Per farm and farm-local day: the sums of turbine_day and the rates computed from them at read time.';
COMMENT ON COLUMN farm_day.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_day.day IS 'The farm-local calendar day.';
COMMENT ON COLUMN farm_day.turbines IS 'Turbine rows for the day (retired turbines included: their rows are kept).';
COMMENT ON COLUMN farm_day.turbines_in_service IS 'Turbine rows of turbines in service some time that day (per the registry now).';
COMMENT ON COLUMN farm_day.expected IS 'Sum of turbine_day.expected: cadence slots the calendar expects.';
COMMENT ON COLUMN farm_day.received IS 'Sum of turbine_day.received: slots with a reading.';
COMMENT ON COLUMN farm_day.available IS 'Sum of turbine_day.available: slots reporting the turbine available.';
COMMENT ON COLUMN farm_day.availability IS 'available / expected. Conservative: silence counts against the farm, since missing telemetry is not missing at random.';
COMMENT ON COLUMN farm_day.completeness IS 'received / expected.';
COMMENT ON COLUMN farm_day.unknown IS '(expected - received) / expected: the share of the day we have no reading for.';
COMMENT ON COLUMN farm_day.late IS 'Sum of turbine_day.late: readings that came in the backfill lane.';
COMMENT ON COLUMN farm_day.early IS 'Sum of turbine_day.early: readings stamped by a fast clock.';
COMMENT ON COLUMN farm_day.beyond_cadence IS 'Sum of turbine_day.beyond_cadence: readings faster than the registered cadence, not counted as received.';
COMMENT ON COLUMN farm_day.out_of_service IS 'Sum of turbine_day.out_of_service: readings outside the turbines'' service intervals, not counted.';
COMMENT ON COLUMN farm_day.last_received_at IS 'Latest arrival counted in the day: what the numbers are complete through.';
COMMENT ON COLUMN farm_day.oldest_computed_at IS 'The oldest turbine row''s recompute time.';
COMMENT ON COLUMN farm_day.computed_at IS 'The newest turbine row''s recompute time.';
COMMENT ON COLUMN farm_day.computed_after_day_end IS 'Every turbine row was computed after the local day ended. False: a provisional number of a day still in progress.';
COMMENT ON COLUMN farm_day.pending IS 'A recompute of this day is requested or queued (dirty marks reach the control database within one drain interval, a few seconds). True: the numbers are about to change.';
COMMENT ON COLUMN farm_day.registered_turbines IS 'Turbines of the farm in service some time that day, per the registry. turbines_in_service < registered_turbines means a shard''s rollup has not landed: the day is incomplete, whatever its rates say.';
CREATE VIEW farm_month AS
SELECT fd.farm_id,
       date_trunc('month', fd.day)::date                          AS month,
       count(*)::integer                                          AS days,
       extract(day FROM (date_trunc('month', fd.day) + interval '1 month - 1 day'))::integer AS days_in_month,
       sum(fd.turbines)::bigint                                   AS turbine_days,
       sum(fd.expected)::bigint                                   AS expected,
       sum(fd.received)::bigint                                   AS received,
       sum(fd.available)::bigint                                  AS available,
       round(sum(fd.available)::numeric / nullif(sum(fd.expected), 0), 6)                   AS availability,
       round(sum(fd.received)::numeric / nullif(sum(fd.expected), 0), 6)                    AS completeness,
       round((sum(fd.expected) - sum(fd.received))::numeric / nullif(sum(fd.expected), 0), 6) AS unknown,
       sum(fd.beyond_cadence)::bigint                             AS beyond_cadence,
       sum(fd.out_of_service)::bigint                             AS out_of_service,
       max(fd.last_received_at)                                   AS last_received_at,
       max(fd.computed_at)                                        AS computed_at,
       bool_and(fd.computed_after_day_end)                        AS computed_after_days_end,
       bool_or(fd.pending)                                        AS pending,
       bool_and(fd.turbines_in_service >= fd.registered_turbines) AS all_turbines_rolled_up
FROM farm_day fd
GROUP BY fd.farm_id, date_trunc('month', fd.day);
COMMENT ON VIEW farm_month IS 'Per farm and calendar month in the farm''s zone: sums of farm_day and rates computed at read time.';
COMMENT ON COLUMN farm_month.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_month.month IS 'First day of the calendar month, in the farm''s zone.';
COMMENT ON COLUMN farm_month.days IS 'Days of the month with rollup rows; compare with days_in_month before quoting the month.';
COMMENT ON COLUMN farm_month.days_in_month IS 'Calendar days in the month.';
COMMENT ON COLUMN farm_month.turbine_days IS 'Turbine-day rows summed.';
COMMENT ON COLUMN farm_month.expected IS 'Sum of expected slots over the month''s rolled-up days.';
COMMENT ON COLUMN farm_month.received IS 'Sum of received slots.';
COMMENT ON COLUMN farm_month.available IS 'Sum of available slots.';
COMMENT ON COLUMN farm_month.availability IS 'available / expected over the month.';
COMMENT ON COLUMN farm_month.completeness IS 'received / expected over the month.';
COMMENT ON COLUMN farm_month.unknown IS '(expected - received) / expected over the month.';
COMMENT ON COLUMN farm_month.beyond_cadence IS 'Readings faster than the registered cadence over the month, not counted.';
COMMENT ON COLUMN farm_month.out_of_service IS 'Readings outside service intervals over the month, not counted.';
COMMENT ON COLUMN farm_month.last_received_at IS 'Latest arrival counted in the month: what it is complete through.';
COMMENT ON COLUMN farm_month.computed_at IS 'The newest recompute among the month''s rows.';
COMMENT ON COLUMN farm_month.computed_after_days_end IS 'Every day''s rows were computed after that day ended.';
COMMENT ON COLUMN farm_month.all_turbines_rolled_up IS 'Every rolled-up day has a row for every turbine the registry had in service that day (rows of retired turbines do not count towards it).';
COMMENT ON COLUMN farm_month.pending IS 'Some day of the month has a recompute requested or queued.';
GRANT SELECT ON farm_day, farm_month TO galewatch_reporting;
-- The report as 00011 made it.
DROP FUNCTION report_monthly_availability(text, text, timestamptz);
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
GRANT EXECUTE ON FUNCTION report_monthly_availability(text, text, timestamptz) TO galewatch_reporting;
DROP FUNCTION utc_text(timestamptz);
DROP FUNCTION farm_day_reasons();
DROP FUNCTION drain_grace();
DROP FUNCTION farm_day_closes_at(text, date);
DROP FUNCTION turbine_in_service(timestamptz, timestamptz, timestamptz, timestamptz);
DROP FUNCTION local_day_start(text, date);
