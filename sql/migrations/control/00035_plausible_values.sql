-- +goose Up
-- Plausible values, bounded sums. A reading's power_kw and wind_ms have
-- bounds, rules like the clock limits (fleet_rules, the farm's overrides,
-- farm_rules in force, farm_version per day): ingest refuses a reading
-- outside them, so every energy sum of a stored reading fits its type
-- (docs/dba.md, "Bounded sums", has the arithmetic). A recompute that
-- fails anyway names its error in the day's why (rollup_day_failure).

-- The ceilings (-100,000 and 100,000 kW: a turbine model's curve has the
-- same; 200 m/s) are what the sums are proved for: a rule may not pass them.
ALTER TABLE fleet_rules
    ADD COLUMN power_min_kw integer NOT NULL DEFAULT -1000 CHECK (power_min_kw BETWEEN -100000 AND 100000),
    ADD COLUMN power_max_kw integer NOT NULL DEFAULT 20000 CHECK (power_max_kw BETWEEN -100000 AND 100000),
    ADD COLUMN wind_max_ms  integer NOT NULL DEFAULT 100 CHECK (wind_max_ms BETWEEN 1 AND 200),
    ADD CONSTRAINT fleet_rules_power_range_check CHECK (power_min_kw < power_max_kw);
COMMENT ON COLUMN fleet_rules.power_min_kw IS 'A reading whose power_kw is below this (kW) is refused at ingest (kind implausible). Between -100000 and 100000, below power_max_kw.';
COMMENT ON COLUMN fleet_rules.power_max_kw IS 'A reading whose power_kw is above this (kW) is refused at ingest (kind implausible): a controller''s sentinel such as 3.0e38 never reaches a sum. At most 100000, the ceiling every energy sum is proved for.';
COMMENT ON COLUMN fleet_rules.wind_max_ms IS 'A reading whose wind_ms is above this (m/s), or below 0, is refused at ingest (kind implausible). Between 1 and 200.';

ALTER TABLE farm
    ADD COLUMN power_min_kw integer CHECK (power_min_kw BETWEEN -100000 AND 100000),
    ADD COLUMN power_max_kw integer CHECK (power_max_kw BETWEEN -100000 AND 100000),
    ADD COLUMN wind_max_ms  integer CHECK (wind_max_ms BETWEEN 1 AND 200);
COMMENT ON COLUMN farm.power_min_kw IS 'Override of fleet_rules.power_min_kw; NULL = the fleet default.';
COMMENT ON COLUMN farm.power_max_kw IS 'Override of fleet_rules.power_max_kw; NULL = the fleet default.';
COMMENT ON COLUMN farm.wind_max_ms IS 'Override of fleet_rules.wind_max_ms; NULL = the fleet default.';

CREATE OR REPLACE VIEW farm_rules AS
SELECT f.id AS farm_id,
       coalesce(f.lane_threshold_ms, r.lane_threshold_ms)         AS lane_threshold_ms,
       coalesce(f.early_tolerance_ms, r.early_tolerance_ms)       AS early_tolerance_ms,
       coalesce(f.future_limit_s, r.future_limit_s)               AS future_limit_s,
       coalesce(f.max_age_days, r.max_age_days)                   AS max_age_days,
       coalesce(f.window_s, r.window_s)                           AS window_s,
       coalesce(f.mark_margin_s, r.mark_margin_s)                 AS mark_margin_s,
       coalesce(f.allowed_lateness_s, r.allowed_lateness_s)       AS allowed_lateness_s,
       coalesce(f.divergence_alert_pm, r.divergence_alert_pm)     AS divergence_alert_pm,
       coalesce(f.completeness_alert_pm, r.completeness_alert_pm) AS completeness_alert_pm,
       coalesce(f.power_min_kw, r.power_min_kw)                   AS power_min_kw,
       coalesce(f.power_max_kw, r.power_max_kw)                   AS power_max_kw,
       coalesce(f.wind_max_ms, r.wind_max_ms)                     AS wind_max_ms
FROM farm f CROSS JOIN fleet_rules r;
COMMENT ON COLUMN farm_rules.power_min_kw IS 'Least power_kw accepted at ingest, kW.';
COMMENT ON COLUMN farm_rules.power_max_kw IS 'Greatest power_kw accepted at ingest, kW.';
COMMENT ON COLUMN farm_rules.wind_max_ms IS 'Greatest wind_ms accepted at ingest, m/s (the least is 0).';

-- A version's values are the rules in force when it was written; the
-- versions written before these rules existed had the defaults in force.
ALTER TABLE farm_version
    ADD COLUMN power_min_kw integer NOT NULL DEFAULT -1000 CHECK (power_min_kw BETWEEN -100000 AND 100000),
    ADD COLUMN power_max_kw integer NOT NULL DEFAULT 20000 CHECK (power_max_kw BETWEEN -100000 AND 100000),
    ADD COLUMN wind_max_ms  integer NOT NULL DEFAULT 100 CHECK (wind_max_ms BETWEEN 1 AND 200);
ALTER TABLE farm_version ALTER COLUMN power_min_kw DROP DEFAULT, ALTER COLUMN power_max_kw DROP DEFAULT,
    ALTER COLUMN wind_max_ms DROP DEFAULT;
COMMENT ON COLUMN farm_version.power_min_kw IS 'farm_rules.power_min_kw in force under this version.';
COMMENT ON COLUMN farm_version.power_max_kw IS 'farm_rules.power_max_kw in force under this version.';
COMMENT ON COLUMN farm_version.wind_max_ms IS 'farm_rules.wind_max_ms in force under this version.';

CREATE OR REPLACE VIEW farm_history AS
SELECT v.farm_id, v.name, v.timezone, v.cadence_seconds, v.window_s, v.lane_threshold_ms, v.early_tolerance_ms,
       v.future_limit_s, v.max_age_days, v.mark_margin_s, v.allowed_lateness_s, v.divergence_alert_pm,
       v.completeness_alert_pm, v.first_day, v.valid_from, v.valid_to,
       a.fleet_hash, a.applied_by, a.applied_at,
       v.power_min_kw, v.power_max_kw, v.wind_max_ms
FROM farm_version v JOIN fleet_apply a ON a.id = v.apply_id;
COMMENT ON COLUMN farm_history.power_min_kw IS 'Least power_kw accepted at ingest, kW.';
COMMENT ON COLUMN farm_history.power_max_kw IS 'Greatest power_kw accepted at ingest, kW.';
COMMENT ON COLUMN farm_history.wind_max_ms IS 'Greatest wind_ms accepted at ingest, m/s.';

COMMENT ON COLUMN ingest_reject.kind IS 'The kind of reason (invalid, unknown_turbine, future, too_old, retention, out_of_service, implausible): what ingest_reject_summary counts by. NULL for rows refused before this column existed.';

-- rollup_day_failure: the last error of the farm-day's rollup_day jobs
-- (jobs.KindRollupDay, keys jobs.ArgFarmID, ArgDay, ArgShard) whose last
-- attempt failed, unless the farm-day has been recomputed on that shard
-- since; NULL when there is none. River keeps a job's errors on its row
-- (river_job.errors, without database addresses: the jobs' redact
-- middleware) until it deletes the row: a failing job while it retries,
-- a discarded one 7 days, a completed one only 24 hours, so a later
-- recompute is also known by the turbine_day rows it wrote (job_id).
-- +goose StatementBegin
CREATE FUNCTION rollup_day_failure(p_farm text, p_day date) RETURNS text
LANGUAGE plpgsql STABLE AS $$
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
-- +goose StatementEnd
COMMENT ON FUNCTION rollup_day_failure(text, date) IS 'The last error of a rollup_day job of farm-day (p_farm, p_day) whose last attempt failed (not completed, not cancelled), unless the day was recomputed on its shard since (a job of the farm-day and shard completed after the error, or a later job wrote turbine_day rows of it there): which shard, job and attempt, when, whether River retries it, and River''s error (river_job.errors); NULL when none. farm_day_status holds the day back with it (recompute failed).';
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION rollup_day_failure(text, date) SECURITY DEFINER SET search_path = %I, pg_temp', current_schema());
END
$$;
-- +goose StatementEnd
REVOKE EXECUTE ON FUNCTION rollup_day_failure(text, date) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION rollup_day_failure(text, date) TO galewatch_reporting;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_reasons() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['not ended', 'no rollup', 'turbines missing', 'rolled up before the day closed',
                 'readings arrived after the rollup', 'shard not drained', 'recompute pending',
                 'recompute failed', 'information unavailable']
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_reasons() IS 'The reasons farm_day_status may hold a farm-day back, in the order it lists them. The last, information unavailable, alone makes the day incomplete; any other, provisional.';

-- farm_day_status as before, with reason 8: recompute failed.
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
                                                round(100.0 * f.missing / nullif(f.expected, 0), 2), f.unresolved_pm)) AS why
    WHERE j.held_back IS NOT NULL OR (f.unresolved AND NOT coalesce(f.missing <= f.accepted_missing, false))
) AS i0 ON true;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION farm_day_reasons() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT ARRAY['not ended', 'no rollup', 'turbines missing', 'rolled up before the day closed',
                 'readings arrived after the rollup', 'shard not drained', 'recompute pending',
                 'information unavailable']
$$;
-- +goose StatementEnd
DROP FUNCTION rollup_day_failure(text, date);
COMMENT ON COLUMN ingest_reject.kind IS 'The kind of reason (invalid, unknown_turbine, future, too_old, retention, out_of_service): what ingest_reject_summary counts by. NULL for rows refused before this column existed.';

DROP VIEW farm_history;
CREATE VIEW farm_history AS
SELECT v.farm_id, v.name, v.timezone, v.cadence_seconds, v.window_s, v.lane_threshold_ms, v.early_tolerance_ms,
       v.future_limit_s, v.max_age_days, v.mark_margin_s, v.allowed_lateness_s, v.divergence_alert_pm,
       v.completeness_alert_pm, v.first_day, v.valid_from, v.valid_to,
       a.fleet_hash, a.applied_by, a.applied_at
FROM farm_version v JOIN fleet_apply a ON a.id = v.apply_id;
COMMENT ON VIEW farm_history IS 'What the registry said about each farm over time: one row per version, in force over [valid_from, valid_to) (valid_to NULL = now), from first_day; who applied which fleet file.';
COMMENT ON COLUMN farm_history.farm_id IS 'The farm.';
COMMENT ON COLUMN farm_history.name IS 'Display name.';
COMMENT ON COLUMN farm_history.timezone IS 'IANA zone of the days the version governs.';
COMMENT ON COLUMN farm_history.cadence_seconds IS 'Default cadence of the farm''s turbine entries.';
COMMENT ON COLUMN farm_history.window_s IS 'Window grid of its days, s.';
COMMENT ON COLUMN farm_history.lane_threshold_ms IS 'Backfill lane / turbine_day.late threshold, ms.';
COMMENT ON COLUMN farm_history.early_tolerance_ms IS 'turbine_day.early tolerance, ms.';
COMMENT ON COLUMN farm_history.future_limit_s IS 'Future limit at ingest, s.';
COMMENT ON COLUMN farm_history.max_age_days IS 'Maximum age at ingest, days.';
COMMENT ON COLUMN farm_history.mark_margin_s IS 'Margin of the dirty-mark rule, s.';
COMMENT ON COLUMN farm_history.allowed_lateness_s IS 'Allowed lateness of the fast path, s.';
COMMENT ON COLUMN farm_history.divergence_alert_pm IS 'Divergence alert threshold, per mille.';
COMMENT ON COLUMN farm_history.completeness_alert_pm IS 'Completeness alert threshold, per mille.';
COMMENT ON COLUMN farm_history.applied_at IS 'When the apply that wrote it committed.';
COMMENT ON COLUMN farm_history.first_day IS 'The first farm-local day the version governs.';
COMMENT ON COLUMN farm_history.valid_from IS 'Start of first_day (midnight in the previous version''s zone); -infinity for the version made from the registry before it kept history.';
COMMENT ON COLUMN farm_history.valid_to IS 'Where the next version starts; NULL = in force now.';
COMMENT ON COLUMN farm_history.fleet_hash IS 'sha256 of the fleet file that wrote the version.';
COMMENT ON COLUMN farm_history.applied_by IS 'The database user who applied it.';
GRANT SELECT ON farm_history TO galewatch_reporting;
ALTER TABLE farm_version DROP COLUMN power_min_kw, DROP COLUMN power_max_kw, DROP COLUMN wind_max_ms;

DROP VIEW farm_rules;
CREATE VIEW farm_rules AS
SELECT f.id AS farm_id,
       coalesce(f.lane_threshold_ms, r.lane_threshold_ms)         AS lane_threshold_ms,
       coalesce(f.early_tolerance_ms, r.early_tolerance_ms)       AS early_tolerance_ms,
       coalesce(f.future_limit_s, r.future_limit_s)               AS future_limit_s,
       coalesce(f.max_age_days, r.max_age_days)                   AS max_age_days,
       coalesce(f.window_s, r.window_s)                           AS window_s,
       coalesce(f.mark_margin_s, r.mark_margin_s)                 AS mark_margin_s,
       coalesce(f.allowed_lateness_s, r.allowed_lateness_s)       AS allowed_lateness_s,
       coalesce(f.divergence_alert_pm, r.divergence_alert_pm)     AS divergence_alert_pm,
       coalesce(f.completeness_alert_pm, r.completeness_alert_pm) AS completeness_alert_pm
FROM farm f CROSS JOIN fleet_rules r;
COMMENT ON VIEW farm_rules IS 'The rules in force for each farm: its override, else the fleet default. The one place ingest and the rollup read them from.';
COMMENT ON COLUMN farm_rules.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_rules.lane_threshold_ms IS 'Backfill lane / turbine_day.late threshold in force, ms.';
COMMENT ON COLUMN farm_rules.early_tolerance_ms IS 'Early / turbine_day.early tolerance in force, ms.';
COMMENT ON COLUMN farm_rules.future_limit_s IS 'Future limit in force at ingest, s.';
COMMENT ON COLUMN farm_rules.max_age_days IS 'Maximum age in force at ingest, days.';
COMMENT ON COLUMN farm_rules.window_s IS 'Window of the dirty-mark rule in force, s.';
COMMENT ON COLUMN farm_rules.mark_margin_s IS 'Margin of the dirty-mark rule in force, s.';
COMMENT ON COLUMN farm_rules.allowed_lateness_s IS 'Allowed lateness of the fast path in force, s.';
COMMENT ON COLUMN farm_rules.divergence_alert_pm IS 'Divergence alert threshold in force, per mille.';
COMMENT ON COLUMN farm_rules.completeness_alert_pm IS 'Completeness alert threshold in force, per mille short of expected.';
GRANT SELECT ON farm_rules TO galewatch_reporting;
ALTER TABLE farm DROP COLUMN power_min_kw, DROP COLUMN power_max_kw, DROP COLUMN wind_max_ms;
ALTER TABLE fleet_rules DROP COLUMN power_min_kw, DROP COLUMN power_max_kw, DROP COLUMN wind_max_ms;
