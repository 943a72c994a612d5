-- ingest_reject and ingest_reject_summary: refused lines, kept up to fleet_rules.reject_rows_kept per
-- body, the rest counted; trimmed by age (fleet_rules).

-- name: IngestRejectInsert :copyfrom
INSERT INTO ingest_reject (source, line, raw, raw_escaped, raw_bytes, raw_length, reason, kind, rejected_at)
VALUES (@source, @line, @raw, @raw_escaped, @raw_bytes, @raw_length, @reason, @kind, @rejected_at);

-- IngestRejectSummaryInsert records, for one body or file, the refused
-- lines beyond fleet_rules.reject_rows_kept, counted per kind of reason
-- (@not_kept_by_kind: a JSON object, kind → lines).
-- name: IngestRejectSummaryInsert :exec
INSERT INTO ingest_reject_summary (source, kept, not_kept, not_kept_by_kind, first_line_not_kept, last_line_not_kept, rows_kept_limit, rejected_at)
VALUES (@source, @kept, @not_kept, @not_kept_by_kind::jsonb, @first_line_not_kept, @last_line_not_kept, @rows_kept_limit, @rejected_at);

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
