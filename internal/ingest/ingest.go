// Package ingest stores readings in their shards exactly once: it parses a
// stream (NDJSON or CSV), validates and routes each reading to its turbine's
// shard, splits live from backfill, writes batches per shard in parallel, and
// records a dirty mark in the same transaction as any late rows. Bad lines go
// to ingest_reject with a reason; the rest of the stream is stored.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/partition"
	"github.com/galewatch/galewatch/internal/reading"
)

// Config holds the ingest rules and sizes.
type Config struct {
	// LaneThreshold: a reading whose recorded_at is more than this behind
	// its received_at is backfill lane (default 60 s).
	LaneThreshold time.Duration
	// EarlyTolerance: recorded_at ahead of received_at by more than this is
	// counted as early (a fast clock), and stored (default 2 s).
	EarlyTolerance time.Duration
	// FutureLimit: recorded_at ahead of received_at by more than this is
	// rejected (default 24 h).
	FutureLimit time.Duration
	// RetentionDays > 0 rejects readings older than the retention.
	RetentionDays int
	// Window and MarkMargin define the dirty-mark rule (see MarkRule).
	Window     time.Duration
	MarkMargin time.Duration
	// TxTimeout bounds one write transaction (client deadline, and
	// statement_timeout on the server); it must be well below MarkMargin.
	TxTimeout time.Duration
	// Batch sizes (rows) and queue depths (batches) per shard and lane.
	LiveBatch, BackfillBatch int
	LiveQueue, BackfillQueue int
	// FlushInterval: a live batch older than this is sent when the next
	// reading arrives even if it is not full.
	FlushInterval time.Duration
}

// DefaultConfig returns the defaults described on each field.
func DefaultConfig() Config {
	return Config{
		LaneThreshold:  60 * time.Second,
		EarlyTolerance: 2 * time.Second,
		FutureLimit:    24 * time.Hour,
		Window:         10 * time.Minute,
		MarkMargin:     5 * time.Minute,
		TxTimeout:      50 * time.Second,
		LiveBatch:      20_000,
		BackfillBatch:  50_000,
		LiveQueue:      2,
		BackfillQueue:  1,
		FlushInterval:  250 * time.Millisecond,
	}
}

// Summary accounts for every row of one ingest.
type Summary struct {
	// Accepted rows were stored.
	Accepted int64 `json:"accepted"`
	// Duplicate rows were already stored (same turbine and recorded_at).
	Duplicate int64 `json:"duplicate"`
	// Rejected rows are in ingest_reject with their reason.
	Rejected int64 `json:"rejected"`
	// Live and Backfill split the valid rows by lane.
	Live     int64 `json:"live"`
	Backfill int64 `json:"backfill"`
	// Early rows were ahead of their received_at by more than the tolerance.
	Early int64 `json:"early"`
	// DirtyMarks is how many farm-day-shards this ingest marked dirty.
	DirtyMarks int64 `json:"dirty_marks"`
	// Failed rows could not be stored (their shard failed); non-zero means
	// the ingest did not succeed.
	Failed int64 `json:"failed"`
	// Error says what went wrong, when something did.
	Error string `json:"error,omitempty"`
}

// Ingestor is the shared write pipeline: one shardWriter per shard.
type Ingestor struct {
	cfg     Config
	now     func() time.Time
	control *pgxpool.Pool
	routes  atomic.Pointer[Routes]
	writers map[string]*shardWriter
	wg      sync.WaitGroup
	// sessions holds a read lock per ingest in progress; Close takes the
	// write lock, so the queues are closed only once no session can send.
	sessions sync.RWMutex
	closed   bool
}

// ErrClosed is returned by Ingest after Close.
var ErrClosed = errors.New("ingest pipeline is shut down")

// New builds an ingestor over the registry's shards. now is the clock
// (stamps missing received_at, dates rejects, drives the mark rule).
func New(cfg Config, control *pgxpool.Pool, shards *fleet.Shards, routes *Routes, now func() time.Time, hooks *Hooks) *Ingestor {
	in := &Ingestor{cfg: cfg, now: now, control: control, writers: map[string]*shardWriter{}}
	in.routes.Store(routes)
	for _, name := range shards.Names() {
		in.writers[name] = newShardWriter(name, shards.Pool(name), cfg, now, hooks)
	}
	return in
}

// Start launches the writers; they stop when Close is called.
func (in *Ingestor) Start(ctx context.Context) {
	for _, w := range in.writers {
		in.wg.Add(2)
		go func() { defer in.wg.Done(); w.runLive(ctx) }()
		go func() { defer in.wg.Done(); w.runBackfill(ctx) }()
	}
}

// Close waits for the ingests in progress, then stops the writers once
// the queued batches are written. Ingest calls after Close fail with ErrClosed.
func (in *Ingestor) Close() {
	in.sessions.Lock()
	if in.closed {
		in.sessions.Unlock()
		return
	}
	in.closed = true
	for _, w := range in.writers {
		close(w.live)
		close(w.backfill)
	}
	in.sessions.Unlock()
	in.wg.Wait()
}

// SetRoutes swaps in a fresh registry snapshot.
func (in *Ingestor) SetRoutes(r *Routes) { in.routes.Store(r) }

// Routes returns the current registry snapshot.
func (in *Ingestor) Routes() *Routes { return in.routes.Load() }

// Ingest reads every record of dec and returns once all of them are
// stored, refused as duplicates, rejected, or failed. The error is non-nil
// when the source could not be read or some rows could not be stored; the
// summary is accurate either way.
func (in *Ingestor) Ingest(ctx context.Context, source string, dec reading.Decoder) (Summary, error) {
	in.sessions.RLock()
	defer in.sessions.RUnlock()
	if in.closed {
		return Summary{Error: ErrClosed.Error()}, ErrClosed
	}
	s := &session{in: in, source: source, routes: in.routes.Load(), tr: newTracker(), pending: map[string]*[2]*batch{}}
	readErr := s.readAll(ctx, dec)
	flushErr := s.flushAll(ctx)
	s.tr.wait()
	s.flushRejects(ctx)
	sum := s.tr.summary()
	sum.Rejected, sum.Live, sum.Backfill, sum.Early = s.rejected, s.live, s.backfill, s.early
	// A bad line whose reason could not be stored is not accounted for.
	sum.Rejected -= s.rejectsLost
	sum.Failed += s.rejectsLost
	err := errors.Join(readErr, flushErr, s.tr.firstErr(), s.rejectErr)
	if err != nil {
		sum.Error = err.Error()
	}
	return sum, err
}

// session is one source being ingested.
type session struct {
	in      *Ingestor
	source  string
	routes  *Routes
	tr      *tracker
	pending map[string]*[2]*batch // shard -> [live, backfill] batch being filled
	rejects []controldb.IngestRejectInsertParams

	rejected, live, backfill, early int64
	liveSince                       time.Time
	lastLine                        int64
	rejectsLost                     int64
	rejectErr                       error
}

func (s *session) readAll(ctx context.Context, dec reading.Decoder) error {
	for {
		rec, err := dec.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: read failed after line %d: %w", s.source, s.lastLine, err)
		}
		s.lastLine = rec.Line
		if err := s.take(ctx, rec); err != nil {
			return err
		}
	}
}

func (s *session) take(ctx context.Context, rec *reading.Record) error {
	if rec.Problem != "" {
		return s.reject(ctx, rec, rec.Problem)
	}
	r := &rec.Reading
	route := s.routes.Lookup(r.TurbineID)
	if route == nil {
		return s.reject(ctx, rec, fmt.Sprintf("unknown turbine %q", r.TurbineID))
	}
	now := s.in.now()
	if r.ReceivedAt.IsZero() {
		r.ReceivedAt = now
	}
	if msg := s.in.check(route, r, now); msg != "" {
		return s.reject(ctx, rec, msg)
	}
	lane := Live
	if r.ReceivedAt.Sub(r.RecordedAt) > s.in.cfg.LaneThreshold {
		lane = Backfill
		s.backfill++
	} else {
		s.live++
	}
	if r.RecordedAt.Sub(r.ReceivedAt) > s.in.cfg.EarlyTolerance {
		s.early++
	}
	slots := s.pending[route.Shard]
	if slots == nil {
		slots = &[2]*batch{}
		s.pending[route.Shard] = slots
	}
	b := slots[lane]
	if b == nil {
		size := s.in.cfg.LiveBatch
		if lane == Backfill {
			size = s.in.cfg.BackfillBatch
		}
		b = &batch{lane: lane, src: s.tr, rows: make([]sharddb.ReadingsCopyParams, 0, size), routes: make([]*Route, 0, size)}
		slots[lane] = b
		if lane == Live {
			s.liveSince = now
		}
	}
	b.rows = append(b.rows, sharddb.ReadingsCopyParams{
		TurbineID: route.TurbineID, RecordedAt: r.RecordedAt, ReceivedAt: r.ReceivedAt,
		Available: r.Available, PowerKw: r.PowerKW, WindMs: r.WindMS,
	})
	b.routes = append(b.routes, route)
	if len(b.rows) == cap(b.rows) {
		slots[lane] = nil
		return s.submit(ctx, route.Shard, b)
	}
	if lane == Live && now.Sub(s.liveSince) >= s.in.cfg.FlushInterval {
		return s.flushLive(ctx)
	}
	return nil
}

// check validates a routed reading; it returns the reason it is refused.
func (in *Ingestor) check(route *Route, r *reading.Reading, now time.Time) string {
	const ts = time.RFC3339Nano
	if d := route.DecommissionedAt; d != nil && !r.RecordedAt.Before(*d) {
		return fmt.Sprintf("turbine %q was decommissioned at %s; recorded_at %s is not before it", route.TurbineID, d.UTC().Format(ts), r.RecordedAt.UTC().Format(ts))
	}
	if c := route.CommissionedAt; c != nil && r.RecordedAt.Before(*c) {
		return fmt.Sprintf("turbine %q was commissioned at %s; recorded_at %s is before it", route.TurbineID, c.UTC().Format(ts), r.RecordedAt.UTC().Format(ts))
	}
	if ahead := r.RecordedAt.Sub(r.ReceivedAt); ahead > in.cfg.FutureLimit {
		return fmt.Sprintf("recorded_at %s is %s ahead of received_at %s (limit %s)", r.RecordedAt.UTC().Format(ts), ahead, r.ReceivedAt.UTC().Format(ts), in.cfg.FutureLimit)
	}
	if in.cfg.RetentionDays > 0 {
		cutoff := partition.Day(now).AddDate(0, 0, -in.cfg.RetentionDays)
		if r.RecordedAt.Before(cutoff) {
			return fmt.Sprintf("recorded_at %s is older than the retention of %d days (before %s)", r.RecordedAt.UTC().Format(ts), in.cfg.RetentionDays, cutoff.Format(time.DateOnly))
		}
	}
	return ""
}

func (s *session) flushLive(ctx context.Context) error {
	for shard, slots := range s.pending {
		if b := slots[Live]; b != nil {
			slots[Live] = nil
			if err := s.submit(ctx, shard, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) flushAll(ctx context.Context) error {
	var errs []error
	for shard, slots := range s.pending {
		for lane, b := range slots {
			if b != nil {
				slots[lane] = nil
				errs = append(errs, s.submit(ctx, shard, b))
			}
		}
	}
	return errors.Join(errs...)
}

// submit hands a full batch to its shard's writer, blocking while the
// lane's queue is full (that is the backpressure that bounds memory).
func (s *session) submit(ctx context.Context, shard string, b *batch) error {
	w := s.in.writers[shard]
	s.tr.add()
	if w == nil {
		err := fmt.Errorf("shard %q of turbine %s is not open in this process (re-apply the fleet or restart)", shard, b.rows[0].TurbineID)
		s.tr.done(shard, b, batchResult{err: err})
		return nil
	}
	ch := w.backfill
	if b.lane == Live {
		ch = w.live
		w.liveQueued(+1)
	}
	select {
	case ch <- b:
		return nil
	case <-ctx.Done():
		s.tr.done(shard, b, batchResult{err: ctx.Err()})
		if b.lane == Live {
			w.liveQueued(-1)
		}
		return ctx.Err()
	}
}

func (s *session) reject(ctx context.Context, rec *reading.Record, reason string) error {
	raw := rec.Raw
	if len(raw) > 4096 {
		raw = raw[:4096]
	}
	s.rejected++
	s.rejects = append(s.rejects, controldb.IngestRejectInsertParams{
		Source: s.source, Line: rec.Line, Raw: string(raw), Reason: reason, RejectedAt: s.in.now(),
	})
	if len(s.rejects) >= 1000 {
		s.flushRejects(ctx)
	}
	return nil
}

// flushRejects stores the pending rejects. If the control database cannot
// take them, they are counted as failed (the ingest does not succeed) and
// reading goes on: the good rows are still worth storing.
func (s *session) flushRejects(ctx context.Context) {
	if len(s.rejects) == 0 {
		return
	}
	if _, err := controldb.New(s.in.control).IngestRejectInsert(ctx, s.rejects); err != nil {
		s.rejectsLost += int64(len(s.rejects))
		if s.rejectErr == nil {
			s.rejectErr = fmt.Errorf("store rejected line(s) of %s: %w", s.source, err)
		}
	}
	s.rejects = s.rejects[:0]
}
