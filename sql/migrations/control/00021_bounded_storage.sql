-- +goose Up
-- Bounded storage. A 4 MB body of 2,000,000 bad lines
-- became 2,000,000 ingest_reject rows (353 MB) and nothing ever deleted
-- one; windows outlived the readings they were computed from.
--
-- What is kept of refused lines is a rule of the fleet, so it lives here,
-- beside the other thresholds of what is stored (fleet_rules, set by the
-- fleet file's rules:). Fleet-wide only: a refused line may name no farm.
ALTER TABLE fleet_rules
    ADD COLUMN reject_rows_kept      integer NOT NULL DEFAULT 1000 CHECK (reject_rows_kept >= 0 AND reject_rows_kept <= 1000000),
    ADD COLUMN reject_retention_days integer NOT NULL DEFAULT 30 CHECK (reject_retention_days > 0 AND reject_retention_days <= 100000);
COMMENT ON COLUMN fleet_rules.reject_rows_kept IS 'Refused lines of one body or file stored verbatim in ingest_reject (the first ones, in line order); the rest are counted per reason in one ingest_reject_summary row. Fleet-wide only.';
COMMENT ON COLUMN fleet_rules.reject_retention_days IS 'ingest_reject and ingest_reject_summary rows older than this many days (by rejected_at, the ingest clock) are deleted by the partitions job. Fleet-wide only.';

-- The kind of reason (the fixed set /metrics counts by), so the rows kept
-- and the counts of the rest add up per kind.
ALTER TABLE ingest_reject ADD COLUMN kind text;
COMMENT ON COLUMN ingest_reject.kind IS 'The kind of reason (invalid, unknown_turbine, future, too_old, retention, out_of_service): what ingest_reject_summary counts by. NULL for rows refused before this column existed.';

CREATE TABLE ingest_reject_summary (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source              text NOT NULL,
    kept                bigint NOT NULL CHECK (kept >= 0),
    not_kept            bigint NOT NULL CHECK (not_kept > 0),
    not_kept_by_kind    jsonb NOT NULL,
    first_line_not_kept bigint NOT NULL,
    last_line_not_kept  bigint NOT NULL,
    rows_kept_limit     integer NOT NULL,
    rejected_at         timestamptz NOT NULL
);
CREATE INDEX ingest_reject_summary_rejected_at_idx ON ingest_reject_summary (rejected_at);
COMMENT ON TABLE ingest_reject_summary IS 'One row per body or file that refused more lines than fleet_rules.reject_rows_kept: the lines not kept in ingest_reject, counted per kind of reason. Every refused line is a row of ingest_reject or counted here.';
COMMENT ON COLUMN ingest_reject_summary.id IS 'Row id, in order of writing.';
COMMENT ON COLUMN ingest_reject_summary.source IS 'Where the lines came from, as ingest_reject.source: a file path, "-" for stdin, or "http:<remote address>".';
COMMENT ON COLUMN ingest_reject_summary.kept IS 'Refused lines of the body or file stored verbatim in ingest_reject (the first ones).';
COMMENT ON COLUMN ingest_reject_summary.not_kept IS 'Refused lines of the body or file beyond the cap: counted here, not stored.';
COMMENT ON COLUMN ingest_reject_summary.not_kept_by_kind IS 'not_kept per kind of reason (ingest_reject.kind), e.g. {"invalid": 3200, "unknown_turbine": 800}.';
COMMENT ON COLUMN ingest_reject_summary.first_line_not_kept IS 'Line number of the first refused line not kept.';
COMMENT ON COLUMN ingest_reject_summary.last_line_not_kept IS 'Line number of the last refused line not kept.';
COMMENT ON COLUMN ingest_reject_summary.rows_kept_limit IS 'fleet_rules.reject_rows_kept in force for this ingest.';
COMMENT ON COLUMN ingest_reject_summary.rejected_at IS 'When the ingest of the body or file ended (the ingest clock); retention goes by it.';

-- Retention takes a farm's day out of alert by its key (control
-- WindowRetentionDeleteDay), as it does from the other window tables.
CREATE INDEX alert_farm_day_idx ON alert (farm_id, day);

-- The summary names no payload: the reporting role reads all of it, and the
-- kind of a kept row as it reads its reason.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_reporting') THEN
        GRANT SELECT ON ingest_reject_summary TO galewatch_reporting;
        GRANT SELECT (kind) ON ingest_reject TO galewatch_reporting;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_reporting') THEN
        REVOKE SELECT (kind) ON ingest_reject FROM galewatch_reporting;
    END IF;
END
$$;
-- +goose StatementEnd
DROP INDEX alert_farm_day_idx;
DROP TABLE ingest_reject_summary;
ALTER TABLE ingest_reject DROP COLUMN kind;
ALTER TABLE fleet_rules DROP COLUMN reject_rows_kept, DROP COLUMN reject_retention_days;
