package ingest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// badBody is n refused lines, every fifth a reading of an unknown turbine,
// the others not JSON, then 10 good readings of T-001.
func badBody(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i%5 == 0 {
			b.WriteString(line(fmt.Sprintf("X-%d", i), tuesday, tuesday) + "\n")
		} else {
			fmt.Fprintf(&b, "not json %d\n", i)
		}
	}
	for k := 1; k <= 10; k++ {
		at := tuesday.Add(-time.Duration(2*k) * time.Second)
		b.WriteString(line("T-001", at, at) + "\n")
	}
	return b.String()
}

// TestRejectsBeyondTheCapAreCounted: a body of 5,000 bad lines (1,000
// unknown turbines, 4,000 not JSON) and 10 good ones, posted with the
// default cap of 1,000 rows kept. The 10 are stored; the first 1,000 bad
// lines are in ingest_reject verbatim (800 invalid, 200 unknown_turbine,
// lines 1-1,000); the other 4,000 are counted per kind -- 3,200 invalid,
// 800 unknown_turbine -- in the response and in one ingest_reject_summary
// row (lines 1,001-5,000), which the reporting role can read. Then the
// fleet file sets reject_rows_kept: 10, and a body of 25 bad lines keeps 10
// and counts 15.
func TestRejectsBeyondTheCapAreCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	srv := httptest.NewServer(ingest.NewHandler(b.in, 1<<20, 16))
	t.Cleanup(srv.Close)

	code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(badBody(5000)))
	if code != 200 {
		t.Fatalf("status %d, want 200 (rejects are the sender's, accounted for): %v", code, out)
	}
	for k, v := range map[string]float64{"accepted": 10, "rejected": 5000, "failed": 0, "rejects_kept": 1000} {
		if got, ok := out[k].(float64); !ok || got != v {
			t.Fatalf("response[%q] = %v, want %v (response %v)", k, out[k], v, out)
		}
	}
	if got := fmt.Sprint(out["rejects_not_kept"]); got != "map[invalid:3200 unknown_turbine:800]" {
		t.Fatalf("response rejects_not_kept = %s, want map[invalid:3200 unknown_turbine:800]", got)
	}
	c := b.env.Control
	if n := testdb.Int(t, c, `SELECT count(*) FROM ingest_reject`); n != 1000 {
		t.Fatalf("ingest_reject holds %d rows, want the first 1000", n)
	}
	var byKind, lines string
	testdb.Must(t, c.QueryRow(ctx, `SELECT string_agg(kind || ' ' || n, ', ' ORDER BY kind) FROM (SELECT kind, count(*) AS n FROM ingest_reject GROUP BY kind) k`).Scan(&byKind), "kinds")
	testdb.Must(t, c.QueryRow(ctx, `SELECT min(line) || '-' || max(line) FROM ingest_reject`).Scan(&lines), "lines")
	if byKind != "invalid 800, unknown_turbine 200" || lines != "1-1000" {
		t.Fatalf("ingest_reject: %s, lines %s; want invalid 800, unknown_turbine 200, lines 1-1000", byKind, lines)
	}
	var summary string
	err := c.QueryRow(ctx, `SELECT format('%s kept, %s not kept %s, lines %s-%s, limit %s, %s', kept, not_kept, not_kept_by_kind,
		first_line_not_kept, last_line_not_kept, rows_kept_limit, (source LIKE 'http:%')::text) FROM ingest_reject_summary`).Scan(&summary)
	testdb.Must(t, err, "ingest_reject_summary")
	if want := `1000 kept, 4000 not kept {"invalid": 3200, "unknown_turbine": 800}, lines 1001-5000, limit 1000, true`; summary != want {
		t.Fatalf("summary row %q, want %q", summary, want)
	}
	if n := testdb.Int(t, c, `SELECT count(*) FROM ingest_reject_summary`); n != 1 {
		t.Fatalf("%d summary rows, want 1", n)
	}
	if n := testdb.Int(t, b.env.Shards.Pool("s1"), `SELECT count(*) FROM readings WHERE turbine_id = 'T-001'`); n != 10 {
		t.Fatalf("%d good readings stored, want 10", n)
	}
	// DBAs and report tools: the summary names no payload.
	tx, err := c.Begin(ctx)
	testdb.Must(t, err, "begin")
	defer func() { _ = tx.Rollback(ctx) }()
	var asReporting int64
	_, err = tx.Exec(ctx, `SET LOCAL ROLE galewatch_reporting`)
	testdb.Must(t, err, "set role")
	testdb.Must(t, tx.QueryRow(ctx, `SELECT sum(not_kept) + (SELECT count(kind) FROM ingest_reject) FROM ingest_reject_summary`).Scan(&asReporting), "read as galewatch_reporting")
	if asReporting != 5000 {
		t.Fatalf("galewatch_reporting counts %d refused lines, want 5000", asReporting)
	}
	testdb.Must(t, tx.Rollback(ctx), "rollback")

	// The cap is the fleet's rule, in the control database.
	plan, err := fleet.Parse("capped", strings.NewReader("rules: {reject_rows_kept: 10}\n"+smallFleet))
	testdb.Must(t, err, "parse")
	_, err = b.env.Registry.Apply(ctx, "capped", plan)
	testdb.Must(t, err, "apply")
	routes, err := ingest.LoadRoutes(ctx, c, tuesday, 0)
	testdb.Must(t, err, "routes")
	b.in.SetRoutes(routes)
	code, out, _ = post(t, srv.URL, "application/x-ndjson", strings.NewReader(badBody(25)))
	if code != 200 || out["rejects_kept"] != float64(10) || fmt.Sprint(out["rejects_not_kept"]) != "map[invalid:12 unknown_turbine:3]" {
		t.Fatalf("with reject_rows_kept 10: status %d, %v; want 10 kept, 12 invalid and 3 unknown_turbine not kept", code, out)
	}
	if n := testdb.Int(t, c, `SELECT count(*) FROM ingest_reject`); n != 1010 {
		t.Fatalf("ingest_reject holds %d rows, want 1010", n)
	}
}
