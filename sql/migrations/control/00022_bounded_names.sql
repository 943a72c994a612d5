-- +goose Up
-- Bounded names: the registry holds the fleet file's limits
-- (internal/fleet MaxFarmID, MaxTurbineID, MaxFarmName, MaxShardName and
-- their character rules), so that nobody writing it by hand stores a farm
-- whose nightly job id River refuses (rollup_schedule_<id> must stay under
-- 128 characters) or a shard whose queue it refuses (rollup_<name> at most
-- 64). NOT VALID: an upgrade never fails on rows written before; new and
-- updated rows are checked, and fleet apply refuses the old ones anyway.
-- Once none is left: ALTER TABLE farm VALIDATE CONSTRAINT farm_id_bounded
-- (and the others).

ALTER TABLE shard ADD CONSTRAINT shard_name_bounded
    CHECK (char_length(name) <= 57 AND name ~ '^[a-z0-9]+([_-][a-z0-9]+)*$') NOT VALID;
ALTER TABLE farm ADD CONSTRAINT farm_id_bounded
    CHECK (char_length(id) <= 111 AND id ~ '^[A-Za-z0-9][A-Za-z0-9._-]*$') NOT VALID;
-- A farm the file gives no name is named by its id (up to 111 characters).
ALTER TABLE farm ADD CONSTRAINT farm_name_bounded
    CHECK (name = id OR (char_length(name) BETWEEN 1 AND 100 AND name !~ '[\u0001-\u001f\u007f-\u009f]')) NOT VALID;
-- A turbine from before the limits can still be retired (fleet apply's
-- TurbineRetire updates its row when the file no longer names it).
ALTER TABLE turbine ADD CONSTRAINT turbine_id_bounded
    CHECK (NOT in_fleet_file OR (char_length(id) <= 111 AND id ~ '^[A-Za-z0-9][A-Za-z0-9._-]*$')) NOT VALID;

COMMENT ON CONSTRAINT shard_name_bounded ON shard IS 'At most 57 characters (River queue rollup_<name>, 64), lower-case letters and digits separated by single _ or - (internal/fleet MaxShardName).';
COMMENT ON CONSTRAINT farm_id_bounded ON farm IS 'At most 111 characters (River periodic job id rollup_schedule_<id>, under 128), letters, digits, . _ - (internal/fleet MaxFarmID).';
COMMENT ON CONSTRAINT farm_name_bounded ON farm IS 'A display name of 1 to 100 characters without control characters (internal/fleet MaxFarmName), or the farm id when the fleet file gives no name.';
COMMENT ON CONSTRAINT turbine_id_bounded ON turbine IS 'A turbine in the fleet file has an id of at most 111 characters, letters, digits, . _ - (internal/fleet MaxTurbineID); a retired one may keep an older id.';

-- +goose Down
ALTER TABLE turbine DROP CONSTRAINT turbine_id_bounded;
ALTER TABLE farm DROP CONSTRAINT farm_name_bounded;
ALTER TABLE farm DROP CONSTRAINT farm_id_bounded;
ALTER TABLE shard DROP CONSTRAINT shard_name_bounded;
