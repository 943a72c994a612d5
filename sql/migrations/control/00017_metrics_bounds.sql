-- +goose Up
-- /metrics reads the alerts of each farm and kind on every scrape. Alerts
-- only accumulate (one stays once raised), so grouping the whole table on
-- every scrape would grow without bound (525,021 alerts: 290-400 ms). The
-- counts are kept up to date instead, by the statements that raise alerts
-- (statement triggers over the rows they insert or delete), and a scrape
-- reads one row per farm and kind.
CREATE TABLE alert_count (
    farm_id        text NOT NULL,
    kind           text NOT NULL,
    alerts         bigint NOT NULL CHECK (alerts > 0),
    last_raised_at timestamptz NOT NULL,
    PRIMARY KEY (farm_id, kind)
);
COMMENT ON TABLE alert_count IS 'Per farm and kind, how many alerts are raised and when the latest was: kept up to date by triggers on alert, so /metrics does not group the alert table on every scrape.';
COMMENT ON COLUMN alert_count.farm_id IS 'The farm (farm.id).';
COMMENT ON COLUMN alert_count.kind IS 'The alert kind (divergence, completeness, window_sum).';
COMMENT ON COLUMN alert_count.alerts IS 'Alerts of the farm and kind in the alert table.';
COMMENT ON COLUMN alert_count.last_raised_at IS 'The latest raised_at among them.';
INSERT INTO alert_count (farm_id, kind, alerts, last_raised_at)
SELECT farm_id, kind, count(*), max(raised_at) FROM alert GROUP BY farm_id, kind;

-- The latest of a farm and kind, after a delete, through this index.
CREATE INDEX alert_farm_kind_raised_idx ON alert (farm_id, kind, raised_at);

-- Rows actually inserted (an alert refreshed by ON CONFLICT DO UPDATE is
-- not new), counted per statement; the counts' rows are locked in key
-- order, so two statements cannot deadlock on them.
-- +goose StatementBegin
CREATE FUNCTION alert_count_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO alert_count (farm_id, kind, alerts, last_raised_at)
    SELECT n.farm_id, n.kind, count(*), max(n.raised_at)
    FROM inserted n
    GROUP BY n.farm_id, n.kind
    ORDER BY n.farm_id, n.kind
    ON CONFLICT (farm_id, kind) DO UPDATE
    SET alerts = alert_count.alerts + EXCLUDED.alerts,
        last_raised_at = greatest(alert_count.last_raised_at, EXCLUDED.last_raised_at);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION alert_count_inserted() IS 'Adds the alerts a statement inserted to alert_count.';
CREATE TRIGGER alert_count_inserted AFTER INSERT ON alert
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION alert_count_inserted();

-- +goose StatementBegin
CREATE FUNCTION alert_count_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- A farm and kind with none left goes first (the update below would
    -- leave it at 0 otherwise), then the others are counted down.
    DELETE FROM alert_count c
    USING (SELECT o.farm_id, o.kind, count(*) AS alerts FROM deleted o GROUP BY o.farm_id, o.kind) AS d
    WHERE c.farm_id = d.farm_id AND c.kind = d.kind AND c.alerts <= d.alerts;
    UPDATE alert_count c
    SET alerts = c.alerts - d.alerts,
        last_raised_at = coalesce((SELECT max(a.raised_at) FROM alert a WHERE a.farm_id = c.farm_id AND a.kind = c.kind), c.last_raised_at)
    FROM (SELECT o.farm_id, o.kind, count(*) AS alerts FROM deleted o GROUP BY o.farm_id, o.kind) AS d
    WHERE c.farm_id = d.farm_id AND c.kind = d.kind;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION alert_count_deleted() IS 'Takes the alerts a statement deleted off alert_count.';
CREATE TRIGGER alert_count_deleted AFTER DELETE ON alert
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION alert_count_deleted();

-- +goose StatementBegin
CREATE FUNCTION alert_count_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM alert_count;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
COMMENT ON FUNCTION alert_count_truncated() IS 'Empties alert_count when alert is truncated.';
CREATE TRIGGER alert_count_truncated AFTER TRUNCATE ON alert
    FOR EACH STATEMENT EXECUTE FUNCTION alert_count_truncated();

GRANT SELECT ON alert_count TO galewatch_reporting;

-- +goose Down
REVOKE ALL ON alert_count FROM galewatch_reporting;
DROP TRIGGER alert_count_truncated ON alert;
DROP TRIGGER alert_count_deleted ON alert;
DROP TRIGGER alert_count_inserted ON alert;
DROP FUNCTION alert_count_truncated();
DROP FUNCTION alert_count_deleted();
DROP FUNCTION alert_count_inserted();
DROP INDEX alert_farm_kind_raised_idx;
DROP TABLE alert_count;
