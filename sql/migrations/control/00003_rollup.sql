-- +goose Up
-- Per-turbine, per-farm-local-day counts: the rows every availability number
-- is computed from. Counts only; rates exist in the views below.
CREATE TABLE turbine_day (
    turbine_id        text NOT NULL,
    day               date NOT NULL,
    farm_id           text NOT NULL,
    shard_name        text NOT NULL,
    expected          integer NOT NULL,
    received          integer NOT NULL,
    available         integer NOT NULL,
    late              integer NOT NULL,
    early             integer NOT NULL,
    min_lag_ms        bigint,
    max_lag_ms        bigint,
    last_received_at  timestamptz,
    computed_at       timestamptz NOT NULL,
    job_id            bigint,
    PRIMARY KEY (turbine_id, day)
);
CREATE INDEX turbine_day_farm_day_idx ON turbine_day (farm_id, day);
COMMENT ON TABLE turbine_day IS 'One row per turbine per farm-local day: expected, received and available readings. Recomputed whole from the readings and overwritten (never incremented) by rollup_day jobs.';
COMMENT ON COLUMN turbine_day.day IS 'The farm-local calendar day (farm.timezone).';
COMMENT ON COLUMN turbine_day.shard_name IS 'The shard the counts were read from.';
COMMENT ON COLUMN turbine_day.expected IS 'Readings the calendar expects: seconds of the local day (23, 24 or 25 h) inside the turbine''s commissioning interval, divided by its cadence.';
COMMENT ON COLUMN turbine_day.received IS 'Readings stored for the day (by recorded_at, the turbine''s clock).';
COMMENT ON COLUMN turbine_day.available IS 'Received readings that report the turbine available.';
COMMENT ON COLUMN turbine_day.late IS 'Received readings that came in the backfill lane (recorded_at behind received_at by more than the lane threshold, default 60 s).';
COMMENT ON COLUMN turbine_day.early IS 'Received readings stamped ahead of their received_at by more than the early tolerance (default 2 s): a fast clock.';
COMMENT ON COLUMN turbine_day.min_lag_ms IS 'Minimum of received_at - recorded_at in ms: the turbine''s clock offset estimate (negative = fast clock). NULL with no readings.';
COMMENT ON COLUMN turbine_day.max_lag_ms IS 'Maximum of received_at - recorded_at in ms. NULL with no readings.';
COMMENT ON COLUMN turbine_day.last_received_at IS 'Latest received_at among the day''s readings: what the row is complete through, as far as arrivals go.';
COMMENT ON COLUMN turbine_day.computed_at IS 'When the recompute that wrote this row ran (its shard snapshot was opened just before).';
COMMENT ON COLUMN turbine_day.job_id IS 'The River job (river_job.id) that wrote the row; NULL when computed outside River.';

-- Recomputes requested by dirty marks and not yet claimed by a running job.
-- At most one row per farm-day-shard; a row exists only while a job that
-- will claim it is queued.
CREATE TABLE rollup_pending (
    farm_id       text NOT NULL,
    day           date NOT NULL,
    shard_name    text NOT NULL,
    turbine_ids   text[],
    job_id        bigint NOT NULL,
    requested_at  timestamptz NOT NULL,
    PRIMARY KEY (farm_id, day, shard_name)
);
COMMENT ON TABLE rollup_pending IS 'Farm-day-shards dirtied by late readings whose recompute job is queued but has not started. The job claims (deletes) the row before reading the shard.';
COMMENT ON COLUMN rollup_pending.turbine_ids IS 'Turbines to recompute; NULL = every turbine of the farm on that shard.';
COMMENT ON COLUMN rollup_pending.job_id IS 'The queued rollup_day job that will claim this request.';

-- rollup_jobs_waiting reports whether a rollup_day job for the farm-day is
-- queued, retrying or running. PL/pgSQL so that it may name River's table,
-- which River's own migrations create.
-- +goose StatementBegin
CREATE FUNCTION rollup_jobs_waiting(p_farm text, p_day date) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM river_job
        WHERE kind = 'rollup_day'
          AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
          AND args ->> 'farm_id' = p_farm
          AND args ->> 'day' = to_char(p_day, 'YYYY-MM-DD'));
END
$$;
-- +goose StatementEnd

-- rollup_job_waiting: has this River job yet to start (available, pending,
-- scheduled or retryable)? False once it runs, finishes, is cancelled or is
-- deleted.
-- +goose StatementBegin
CREATE FUNCTION rollup_job_waiting(p_job_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM river_job
        WHERE id = p_job_id
          AND state IN ('available', 'pending', 'retryable', 'scheduled'));
END
$$;
-- +goose StatementEnd

-- rollup_job_active: will this River job still run (waiting, or running)?
-- False once it is completed, cancelled, discarded or deleted.
-- +goose StatementBegin
CREATE FUNCTION rollup_job_active(p_job_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM river_job
        WHERE id = p_job_id
          AND state IN ('available', 'pending', 'retryable', 'scheduled', 'running'));
END
$$;
-- +goose StatementEnd

CREATE VIEW farm_day AS
SELECT td.farm_id,
       td.day,
       count(*)::integer                                         AS turbines,
       sum(td.expected)::bigint                                  AS expected,
       sum(td.received)::bigint                                  AS received,
       sum(td.available)::bigint                                 AS available,
       round(sum(td.available)::numeric / nullif(sum(td.expected), 0), 6)                  AS availability,
       round(sum(td.received)::numeric / nullif(sum(td.expected), 0), 6)                   AS completeness,
       round((sum(td.expected) - sum(td.received))::numeric / nullif(sum(td.expected), 0), 6) AS unknown,
       sum(td.late)::bigint                                      AS late,
       sum(td.early)::bigint                                     AS early,
       max(td.last_received_at)                                  AS last_received_at,
       min(td.computed_at)                                       AS oldest_computed_at,
       max(td.computed_at)                                       AS computed_at,
       min(td.computed_at) >= ((td.day + 1)::timestamp AT TIME ZONE f.timezone) AS computed_after_day_end,
       (EXISTS (SELECT 1 FROM rollup_pending p WHERE p.farm_id = td.farm_id AND p.day = td.day)
        OR rollup_jobs_waiting(td.farm_id, td.day))              AS pending,
       (SELECT count(*)::integer FROM turbine t
        WHERE t.farm_id = td.farm_id
          AND (t.commissioned_at IS NULL OR t.commissioned_at < ((td.day + 1)::timestamp AT TIME ZONE f.timezone))
          AND (t.decommissioned_at IS NULL OR t.decommissioned_at > (td.day::timestamp AT TIME ZONE f.timezone))) AS registered_turbines
FROM turbine_day td
JOIN farm f ON f.id = td.farm_id
GROUP BY td.farm_id, td.day, f.timezone;
COMMENT ON VIEW farm_day IS 'Per farm and farm-local day: the sums of turbine_day and the rates computed from them at read time.';
COMMENT ON COLUMN farm_day.turbines IS 'Turbines with a row for the day.';
COMMENT ON COLUMN farm_day.availability IS 'available / expected. Conservative: silence counts against the farm, since missing telemetry is not missing at random.';
COMMENT ON COLUMN farm_day.completeness IS 'received / expected.';
COMMENT ON COLUMN farm_day.unknown IS '(expected - received) / expected: the share of the day we have no reading for.';
COMMENT ON COLUMN farm_day.last_received_at IS 'Latest arrival counted in the day: what the numbers are complete through.';
COMMENT ON COLUMN farm_day.oldest_computed_at IS 'The oldest turbine row''s recompute time.';
COMMENT ON COLUMN farm_day.computed_at IS 'The newest turbine row''s recompute time.';
COMMENT ON COLUMN farm_day.computed_after_day_end IS 'Every turbine row was computed after the local day ended. False: a provisional number of a day still in progress.';
COMMENT ON COLUMN farm_day.registered_turbines IS 'Turbines of the farm in service some time that day, per the registry. Fewer rows (turbines < registered_turbines) means a shard''s rollup has not landed: the day is incomplete, whatever its rates say.';
COMMENT ON COLUMN farm_day.pending IS 'A recompute of this day is requested or queued (dirty marks reach the control database within one drain interval, a few seconds). True: the numbers are about to change.';

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
       max(fd.last_received_at)                                   AS last_received_at,
       max(fd.computed_at)                                        AS computed_at,
       bool_and(fd.computed_after_day_end)                        AS computed_after_days_end,
       bool_or(fd.pending)                                        AS pending,
       bool_and(fd.turbines >= fd.registered_turbines)            AS all_turbines_rolled_up
FROM farm_day fd
GROUP BY fd.farm_id, date_trunc('month', fd.day);
COMMENT ON VIEW farm_month IS 'Per farm and calendar month in the farm''s zone: sums of farm_day and rates computed at read time.';
COMMENT ON COLUMN farm_month.days IS 'Days of the month with rollup rows; compare with days_in_month before quoting the month.';
COMMENT ON COLUMN farm_month.days_in_month IS 'Calendar days in the month.';
COMMENT ON COLUMN farm_month.turbine_days IS 'Turbine-day rows summed.';
COMMENT ON COLUMN farm_month.availability IS 'available / expected over the month.';
COMMENT ON COLUMN farm_month.completeness IS 'received / expected over the month.';
COMMENT ON COLUMN farm_month.unknown IS '(expected - received) / expected over the month.';
COMMENT ON COLUMN farm_month.computed_after_days_end IS 'Every day''s rows were computed after that day ended.';
COMMENT ON COLUMN farm_month.all_turbines_rolled_up IS 'Every day has a row for every turbine the registry had in service that day.';
COMMENT ON COLUMN farm_month.pending IS 'Some day of the month has a recompute requested or queued.';

-- +goose Down
DROP VIEW farm_month;
DROP VIEW farm_day;
DROP FUNCTION rollup_jobs_waiting(text, date);
DROP FUNCTION rollup_job_waiting(bigint);
DROP FUNCTION rollup_job_active(bigint);
DROP TABLE rollup_pending;
DROP TABLE turbine_day;
