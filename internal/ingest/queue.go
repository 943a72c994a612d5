package ingest

import (
	"context"
	"sync"
	"time"
)

// rowQueue counts the rows handed to one writer lane of a shard and not
// yet written (queued, or in the transaction writing them): what admission
// and backpressure weigh, and what the backfill writer waits to see at zero.
type rowQueue struct {
	mu   sync.Mutex
	rows int64
	// changed is closed and replaced each time rows falls.
	changed chan struct{}
}

func newRowQueue() *rowQueue { return &rowQueue{changed: make(chan struct{})} }

func (q *rowQueue) add(n int64) {
	q.mu.Lock()
	q.rows += n
	q.mu.Unlock()
}

// done takes n written (or abandoned) rows out, waking every waiter.
func (q *rowQueue) done(n int64) {
	q.mu.Lock()
	q.rows -= n
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// load returns the rows waiting and a channel closed when they next fall.
func (q *rowQueue) load() (int64, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rows, q.changed
}

// fits says n more rows fit under limit; an empty queue takes any n, so
// that a batch larger than the limit still goes through, alone.
func fits(waiting, n, limit int64) bool { return waiting == 0 || waiting+n <= limit }

// waitRoom waits until n more rows fit under limit, ctx ends (its error),
// or deadline passes (errNoRoom; a zero deadline waits as long as ctx).
// It returns the rows that were waiting when it gave up.
func (q *rowQueue) waitRoom(ctx context.Context, n, limit int64, deadline <-chan time.Time) (int64, error) {
	for {
		rows, changed := q.load()
		if fits(rows, n, limit) {
			return rows, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return rows, errNoRoom
		case <-ctx.Done():
			return rows, ctx.Err()
		}
	}
}

// waitEmpty waits until no row is waiting.
func (q *rowQueue) waitEmpty() {
	for {
		rows, changed := q.load()
		if rows <= 0 {
			return
		}
		<-changed
	}
}
