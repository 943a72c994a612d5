package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/galewatch/galewatch/internal/fleet"
)

// FuzzFleetParse: fleet.Parse never panics; a plan it returns is
// consistent; anything it refuses is a *fleet.ValidationError.
//
// The seed corpus is testdata/fuzz/FuzzFleetParse/ (it also runs in go
// test). Its seed-* files are written from fleetSeeds and fleet/demo.yaml:
//
//	GALEWATCH_WRITE_FUZZ_CORPUS=1 go test -run TestFleetFuzzCorpus ./internal/fleet
//
// Fuzzing:
//
//	go test -run '^$' -fuzz '^FuzzFleetParse$' -fuzztime 60s ./internal/fleet
func FuzzFleetParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		plan, err := fleet.Parse("fuzz", bytes.NewReader(data))
		if err != nil {
			if !fleet.IsValidation(err) {
				t.Fatalf("Parse error %T is not a *fleet.ValidationError: %v", err, err)
			}
			if plan != nil {
				t.Fatalf("Parse returned a plan and an error: %v", err)
			}
			return
		}
		if plan == nil {
			t.Fatal("Parse returned neither a plan nor an error")
		}
		shards := map[string]bool{}
		for _, s := range plan.Shards {
			shards[s.Name] = true
		}
		for _, s := range plan.Shards {
			if len(s.Name) > fleet.MaxShardName {
				t.Fatalf("shard name %q over %d characters", s.Name, fleet.MaxShardName)
			}
		}
		farms := map[string]bool{}
		for _, fm := range plan.Farms {
			if farms[fm.ID] {
				t.Fatalf("farm %q twice in the plan", fm.ID)
			}
			farms[fm.ID] = true
			if len(fm.ID) > fleet.MaxFarmID || !utf8.ValidString(fm.Name) || utf8.RuneCountInString(fm.Name) > fleet.MaxFarmName {
				t.Fatalf("farm %q (name %q) over the limits (id %d, name %d characters)", fm.ID, fm.Name, fleet.MaxFarmID, fleet.MaxFarmName)
			}
		}
		ids := map[string]bool{}
		for _, tb := range plan.Turbines {
			if !shards[tb.Shard] {
				t.Fatalf("turbine %q on shard %q, not one of the plan's shards", tb.ID, tb.Shard)
			}
			if !farms[tb.FarmID] {
				t.Fatalf("turbine %q in farm %q, not one of the plan's farms", tb.ID, tb.FarmID)
			}
			if tb.ID == "" || ids[tb.ID] || len(tb.ID) > fleet.MaxTurbineID {
				t.Fatalf("turbine id %q empty, not unique or over %d characters", tb.ID, fleet.MaxTurbineID)
			}
			ids[tb.ID] = true
			if tb.CadenceSeconds <= 0 {
				t.Fatalf("turbine %q has cadence %d", tb.ID, tb.CadenceSeconds)
			}
		}
	})
}

const fleetHead = "shards:\n  - name: s1\n  - name: s2\nfarms:\n"

// fleetSeeds are small fleet files, valid and not.
var fleetSeeds = []struct{ name, data string }{
	{"empty", ""},
	{"blank", "\n\n  \n"},
	{"null", "null\n"},
	{"document-marker-only", "---\n"},
	{"scalar", "hello\n"},
	{"list", "- a\n- b\n"},
	{"minimal", "shards: [{name: s1}]\nfarms: [{id: f1, timezone: UTC, turbines: [{id: T-1, shard: s1}]}]\n"},
	{"full", fleetHead + `  - id: f1
    name: Farm One
    timezone: Europe/London
    cadence_seconds: 10
    turbines:
      - {prefix: AP-, from: 1, to: 12, digits: 4, shard: s1}
      - {id: X.1_b, shard: s2, cadence_seconds: 1, commissioned_at: 2026-01-01T00:00:00Z, decommissioned_at: 2026-06-01T00:00:00Z}
  - id: f2
    timezone: America/Chicago
    turbines:
      - {prefix: B, from: 0, to: 0, shard: s2}
`},
	{"dsn", "shards:\n  - name: s1\n    dsn: postgres://u:p@localhost:5432/other?sslmode=disable\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}]\n"},
	{"bad-zone", fleetHead + "  - {id: f1, timezone: Mars/Olympus_Mons, turbines: [{id: A, shard: s1}]}\n  - {id: f2, timezone: Local, turbines: [{id: B, shard: s1}]}\n  - {id: f3, timezone: '', turbines: [{id: C, shard: s1}]}\n"},
	{"duplicate-shard", "shards:\n  - name: s1\n  - name: s1\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}]\n"},
	{"shard-name-capitals-dots", "shards:\n  - name: Shard.One\n  - name: S2\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: Shard.One}, {id: B, shard: S2}]}]\n"},
	{"shard-name-70-chars", "shards:\n  - name: " + strings.Repeat("s", 70) + "\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: " + strings.Repeat("s", 70) + "}]}]\n"},
	{"shard-name-invalid", "shards:\n  - name: 's 1'\n  - name: -s\n  - name: ''\n  - name: \"s\\0\"\n  - {}\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: 's 1'}]}]\n"},
	{"no-shards", "shards: []\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}]\n"},
	{"turbine-unknown-shard", fleetHead + "  - {id: f, timezone: UTC, turbines: [{id: A, shard: s9}, {id: B}]}\n"},
	{"duplicate-turbine", fleetHead + "  - {id: f, timezone: UTC, turbines: [{prefix: A-, from: 1, to: 5, shard: s1}, {id: A-003, shard: s1}, {id: A-004, shard: s2}]}\n"},
	{"duplicate-farm", fleetHead + "  - {id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}\n  - {id: f, timezone: UTC, turbines: [{id: B, shard: s1}]}\n"},
	{"bad-turbines", fleetHead + `  - id: f
    timezone: UTC
    cadence_seconds: -2
    turbines:
      - {id: A, prefix: B, shard: s1}
      - {prefix: 'bad prefix ', from: 1, to: 2, shard: s1}
      - {prefix: C, from: 5, to: 1, shard: s1}
      - {prefix: D, from: -1, to: 1, shard: s1}
      - {prefix: E, from: 1, to: 2, digits: 13, shard: s1}
      - {prefix: F, from: 1, to: 2, digits: -1, shard: s1}
      - {id: G, shard: s1, cadence_seconds: -1}
      - {id: H, shard: s1, commissioned_at: 2026-06-01T00:00:00Z, decommissioned_at: 2026-01-01T00:00:00Z}
      - {}
  - {id: g, timezone: UTC, turbines: []}
  - {id: 'bad id', timezone: UTC}
`},
	{"unknown-field", "shards: [{name: s1, region: eu}]\nfarms: []\n"},
	{"wrong-types", "shards: {name: s1}\nfarms: [{id: [1], timezone: 3, cadence_seconds: two, turbines: [{id: A, shard: s1, from: x}]}]\n"},
	{"bad-dates", fleetHead + "  - {id: f, timezone: UTC, turbines: [{id: A, shard: s1, commissioned_at: yesterday}]}\n"},
	{"anchors-aliases", "shards:\n  - &s {name: s1}\nfarms:\n  - &f\n    id: f1\n    timezone: UTC\n    turbines: &t [{prefix: A, from: 1, to: 3, shard: s1}]\n  - {id: f2, timezone: UTC, turbines: *t}\n  - *f\n"},
	{"alias-bomb-small", "shards: [{name: s1}]\nfarms:\n  - &f {id: f, timezone: UTC, turbines: &t [&a {id: A, shard: s1}, *a, *a, *a, *a, *a, *a, *a]}\n" +
		strings.Repeat("  - *f\n", 8) + "  - {id: g, timezone: UTC, turbines: *t}\n"},
	{"alias-merge", "shards: [{name: s1}]\nfarms:\n  - &base {id: f1, timezone: UTC, cadence_seconds: 5, turbines: [{id: A, shard: s1}]}\n  - <<: *base\n    id: f2\n    turbines: [{id: B, shard: s1}]\n"},
	{"alias-undefined", "shards: [*nope]\n"},
	{"two-documents", "shards: [{name: s1}]\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}]\n---\nshards: []\n"},
	{"tabs-and-bad-indent", "shards:\n\t- name: s1\nfarms:\n - id: f\n   timezone: UTC\n"},
	{"unclosed-flow", "shards: [{name: s1}\nfarms: [\n"},
	{"bom-crlf", "\xEF\xBB\xBFshards:\r\n  - name: s1\r\nfarms:\r\n  - {id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}\r\n"},
	{"invalid-utf8", "shards:\n  - name: s\xff1\nfarms: [{id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}]\n"},
	{"nul", "shards:\n  - name: s1\nfarms: [{id: \"f\\0\", timezone: \"UTC\\0\", turbines: [{id: \"A\\0\", shard: s1}]}]\n"},
	{"big-ints", fleetHead + "  - {id: f, timezone: UTC, cadence_seconds: 9223372036854775807, turbines: [{prefix: A, from: 1, to: 99999999999999999999, shard: s1}, {id: B, shard: s1, cadence_seconds: -9223372036854775808}]}\n"},
	{"nul-raw", "shards:\n  - name: s1\x00\nfarms: []\n"},
	{"big-cadence", fleetHead + "  - {id: f, timezone: UTC, cadence_seconds: 9223372036854775807, turbines: [{prefix: A, from: 9223372036854775800, to: 9223372036854775806, digits: 12, shard: s1}]}\n"},
	{"range-to-maxint", fleetHead + "  - {id: f, timezone: UTC, turbines: [{prefix: A, from: 0, to: 9223372036854775807, shard: s1}]}\n"},
	{"range-wraps", fleetHead + "  - {id: f, timezone: UTC, turbines: [{prefix: A, from: 9223372036854775806, to: 9223372036854775807, shard: s1}]}\n"},
	{"range-large", fleetHead + "  - {id: f, timezone: UTC, turbines: [{prefix: A, from: 0, to: 1000000000, shard: s1}]}\n"},
	{"names-at-limits", "shards: [{name: " + strings.Repeat("s", fleet.MaxShardName) + "}]\nfarms:\n  - {id: " + strings.Repeat("f", fleet.MaxFarmID) +
		", name: " + strings.Repeat("é", fleet.MaxFarmName) + ", timezone: UTC, turbines: [{id: " + strings.Repeat("T", fleet.MaxTurbineID) +
		", shard: " + strings.Repeat("s", fleet.MaxShardName) + "}, {prefix: " + strings.Repeat("P", fleet.MaxTurbineID-3) + ", from: 998, to: 999, shard: " + strings.Repeat("s", fleet.MaxShardName) + "}]}\n"},
	{"names-over-limits", fleetHead + "  - {id: " + strings.Repeat("f", fleet.MaxFarmID+1) + ", name: " + strings.Repeat("é", fleet.MaxFarmName+1) +
		", timezone: UTC, turbines: [{id: " + strings.Repeat("T", fleet.MaxTurbineID+1) + ", shard: s1}, {prefix: " + strings.Repeat("P", fleet.MaxTurbineID-3) + ", from: 999, to: 1000, shard: s1}]}\n"},
	{"long-prefix-wide-range", fleetHead + "  - {id: f, timezone: UTC, turbines: [{prefix: " + strings.Repeat("P", 4096) + ", from: 0, to: 99999, shard: s1}]}\n"},
	{"name-control-characters", fleetHead + "  - {id: f, name: \"Ardnave\\nPoint\\u0085\\u0007\", timezone: UTC, turbines: [{id: A, shard: s1}]}\n"},
	{"curve-close-winds", "models:\n  - {name: M, curve: [[3, 0], [10.0, 2000], [10.0000001, 2001], [9, 1], [25, 3600]]}\n" + fleetHead + "  - {id: f, timezone: UTC, model: M, turbines: [{id: A, shard: s1}]}\n"},
	{"states-repeated", fleetHead + "  - {id: f, timezone: UTC, contract: {states: {X: forced_outage, X: full_performance, \"X\": suspended, ~: suspended, [1]: x}}, turbines: [{id: A, shard: s1}]}\n"},
	{"states-merge", fleetHead + "  - {id: a, timezone: UTC, contract: {states: &s {RUN: full_performance, <<: {STOP: forced_outage}}}, turbines: [{id: A, shard: s1}]}\n" +
		"  - {id: b, timezone: UTC, contract: {states: {<<: [*s, *s, {ICE: suspended}], RUN: ready_standby}}, turbines: [{id: B, shard: s1}]}\n" +
		"  - {id: c, timezone: UTC, contract: {states: {<<: 5}}, turbines: [{id: C, shard: s1}]}\n  - {id: d, timezone: UTC, contract: {states: *s}, turbines: [{id: D, shard: s1}]}\n"},
	{"states-over-limit", fleetHead + "  - id: f\n    timezone: UTC\n    contract:\n      states:\n" + func() string {
		var b strings.Builder
		for i := 0; i <= fleet.MaxStateCodes; i++ {
			fmt.Fprintf(&b, "        S%d: forced_outage\n", i)
		}
		return b.String()
	}() + "    turbines: [{id: A, shard: s1}]\n"},
	{"mapping-over-limit", "rules: {" + func() string {
		var b strings.Builder
		for i := 0; i <= fleet.MaxMappingKeys; i++ {
			fmt.Fprintf(&b, "k%d: 1, ", i)
		}
		return b.String()
	}() + "}\n" + fleetHead + "  - {id: f, timezone: UTC, turbines: [{id: A, shard: s1}]}\n"},
	{"turbine-entries-aliased", fleetHead + "  - {id: f, timezone: UTC, turbines: &t [{prefix: A, from: 1, to: 99999, shard: s1}]}\n  - {id: g, timezone: UTC, turbines: *t}\n  - {id: h, timezone: UTC, turbines: *t}\n"},
}

func corpusFile(data []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data)))
}

// TestFleetFuzzCorpus writes (with GALEWATCH_WRITE_FUZZ_CORPUS=1) or checks
// the seed files. seed-demo is the demo fleet when written; it is only
// required to exist, so that editing fleet/demo.yaml does not fail this.
func TestFleetFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzFleetParse")
	if os.Getenv("GALEWATCH_WRITE_FUZZ_CORPUS") == "1" {
		demo, err := os.ReadFile(filepath.Join("..", "..", "fleet", "demo.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "seed-demo"), corpusFile(demo), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, s := range fleetSeeds {
			if err := os.WriteFile(filepath.Join(dir, "seed-"+s.name), corpusFile([]byte(s.data)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "seed-demo")); err != nil {
		t.Error(err)
	}
	for _, s := range fleetSeeds {
		path := filepath.Join(dir, "seed-"+s.name)
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, corpusFile([]byte(s.data))) {
			t.Errorf("%s is missing or out of date (%v): run GALEWATCH_WRITE_FUZZ_CORPUS=1 go test -run TestFleetFuzzCorpus ./internal/fleet", path, err)
		}
	}
}
