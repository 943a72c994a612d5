-- +goose Up
-- A dirty_window row marks a run of consecutive windows of one turbine:
-- [window_start, window_end) covers `windows` windows of the farm's grid
-- (1 for the rows written before this migration). A batch writes one row
-- per turbine and run instead of one per turbine-window: a replayed
-- farm-day of 140 turbines wrote 201,600 rows (1,440 a turbine), which cost
-- the file ingest ~10 % of its time; in runs it writes a few per turbine
-- and batch. A claim takes the windows its caller recomputes and writes the
-- rest of a run back as a row of its own.
ALTER TABLE dirty_window ADD COLUMN windows integer NOT NULL DEFAULT 1 CHECK (windows > 0);
COMMENT ON TABLE dirty_window IS 'Turbine-windows touched by late inserts, waiting for their correction: one row per writer''s run of consecutive windows of one turbine, in the same transaction as its readings (append-only: a window may be in several rows); taken by the computation that reads them, which takes the rows its snapshot sees and writes back the part of a run it does not recompute.';
COMMENT ON COLUMN dirty_window.window_start IS 'Start of the first window of the run (on the farm''s window grid).';
COMMENT ON COLUMN dirty_window.window_end IS 'End of the last window of the run (the day''s end for its last window).';
COMMENT ON COLUMN dirty_window.windows IS 'How many windows the run covers.';

-- +goose Down
ALTER TABLE dirty_window DROP COLUMN windows;
COMMENT ON COLUMN dirty_window.window_start IS NULL;
COMMENT ON COLUMN dirty_window.window_end IS NULL;
COMMENT ON TABLE dirty_window IS 'Turbine-windows touched by late inserts, waiting for their correction. Append-only: one row per writer''s mark, in the same transaction as its readings (a pair may have several rows); deleted by the computation that reads them, which takes the rows its snapshot sees.';
