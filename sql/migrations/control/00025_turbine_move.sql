-- +goose Up
-- A turbine moving between shards while its readings keep arriving
-- (orchestrator's move_turbine job, internal/move). One row per move; its
-- state says which step has committed, so a killed job resumes where it was:
--   copying   readings are copied from the old shard to the new, day by day
--   switched  turbine.shard_name is the new shard (ingest routes and every
--             rollup reads there from switched_at); a turbine_version from
--             switched_at records it
--   fenced    the old shard refuses the turbine's readings (turbine_fence);
--             the move waits for the writes in flight there to end
--   verified  what the old shard held was copied again and every row of it
--             found on the new shard
--   done      the old shard's rows deleted; the farm's days are queued for
--             recompute by the last of its moves to finish
CREATE TABLE turbine_move (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    turbine_id      text NOT NULL REFERENCES turbine (id),
    farm_id         text NOT NULL,
    from_shard      text NOT NULL,
    to_shard        text NOT NULL,
    state           text NOT NULL DEFAULT 'copying'
                    CHECK (state IN ('copying', 'switched', 'fenced', 'verified', 'done')),
    apply_id        bigint NOT NULL REFERENCES fleet_apply (id),
    requested_at    timestamptz NOT NULL,
    first_day       date,
    days_total      integer NOT NULL DEFAULT 0,
    days_copied     integer NOT NULL DEFAULT 0,
    rows_copied     bigint NOT NULL DEFAULT 0,
    switched_at     timestamptz,
    fence_snapshot  text,
    rows_caught_up  bigint,
    rows_verified   bigint,
    rows_deleted    bigint,
    updated_at      timestamptz NOT NULL,
    finished_at     timestamptz,
    recompute_queued_at timestamptz,
    last_error      text,
    CHECK (from_shard <> to_shard)
);
CREATE UNIQUE INDEX turbine_move_one_open ON turbine_move (turbine_id) WHERE state <> 'done';
COMMENT ON TABLE turbine_move IS 'Moves of a turbine''s readings between shards, one row each, with the step reached (orchestrator fleet moves). At most one unfinished move per turbine.';
COMMENT ON COLUMN turbine_move.id IS 'The move (orchestrator fleet moves lists it; the move_turbine job''s args name it).';
COMMENT ON COLUMN turbine_move.turbine_id IS 'The turbine whose readings move.';
COMMENT ON COLUMN turbine_move.farm_id IS 'Its farm (whose days are recomputed when the farm''s last move ends).';
COMMENT ON COLUMN turbine_move.from_shard IS 'The shard that held its readings.';
COMMENT ON COLUMN turbine_move.to_shard IS 'The shard that holds them once the move switched.';
COMMENT ON COLUMN turbine_move.requested_at IS 'When the fleet apply asked for the move.';
COMMENT ON COLUMN turbine_move.updated_at IS 'When a step last wrote the row.';
COMMENT ON COLUMN turbine_move.finished_at IS 'When the move ended (state done).';
COMMENT ON COLUMN turbine_move.state IS 'copying, switched, fenced, verified or done: the last step committed (see internal/move).';
COMMENT ON COLUMN turbine_move.apply_id IS 'The fleet apply that asked for it (fleet_apply.id); the turbine_version of the new shard names it too.';
COMMENT ON COLUMN turbine_move.first_day IS 'The first UTC day (readings partition) of the turbine on the old shard when the copy began.';
COMMENT ON COLUMN turbine_move.days_total IS 'UTC days of readings to copy.';
COMMENT ON COLUMN turbine_move.days_copied IS 'Of them, how many are copied (the copy resumes after them).';
COMMENT ON COLUMN turbine_move.rows_copied IS 'Readings inserted on the new shard by the first copy.';
COMMENT ON COLUMN turbine_move.switched_at IS 'When ingest''s routing and the rollups switched to the new shard (the new turbine_version starts here).';
COMMENT ON COLUMN turbine_move.fence_snapshot IS 'pg_current_snapshot() of the old shard just after its fence committed: the move waits for its in-progress transactions.';
COMMENT ON COLUMN turbine_move.rows_caught_up IS 'Readings that reached the old shard after the first copy, copied by the second.';
COMMENT ON COLUMN turbine_move.rows_verified IS 'Readings of the old shard each found, equal, on the new shard.';
COMMENT ON COLUMN turbine_move.rows_deleted IS 'Readings deleted from the old shard.';
COMMENT ON COLUMN turbine_move.recompute_queued_at IS 'When the recompute of the farm''s days was queued: by the last of the farm''s moves to finish, for all of them (a batch of moves costs one recompute per farm-day and shard).';
COMMENT ON COLUMN turbine_move.last_error IS 'The last step''s error, if it failed (the job retries).';

GRANT SELECT ON turbine_move TO galewatch_reporting;

-- +goose Down
DROP TABLE turbine_move;
