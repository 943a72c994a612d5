-- +goose Up
-- The rules that define a stored count live here, once: fleet-wide defaults
-- (one row) and per-farm overrides (NULL = the default), both from the
-- fleet file. Ingest and the rollup read the effective values from
-- farm_rules; no process flag or environment variable changes them.
CREATE TABLE fleet_rules (
    id                  boolean PRIMARY KEY DEFAULT true CHECK (id),
    lane_threshold_ms   integer NOT NULL DEFAULT 60000 CHECK (lane_threshold_ms > 0),
    early_tolerance_ms  integer NOT NULL DEFAULT 2000 CHECK (early_tolerance_ms >= 0),
    future_limit_s      integer NOT NULL DEFAULT 86400 CHECK (future_limit_s > 0),
    max_age_days        integer NOT NULL DEFAULT 400 CHECK (max_age_days > 0),
    window_s            integer NOT NULL DEFAULT 600 CHECK (window_s > 0),
    mark_margin_s       integer NOT NULL DEFAULT 300 CHECK (mark_margin_s >= 120),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
INSERT INTO fleet_rules DEFAULT VALUES;
COMMENT ON TABLE fleet_rules IS 'Fleet-wide defaults of the rules that define stored counts (one row, from the fleet file''s rules: section). A farm may override each one (farm.*); farm_rules gives the effective values.';
COMMENT ON COLUMN fleet_rules.id IS 'Always true: the table holds one row.';
COMMENT ON COLUMN fleet_rules.lane_threshold_ms IS 'A reading whose recorded_at is more than this behind its received_at is backfill lane, and counted in turbine_day.late.';
COMMENT ON COLUMN fleet_rules.early_tolerance_ms IS 'A reading whose recorded_at is more than this ahead of its received_at is early (a fast clock), counted in turbine_day.early.';
COMMENT ON COLUMN fleet_rules.future_limit_s IS 'A clock further ahead than this is rejected at ingest: recorded_at of received_at, or either of the ingest clock.';
COMMENT ON COLUMN fleet_rules.max_age_days IS 'A reading recorded longer ago than this (by the ingest clock) is rejected at ingest.';
COMMENT ON COLUMN fleet_rules.window_s IS 'Event-time window length: the unit of the dirty-mark rule (windows counted from farm-local midnight).';
COMMENT ON COLUMN fleet_rules.mark_margin_s IS 'A reading written at or after (end of its window - this margin) marks its farm-day dirty. At least 120 s: a write transaction is bounded well below it.';
COMMENT ON COLUMN fleet_rules.updated_at IS 'When a fleet apply last changed the defaults.';

ALTER TABLE farm
    ADD COLUMN lane_threshold_ms   integer CHECK (lane_threshold_ms > 0),
    ADD COLUMN early_tolerance_ms  integer CHECK (early_tolerance_ms >= 0),
    ADD COLUMN future_limit_s      integer CHECK (future_limit_s > 0),
    ADD COLUMN max_age_days        integer CHECK (max_age_days > 0),
    ADD COLUMN window_s            integer CHECK (window_s > 0),
    ADD COLUMN mark_margin_s       integer CHECK (mark_margin_s >= 120);
COMMENT ON COLUMN farm.lane_threshold_ms IS 'Override of fleet_rules.lane_threshold_ms for this farm; NULL = the fleet default.';
COMMENT ON COLUMN farm.early_tolerance_ms IS 'Override of fleet_rules.early_tolerance_ms; NULL = the fleet default.';
COMMENT ON COLUMN farm.future_limit_s IS 'Override of fleet_rules.future_limit_s; NULL = the fleet default.';
COMMENT ON COLUMN farm.max_age_days IS 'Override of fleet_rules.max_age_days; NULL = the fleet default.';
COMMENT ON COLUMN farm.window_s IS 'Override of fleet_rules.window_s (e.g. 600 for the 10-minute SCADA convention); NULL = the fleet default.';
COMMENT ON COLUMN farm.mark_margin_s IS 'Override of fleet_rules.mark_margin_s; NULL = the fleet default.';

CREATE VIEW farm_rules AS
SELECT f.id AS farm_id,
       coalesce(f.lane_threshold_ms, r.lane_threshold_ms)   AS lane_threshold_ms,
       coalesce(f.early_tolerance_ms, r.early_tolerance_ms) AS early_tolerance_ms,
       coalesce(f.future_limit_s, r.future_limit_s)         AS future_limit_s,
       coalesce(f.max_age_days, r.max_age_days)             AS max_age_days,
       coalesce(f.window_s, r.window_s)                     AS window_s,
       coalesce(f.mark_margin_s, r.mark_margin_s)           AS mark_margin_s
FROM farm f CROSS JOIN fleet_rules r;
COMMENT ON VIEW farm_rules IS 'The rules in force for each farm: its override, else the fleet default. The one place ingest and the rollup read them from.';
COMMENT ON COLUMN farm_rules.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_rules.lane_threshold_ms IS 'Backfill lane / turbine_day.late threshold in force, ms.';
COMMENT ON COLUMN farm_rules.early_tolerance_ms IS 'Early / turbine_day.early tolerance in force, ms.';
COMMENT ON COLUMN farm_rules.future_limit_s IS 'Future limit in force at ingest, s.';
COMMENT ON COLUMN farm_rules.max_age_days IS 'Maximum age in force at ingest, days.';
COMMENT ON COLUMN farm_rules.window_s IS 'Window of the dirty-mark rule in force, s.';
COMMENT ON COLUMN farm_rules.mark_margin_s IS 'Margin of the dirty-mark rule in force, s.';

-- +goose Down
DROP VIEW farm_rules;
ALTER TABLE farm DROP COLUMN lane_threshold_ms, DROP COLUMN early_tolerance_ms, DROP COLUMN future_limit_s,
    DROP COLUMN max_age_days, DROP COLUMN window_s, DROP COLUMN mark_margin_s;
DROP TABLE fleet_rules;
