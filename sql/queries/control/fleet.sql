-- fleet_rules (the fleet-wide rules) and counts over the whole registry.

-- FleetRulesPut sets the fleet-wide defaults and the fleet-wide reject
-- rules (the fleet file's rules:).
-- name: FleetRulesPut :exec
UPDATE fleet_rules
SET lane_threshold_ms = @lane_threshold_ms, early_tolerance_ms = @early_tolerance_ms,
    future_limit_s = @future_limit_s, max_age_days = @max_age_days,
    window_s = @window_s, mark_margin_s = @mark_margin_s,
    allowed_lateness_s = @allowed_lateness_s, divergence_alert_pm = @divergence_alert_pm,
    completeness_alert_pm = @completeness_alert_pm,
    power_min_kw = @power_min_kw, power_max_kw = @power_max_kw, wind_max_ms = @wind_max_ms,
    reject_rows_kept = @reject_rows_kept, reject_retention_days = @reject_retention_days, updated_at = now()
WHERE (lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s, mark_margin_s,
       allowed_lateness_s, divergence_alert_pm, completeness_alert_pm, power_min_kw, power_max_kw, wind_max_ms,
       reject_rows_kept, reject_retention_days)
      IS DISTINCT FROM (@lane_threshold_ms, @early_tolerance_ms, @future_limit_s, @max_age_days, @window_s, @mark_margin_s,
       @allowed_lateness_s, @divergence_alert_pm, @completeness_alert_pm, @power_min_kw, @power_max_kw, @wind_max_ms,
       @reject_rows_kept, @reject_retention_days);

-- FleetRulesRejects is what ingest keeps of refused lines, and for how long
-- (fleet_rules, from the fleet file's rules:).
-- name: FleetRulesRejects :one
SELECT reject_rows_kept, reject_retention_days FROM fleet_rules;

-- name: FleetCounts :one
SELECT (SELECT count(*) FROM shard)::bigint AS shards,
       (SELECT count(*) FROM farm)::bigint AS farms,
       (SELECT count(*) FROM turbine WHERE in_fleet_file)::bigint AS turbines,
       (SELECT count(*) FROM turbine WHERE NOT in_fleet_file)::bigint AS retired;
