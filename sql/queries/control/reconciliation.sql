-- reconciliation: per farm window, the fast number against the final one (the divergence, in counts).

-- ReconciliationWrite measures fast against final for the given windows that
-- have both rows and, with with_days, for their farm-local days (every
-- window of the day with both rows). Without with_days it reads the given
-- windows' span only: a correction written in ranges measures each range's
-- windows as it writes them and its day once, with its last range (the day
-- re-read for every range was a quarter of the control side's work).
-- name: ReconciliationWrite :exec
-- Every read is one range scan of farm_window, with no join (the windows'
-- span, then their days' bounds), so the plan holds with or without
-- statistics and never scans the farm's history, which grows daily (a
-- join or a probe per window was planned as a scan per window on an
-- unanalysed table). TestControlWritesReadTheirWindows.
WITH touched AS (
    SELECT DISTINCT w.day
    FROM farm_window w
    WHERE w.farm_id = sqlc.arg(farm_id)
      AND w.window_start >= (SELECT min(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x)
      AND w.window_start <= (SELECT max(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x)
      AND w.window_start = ANY (sqlc.arg(window_starts)::timestamptz[])
), span AS (
    -- a window of day d starts in [local_day_start(d), local_day_start(d + 1));
    -- without the days, the given windows' span
    SELECT CASE WHEN sqlc.arg(with_days)::boolean THEN local_day_start(f.timezone, min(d.day))
                ELSE (SELECT min(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x) END AS lo,
           CASE WHEN sqlc.arg(with_days)::boolean THEN local_day_start(f.timezone, max(d.day) + 1)
                ELSE (SELECT max(x) FROM unnest(sqlc.arg(window_starts)::timestamptz[]) AS x) + interval '1 microsecond' END AS hi
    FROM touched d CROSS JOIN farm f WHERE f.id = sqlc.arg(farm_id)
    GROUP BY f.timezone
), pairs AS (
    -- each window's fast and final rows, from one scan
    SELECT w.farm_id, w.window_start, max(w.day) AS day,
           max(w.expected) FILTER (WHERE w.path = 'fast') AS fast_expected,
           max(w.received) FILTER (WHERE w.path = 'fast') AS fast_received,
           max(w.available) FILTER (WHERE w.path = 'fast') AS fast_available,
           max(w.expected) FILTER (WHERE w.path = 'final') AS final_expected,
           max(w.received) FILTER (WHERE w.path = 'final') AS final_received,
           max(w.available) FILTER (WHERE w.path = 'final') AS final_available,
           max(w.revision) FILTER (WHERE w.path = 'final') AS revision
    FROM farm_window w
    WHERE w.farm_id = sqlc.arg(farm_id)
      AND w.window_start >= (SELECT lo FROM span) AND w.window_start < (SELECT hi FROM span)
      AND w.day IN (SELECT d.day FROM touched d)
    GROUP BY w.farm_id, w.window_start
    -- both rows, of the same window: a fast row published on an earlier
    -- grid is not the final row's window (FarmWindowPartOffGridDelete)
    HAVING count(*) FILTER (WHERE w.path = 'fast') = 1 AND count(*) FILTER (WHERE w.path = 'final') = 1
       AND min(w.window_end) = max(w.window_end)
), win AS (
    INSERT INTO reconciliation (farm_id, scope, period_start, day, fast_expected, fast_received, fast_available,
                                final_expected, final_received, final_available, windows, final_revision, measured_at)
    SELECT farm_id, 'window', window_start, day, fast_expected, fast_received, fast_available,
           final_expected, final_received, final_available, 1, revision, sqlc.arg(measured_at)::timestamptz
    FROM pairs
    WHERE window_start IN (SELECT unnest(sqlc.arg(window_starts)::timestamptz[]))
    ON CONFLICT (farm_id, scope, period_start) DO UPDATE
    SET fast_expected = EXCLUDED.fast_expected, fast_received = EXCLUDED.fast_received, fast_available = EXCLUDED.fast_available,
        final_expected = EXCLUDED.final_expected, final_received = EXCLUDED.final_received,
        final_available = EXCLUDED.final_available, final_revision = EXCLUDED.final_revision, measured_at = EXCLUDED.measured_at
    RETURNING farm_id
), days AS (
    INSERT INTO reconciliation (farm_id, scope, period_start, day, fast_expected, fast_received, fast_available,
                                final_expected, final_received, final_available, windows, final_revision, measured_at)
    SELECT p.farm_id, 'day', local_day_start(f.timezone, p.day), p.day,
           sum(p.fast_expected), sum(p.fast_received), sum(p.fast_available),
           sum(p.final_expected), sum(p.final_received), sum(p.final_available), count(*), sum(p.revision), sqlc.arg(measured_at)::timestamptz
    FROM pairs p JOIN farm f ON f.id = p.farm_id
    WHERE sqlc.arg(with_days)::boolean
    GROUP BY p.farm_id, p.day, f.timezone
    ON CONFLICT (farm_id, scope, period_start) DO UPDATE
    SET fast_expected = EXCLUDED.fast_expected, fast_received = EXCLUDED.fast_received, fast_available = EXCLUDED.fast_available,
        final_expected = EXCLUDED.final_expected, final_received = EXCLUDED.final_received,
        final_available = EXCLUDED.final_available, windows = EXCLUDED.windows,
        final_revision = EXCLUDED.final_revision, measured_at = EXCLUDED.measured_at
    RETURNING farm_id
)
SELECT (SELECT count(*) FROM win) + (SELECT count(*) FROM days);

-- ReconciliationMetrics is, per farm and scope (window, day), the latest period
-- measured fast against final (reconciliation_pm): its divergence in per
-- mille of the final, received and available. One row per farm and scope,
-- read through the key.
-- name: ReconciliationMetrics :many
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
