-- fleet_apply, farm_version and turbine_version: the effective-dated registry fleet apply writes,
-- and the farm_history and turbine_history views `fleet history` reads. A first version starts at
-- -infinity; these statements say so with since_ever (Go has no infinite instant).

-- FleetApplyInsert records one fleet apply that writes versions.
-- name: FleetApplyInsert :one
INSERT INTO fleet_apply (fleet_hash, effective_from, reopened_days)
VALUES (@fleet_hash, @effective_from, @reopened_days::text[])
RETURNING id;

-- FarmVersionCurrent is each farm's version in force (the latest);
-- since_ever when it is a first version (first_day -infinity).
-- name: FarmVersionCurrent :many
SELECT v.farm_id, (v.first_day = '-infinity'::date)::boolean AS since_ever, greatest(v.first_day, '1900-01-01'::date)::date AS first_day, v.name, v.timezone, v.cadence_seconds,
       v.lane_threshold_ms, v.early_tolerance_ms, v.future_limit_s, v.max_age_days, v.window_s, v.mark_margin_s,
       v.allowed_lateness_s, v.divergence_alert_pm, v.completeness_alert_pm, v.power_min_kw, v.power_max_kw, v.wind_max_ms,
       (SELECT k.hash FROM availability_contract k WHERE k.id = v.contract_id)::text AS contract_hash,
       (SELECT k.counting_hash FROM availability_contract k WHERE k.id = v.contract_id)::text AS contract_counting_hash,
       coalesce((SELECT m.hash FROM turbine_model m WHERE m.id = v.model_id), '')::text AS model_hash
FROM farm_version v
WHERE v.valid_to IS NULL
ORDER BY v.farm_id;

-- FarmVersionReplace ends a farm's version in force where day @first_day
-- starts (midnight in its zone) and opens the new version from that day (the first
-- version of a new farm, @since_ever, governs every day before as well).
-- A version that starts on the same day is replaced: it is the same day's
-- earlier edit, and the caller has checked which rolled-up days change.
-- Three statements, in this order: a statement sees one snapshot, and the
-- new version's keys are the ones the first two free.
-- name: FarmVersionDeleteDay :exec
DELETE FROM farm_version
WHERE farm_id = @farm_id AND first_day = @first_day::date AND NOT @since_ever::boolean;

-- name: FarmVersionClose :exec
UPDATE farm_version v SET valid_to = local_day_start(v.timezone, @first_day::date)
WHERE v.farm_id = @farm_id::text AND NOT @since_ever::boolean
  AND v.first_day = (SELECT max(x.first_day) FROM farm_version x WHERE x.farm_id = @farm_id::text AND x.first_day < @first_day::date);

-- name: FarmVersionInsert :exec
INSERT INTO farm_version (farm_id, first_day, valid_from, valid_to, name, timezone, cadence_seconds,
                          lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s,
                          mark_margin_s, allowed_lateness_s, divergence_alert_pm, completeness_alert_pm,
                          power_min_kw, power_max_kw, wind_max_ms, apply_id, contract_id, model_id)
VALUES (@farm_id,
        CASE WHEN @since_ever::boolean THEN '-infinity'::date ELSE @first_day::date END,
        CASE WHEN @since_ever::boolean THEN '-infinity'::timestamptz ELSE farm_day_start(@farm_id, @first_day::date) END,
        NULL, @name, @timezone::text, @cadence_seconds,
        @lane_threshold_ms, @early_tolerance_ms, @future_limit_s, @max_age_days, @window_s, @mark_margin_s,
        @allowed_lateness_s, @divergence_alert_pm, @completeness_alert_pm,
        @power_min_kw, @power_max_kw, @wind_max_ms, @apply_id,
        -- ContractEnsure has written it
        (SELECT k.id FROM availability_contract k WHERE k.hash = @contract_hash::text),
        (SELECT m.id FROM turbine_model m WHERE m.hash = @model_hash::text));

-- ContractEnsure records an availability contract by the hash of its
-- canonical form (a contract's content never changes: the same content is
-- the same row) and returns its id.
-- name: ContractEnsure :one
INSERT INTO availability_contract AS k (hash, counting_hash, name, state_codes, state_categories, cut_in_ms, cut_out_ms,
                                        priority, available, excluded, warranty_pm,
                                        year_start_month, year_start_day, currency, ld_per_point, ld_per, ld_per_mwh,
                                        ld_cap, bonus_above_pm, bonus_per_point, bonus_per)
VALUES (@hash::text, @counting_hash::text, @name::text, @state_codes::text[],
        (SELECT coalesce(array_agg(c.id ORDER BY x.i), '{}') FROM unnest(@state_categories::text[]) WITH ORDINALITY AS x(code, i)
         JOIN availability_category c ON c.code = x.code),
        sqlc.narg(cut_in_ms)::real, sqlc.narg(cut_out_ms)::real,
        (SELECT array_agg(c.id ORDER BY x.i) FROM unnest(@priority::text[]) WITH ORDINALITY AS x(code, i)
         JOIN availability_category c ON c.code = x.code),
        (SELECT coalesce(array_agg(c.id ORDER BY c.id), '{}') FROM availability_category c WHERE c.code = ANY (@available::text[])),
        (SELECT coalesce(array_agg(c.id ORDER BY c.id), '{}') FROM availability_category c WHERE c.code = ANY (@excluded::text[])),
        sqlc.narg(warranty_pm)::integer,
        @year_start_month::smallint, @year_start_day::smallint, sqlc.narg(currency)::text,
        sqlc.narg(ld_per_point)::text::numeric, sqlc.narg(ld_per)::text, sqlc.narg(ld_per_mwh)::text::numeric,
        sqlc.narg(ld_cap)::text::numeric, sqlc.narg(bonus_above_pm)::integer,
        sqlc.narg(bonus_per_point)::text::numeric, sqlc.narg(bonus_per)::text)
ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash
RETURNING k.id;

-- ModelEnsure records a turbine model and its power curve by the hash of
-- its canonical form and returns its id.
-- name: ModelEnsure :one
INSERT INTO turbine_model AS m (hash, name, wind_ms, power_kw)
VALUES (@hash::text, @name::text, @wind_ms::real[], @power_kw::real[])
ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash
RETURNING m.id;

-- CategoryList is the information categories in id order, with their
-- defaults (the fleet file's contract names them by code).
-- name: CategoryList :many
SELECT id, code, name, default_priority, default_class FROM availability_category ORDER BY id;

-- TurbineVersionCurrent is each turbine's version in force, with whether
-- the fleet file still names it; since_ever for a first version
-- (valid_from -infinity).
-- name: TurbineVersionCurrent :many
SELECT v.turbine_id, v.farm_id, v.shard_name, v.cadence_seconds, v.commissioned_at, v.decommissioned_at,
       (v.valid_from = '-infinity'::timestamptz)::boolean AS since_ever,
       greatest(v.valid_from, '1900-01-01 00:00:00+00'::timestamptz)::timestamptz AS valid_from,
       t.in_fleet_file
FROM turbine_version v
JOIN turbine t ON t.id = v.turbine_id
WHERE v.valid_to IS NULL
ORDER BY v.turbine_id;

-- TurbineVersionReplace ends a turbine's version in force at @valid_from
-- and opens the new one there (a version that starts at that instant is
-- replaced); a new turbine's first version (@since_ever) starts at
-- -infinity, as the registry's first versions do: its service interval
-- says when it counts, and a back-filled commissioned_at needs no version
-- before the first. Three
-- statements, in this order, for the reason FarmVersionDeleteDay gives.
-- name: TurbineVersionDeleteAt :batchexec
DELETE FROM turbine_version WHERE turbine_id = @turbine_id AND valid_from = @valid_from::timestamptz;

-- name: TurbineVersionClose :batchexec
UPDATE turbine_version v SET valid_to = @valid_from::timestamptz
WHERE v.turbine_id = @turbine_id::text
  AND v.valid_from = (SELECT max(x.valid_from) FROM turbine_version x WHERE x.turbine_id = @turbine_id::text AND x.valid_from < @valid_from::timestamptz);

-- name: TurbineVersionInsert :batchexec
INSERT INTO turbine_version (turbine_id, valid_from, valid_to, farm_id, shard_name, cadence_seconds,
                             commissioned_at, decommissioned_at, apply_id)
VALUES (@turbine_id, CASE WHEN @since_ever::boolean THEN '-infinity'::timestamptz ELSE @valid_from::timestamptz END,
        NULL, @farm_id, @shard_name, @cadence_seconds, sqlc.narg(commissioned_at), sqlc.narg(decommissioned_at), @apply_id);

-- FarmDaysRolledUp lists the farm-days in [@from_day, @to_day] that have
-- turbine_day rows: days already closed (final or provisional), which a
-- fleet edit may change only with --reopen.
-- name: FarmDaysRolledUp :many
SELECT DISTINCT day::date AS day
FROM turbine_day
WHERE farm_id = @farm_id AND day BETWEEN @from_day::date AND @to_day::date
ORDER BY 1;

-- TurbineHistoryList is turbine_history, optionally of one farm or one
-- turbine, optionally only the versions in force at @at; instants as text
-- (-infinity is a value here).
-- name: TurbineHistoryList :many
SELECT h.turbine_id, h.farm_id, h.shard_name, h.cadence_seconds,
       coalesce(h.commissioned_at::text, '')::text AS commissioned_at,
       coalesce(h.decommissioned_at::text, '')::text AS decommissioned_at,
       h.valid_from::text AS valid_from, coalesce(h.valid_to::text, '')::text AS valid_to,
       h.fleet_hash, h.applied_by, h.applied_at
FROM turbine_history h
WHERE (sqlc.narg(farm_id)::text IS NULL OR h.farm_id = sqlc.narg(farm_id)::text)
  AND (sqlc.narg(turbine_id)::text IS NULL OR h.turbine_id = sqlc.narg(turbine_id)::text)
  AND (sqlc.narg(at)::timestamptz IS NULL
       OR (h.valid_from <= sqlc.narg(at)::timestamptz AND (h.valid_to IS NULL OR h.valid_to > sqlc.narg(at)::timestamptz)))
ORDER BY h.turbine_id, h.valid_from;

-- FarmHistoryList is farm_history, optionally of one farm, optionally only
-- the versions in force at @at.
-- name: FarmHistoryList :many
SELECT h.farm_id, h.name, h.timezone, h.cadence_seconds, h.window_s, h.lane_threshold_ms, h.early_tolerance_ms,
       h.allowed_lateness_s, h.first_day::text AS first_day, h.valid_from::text AS valid_from,
       coalesce(h.valid_to::text, '')::text AS valid_to, h.fleet_hash, h.applied_by, h.applied_at
FROM farm_history h
WHERE (sqlc.narg(farm_id)::text IS NULL OR h.farm_id = sqlc.narg(farm_id)::text)
  AND (sqlc.narg(at)::timestamptz IS NULL
       OR (h.valid_from <= sqlc.narg(at)::timestamptz AND (h.valid_to IS NULL OR h.valid_to > sqlc.narg(at)::timestamptz)))
ORDER BY h.farm_id, h.first_day;

-- FarmVersionList is every farm's calendar versions, oldest first: what
-- ingest's mark rule needs to cut any day as FarmDayGet cuts it.
-- name: FarmVersionList :many
SELECT v.farm_id, (v.first_day = '-infinity'::date)::boolean AS since_ever,
       greatest(v.first_day, '1900-01-01'::date)::date AS first_day,
       greatest(v.valid_from, '1900-01-01 00:00:00+00'::timestamptz)::timestamptz AS valid_from,
       v.timezone, v.window_s, v.allowed_lateness_s, v.mark_margin_s
FROM farm_version v
ORDER BY v.farm_id, v.first_day;
