package fleet_test

import (
	"context"
	"strings"
	"testing"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestValueBoundsStayWithinTheirCeilings: power_min_kw, power_max_kw and
// wind_max_ms are rules a farm may override (here 5,000 kW), within the
// ceilings every energy sum is proved for (±100,000 kW, 200 m/s): a fleet
// file past them, or with a minimum not below its maximum, is refused
// naming the field and value, and so is a row written around the file
// (the database's CHECKs).
func TestValueBoundsStayWithinTheirCeilings(t *testing.T) {
	t.Parallel()
	const farms = "shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, turbines: [{id: A-1, shard: s1}]}\n"
	plan, err := fleet.Parse("set", strings.NewReader("rules: {power_min_kw: -100000, power_max_kw: 100000, wind_max_ms: 200}\n"+
		"shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, rules: {power_max_kw: 5000}, turbines: [{id: A-1, shard: s1}]}\n"))
	testdb.Must(t, err, "parse")
	if r := plan.FarmRules(plan.Farms[0]); r.PowerMinKW != -100_000 || r.PowerMaxKW != 5000 || r.WindMaxMS != 200 {
		t.Fatalf("farm a's bounds %d..%d kW, %d m/s; want -100000..5000 kW (its override), 200 m/s", r.PowerMinKW, r.PowerMaxKW, r.WindMaxMS)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"rules: {power_max_kw: 100001}\n" + farms, "rules.power_max_kw: 100001 must be between -100000 and 100000"},
		{"rules: {power_min_kw: -100001}\n" + farms, "rules.power_min_kw: -100001 must be between -100000 and 100000"},
		{"rules: {power_min_kw: 3000, power_max_kw: 3000}\n" + farms, "rules.power_min_kw: 3000 must be below power_max_kw (3000)"},
		{"rules: {wind_max_ms: 0}\n" + farms, "rules.wind_max_ms: 0 must be between 1 and 200"},
		{"shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, rules: {power_max_kw: -2000}, turbines: [{id: A-1, shard: s1}]}\n",
			"farms[0] (a).rules.power_min_kw: -1000 must be below power_max_kw (-2000)"},
		{"shards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, rules: {wind_max_ms: 201}, turbines: [{id: A-1, shard: s1}]}\n",
			"farms[0] (a).rules.wind_max_ms: 201 must be between 1 and 200"},
	} {
		if _, err := fleet.Parse("bad", strings.NewReader(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse %q: %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}

	env := testdb.New(t, farms)
	for _, sql := range []string{
		`UPDATE fleet_rules SET power_max_kw = 100001`,
		`UPDATE fleet_rules SET power_min_kw = 20000`, // not below the default maximum
		`UPDATE farm SET power_max_kw = 1e6`,
		`UPDATE farm SET wind_max_ms = 0`,
	} {
		if _, err := env.Control.Exec(context.Background(), sql); err == nil || !strings.Contains(err.Error(), "check constraint") {
			t.Errorf("%s: %v, want a check constraint violation", sql, err)
		}
	}
}
