-- +goose Up
-- What each object is now, where its comment still said what it once was:
-- a move copies readings through the staging table too, and the drain
-- deletes the marks it recorded whether it queued a job or widened one,
-- and retention deletes the marks of the days it cuts.
COMMENT ON TABLE readings_staging IS 'Template of the per-session temporary staging table: a batch that hits duplicate keys goes through it, and so does a move''s copy of a turbine''s readings from its old shard. Always empty.';
COMMENT ON COLUMN dirty_mark.version IS 'Bumped on every merge; the drain deletes a mark only at the version it read and recorded in the control database (a mark widened since stays for the next drain).';
COMMENT ON TABLE dirty_mark IS 'Farm-days touched by late inserts on this shard, waiting to be recomputed. Written in the same transaction as the readings; deleted only after the recompute it asks for is recorded in the control database (rollup_pending and its job), or with its day when retention cuts it (readings_retention).';

-- +goose Down
COMMENT ON TABLE readings_staging IS 'Template of the per-session temporary staging table used when a batch hits duplicate keys. Always empty.';
COMMENT ON COLUMN dirty_mark.version IS 'Bumped on every merge; the drainer deletes a mark only at the version it enqueued.';
COMMENT ON TABLE dirty_mark IS 'Farm-days touched by late inserts on this shard, waiting to be recomputed. Written in the same transaction as the readings; deleted only after the recompute job is committed.';
