-- +goose Up
-- The two audit trails, operator_event and farm_day_acceptance, refuse what
-- a slip of their owner could do to them: a row trigger refuses a delete and
-- an edit (operator_event_guard lets a first void through), a statement
-- trigger refuses TRUNCATE (which fires no row trigger, and also comes by
-- TRUNCATE ... CASCADE from farm). The triggers fire ALWAYS, so a superuser's
-- session_replication_role = replica does not skip them either: only
-- disabling or dropping one by name does (docs/dba.md, "Roles").
-- +goose StatementBegin
CREATE FUNCTION farm_day_acceptance_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'farm_day_acceptance % is never deleted: it records who accepted farm % day %, when and why', OLD.id, OLD.farm_id, OLD.day;
    END IF;
    RAISE EXCEPTION 'farm_day_acceptance % is never edited: it records who accepted farm % day %, when and why', OLD.id, OLD.farm_id, OLD.day;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION farm_day_acceptance_guard() IS 'Keeps farm_day_acceptance an audit trail: refuses a delete and an edit.';
CREATE TRIGGER farm_day_acceptance_guard BEFORE UPDATE OR DELETE ON farm_day_acceptance
    FOR EACH ROW EXECUTE FUNCTION farm_day_acceptance_guard();
COMMENT ON TRIGGER farm_day_acceptance_guard ON farm_day_acceptance IS 'Refuses a delete and an edit of an acceptance (farm_day_acceptance_guard).';

-- +goose StatementBegin
CREATE FUNCTION audit_trail_truncate_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is an audit trail: never truncated', TG_TABLE_NAME;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION audit_trail_truncate_guard() IS 'Refuses TRUNCATE of an audit trail (operator_event, farm_day_acceptance).';
CREATE TRIGGER operator_event_no_truncate BEFORE TRUNCATE ON operator_event
    FOR EACH STATEMENT EXECUTE FUNCTION audit_trail_truncate_guard();
COMMENT ON TRIGGER operator_event_no_truncate ON operator_event IS 'Refuses TRUNCATE of the events (audit_trail_truncate_guard): a mistaken event is voided.';
CREATE TRIGGER farm_day_acceptance_no_truncate BEFORE TRUNCATE ON farm_day_acceptance
    FOR EACH STATEMENT EXECUTE FUNCTION audit_trail_truncate_guard();
COMMENT ON TRIGGER farm_day_acceptance_no_truncate ON farm_day_acceptance IS 'Refuses TRUNCATE of the acceptances (audit_trail_truncate_guard).';
COMMENT ON TRIGGER operator_event_guard ON operator_event IS 'Refuses a delete, an edit and a second void of an event (operator_event_guard).';

ALTER TABLE operator_event ENABLE ALWAYS TRIGGER operator_event_guard;
ALTER TABLE operator_event ENABLE ALWAYS TRIGGER operator_event_no_truncate;
ALTER TABLE farm_day_acceptance ENABLE ALWAYS TRIGGER farm_day_acceptance_guard;
ALTER TABLE farm_day_acceptance ENABLE ALWAYS TRIGGER farm_day_acceptance_no_truncate;

COMMENT ON TABLE operator_event IS 'Operator events: an interval of an availability category on a farm''s turbines, entered by a person (orchestrator event add, POST /api/v1/events). Never deleted, edited or truncated (operator_event_guard, operator_event_no_truncate); a void (voided_*) takes it out of the counts and keeps it in the trail. docs/operator.md, "Operator events".';
COMMENT ON TABLE farm_day_acceptance IS 'Operators'' acceptances of incomplete farm-days (orchestrator day accept), never deleted, edited or truncated (farm_day_acceptance_guard, farm_day_acceptance_no_truncate): the audit trail. The latest of a day makes it final while no more of its slots are missing than when it was accepted (farm_day_status notes who, when and why). docs/report-user.md: Incomplete days.';

-- +goose Down
COMMENT ON TABLE farm_day_acceptance IS 'Operators'' acceptances of incomplete farm-days (orchestrator day accept), never deleted: the audit trail. The latest of a day makes it final while no more of its slots are missing than when it was accepted (farm_day_status notes who, when and why). docs/report-user.md: Incomplete days.';
COMMENT ON TABLE operator_event IS 'Operator events: an interval of an availability category on a farm''s turbines, entered by a person (orchestrator event add, POST /api/v1/events). Never deleted or edited; a void (voided_*) takes it out of the counts and keeps it in the trail. docs/operator.md, "Operator events".';
COMMENT ON TRIGGER operator_event_guard ON operator_event IS NULL;
ALTER TABLE operator_event ENABLE TRIGGER operator_event_guard;
DROP TRIGGER farm_day_acceptance_no_truncate ON farm_day_acceptance;
DROP TRIGGER operator_event_no_truncate ON operator_event;
DROP FUNCTION audit_trail_truncate_guard();
DROP TRIGGER farm_day_acceptance_guard ON farm_day_acceptance;
DROP FUNCTION farm_day_acceptance_guard();
