-- +goose Up
-- The stalled-turbine watcher judges every window whose readings change,
-- in whatever order: each window the fast path publishes, and each window
-- a correction recomputes (judge_stalls). So a stall can be found late,
-- earlier than one already raised, and a window can be judged twice:
-- turbine_stall_window keeps the windows each turbine was judged stalled
-- in, so that judging one again changes nothing and a stall's windows are
-- counted exactly; a stall is the run of a turbine's stalled windows with
-- no reading over the power floor between them.
CREATE TABLE turbine_stall_window (
    turbine_id   text NOT NULL,
    window_start timestamptz NOT NULL,
    window_end   timestamptz NOT NULL,
    judged_at    timestamptz NOT NULL,
    late         boolean NOT NULL,
    PRIMARY KEY (turbine_id, window_start),
    CHECK (window_end > window_start)
);
COMMENT ON TABLE turbine_stall_window IS 'The windows a turbine was judged stalled in (StallJudge), one row each: the stall holding it is the turbine''s turbine_stall whose [first_window, last_window] holds window_start. Written by the stalled-turbine watcher; a window judged stalled again is left as it is, one judged not stalled is deleted.';
COMMENT ON COLUMN turbine_stall_window.turbine_id IS 'The turbine.';
COMMENT ON COLUMN turbine_stall_window.window_start IS 'Start of the window it was stalled in.';
COMMENT ON COLUMN turbine_stall_window.window_end IS 'End of that window.';
COMMENT ON COLUMN turbine_stall_window.judged_at IS 'When the watcher first judged it stalled in the window (the clock of the process judging).';
COMMENT ON COLUMN turbine_stall_window.late IS 'Judged by a correction (judge_stalls: its readings arrived after the window was published), not at the window''s publication.';

ALTER TABLE turbine_stall
    ADD COLUMN found_late boolean NOT NULL DEFAULT false,
    ADD COLUMN found_at timestamptz,
    ADD COLUMN first_window_end timestamptz;
COMMENT ON COLUMN turbine_stall.found_late IS 'Its first window was judged stalled by a correction (turbine_stall_window.late): the readings showing it arrived after the window was published.';
COMMENT ON COLUMN turbine_stall.found_at IS 'When its first window was judged stalled (raised_at, unless a window found later moved first_window back). How late it was found: found_at - first_window_end.';
COMMENT ON COLUMN turbine_stall.first_window_end IS 'End of its first window.';
COMMENT ON COLUMN turbine_stall.raised_at IS 'When the first of its windows was judged stalled (the clock of the process judging).';
COMMENT ON COLUMN turbine_stall.first_window IS 'Start of the first window it was stalled in (turbine_stall_window).';
COMMENT ON COLUMN turbine_stall.last_window IS 'Start of the latest window it was stalled in (turbine_stall_window).';
COMMENT ON COLUMN turbine_stall.windows IS 'How many windows it was judged stalled in (its turbine_stall_window rows).';
COMMENT ON COLUMN turbine_stall.cleared_window IS 'Start of the first window after its last in which the turbine produced (a reading over the power floor), whenever that reading arrived.';
COMMENT ON TABLE turbine_stall IS 'Stalled turbines: available, producing nothing, while the farm''s wind is in range and its neighbours produce (stall_watch). One row per stall: a run of a turbine''s stalled windows (turbine_stall_window) with no reading over the power floor between them, open until the turbine produces again; kept after it clears. Written by the stalled-turbine watcher, at each window''s publication and after each correction (judge_stalls).';

-- The stalls of before keep their count; their first and last windows are
-- recorded so that a window judged from now on finds its stall.
UPDATE turbine_stall s
SET found_at = s.raised_at, first_window_end = s.first_window + make_interval(secs => r.window_s)
FROM farm_rules r
WHERE r.farm_id = s.farm_id;
INSERT INTO turbine_stall_window (turbine_id, window_start, window_end, judged_at, late)
SELECT s.turbine_id, w.window_start, w.window_start + make_interval(secs => r.window_s), s.raised_at, false
FROM turbine_stall s
JOIN farm_rules r ON r.farm_id = s.farm_id
CROSS JOIN LATERAL (VALUES (s.first_window), (s.last_window)) AS w(window_start)
ON CONFLICT DO NOTHING;

-- a turbine's stalls in order (the watcher places a window among them)
CREATE INDEX turbine_stall_turbine_idx ON turbine_stall (turbine_id, first_window);
GRANT SELECT ON turbine_stall_window TO galewatch_reporting;

-- +goose Down
DROP INDEX turbine_stall_turbine_idx;
ALTER TABLE turbine_stall DROP COLUMN found_late, DROP COLUMN found_at, DROP COLUMN first_window_end;
DROP TABLE turbine_stall_window;
