package fleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestRejectRulesAreFleetWide: reject_rows_kept and reject_retention are
// fleet-wide rules (a refused line may name no farm): the top-level rules:
// set them (1000 and 30d when absent, as the fleet_rules column defaults),
// a farm's rules: giving them is refused naming the field, and so are a
// negative cap and a retention under a day or not in whole days.
func TestRejectRulesAreFleetWide(t *testing.T) {
	t.Parallel()
	const farms = "shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, turbines: [{id: A-1, shard: s1}]}\n"
	plan, err := fleet.Parse("default", strings.NewReader(farms))
	testdb.Must(t, err, "parse")
	if plan.Rejects != fleet.DefaultRejectRules() || plan.Rejects.RowsKept != 1000 || plan.Rejects.Retention != 30*24*time.Hour {
		t.Fatalf("reject rules %+v, want 1000 rows kept and 30 days", plan.Rejects)
	}
	plan, err = fleet.Parse("set", strings.NewReader("rules: {reject_rows_kept: 0, reject_retention: 400d}\n"+farms))
	testdb.Must(t, err, "parse")
	if plan.Rejects.RowsKept != 0 || plan.Rejects.Retention != 400*24*time.Hour {
		t.Fatalf("reject rules %+v, want 0 rows kept and 400 days", plan.Rejects)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, rules: {reject_rows_kept: 5}, turbines: [{id: A-1, shard: s1}]}\n",
			"farms[0] (a).rules.reject_rows_kept: fleet-wide only"},
		{"shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, rules: {reject_retention: 5d}, turbines: [{id: A-1, shard: s1}]}\n",
			"farms[0] (a).rules.reject_retention: fleet-wide only"},
		{"rules: {reject_rows_kept: -1}\n" + farms, "rules.reject_rows_kept: -1 must be between 0 and 1000000"},
		{"rules: {reject_retention: 12h}\n" + farms, "rules.reject_retention: 12h0m0s must be between 1d and 100000d"},
		{"rules: {reject_retention: 36h}\n" + farms, "rules.reject_retention: 36h0m0s is not a whole number of days"},
	} {
		if _, err := fleet.Parse("bad", strings.NewReader(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse %q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

// TestDefaultRejectRulesAreTheDatabaseDefaults: fleet_rules' column
// defaults say what DefaultRejectRules says.
func TestDefaultRejectRulesAreTheDatabaseDefaults(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	var kept, days int
	testdb.Must(t, env.Control.QueryRow(context.Background(), `SELECT reject_rows_kept, reject_retention_days FROM fleet_rules`).Scan(&kept, &days), "fleet_rules")
	if d := fleet.DefaultRejectRules(); kept != d.RowsKept || time.Duration(days)*24*time.Hour != d.Retention {
		t.Fatalf("fleet_rules: %d rows kept, %d days; Go's DefaultRejectRules %+v", kept, days, d)
	}
}
