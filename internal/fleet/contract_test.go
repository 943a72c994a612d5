package fleet_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestCategoriesAreTheControlDatabases: the fleet file's category codes,
// default priorities and classes are availability_category's, and the
// default contract (row 1) is those defaults with no codes and no wind range.
func TestCategoriesAreTheControlDatabases(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	ctx := context.Background()
	rows, err := env.Control.Query(ctx, `SELECT id, code, default_priority, default_class FROM availability_category ORDER BY id`)
	testdb.Must(t, err, "categories")
	var got []fleet.Category
	for rows.Next() {
		var c fleet.Category
		testdb.Must(t, rows.Scan(&c.ID, &c.Code, &c.Priority, &c.Class), "scan")
		got = append(got, c)
	}
	testdb.Must(t, rows.Err(), "categories")
	if len(got) != len(fleet.Categories) {
		t.Fatalf("%d categories in the database, %d in Go", len(got), len(fleet.Categories))
	}
	for i := range got {
		if got[i] != fleet.Categories[i] {
			t.Fatalf("category %d: database %+v, Go %+v", i+1, got[i], fleet.Categories[i])
		}
	}
	var def string
	err = env.Control.QueryRow(ctx, `SELECT format('%s|%s|%s|%s|%s|%s', priority, available, excluded, state_codes, cut_in_ms, cut_out_ms)
		FROM availability_contract WHERE id = 1 AND hash = $1`, fleet.DefaultContractHash).Scan(&def)
	testdb.Must(t, err, "default contract")
	if want := "{12,7,6,5,8,9,11,10,4,3,2,1,13}|{1,2,3,4,5,6,7}|{}|{}||"; def != want {
		t.Fatalf("default contract %s, want %s", def, want)
	}
}

// TestAContractIsValidatedWithEveryProblemNamed: each mistake in a
// contract is reported with its farm and field, all of them at once.
func TestAContractIsValidatedWithEveryProblemNamed(t *testing.T) {
	t.Parallel()
	const bad = `
shards: [{name: s1}]
farms:
  - id: a
    timezone: UTC
    contract:
      name: "TSA \u202e6202"
      warranty_pct: 101
      cut_in_ms: 30
      cut_out_ms: 25
      states: {OK: full_perfomance}
      available: [full_performance, out_of_environmental_spec]
      excluded: [out_of_environmental_spec]
      priority: [force_majeure, full_performance]
    turbines: [{id: A-1, shard: s1}]
`
	_, err := fleet.Parse("bad", strings.NewReader(bad))
	var verr *fleet.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("parse: %v, want a validation error", err)
	}
	want := []string{
		"farms[0] (a).contract.name: U+202E at byte 4 is a bidi control (it reorders the text printed after it)",
		"farms[0] (a).contract.warranty_pct: 101 must be a percentage in (0, 100] with at most one decimal",
		"farms[0] (a).contract: cut_in_ms 30 must be below cut_out_ms 25",
		`farms[0] (a).contract.states[OK]: unknown category "full_perfomance" (one of full_performance, `,
		`farms[0] (a).contract: "out_of_environmental_spec" is both available and excluded`,
		"farms[0] (a).contract.priority: must list every category once; missing partial_performance, ",
	}
	text := err.Error()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("validation error lacks %q:\n%s", w, text)
		}
	}
	if len(verr.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(verr.Problems), len(want), text)
	}
}

// TestAContractChangeIsANewVersionOfTheFarm: giving a farm a contract
// opens a version from the farm-local day of the apply; the days before it
// keep the default contract, and re-applying the same file changes nothing.
func TestAContractChangeIsANewVersionOfTheFarm(t *testing.T) {
	t.Parallel()
	const base = "shards: [{name: s1}]\nfarms:\n  - id: a\n    timezone: UTC\n%s    turbines: [{id: A-1, shard: s1}]\n"
	env := testdb.New(t, strings.Replace(base, "%s", "", 1))
	ctx := context.Background()
	withContract := strings.Replace(base, "%s", "    contract: {name: PPA, cut_in_ms: 3.5, excluded: [out_of_environmental_spec]}\n", 1)
	plan, err := fleet.Parse("contract", strings.NewReader(withContract))
	testdb.Must(t, err, "parse")
	at := time.Date(2026, 9, 10, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 2; i++ {
		_, err = env.Registry.ApplyWith(ctx, "contract", plan, fleet.ApplyOptions{EffectiveFrom: &at})
		testdb.Must(t, err, "apply %d", i+1)
	}
	var got string
	err = env.Control.QueryRow(ctx, `SELECT string_agg(format('%s:%s', greatest(v.first_day, '1900-01-01'), k.name), ' ' ORDER BY v.first_day)
		FROM farm_version v JOIN availability_contract k ON k.id = v.contract_id WHERE v.farm_id = 'a'`).Scan(&got)
	testdb.Must(t, err, "versions")
	if want := "1900-01-01:default 2026-09-10:PPA"; got != want {
		t.Fatalf("farm a's versions %q, want %q", got, want)
	}
	var before, after string
	err = env.Control.QueryRow(ctx, `SELECT (SELECT name FROM availability_contract WHERE id = (farm_day_version('a', '2026-09-09')).contract_id),
		(SELECT name FROM availability_contract WHERE id = (farm_day_version('a', '2026-09-10')).contract_id)`).Scan(&before, &after)
	testdb.Must(t, err, "contract of a day")
	if before != "default" || after != "PPA" {
		t.Fatalf("contracts of 9 and 10 September: %s, %s; want default, PPA", before, after)
	}
}

// TestAModelIsValidatedAndNamed: a power curve's points must rise in wind
// and stay in range, and a farm may only name a model the file defines.
func TestAModelIsValidatedAndNamed(t *testing.T) {
	t.Parallel()
	const bad = `
shards: [{name: s1}]
models:
  - name: M1
    curve: [[3, 0], [2, 100], [40, -5]]
farms:
  - {id: a, timezone: UTC, model: M2, turbines: [{id: A-1, shard: s1}]}
`
	_, err := fleet.Parse("bad", strings.NewReader(bad))
	var verr *fleet.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("parse: %v, want a validation error", err)
	}
	want := []string{
		"models[0] (M1).curve[1]: wind 2 m/s must be above the point before (3 m/s)",
		"models[0] (M1).curve[2]: wind 40 m/s must be between 0 and 30",
		`farms[0] (a).model: no model "M2" in models`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("validation error lacks %q:\n%s", w, err)
		}
	}
	if len(verr.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(verr.Problems), len(want), err)
	}
	plan, err := fleet.Parse("good", strings.NewReader(strings.NewReplacer("[2, 100], [40, -5]", "[12, 3000], [25, 3000]", "model: M2", "model: M1").Replace(bad)))
	testdb.Must(t, err, "parse the good file")
	if m := plan.Models["a"]; m == nil || m.Name != "M1" || len(m.WindMS) != 3 {
		t.Fatalf("farm a's model %+v, want M1 with 3 points", m)
	}
}

// TestContractTermsAreValidatedWithEveryProblemNamed: each mistake in a
// contract's year and settlement terms is reported with its farm and
// field, all of them at once; good terms are stored as given.
func TestContractTermsAreValidatedWithEveryProblemNamed(t *testing.T) {
	t.Parallel()
	const bad = `
shards: [{name: s1}]
farms:
  - id: a
    timezone: UTC
    contract:
      year_start: "01-31"
      currency: gbp
      ld_per_point: {amount: 10.005, per: mw}
      ld_per_mwh: 40
      bonus_above_pct: 98
    turbines: [{id: A-1, shard: s1}]
  - id: b
    timezone: UTC
    contract:
      warranty_pct: 97
      ld_cap: 1000
      bonus_above_pct: 96.5
      bonus_per_point: {per: farm}
    turbines: [{id: B-1, shard: s1}]
`
	_, err := fleet.Parse("bad", strings.NewReader(bad))
	var verr *fleet.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("parse: %v, want a validation error", err)
	}
	want := []string{
		`farms[0] (a).contract.year_start: "01-31" must be a day of the year as MM-DD, e.g. 04-01, with the day 01-28`,
		`farms[0] (a).contract.ld_per_point.per: "mw" must be turbine or farm`,
		"farms[0] (a).contract.ld_per_point.amount: 10.005 must be an amount from 0 to 999999999999.99 with at most two decimals",
		"farms[0] (a).contract: ld_per_point and ld_per_mwh: give one",
		"farms[0] (a).contract: bonus_above_pct and bonus_per_point go together",
		"farms[0] (a).contract: LDs and a bonus are measured against warranty_pct: give it",
		`farms[0] (a).contract.currency: "gbp" must be a currency code of three capital letters`,
		"farms[0] (a).contract.ld_per_mwh: the farm has no model: the shortfall in MWh is of the potential energy its power curve gives",
		"farms[1] (b).contract.bonus_per_point.amount: missing",
		"farms[1] (b).contract.ld_cap: a cap without LDs",
		"farms[1] (b).contract.bonus_above_pct: 96.5 must be above warranty_pct 97",
		"farms[1] (b).contract.currency: missing",
	}
	text := err.Error()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("validation error lacks %q:\n%s", w, text)
		}
	}
	if len(verr.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(verr.Problems), len(want), text)
	}
}

// TestAChangeOfTermsRecountsNoDay: 1-2 September are rolled up under a
// contract; its name, warranty, LD rate and cap change effective 1
// September. The sorting is the same (counting_hash), so the apply is
// accepted without --reopen, lists no day, and the farm's days from 1
// September settle by the new terms; a change of how slots are sorted
// (cut_in_ms) from the same day is refused for the rolled-up days.
func TestAChangeOfTermsRecountsNoDay(t *testing.T) {
	t.Parallel()
	const base = "shards: [{name: s1}]\nfarms:\n  - id: a\n    timezone: UTC\n    contract: {currency: EUR, %s}\n    turbines: [{id: A-1, shard: s1}]\n"
	env := testdb.New(t, strings.Replace(base, "%s", "name: TSA, warranty_pct: 97, ld_per_point: {amount: 40, per: farm}, ld_cap: 1000", 1))
	ctx := context.Background()
	for _, d := range []string{"2026-09-01", "2026-09-02"} {
		testdb.Exec(t, env.Control, `INSERT INTO turbine_day (turbine_id, day, farm_id, shard_name, expected, received, available, late, early, computed_at, closed_at)
			VALUES ('A-1', $1, 'a', 's1', 24, 24, 24, 0, 0, '2026-09-05', '2026-09-04')`, d)
	}
	apply := func(spec string) (fleet.ApplyResult, error) {
		plan, err := fleet.Parse("terms", strings.NewReader(strings.Replace(base, "%s", spec, 1)))
		testdb.Must(t, err, "parse")
		at := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
		reg := *env.Registry
		reg.Now = func() time.Time { return time.Date(2026, 9, 6, 0, 0, 0, 0, time.UTC) }
		return reg.ApplyWith(ctx, "terms", plan, fleet.ApplyOptions{EffectiveFrom: &at})
	}
	res, err := apply("name: TSA 2, warranty_pct: 96, ld_per_point: {amount: 55, per: farm}, ld_cap: 2000")
	testdb.Must(t, err, "apply new terms")
	if len(res.Reopened) != 0 {
		t.Fatalf("reopened %v, want none", res.Reopened)
	}
	if got := testdb.Text(t, env.Control, `SELECT format('%s %s %s %s', k.name, k.warranty_pm, k.ld_per_point, k.ld_cap) FROM availability_contract k
		WHERE k.id = (farm_day_version('a', '2026-09-01')).contract_id`); got != "TSA 2 960 55.00 2000.00" {
		t.Fatalf("terms governing 1 September: %s, want TSA 2 960 55.00 2000.00", got)
	}
	var closed *fleet.ChangesClosedDaysError
	if _, err := apply("name: TSA 2, warranty_pct: 96, ld_per_point: {amount: 55, per: farm}, ld_cap: 2000, cut_in_ms: 3"); !errors.As(err, &closed) || !strings.Contains(err.Error(), "a/2026-09-01") {
		t.Fatalf("a change of sorting over rolled-up days: %v, want refused naming a/2026-09-01", err)
	}
}
