-- The shard database's schema as sql/migrations/shard leave it:
-- pg_dump --schema-only, normalised. Written by `make schema`; do not edit.
-- `make verify` fails when it differs from what the migrations give.

-- Name: window_categories; Type: TYPE; Schema: public

CREATE TYPE public.window_categories AS (
	slots integer[],
	actual_wh bigint[],
	potential_wh bigint[],
	unavailable integer
);

-- Name: curve_kw(real, double precision[]); Type: FUNCTION; Schema: public

CREATE FUNCTION public.curve_kw(p_wind real, p_lut double precision[]) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN ((p_wind >= (0)::double precision) AND (p_wind < (29.995)::double precision)) THEN (p_lut)[(((p_wind * (100)::double precision))::integer + 1)] ELSE (0)::double precision END;

-- Name: FUNCTION curve_kw(p_wind real, p_lut double precision[]); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.curve_kw(p_wind real, p_lut double precision[]) IS 'Power (kW) of a curve sampled every 0.01 m/s from 0 to 30 (control''s model_curve_lut) at wind p_wind rounded to 0.01 m/s: the curve itself for a wind given to 0.01 m/s and a curve whose points are on that grid; 0 below 0 or from 30 m/s. NULL when p_lut is NULL (no model).';

-- Name: input_fingerprint(timestamp with time zone, boolean); Type: FUNCTION; Schema: public

CREATE FUNCTION public.input_fingerprint(p_recorded_at timestamp with time zone, p_available boolean) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT interval_hash(p_recorded_at - timestamptz 'epoch') # p_available::integer
$$;

-- Name: FUNCTION input_fingerprint(p_recorded_at timestamp with time zone, p_available boolean); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.input_fingerprint(p_recorded_at timestamp with time zone, p_available boolean) IS 'One reading''s share of a fingerprint: a 32-bit hash of its recorded_at (as its distance from the epoch, so no session setting changes it), the last bit flipped when it says available.';

-- Name: live_pressure_held(); Type: FUNCTION; Schema: public

CREATE FUNCTION public.live_pressure_held() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT EXISTS (
        SELECT 1 FROM pg_catalog.pg_locks l
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
          AND l.classid = 1::oid AND l.objid = 1::oid
          AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = current_database()))
$$;

-- Name: FUNCTION live_pressure_held(); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.live_pressure_held() IS 'True while some process signals that its live writes to this shard are behind: writers of replayed readings wait (internal/livefirst).';

-- Name: mwh_to_wh(bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.mwh_to_wh(p_mwh bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ((p_mwh + CASE WHEN (p_mwh < 0) THEN '-500'::integer ELSE 500 END) / 1000);

-- Name: FUNCTION mwh_to_wh(p_mwh bigint); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.mwh_to_wh(p_mwh bigint) IS 'Milliwatt-hours to watt-hours, rounded half away from zero (as round(p_mwh / 1000.0)) in integer arithmetic. Example: mwh_to_wh(1500) = 2, mwh_to_wh(1499) = 1, mwh_to_wh(-1500) = -2.';

-- Name: one_category_slots(integer, integer, integer); Type: FUNCTION; Schema: public

CREATE FUNCTION public.one_category_slots(p_category integer, p_slots integer, p_missing integer) RETURNS integer[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN (p_category = 13) THEN ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (p_slots + p_missing)] ELSE ((ARRAY[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, p_slots, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])[(14 - p_category):(25 - p_category)] || p_missing) END;

-- Name: FUNCTION one_category_slots(p_category integer, p_slots integer, p_missing integer); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.one_category_slots(p_category integer, p_slots integer, p_missing integer) IS 'A window''s category_slots (13 elements, by availability_category.id) when its p_slots slots with a reading are all in category p_category (1..13) and its p_missing slots without one are information unavailable (13). Example: one_category_slots(1, 28, 2) = {28,0,0,0,0,0,0,0,0,0,0,0,2}.';

-- Name: one_category_wh(integer, bigint); Type: FUNCTION; Schema: public

CREATE FUNCTION public.one_category_wh(p_category integer, p_wh bigint) RETURNS bigint[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (ARRAY[(0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, p_wh, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint, (0)::bigint])[(14 - p_category):(26 - p_category)];

-- Name: FUNCTION one_category_wh(p_category integer, p_wh bigint); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.one_category_wh(p_category integer, p_wh bigint) IS 'A window''s energy per category (13 elements, by availability_category.id) when all of it, p_wh, is in category p_category (1..13). Example: one_category_wh(4, 1200) = {0,0,0,1200,0,0,0,0,0,0,0,0,0}.';

-- Name: reading_category_key(boolean, text, real, text[], integer[], integer, integer, integer, double precision, double precision); Type: FUNCTION; Schema: public

CREATE FUNCTION public.reading_category_key(p_available boolean, p_state text, p_wind real, state_codes text[], state_keys integer[], key_available integer, key_unavailable integer, key_environment integer, cut_in double precision, cut_out double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN COALESCE(CASE WHEN (p_state <> ''::text) THEN (state_keys)[array_position(state_codes, p_state)] ELSE NULL::integer END, LEAST(CASE WHEN p_available THEN key_available ELSE key_unavailable END, CASE WHEN ((p_wind < cut_in) OR (p_wind >= cut_out)) THEN key_environment ELSE NULL::integer END));

-- Name: FUNCTION reading_category_key(p_available boolean, p_state text, p_wind real, state_codes text[], state_keys integer[], key_available integer, key_unavailable integer, key_environment integer, cut_in double precision, cut_out double precision); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.reading_category_key(p_available boolean, p_state text, p_wind real, state_codes text[], state_keys integer[], key_available integer, key_unavailable integer, key_environment integer, cut_in double precision, cut_out double precision) IS 'The category key of one reading under a contract (the arguments after p_wind are control''s contract_keys): a mapped state code alone, else the least of its available flag''s (full performance / forced outage) and, with wind outside [cut_in, cut_out), out of environmental specification''s. Key = priority rank * 16 + availability_category.id; a slot is its readings'' least key.';

-- Name: readings_drop_partitions_before(timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.readings_drop_partitions_before(p_before timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    AS $_$
DECLARE
    part record;
    dropped integer := 0;
    part_end timestamptz;
    cut timestamptz := date_trunc('day', p_before AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
BEGIN
    -- DROP takes an ACCESS EXCLUSIVE lock on readings: give up (and try at
    -- the next upkeep) rather than hold live writes behind it.
    PERFORM set_config('lock_timeout', '5s', true);
    FOR part IN
        SELECT c.relname, to_date(substr(c.relname, 11), 'YYYYMMDD') AS day
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'readings'::regclass
          AND c.relname ~ '^readings_p[0-9]{8}$'
        ORDER BY c.relname
    LOOP
        part_end := (part.day + 1)::timestamp AT TIME ZONE 'UTC';
        CONTINUE WHEN part_end > cut;
        EXECUTE format('DROP TABLE %I', part.relname);
        dropped := dropped + 1;
    END LOOP;
    INSERT INTO readings_retention (dropped_before) VALUES (cut)
    ON CONFLICT (id) DO UPDATE
    SET dropped_before = greatest(readings_retention.dropped_before, EXCLUDED.dropped_before),
        updated_at = CASE WHEN EXCLUDED.dropped_before > readings_retention.dropped_before THEN now() ELSE readings_retention.updated_at END;
    RETURN dropped;
END
$_$;

-- Name: readings_ensure_partition(date); Type: FUNCTION; Schema: public

CREATE FUNCTION public.readings_ensure_partition(p_day date) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    part text := 'readings_p' || to_char(p_day, 'YYYYMMDD');
BEGIN
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('galewatch.readings_ensure_partition'));
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- CREATE ... PARTITION OF would take an ACCESS EXCLUSIVE lock on
    -- readings and queue every live COPY behind any running rollup. Creating
    -- the table, then attaching it, takes only SHARE UPDATE EXCLUSIVE on the
    -- parent. lock_timeout turns a long wait into an error the writer reports.
    PERFORM set_config('lock_timeout', '10s', true);
    BEGIN
        EXECUTE format('CREATE TABLE %I (LIKE readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
    EXCEPTION WHEN duplicate_table THEN
        -- Created by a writer that committed while this one waited.
        RETURN false;
    END;
    EXECUTE format('ALTER TABLE readings ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   part,
                   (p_day::timestamp AT TIME ZONE 'UTC'),
                   ((p_day + 1)::timestamp AT TIME ZONE 'UTC'));
    RETURN true;
END
$$;

-- Name: slot_after(numeric, numeric, integer, integer); Type: FUNCTION; Schema: public

CREATE FUNCTION public.slot_after(t_s numeric, origin_s numeric, cadence_s integer, slots integer) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (LEAST((slots)::numeric, GREATEST((0)::numeric, ceil(((t_s - origin_s) / (cadence_s)::numeric)))))::integer;

-- Name: FUNCTION slot_after(t_s numeric, origin_s numeric, cadence_s integer, slots integer); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.slot_after(t_s numeric, origin_s numeric, cadence_s integer, slots integer) IS 'The slot rule''s index: the first of a turbine''s slots (the k-th starting at origin_s + k * cadence_s, 0 <= k < slots) that starts at or after t_s, all in seconds from the day''s start; slots when none does. The slots starting in a window [from_s, to_s) are slot_after(from_s) .. slot_after(to_s) - 1. Example: origin 1 s, cadence 2 s, 29 slots: slot_after(0) = 0, slot_after(60) = 29, slot_after(4) = 2 (the slot at 5 s).';

-- Name: slot_count(numeric, numeric, numeric, integer, integer); Type: FUNCTION; Schema: public

CREATE FUNCTION public.slot_count(from_s numeric, to_s numeric, origin_s numeric, cadence_s integer, slots integer) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN GREATEST(0, (public.slot_after(to_s, origin_s, cadence_s, slots) - public.slot_after(from_s, origin_s, cadence_s, slots)));

-- Name: FUNCTION slot_count(from_s numeric, to_s numeric, origin_s numeric, cadence_s integer, slots integer); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.slot_count(from_s numeric, to_s numeric, origin_s numeric, cadence_s integer, slots integer) IS 'Expected readings of a window under the slot rule: how many of a turbine''s slots (the k-th starting at origin_s + k * cadence_s, 0 <= k < slots) start in [from_s, to_s). All in seconds from the day''s start. A slot belongs to the window in which it starts, so a day''s windows add up to its slots. Example: origin 1 s, cadence 2 s, 29 slots: the window [0, 60) expects 29 (slots at 1, 3, ..., 57); with 43,200 slots from 0, every one-minute window of the day expects 30.';

-- Name: slot_start(timestamp with time zone, timestamp with time zone, timestamp with time zone, interval, timestamp with time zone); Type: FUNCTION; Schema: public

CREATE FUNCTION public.slot_start(recorded_at timestamp with time zone, origin timestamp with time zone, stop timestamp with time zone, cadence interval, last_slot timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN ((recorded_at >= origin) AND (recorded_at < stop) AND (last_slot IS NOT NULL)) THEN LEAST(date_bin(cadence, recorded_at, origin), last_slot) ELSE NULL::timestamp with time zone END;

-- Name: FUNCTION slot_start(recorded_at timestamp with time zone, origin timestamp with time zone, stop timestamp with time zone, cadence interval, last_slot timestamp with time zone); Type: COMMENT; Schema: public

COMMENT ON FUNCTION public.slot_start(recorded_at timestamp with time zone, origin timestamp with time zone, stop timestamp with time zone, cadence interval, last_slot timestamp with time zone) IS 'The slot rule for one reading. A turbine in service over [origin, stop) of a day (the later of the farm-local day start and its commissioning, the earlier of the day end and its decommissioning) owes one reading per slot: slots start at origin and every cadence after it, and the day has floor((stop - origin) / cadence) of them; last_slot is the last one''s start (NULL when there is none). A reading counts in the slot it falls in (date_bin from origin); one after last_slot, in the slot the day''s or the service''s end cut short, counts in the last. Outside [origin, stop): NULL (counted as out of service). received = distinct slots with a reading, so a second reading in a slot counts once (beyond_cadence). Example: origin 00:00:01, cadence 2 s, stop 00:01:00 (29 slots, last_slot 00:00:57): 00:00:04.7 counts in 00:00:03, 00:00:59.5 in 00:00:57, 00:00:00.5 is out of service.';

-- Name: dirty_mark; Type: TABLE; Schema: public

CREATE TABLE public.dirty_mark (
    id bigint NOT NULL,
    farm_id text NOT NULL,
    day date NOT NULL,
    turbine_ids text[] NOT NULL,
    first_recorded_at timestamp with time zone NOT NULL,
    last_recorded_at timestamp with time zone NOT NULL,
    readings bigint NOT NULL,
    version bigint DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

-- Name: TABLE dirty_mark; Type: COMMENT; Schema: public

COMMENT ON TABLE public.dirty_mark IS 'Farm-days touched by late inserts on this shard, waiting to be recomputed. Written in the same transaction as the readings; deleted only after the recompute it asks for is recorded in the control database (rollup_pending and its job), or with its day when retention cuts it (readings_retention).';

-- Name: COLUMN dirty_mark.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.id IS 'Row id.';

-- Name: COLUMN dirty_mark.farm_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.farm_id IS 'The farm (farm.id in the control database).';

-- Name: COLUMN dirty_mark.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.day IS 'The farm-local day dirtied.';

-- Name: COLUMN dirty_mark.turbine_ids; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.turbine_ids IS 'Turbines whose readings landed (sorted, distinct).';

-- Name: COLUMN dirty_mark.first_recorded_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.first_recorded_at IS 'Earliest event time touched.';

-- Name: COLUMN dirty_mark.last_recorded_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.last_recorded_at IS 'Latest event time touched.';

-- Name: COLUMN dirty_mark.readings; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.readings IS 'Readings inserted under this mark (duplicates excluded).';

-- Name: COLUMN dirty_mark.version; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.version IS 'Bumped on every merge; the drain deletes a mark only at the version it read and recorded in the control database (a mark widened since stays for the next drain).';

-- Name: COLUMN dirty_mark.created_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.created_at IS 'When the first reading of this mark landed.';

-- Name: COLUMN dirty_mark.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_mark.updated_at IS 'When the mark was last widened.';

-- Name: dirty_mark_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.dirty_mark ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.dirty_mark_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: dirty_window; Type: TABLE; Schema: public

CREATE TABLE public.dirty_window (
    farm_id text NOT NULL,
    day date NOT NULL,
    turbine_id text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    window_end timestamp with time zone NOT NULL,
    marked_at timestamp with time zone NOT NULL,
    windows integer DEFAULT 1 NOT NULL,
    CONSTRAINT dirty_window_windows_check CHECK ((windows > 0))
);

-- Name: TABLE dirty_window; Type: COMMENT; Schema: public

COMMENT ON TABLE public.dirty_window IS 'Turbine-windows touched by late inserts, waiting for their correction: one row per writer''s run of consecutive windows of one turbine, in the same transaction as its readings (append-only: a window may be in several rows); taken by the computation that reads them, which takes the rows its snapshot sees and writes back the part of a run it does not recompute.';

-- Name: COLUMN dirty_window.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_window.window_start IS 'Start of the first window of the run (on the farm''s window grid).';

-- Name: COLUMN dirty_window.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_window.window_end IS 'End of the last window of the run (the day''s end for its last window).';

-- Name: COLUMN dirty_window.marked_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_window.marked_at IS 'Writer''s clock of the insert that wrote this mark.';

-- Name: COLUMN dirty_window.windows; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.dirty_window.windows IS 'How many windows the run covers.';

-- Name: farm_window_sum; Type: TABLE; Schema: public

CREATE TABLE public.farm_window_sum (
    farm_id text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    window_end timestamp with time zone NOT NULL,
    day date NOT NULL,
    turbines integer NOT NULL,
    expected bigint NOT NULL,
    received bigint NOT NULL,
    available bigint NOT NULL,
    late bigint NOT NULL,
    readings bigint NOT NULL,
    span_s bigint DEFAULT 0 NOT NULL
)
WITH (fillfactor='70');

-- Name: TABLE farm_window_sum; Type: COMMENT; Schema: public

COMMENT ON TABLE public.farm_window_sum IS 'Per farm window, the sums of this shard''s turbine_window rows (its part of the farm window), maintained by every write of turbine_window in the same statement. Rebuilt for a farm-day when the day is closed; a difference found then is a bug (window_sum alert).';

-- Name: COLUMN farm_window_sum.turbines; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_sum.turbines IS 'turbine_window rows summed (0: none left; the row is ignored).';

-- Name: COLUMN farm_window_sum.readings; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_sum.readings IS 'Readings counted: received + beyond_cadence + out_of_service.';

-- Name: COLUMN farm_window_sum.span_s; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.farm_window_sum.span_s IS 'The summed turbine_window rows'' lengths, in seconds, added up: the window is whole on its grid when span_s = turbines x (window_end - window_start).';

-- Name: goose_db_version; Type: TABLE; Schema: public

CREATE TABLE public.goose_db_version (
    id integer NOT NULL,
    version_id bigint NOT NULL,
    is_applied boolean NOT NULL,
    tstamp timestamp without time zone DEFAULT now() NOT NULL
);

-- Name: goose_db_version_id_seq; Type: SEQUENCE; Schema: public

ALTER TABLE public.goose_db_version ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.goose_db_version_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: readings; Type: TABLE; Schema: public

CREATE TABLE public.readings (
    turbine_id text NOT NULL COLLATE pg_catalog."C",
    recorded_at timestamp with time zone NOT NULL,
    received_at timestamp with time zone NOT NULL,
    available boolean NOT NULL,
    power_kw real NOT NULL,
    wind_ms real NOT NULL,
    state text DEFAULT ''::text
)
PARTITION BY RANGE (recorded_at);

-- Name: TABLE readings; Type: COMMENT; Schema: public

COMMENT ON TABLE public.readings IS 'Raw readings, partitioned by UTC day of recorded_at (readings_pYYYYMMDD).';

-- Name: COLUMN readings.turbine_id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.turbine_id IS 'The turbine (turbine.id in the control database).';

-- Name: COLUMN readings.recorded_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.recorded_at IS 'Event time: the turbine''s own, possibly wrong, clock.';

-- Name: COLUMN readings.received_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.received_at IS 'Processing time: stamped by the ingest box (or by our ingest when absent).';

-- Name: COLUMN readings.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.available IS 'The turbine reported itself available.';

-- Name: COLUMN readings.power_kw; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.power_kw IS 'Active power, kW.';

-- Name: COLUMN readings.wind_ms; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.wind_ms IS 'Wind speed, m/s.';

-- Name: COLUMN readings.state; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings.state IS 'The controller''s status code as sent; '''' (or NULL, in readings stored before '''' was the writers'' "none"): none. The farm''s availability contract maps it to a category.';

-- Name: readings_retention; Type: TABLE; Schema: public

CREATE TABLE public.readings_retention (
    id boolean DEFAULT true NOT NULL,
    dropped_before timestamp with time zone NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT readings_retention_id_check CHECK (id)
);

-- Name: TABLE readings_retention; Type: COMMENT; Schema: public

COMMENT ON TABLE public.readings_retention IS 'One row once retention has dropped a partition: readings recorded before dropped_before may be gone, so a day that starts before it can no longer be recomputed.';

-- Name: COLUMN readings_retention.id; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings_retention.id IS 'Always true: the table holds at most one row.';

-- Name: COLUMN readings_retention.dropped_before; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings_retention.dropped_before IS 'The UTC midnight before which retention has dropped every readings partition: readings before it are gone, and a day that starts before it is neither recomputed nor kept in turbine_window, farm_window_sum or the dirty marks.';

-- Name: COLUMN readings_retention.updated_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.readings_retention.updated_at IS 'When retention last moved dropped_before.';

-- Name: readings_staging; Type: TABLE; Schema: public

CREATE TABLE public.readings_staging (
    turbine_id text NOT NULL COLLATE pg_catalog."C",
    recorded_at timestamp with time zone NOT NULL,
    received_at timestamp with time zone NOT NULL,
    available boolean NOT NULL,
    power_kw real NOT NULL,
    wind_ms real NOT NULL,
    state text,
    CONSTRAINT readings_staging_is_a_template CHECK (false) NO INHERIT
);

-- Name: TABLE readings_staging; Type: COMMENT; Schema: public

COMMENT ON TABLE public.readings_staging IS 'Template of the per-session temporary staging table: a batch that hits duplicate keys goes through it, and so does a move''s copy of a turbine''s readings from its old shard. Always empty.';

-- Name: turbine_fence; Type: TABLE; Schema: public

CREATE TABLE public.turbine_fence (
    turbine_id text NOT NULL COLLATE pg_catalog."C",
    moved_to text NOT NULL,
    since timestamp with time zone NOT NULL
);

-- Name: TABLE turbine_fence; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_fence IS 'Turbines moved away from this shard: ingest refuses their readings here (the batch fails, to re-send to the new shard). Removed when a turbine moves back.';

-- Name: COLUMN turbine_fence.moved_to; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_fence.moved_to IS 'The shard that holds the turbine''s readings now.';

-- Name: COLUMN turbine_fence.since; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_fence.since IS 'When the move fenced this shard.';

-- Name: turbine_window; Type: TABLE; Schema: public

CREATE TABLE public.turbine_window (
    turbine_id text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    window_end timestamp with time zone NOT NULL,
    farm_id text NOT NULL,
    day date NOT NULL,
    expected integer NOT NULL,
    received integer NOT NULL,
    available integer NOT NULL,
    beyond_cadence integer NOT NULL,
    out_of_service integer NOT NULL,
    late integer NOT NULL,
    early integer NOT NULL,
    min_lag_ms bigint,
    max_lag_ms bigint,
    last_received_at timestamp with time zone,
    computed_at timestamp with time zone NOT NULL,
    input_hash bigint,
    category_slots integer[],
    category_actual_wh bigint[],
    category_potential_wh bigint[]
)
WITH (fillfactor='70');

-- Name: TABLE turbine_window; Type: COMMENT; Schema: public

COMMENT ON TABLE public.turbine_window IS 'One row per turbine per event-time window: the counts of the slot rule (as turbine_day) for the slots that start in the window. A day''s windows add up to its turbine_day row.';

-- Name: COLUMN turbine_window.window_start; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.window_start IS 'Window start: farm-local midnight + k * window_s.';

-- Name: COLUMN turbine_window.window_end; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.window_end IS 'Window end (the day''s end for a last window cut short).';

-- Name: COLUMN turbine_window.day; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.day IS 'The farm-local day holding the window.';

-- Name: COLUMN turbine_window.expected; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.expected IS 'Cadence slots of the turbine''s service time that start in the window.';

-- Name: COLUMN turbine_window.received; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.received IS 'Of those slots, the ones with a reading.';

-- Name: COLUMN turbine_window.available; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.available IS 'Of those slots, the ones none of whose readings says unavailable.';

-- Name: COLUMN turbine_window.beyond_cadence; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.beyond_cadence IS 'Readings in a slot already counted.';

-- Name: COLUMN turbine_window.out_of_service; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.out_of_service IS 'Readings in the window (by recorded_at) outside the turbine''s service interval.';

-- Name: COLUMN turbine_window.computed_at; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.computed_at IS 'Clock of the computation that wrote the row.';

-- Name: COLUMN turbine_window.input_hash; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.input_hash IS 'Order-independent fingerprint of the readings counted in this row: sum of input_fingerprint(recorded_at, available). NULL: computed before fingerprints existed.';

-- Name: COLUMN turbine_window.category_slots; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.category_slots IS 'Slots of the window per information category, indexed by the control database''s availability_category.id (13 elements, summing to expected). NULL: computed before categories.';

-- Name: COLUMN turbine_window.category_actual_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.category_actual_wh IS 'Energy produced per category (Wh, indexed by the control database''s availability_category.id). NULL: computed before energy.';

-- Name: COLUMN turbine_window.category_potential_wh; Type: COMMENT; Schema: public

COMMENT ON COLUMN public.turbine_window.category_potential_wh IS 'Energy the farm''s power curve gives per category at the slots'' own wind (Wh). NULL: no model, or computed before energy.';

-- Name: dirty_mark dirty_mark_farm_id_day_key; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.dirty_mark
    ADD CONSTRAINT dirty_mark_farm_id_day_key UNIQUE (farm_id, day);

-- Name: dirty_mark dirty_mark_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.dirty_mark
    ADD CONSTRAINT dirty_mark_pkey PRIMARY KEY (id);

-- Name: farm_window_sum farm_window_sum_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.farm_window_sum
    ADD CONSTRAINT farm_window_sum_pkey PRIMARY KEY (farm_id, window_start);

-- Name: goose_db_version goose_db_version_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.goose_db_version
    ADD CONSTRAINT goose_db_version_pkey PRIMARY KEY (id);

-- Name: readings readings_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.readings
    ADD CONSTRAINT readings_pkey PRIMARY KEY (turbine_id, recorded_at) INCLUDE (received_at, available, power_kw, wind_ms, state);

-- Name: readings_retention readings_retention_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.readings_retention
    ADD CONSTRAINT readings_retention_pkey PRIMARY KEY (id);

-- Name: turbine_fence turbine_fence_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_fence
    ADD CONSTRAINT turbine_fence_pkey PRIMARY KEY (turbine_id);

-- Name: turbine_window turbine_window_pkey; Type: CONSTRAINT; Schema: public

ALTER TABLE ONLY public.turbine_window
    ADD CONSTRAINT turbine_window_pkey PRIMARY KEY (turbine_id, window_start);

-- Name: dirty_window_claim_idx; Type: INDEX; Schema: public

CREATE INDEX dirty_window_claim_idx ON public.dirty_window USING btree (farm_id, day, window_start, turbine_id);

-- Name: dirty_window_farm_marked_idx; Type: INDEX; Schema: public

CREATE INDEX dirty_window_farm_marked_idx ON public.dirty_window USING btree (farm_id, marked_at);

-- Name: turbine_window_farm_idx; Type: INDEX; Schema: public

CREATE INDEX turbine_window_farm_idx ON public.turbine_window USING btree (farm_id, window_start);

-- Name: FUNCTION pg_advisory_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_lock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock_all(); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_all() FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_unlock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_unlock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_lock_shared(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock(integer, integer) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock_shared(bigint); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(bigint) FROM PUBLIC;

-- Name: FUNCTION pg_try_advisory_xact_lock_shared(integer, integer); Type: ACL; Schema: pg_catalog

REVOKE ALL ON FUNCTION pg_catalog.pg_try_advisory_xact_lock_shared(integer, integer) FROM PUBLIC;

-- Name: TABLE dirty_mark; Type: ACL; Schema: public

GRANT INSERT ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.farm_id; Type: ACL; Schema: public

GRANT SELECT(farm_id) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.day; Type: ACL; Schema: public

GRANT SELECT(day) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.turbine_ids; Type: ACL; Schema: public

GRANT SELECT(turbine_ids),UPDATE(turbine_ids) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.first_recorded_at; Type: ACL; Schema: public

GRANT SELECT(first_recorded_at),UPDATE(first_recorded_at) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.last_recorded_at; Type: ACL; Schema: public

GRANT SELECT(last_recorded_at),UPDATE(last_recorded_at) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.readings; Type: ACL; Schema: public

GRANT SELECT(readings),UPDATE(readings) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.version; Type: ACL; Schema: public

GRANT SELECT(version),UPDATE(version) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: COLUMN dirty_mark.updated_at; Type: ACL; Schema: public

GRANT SELECT(updated_at),UPDATE(updated_at) ON TABLE public.dirty_mark TO galewatch_ingest;

-- Name: TABLE dirty_window; Type: ACL; Schema: public

GRANT INSERT ON TABLE public.dirty_window TO galewatch_ingest;

-- Name: TABLE readings; Type: ACL; Schema: public

GRANT INSERT ON TABLE public.readings TO galewatch_ingest;

-- Name: COLUMN readings.turbine_id; Type: ACL; Schema: public

GRANT SELECT(turbine_id) ON TABLE public.readings TO galewatch_ingest;

-- Name: COLUMN readings.recorded_at; Type: ACL; Schema: public

GRANT SELECT(recorded_at) ON TABLE public.readings TO galewatch_ingest;

-- Name: TABLE readings_staging; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.readings_staging TO galewatch_ingest;

-- Name: TABLE turbine_fence; Type: ACL; Schema: public

GRANT SELECT ON TABLE public.turbine_fence TO galewatch_ingest;
