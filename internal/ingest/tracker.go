package ingest

import (
	"slices"
	"sync"
	"time"
)

// tracker accounts for the batches of one source as writers finish them.
type tracker struct {
	wg sync.WaitGroup

	mu                          sync.Mutex
	accepted, duplicate, failed int64
	failedAt                    []int64 // lines of failed rows
	marks                       map[trackedMark]struct{}
	err                         error
	obs                         Observer
}

type trackedMark struct {
	shard, farm string
	day         time.Time
}

func newTracker(obs Observer) *tracker {
	return &tracker{marks: map[trackedMark]struct{}{}, obs: obs}
}

// add registers a batch about to be handed to a writer.
func (t *tracker) add() { t.wg.Add(1) }

// done records a batch's outcome; a failed batch counts all its rows as failed.
func (t *tracker) done(shard string, b *batch, res batchResult) {
	defer t.wg.Done()
	t.mu.Lock()
	defer t.mu.Unlock()
	if res.err != nil {
		t.obs.Batch(b.lane, 0, 0, int64(len(b.rows)))
		t.failed += int64(len(b.rows))
		t.failedAt = append(t.failedAt, b.lines...)
		if t.err == nil {
			t.err = res.err
		}
		return
	}
	t.obs.Batch(b.lane, res.accepted, res.duplicate, 0)
	t.accepted += res.accepted
	t.duplicate += res.duplicate
	for _, k := range res.marks {
		t.marks[trackedMark{shard: shard, farm: k.farm, day: k.day}] = struct{}{}
	}
}

func (t *tracker) wait() { t.wg.Wait() }

// failedLines returns the lines of every failed row so far.
func (t *tracker) failedLines() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.failedAt)
}

func (t *tracker) firstErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

func (t *tracker) summary() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Summary{Accepted: t.accepted, Duplicate: t.duplicate, Failed: t.failed, DirtyMarks: int64(len(t.marks))}
}
