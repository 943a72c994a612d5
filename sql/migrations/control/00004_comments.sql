-- +goose Up
-- Every column a DBA can query says what it is.
COMMENT ON COLUMN shard.created_at IS 'When the shard was first registered.';
COMMENT ON COLUMN shard.updated_at IS 'When a fleet apply last changed the shard.';
COMMENT ON COLUMN farm.id IS 'Farm id as written in the fleet file (ardnave-point).';
COMMENT ON COLUMN farm.name IS 'Display name.';
COMMENT ON COLUMN farm.created_at IS 'When the farm was first registered.';
COMMENT ON COLUMN farm.updated_at IS 'When a fleet apply last changed the farm.';
COMMENT ON COLUMN turbine.id IS 'Turbine id as it appears in readings (AP-001).';
COMMENT ON COLUMN turbine.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN turbine.shard_name IS 'The shard holding the turbine''s readings (shard.name). Never changes: history stays where it was written.';
COMMENT ON COLUMN turbine.created_at IS 'When the turbine was first registered.';
COMMENT ON COLUMN turbine.updated_at IS 'When a fleet apply last changed the turbine.';
COMMENT ON COLUMN ingest_reject.id IS 'Row id, in order of rejection.';
COMMENT ON COLUMN ingest_reject.rejected_at IS 'When ingest refused the line (the ingest clock).';
COMMENT ON COLUMN turbine_day.turbine_id IS 'The turbine (turbine.id).';
COMMENT ON COLUMN turbine_day.farm_id IS 'The turbine''s farm (farm.id).';
COMMENT ON COLUMN rollup_pending.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN rollup_pending.day IS 'The farm-local day to recompute.';
COMMENT ON COLUMN rollup_pending.shard_name IS 'The shard whose turbines of the farm are recomputed.';
COMMENT ON COLUMN rollup_pending.requested_at IS 'When the latest dirty mark was folded into this request.';
COMMENT ON COLUMN farm_day.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_day.day IS 'The farm-local calendar day.';
COMMENT ON COLUMN farm_day.expected IS 'Sum of turbine_day.expected: readings the calendar expects.';
COMMENT ON COLUMN farm_day.received IS 'Sum of turbine_day.received: readings stored.';
COMMENT ON COLUMN farm_day.available IS 'Sum of turbine_day.available: readings reporting the turbine available.';
COMMENT ON COLUMN farm_day.late IS 'Sum of turbine_day.late: readings that came in the backfill lane.';
COMMENT ON COLUMN farm_day.early IS 'Sum of turbine_day.early: readings stamped by a fast clock.';
COMMENT ON COLUMN farm_month.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN farm_month.month IS 'First day of the calendar month, in the farm''s zone.';
COMMENT ON COLUMN farm_month.expected IS 'Sum of expected readings over the month''s rolled-up days.';
COMMENT ON COLUMN farm_month.received IS 'Sum of received readings.';
COMMENT ON COLUMN farm_month.available IS 'Sum of available readings.';
COMMENT ON COLUMN farm_month.last_received_at IS 'Latest arrival counted in the month: what it is complete through.';
COMMENT ON COLUMN farm_month.computed_at IS 'The newest recompute among the month''s rows.';

-- +goose Down
SELECT 1;
