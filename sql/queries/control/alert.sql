-- alert: divergence and completeness alerts, raised once per farm window or day.

-- AlertDivergenceRaise raises (or refreshes) a divergence alert for each of
-- the farm's reconciliation rows of the given days whose received or
-- available diverges by more than the farm's threshold, per mille of the
-- final; an alert whose divergence has come back under it is left as raised
-- (it happened) with its latest counts.
-- name: AlertDivergenceRaise :execrows
INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, threshold_pm, detail, message)
SELECT 'divergence', r.farm_id, r.scope, r.period_start, r.day, sqlc.arg(raised_at)::timestamptz, fr.divergence_alert_pm,
       jsonb_build_object('fast_received', r.fast_received, 'final_received', r.final_received,
                          'fast_available', r.fast_available, 'final_available', r.final_available,
                          'windows', r.windows, 'final_revision', r.final_revision),
       format('%s %s %s: fast %s received / %s available, final %s / %s (threshold %s per mille)',
              r.farm_id, r.scope, r.period_start, r.fast_received, r.fast_available, r.final_received, r.final_available,
              fr.divergence_alert_pm)
FROM reconciliation r
JOIN farm_rules fr ON fr.farm_id = r.farm_id
WHERE r.farm_id = sqlc.arg(farm_id) AND r.day = ANY (sqlc.arg(days)::date[]) AND r.measured_at = sqlc.arg(raised_at)::timestamptz
  AND (abs(r.final_received - r.fast_received) * 1000 > fr.divergence_alert_pm * r.final_received
       OR abs(r.final_available - r.fast_available) * 1000 > fr.divergence_alert_pm * r.final_available)
ON CONFLICT (kind, farm_id, scope, period_start) DO UPDATE
SET detail = EXCLUDED.detail, message = EXCLUDED.message, threshold_pm = EXCLUDED.threshold_pm;

-- AlertRaise raises (or refreshes) one alert.
-- name: AlertRaise :exec
INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, threshold_pm, detail, message)
VALUES (sqlc.arg(kind), sqlc.arg(farm_id), sqlc.arg(scope), sqlc.arg(period_start), sqlc.arg(day), sqlc.arg(raised_at), sqlc.narg(threshold_pm), sqlc.arg(detail), sqlc.arg(message))
ON CONFLICT (kind, farm_id, scope, period_start) DO UPDATE
SET detail = EXCLUDED.detail, message = EXCLUDED.message, threshold_pm = EXCLUDED.threshold_pm;

-- AlertMetrics counts the alerts of each farm and kind (an alert stays
-- once raised: it is the record that the condition happened) and when the
-- latest was raised: from alert_count, kept up to date by the statements
-- that raise alerts (control 00017), one row per farm and kind.
-- name: AlertMetrics :many
SELECT farm_id, kind, alerts, last_raised_at
FROM alert_count
ORDER BY farm_id, kind;
