-- DirtyMarkUpsert records (or widens) the mark of one farm-day. Called in the
-- same transaction as the readings it describes.
-- name: DirtyMarkUpsert :exec
-- created_at and updated_at are the writer's clock (@written_at), which the
-- drain compares with its own to let a burst of marks settle.
INSERT INTO dirty_mark (farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, created_at, updated_at)
VALUES (@farm_id, @day, @turbine_ids::text[], @first_recorded_at, @last_recorded_at, @readings, @written_at, @written_at)
ON CONFLICT (farm_id, day) DO UPDATE
SET turbine_ids = ARRAY(SELECT DISTINCT u FROM unnest(dirty_mark.turbine_ids || EXCLUDED.turbine_ids) AS u ORDER BY 1),
    first_recorded_at = least(dirty_mark.first_recorded_at, EXCLUDED.first_recorded_at),
    last_recorded_at = greatest(dirty_mark.last_recorded_at, EXCLUDED.last_recorded_at),
    readings = dirty_mark.readings + EXCLUDED.readings,
    version = dirty_mark.version + 1,
    updated_at = greatest(dirty_mark.updated_at, EXCLUDED.updated_at);

-- DirtyMarkClock is the shard's clock, read by the drain in the transaction
-- that reads the marks (beside its own clock, which the report compares
-- with: shard_drain.shard_clock_at shows the skew).
-- name: DirtyMarkClock :one
SELECT now()::timestamptz AS shard_clock_at;

-- DirtyMarkXact is the writing transaction's id, which the writer announces
-- on the control database before it commits its marks.
-- name: DirtyMarkXact :one
SELECT pg_current_xact_id()::text::bigint AS xact;

-- DirtyMarkXactsPassed keeps, of the announced transactions @xacts, those
-- that had finished when the drain's read began (this repeatable-read
-- transaction's snapshot): committed, so their marks are in the read, or
-- rolled back. An id at or past the snapshot's xmax is not (a writer still
-- open above every completed transaction).
-- name: DirtyMarkXactsPassed :many
SELECT x::bigint AS xact
FROM unnest(@xacts::bigint[]) AS x
WHERE pg_visible_in_snapshot(x::text::xid8, pg_current_snapshot());

-- DirtyMarkList lists the marks least recently widened first, so marks
-- still settling (a burst going on) cannot keep settled ones out of a
-- limited list.
-- name: DirtyMarkList :many
SELECT id, farm_id, day, turbine_ids, first_recorded_at, last_recorded_at, readings, version, created_at, updated_at
FROM dirty_mark
ORDER BY updated_at, id
LIMIT @max_marks;

-- DirtyMarkDelete removes a mark only if it was not widened since it was read.
-- name: DirtyMarkDelete :execrows
DELETE FROM dirty_mark WHERE id = @id AND version = @version;

-- name: DirtyMarkCount :one
SELECT count(*) FROM dirty_mark;
