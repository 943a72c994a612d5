-- The slot rule, named: the two functions TurbineWindowUpsert counts with.
-- Both are one expression, so the planner inlines them (no call per
-- reading).

-- +goose Up
CREATE FUNCTION slot_start(recorded_at timestamptz, origin timestamptz, stop timestamptz,
                           cadence interval, last_slot timestamptz)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN recorded_at >= origin AND recorded_at < stop AND last_slot IS NOT NULL
            THEN least(date_bin(cadence, recorded_at, origin), last_slot) END;

COMMENT ON FUNCTION slot_start(timestamptz, timestamptz, timestamptz, interval, timestamptz) IS
'The slot rule for one reading. A turbine in service over [origin, stop) of a day (the later of the '
'farm-local day start and its commissioning, the earlier of the day end and its decommissioning) owes '
'one reading per slot: slots start at origin and every cadence after it, and the day has '
'floor((stop - origin) / cadence) of them; last_slot is the last one''s start (NULL when there is none). '
'A reading counts in the slot it falls in (date_bin from origin); one after last_slot, in the slot the '
'day''s or the service''s end cut short, counts in the last. Outside [origin, stop): NULL (counted as '
'out of service). received = distinct slots with a reading, so a second reading in a slot counts once '
'(beyond_cadence). Example: origin 00:00:01, cadence 2 s, stop 00:01:00 (29 slots, last_slot '
'00:00:57): 00:00:04.7 counts in 00:00:03, 00:00:59.5 in 00:00:57, 00:00:00.5 is out of service.';

CREATE FUNCTION slot_count(from_s numeric, to_s numeric, origin_s numeric, cadence_s integer, slots integer)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN greatest(0, least(slots, ceil((to_s - origin_s) / cadence_s)) - greatest(0, ceil((from_s - origin_s) / cadence_s)))::integer;

COMMENT ON FUNCTION slot_count(numeric, numeric, numeric, integer, integer) IS
'Expected readings of a window under the slot rule: how many of a turbine''s slots (the k-th starting at '
'origin_s + k * cadence_s, 0 <= k < slots) start in [from_s, to_s). All in seconds from the day''s '
'start. A slot belongs to the window in which it starts, so a day''s windows add up to its slots. '
'Example: origin 1 s, cadence 2 s, 29 slots: the window [0, 60) expects 29 (slots at 1, 3, ..., 57); '
'with 43,200 slots from 0, every one-minute window of the day expects 30.';

-- +goose Down
DROP FUNCTION slot_count(numeric, numeric, numeric, integer, integer);
DROP FUNCTION slot_start(timestamptz, timestamptz, timestamptz, interval, timestamptz);
