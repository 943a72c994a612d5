package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

// longest builds an id of exactly n characters from seed.
func longest(seed string, n int) string {
	return (seed + strings.Repeat("x", n))[:n]
}

// limitsFleet is a fleet whose every name is at its limit, with one value
// replaced by the caller: the file is the same apart from what a case
// changes, so a refusal is that value's.
func limitsFleet(farmID, farmName, turbineID, prefix, shard string) string {
	return fmt.Sprintf(`shards:
  - name: %s
farms:
  - id: %s
    name: %q
    timezone: UTC
    turbines:
      - {id: %s, shard: %s}
      - {prefix: %s, from: 1, to: 12, digits: 3, shard: %s}
`, shard, farmID, farmName, turbineID, shard, prefix, shard)
}

// TestLongestNamesAreAccepted: every id and name at its documented maximum
// parses, and the plan holds them unchanged (the prefix's last id is
// exactly MaxTurbineID characters).
func TestLongestNamesAreAccepted(t *testing.T) {
	t.Parallel()
	farm := longest("ardnave-point-", fleet.MaxFarmID)
	name := strings.Repeat("Ā", fleet.MaxFarmName) // 100 characters, 200 bytes
	turbine := longest("AP-", fleet.MaxTurbineID)
	prefix := longest("AR-", fleet.MaxTurbineID-3)
	shard := longest("s1-", fleet.MaxShardName)
	plan, err := fleet.Parse("longest", strings.NewReader(limitsFleet(farm, name, turbine, prefix, shard)))
	testdb.Must(t, err, "parse a fleet with every name at its limit")
	if plan.Farms[0].ID != farm || plan.Farms[0].Name != name || plan.Shards[0].Name != shard {
		t.Fatalf("plan: farm %q name %q shard %q, want the file's", plan.Farms[0].ID, plan.Farms[0].Name, plan.Shards[0].Name)
	}
	if len(plan.Turbines) != 13 || plan.Turbines[0].ID != turbine || plan.Turbines[12].ID != prefix+"012" || len(plan.Turbines[12].ID) != fleet.MaxTurbineID {
		t.Fatalf("plan turbines: %d, first %q, last %q; want 13, the long id, then %s001..012", len(plan.Turbines), plan.Turbines[0].ID, plan.Turbines[12].ID, prefix)
	}
}

// TestNamesOverTheLimitAreRefused: one character over any limit is a
// validation error naming the field, the farm or turbine entry, its line
// and the limit; a huge value is quoted by its start and length only.
func TestNamesOverTheLimitAreRefused(t *testing.T) {
	t.Parallel()
	farm := longest("ardnave-point-", fleet.MaxFarmID)
	name := strings.Repeat("Ā", fleet.MaxFarmName)
	turbine := longest("AP-", fleet.MaxTurbineID)
	prefix := longest("AR-", fleet.MaxTurbineID-3)
	shard := longest("s1-", fleet.MaxShardName)
	huge := strings.Repeat("f", 512<<10) // under MaxFileBytes: the value is what is refused
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"FarmID", limitsFleet(farm+"x", name, turbine, prefix, shard),
			[]string{fmt.Sprintf(`line 4: farms[0] (%s).id: "%sx" is 112 characters; at most 111`, farm[:64]+"…", farm)}},
		{"FarmIDOf512KiB", limitsFleet(huge, name, turbine, prefix, shard),
			[]string{`line 4: farms[0] (` + huge[:64] + `…).id: "` + huge[:40] + `…" (524288 bytes) is 524288 characters; at most 111`}},
		{"FarmName", limitsFleet(farm, name+"x", turbine, prefix, shard),
			[]string{"line 5: farms[0] (", ").name: ", "is 101 characters; at most 100"}},
		{"FarmNameOf512KiB", limitsFleet(farm, huge, turbine, prefix, shard),
			[]string{").name: \"" + huge[:40] + "…\" (524288 bytes) is 524288 characters; at most 100"}},
		{"FarmNameWithANewline", limitsFleet(farm, "Ardnave\nPoint", turbine, prefix, shard),
			[]string{`line 5: farms[0] (`, `).name: "Ardnave\nPoint": U+000A at byte 7 is a tab or line break (operator text is one line)`}},
		{"TurbineID", limitsFleet(farm, name, turbine+"x", prefix, shard),
			[]string{fmt.Sprintf(`line 8: farms[0] (%s).turbines[0]: id: "%sx" is 112 characters; at most 111`, farm[:64]+"…", turbine)}},
		{"PrefixExpansion", limitsFleet(farm, name, turbine, prefix+"x", shard),
			[]string{fmt.Sprintf(`line 9: farms[0] (%s).turbines[1]: prefix: "%sx" makes turbine ids of up to 112 characters ("%sx012"); at most 111`, farm[:64]+"…", prefix, prefix)}},
		{"ShardName", limitsFleet(farm, name, turbine, prefix, shard+"x"),
			[]string{fmt.Sprintf(`line 2: shards[0].name: "%sx" is 58 characters; at most 57`, shard)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fleet.Parse("bad.yaml", strings.NewReader(tc.yaml))
			if err == nil || !fleet.IsValidation(err) {
				t.Fatalf("Parse: %.300v, want a validation error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %.600q does not contain %.600q", err, w)
				}
			}
			if len(err.Error()) > 2000 {
				t.Fatalf("the error is %d bytes: a long value must be quoted by its start only", len(err.Error()))
			}
		})
	}
}

// TestRegistryHoldsTheSameLimits: migration 00022's constraints hold
// whoever writes the registry (psql, another tool) to the fleet file's
// limits: a row at each limit is stored, one character over is refused by
// its constraint.
func TestRegistryHoldsTheSameLimits(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	ctx := context.Background()
	farm := longest("ardnave-point-", fleet.MaxFarmID)
	name := strings.Repeat("Ā", fleet.MaxFarmName)
	turbine := longest("AP-", fleet.MaxTurbineID)
	shard := longest("s1-", fleet.MaxShardName)
	for _, tc := range []struct {
		constraint, sql string
		ok, over        []any
	}{
		{"shard_name_bounded", `INSERT INTO shard (name, database) VALUES ($1, 'elsewhere')`, []any{shard}, []any{shard + "x"}},
		{"farm_id_bounded", `INSERT INTO farm (id, name, timezone) VALUES ($1, 'F', 'UTC')`, []any{farm}, []any{farm + "x"}},
		{"farm_name_bounded", `INSERT INTO farm (id, name, timezone) VALUES ($1, $2, 'UTC')`, []any{"named", name}, []any{"named-too", name + "x"}},
		{"farm_name_bounded", `INSERT INTO farm (id, name, timezone) VALUES ($1, $2, 'UTC')`, []any{"one-line", "Ardnave Point"}, []any{"two-lines", "Ardnave\nPoint"}},
		{"farm_id_bounded", `INSERT INTO farm (id, name, timezone) VALUES ($1, 'F', 'UTC')`, []any{"f.1_a-B"}, []any{"f 1"}},
		{"turbine_id_bounded", `INSERT INTO turbine (id, farm_id, shard_name) VALUES ($1, 'named', $2)`, []any{turbine, shard}, []any{turbine + "x", shard}},
		// A farm without a name is named by its id, longer than a name may be.
		{"farm_name_bounded", `INSERT INTO farm (id, name, timezone) VALUES ($1, $2, 'UTC')`, []any{"u" + farm[1:], "u" + farm[1:]}, []any{"v" + farm[1:], "w" + farm[1:]}},
	} {
		if _, err := env.Control.Exec(ctx, tc.sql, tc.ok...); err != nil {
			t.Fatalf("%s with %.40q: %v, want it stored", tc.sql, tc.ok[0], err)
		}
		_, err := env.Control.Exec(ctx, tc.sql, tc.over...)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" || pgErr.ConstraintName != tc.constraint {
			t.Fatalf("%s with %.40q: %v, want a check violation of %s", tc.sql, tc.over, err, tc.constraint)
		}
	}
	// Through fleet apply: a farm of the longest id and no name.
	unnamed := "n" + farm[1:]
	plan, err := fleet.Parse("unnamed", strings.NewReader("shards: [{name: s1}]\nfarms:\n  - {id: "+unnamed+", timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n"))
	testdb.Must(t, err, "parse")
	// The rows written above are not in the file: retired.
	_, err = env.Registry.ApplyWith(ctx, "unnamed", plan, fleet.ApplyOptions{RetireMissing: true})
	testdb.Must(t, err, "apply a farm of the longest id and no name")
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM farm WHERE id = $1 AND name = $1`, unnamed); n != 1 {
		t.Fatalf("farm %s: %d rows named by their id, want 1", unnamed, n)
	}
}

// TestApplyRetiresATurbineFromBeforeTheLimits: a turbine registered before
// migration 00022 with an id over the limit (its constraint is NOT VALID,
// so the row stayed) is retired when the file no longer names it; the
// constraint would otherwise refuse the update that retires it, and the
// file could never remove it.
func TestApplyRetiresATurbineFromBeforeTheLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const yaml = "shards: [{name: s1}]\nfarms:\n  - {id: f, timezone: UTC, turbines: [{id: T-1, shard: s1}]}\n"
	env := testdb.New(t, yaml)
	// The registry as an upgrade leaves it: the row first, then the
	// constraint added NOT VALID, as the migration adds it.
	var def string
	testdb.Must(t, env.Control.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'turbine_id_bounded'`).Scan(&def), "constraint")
	long := strings.Repeat("L", 3000)
	testdb.Exec(t, env.Control, `ALTER TABLE turbine DROP CONSTRAINT turbine_id_bounded`)
	testdb.Exec(t, env.Control, `INSERT INTO turbine (id, farm_id, shard_name) VALUES ($1, 'f', 's1')`, long)
	testdb.Exec(t, env.Control, `ALTER TABLE turbine ADD CONSTRAINT turbine_id_bounded `+def)
	plan, err := fleet.Parse("again", strings.NewReader(yaml))
	testdb.Must(t, err, "parse")
	res, err := env.Registry.ApplyWith(ctx, "again", plan, fleet.ApplyOptions{RetireMissing: true})
	testdb.Must(t, err, "apply the file that no longer names the long turbine")
	if res.NewlyRetired != 1 || testdb.Int(t, env.Control, `SELECT count(*) FROM turbine WHERE id = $1 AND NOT in_fleet_file`, long) != 1 {
		t.Fatalf("apply: %+v, want the long turbine retired", res)
	}
}
