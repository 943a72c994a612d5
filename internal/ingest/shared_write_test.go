package ingest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// sharedWrites drives the live writer of one shard into a shared write: a
// first body's write is held before its commit (hook), the bodies given
// next queue behind it (in order), and the release lets the writer take
// them all at once. It counts the transactions that reached their commit
// per shard.
type sharedWrites struct {
	b        *bundle
	held     chan struct{}
	release  chan struct{}
	once     sync.Once
	mu       sync.Mutex
	commits  map[string]int
	holdOn   string
	holding  atomic.Bool
	released atomic.Bool
}

func newSharedWrites(t *testing.T, holdOn string) *sharedWrites {
	t.Helper()
	s := &sharedWrites{held: make(chan struct{}), release: make(chan struct{}), commits: map[string]int{}, holdOn: holdOn}
	hooks := &ingest.Hooks{BeforeCommit: func(shard string, _ ingest.Lane) error {
		s.mu.Lock()
		s.commits[shard]++
		s.mu.Unlock()
		if shard == s.holdOn && s.holding.CompareAndSwap(false, true) {
			close(s.held)
			<-s.release
		}
		return nil
	}}
	s.b = setup(t, smallFleet, ingest.DefaultConfig(), hooks)
	t.Cleanup(s.free)
	return s
}

func (s *sharedWrites) free() { s.once.Do(func() { close(s.release) }) }

func (s *sharedWrites) commitsOn(shard string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits[shard]
}

type answer struct {
	sum ingest.Summary
	err error
}

// start ingests body on its own goroutine; the answer comes on the channel.
func (s *sharedWrites) start(t *testing.T, body string) <-chan answer {
	t.Helper()
	out := make(chan answer, 1)
	go func() {
		dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(body))
		if err != nil {
			out <- answer{err: err}
			return
		}
		sum, err := s.b.in.Ingest(context.Background(), "test", dec)
		out <- answer{sum, err}
	}()
	return out
}

// queued waits until shard's live writer holds rows rows (hang: a bug).
func (s *sharedWrites) queued(t *testing.T, shard string, rows int64) {
	t.Helper()
	for deadline := time.Now().Add(hang); s.b.in.QueuedLiveRows(shard) != rows; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%s's live writer holds %d rows, want %d", shard, s.b.in.QueuedLiveRows(shard), rows)
		}
	}
}

func (s *sharedWrites) holdFirst(t *testing.T, body string) <-chan answer {
	t.Helper()
	first := s.start(t, body)
	select {
	case <-s.held:
	case <-time.After(hang):
		t.Fatal("the first body never reached its commit")
	}
	return first
}

func wait(t *testing.T, what string, ch <-chan answer) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(hang):
		t.Fatalf("%s was never answered", what)
	}
	return answer{}
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// TestLiveBodiesShareTheirWrites: three bodies queued behind a held write
// of s1 are written in ONE transaction (2 commits on s1 in all, not 4),
// and each body's summary counts its own rows: B 2 accepted on s1 and 1 on
// s2, C 1, D 1. Their s2 line is written while s1 is held: a body never
// waits for a shard it has no lines for (E, s2 only, is answered before
// the release).
func TestLiveBodiesShareTheirWrites(t *testing.T) {
	t.Parallel()
	s := newSharedWrites(t, "s1")
	at := tuesday // 10:00 BST: its window is open, so no marks
	a := s.holdFirst(t, lines(line("T-001", at, tuesday)))
	bAns := s.start(t, lines(line("T-002", at, tuesday), line("T-003", at, tuesday), line("U-001", at, tuesday)))
	s.queued(t, "s1", 3)
	cAns := s.start(t, lines(line("T-004", at, tuesday)))
	s.queued(t, "s1", 4)
	dAns := s.start(t, lines(line("T-005", at, tuesday)))
	s.queued(t, "s1", 5)
	e := wait(t, "a body for s2 alone while s1 is held", s.start(t, lines(line("U-002", at, tuesday))))
	if e.err != nil || e.sum.Accepted != 1 {
		t.Fatalf("body E (s2 only) while s1 is held: %+v %v, want 1 accepted", e.sum, e.err)
	}
	s.free()
	for _, c := range []struct {
		name     string
		ch       <-chan answer
		accepted int64
	}{{"A", a, 1}, {"B", bAns, 3}, {"C", cAns, 1}, {"D", dAns, 1}} {
		got := wait(t, "body "+c.name, c.ch)
		if got.err != nil || got.sum.Accepted != c.accepted || got.sum.Duplicate != 0 || got.sum.Failed != 0 {
			t.Fatalf("body %s: %+v %v, want %d accepted, 0 duplicate, 0 failed", c.name, got.sum, got.err, c.accepted)
		}
	}
	if n := s.commitsOn("s1"); n != 2 {
		t.Fatalf("s1 committed %d transactions for 4 bodies, want 2 (the held one, then B, C and D together)", n)
	}
	if n := s.b.count(t, "s1", `SELECT count(*) FROM readings`); n != 5 {
		t.Fatalf("s1 holds %d readings, want 5", n)
	}
}

// TestASharedWriteCountsDuplicatesPerBody: B and C, queued together, hold
// the same reading (T-002 at the same instant) and D re-sends A's: the
// shared write meets the key and each body is written alone in the order
// it came, so B's T-002 is accepted and C's is its duplicate, and D's is a
// duplicate of A's: B 2 accepted; C 1 accepted, 1 duplicate; D 0, 1. s1
// holds 4 readings.
func TestASharedWriteCountsDuplicatesPerBody(t *testing.T) {
	t.Parallel()
	s := newSharedWrites(t, "s1")
	at := tuesday
	a := s.holdFirst(t, lines(line("T-001", at, tuesday)))
	bAns := s.start(t, lines(line("T-002", at, tuesday), line("T-003", at, tuesday)))
	s.queued(t, "s1", 3)
	cAns := s.start(t, lines(line("T-004", at, tuesday), line("T-002", at, tuesday)))
	s.queued(t, "s1", 5)
	dAns := s.start(t, lines(line("T-001", at, tuesday)))
	s.queued(t, "s1", 6)
	s.free()
	for _, c := range []struct {
		name                 string
		ch                   <-chan answer
		accepted, duplicates int64
	}{{"A", a, 1, 0}, {"B", bAns, 2, 0}, {"C", cAns, 1, 1}, {"D", dAns, 0, 1}} {
		got := wait(t, "body "+c.name, c.ch)
		if got.err != nil || got.sum.Accepted != c.accepted || got.sum.Duplicate != c.duplicates || got.sum.Failed != 0 {
			t.Fatalf("body %s: %+v %v, want %d accepted, %d duplicate, 0 failed", c.name, got.sum, got.err, c.accepted, c.duplicates)
		}
	}
	if n := s.b.count(t, "s1", `SELECT count(*) FROM readings`); n != 4 {
		t.Fatalf("s1 holds %d readings, want 4", n)
	}
}

// TestAFailingMemberFailsOnlyItsOwnLines: U-003 is fenced off s2 (a move
// switched it). Y's line 2 is U-003's; X and Y share a write of s2 behind a
// held one: Y's s2 lines fail (failed_lines [1-2], its batch for s2, as
// when it is written alone) and nothing else does — X's two lines and Y's
// T-006 line (s1) are stored.
func TestAFailingMemberFailsOnlyItsOwnLines(t *testing.T) {
	t.Parallel()
	s := newSharedWrites(t, "s2")
	at := tuesday
	_, err := s.b.env.Shards.Pool("s2").Exec(context.Background(), `INSERT INTO turbine_fence (turbine_id, moved_to, since) VALUES ('U-003', 's1', $1)`, tuesday)
	testdb.Must(t, err, "fence U-003")
	w := s.holdFirst(t, lines(line("U-001", at, tuesday)))
	x := s.start(t, lines(line("U-002", at, tuesday), line("U-005", at, tuesday)))
	s.queued(t, "s2", 3)
	y := s.start(t, lines(line("U-004", at, tuesday), line("U-003", at, tuesday), line("T-006", at, tuesday)))
	s.queued(t, "s2", 5)
	s.free()
	if got := wait(t, "body W", w); got.err != nil || got.sum.Accepted != 1 {
		t.Fatalf("body W: %+v %v, want 1 accepted", got.sum, got.err)
	}
	if got := wait(t, "body X", x); got.err != nil || got.sum.Accepted != 2 || got.sum.Failed != 0 {
		t.Fatalf("body X (shared a write with a fenced turbine's line): %+v %v, want 2 accepted, 0 failed", got.sum, got.err)
	}
	got := wait(t, "body Y", y)
	if got.err == nil || got.sum.Accepted != 1 || got.sum.Failed != 2 || fmt.Sprint(got.sum.FailedLines) != "[{1 2}]" {
		t.Fatalf("body Y: %+v %v, want an error, 1 accepted, 2 failed, failed_lines [{1 2}]", got.sum, got.err)
	}
	if n := s.b.count(t, "s2", `SELECT count(*) FROM readings`); n != 3 {
		t.Fatalf("s2 holds %d readings, want 3 (U-001, U-002, U-005)", n)
	}
}
