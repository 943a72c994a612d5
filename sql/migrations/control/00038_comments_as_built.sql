-- +goose Up
-- What each object is now, where its comment still said what it once was:
-- turbine_day is summed from windows, turbines move between shards and are
-- retired only by a fleet apply, the registry is effective-dated (a day is
-- cut and counted by its own versions), refused lines are capped per body.
COMMENT ON TABLE turbine_day IS 'One row per turbine per farm-local day: expected, received and available cadence slots (the slot rule), with counts and lags of the day''s readings. Added up from the day''s turbine_window rows on the turbine''s shard (TurbineDayFromWindows) and overwritten whole, never incremented, by each rollup_day job of the farm-day.';
COMMENT ON TABLE ingest_reject IS 'Lines refused at ingest, one row per line with the reason: the first fleet_rules.reject_rows_kept of each body or file; the rest are counted in its ingest_reject_summary row. The body''s other lines are stored.';
COMMENT ON VIEW farm_rules IS 'The rules in force for each farm now: its override, else the fleet default. Ingest, the fast path and the alerts read them here; a day''s counts use the rules of the farm_version governing that day.';
COMMENT ON TABLE fleet_rules IS 'Fleet-wide defaults of the rules that define stored counts (one row, from the fleet file''s rules: section). A farm may override each but reject_rows_kept and reject_retention_days (farm.*); farm_rules gives the values in force.';
COMMENT ON TABLE rollup_pending IS 'Farm-day-shards the drain found dirtied by late readings, whose rollup_day job has not claimed them yet: the job claims (deletes) the row before reading the shard. A request whose job will never run (cancelled, discarded) is given a new job by the next drain.';
COMMENT ON TABLE farm IS 'A wind farm as the last fleet apply left it; farm_version keeps every version. Its days are local days in the zone of the version governing each (farm_day_start).';
COMMENT ON TABLE turbine IS 'A turbine as the last fleet apply or move left it: its farm, the shard that holds its readings, its cadence and service interval; turbine_version keeps every version.';
COMMENT ON COLUMN turbine.shard_name IS 'The shard holding the turbine''s readings (shard.name): ingest routes by it and every computation reads the turbine there. Changed only by a move (turbine_move), which copies the readings to the new shard first.';
COMMENT ON COLUMN turbine.decommissioned_at IS 'End of service; NULL = in service. The fleet file''s decommissioned_at, or the apply''s effective instant when an apply retires a turbine the file no longer names (refused for a turbine in service unless --retire-missing).';
COMMENT ON COLUMN turbine.commissioned_at IS 'Start of service: the fleet file''s commissioned_at, else the instant the apply that registered the turbine took effect; NULL = always (turbines registered before that rule). Expected counts are clipped to [commissioned_at, decommissioned_at).';
COMMENT ON COLUMN turbine.cadence_seconds IS 'Seconds between readings, as the last apply left it (a day''s slots follow turbine_version.cadence_seconds): expected slots = floor(seconds in service / cadence).';
COMMENT ON COLUMN farm.timezone IS 'IANA time zone in force now (Europe/London): today, yesterday and the fast path''s windows follow it; a day already past is cut in the zone of its own version (farm_version.timezone, farm_day_start).';
COMMENT ON COLUMN farm_day.notes IS 'Facts that do not hold the day back: no turbines in service; who accepted it, when and why (farm_day_acceptance).';
COMMENT ON COLUMN farm_month.why IS 'The days holding the month back, per reason, and the days'' notes (no turbines in service, acceptances), as the report''s total row says them.';

-- +goose Down
COMMENT ON TABLE turbine_day IS 'One row per turbine per farm-local day: expected, received and available readings. Recomputed whole from the readings and overwritten (never incremented) by rollup_day jobs.';
COMMENT ON TABLE ingest_reject IS 'Readings refused at ingest, one row per bad line, with the reason. The rest of their batch was stored.';
COMMENT ON VIEW farm_rules IS 'The rules in force for each farm: its override, else the fleet default. The one place ingest and the rollup read them from.';
COMMENT ON TABLE fleet_rules IS 'Fleet-wide defaults of the rules that define stored counts (one row, from the fleet file''s rules: section). A farm may override each one (farm.*); farm_rules gives the effective values.';
COMMENT ON TABLE rollup_pending IS 'Farm-day-shards dirtied by late readings whose recompute job is queued but has not started. The job claims (deletes) the row before reading the shard.';
COMMENT ON TABLE farm IS 'A wind farm. Its days are local days in its time zone.';
COMMENT ON TABLE turbine IS 'A turbine, the farm it belongs to and the shard that holds its readings.';
COMMENT ON COLUMN turbine.shard_name IS 'The shard holding the turbine''s readings (shard.name). Never changes: history stays where it was written.';
COMMENT ON COLUMN turbine.decommissioned_at IS 'End of service; NULL = in service. Set automatically when a turbine disappears from the fleet file.';
COMMENT ON COLUMN turbine.commissioned_at IS 'Start of service; NULL = always. Expected counts are clipped to [commissioned_at, decommissioned_at).';
COMMENT ON COLUMN turbine.cadence_seconds IS 'Seconds between readings; expected readings per day = seconds in service that day / cadence.';
COMMENT ON COLUMN farm.timezone IS 'IANA time zone (Europe/London); days, months and expected counts follow it.';
COMMENT ON COLUMN farm_day.notes IS 'Facts that do not hold the day back: no turbines in service.';
COMMENT ON COLUMN farm_month.why IS 'The days holding the month back, per reason, and the notes (no turbines in service), as the report''s total row says them.';
