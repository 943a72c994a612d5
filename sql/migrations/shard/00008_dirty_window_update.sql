-- +goose Up
-- A mark that is already there is updated, not skipped (DirtyWindowInsert:
-- ON CONFLICT ... DO UPDATE SET marked_at = least(...)), so the writer holds
-- it locked until its readings commit and a recompute's claim (FOR UPDATE
-- SKIP LOCKED) leaves it for the next one (docs/dirty-marks.md). The ingest
-- role needs what that update reads and writes: SELECT and UPDATE of
-- marked_at (its key it could already read). Still no DELETE: taking a mark
-- away is the recompute's, with the owner's rights.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_ingest') THEN
        GRANT SELECT (marked_at), UPDATE (marked_at) ON dirty_window TO galewatch_ingest;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_ingest') THEN
        REVOKE SELECT (marked_at), UPDATE (marked_at) ON dirty_window FROM galewatch_ingest;
    END IF;
END
$$;
-- +goose StatementEnd
