-- +goose Up
CREATE TABLE ingest_reject (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source       text NOT NULL,
    line         bigint NOT NULL,
    raw          text NOT NULL,
    reason       text NOT NULL,
    rejected_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ingest_reject_rejected_at_idx ON ingest_reject (rejected_at);
COMMENT ON TABLE ingest_reject IS 'Readings refused at ingest, one row per bad line, with the reason. The rest of their batch was stored.';
COMMENT ON COLUMN ingest_reject.source IS 'Where the line came from: a file path, "-" for stdin, or "http:<remote address>".';
COMMENT ON COLUMN ingest_reject.line IS 'Line number in the source (1-based; a CSV header is line 1).';
COMMENT ON COLUMN ingest_reject.raw IS 'The line as received (truncated to 4 KiB).';
COMMENT ON COLUMN ingest_reject.reason IS 'What was wrong, naming the field and value.';

-- +goose Down
DROP TABLE ingest_reject;
