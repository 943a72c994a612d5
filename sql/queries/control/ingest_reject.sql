-- name: IngestRejectInsert :copyfrom
INSERT INTO ingest_reject (source, line, raw, raw_escaped, raw_bytes, raw_length, reason, rejected_at)
VALUES (@source, @line, @raw, @raw_escaped, @raw_bytes, @raw_length, @reason, @rejected_at);
