package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// batchCounter is an ingest.Observer that keeps each batch's size.
type batchCounter struct {
	mu                  sync.Mutex
	sizes               map[ingest.Lane][]int64
	accepted, duplicate int64
}

func (b *batchCounter) Batch(lane ingest.Lane, accepted, duplicate, failed int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes[lane] = append(b.sizes[lane], accepted+duplicate+failed)
	b.accepted += accepted
	b.duplicate += duplicate
}
func (b *batchCounter) Rejected(ingest.RejectReason, int64) {}
func (b *batchCounter) RejectsLost(int64)                   {}
func (b *batchCounter) Body(ingest.BodyOutcome)             {}
func (b *batchCounter) Early(int64)                         {}

// TestIngestCommandWritesBulkBatches: `orchestrator ingest FILE` writes a
// file in 50,000-row transactions (ingest.Config.Bulk), where serve's
// defaults would have written its live rows 20,000 at a time: 150,000 live
// readings are 3 batches, not 8, and every one of them is accepted.
func TestIngestCommandWritesBulkBatches(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	dir := t.TempDir()
	fleetFile := filepath.Join(dir, "fleet.yaml")
	testdb.Must(t, os.WriteFile(fleetFile, []byte(fmt.Sprintf(rulesFleet, "30s")), 0o644), "write fleet")
	// 150,000 readings of G-001 every 2 s from 1 August, each received 1 s
	// after it was recorded: the live lane.
	const rows = 150_000
	file := filepath.Join(dir, "g001.ndjson")
	f, err := os.Create(file)
	testdb.Must(t, err, "create")
	w := bufio.NewWriter(f)
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < rows; i++ {
		at := start.Add(time.Duration(2*i) * time.Second)
		fmt.Fprintf(w, `{"turbine_id":"G-001","recorded_at":%q,"received_at":%q,"available":true,"power_kw":1,"wind_ms":1}`+"\n",
			at.Format(time.RFC3339), at.Add(time.Second).Format(time.RFC3339))
	}
	testdb.Must(t, w.Flush(), "flush")
	testdb.Must(t, f.Close(), "close")

	now := time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC)
	counter := &batchCounter{sizes: map[ingest.Lane][]int64{}}
	run := func(args ...string) error {
		cfg := testConfig(env)
		cfg.Ingest.Observer = counter
		var err error // through captureStdout: not into a parallel test's capture
		captureStdout(t, func() { err = runMain(&Main{Config: cfg, Now: func() time.Time { return now }}, args...) })
		return err
	}
	testdb.Must(t, run("fleet", "apply", "--effective-from", testFleetSince, fleetFile), "fleet apply")
	testdb.Must(t, run("ingest", file), "ingest")

	live := slices.Clone(counter.sizes[ingest.Live])
	slices.Sort(live)
	if want := []int64{50_000, 50_000, 50_000}; !slices.Equal(live, want) {
		t.Fatalf("live batches %v, want %v (ingest.BulkBatch rows each)", counter.sizes[ingest.Live], want)
	}
	if n := len(counter.sizes[ingest.Backfill]); n != 0 {
		t.Fatalf("%d backfill batches, want 0", n)
	}
	if counter.accepted != rows || counter.duplicate != 0 {
		t.Fatalf("%d rows accepted and %d duplicates, want %d and 0", counter.accepted, counter.duplicate, rows)
	}
}
