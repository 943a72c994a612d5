-- +goose Up
-- Operator events (IEC 61400-26-1 information the turbine cannot report: a
-- grid curtailment, a force majeure, scheduled maintenance). An event is an
-- interval of one category on a farm's turbines; a slot it covers (the
-- slot's start in [from_at, to_at)) takes the better by the contract's
-- priority of the event's category and what its readings say (a slot
-- without a reading: information unavailable). The window statement reads
-- a day's live events with its contract (FarmDayGet). Nothing is deleted: a
-- mistaken event is voided, and stays in the audit trail.
CREATE TABLE operator_event (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    farm_id         text NOT NULL REFERENCES farm (id),
    turbine_ids     text[] NOT NULL DEFAULT '{}',
    from_at         timestamptz NOT NULL,
    to_at           timestamptz NOT NULL,
    category_id     smallint NOT NULL REFERENCES availability_category (id),
    note            text NOT NULL,
    entered_by      text NOT NULL,
    entered_at      timestamptz NOT NULL DEFAULT now(),
    entered_db_user text NOT NULL DEFAULT current_user,
    voided_by       text,
    voided_at       timestamptz,
    void_note       text,
    CHECK (to_at > from_at),
    CHECK (note <> '' AND entered_by <> ''),
    -- information unavailable is what no information is: not an event
    CHECK (category_id <> 13),
    CHECK ((voided_at IS NULL) = (voided_by IS NULL) AND (voided_at IS NULL) = (void_note IS NULL)),
    CHECK (voided_by IS NULL OR (voided_by <> '' AND void_note <> ''))
);
CREATE INDEX operator_event_farm_idx ON operator_event (farm_id, from_at);
COMMENT ON TABLE operator_event IS 'Operator events: an interval of an availability category on a farm''s turbines, entered by a person (orchestrator event add, POST /api/v1/events). Never deleted or edited; a void (voided_*) takes it out of the counts and keeps it in the trail. docs/operator.md, "Operator events".';
COMMENT ON COLUMN operator_event.id IS 'The event''s number (event void ID).';
COMMENT ON COLUMN operator_event.farm_id IS 'The farm.';
COMMENT ON COLUMN operator_event.turbine_ids IS 'The turbines it covers; empty: every turbine of the farm.';
COMMENT ON COLUMN operator_event.from_at IS 'Start (inclusive): a slot starting at or after it is covered.';
COMMENT ON COLUMN operator_event.to_at IS 'End (exclusive): a slot starting before it is covered.';
COMMENT ON COLUMN operator_event.category_id IS 'The category (availability_category.id; not information unavailable).';
COMMENT ON COLUMN operator_event.note IS 'Why, in the operator''s words (required).';
COMMENT ON COLUMN operator_event.entered_by IS 'Who entered it (the CLI''s --by, by default the OS user; the API''s entered_by).';
COMMENT ON COLUMN operator_event.entered_at IS 'When it was entered.';
COMMENT ON COLUMN operator_event.entered_db_user IS 'The database role that inserted it.';
COMMENT ON COLUMN operator_event.voided_by IS 'Who voided it (NULL: in force).';
COMMENT ON COLUMN operator_event.voided_at IS 'When it was voided.';
COMMENT ON COLUMN operator_event.void_note IS 'Why it was voided.';

-- The audit trail holds: no delete, and the only update is a first void.
-- +goose StatementBegin
CREATE FUNCTION operator_event_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'operator_event % is never deleted: void it (orchestrator event void)', OLD.id;
    END IF;
    IF OLD.voided_at IS NOT NULL THEN
        RAISE EXCEPTION 'operator_event % is already voided', OLD.id;
    END IF;
    IF (NEW.farm_id, NEW.turbine_ids, NEW.from_at, NEW.to_at, NEW.category_id, NEW.note, NEW.entered_by, NEW.entered_at, NEW.entered_db_user)
       IS DISTINCT FROM (OLD.farm_id, OLD.turbine_ids, OLD.from_at, OLD.to_at, OLD.category_id, OLD.note, OLD.entered_by, OLD.entered_at, OLD.entered_db_user) THEN
        RAISE EXCEPTION 'operator_event % is never edited: void it and enter another', OLD.id;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION operator_event_guard() IS 'Keeps operator_event an audit trail: refuses a delete, an edit, and a second void.';
CREATE TRIGGER operator_event_guard BEFORE UPDATE OR DELETE ON operator_event
    FOR EACH ROW EXECUTE FUNCTION operator_event_guard();

-- contract_key is a category's key under a contract: its rank in the
-- contract's priority × 16 + its id (the least key of a slot wins), as
-- contract_keys gives a reading's.
CREATE FUNCTION contract_key(p_contract bigint, p_category smallint) RETURNS integer
LANGUAGE sql STABLE
RETURN (SELECT array_position(c.priority, p_category) * 16 + p_category FROM availability_contract c WHERE c.id = p_contract);
COMMENT ON FUNCTION contract_key(bigint, smallint) IS 'Category p_category''s key under contract p_contract: priority rank × 16 + id (TurbineWindowUpsert''s slot key; the least wins). An operator event''s key, and information unavailable''s for a slot without a reading.';

-- +goose Down
DROP FUNCTION contract_key(bigint, smallint);
DROP TABLE operator_event;
DROP FUNCTION operator_event_guard();
