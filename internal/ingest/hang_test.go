package ingest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestHungShardFailsItsLinesWithinTheBound: s1's server hangs (connections
// open, nothing answering). A body with readings of both shards, on a day
// s1 has no partition for yet, comes back within the write bound (2 s
// here): s2's lines stored, s1's reported as failed lines to re-send. The
// partition s1 needed is asked for inside the same bound; it used to be
// asked with no bound at all, and the writer of s1 (and the body) waited
// for ever. After the hang the re-sent lines are stored.
func TestHungShardFailsItsLinesWithinTheBound(t *testing.T) {
	t.Parallel()
	proxy, dsn := testdb.ProxiedDatabase(t)
	fleetYAML := fmt.Sprintf(`
shards:
  - {name: s1, dsn: '%s'}
  - {name: s2}
farms:
  - {id: f1, timezone: UTC, turbines: [{prefix: T-, from: 1, to: 2, shard: s1}]}
  - {id: f2, timezone: UTC, turbines: [{prefix: U-, from: 1, to: 2, shard: s2}]}
`, dsn)
	cfg := ingest.DefaultConfig()
	cfg.TxTimeout = 2 * time.Second
	b := setup(t, fleetYAML, cfg, nil)
	// A first body opens s1's connections and its partition for the day.
	if sum, err := b.ingest(t, reading.NDJSON, line("T-001", tuesday, tuesday)+"\n"); err != nil || sum.Accepted != 1 {
		t.Fatalf("before the hang: %+v, %v", sum, err)
	}
	proxy.Hang()
	day := tuesday.AddDate(0, 0, -1) // a partition s1 does not have yet
	body := line("T-001", day, day) + "\n" + line("U-001", day, day) + "\n" + line("T-002", day, day) + "\n"
	start := time.Now()
	sum, err := b.ingest(t, reading.NDJSON, body)
	took := time.Since(start)
	if err == nil || sum.Accepted != 1 || sum.Failed != 2 || fmt.Sprint(sum.FailedLines) != "[{1 1} {3 3}]" {
		t.Fatalf("with s1 hung: %+v, %v; want U-001 stored and lines 1 and 3 failed", sum, err)
	}
	const hang = 40 * time.Second // normal 3.0 s (the write bound, and the partition asked within it); 40 s catches a hang
	if took > hang {
		t.Fatalf("with s1 hung the body took %v: it hung past the write bound %v", took, cfg.TxTimeout)
	}
	proxy.Resume()
	resend := line("T-001", day, day) + "\n" + line("T-002", day, day) + "\n"
	if sum, err := b.ingest(t, reading.NDJSON, resend); err != nil || sum.Accepted != 2 || sum.Failed != 0 {
		t.Fatalf("re-sent after the hang: %+v, %v; want 2 accepted", sum, err)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`); n != 3 {
		t.Fatalf("s1 holds %d readings, want 3", n)
	}
}

// TestBatchAfterAShardRestartIsStored: the shard's server drops every
// session (as a restart does) right after a body was stored, so the pool's
// idle connections are dead but recent enough not to be checked. The next
// body is stored all the same: the writer sees the lost connection, drops
// the pool's connections and tries the batch once more. It used to fail the
// whole batch ("unexpected EOF"), found by the stopped-shard fault test.
func TestBatchAfterAShardRestartIsStored(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	if sum, err := b.ingest(t, reading.NDJSON, line("T-001", tuesday, tuesday)+"\n"); err != nil || sum.Accepted != 1 {
		t.Fatalf("first body: %+v, %v", sum, err)
	}
	s1 := b.env.Shards.Pool("s1")
	maint := testdb.Pool(t, testdb.MaintenanceDSN(t))
	if n := testdb.Int(t, maint, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM (SELECT pid FROM pg_stat_activity WHERE datname = $1 OFFSET 0) s`, s1.Config().ConnConfig.Database); n == 0 {
		t.Fatal("no session of s1 to end")
	}
	at := tuesday.Add(-10 * time.Second)
	sum, err := b.ingest(t, reading.NDJSON, line("T-002", at, tuesday)+"\n"+line("T-003", at, tuesday)+"\n")
	if err != nil || sum.Accepted != 2 || sum.Failed != 0 {
		t.Fatalf("body after the sessions ended: %+v, %v; want 2 accepted", sum, err)
	}
}
