package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

// turbineLines is a valid fleet file of one farm whose turbines are listed
// one a line, padded with a comment to exactly size bytes.
func turbineLines(size int) []byte {
	var b bytes.Buffer
	b.WriteString("shards: [{name: s1}]\nfarms:\n  - id: f\n    timezone: UTC\n    turbines:\n")
	for i := 0; b.Len() < size-64; i++ {
		fmt.Fprintf(&b, "      - {id: T%06d, shard: s1}\n", i)
	}
	b.WriteString("#")
	b.WriteString(strings.Repeat("x", size-b.Len()))
	return b.Bytes()
}

// allocated is the bytes allocated while f runs (the test is not
// parallel: nothing else of the package runs beside it).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestAFileOverTheSizeLimitIsRefusedBeforeDecoding: a file one byte over
// MaxFileBytes (1 MiB) is refused by its size, having allocated less than
// 3 MiB (reading it; decoding it costs about 35 bytes a byte); read from
// disk it is refused by its size before it is read. A file of exactly
// MaxFileBytes is parsed.
func TestAFileOverTheSizeLimitIsRefusedBeforeDecoding(t *testing.T) {
	over := turbineLines(fleet.MaxFileBytes + 1)
	var err error
	spent := allocated(func() { _, err = fleet.Parse("big.yaml", bytes.NewReader(over)) })
	want := "fleet file big.yaml: 1 problem(s):\n  file size: more than 1048576 bytes; at most 1048576 bytes (1 MiB)"
	if err == nil || err.Error() != want {
		t.Fatalf("Parse of %d bytes: %.300v, want %q", len(over), err, want)
	}
	t.Logf("refusing %d bytes allocated %d bytes", len(over), spent)
	if spent >= 3<<20 {
		t.Fatalf("refusing %d bytes allocated %d bytes, want under %d: the file must not be decoded", len(over), spent, 3<<20)
	}

	path := filepath.Join(t.TempDir(), "big.yaml")
	testdb.Must(t, os.WriteFile(path, over, 0o644), "write")
	_, err = fleet.ReadFile(path)
	if want := "file size: 1048577 bytes; at most 1048576 bytes (1 MiB)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ReadFile of %d bytes: %.300v, want %q", len(over), err, want)
	}

	atLimit := over[:fleet.MaxFileBytes]
	plan, err := fleet.Parse("limit.yaml", bytes.NewReader(atLimit))
	testdb.Must(t, err, "parse a file of exactly %d bytes", len(atLimit))
	if n := bytes.Count(atLimit, []byte("{id: T")); len(plan.Turbines) != n || n < 30_000 {
		t.Fatalf("plan of the file at the limit: %d turbines, want the file's %d (over 30,000)", len(plan.Turbines), n)
	}
}

// fleetOf is a file of one shard and n farms of one turbine each; extra is
// added to farm 0 (under its id line) and top before shards.
func fleetOf(top string, farms int, extra string) string {
	var b strings.Builder
	b.WriteString(top)
	b.WriteString("shards: [{name: s1}]\nfarms:\n")
	for i := 0; i < farms; i++ {
		fmt.Fprintf(&b, "  - id: f%d\n    timezone: UTC\n", i)
		if i == 0 {
			b.WriteString(extra)
		}
		fmt.Fprintf(&b, "    turbines: [{id: T%d, shard: s1}]\n", i)
	}
	return b.String()
}

// states is a contract's states: of n codes, indented for a farm entry.
func states(n int) string {
	var b strings.Builder
	b.WriteString("    contract:\n      states:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "        S%d: forced_outage\n", i)
	}
	return b.String()
}

// models is a models: list of n models of points points each (0.1 m/s
// apart from 0).
func models(n, points int) string {
	var b strings.Builder
	b.WriteString("models:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: M%d\n    curve: [", i)
		for p := 0; p < points; p++ {
			if p > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "[%.1f, %d]", float64(p)/10, p)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// TestEachCountOverItsLimitIsRefusedNamingTheField: one over each count
// limit is refused with one problem naming the field, its line and the
// limit, from the node tree (nothing decoded).
func TestEachCountOverItsLimitIsRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	manyKeys := "rules:\n"
	for i := 0; i <= fleet.MaxMappingKeys; i++ {
		manyKeys += fmt.Sprintf("  k%d: 1\n", i)
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"Farms", fleetOf("", fleet.MaxFarms+1, ""), "line 3: farms: 1001 farms; at most 1000"},
		{"Models", models(fleet.MaxModels+1, 2) + fleetOf("", 1, ""), "line 2: models: 101 models; at most 100"},
		{"CurvePoints", models(1, fleet.MaxCurvePoints+1) + fleetOf("", 1, ""), "line 3: models[0] (M0).curve: 302 points; at most 301"},
		{"StateCodes", fleetOf("", 1, states(fleet.MaxStateCodes+1)), "line 7: farms[0] (f0).contract.states: 1001 state codes; at most 1000"},
		{"TurbineEntries", "shards: [{name: s1}]\nfarms:\n  - id: f\n    timezone: UTC\n    turbines: [" + strings.Repeat("{}, ", fleet.MaxTurbines) + "{}]\n",
			"line 5: farms[0] (f).turbines: the file has more than 250000 turbine entries; at most 250000 turbines"},
		{"TurbinesExpanded", "shards: [{name: s1}]\nfarms:\n  - id: f\n    timezone: UTC\n    turbines:\n      - {prefix: A, from: 1, to: 100000, shard: s1}\n      - {prefix: C, from: 1, to: 100000, shard: s1}\n      - {prefix: D, from: 1, to: 50000, shard: s1}\n      - {id: B, shard: s1}\n",
			"line 9: farms[0] (f).turbines[3]: the file names more than 250000 turbines"},
		{"MappingKeys", fleetOf(manyKeys, 1, ""), "line 2: rules: a mapping of 65 keys; at most 64 (only a contract's states may hold more)"},
		{"MappingAsAKey", fleetOf("? {"+strings.Repeat("k: 1, ", fleet.MaxMappingKeys)+"k: 1}\n: x\n", 1, ""),
			"line 1: the file: a mapping of 65 keys; at most 64 (only a contract's states may hold more)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fleet.Parse("big.yaml", strings.NewReader(tc.yaml))
			var verr *fleet.ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("Parse: %.300v, want a validation error", err)
			}
			if len(verr.Problems) != 1 || verr.Problems[0] != tc.want {
				t.Fatalf("problems %.600q, want exactly [%q]", verr.Problems, tc.want)
			}
		})
	}
}

// TestEachCountAtItsLimitIsAccepted: a file with 1,000 farms, 100 models
// of 301 points (0 to 30 m/s every 0.1) and a contract of 1,000 state
// codes parses.
func TestEachCountAtItsLimitIsAccepted(t *testing.T) {
	t.Parallel()
	yaml := models(fleet.MaxModels, fleet.MaxCurvePoints) + fleetOf("", fleet.MaxFarms, states(fleet.MaxStateCodes))
	plan, err := fleet.Parse("limits.yaml", strings.NewReader(yaml))
	testdb.Must(t, err, "parse a file at every count limit")
	if len(plan.Farms) != 1000 || len(plan.Contracts["f0"].StateCodes) != 1000 {
		t.Fatalf("plan: %d farms, %d state codes; want 1000 and 1000", len(plan.Farms), len(plan.Contracts["f0"].StateCodes))
	}
}

// TestStateCodesAreReadInOnePass: a states: mapping is read with a set,
// not by comparing every pair of codes. yaml.v3's own check reports every
// equal pair it compares: 200 copies of one code were 19,900 reports
// ("mapping key … already defined"); read in one pass they are 199, each
// naming its line and the first.
func TestStateCodesAreReadInOnePass(t *testing.T) {
	t.Parallel()
	extra := "    contract:\n      states:\n" + strings.Repeat("        X: forced_outage\n", 200)
	_, err := fleet.Parse("twice.yaml", strings.NewReader(fleetOf("", 1, extra)))
	if err == nil {
		t.Fatal("Parse accepted a code given 200 times")
	}
	if n := strings.Count(err.Error(), "given twice"); n != 199 || strings.Contains(err.Error(), "already defined") {
		t.Fatalf("%d reports of a repeated code, want 199 and no pairwise report:\n%.600s", n, err)
	}
	if want := `line 8: states: state code "X" given twice (first at line 7)`; !strings.Contains(err.Error(), want) {
		t.Fatalf("error lacks %q:\n%.600s", want, err)
	}
}

// TestStateCodesMerge: a states: mapping may merge another's codes (<<:
// *anchor), its own winning, as YAML merges; merges count toward
// MaxStateCodes.
func TestStateCodesMerge(t *testing.T) {
	t.Parallel()
	const yaml = `shards: [{name: s1}]
farms:
  - id: a
    timezone: UTC
    contract:
      states: &base {RUN: full_performance, STOP: forced_outage}
    turbines: [{id: A-1, shard: s1}]
  - id: b
    timezone: UTC
    contract:
      states: {<<: *base, STOP: scheduled_maintenance, ICE: out_of_environmental_spec}
    turbines: [{id: B-1, shard: s1}]
`
	plan, err := fleet.Parse("merge.yaml", strings.NewReader(yaml))
	testdb.Must(t, err, "parse")
	got := fmt.Sprint(plan.Contracts["b"].StateCodes, plan.Contracts["b"].StateCategories)
	if want := "[ICE RUN STOP] [out_of_environmental_spec full_performance scheduled_maintenance]"; got != want {
		t.Fatalf("farm b's states %s, want %s", got, want)
	}
	// 600 codes merged twice over the 600 of the anchor: 1,800 read.
	var b strings.Builder
	b.WriteString("shards: [{name: s1}]\nfarms:\n  - id: a\n    timezone: UTC\n    contract:\n      states: &base\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&b, "        S%d: forced_outage\n", i)
	}
	b.WriteString("    turbines: [{id: A-1, shard: s1}]\n  - id: b\n    timezone: UTC\n    contract:\n      states: {<<: [*base, *base]}\n    turbines: [{id: B-1, shard: s1}]\n")
	_, err = fleet.Parse("merges.yaml", strings.NewReader(b.String()))
	if want := "states: more than 1000 state codes and merged mappings; at most 1000 state codes"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Parse: %.400v, want %q", err, want)
	}
}

// BenchmarkParseStateCodes prints what a contract's states cost per code
// at 250, 500 and 1,000 codes (MaxStateCodes): flat when reading them is
// linear (before, 25,000 codes took 2.2 s and 50,000 took 13 s).
func BenchmarkParseStateCodes(b *testing.B) {
	for _, n := range []int{250, 500, fleet.MaxStateCodes} {
		yaml := fleetOf("", 1, states(n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := fleet.Parse("states.yaml", strings.NewReader(yaml)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/code")
		})
	}
}

// TestARefusalListsAtMostMaxProblems: 5,000 unknown categories are 5,000
// problems, of which the first 100 are listed and the rest counted.
func TestARefusalListsAtMostMaxProblems(t *testing.T) {
	t.Parallel()
	extra := "    contract:\n      available: [" + strings.Repeat("nope, ", 4999) + "nope]\n"
	_, err := fleet.Parse("many.yaml", strings.NewReader(fleetOf("", 1, extra)))
	var verr *fleet.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Parse: %.300v, want a validation error", err)
	}
	if len(verr.Problems) != 100 || verr.More != 4900 {
		t.Fatalf("%d problems listed and %d more, want 100 and 4900", len(verr.Problems), verr.More)
	}
	text := err.Error()
	if !strings.HasPrefix(text, "fleet file many.yaml: 5000 problem(s):") || !strings.HasSuffix(text, "… and 4900 more (the first 100 are listed)") {
		t.Fatalf("error does not count 5000 and say 4900 more:\n%.300s\n…%s", text, text[max(0, len(text)-200):])
	}
}

// TestACurveCloserThanItsSamplingStepIsRefused: points closer than the
// 0.01 m/s sampling step (10.0 and 10.0000001: one wind as real, and a
// division by zero when sampled) or not rising are refused naming the
// model, the point and its line; points exactly 0.01 apart are accepted.
func TestACurveCloserThanItsSamplingStepIsRefused(t *testing.T) {
	t.Parallel()
	const bad = `shards: [{name: s1}]
models:
  - name: M1
    curve:
      - [3, 0]
      - [10.0, 2000]
      - [10.0000001, 2001]
      - [25, 3600]
  - name: M2
    curve:
      - [3, 0]
      - [12, 3000]
      - [11, 3000]
`
	_, err := fleet.Parse("bad.yaml", strings.NewReader(bad+fleetOf("", 1, "")[len("shards: [{name: s1}]\n"):]))
	var verr *fleet.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Parse: %.300v, want a validation error", err)
	}
	want := []string{
		"line 7: models[0] (M1).curve[2]: wind 10.0000001 m/s is closer than 0.01 m/s to the point before (10 m/s); the curve is sampled every 0.01 m/s",
		"line 13: models[1] (M2).curve[2]: wind 11 m/s must be above the point before (12 m/s)",
	}
	if fmt.Sprint(verr.Problems) != fmt.Sprint(want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(verr.Problems, "\n"), strings.Join(want, "\n"))
	}
	const good = "models:\n  - {name: M1, curve: [[3.02, 0], [3.03, 1], [10, 2000], [10.01, 2001], [29.99, 3600], [30, 3600]]}\n"
	plan, err := fleet.Parse("good.yaml", strings.NewReader(good+fleetOf("", 1, "    model: M1\n")))
	testdb.Must(t, err, "parse a curve with points 0.01 m/s apart")
	if m := plan.Models["f0"]; m == nil || len(m.WindMS) != 6 {
		t.Fatalf("farm f0's model %+v, want M1 with 6 points", m)
	}
}

// TestTheTightestCurveIsSampledByPostgres: a curve whose points are one
// sampling step apart (10 and 10.01 m/s) is recorded and sampled
// (turbine_model.curve_lut) without a division by zero: 0 kW at 10 m/s,
// 2,000 kW at 10.01.
func TestTheTightestCurveIsSampledByPostgres(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "models:\n  - {name: M1, curve: [[3, 0], [10, 0], [10.01, 2000], [25, 2000]]}\n"+fleetOf("", 1, "    model: M1\n"))
	got := testdb.Int(t, env.Control, `SELECT round(curve_lut[1001])::bigint * 10000 + round(curve_lut[1002])::bigint FROM turbine_model WHERE name = 'M1'`)
	if got != 2000 {
		t.Fatalf("curve_lut at 10 and 10.01 m/s = %d and %d kW, want 0 and 2000", got/10000, got%10000)
	}
}

// TestApplyRefusesAnInstantBefore1900: an apply from the zero instant or
// from 1899 is refused, nothing written; from 1900-01-01 it is applied.
func TestApplyRefusesAnInstantBefore1900(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	ctx := context.Background()
	plan, err := fleet.Parse("f.yaml", strings.NewReader(fleetOf("", 1, "")))
	testdb.Must(t, err, "parse")
	before := testdb.Int(t, env.Control, `SELECT count(*) FROM fleet_apply`)
	for _, at := range []time.Time{{}, time.Date(1899, 12, 31, 23, 59, 59, 0, time.UTC)} {
		_, err := env.Registry.ApplyWith(ctx, "f.yaml", plan, fleet.ApplyOptions{EffectiveFrom: &at})
		want := fmt.Sprintf("--effective-from %s is before 1900-01-01T00:00:00Z", at.Format(time.RFC3339))
		if !fleet.IsValidation(err) || !strings.Contains(err.Error(), want) {
			t.Fatalf("apply from %s: %v, want a validation error %q", at.Format(time.RFC3339), err, want)
		}
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM fleet_apply`) - before; n != 0 {
		t.Fatalf("%d fleet_apply rows written by the refused applies, want 0", n)
	}
	at := fleet.MinEffectiveFrom
	_, err = env.Registry.ApplyWith(ctx, "f.yaml", plan, fleet.ApplyOptions{EffectiveFrom: &at})
	testdb.Must(t, err, "apply from 1900-01-01")
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM fleet_apply WHERE effective_from = '1900-01-01T00:00:00Z'`); n != 1 {
		t.Fatalf("%d fleet_apply rows from 1900-01-01, want 1", n)
	}
}
