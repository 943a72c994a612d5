package ingest

import "time"

// For the benchmark's floors (package ingest_test): the writer's row and
// its allocation-free COPY source.
type Row = row

var NewCopySource = newCopySource

// ReadingsColumns are the columns the writer's COPY sends, in order.
var ReadingsColumns = readingsColumns

// QueuedLiveRows is the live rows handed to shard's writer and not yet
// written.
func (in *Ingestor) QueuedLiveRows(shard string) int64 {
	n, _ := in.writers[shard].liveRows.load()
	return n
}

// SetPacer replaces MaxRate's wall clock.
func (in *Ingestor) SetPacer(now func() time.Time, sleep func(time.Duration)) {
	in.pace = testPacer{now: now, sleep: sleep}
}

type testPacer struct {
	now   func() time.Time
	sleep func(time.Duration)
}

func (p testPacer) Now() time.Time        { return p.now() }
func (p testPacer) Sleep(d time.Duration) { p.sleep(d) }
