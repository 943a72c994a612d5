-- +goose Up
-- Operator text (internal/text.Check): one line of UTF-8 without control,
-- bidi or zero-width characters, at most 2,000 bytes. An acceptance's note
-- and who accepted go into farm_day_status's why, which the report's psql
-- file prints as stored, and an event's words into event list: a row written
-- by hand (psql) is held to the rule the CLI and the API already apply.
-- NOT VALID and insert-only on operator_event: an upgrade never fails on a
-- row written before (a tab or a line break was allowed in a note), and an
-- event from before can still be voided (a CHECK would test its note again).
CREATE FUNCTION operator_text_ok(v text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN octet_length(v) <= 2000
   AND v !~ '[\u0001-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]';
COMMENT ON FUNCTION operator_text_ok(text) IS 'Whether v is operator text: at most 2,000 bytes without a control character (Unicode Cc: C0 with tab and line breaks, DEL, C1), format character (Cf: bidi controls, zero-width characters, soft hyphen, tags and the rest, as of Unicode 15) or line or paragraph separator (U+2028, U+2029). internal/text.Check is the same rule with the reason (TestSQLAgrees). docs/operator.md: Operator events.';

ALTER TABLE farm_day_acceptance ADD CONSTRAINT farm_day_acceptance_text
    CHECK (operator_text_ok(note) AND operator_text_ok(accepted_by)) NOT VALID;
COMMENT ON CONSTRAINT farm_day_acceptance_text ON farm_day_acceptance IS 'The note and who accepted are operator text (operator_text_ok): the report prints them in why.';

-- +goose StatementBegin
CREATE FUNCTION operator_event_text() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NOT (operator_text_ok(NEW.note) AND operator_text_ok(NEW.entered_by)) THEN
        RAISE EXCEPTION 'operator_event: note and entered_by must be operator text (operator_text_ok)'
            USING ERRCODE = 'check_violation';
    END IF;
    IF NOT coalesce(operator_text_ok(NEW.voided_by) AND operator_text_ok(NEW.void_note), true) THEN
        RAISE EXCEPTION 'operator_event %: voided_by and void_note must be operator text (operator_text_ok)', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION operator_event_text() IS 'Holds an operator_event''s words to operator_text_ok as they are written: the note and entered_by on insert, voided_by and void_note on a void.';
CREATE TRIGGER operator_event_text BEFORE INSERT OR UPDATE ON operator_event
    FOR EACH ROW EXECUTE FUNCTION operator_event_text();
COMMENT ON TRIGGER operator_event_text ON operator_event IS 'Refuses an event or a void whose words are not operator text (operator_event_text).';
-- as the audit trail's guards: session_replication_role = replica does not skip it
ALTER TABLE operator_event ENABLE ALWAYS TRIGGER operator_event_text;

-- +goose Down
DROP TRIGGER operator_event_text ON operator_event;
DROP FUNCTION operator_event_text();
ALTER TABLE farm_day_acceptance DROP CONSTRAINT farm_day_acceptance_text;
DROP FUNCTION operator_text_ok(text);
