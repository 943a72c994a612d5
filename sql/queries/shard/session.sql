-- Session and transaction settings the writers and the window statement run under.

-- WriteTimeoutSet bounds each statement of the current write transaction on
-- the server side too (the client's deadline alone cannot stop the server).
-- name: WriteTimeoutSet :exec
SELECT set_config('statement_timeout', @timeout::text, true);

-- PlanGeneric runs the transaction's next statements on generic plans,
-- made once per connection and statement, instead of the shard
-- connections' custom plans (plan_cache_mode = force_custom_plan), made at
-- each execution, until PlanCustom. For a large correction's ranges: the
-- window statement's plan has one shape whatever its arguments and
-- statistics (a key range per turbine, OFFSET 0 fences), and it runs once
-- a range (4 for one turbine's day), each planned again otherwise
-- (TestAGenericCorrectionReadsItsKeyRanges). The window statement's
-- readings are pruned to the day's partitions when it starts (the day's
-- bounds are arguments), and what it compares each reading with is
-- computed once a turbine, not from the arguments a reading at a time.
-- name: PlanGeneric :exec
SELECT set_config('plan_cache_mode', 'force_generic_plan', true);

-- PlanCustom goes back to the shard connections' custom plans for the rest
-- of the transaction (a large correction's statements after its ranges:
-- their plans depend on the statistics, and a generic plan made while a
-- table is unanalysed would stay with the connection).
-- name: PlanCustom :exec
SELECT set_config('plan_cache_mode', 'force_custom_plan', true);
