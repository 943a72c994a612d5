-- +goose Up
-- A correction rewrites a farm-day's part and final rows in place (up to
-- 1,440 of each for one turbine-day). Room on each page lets an update stay
-- on its page (HOT) without new index entries; only pages written from now
-- on get the room (VACUUM FULL or CLUSTER rewrites the old ones).
ALTER TABLE farm_window SET (fillfactor = 70);
ALTER TABLE farm_window_part SET (fillfactor = 70);

-- +goose Down
ALTER TABLE farm_window_part RESET (fillfactor);
ALTER TABLE farm_window RESET (fillfactor);
