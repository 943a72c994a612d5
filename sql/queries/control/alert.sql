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

-- AlertCompletenessRaise raises (or refreshes) a closed farm-day's
-- completeness alert when its received is short of its expected (turbines
-- in service, every shard) by more than the farm's completeness_alert_pm,
-- naming its silent turbines with their silent local hours. Returns the
-- rows raised: 1, or 0 when the day is complete enough (or expects none).
-- name: AlertCompletenessRaise :execrows
INSERT INTO alert (kind, farm_id, scope, period_start, day, raised_at, threshold_pm, detail, message)
SELECT 'completeness', c.farm_id, 'day', c.day_start, sqlc.arg(day)::date, sqlc.arg(raised_at)::timestamptz, c.threshold_pm, c.silent,
       format('%s %s: received %s of %s expected readings, short by more than %s per mille',
              c.farm_id, to_char(sqlc.arg(day)::date, 'YYYY-MM-DD'), c.received, c.expected, c.threshold_pm)
FROM (SELECT f.id AS farm_id,
             coalesce(sum(td.expected), 0)::bigint AS expected,
             coalesce(sum(td.received), 0)::bigint AS received,
             fr.completeness_alert_pm::integer AS threshold_pm,
             coalesce(jsonb_agg(jsonb_build_object('turbine_id', td.turbine_id, 'silent_hours', td.silent_hours, 'expected', td.expected, 'received', td.received)
                                ORDER BY td.turbine_id) FILTER (WHERE cardinality(td.silent_hours) > 0), '[]')::jsonb AS silent,
             local_day_start(f.timezone, sqlc.arg(day)::date)::timestamptz AS day_start
      FROM farm f
      JOIN farm_rules fr ON fr.farm_id = f.id
      LEFT JOIN turbine_day td ON td.farm_id = f.id AND td.day = sqlc.arg(day)
      WHERE f.id = sqlc.arg(farm_id)
      GROUP BY f.id, fr.completeness_alert_pm, f.timezone) AS c
WHERE c.expected > 0 AND (c.expected - c.received) * 1000 > c.threshold_pm::bigint * c.expected
ON CONFLICT (kind, farm_id, scope, period_start) DO UPDATE
SET detail = EXCLUDED.detail, message = EXCLUDED.message, threshold_pm = EXCLUDED.threshold_pm;
