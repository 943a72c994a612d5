package fleet_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestHistorySaysWhatTheRegistrySaid: KS-001's cadence goes from 2 s to
// 1 s at 13:00 UTC on 1 December; `fleet history --turbine KS-001 --at`
// prints the version in force at 12:59:59 (2 s, until 13:00) and at 13:00
// (1 s, in force, with the file's hash), and the unfiltered history both,
// the first from -infinity.
func TestHistorySaysWhatTheRegistrySaid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.SmallFleet)
	edited := strings.Replace(testdb.SmallFleet, "{prefix: KS-, from: 1, to: 10, shard: s4}",
		"{id: KS-001, shard: s4, cadence_seconds: 1}\n      - {prefix: KS-, from: 2, to: 10, shard: s4}", 1)
	plan, err := fleet.Parse("edited.yaml", strings.NewReader(edited))
	testdb.Must(t, err, "parse")
	at := time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	reg := *env.Registry
	reg.Now = func() time.Time { return at }
	res, err := reg.Apply(ctx, "edited.yaml", plan)
	testdb.Must(t, err, "apply")
	if len(res.Changes) != 1 || !strings.Contains(res.Changes[0].What, "turbine KS-001: cadence 2 s → 1 s from 2026-12-01T13:00:00Z") {
		t.Fatalf("changes %+v, want KS-001's cadence from 13:00", res.Changes)
	}
	show := func(f fleet.HistoryFilter) string {
		var b bytes.Buffer
		testdb.Must(t, fleet.WriteHistory(ctx, controldb.New(env.Control), f, &b), "history")
		return b.String()
	}
	before, after := at.Add(-time.Second), at
	lines := func(out string) []string {
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "KS-001 ") {
				rows = append(rows, strings.Join(strings.Fields(l), " "))
			}
		}
		return rows
	}
	if got := lines(show(fleet.HistoryFilter{Turbine: "KS-001", At: &before})); len(got) != 1 ||
		!strings.HasPrefix(got[0], "KS-001 kilmore-sands s4 2 ") || !strings.Contains(got[0], "-infinity 2026-12-01 13:00:00+00 ") {
		t.Fatalf("at 12:59:59: %q, want the 2 s version from -infinity to 13:00", got)
	}
	hash := plan.Hash[:12]
	if got := lines(show(fleet.HistoryFilter{Turbine: "KS-001", At: &after})); len(got) != 1 ||
		!strings.HasPrefix(got[0], "KS-001 kilmore-sands s4 1 ") || !strings.Contains(got[0], "2026-12-01 13:00:00+00 (in force) "+hash) {
		t.Fatalf("at 13:00: %q, want the 1 s version in force, from the file %s", got, hash)
	}
	if got := lines(show(fleet.HistoryFilter{Farm: "kilmore-sands"})); len(got) != 2 {
		t.Fatalf("kilmore-sands' history has %d KS-001 rows, want 2: %q", len(got), got)
	}
}
