package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestStrictNDJSONRejectsAndStoresTheRest: in one body, a line whose
// turbine_id repeats, numbers Go reads but JSON does not have (1_000, 0x10,
// +1, .5, 01) and readings dated 9999-12-31 are each a reject, stored with
// its line number and a reason naming the key (or the real gap: time.Sub
// saturates at about 292 years, so the 9999 reading was said to be
// 2562047h47m16.854775807s ahead); the good lines around them are stored,
// and nothing is stored under the repeated key's second value.
func TestStrictNDJSONRejectsAndStoresTheRest(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	at := tuesday.Add(-time.Minute + time.Second)
	const fields = `"recorded_at":"2026-08-04T08:59:01Z","available":true`
	notJSON := " is not a number as JSON writes it"
	lines := []struct{ text, reason string }{
		{line("T-001", at, tuesday), ""},
		{`{"turbine_id":"T-001",` + fields + `,"power_kw":1,"wind_ms":1,"turbine_id":"T-002"}`, `duplicate key "turbine_id" at byte 101`},
		{`{"turbine_id":"T-004",` + fields + `,"power_kw":1_000,"wind_ms":1}`, `power_kw: "1_000"` + notJSON},
		{`{"turbine_id":"T-004",` + fields + `,"power_kw":0x10,"wind_ms":1}`, `power_kw: "0x10"` + notJSON},
		{`{"turbine_id":"T-004",` + fields + `,"power_kw":1,"wind_ms":+1}`, `wind_ms: "+1"` + notJSON},
		{`{"turbine_id":"T-004",` + fields + `,"power_kw":.5,"wind_ms":1}`, `power_kw: ".5"` + notJSON},
		{`{"turbine_id":"T-004",` + fields + `,"power_kw":01,"wind_ms":1}`, `power_kw: "01"` + notJSON},
		{`{"turbine_id":"T-004","recorded_at":"9999-12-31T00:00:00Z","available":true,"power_kw":1,"wind_ms":1}`,
			`recorded_at 9999-12-31T00:00:00Z is 2912226.6 days (7973.4 years) ahead of received_at 2026-08-04T09:00:00Z (limit 24h0m0s)`},
		{line("T-004", at, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)),
			`received_at 9999-12-31T00:00:00Z is 2912226.6 days (7973.4 years) ahead of the ingest clock 2026-08-04T09:00:00Z (limit 24h0m0s)`},
		{line("T-004", tuesday.AddDate(0, 0, 16), tuesday.AddDate(0, 0, -1)),
			`recorded_at 2026-08-20T09:00:00Z is 17.0 days ahead of received_at 2026-08-03T09:00:00Z (limit 24h0m0s)`},
		{line("T-003", at, tuesday), ""},
	}
	var body strings.Builder
	for _, l := range lines {
		body.WriteString(l.text + "\n")
	}
	sum, err := b.ingest(t, reading.NDJSON, body.String())
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 2 || sum.Rejected != int64(len(lines)-2) || sum.Failed != 0 {
		t.Fatalf("summary %+v, want 2 accepted and %d rejected", sum, len(lines)-2)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id IN ('T-001', 'T-003')`); n != 2 {
		t.Fatalf("s1 holds %d readings of T-001 and T-003, want the 2 good ones", n)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id IN ('T-002', 'T-004')`); n != 0 {
		t.Fatalf("s1 holds %d readings of T-002 or T-004, want 0 (every line naming them was rejected)", n)
	}
	rows, err := b.env.Control.Query(context.Background(), `SELECT line, reason FROM ingest_reject ORDER BY line`)
	testdb.Must(t, err, "read rejects")
	defer rows.Close()
	i, n := 0, 0
	for rows.Next() {
		var lineNo int64
		var reason string
		testdb.Must(t, rows.Scan(&lineNo, &reason), "scan")
		for i < len(lines) && lines[i].reason == "" {
			i++
		}
		if lineNo != int64(i+1) || !strings.HasPrefix(reason, lines[i].reason) {
			t.Errorf("reject %d: line %d reason %q; want line %d reason starting %q", n, lineNo, reason, i+1, lines[i].reason)
		}
		i++
		n++
	}
	testdb.Must(t, rows.Err(), "rows")
	if n != len(lines)-2 {
		t.Fatalf("%d rejects stored, want %d", n, len(lines)-2)
	}
}
