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

// TestStatesAreStored: a reading's state is stored as sent by both formats
// and both write paths (plain COPY, and the staging table after a batch hit
// the key), none as ” (not NULL); a bad state rejects its line, with the reason,
// and the rest is stored.
func TestStatesAreStored(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	at := tuesday.Add(-time.Minute)
	withState := func(id string, recorded time.Time, state string) string {
		l := line(id, recorded, tuesday)
		return l[:len(l)-1] + `,"state":` + state + `}`
	}
	long := strings.Repeat("x", 65)
	body := withState("T-001", at, `"RUN"`) + "\n" +
		withState("T-002", at, `null`) + "\n" +
		line("T-003", at, tuesday) + "\n" +
		withState("T-004", at, `"`+long+`"`) + "\n" +
		withState("T-005", at, `7`) + "\n" +
		withState("T-006", at, `"FAULT\t2"`) + "\n" +
		withState("T-007", at, `""`) + "\n"
	sum, err := b.ingest(t, reading.NDJSON, body)
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 4 || sum.Rejected != 3 {
		t.Fatalf("summary %+v, want 4 accepted and 3 rejected", sum)
	}
	// Re-sent with two new readings: the batch hits the key and goes
	// through the staging table.
	again := withState("T-001", at, `"RUN"`) + "\n" + withState("T-008", at, `"Störung 3,1"`) + "\n" + line("T-009", at, tuesday) + "\n"
	sum, err = b.ingest(t, reading.NDJSON, again)
	testdb.Must(t, err, "second delivery")
	if sum.Accepted != 2 || sum.Duplicate != 1 {
		t.Fatalf("second delivery: %+v, want 2 accepted, 1 duplicate", sum)
	}
	csv := "turbine_id,recorded_at,received_at,available,power_kw,wind_ms,state\n" +
		"U-001,2026-08-04T08:59:00Z,2026-08-04T09:00:00Z,true,1,2,\"FAULT \"\"7\"\"\"\n" +
		"U-002,2026-08-04T08:59:00Z,2026-08-04T09:00:00Z,true,1,2,\n" +
		"U-003,2026-08-04T08:59:00Z,2026-08-04T09:00:00Z,true,1,2," + long + "\n"
	sum, err = b.ingest(t, reading.CSV, csv)
	testdb.Must(t, err, "CSV")
	if sum.Accepted != 2 || sum.Rejected != 1 {
		t.Fatalf("CSV: %+v, want 2 accepted, 1 rejected", sum)
	}

	// No state is stored as '' (readings.state), never NULL.
	want := map[string]*string{"T-001": ptr("RUN"), "T-002": ptr(""), "T-003": ptr(""), "T-007": ptr(""), "T-008": ptr("Störung 3,1"), "T-009": ptr(""),
		"U-001": ptr(`FAULT "7"`), "U-002": ptr("")}
	got := map[string]*string{}
	for _, shard := range []string{"s1", "s2"} {
		rows, err := b.env.Shards.Pool(shard).Query(context.Background(), `SELECT turbine_id, state FROM readings`)
		testdb.Must(t, err, "read states")
		for rows.Next() {
			var id string
			var state *string
			testdb.Must(t, rows.Scan(&id, &state), "scan")
			got[id] = state
		}
		testdb.Must(t, rows.Err(), "rows")
	}
	if len(got) != len(want) {
		t.Fatalf("stored %d readings, want %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok || (g == nil) != (w == nil) || (g != nil && *g != *w) {
			t.Errorf("%s: state %s, want %s", id, show(g), show(w))
		}
	}
	for _, r := range []struct {
		line   int64
		reason string
		n      int64
	}{
		{4, `state: "` + long[:64] + `"… is longer than 64 bytes`, 2}, // NDJSON's line 4 and CSV's
		{5, `state: "7" is not a string (a controller status code is a JSON string, or null for none)`, 1},
		{6, `state: "FAULT\t2" has a control character or invalid UTF-8`, 1},
	} {
		if n := testdb.Int(t, b.env.Control, `SELECT count(*) FROM ingest_reject WHERE line = $1 AND reason = $2`, r.line, r.reason); n != r.n {
			t.Errorf("line %d: %d rejects with reason %q, want %d", r.line, n, r.reason, r.n)
		}
	}
}

func ptr(s string) *string { return &s }

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	return `"` + *s + `"`
}
