-- +goose Up
-- The effective-dated registry. Every fact that defines a count is kept as
-- versions with [valid_from, valid_to): a fleet apply closes the version in
-- force and opens a new one from its effective instant, and never edits a
-- version's facts. farm and turbine keep the latest version (what ingest
-- routes by); a computation of a day reads the versions in force during that
-- day (farm_day_version, TurbineRollupList).

-- One row per fleet apply that changed anything: what was applied, by whom.
CREATE TABLE fleet_apply (
    id              bigserial PRIMARY KEY,
    fleet_hash      text NOT NULL,
    applied_by      text NOT NULL DEFAULT current_user,
    applied_at      timestamptz NOT NULL DEFAULT now(),
    effective_from  timestamptz NOT NULL,
    reopened_days   text[] NOT NULL DEFAULT '{}'
);
COMMENT ON TABLE fleet_apply IS 'One row per fleet apply that wrote a version: the fleet file''s hash, the database user who applied it, when, from which instant, and the farm-days it reopened (--reopen).';
COMMENT ON COLUMN fleet_apply.id IS 'The apply; farm_version.apply_id and turbine_version.apply_id name it.';
COMMENT ON COLUMN fleet_apply.applied_at IS 'When the apply committed (the database clock).';
COMMENT ON COLUMN fleet_apply.fleet_hash IS 'sha256 of the fleet file''s bytes (hex); ''registry before versions'' for the versions made from the rows that existed before the registry was effective-dated.';
COMMENT ON COLUMN fleet_apply.applied_by IS 'The database user (current_user) who applied it.';
COMMENT ON COLUMN fleet_apply.effective_from IS 'The instant its versions start (--effective-from, default the time of the apply); a farm''s versions start at the farm-local day holding it.';
COMMENT ON COLUMN fleet_apply.reopened_days IS 'Farm-days (farm/YYYY-MM-DD) already rolled up that this apply changed and queued for recompute (--reopen); empty otherwise.';

-- A farm's versions change at a farm-local midnight: a day has one calendar.
CREATE TABLE farm_version (
    farm_id                text NOT NULL REFERENCES farm (id),
    first_day              date NOT NULL,
    valid_from             timestamptz NOT NULL,
    valid_to               timestamptz,
    name                   text NOT NULL,
    timezone               text NOT NULL,
    cadence_seconds        integer NOT NULL CHECK (cadence_seconds > 0),
    lane_threshold_ms      integer NOT NULL,
    early_tolerance_ms     integer NOT NULL,
    future_limit_s         integer NOT NULL,
    max_age_days           integer NOT NULL,
    window_s               integer NOT NULL CHECK (window_s > 0),
    mark_margin_s          integer NOT NULL,
    allowed_lateness_s     integer NOT NULL,
    divergence_alert_pm    integer NOT NULL,
    completeness_alert_pm  integer NOT NULL,
    apply_id               bigint NOT NULL REFERENCES fleet_apply (id),
    PRIMARY KEY (farm_id, first_day),
    CHECK (valid_to IS NULL OR valid_to > valid_from)
);
CREATE UNIQUE INDEX farm_version_current_idx ON farm_version (farm_id) WHERE valid_to IS NULL;
COMMENT ON TABLE farm_version IS 'Versions of a farm''s calendar and rules in force (the fleet file''s rules over the fleet defaults, resolved): day first_day onward until the next version''s first_day. A day ends at midnight in its version''s zone and starts where the day before ended (farm_day_start).';
COMMENT ON COLUMN farm_version.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_version.name IS 'Display name.';
COMMENT ON COLUMN farm_version.timezone IS 'IANA zone of the farm-local days this version governs.';
COMMENT ON COLUMN farm_version.cadence_seconds IS 'Default cadence of the farm''s turbine entries (each turbine''s own is in turbine_version).';
COMMENT ON COLUMN farm_version.lane_threshold_ms IS 'farm_rules.lane_threshold_ms in force under this version.';
COMMENT ON COLUMN farm_version.early_tolerance_ms IS 'farm_rules.early_tolerance_ms in force under this version.';
COMMENT ON COLUMN farm_version.future_limit_s IS 'farm_rules.future_limit_s in force under this version.';
COMMENT ON COLUMN farm_version.max_age_days IS 'farm_rules.max_age_days in force under this version.';
COMMENT ON COLUMN farm_version.window_s IS 'farm_rules.window_s in force under this version: the window grid of its days.';
COMMENT ON COLUMN farm_version.mark_margin_s IS 'farm_rules.mark_margin_s in force under this version.';
COMMENT ON COLUMN farm_version.allowed_lateness_s IS 'farm_rules.allowed_lateness_s in force under this version.';
COMMENT ON COLUMN farm_version.divergence_alert_pm IS 'farm_rules.divergence_alert_pm in force under this version.';
COMMENT ON COLUMN farm_version.completeness_alert_pm IS 'farm_rules.completeness_alert_pm in force under this version.';
COMMENT ON COLUMN farm_version.first_day IS 'The first farm-local day this version governs (-infinity: since before the registry kept versions).';
COMMENT ON COLUMN farm_version.valid_from IS 'The instant first_day starts: midnight in the previous version''s zone (farm_day_start; -infinity for the first version).';
COMMENT ON COLUMN farm_version.valid_to IS 'The instant the next version starts; NULL = the version in force.';
COMMENT ON COLUMN farm_version.apply_id IS 'The fleet apply that wrote it (fleet_apply.id).';

-- A turbine's versions change at any instant (fleet apply aligns a cadence
-- change to the farm's window grid, so a window has one cadence).
CREATE TABLE turbine_version (
    turbine_id         text NOT NULL REFERENCES turbine (id),
    valid_from         timestamptz NOT NULL,
    valid_to           timestamptz,
    farm_id            text NOT NULL REFERENCES farm (id),
    shard_name         text NOT NULL REFERENCES shard (name),
    cadence_seconds    integer NOT NULL CHECK (cadence_seconds > 0),
    commissioned_at    timestamptz,
    decommissioned_at  timestamptz,
    apply_id           bigint NOT NULL REFERENCES fleet_apply (id),
    PRIMARY KEY (turbine_id, valid_from),
    CHECK (valid_to IS NULL OR valid_to > valid_from)
);
CREATE UNIQUE INDEX turbine_version_current_idx ON turbine_version (turbine_id) WHERE valid_to IS NULL;
CREATE INDEX turbine_version_farm_idx ON turbine_version (farm_id, shard_name, valid_from);
COMMENT ON TABLE turbine_version IS 'Versions of a turbine''s farm, shard, cadence and service interval, each in force over [valid_from, valid_to). A day''s expected count is cut at the instants its versions change.';
COMMENT ON COLUMN turbine_version.turbine_id IS 'The turbine (turbine.id).';
COMMENT ON COLUMN turbine_version.farm_id IS 'The farm it belonged to.';
COMMENT ON COLUMN turbine_version.shard_name IS 'The shard that held its readings.';
COMMENT ON COLUMN turbine_version.cadence_seconds IS 'Seconds between readings: the slots of the windows that start in this version.';
COMMENT ON COLUMN turbine_version.decommissioned_at IS 'End of service as this version recorded it (NULL = in service).';
COMMENT ON COLUMN turbine_version.valid_from IS 'The instant this version starts (-infinity: since before the registry kept versions).';
COMMENT ON COLUMN turbine_version.valid_to IS 'The instant the next version starts; NULL = the version in force.';
COMMENT ON COLUMN turbine_version.commissioned_at IS 'Start of service as this version recorded it (NULL = always). The service interval is the turbine''s life, not a fact of one period: a day is computed with the one in the version in force now (turbine.commissioned_at).';
COMMENT ON COLUMN turbine_version.apply_id IS 'The fleet apply that wrote it (fleet_apply.id).';

-- Today's rows become first versions, in force since -infinity: no stored
-- count changes.
INSERT INTO fleet_apply (id, fleet_hash, effective_from) VALUES (1, 'registry before versions', '-infinity');
SELECT setval('fleet_apply_id_seq', 1);
INSERT INTO farm_version (farm_id, first_day, valid_from, valid_to, name, timezone, cadence_seconds,
                          lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s,
                          mark_margin_s, allowed_lateness_s, divergence_alert_pm, completeness_alert_pm, apply_id)
SELECT f.id, '-infinity', '-infinity', NULL, f.name, f.timezone, f.cadence_seconds,
       r.lane_threshold_ms, r.early_tolerance_ms, r.future_limit_s, r.max_age_days, r.window_s,
       r.mark_margin_s, r.allowed_lateness_s, r.divergence_alert_pm, r.completeness_alert_pm, 1
FROM farm f JOIN farm_rules r ON r.farm_id = f.id;
INSERT INTO turbine_version (turbine_id, valid_from, valid_to, farm_id, shard_name, cadence_seconds,
                             commissioned_at, decommissioned_at, apply_id)
SELECT id, '-infinity', NULL, farm_id, shard_name, cadence_seconds, commissioned_at, decommissioned_at, 1
FROM turbine;

-- The version governing a farm-local day, and the day's bounds under it.
-- +goose StatementBegin
CREATE FUNCTION farm_day_version(p_farm text, p_day date) RETURNS farm_version
LANGUAGE sql STABLE AS $$
    SELECT v.* FROM farm_version v
    WHERE v.farm_id = p_farm AND v.first_day <= p_day
    ORDER BY v.first_day DESC
    LIMIT 1
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_version(text, date) IS 'The farm_version governing farm-local day p_day (the latest with first_day <= p_day).';

-- +goose StatementBegin
CREATE FUNCTION farm_day_start(p_farm text, p_day date) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT local_day_start((farm_day_version(p_farm, p_day - 1)).timezone, p_day)
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_start(text, date) IS 'Start of farm-local day p_day: the end of the day before, midnight in the zone of the version governing that day. A day ends at midnight in its own zone, so days tile time and a zone change moves no day before the one it starts on (that day starts at the old midnight).';

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

CREATE VIEW turbine_history AS
SELECT v.turbine_id, v.farm_id, v.shard_name, v.cadence_seconds, v.commissioned_at, v.decommissioned_at,
       v.valid_from, v.valid_to, a.fleet_hash, a.applied_by, a.applied_at
FROM turbine_version v JOIN fleet_apply a ON a.id = v.apply_id;
COMMENT ON VIEW turbine_history IS 'What the registry said about each turbine over time: its farm, shard, cadence and service interval in force over [valid_from, valid_to) (valid_to NULL = now). Where was T at instant X: WHERE turbine_id = T AND valid_from <= X AND (valid_to IS NULL OR valid_to > X).';
COMMENT ON COLUMN turbine_history.turbine_id IS 'The turbine.';
COMMENT ON COLUMN turbine_history.farm_id IS 'The farm it belonged to.';
COMMENT ON COLUMN turbine_history.shard_name IS 'The shard that held its readings.';
COMMENT ON COLUMN turbine_history.cadence_seconds IS 'Seconds between readings under this version.';
COMMENT ON COLUMN turbine_history.commissioned_at IS 'Start of service as this version recorded it (NULL = always).';
COMMENT ON COLUMN turbine_history.decommissioned_at IS 'End of service as this version recorded it (NULL = in service).';
COMMENT ON COLUMN turbine_history.applied_at IS 'When the apply that wrote it committed.';
COMMENT ON COLUMN turbine_history.valid_from IS 'Start of the version; -infinity for the version made from the registry before it kept history.';
COMMENT ON COLUMN turbine_history.valid_to IS 'Where the next version starts; NULL = in force now.';
COMMENT ON COLUMN turbine_history.fleet_hash IS 'sha256 of the fleet file that wrote the version.';
COMMENT ON COLUMN turbine_history.applied_by IS 'The database user who applied it.';

GRANT SELECT ON fleet_apply, farm_version, turbine_version, farm_history, turbine_history TO galewatch_reporting;

-- +goose Down
DROP VIEW turbine_history;
DROP VIEW farm_history;
DROP FUNCTION farm_day_start(text, date);
DROP FUNCTION farm_day_version(text, date);
DROP TABLE turbine_version;
DROP TABLE farm_version;
DROP TABLE fleet_apply;
