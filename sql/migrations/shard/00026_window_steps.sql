-- +goose Up
-- The window statement's steps, named once: where a window's slots begin
-- (slot_after, which slot_count is now the difference of), the category
-- arrays of a window whose counted slots are all in one category
-- (one_category_slots, one_category_wh) and energy rounded to Wh
-- (mwh_to_wh). Each is one expression, so the planner inlines it.
CREATE FUNCTION slot_after(t_s numeric, origin_s numeric, cadence_s integer, slots integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN least(slots, greatest(0, ceil((t_s - origin_s) / cadence_s)))::integer;

COMMENT ON FUNCTION slot_after(numeric, numeric, integer, integer) IS
'The slot rule''s index: the first of a turbine''s slots (the k-th starting at origin_s + k * cadence_s, '
'0 <= k < slots) that starts at or after t_s, all in seconds from the day''s start; slots when none does. '
'The slots starting in a window [from_s, to_s) are slot_after(from_s) .. slot_after(to_s) - 1. Example: '
'origin 1 s, cadence 2 s, 29 slots: slot_after(0) = 0, slot_after(60) = 29, slot_after(4) = 2 (the slot at 5 s).';

CREATE OR REPLACE FUNCTION slot_count(from_s numeric, to_s numeric, origin_s numeric, cadence_s integer, slots integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN greatest(0, slot_after(to_s, origin_s, cadence_s, slots) - slot_after(from_s, origin_s, cadence_s, slots));

CREATE FUNCTION one_category_slots(p_category integer, p_slots integer, p_missing integer)
RETURNS integer[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN p_category = 13 THEN ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, p_slots + p_missing]
            ELSE (ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, p_slots, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])[14 - p_category:25 - p_category]
                 || p_missing END;

COMMENT ON FUNCTION one_category_slots(integer, integer, integer) IS
'A window''s category_slots (13 elements, by availability_category.id) when its p_slots slots with a reading '
'are all in category p_category (1..13) and its p_missing slots without one are information unavailable (13). '
'Example: one_category_slots(1, 28, 2) = {28,0,0,0,0,0,0,0,0,0,0,0,2}.';

CREATE FUNCTION one_category_wh(p_category integer, p_wh bigint)
RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, p_wh, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]::bigint[])[14 - p_category:26 - p_category];

COMMENT ON FUNCTION one_category_wh(integer, bigint) IS
'A window''s energy per category (13 elements, by availability_category.id) when all of it, p_wh, is in '
'category p_category (1..13). Example: one_category_wh(4, 1200) = {0,0,0,1200,0,0,0,0,0,0,0,0,0}.';

CREATE FUNCTION mwh_to_wh(p_mwh bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (p_mwh + CASE WHEN p_mwh < 0 THEN -500 ELSE 500 END) / 1000;

COMMENT ON FUNCTION mwh_to_wh(bigint) IS
'Milliwatt-hours to watt-hours, rounded half away from zero (as round(p_mwh / 1000.0)) in integer arithmetic. '
'Example: mwh_to_wh(1500) = 2, mwh_to_wh(1499) = 1, mwh_to_wh(-1500) = -2.';

-- The slot-by-slot sort's result for one window: its category_slots,
-- category_actual_wh and category_potential_wh, and how many of its slots
-- hold a reading that says unavailable.
CREATE TYPE window_categories AS (slots integer[], actual_wh bigint[], potential_wh bigint[], unavailable integer);

-- +goose Down
DROP TYPE window_categories;
DROP FUNCTION mwh_to_wh(bigint);
DROP FUNCTION one_category_wh(integer, bigint);
DROP FUNCTION one_category_slots(integer, integer, integer);
CREATE OR REPLACE FUNCTION slot_count(from_s numeric, to_s numeric, origin_s numeric, cadence_s integer, slots integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN greatest(0, least(slots, ceil((to_s - origin_s) / cadence_s)) - greatest(0, ceil((from_s - origin_s) / cadence_s)))::integer;
DROP FUNCTION slot_after(numeric, numeric, integer, integer);
