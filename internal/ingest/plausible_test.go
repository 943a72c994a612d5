package ingest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// boundsFleet is smallFleet with farm f2's power bounded at 5,000 kW (f1
// keeps the defaults: -1,000 to 20,000 kW, wind 0 to 100 m/s).
const boundsFleet = `
shards:
  - name: s1
  - name: s2
farms:
  - id: f1
    timezone: Europe/London
    turbines:
      - {prefix: T-, from: 1, to: 10, shard: s1}
  - id: f2
    timezone: UTC
    rules: {power_max_kw: 5000}
    turbines:
      - {prefix: U-, from: 1, to: 5, shard: s2}
`

// TestImplausibleValuesAreRefusedWithTheirReason: a reading at 3.0e38 kW
// (float32's largest, a controller's sentinel) is refused with kind
// implausible and a reason naming the field, the value and the farm's
// bounds, in NDJSON and in CSV, and so is every power or wind just past
// its bound (f2's own 5,000 kW among them); the readings at the bounds and
// the rest of the body are stored: 6 of 12 lines.
func TestImplausibleValuesAreRefusedWithTheirReason(t *testing.T) {
	t.Parallel()
	b := setup(t, boundsFleet, ingest.DefaultConfig(), nil)
	at := tuesday.Add(-time.Minute)
	value := func(id string, k int, power, wind string) string {
		return fmt.Sprintf(`{"turbine_id":%q,"recorded_at":%q,"received_at":%q,"available":true,"power_kw":%s,"wind_ms":%s}`,
			id, at.Add(time.Duration(k)*time.Second).Format(time.RFC3339), tuesday.Format(time.RFC3339), power, wind)
	}
	lines := []struct{ text, reason string }{
		{line("T-001", at, tuesday), ""},
		{value("T-002", 0, "3.0e38", "9"), `power_kw: 3e+38 is outside farm f1's bounds, -1000 to 20000 kW (rules power_min_kw, power_max_kw)`},
		{value("T-003", 0, "20000", "100"), ""}, // both at their maximum
		{value("T-004", 0, "-1000", "0"), ""},   // both at their minimum
		{value("T-005", 0, "20000.002", "9"), `power_kw: 20000.002 is outside farm f1's bounds, -1000 to 20000 kW (rules power_min_kw, power_max_kw)`},
		{value("T-006", 0, "-1000.5", "9"), `power_kw: -1000.5 is outside farm f1's bounds, -1000 to 20000 kW (rules power_min_kw, power_max_kw)`},
		{value("T-007", 0, "1500", "-0.5"), `wind_ms: -0.5 is outside farm f1's bounds, 0 to 100 m/s (rule wind_max_ms)`},
		{value("T-008", 0, "1500", "100.25"), `wind_ms: 100.25 is outside farm f1's bounds, 0 to 100 m/s (rule wind_max_ms)`},
		{value("U-001", 0, "5000", "9"), ""},
		{value("U-002", 0, "5000.5", "9"), `power_kw: 5000.5 is outside farm f2's bounds, -1000 to 5000 kW (rules power_min_kw, power_max_kw)`},
		{line("T-009", at, tuesday), ""},
	}
	var body strings.Builder
	for _, l := range lines {
		body.WriteString(l.text + "\n")
	}
	sum, err := b.ingest(t, reading.NDJSON, body.String())
	testdb.Must(t, err, "ingest")
	csv := "turbine_id,recorded_at,received_at,available,power_kw,wind_ms\n" +
		"T-010," + at.Format(time.RFC3339) + "," + tuesday.Format(time.RFC3339) + ",true,3.0e38,9\n"
	csvSum, err := b.ingest(t, reading.CSV, csv)
	testdb.Must(t, err, "ingest CSV")
	if sum.Accepted != 5 || sum.Rejected != 6 || sum.Failed != 0 || csvSum.Accepted != 0 || csvSum.Rejected != 1 {
		t.Fatalf("NDJSON %+v, CSV %+v; want 5 accepted and 6 rejected, then 1 rejected", sum, csvSum)
	}
	stored := b.count(t, "s1", `SELECT count(*) FROM readings`) + b.count(t, "s2", `SELECT count(*) FROM readings`)
	if stored != 5 {
		t.Fatalf("%d readings stored, want 5 (T-001, T-003, T-004, U-001, T-009)", stored)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE power_kw > 20000 OR power_kw < -1000 OR wind_ms > 100 OR wind_ms < 0`); n != 0 {
		t.Fatalf("%d readings outside f1's bounds stored, want 0", n)
	}
	for i, l := range lines {
		if l.reason == "" {
			continue
		}
		want := int64(1)
		if i == 1 {
			want = 2 // and the CSV's line 2, refused for the same reason
		}
		n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM ingest_reject WHERE line = $1 AND kind = 'implausible' AND reason = $2`, i+1, l.reason)
		if n != want {
			t.Errorf("line %d: %d implausible rejects with reason %q, want %d", i+1, n, l.reason, want)
		}
	}
	if len(sum.Rejects) != 6 || sum.Rejects[0] != (ingest.RejectSample{Line: 2, Reason: lines[1].reason}) {
		t.Errorf("summary's rejects %+v, want 6, the first line 2: %s", sum.Rejects, lines[1].reason)
	}
	var kinds string
	testdb.Must(t, b.env.Control.QueryRow(context.Background(), `SELECT string_agg(DISTINCT kind, ',') FROM ingest_reject`).Scan(&kinds), "kinds")
	if kinds != "implausible" {
		t.Errorf("reject kinds %q, want implausible", kinds)
	}
}
