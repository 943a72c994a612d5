-- +goose Up
-- A turbine moved away from this shard (orchestrator's move_turbine job):
-- ingest checks this table in every write transaction, after its rows and
-- before its commit, and fails a batch holding a fenced turbine's readings
-- (its lines reported, to re-send; the writer reloads its routes). So an
-- ingest process still routing by a snapshot from before the switch cannot
-- store a reading here once the move has fenced the shard and copied what
-- was here.
CREATE TABLE turbine_fence (
    turbine_id  text COLLATE "C" PRIMARY KEY,
    moved_to    text NOT NULL,
    since       timestamptz NOT NULL
);
COMMENT ON TABLE turbine_fence IS 'Turbines moved away from this shard: ingest refuses their readings here (the batch fails, to re-send to the new shard). Removed when a turbine moves back.';
COMMENT ON COLUMN turbine_fence.moved_to IS 'The shard that holds the turbine''s readings now.';
COMMENT ON COLUMN turbine_fence.since IS 'When the move fenced this shard.';

GRANT SELECT ON turbine_fence TO galewatch_ingest;

-- +goose Down
DROP TABLE turbine_fence;
