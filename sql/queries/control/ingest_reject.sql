-- name: IngestRejectInsert :copyfrom
INSERT INTO ingest_reject (source, line, raw, raw_escaped, raw_bytes, raw_length, reason, rejected_at)
VALUES (@source, @line, @raw, @raw_escaped, @raw_bytes, @raw_length, @reason, @rejected_at);

-- name: IngestRejectCount :one
SELECT count(*) FROM ingest_reject;

-- name: IngestRejectList :many
SELECT id, source, line, raw, raw_escaped, raw_bytes, raw_length, reason, rejected_at
FROM ingest_reject
ORDER BY id DESC
LIMIT @max_rows;
