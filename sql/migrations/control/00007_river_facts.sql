-- +goose Up
-- River facts in one place. The job states that mean "not started" and
-- "unfinished" are defined once here, as functions of a state, and once in
-- Go (internal/jobs/river_facts.go); the helpers are named by what they
-- test. TestRiverFactsAgreeWithSQL checks every River state, and a real
-- rollup_day job inserted from Go, against them. PL/pgSQL so that they may
-- name River's table, which River's own migrations create.

-- +goose StatementBegin
CREATE FUNCTION river_state_not_started(p_state text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_state IN ('available', 'pending', 'retryable', 'scheduled')
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION river_state_not_started(text) IS 'A River job in this state has yet to start (jobs.NotStartedStates).';

-- +goose StatementBegin
CREATE FUNCTION river_state_unfinished(p_state text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT river_state_not_started(p_state) OR p_state = 'running'
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION river_state_unfinished(text) IS 'A River job in this state will still run, or is running (jobs.UnfinishedStates).';

-- river_job_not_started: has this job yet to start? False once it runs,
-- finishes, is cancelled or is deleted.
-- +goose StatementBegin
CREATE FUNCTION river_job_not_started(p_job_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM river_job WHERE id = p_job_id AND river_state_not_started(state::text));
END
$$;
-- +goose StatementEnd

-- river_job_unfinished: will this job still run (or is it running)? False
-- once it is completed, cancelled, discarded or deleted.
-- +goose StatementBegin
CREATE FUNCTION river_job_unfinished(p_job_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM river_job WHERE id = p_job_id AND river_state_unfinished(state::text));
END
$$;
-- +goose StatementEnd

-- rollup_day_unfinished: is a rollup_day job (jobs.KindRollupDay, keys
-- jobs.ArgFarmID and jobs.ArgDay) of this farm-day unfinished?
-- +goose StatementBegin
CREATE FUNCTION rollup_day_unfinished(p_farm text, p_day date) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM river_job
        WHERE kind = 'rollup_day'
          AND river_state_unfinished(state::text)
          AND args ->> 'farm_id' = p_farm
          AND args ->> 'day' = to_char(p_day, 'YYYY-MM-DD'));
END
$$;
-- +goose StatementEnd

CREATE OR REPLACE VIEW farm_day AS
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
GROUP BY r.farm_id, r.day;;

DROP FUNCTION rollup_jobs_waiting(text, date);
DROP FUNCTION rollup_job_waiting(bigint);
DROP FUNCTION rollup_job_active(bigint);

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION rollup_jobs_waiting(p_farm text, p_day date) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN rollup_day_unfinished(p_farm, p_day);
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION rollup_job_waiting(p_job_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN river_job_not_started(p_job_id);
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION rollup_job_active(p_job_id bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN river_job_unfinished(p_job_id);
END
$$;
-- +goose StatementEnd
CREATE OR REPLACE VIEW farm_day AS
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
GROUP BY r.farm_id, r.day;;
