package jobs_test

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/rollup"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestRiverFactsAgreeWithSQL: the SQL helpers and Go agree on every River
// state, on the rollup_day kind and on its argument keys. Renaming a JSON
// tag, a kind or a state set on one side only fails here.
func TestRiverFactsAgreeWithSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)

	for _, state := range rivertype.JobStates() {
		var notStarted, unfinished bool
		err := env.Control.QueryRow(ctx, `SELECT river_state_not_started($1), river_state_unfinished($1)`, string(state)).Scan(&notStarted, &unfinished)
		testdb.Must(t, err, "state %s", state)
		if want := slices.Contains(jobs.NotStartedStates, state); notStarted != want {
			t.Errorf("state %s: SQL river_state_not_started = %v, Go NotStartedStates has it: %v", state, notStarted, want)
		}
		if want := slices.Contains(jobs.UnfinishedStates, state); unfinished != want {
			t.Errorf("state %s: SQL river_state_unfinished = %v, Go UnfinishedStates has it: %v", state, unfinished, want)
		}
	}

	raw, err := json.Marshal(jobs.RollupDayArgs{FarmID: "f", Day: "2026-08-01", Shard: "s1", Reason: rollup.ReasonManual})
	testdb.Must(t, err, "marshal")
	var keys map[string]any
	testdb.Must(t, json.Unmarshal(raw, &keys), "unmarshal")
	got := make([]string, 0, len(keys))
	for k := range keys {
		got = append(got, k)
	}
	sort.Strings(got)
	want := []string{jobs.ArgDay, jobs.ArgFarmID, jobs.ArgReason, jobs.ArgShard}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("RollupDayArgs JSON keys %v, want the Arg* constants %v", got, want)
	}

	// A real job inserted from Go is what the SQL helpers find.
	client := newClient(t, env)
	res, err := client.Insert(ctx, jobs.RollupDayArgs{FarmID: "kilmore-sands", Day: "2026-08-01", Shard: "s4", Reason: rollup.ReasonManual}, nil)
	testdb.Must(t, err, "insert")
	id := res.Job.ID
	if res.Job.Kind != jobs.KindRollupDay {
		t.Fatalf("inserted kind %q, want %q", res.Job.Kind, jobs.KindRollupDay)
	}
	check := func(wantUnfinished, wantNotStarted bool) {
		t.Helper()
		var farmDay, unfinished, notStarted bool
		err := env.Control.QueryRow(ctx, `SELECT rollup_day_unfinished('kilmore-sands', '2026-08-01'), river_job_unfinished($1), river_job_not_started($1)`, id).
			Scan(&farmDay, &unfinished, &notStarted)
		testdb.Must(t, err, "helpers")
		if farmDay != wantUnfinished || unfinished != wantUnfinished || notStarted != wantNotStarted {
			t.Fatalf("rollup_day_unfinished %v, river_job_unfinished %v, river_job_not_started %v; want %v, %v, %v",
				farmDay, unfinished, notStarted, wantUnfinished, wantUnfinished, wantNotStarted)
		}
	}
	check(true, true)
	testdb.Exec(t, env.Control, `UPDATE river_job SET state = 'running', attempted_at = now(), attempt = 1 WHERE id = $1`, id)
	check(true, false)
	testdb.Exec(t, env.Control, `UPDATE river_job SET state = 'completed', finalized_at = $2 WHERE id = $1`, id, time.Now())
	check(false, false)
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM farm_day WHERE pending`); n != 0 {
		t.Fatalf("%d farm days pending with no unfinished job", n)
	}
}
