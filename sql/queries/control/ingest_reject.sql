-- name: IngestRejectInsert :copyfrom
INSERT INTO ingest_reject (source, line, raw, raw_escaped, raw_bytes, raw_length, reason, kind, rejected_at)
VALUES (@source, @line, @raw, @raw_escaped, @raw_bytes, @raw_length, @reason, @kind, @rejected_at);

-- IngestRejectSummaryInsert records, for one body or file, the refused
-- lines beyond fleet_rules.reject_rows_kept, counted per kind of reason
-- (@not_kept_by_kind: a JSON object, kind → lines).
-- name: IngestRejectSummaryInsert :exec
INSERT INTO ingest_reject_summary (source, kept, not_kept, not_kept_by_kind, first_line_not_kept, last_line_not_kept, rows_kept_limit, rejected_at)
VALUES (@source, @kept, @not_kept, @not_kept_by_kind::jsonb, @first_line_not_kept, @last_line_not_kept, @rows_kept_limit, @rejected_at);
