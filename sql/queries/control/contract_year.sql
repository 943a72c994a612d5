-- FarmsWithContract is every farm whose latest version counts by a
-- contract of its own (not the default): what `report contract --all`
-- writes.
-- name: FarmsWithContract :many
SELECT f.id
FROM farm f
WHERE (SELECT v.contract_id FROM farm_version v WHERE v.farm_id = f.id ORDER BY v.first_day DESC LIMIT 1) <> 1
ORDER BY f.id;
