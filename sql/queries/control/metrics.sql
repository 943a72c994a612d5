-- MetricsPublication is each farm's latest fast window (publish_lag) and how
-- far its watermark is behind @now (farm_freshness's behind_s, on the
-- caller's clock). The latest window published carries the latest
-- watermark as long as the farm's allowed lateness has not been raised
-- since. A farm the fast path has not published yet has no row. It reads
-- one window per farm through the key, where farm_freshness aggregates
-- every fast window of the farm: /metrics is scraped every few seconds.
-- name: MetricsPublication :many
SELECT f.id AS farm_id, w.window_end, w.lag_ms::bigint AS lag_ms,
       extract(epoch FROM sqlc.arg(now)::timestamptz - w.complete_through)::float8 AS behind_s
FROM farm f
CROSS JOIN LATERAL (
    SELECT pl.window_end, pl.lag_ms, fw.complete_through
    FROM publish_lag pl
    JOIN farm_window fw ON fw.farm_id = pl.farm_id AND fw.window_start = pl.window_start AND fw.path = 'fast'
    WHERE pl.farm_id = f.id
    ORDER BY pl.window_start DESC
    LIMIT 1
) w
ORDER BY f.id;

-- MetricsDivergence is, per farm and scope (window, day), the latest period
-- measured fast against final (reconciliation_pm): its divergence in per
-- mille of the final, received and available. One row per farm and scope,
-- read through the key.
-- name: MetricsDivergence :many
SELECT f.id AS farm_id, s.scope::text AS scope, r.period_start,
       r.received_divergence_pm::float8 AS received_pm, r.available_divergence_pm::float8 AS available_pm
FROM farm f
CROSS JOIN (VALUES ('window'), ('day')) AS s (scope)
CROSS JOIN LATERAL (
    SELECT rp.period_start, rp.received_divergence_pm, rp.available_divergence_pm
    FROM reconciliation_pm rp
    WHERE rp.farm_id = f.id AND rp.scope = s.scope
    ORDER BY rp.period_start DESC
    LIMIT 1
) r
ORDER BY f.id, s.scope;

-- MetricsAlerts counts the alerts of each farm and kind (an alert stays
-- once raised: it is the record that the condition happened) and when the
-- latest was raised: from alert_count, kept up to date by the statements
-- that raise alerts (control 00017), one row per farm and kind.
-- name: MetricsAlerts :many
SELECT farm_id, kind, alerts, last_raised_at
FROM alert_count
ORDER BY farm_id, kind;

-- MetricsRollupPending counts the recomputes requested by the drain whose
-- job has not started, per farm and shard, and the age of the oldest on
-- the caller's clock.
-- name: MetricsRollupPending :many
SELECT farm_id, shard_name, count(*)::bigint AS requests,
       extract(epoch FROM sqlc.arg(now)::timestamptz - min(requested_at))::float8 AS oldest_s
FROM rollup_pending
GROUP BY farm_id, shard_name
ORDER BY farm_id, shard_name;

-- MetricsFarmShards lists every farm and shard that holds turbines of it
-- (retired ones included: their history is there), so a backlog gauge can
-- say 0 rather than be absent.
-- name: MetricsFarmShards :many
SELECT DISTINCT farm_id, shard_name FROM turbine ORDER BY farm_id, shard_name;
