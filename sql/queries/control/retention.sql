-- Retention of windows and refused lines (issue 27, item 3), run by the
-- partitions job (internal/provision Partitions).

-- WindowRetentionCuts gives, per farm, its first farm-local day that starts
-- at or after @cut (the UTC midnight before which retention dropped every
-- readings partition): that day's date and start, and the shards holding
-- the farm's turbines. Every day before it lost readings (its rollup is
-- refused) and leaves whole: windows, parts, final rows, reconciliation,
-- alerts. turbine_day stays (the day's number, which the report reads).
-- name: WindowRetentionCuts :many
SELECT f.id AS farm_id, k.day::date AS keep_day, local_day_start(f.timezone, k.day)::timestamptz AS keep_from,
       ARRAY(SELECT DISTINCT t.shard_name FROM turbine t WHERE t.farm_id = f.id ORDER BY 1)::text[] AS shards
FROM farm f
CROSS JOIN LATERAL (SELECT (sqlc.arg(cut)::timestamptz AT TIME ZONE f.timezone)::date AS wall) AS w
CROSS JOIN LATERAL (SELECT CASE WHEN local_day_start(f.timezone, w.wall) >= sqlc.arg(cut)::timestamptz THEN w.wall ELSE w.wall + 1 END AS day) AS k
ORDER BY f.id;

-- WindowRetentionOldestDay is the farm's oldest day before @keep_day that
-- still has a window, part, reconciliation or alert row (each read by its
-- (farm_id, day) index); found is false when there is none.
-- name: WindowRetentionOldestDay :one
SELECT (o.day IS NOT NULL)::boolean AS found, coalesce(o.day, '1970-01-01')::date AS day
FROM (SELECT least((SELECT min(fw.day) FROM farm_window fw WHERE fw.farm_id = sqlc.arg(farm_id) AND fw.day < sqlc.arg(keep_day)::date),
                   (SELECT min(p.day) FROM farm_window_part p WHERE p.farm_id = sqlc.arg(farm_id) AND p.day < sqlc.arg(keep_day)::date),
                   (SELECT min(r.day) FROM reconciliation r WHERE r.farm_id = sqlc.arg(farm_id) AND r.day < sqlc.arg(keep_day)::date),
                   (SELECT min(a.day) FROM alert a WHERE a.farm_id = sqlc.arg(farm_id) AND a.day < sqlc.arg(keep_day)::date)) AS day) AS o;

-- WindowRetentionDeleteDay takes one farm-day out of the control database's
-- window tables in one statement, so the day leaves whole: its fast and
-- final rows, every shard's parts, its reconciliation (windows and day) and
-- its alerts (alert_count follows by its trigger).
-- name: WindowRetentionDeleteDay :one
WITH fw AS (
    DELETE FROM farm_window x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
), p AS (
    DELETE FROM farm_window_part x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
), r AS (
    DELETE FROM reconciliation x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
), a AS (
    DELETE FROM alert x WHERE x.farm_id = sqlc.arg(farm_id) AND x.day = sqlc.arg(day)::date RETURNING 1
)
SELECT (SELECT count(*) FROM fw)::bigint AS windows, (SELECT count(*) FROM p)::bigint AS parts,
       (SELECT count(*) FROM r)::bigint AS reconciliations, (SELECT count(*) FROM a)::bigint AS alerts;

-- RejectRules is what ingest keeps of refused lines, and for how long
-- (fleet_rules, from the fleet file's rules:).
-- name: RejectRules :one
SELECT reject_rows_kept, reject_retention_days FROM fleet_rules;

-- IngestRejectTrim deletes up to @max_rows refused lines rejected before
-- @before (oldest first, by ingest_reject_rejected_at_idx), returning how many.
-- name: IngestRejectTrim :execrows
DELETE FROM ingest_reject
WHERE id = ANY (ARRAY(SELECT r.id FROM ingest_reject r WHERE r.rejected_at < sqlc.arg(before)::timestamptz
                      ORDER BY r.rejected_at LIMIT sqlc.arg(max_rows)::integer));

-- IngestRejectSummaryTrim does the same for the summaries of lines not kept.
-- name: IngestRejectSummaryTrim :execrows
DELETE FROM ingest_reject_summary
WHERE id = ANY (ARRAY(SELECT s.id FROM ingest_reject_summary s WHERE s.rejected_at < sqlc.arg(before)::timestamptz
                      ORDER BY s.rejected_at LIMIT sqlc.arg(max_rows)::integer));
