-- turbine_day: the per-turbine, per-day counts (expected, received, available), written by the farm-
-- day rollup.

-- TurbineDayUpsert writes a farm-day-shard's rows. Each records when its
-- day counted as closed by the rules in force at the write
-- (farm_day_closes_at: its end + the farm's allowed lateness), which the
-- final rule compares computed_at with (farm_day_status).
-- name: TurbineDayUpsert :execrows
INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early,
                         beyond_cadence, out_of_service, min_lag_ms, max_lag_ms, last_received_at, silent_hours, computed_at, job_id,
                         closed_at, input_readings, input_hash, category_slots,
                         category_actual_wh, category_potential_wh)
SELECT u.turbine_id, @day::date, @farm_id::text, @shard_name::text, u.expected, u.received, u.available, u.late, u.early,
       u.beyond_cadence, u.out_of_service,
       CASE WHEN u.received + u.beyond_cadence + u.out_of_service > 0 THEN u.min_lag_ms END,
       CASE WHEN u.received + u.beyond_cadence + u.out_of_service > 0 THEN u.max_lag_ms END,
       CASE WHEN u.received + u.beyond_cadence + u.out_of_service > 0 THEN u.last_received_at END,
       u.silent_hours::integer[],
       @computed_at::timestamptz, sqlc.narg(job_id)::bigint,
       c.closed_at,
       CASE WHEN u.fingerprinted THEN u.input_readings END, CASE WHEN u.fingerprinted THEN u.input_hash END,
       nullif(u.category_slots, '')::integer[], nullif(u.category_actual_wh, '')::bigint[], nullif(u.category_potential_wh, '')::bigint[]
FROM (SELECT farm_day_closes_at(@farm_id::text, @day::date) AS closed_at) AS c,
     (SELECT unnest(@turbine_ids::text[]) AS turbine_id,
             unnest(@expected::integer[]) AS expected,
             unnest(@received::integer[]) AS received,
             unnest(@available::integer[]) AS available,
             unnest(@late::integer[]) AS late,
             unnest(@early::integer[]) AS early,
             unnest(@beyond_cadence::integer[]) AS beyond_cadence,
             unnest(@out_of_service::integer[]) AS out_of_service,
             unnest(@min_lag_ms::bigint[]) AS min_lag_ms,
             unnest(@max_lag_ms::bigint[]) AS max_lag_ms,
             unnest(@last_received_at::timestamptz[]) AS last_received_at,
             -- one '{h,h,...}' literal per turbine (arrays of arrays must be rectangular)
             unnest(@silent_hours::text[]) AS silent_hours,
             unnest(@input_readings::bigint[]) AS input_readings,
             unnest(@input_hash::bigint[]) AS input_hash,
             unnest(@fingerprinted::boolean[]) AS fingerprinted,
             -- one '{n,...}' literal per turbine ('': computed before categories)
             unnest(@category_slots::text[]) AS category_slots,
             unnest(@category_actual_wh::text[]) AS category_actual_wh,
             unnest(@category_potential_wh::text[]) AS category_potential_wh) AS u
ON CONFLICT (turbine_id, day) DO UPDATE
SET farm_id = EXCLUDED.farm_id, shard_name = EXCLUDED.shard_name,
    expected = EXCLUDED.expected, received = EXCLUDED.received, available = EXCLUDED.available,
    late = EXCLUDED.late, early = EXCLUDED.early,
    beyond_cadence = EXCLUDED.beyond_cadence, out_of_service = EXCLUDED.out_of_service,
    min_lag_ms = EXCLUDED.min_lag_ms, max_lag_ms = EXCLUDED.max_lag_ms,
    last_received_at = EXCLUDED.last_received_at, silent_hours = EXCLUDED.silent_hours,
    computed_at = EXCLUDED.computed_at, job_id = EXCLUDED.job_id, closed_at = EXCLUDED.closed_at,
    input_readings = EXCLUDED.input_readings, input_hash = EXCLUDED.input_hash,
    category_slots = EXCLUDED.category_slots, category_actual_wh = EXCLUDED.category_actual_wh,
    category_potential_wh = EXCLUDED.category_potential_wh;


-- TurbineDayFingerprints is each turbine_day row of a farm-day with its
-- input fingerprint (NULL: computed before fingerprints) and the shard that
-- holds the turbine's readings now (after a move, the one it moved to).
-- name: TurbineDayFingerprints :many
SELECT td.turbine_id, t.shard_name, td.input_readings, td.input_hash
FROM turbine_day td
JOIN turbine t ON t.id = td.turbine_id
WHERE td.farm_id = @farm_id AND td.day = @day::date
ORDER BY t.shard_name, td.turbine_id;
