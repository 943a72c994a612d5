-- +goose Up
-- Counts that cannot exceed the truth: received and available count cadence
-- slots, not rows; what the slot rule leaves out is counted in its own column.
ALTER TABLE turbine_day
    ADD COLUMN beyond_cadence integer NOT NULL DEFAULT 0,
    ADD COLUMN out_of_service integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN turbine_day.expected IS 'Cadence slots the calendar expects: floor(seconds of the local day (23, 24 or 25 h) inside the turbine''s service interval / cadence). Slot k starts k cadences after the later of the day''s start and commissioning; the last slot runs to the end of the service interval in the day.';
COMMENT ON COLUMN turbine_day.received IS 'Slots with at least one stored reading (by recorded_at, the turbine''s clock). Never more than expected.';
COMMENT ON COLUMN turbine_day.available IS 'Slots whose every reading reports the turbine available (a slot with any unavailable reading is unavailable). Never more than received.';
COMMENT ON COLUMN turbine_day.late IS 'Readings (not slots) that came in the backfill lane (recorded_at behind received_at by more than the lane threshold, default 60 s).';
COMMENT ON COLUMN turbine_day.early IS 'Readings (not slots) stamped ahead of their received_at by more than the early tolerance (default 2 s): a fast clock.';
COMMENT ON COLUMN turbine_day.beyond_cadence IS 'Readings in service that landed in a slot already counted: the turbine reported faster than its registered cadence. Not in received or available.';
COMMENT ON COLUMN turbine_day.out_of_service IS 'Readings of the local day outside the turbine''s service interval (before commissioning, at or after decommissioning). Not in received or available.';

-- A reject keeps its line whatever the bytes: raw is always storable text,
-- raw_bytes the exact bytes when the text had to be escaped.
ALTER TABLE ingest_reject
    ADD COLUMN raw_escaped boolean NOT NULL DEFAULT false,
    ADD COLUMN raw_bytes bytea,
    ADD COLUMN raw_length integer;
COMMENT ON COLUMN ingest_reject.raw IS 'The line as received, cut to its first 4 KiB on a character boundary. Bytes that are not UTF-8 text (invalid sequences, NUL) are written as \xNN; raw_escaped says so.';
COMMENT ON COLUMN ingest_reject.raw_escaped IS 'True when raw had bytes written as \xNN; raw_bytes then holds the exact bytes.';
COMMENT ON COLUMN ingest_reject.raw_bytes IS 'The exact bytes of the line (first 4 KiB) when they are not storable as text; NULL otherwise.';
COMMENT ON COLUMN ingest_reject.raw_length IS 'Length of the whole line in bytes (raw keeps at most 4 KiB of it). NULL for rows rejected before this column existed.';
COMMENT ON COLUMN shard.dsn IS 'Connection string of the shard database without a password (passwords come from the environment or a pgpass file); NULL means a database of the control server (the embedded default).';

-- farm_day / farm_month: completeness is judged against the turbines in
-- service each day, so rows of retired turbines cannot stand in for a
-- missing shard's rows.
DROP VIEW farm_month;
DROP VIEW farm_day;

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
        OR rollup_jobs_waiting(r.farm_id, r.day))                AS pending,
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

-- +goose Down
DROP VIEW farm_month;
DROP VIEW farm_day;
ALTER TABLE ingest_reject DROP COLUMN raw_escaped, DROP COLUMN raw_bytes, DROP COLUMN raw_length;
ALTER TABLE turbine_day DROP COLUMN beyond_cadence, DROP COLUMN out_of_service;
-- The views as 00003 made them.
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
