-- +goose Up
-- Rules of the windows, in the one place rules live.
ALTER TABLE fleet_rules
    ADD COLUMN allowed_lateness_s     integer NOT NULL DEFAULT 60 CHECK (allowed_lateness_s >= 0 AND allowed_lateness_s <= 86400),
    ADD COLUMN divergence_alert_pm    integer NOT NULL DEFAULT 30 CHECK (divergence_alert_pm > 0),
    ADD COLUMN completeness_alert_pm  integer NOT NULL DEFAULT 10 CHECK (completeness_alert_pm > 0 AND completeness_alert_pm <= 1000),
    ALTER COLUMN window_s SET DEFAULT 60,
    ALTER COLUMN mark_margin_s SET DEFAULT 30,
    DROP CONSTRAINT fleet_rules_mark_margin_s_check,
    ADD CONSTRAINT fleet_rules_mark_margin_s_check CHECK (mark_margin_s >= 30);
-- The built-in defaults moved (window 600 s → 60 s, margin 300 s → 30 s);
-- a row still holding the old built-ins takes the new ones (fleet apply
-- writes the fleet file's values over them anyway).
UPDATE fleet_rules SET window_s = 60, mark_margin_s = 30 WHERE window_s = 600 AND mark_margin_s = 300;
COMMENT ON COLUMN fleet_rules.window_s IS 'Event-time window length of the fast path and of corrections (default 60 s; 600 s is the 10-minute SCADA convention), counted from farm-local midnight. Also the unit of the dirty-mark rule.';
COMMENT ON COLUMN fleet_rules.mark_margin_s IS 'The write bound of the dirty-mark rule: an inserted reading marks its turbine-window when written at or after (window end + allowed lateness - this margin). At least 30 s: ingest bounds a write transaction at 20 s.';
COMMENT ON COLUMN fleet_rules.allowed_lateness_s IS 'The fast path publishes a window once its end + this much has passed on the clock (the watermark is now - allowed lateness). orchestrator lateness measures what it should be.';
COMMENT ON COLUMN fleet_rules.divergence_alert_pm IS 'A final window or farm-day whose received or available differs from the fast number by more than this, per mille of the final, raises a divergence alert.';
COMMENT ON COLUMN fleet_rules.completeness_alert_pm IS 'A closed farm-day whose received falls short of expected by more than this, per mille, raises a completeness alert naming the silent turbines and hours.';

ALTER TABLE farm
    ADD COLUMN allowed_lateness_s     integer CHECK (allowed_lateness_s >= 0 AND allowed_lateness_s <= 86400),
    ADD COLUMN divergence_alert_pm    integer CHECK (divergence_alert_pm > 0),
    ADD COLUMN completeness_alert_pm  integer CHECK (completeness_alert_pm > 0 AND completeness_alert_pm <= 1000),
    DROP CONSTRAINT farm_mark_margin_s_check,
    ADD CONSTRAINT farm_mark_margin_s_check CHECK (mark_margin_s >= 30);
COMMENT ON COLUMN farm.allowed_lateness_s IS 'Override of fleet_rules.allowed_lateness_s; NULL = the fleet default.';
COMMENT ON COLUMN farm.divergence_alert_pm IS 'Override of fleet_rules.divergence_alert_pm; NULL = the fleet default.';
COMMENT ON COLUMN farm.completeness_alert_pm IS 'Override of fleet_rules.completeness_alert_pm; NULL = the fleet default.';

CREATE OR REPLACE VIEW farm_rules AS
SELECT f.id AS farm_id,
       coalesce(f.lane_threshold_ms, r.lane_threshold_ms)   AS lane_threshold_ms,
       coalesce(f.early_tolerance_ms, r.early_tolerance_ms) AS early_tolerance_ms,
       coalesce(f.future_limit_s, r.future_limit_s)         AS future_limit_s,
       coalesce(f.max_age_days, r.max_age_days)             AS max_age_days,
       coalesce(f.window_s, r.window_s)                     AS window_s,
       coalesce(f.mark_margin_s, r.mark_margin_s)           AS mark_margin_s,
       coalesce(f.allowed_lateness_s, r.allowed_lateness_s) AS allowed_lateness_s,
       coalesce(f.divergence_alert_pm, r.divergence_alert_pm) AS divergence_alert_pm,
       coalesce(f.completeness_alert_pm, r.completeness_alert_pm) AS completeness_alert_pm
FROM farm f CROSS JOIN fleet_rules r;
COMMENT ON COLUMN farm_rules.allowed_lateness_s IS 'Allowed lateness of the fast path in force, s.';
COMMENT ON COLUMN farm_rules.divergence_alert_pm IS 'Divergence alert threshold in force, per mille.';
COMMENT ON COLUMN farm_rules.completeness_alert_pm IS 'Completeness alert threshold in force, per mille short of expected.';

ALTER TABLE turbine_day ADD COLUMN silent_hours integer[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN turbine_day.silent_hours IS 'Local hours of the day (0 = the hour from local midnight) in which the turbine expected readings and received none.';

-- Farm-level window numbers. path 'fast': published once by the fast path
-- when the window's end + allowed lateness has passed, never overwritten.
-- path 'final': written by rollup_day jobs (a correction after late
-- readings, or the close of the day), overwritten on each recompute with
-- revision + 1. Counts only; rates are computed at read time.
CREATE TABLE farm_window (
    farm_id           text NOT NULL REFERENCES farm (id),
    window_start      timestamptz NOT NULL,
    path              text NOT NULL CHECK (path IN ('fast', 'final')),
    window_end        timestamptz NOT NULL,
    day               date NOT NULL,
    expected          bigint NOT NULL,
    received          bigint NOT NULL,
    available         bigint NOT NULL,
    late              bigint NOT NULL,
    readings          bigint NOT NULL,
    computed_at       timestamptz NOT NULL,
    complete_through  timestamptz NOT NULL,
    revision          integer NOT NULL,
    job_id            bigint,
    PRIMARY KEY (farm_id, window_start, path)
);
CREATE INDEX farm_window_day_idx ON farm_window (farm_id, day);
COMMENT ON TABLE farm_window IS 'A farm''s counts per event-time window, by path: fast (published once at the watermark) and final (corrected by late readings, rewritten with a new revision). Sum of every turbine of the farm on every shard.';
COMMENT ON COLUMN farm_window.path IS 'fast: published at window end + allowed lateness, never changed. final: recomputed after late readings or at the close of the day.';
COMMENT ON COLUMN farm_window.day IS 'The farm-local day holding the window.';
COMMENT ON COLUMN farm_window.expected IS 'Cadence slots starting in the window, over the farm''s turbines in service.';
COMMENT ON COLUMN farm_window.received IS 'Of those, slots with a reading.';
COMMENT ON COLUMN farm_window.available IS 'Of those, slots reported available.';
COMMENT ON COLUMN farm_window.late IS 'Readings of the window that came in the backfill lane.';
COMMENT ON COLUMN farm_window.readings IS 'Readings of the window counted (received slots'' readings, beyond cadence, out of service), all turbines.';
COMMENT ON COLUMN farm_window.computed_at IS 'When the row was written (for fast: its publication).';
COMMENT ON COLUMN farm_window.complete_through IS 'The watermark the row is complete through: computed_at - allowed lateness. Readings of the window that arrived after it are in a later final revision.';
COMMENT ON COLUMN farm_window.revision IS 'fast: 0. final: 1 on first write, + 1 on each rewrite.';

-- The final numbers per shard, from which a final farm_window row is
-- summed. shard_xid orders writes: a part computed from an older shard
-- snapshot never replaces a newer one.
CREATE TABLE farm_window_part (
    farm_id       text NOT NULL REFERENCES farm (id),
    window_start  timestamptz NOT NULL,
    shard_name    text NOT NULL,
    window_end    timestamptz NOT NULL,
    day           date NOT NULL,
    expected      bigint NOT NULL,
    received      bigint NOT NULL,
    available     bigint NOT NULL,
    late          bigint NOT NULL,
    readings      bigint NOT NULL,
    shard_xid     bigint NOT NULL,
    computed_at   timestamptz NOT NULL,
    PRIMARY KEY (farm_id, window_start, shard_name)
);
CREATE INDEX farm_window_part_day_idx ON farm_window_part (farm_id, day);
COMMENT ON TABLE farm_window_part IS 'One shard''s share of a farm''s window (its turbines of the farm). Written by the fast path and rollup_day jobs; a final farm_window row is the sum over the farm''s shards.';
COMMENT ON COLUMN farm_window_part.shard_xid IS 'The shard transaction that computed it (pg_current_xact_id): writes of one farm-day on a shard are serialised, so a larger id is a newer snapshot.';

-- Fast against final, measured each time a final row is written. Counts
-- only: reconciliation_pm gives the per mille divergence at read time.
CREATE TABLE reconciliation (
    farm_id            text NOT NULL REFERENCES farm (id),
    scope              text NOT NULL CHECK (scope IN ('window', 'day')),
    period_start       timestamptz NOT NULL,
    day                date NOT NULL,
    fast_expected      bigint NOT NULL,
    fast_received      bigint NOT NULL,
    fast_available     bigint NOT NULL,
    final_expected     bigint NOT NULL,
    final_received     bigint NOT NULL,
    final_available    bigint NOT NULL,
    windows            integer NOT NULL,
    final_revision     integer NOT NULL,
    measured_at        timestamptz NOT NULL,
    PRIMARY KEY (farm_id, scope, period_start)
);
CREATE INDEX reconciliation_day_idx ON reconciliation (farm_id, day);
COMMENT ON TABLE reconciliation IS 'The fast number against the final one, per window and per farm-day, as last measured (each final write re-measures). Per mille in reconciliation_pm.';
COMMENT ON COLUMN reconciliation.scope IS 'window: one window (period_start = its start). day: the farm-local day''s windows that have both a fast and a final row (period_start = the day''s start).';
COMMENT ON COLUMN reconciliation.windows IS 'Windows compared (1 for scope window).';
COMMENT ON COLUMN reconciliation.final_revision IS 'The final row''s revision measured (for a day: the sum of its windows'' revisions).';

CREATE VIEW reconciliation_pm AS
SELECT r.*,
       CASE WHEN r.final_received = 0 THEN 0 ELSE round(1000.0 * (r.final_received - r.fast_received) / r.final_received, 3) END AS received_divergence_pm,
       CASE WHEN r.final_available = 0 THEN 0 ELSE round(1000.0 * (r.final_available - r.fast_available) / r.final_available, 3) END AS available_divergence_pm
FROM reconciliation r;
COMMENT ON VIEW reconciliation_pm IS 'reconciliation with the divergence (final - fast) / final in per mille, computed at read time.';

-- Alerts: divergence above the farm's threshold, a closed day short of its
-- expected readings, and the bug alarm when a day's windows do not add up
-- to its turbine_day rows. One row per (kind, farm, period), updated.
CREATE TABLE alert (
    kind          text NOT NULL CHECK (kind IN ('divergence', 'completeness', 'window_sum')),
    farm_id       text NOT NULL REFERENCES farm (id),
    scope         text NOT NULL CHECK (scope IN ('window', 'day')),
    period_start  timestamptz NOT NULL,
    day           date NOT NULL,
    raised_at     timestamptz NOT NULL,
    threshold_pm  integer,
    detail        jsonb NOT NULL,
    message       text NOT NULL,
    PRIMARY KEY (kind, farm_id, scope, period_start)
);
CREATE INDEX alert_raised_idx ON alert (raised_at);
COMMENT ON TABLE alert IS 'Raised conditions: divergence (fast vs final above divergence_alert_pm), completeness (a closed day short of expected by more than completeness_alert_pm; detail names the silent turbines and hours), window_sum (a bug alarm: a day''s windows do not add up to its turbine_day rows).';
COMMENT ON COLUMN alert.detail IS 'The counts measured (and for completeness, the silent turbines and their silent hours).';

COMMENT ON COLUMN farm_window.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_window.window_start IS 'Window start: farm-local midnight + k * window_s.';
COMMENT ON COLUMN farm_window.window_end IS 'Window end (the day''s end for a last window cut short).';
COMMENT ON COLUMN farm_window.job_id IS 'The River job that wrote the row (publish_windows or rollup_day); NULL outside River.';
COMMENT ON COLUMN farm_window_part.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_window_part.window_start IS 'Window start.';
COMMENT ON COLUMN farm_window_part.shard_name IS 'The shard whose turbines of the farm this part sums.';
COMMENT ON COLUMN farm_window_part.window_end IS 'Window end.';
COMMENT ON COLUMN farm_window_part.day IS 'The farm-local day holding the window.';
COMMENT ON COLUMN farm_window_part.expected IS 'Cadence slots starting in the window, this shard''s turbines of the farm.';
COMMENT ON COLUMN farm_window_part.received IS 'Of those, slots with a reading.';
COMMENT ON COLUMN farm_window_part.available IS 'Of those, slots reported available.';
COMMENT ON COLUMN farm_window_part.late IS 'Readings of the window that came in the backfill lane.';
COMMENT ON COLUMN farm_window_part.readings IS 'Readings of the window counted.';
COMMENT ON COLUMN farm_window_part.computed_at IS 'Clock of the computation that wrote the part.';
COMMENT ON COLUMN reconciliation.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN reconciliation.period_start IS 'Window start (scope window) or the farm-local day''s start (scope day).';
COMMENT ON COLUMN reconciliation.day IS 'The farm-local day.';
COMMENT ON COLUMN reconciliation.fast_expected IS 'Expected slots in the fast row(s).';
COMMENT ON COLUMN reconciliation.fast_received IS 'Received slots in the fast row(s).';
COMMENT ON COLUMN reconciliation.fast_available IS 'Available slots in the fast row(s).';
COMMENT ON COLUMN reconciliation.final_expected IS 'Expected slots in the final row(s).';
COMMENT ON COLUMN reconciliation.final_received IS 'Received slots in the final row(s).';
COMMENT ON COLUMN reconciliation.final_available IS 'Available slots in the final row(s).';
COMMENT ON COLUMN reconciliation.measured_at IS 'When this comparison was made (the final write that triggered it).';
COMMENT ON COLUMN reconciliation_pm.farm_id IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.scope IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.period_start IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.day IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.fast_expected IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.fast_received IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.fast_available IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.final_expected IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.final_received IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.final_available IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.windows IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.final_revision IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.measured_at IS 'See reconciliation.';
COMMENT ON COLUMN reconciliation_pm.received_divergence_pm IS '(final_received - fast_received) / final_received, per mille (0 when final_received is 0).';
COMMENT ON COLUMN reconciliation_pm.available_divergence_pm IS '(final_available - fast_available) / final_available, per mille (0 when final_available is 0).';
COMMENT ON COLUMN alert.kind IS 'divergence, completeness or window_sum (a bug alarm).';
COMMENT ON COLUMN alert.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN alert.scope IS 'window or day.';
COMMENT ON COLUMN alert.period_start IS 'The window''s start, or the farm-local day''s start.';
COMMENT ON COLUMN alert.day IS 'The farm-local day.';
COMMENT ON COLUMN alert.raised_at IS 'When first raised (later measurements update detail and message, not this).';
COMMENT ON COLUMN alert.threshold_pm IS 'The threshold in force when raised, per mille (NULL for a bug alarm).';
COMMENT ON COLUMN alert.message IS 'One line for an operator.';

-- +goose Down
ALTER TABLE turbine_day DROP COLUMN silent_hours;
DROP TABLE alert;
DROP VIEW reconciliation_pm;
DROP TABLE reconciliation;
DROP TABLE farm_window_part;
DROP TABLE farm_window;
DROP VIEW farm_rules;
CREATE VIEW farm_rules AS
SELECT f.id AS farm_id,
       coalesce(f.lane_threshold_ms, r.lane_threshold_ms)   AS lane_threshold_ms,
       coalesce(f.early_tolerance_ms, r.early_tolerance_ms) AS early_tolerance_ms,
       coalesce(f.future_limit_s, r.future_limit_s)         AS future_limit_s,
       coalesce(f.max_age_days, r.max_age_days)             AS max_age_days,
       coalesce(f.window_s, r.window_s)                     AS window_s,
       coalesce(f.mark_margin_s, r.mark_margin_s)           AS mark_margin_s
FROM farm f CROSS JOIN fleet_rules r;
ALTER TABLE farm DROP COLUMN allowed_lateness_s, DROP COLUMN divergence_alert_pm, DROP COLUMN completeness_alert_pm;
ALTER TABLE fleet_rules DROP COLUMN allowed_lateness_s, DROP COLUMN divergence_alert_pm, DROP COLUMN completeness_alert_pm;
