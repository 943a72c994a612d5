-- The provenance views: which path wrote a window or a day and what it is complete through
-- (window_provenance, day_provenance).

-- ProvenanceTile is a farm's latest window as shown (window_provenance):
-- the latest start among its rows of either path, found through
-- farm_window's key instead of sorting every window the farm ever had.
-- name: ProvenanceTile :one
SELECT wp.* FROM window_provenance wp
WHERE wp.farm_id = sqlc.arg(farm_id)::text
  AND wp.window_start = (SELECT max(fw.window_start) FROM farm_window fw WHERE fw.farm_id = sqlc.arg(farm_id)::text);

-- ProvenanceWindow is one window as shown.
-- name: ProvenanceWindow :one
SELECT * FROM window_provenance
WHERE farm_id = sqlc.arg(farm_id) AND window_start = sqlc.arg(window_start);

-- ProvenanceDay is one farm-day as shown.
-- name: ProvenanceDay :one
SELECT * FROM day_provenance
WHERE farm_id = sqlc.arg(farm_id) AND day = sqlc.arg(day);
