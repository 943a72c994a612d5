-- OperatorEventCheck says what is wrong with an event before it is
-- entered: the farm unknown, a category code unknown (or information
-- unavailable, which is no information), turbines not of the farm (in the
-- registry now). Empty strings and arrays: nothing wrong.
-- name: OperatorEventCheck :one
SELECT EXISTS (SELECT 1 FROM farm f WHERE f.id = sqlc.arg(farm_id)::text) AS farm_known,
       coalesce((SELECT c.id FROM availability_category c WHERE c.code = sqlc.arg(category)::text AND c.id <> 13), 0)::smallint AS category_id,
       coalesce((SELECT string_agg(c.code, ', ' ORDER BY c.id) FROM availability_category c WHERE c.id <> 13), '')::text AS categories,
       coalesce((SELECT array_agg(t.id ORDER BY t.ord)
                 FROM unnest(sqlc.arg(turbine_ids)::text[]) WITH ORDINALITY AS t(id, ord)
                 WHERE NOT EXISTS (SELECT 1 FROM turbine x WHERE x.id = t.id AND x.farm_id = sqlc.arg(farm_id)::text)), '{}')::text[] AS unknown_turbines;

-- OperatorEventInsert enters an event.
-- name: OperatorEventInsert :one
INSERT INTO operator_event (farm_id, turbine_ids, from_at, to_at, category_id, note, entered_by, entered_at)
VALUES (sqlc.arg(farm_id), sqlc.arg(turbine_ids)::text[], sqlc.arg(from_at), sqlc.arg(to_at), sqlc.arg(category_id),
        sqlc.arg(note), sqlc.arg(entered_by), sqlc.arg(entered_at))
RETURNING id;

-- OperatorEventVoid voids event @id (once: a voided event is refused by
-- operator_event_guard); no row when there is no such event.
-- name: OperatorEventVoid :one
UPDATE operator_event
SET voided_by = sqlc.arg(voided_by), voided_at = sqlc.arg(voided_at), void_note = sqlc.arg(void_note)
WHERE id = sqlc.arg(id)
RETURNING id;

-- OperatorEventList lists events, newest first: of one farm (an empty
-- @farm_id: every farm) overlapping [@from_at, @to_at), voided ones too.
-- name: OperatorEventList :many
SELECT e.id, e.farm_id, e.turbine_ids, e.from_at, e.to_at, c.code AS category, e.note, e.entered_by, e.entered_at,
       e.entered_db_user, e.voided_by, e.voided_at, e.void_note
FROM operator_event e
JOIN availability_category c ON c.id = e.category_id
WHERE (sqlc.arg(farm_id)::text = '' OR e.farm_id = sqlc.arg(farm_id)::text)
  AND e.from_at < sqlc.arg(to_at)::timestamptz AND e.to_at > sqlc.arg(from_at)::timestamptz
ORDER BY e.id DESC
LIMIT sqlc.arg(max_rows)::integer;

-- OperatorEventGet is one event.
-- name: OperatorEventGet :one
SELECT e.id, e.farm_id, e.turbine_ids, e.from_at, e.to_at, c.code AS category, e.note, e.entered_by, e.entered_at,
       e.entered_db_user, e.voided_by, e.voided_at, e.void_note
FROM operator_event e
JOIN availability_category c ON c.id = e.category_id
WHERE e.id = sqlc.arg(id);

-- OperatorEventDays lists the farm-local days (farm_day_start bounds) an
-- event's [@from_at, @to_at) overlaps that have begun by @now: the days to
-- recompute when it is entered or voided.
-- name: OperatorEventDays :many
SELECT d.day::date AS day
FROM farm f
CROSS JOIN LATERAL generate_series((sqlc.arg(from_at)::timestamptz AT TIME ZONE f.timezone)::date - 1,
                                   (sqlc.arg(to_at)::timestamptz AT TIME ZONE f.timezone)::date + 1, interval '1 day') AS d(day)
WHERE f.id = sqlc.arg(farm_id)
  AND farm_day_start(f.id, d.day::date) < sqlc.arg(to_at)::timestamptz
  AND farm_day_start(f.id, d.day::date + 1) > sqlc.arg(from_at)::timestamptz
  AND farm_day_start(f.id, d.day::date) <= sqlc.arg(now)::timestamptz
ORDER BY 1;
