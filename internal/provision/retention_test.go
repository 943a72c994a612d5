package provision_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/provision"
	"github.com/galewatch/galewatch/internal/testdb"
)

const oneFarm = "shards: [{name: s1}]\nfarms: [{id: north, timezone: UTC, turbines: [{id: N-001, shard: s1}]}]\n"

// TestRefusedLinesLeaveAfterTheirRetention: refused lines rejected 31, 29
// and 1 days before the partitions job's clock. With the default rule (30
// days) the 31-day-old line and summary go and the others stay; after the
// fleet file sets reject_retention: 7d, the 29-day-old ones go too and the
// 1-day-old ones stay. Nothing else (readings retention is off) is needed.
func TestRefusedLinesLeaveAfterTheirRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, oneFarm)
	now := time.Date(2026, 8, 31, 12, 0, 0, 0, time.UTC)
	ages := []int{31, 29, 1}
	for _, d := range ages {
		testdb.Exec(t, env.Control, `INSERT INTO ingest_reject (source, line, raw, reason, rejected_at) VALUES ('old.csv', $1, 'x', 'bad', $2)`,
			d, now.AddDate(0, 0, -d))
	}
	lines := func() string {
		var s string
		testdb.Must(t, env.Control.QueryRow(ctx, `SELECT coalesce(string_agg(line::text, ' ' ORDER BY line), '') FROM ingest_reject`).Scan(&s), "lines")
		return s
	}
	testdb.Must(t, provision.Partitions(ctx, env.Control, env.Shards, now, 1, 0), "partitions")
	if got := lines(); got != "1 29" {
		t.Fatalf("ingest_reject after the default 30 days: lines %q, want \"1 29\" (the 31-day-old one gone)", got)
	}

	for _, d := range ages {
		testdb.Exec(t, env.Control, `INSERT INTO ingest_reject_summary (source, kept, not_kept, not_kept_by_kind, first_line_not_kept, last_line_not_kept, rows_kept_limit, rejected_at)
			VALUES ('old.csv', 1000, $1, '{"invalid": 1}', 1001, 2000, 1000, $2)`, d, now.AddDate(0, 0, -d))
	}
	summaries := func() string {
		var s string
		testdb.Must(t, env.Control.QueryRow(ctx, `SELECT coalesce(string_agg(not_kept::text, ' ' ORDER BY not_kept), '') FROM ingest_reject_summary`).Scan(&s), "summaries")
		return s
	}
	testdb.Must(t, provision.Partitions(ctx, env.Control, env.Shards, now, 1, 0), "partitions")
	if got := summaries(); got != "1 29" {
		t.Fatalf("ingest_reject_summary after the default 30 days: %q, want \"1 29\"", got)
	}

	plan, err := fleet.Parse("week", strings.NewReader("rules: {reject_retention: 7d}\n"+oneFarm))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(ctx, "week", plan)
	testdb.Must(t, err, "apply")
	testdb.Must(t, provision.Partitions(ctx, env.Control, env.Shards, now, 1, 0), "partitions")
	if got, sums := lines(), summaries(); got != "1" || sums != "1" {
		t.Fatalf("after reject_retention: 7d: ingest_reject lines %q, summaries %q; want \"1\" and \"1\"", got, sums)
	}
}
