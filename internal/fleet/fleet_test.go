package fleet_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

func TestDemoFleetShape(t *testing.T) {
	t.Parallel()
	plan, err := fleet.Parse("demo", strings.NewReader(testdb.DemoFleet(t)))
	testdb.Must(t, err, "parse demo fleet")
	if len(plan.Farms) != 21 || len(plan.Turbines) != 1240 || len(plan.Shards) != 4 {
		t.Fatalf("demo fleet has %d farms, %d turbines, %d shards; want 21, 1240, 4", len(plan.Farms), len(plan.Turbines), len(plan.Shards))
	}
	perShard := map[string]map[string]int{}
	for _, tb := range plan.Turbines {
		if perShard[tb.FarmID] == nil {
			perShard[tb.FarmID] = map[string]int{}
		}
		perShard[tb.FarmID][tb.Shard]++
	}
	if got := perShard["ardnave-point"]; len(got) != 3 || got["s1"] != 100 || got["s2"] != 100 || got["s3"] != 100 {
		t.Fatalf("ardnave-point per shard = %v, want 100 on each of s1, s2, s3", got)
	}
	if got := perShard["kilmore-sands"]; len(got) != 1 || got["s4"] != 140 {
		t.Fatalf("kilmore-sands per shard = %v, want 140 on s4", got)
	}
}

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	const head = "shards:\n  - name: s1\n  - name: s2\nfarms:\n"
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"UnknownTimeZone", head + "  - {id: f1, name: F1, timezone: Europe/Londn, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"farms[0] (f1).timezone", `unknown time zone "Europe/Londn"`}},
		{"MissingTimeZone", head + "  - {id: f1, name: F1, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"farms[0] (f1).timezone: missing"}},
		{"TurbineOnTwoShards", head + "  - {id: f1, timezone: UTC, turbines: [{prefix: T-, from: 1, to: 5, shard: s1}, {id: T-003, shard: s2}]}\n",
			[]string{`turbine "T-003" is on two shards (s1 and s2)`}},
		{"DuplicateTurbine", head + "  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n  - {id: f2, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{`farms[1] (f2).turbines[0]: duplicate turbine id "T-1"`}},
		{"DuplicateFarm", head + "  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n  - {id: f1, timezone: UTC, turbines: [{id: T-2, shard: s1}]}\n",
			[]string{`farms[1] (f1).id: duplicate farm id "f1"`}},
		{"DuplicateShard", "shards:\n  - name: s1\n  - name: s1\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{`shards[1].name: duplicate shard "s1"`}},
		{"UnknownShard", head + "  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s9}]}\n",
			[]string{`farms[0] (f1).turbines[0].shard: unknown shard "s9"`}},
		{"UnknownField", head + "  - {id: f1, timezone: UTC, colour: blue, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"field colour not found"}},
		{"EmptyRange", head + "  - {id: f1, timezone: UTC, turbines: [{prefix: T-, from: 5, to: 1, shard: s1}]}\n",
			[]string{"range 5..1 is empty"}},
		{"ShardNameWithCapitalsAndDots", "shards:\n  - name: Shard.One\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: Shard.One}]}\n",
			[]string{`shards[0].name: "Shard.One" is not a valid shard name (lower-case letters and digits, separated by single _ or -)`}},
		{"ShardNameTooLongForAQueue", "shards:\n  - name: " + strings.Repeat("s", 58) + "\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: " + strings.Repeat("s", 58) + "}]}\n",
			[]string{`shards[0].name: "` + strings.Repeat("s", 58) + `" is 58 characters; at most 57`}},
		{"ShardDSNWithPassword", "shards:\n  - {name: s1, dsn: 'postgres://gw:hunter2@db1:5432/gw_s1'}\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"shards[0] (s1).dsn: contains a password", "GALEWATCH_SHARD_S1_PASSWORD"}},
		{"ShardKeyValueDSNWithPassword", "shards:\n  - {name: s1, dsn: 'host=db1 dbname=gw_s1 password=hunter2'}\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"shards[0] (s1).dsn: contains a password"}},
		{"RangeTooLarge", head + "  - {id: f1, timezone: UTC, turbines: [{prefix: T-, from: 0, to: 1000000000, shard: s1}]}\n",
			[]string{"range 0..1000000000 names more than 100000 turbines"}},
		{"CadenceOverADay", head + "  - {id: f1, timezone: UTC, cadence_seconds: 9223372036854775807, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"farms[0] (f1).cadence_seconds: 9223372036854775807 must be between 1 and 86400"}},
		{"ShardPasswordVariablesCollide", "shards:\n  - name: s-1\n  - name: s_1\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s-1}]}\n",
			[]string{`shards[1].name: "s_1" and "s-1" would share the password variable GALEWATCH_SHARD_S_1_PASSWORD`}},
		{"MarkMarginTooShort", "rules: {mark_margin: 20s}\n" + head + "  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"rules.mark_margin: 20s must be at least 30s"}},
		{"FarmRuleNotWholeSeconds", head + "  - {id: f1, timezone: UTC, rules: {window: 1500ms}, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{"farms[0] (f1).rules.window: 1.5s is not a whole number of seconds"}},
		{"RuleNotADuration", head + "  - {id: f1, timezone: UTC, rules: {max_age: forever}, turbines: [{id: T-1, shard: s1}]}\n",
			[]string{`duration "forever"`}},
		{"DecommissionBeforeCommission", head + "  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1, commissioned_at: 2026-08-01T00:00:00Z, decommissioned_at: 2026-07-01T00:00:00Z}]}\n",
			[]string{"decommissioned_at: 2026-07-01T00:00:00Z is not after commissioned_at"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fleet.Parse("bad.yaml", strings.NewReader(tc.yaml))
			if err == nil {
				t.Fatal("Parse accepted the file, want a validation error")
			}
			if !fleet.IsValidation(err) {
				t.Fatalf("error %v is not a ValidationError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestApplyIsIdempotentAndRetiresRemovedTurbines(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.SmallFleet)
	ctx := context.Background()
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine`); n != 22 {
		t.Fatalf("turbines after first apply = %d, want 22", n)
	}
	before := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE updated_at = created_at`)

	plan, err := fleet.Parse("again", strings.NewReader(testdb.SmallFleet))
	testdb.Must(t, err, "parse")
	res, err := env.Registry.Apply(ctx, "again", plan)
	testdb.Must(t, err, "re-apply")
	if res.Turbines != 22 || res.NewlyRetired != 0 {
		t.Fatalf("re-apply: %+v, want 22 turbines and none retired", res)
	}
	if after := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE updated_at = created_at`); after != before {
		t.Fatalf("re-apply touched %d turbine rows, want 0", before-after)
	}

	// Kilmore Sands loses KS-009 and KS-010: refused without RetireMissing
	// (nothing changed: 22 in service); with it they are retired, not
	// deleted.
	smaller := strings.Replace(testdb.SmallFleet, "{prefix: KS-, from: 1, to: 10,", "{prefix: KS-, from: 1, to: 8,", 1)
	plan, err = fleet.Parse("smaller", strings.NewReader(smaller))
	testdb.Must(t, err, "parse")
	env.Registry.Now = func() time.Time { return time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC) }
	_, err = env.Registry.Apply(ctx, "smaller", plan)
	var missing *fleet.RetiresMissingError
	if !errors.As(err, &missing) || len(missing.Farms) != 0 || len(missing.Turbines) != 2 || missing.Turbines[1] != (fleet.MissingTurbine{ID: "KS-010", FarmID: "kilmore-sands"}) {
		t.Fatalf("apply smaller: %v, want a refusal naming KS-009 and KS-010", err)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE in_fleet_file AND decommissioned_at IS NULL`); n != 22 {
		t.Fatalf("%d turbines in service after the refused apply, want 22", n)
	}
	res, err = env.Registry.ApplyWith(ctx, "smaller", plan, fleet.ApplyOptions{RetireMissing: true})
	testdb.Must(t, err, "apply smaller")
	if res.Turbines != 20 || res.Retired != 2 || res.NewlyRetired != 2 {
		t.Fatalf("apply smaller: %+v, want 20 in service, 2 retired", res)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE id = 'KS-010' AND NOT in_fleet_file AND decommissioned_at = '2026-09-01T12:00:00Z'`); n != 1 {
		t.Fatalf("KS-010 should be kept with decommissioned_at 2026-09-01T12:00Z, found %d such rows", n)
	}
}

// TestAShardChangeStartsAMove: giving ten turbines another shard starts a
// move each (turbine_move, copying) and changes no registry fact yet (the
// move's switch does); re-applying starts none; another shard while they
// move is refused, naming the move.
func TestAShardChangeStartsAMove(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.SmallFleet)
	ctx := context.Background()
	apply := func(from, to string) (fleet.ApplyResult, error) {
		moved := strings.Replace(testdb.SmallFleet, from, to, 1)
		plan, err := fleet.Parse("moved", strings.NewReader(moved))
		testdb.Must(t, err, "parse")
		return env.Registry.Apply(ctx, "moved", plan)
	}
	const ks = "{prefix: KS-, from: 1, to: 10, shard: s4}"
	res, err := apply(ks, "{prefix: KS-, from: 1, to: 10, shard: s3}")
	testdb.Must(t, err, "apply the move")
	if len(res.Moves) != 10 || res.Moves[0].TurbineID != "KS-001" || res.Moves[0].From != "s4" || res.Moves[0].To != "s3" || len(res.Changes) != 0 {
		t.Fatalf("apply: moves %+v, changes %+v; want 10 moves s4 → s3 from KS-001, no version", res.Moves, res.Changes)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE id LIKE 'KS-%' AND shard_name = 's4'`); n != 10 {
		t.Fatalf("%d KS turbines still on s4 before their moves run, want 10", n)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine_move WHERE state = 'copying' AND from_shard = 's4' AND to_shard = 's3'`); n != 10 {
		t.Fatalf("%d moves copying, want 10", n)
	}
	again, err := apply(ks, "{prefix: KS-, from: 1, to: 10, shard: s3}")
	if err != nil || len(again.Moves) != 0 {
		t.Fatalf("re-apply: moves %+v, err %v; want none", again.Moves, err)
	}
	_, err = apply(ks, "{prefix: KS-, from: 1, to: 10, shard: s1}")
	if err == nil || !strings.Contains(err.Error(), `turbine "KS-001": shard s1, but it is moving from shard s4 to s3`) {
		t.Fatalf("another shard while moving: err = %v, want a refusal naming KS-001's move s4 → s3", err)
	}
}

// TestApplyRefusesToRepointAKnownShard: a fleet file giving shard s2 a dsn
// (another database) where it was applied without one (a database of the
// control server) is refused, naming the shard and both places, and
// changes nothing; with RepointShards it is applied.
func TestApplyRefusesToRepointAKnownShard(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.SmallFleet)
	ctx := context.Background()
	var db string
	testdb.Must(t, env.Control.QueryRow(ctx, `SELECT database FROM shard WHERE name = 's2'`).Scan(&db), "s2's database")
	elsewhere := strings.Replace(env.ControlDSN, "/"+strings.TrimSuffix(db, "_s2"), "/"+strings.TrimSuffix(db, "_s2")+"_s1", 1)
	if elsewhere == env.ControlDSN {
		t.Fatalf("could not point s2 at another database in %q", env.ControlDSN)
	}
	plan, err := fleet.Parse("repointed", strings.NewReader(strings.Replace(testdb.SmallFleet, "{name: s2}", "{name: s2, dsn: '"+elsewhere+"'}", 1)))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(ctx, "repointed", plan)
	if err == nil || !strings.Contains(err.Error(), "shards[1] (s2): would move from database "+db+" on the control server") ||
		!strings.Contains(err.Error(), "--repoint-shards") {
		t.Fatalf("apply: err = %v, want a refusal naming s2, its database on the control server and --repoint-shards", err)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM shard WHERE name = 's2' AND dsn IS NULL AND database = $1`, db); n != 1 {
		t.Fatalf("s2's row changed by a refused apply (%d rows as before, want 1)", n)
	}
	_, err = env.Registry.ApplyWith(ctx, "repointed", plan, fleet.ApplyOptions{RepointShards: true})
	testdb.Must(t, err, "apply with RepointShards")
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM shard WHERE name = 's2' AND dsn = $1`, elsewhere); n != 1 {
		t.Fatalf("%d s2 rows with the new dsn after RepointShards, want 1", n)
	}
}

// TestShardNamesAcceptedAreValidQueuesAndDatabases: the longest name the
// file accepts fits River's queue names (the jobs package's test builds a
// client with it); a name that would make a database name over 63 bytes
// under this control database is refused at apply, naming the shard.
func TestApplyRefusesAShardWhoseDatabaseNameIsTooLong(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	long := strings.Repeat("x", fleet.MaxShardName)
	yaml := "shards:\n  - name: " + long + "\nfarms:\n  - {id: f1, timezone: UTC, turbines: [{id: T-1, shard: " + long + "}]}\n"
	plan, err := fleet.Parse("long", strings.NewReader(yaml))
	testdb.Must(t, err, "a %d-character shard name parses", len(long))
	_, err = env.Registry.Apply(context.Background(), "long", plan)
	if err == nil || !fleet.IsValidation(err) || !strings.Contains(err.Error(), "shards[0].name: \""+long+"\" makes database name") {
		t.Fatalf("apply: err = %v, want a validation error naming the shard and its database name", err)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM shard`); n != 0 {
		t.Fatalf("%d shards registered after a refused apply, want 0", n)
	}
}

func TestApplyRefusesMovingATurbineBetweenFarms(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, testdb.SmallFleet)
	// KS-010 leaves Kilmore Sands for Ardnave Point (same shard s4).
	moved := strings.Replace(testdb.SmallFleet, "{prefix: KS-, from: 1, to: 10, shard: s4}", "{prefix: KS-, from: 1, to: 9, shard: s4}", 1)
	moved = strings.Replace(moved, "{prefix: AP-, from: 201, to: 204, shard: s3}", "{prefix: AP-, from: 201, to: 204, shard: s3}\n      - {id: KS-010, shard: s4}", 1)
	plan, err := fleet.Parse("moved", strings.NewReader(moved))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(context.Background(), "moved", plan)
	if err == nil || !strings.Contains(err.Error(), `turbine "KS-010": farm ardnave-point, but it is registered to farm kilmore-sands`) {
		t.Fatalf("apply: err = %v, want a refusal naming KS-010 and both farms", err)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE id = 'KS-010' AND farm_id = 'kilmore-sands'`); n != 1 {
		t.Fatalf("KS-010 is no longer on kilmore-sands after a refused apply")
	}
}

// TestShardPasswordComesFromTheEnvironment: the registry holds no password;
// a shard's comes from GALEWATCH_SHARD_<NAME>_PASSWORD when set.
func TestShardPasswordComesFromTheEnvironment(t *testing.T) {
	env := testdb.New(t, "shards: [{name: s-1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s-1}]}]\n")
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM shard WHERE dsn LIKE '%password%' OR dsn LIKE '%:%@%'`); n != 0 {
		t.Fatalf("%d shard rows carry a password", n)
	}
	t.Setenv("GALEWATCH_SHARD_S_1_PASSWORD", "from-the-env")
	shards, err := env.Registry.OpenShards(context.Background(), 1)
	testdb.Must(t, err, "open shards")
	defer shards.Close()
	if got := shards.Pool("s-1").Config().ConnConfig.Password; got != "from-the-env" {
		t.Fatalf("shard s-1 connects with password %q, want the one from GALEWATCH_SHARD_S_1_PASSWORD", got)
	}
	// A password written into the table by hand is refused, not used.
	testdb.Exec(t, env.Control, `UPDATE shard SET dsn = 'postgres://gw:hunter2@127.0.0.1:1/x' WHERE name = 's-1'`)
	if _, err := env.Registry.OpenShards(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "shard s-1: its DSN in the shard table carries a password") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("open shards with a password in the table: %v, want a refusal that does not repeat the password", err)
	}
}

// TestDefaultRulesAreTheDatabaseDefaults: the built-in defaults and the
// fleet_rules column defaults say the same, and a farm without overrides
// takes the fleet's (the value bounds too: -1000 to 20000 kW, 100 m/s).
func TestDefaultRulesAreTheDatabaseDefaults(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	var r controldb.FarmRule
	err := env.Control.QueryRow(context.Background(), `SELECT lane_threshold_ms, early_tolerance_ms, future_limit_s, max_age_days, window_s, mark_margin_s,
		allowed_lateness_s, divergence_alert_pm, completeness_alert_pm, power_min_kw, power_max_kw, wind_max_ms FROM fleet_rules`).
		Scan(&r.LaneThresholdMs, &r.EarlyToleranceMs, &r.FutureLimitS, &r.MaxAgeDays, &r.WindowS, &r.MarkMarginS,
			&r.AllowedLatenessS, &r.DivergenceAlertPm, &r.CompletenessAlertPm, &r.PowerMinKw, &r.PowerMaxKw, &r.WindMaxMs)
	testdb.Must(t, err, "fleet_rules")
	if got := fleet.RulesFromRow(r); got != fleet.DefaultRules() {
		t.Fatalf("fleet_rules defaults %v, Go's DefaultRules %v", got, fleet.DefaultRules())
	}
	plan, err := fleet.Parse("rules", strings.NewReader("rules: {future_limit: 2h, max_age: 30d, wind_max_ms: 60}\nshards: [{name: s1}]\nfarms:\n  - {id: a, timezone: UTC, turbines: [{id: A-1, shard: s1}]}\n  - {id: b, timezone: UTC, rules: {window: 600s, power_max_kw: 5000}, turbines: [{id: B-1, shard: s1}]}\n"))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(context.Background(), "rules", plan)
	testdb.Must(t, err, "apply")
	want := map[string]string{"a": "7200/30/60 -1000..20000 kW 60 m/s", "b": "7200/30/600 -1000..5000 kW 60 m/s"}
	for farm, w := range want {
		var got string
		err := env.Control.QueryRow(context.Background(), `SELECT format('%s/%s/%s %s..%s kW %s m/s', future_limit_s, max_age_days, window_s, power_min_kw, power_max_kw, wind_max_ms) FROM farm_rules WHERE farm_id = $1`, farm).Scan(&got)
		testdb.Must(t, err, "farm_rules %s", farm)
		if got != w {
			t.Fatalf("farm_rules of %s: future/max_age/window and bounds = %s, want %s", farm, got, w)
		}
	}
}

// TestApplyRefusesAZoneGoAndPostgresDisagreeOn: CET is a legacy zone name
// whose data differ between Go (the system's zoneinfo) and this Postgres,
// so a farm's days would be cut differently by the marks and the rollup:
// refused, naming the farm, the day and both answers. A region zone whose
// clocks jump at midnight (America/Santiago) agrees and is accepted.
func TestApplyRefusesAZoneGoAndPostgresDisagreeOn(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	ctx := context.Background()
	env.Registry.Now = func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
	plan, err := fleet.Parse("cet", strings.NewReader("shards: [{name: s1}]\nfarms:\n  - {id: legacy, timezone: CET, turbines: [{id: L-1, shard: s1}]}\n"))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(ctx, "cet", plan)
	if err == nil || !fleet.IsValidation(err) || !strings.Contains(err.Error(), `farms[0] (legacy).timezone: Go and Postgres disagree on when`) {
		t.Fatalf("apply with timezone CET: %v, want a refusal saying Go and Postgres disagree", err)
	}
	plan, err = fleet.Parse("santiago", strings.NewReader("shards: [{name: s1}]\nfarms:\n  - {id: chile, timezone: America/Santiago, turbines: [{id: C-1, shard: s1}]}\n"))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(ctx, "santiago", plan)
	testdb.Must(t, err, "apply America/Santiago")
}

// TestShardSessionsPlanPerCallWithoutJIT: shard sessions plan each
// statement for its arguments and never JIT-compile (the window statement
// spent 0.8-1 s compiling for 3 ms of work; internal/fleet/shards.go).
func TestShardSessionsPlanPerCallWithoutJIT(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n")
	var jit, plan string
	err := env.Shards.Pool("s1").QueryRow(context.Background(), `SELECT current_setting('jit'), current_setting('plan_cache_mode')`).Scan(&jit, &plan)
	testdb.Must(t, err, "settings")
	if jit != "off" || plan != "force_custom_plan" {
		t.Fatalf("a shard session runs with jit = %s, plan_cache_mode = %s; want off, force_custom_plan", jit, plan)
	}
}

// TestTimezoneCheckLeavesTheSessionAlone: the zone check fails with 22023
// for a zone the server does not have, passes for one it has, and leaves
// the pooled session's TimeZone as it was (it is set for the statement's
// own transaction only).
func TestTimezoneCheckLeavesTheSessionAlone(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	ctx := context.Background()
	conn, err := env.Control.Acquire(ctx)
	testdb.Must(t, err, "acquire")
	defer conn.Release()
	q := controldb.New(conn)
	var before, after string
	testdb.Must(t, conn.QueryRow(ctx, `SHOW TimeZone`).Scan(&before), "show")
	testdb.Must(t, q.TimezoneCheck(ctx, "Asia/Tokyo"), "check Asia/Tokyo")
	var pgErr *pgconn.PgError
	if err := q.TimezoneCheck(ctx, "Mars/Olympus_Mons"); !errors.As(err, &pgErr) || pgErr.Code != "22023" {
		t.Fatalf("check Mars/Olympus_Mons: %v, want SQLSTATE 22023", err)
	}
	testdb.Must(t, conn.QueryRow(ctx, `SHOW TimeZone`).Scan(&after), "show")
	if before != after || after == "Asia/Tokyo" {
		t.Fatalf("the session's TimeZone was %q, is %q after the checks; want it unchanged", before, after)
	}
}
