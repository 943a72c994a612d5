-- +goose Up
-- dirty_window becomes append-only: a writer inserts its marks, never
-- touching an existing row, so it never waits on anyone. Before, a mark
-- already there was updated (to hold it locked until the writer's readings
-- committed), and a writer whose mark a recompute had just claimed waited
-- for that recompute to commit: behind a farm-day recompute under load,
-- longer than ingest's 20 s bound (seen replaying the Ardnave hole in 60
-- batches). Now each insert is its own row; a claim deletes the rows its
-- statement's snapshot sees, whose readings are therefore visible to the
-- reads that follow it, and leaves every row committed later (or not yet
-- committed) for the next recompute. The same pair may be marked by several
-- rows; readers count distinct (turbine, window) pairs.
ALTER TABLE dirty_window DROP CONSTRAINT dirty_window_pkey;
CREATE INDEX dirty_window_claim_idx ON dirty_window (farm_id, day, window_start, turbine_id);
COMMENT ON TABLE dirty_window IS 'Turbine-windows touched by late inserts, waiting for their correction. Append-only: one row per writer''s mark, in the same transaction as its readings (a pair may have several rows); deleted by the computation that reads them, which takes the rows its snapshot sees.';
COMMENT ON COLUMN dirty_window.marked_at IS 'Writer''s clock of the insert that wrote this mark.';
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_ingest') THEN
        -- The ingest role only inserts marks now: no reading or updating them.
        REVOKE SELECT (farm_id, day, turbine_id, window_start, marked_at), UPDATE (marked_at) ON dirty_window FROM galewatch_ingest;
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'galewatch_ingest') THEN
        GRANT SELECT (farm_id, day, turbine_id, window_start, marked_at), UPDATE (marked_at) ON dirty_window TO galewatch_ingest;
    END IF;
END
$$;
-- +goose StatementEnd
DELETE FROM dirty_window d USING dirty_window e
WHERE e.farm_id = d.farm_id AND e.day = d.day AND e.turbine_id = d.turbine_id AND e.window_start = d.window_start
  AND (e.marked_at, e.ctid) < (d.marked_at, d.ctid);
DROP INDEX dirty_window_claim_idx;
ALTER TABLE dirty_window ADD PRIMARY KEY (farm_id, day, turbine_id, window_start);
COMMENT ON TABLE dirty_window IS 'Turbine-windows touched by late inserts, waiting for their correction. Same transaction as the readings; deleted by the computation that reads them.';
COMMENT ON COLUMN dirty_window.marked_at IS 'Writer''s clock of the first insert that marked the pair.';
