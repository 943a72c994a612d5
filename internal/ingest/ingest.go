// Package ingest stores readings in their shards exactly once: it parses a
// stream (NDJSON or CSV), validates and routes each reading to its turbine's
// shard, splits live from backfill, writes batches per shard in parallel, and
// records a dirty mark in the same transaction as any late rows. Bad lines go
// to ingest_reject with a reason; the rest of the stream is stored.
package ingest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/reading"
)

// Config sizes and times the write pipeline. The rules that decide what a
// stored count means (lanes, early, future limit, maximum age, the mark
// rule) are not here: they are each farm's, from the control database
// (fleet.Rules on every Route).
type Config struct {
	// TxTimeout bounds one write transaction (client deadline, and
	// statement_timeout on the server); it must be well below every farm's
	// mark margin (fleet.MinMarkMargin).
	TxTimeout time.Duration
	// Batch sizes (rows) and queue depths (batches) per shard and lane.
	// LiveBatch is also the most one shared live write takes.
	LiveBatch, BackfillBatch int
	LiveQueue, BackfillQueue int
	// QueuedRows is how many rows each lane of a shard holds queued or
	// being written before a new HTTP body waits for room (and then, past
	// the handler's AdmitWait, is answered 503), and before a source's next
	// live batch waits to be queued: admission is by the work waiting, not
	// by a count of bodies.
	QueuedRows int
	// LiveSignals, when set, is told while this process's live work on a
	// shard waits, and signals every process to hold its replays back
	// (internal/livefirst). serve sets it; a bulk ingest does not (its live
	// lane is a file's).
	LiveSignals *livefirst.Signals
	// NoYield: the backfill writer does not wait for other processes' live
	// work (tests and benchmarks of a replay alone).
	NoYield bool
	// MaxRate, when positive, paces reading to at most this many lines a
	// second (`orchestrator ingest --max-rate`).
	MaxRate float64
	// FlushInterval: a live-lane batch (delivered as it arrives, or
	// replayed) older than this is sent when the next reading arrives even
	// if it is not full.
	FlushInterval time.Duration
	// Observer, if set, is told what happens to rows (for /metrics).
	Observer Observer
}

// DefaultConfig returns the defaults described on each field.
func DefaultConfig() Config {
	return Config{
		TxTimeout:     20 * time.Second,
		LiveBatch:     20_000,
		BackfillBatch: 50_000,
		LiveQueue:     256,
		BackfillQueue: 1,
		QueuedRows:    4 * 20_000,
		FlushInterval: 250 * time.Millisecond,
	}
}

// BulkBatch is the batch size, in both lanes, of a bulk source: a file or
// stdin given to `orchestrator ingest`.
const BulkBatch = 50_000

// Bulk returns c sized for a bulk source, read as fast as the shards take
// it: both lanes write BulkBatch-row batches (the live lane at the backfill
// lane's size). A file's rows are mostly live (their received_at is close
// to their recorded_at), and 20,000-row live batches paid a fixed cost per
// transaction (its marks, the commit, the next BEGIN); 50,000 takes most
// of 100,000's gain for two thirds of its memory (BENCHMARKS.md, "File
// ingest").
// A live stream on stdin is not held back by the size: a live batch still
// goes out FlushInterval after it was started, when the next reading
// arrives. serve keeps the defaults: its bodies are small and many.
func (c Config) Bulk() Config {
	c.LiveBatch, c.BackfillBatch = BulkBatch, BulkBatch
	// one batch being written and two queued, as many as a bulk source's
	// writer had before admission counted rows
	c.QueuedRows = 3 * BulkBatch
	return c
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
	// Failed rows could not be stored (their shard failed, or a bad line's
	// reject could not be recorded); non-zero means the ingest did not
	// succeed.
	Failed int64 `json:"failed"`
	// FailedLines are the line numbers of the failed rows, as ranges: the
	// lines a sender should re-send (re-sending everything is safe too:
	// rows already stored count as duplicates).
	FailedLines []LineRange `json:"failed_lines,omitempty"`
	// Rejects are the first rejected lines with their reasons.
	Rejects []RejectSample `json:"rejects,omitempty"`
	// ReadThrough, when the input could not be read to its end (a body cut
	// for being too slow or too large, a file that failed), is its last line
	// read whole: the lines after it were not read, none of them is stored;
	// those up to it are accounted for above.
	ReadThrough int64 `json:"read_through,omitempty"`
	// RejectsKept is how many rejected lines are stored verbatim in
	// ingest_reject: the first fleet_rules.reject_rows_kept of the input.
	RejectsKept int64 `json:"rejects_kept"`
	// RejectsNotKept counts the rejected lines beyond that cap per kind of
	// reason (RejectReason): not stored, counted in one
	// ingest_reject_summary row.
	RejectsNotKept map[string]int64 `json:"rejects_not_kept,omitempty"`
	// Error says what went wrong, when something did.
	Error string `json:"error,omitempty"`
}

// Plus is the counts of s and o added up (several files, senders or
// bodies); what names lines (FailedLines, Rejects, ReadThrough) is per
// input and not carried.
func (s Summary) Plus(o Summary) Summary {
	t := Summary{
		Accepted: s.Accepted + o.Accepted, Duplicate: s.Duplicate + o.Duplicate, Rejected: s.Rejected + o.Rejected,
		Live: s.Live + o.Live, Backfill: s.Backfill + o.Backfill, Early: s.Early + o.Early,
		DirtyMarks: s.DirtyMarks + o.DirtyMarks, Failed: s.Failed + o.Failed, RejectsKept: s.RejectsKept + o.RejectsKept,
	}
	for _, m := range []map[string]int64{s.RejectsNotKept, o.RejectsNotKept} {
		for k, n := range m {
			if t.RejectsNotKept == nil {
				t.RejectsNotKept = map[string]int64{}
			}
			t.RejectsNotKept[k] += n
		}
	}
	return t
}

// LineRange is a run of line numbers, first to last inclusive.
type LineRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// RejectSample is one rejected line and why.
type RejectSample struct {
	Line   int64  `json:"line"`
	Reason string `json:"reason"`
}

// MaxRejectSamples is how many rejects a Summary lists.
const MaxRejectSamples = 20

// lineRanges sorts line numbers and joins consecutive ones into ranges.
func lineRanges(lines []int64) []LineRange {
	if len(lines) == 0 {
		return nil
	}
	slices.Sort(lines)
	var out []LineRange
	for _, l := range lines {
		if n := len(out); n > 0 && l <= out[n-1].To+1 {
			out[n-1].To = max(out[n-1].To, l)
			continue
		}
		out = append(out, LineRange{From: l, To: l})
	}
	return out
}

// SourceError is a failure to read the input itself (not a bad line): the
// rows before it were handled, the rest were never read.
type SourceError struct {
	Source string
	Line   int64 // the last line read
	Err    error
}

func (e *SourceError) Error() string {
	return fmt.Sprintf("%s: read failed after line %d: %v", e.Source, e.Line, e.Err)
}

func (e *SourceError) Unwrap() error { return e.Err }

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
	// stale: a writer met a turbine fenced off its shard (a move switched
	// it after these routes were loaded).
	stale chan struct{}
	// pace is the clock and sleep of MaxRate (the wall clock's; tests
	// replace it).
	pace pacer
}

// ErrClosed is returned by Ingest after Close.
var ErrClosed = errors.New("ingest pipeline is shut down")

// New builds an ingestor over the registry's shards. now is the clock
// (stamps missing received_at, dates rejects, drives the mark rule).
func New(cfg Config, control *pgxpool.Pool, shards *fleet.Shards, routes *Routes, now func() time.Time, hooks *Hooks) *Ingestor {
	// The mark rule is safe only while a write transaction ends within the
	// smallest margin a farm may have, less room for clock skew.
	if bound := fleet.MinMarkMargin - 10*time.Second; cfg.TxTimeout <= 0 || cfg.TxTimeout > bound {
		cfg.TxTimeout = bound
	}
	if cfg.Observer == nil {
		cfg.Observer = noObserver{}
	}
	in := &Ingestor{cfg: cfg, now: now, control: control, writers: map[string]*shardWriter{}, stale: make(chan struct{}, 1),
		pace: wallPacer{}}
	in.routes.Store(routes)
	for _, name := range shards.Names() {
		in.writers[name] = newShardWriter(name, shards.Pool(name), control, cfg, now, hooks, in.stale)
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

// Yielded is how long this process's replays waited for live work, in
// this process or another (live first), since it started.
func (in *Ingestor) Yielded() time.Duration {
	var d time.Duration
	for _, w := range in.writers {
		d += time.Duration(w.yielded.Load())
	}
	return d
}

func (in *Ingestor) isClosed() bool {
	in.sessions.RLock()
	defer in.sessions.RUnlock()
	return in.closed
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
	return in.ingestAdmitted(ctx, source, dec, nil, nil)
}

// need is the rows one ingest holds for one lane of a shard when it asks
// for admission.
type need struct {
	shard  string
	prompt bool
	rows   int
}

// ingestAdmitted is Ingest, with admit called once before the first write
// (a batch handed to a shard writer, or rejects stored), given the rows
// read so far per shard and lane: reading and parsing up to the first full
// batch, or to the end of a small input, needs no admission. When admit
// fails nothing has been written: the ingest stops there and returns
// admit's error with an empty summary. Nil admit admits. read, if set, is
// called once the input is read to its end (or failed) and admitted: what
// is left is to wait for the writes.
func (in *Ingestor) ingestAdmitted(ctx context.Context, source string, dec reading.Decoder, admit func([]need) error, read func()) (Summary, error) {
	in.sessions.RLock()
	defer in.sessions.RUnlock()
	if in.closed {
		return Summary{Error: ErrClosed.Error()}, ErrClosed
	}
	routes := in.routes.Load()
	s := &session{in: in, source: source, routes: routes, tr: newTracker(in.cfg.Observer), pending: map[string]*[queues]*batch{}, admit: admit,
		keepRows: int64(routes.Rejects.RowsKept)}
	readErr := s.readAll(ctx, dec)
	if s.refused == nil && s.hasWrites() {
		_ = s.enter()
	}
	if s.refused != nil {
		return Summary{Error: s.refused.Error()}, s.refused
	}
	if read != nil {
		read()
	}
	flushErr := s.flushAll(ctx)
	s.tr.wait()
	s.flushRejects(ctx)
	s.storeNotKept(ctx)
	sum := s.tr.summary()
	sum.Rejected, sum.Live, sum.Backfill, sum.Early = s.rejected, s.live, s.backfill, s.early
	// A bad line whose reason could not be stored is not accounted for.
	sum.Rejected -= int64(len(s.rejectsLost))
	sum.Failed += int64(len(s.rejectsLost))
	sum.FailedLines = lineRanges(append(s.tr.failedLines(), s.rejectsLost...))
	sum.RejectsKept = s.kept - int64(len(s.rejectsLost))
	if s.notKept.lines > 0 {
		if s.notKept.stored {
			sum.RejectsNotKept = make(map[string]int64, len(s.notKept.byKind))
			for k, n := range s.notKept.byKind {
				sum.RejectsNotKept[string(k)] = n
			}
		} else {
			// Their count could not be recorded: as a reject that could
			// not be stored, they failed (the range says what to re-send).
			sum.Rejected -= s.notKept.lines
			sum.Failed += s.notKept.lines
			sum.FailedLines = joinRanges(append(sum.FailedLines, LineRange{From: s.notKept.first, To: s.notKept.last}))
		}
	}
	sum.Rejects = s.samples
	if src := (*SourceError)(nil); errors.As(readErr, &src) {
		sum.ReadThrough = src.Line
	}
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
	pending map[string]*[queues]*batch // shard -> batch being filled per queue
	// the last shard a reading went to, and its pending slots
	lastShard string
	lastSlots *[queues]*batch
	rejects   []controldb.IngestRejectInsertParams
	reasons   []RejectReason // reasons[i] is rejects[i]'s
	samples   []RejectSample

	rejected, live, backfill, early int64
	liveSince, lateSince            time.Time
	lastLine                        int64
	rejectsLost                     []int64 // lines of rejects that could not be stored
	rejectErr                       error

	// admit is called before the first write (nil once admitted); refused
	// is its error when it refused.
	admit   func([]need) error
	refused error
	// paced counts the lines read under MaxRate since paceStart.
	paced     int64
	paceStart time.Time

	// keepRows rejects are stored verbatim (fleet_rules.reject_rows_kept);
	// kept counts those handed to ingest_reject, notKept the rest.
	keepRows, kept int64
	notKept        notKept
}

// notKept counts the rejected lines of an input beyond the cap, per kind.
type notKept struct {
	lines, first, last int64
	byKind             map[RejectReason]int64
	stored             bool // its ingest_reject_summary row was written
}

func (s *session) readAll(ctx context.Context, dec reading.Decoder) error {
	for {
		if s.in.cfg.MaxRate > 0 {
			s.paceLine()
		}
		rec, err := dec.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return &SourceError{Source: s.source, Line: s.lastLine, Err: err}
		}
		s.lastLine = rec.Line
		if err := s.take(ctx, rec); err != nil {
			return err
		}
	}
}

func (s *session) take(ctx context.Context, rec *reading.Record) error {
	if rec.Problem != "" {
		return s.reject(ctx, rec, RejectInvalid, rec.Problem)
	}
	r := &rec.Reading
	route := s.routes.Lookup(r.TurbineID)
	if route == nil {
		return s.reject(ctx, rec, RejectUnknownTurbine, fmt.Sprintf("unknown turbine %q", r.TurbineID))
	}
	now := s.in.now()
	if r.ReceivedAt.IsZero() {
		r.ReceivedAt = now
	}
	if reason, msg := s.in.check(route, r, now); msg != "" {
		return s.reject(ctx, rec, reason, msg)
	}
	lane, q := Live, liveQueue
	// check refused recorded_at more than the future limit ahead of
	// received_at, so -lag cannot overflow
	lag := r.ReceivedAt.Sub(r.RecordedAt)
	switch {
	case lag > route.Rules.LaneThreshold:
		lane, q = Backfill, backfillQueue
		s.backfill++
	case now.Sub(r.ReceivedAt) > route.Rules.LaneThreshold:
		// Live by its lag, but delivered long after it was received (a day
		// replayed with its own stamps): written as a replay, so it never
		// holds the live writer (the demo's story day did).
		q = lateLiveQueue
		s.live++
	default:
		s.live++
	}
	if -lag > route.Rules.EarlyTolerance {
		s.early++
		s.in.cfg.Observer.Early(1)
	}
	// Consecutive readings mostly go to the same shard (a farm's turbines
	// in a row): its slots are kept at hand.
	slots := s.lastSlots
	if route.Shard != s.lastShard || slots == nil {
		if slots = s.pending[route.Shard]; slots == nil {
			slots = &[queues]*batch{}
			s.pending[route.Shard] = slots
		}
		s.lastShard, s.lastSlots = route.Shard, slots
	}
	b := slots[q]
	if b == nil {
		size := s.in.cfg.BackfillBatch
		if q == liveQueue {
			size = s.in.cfg.LiveBatch
		}
		// Before admission (IngestAdmitted) a batch grows as rows come, so a
		// body still being read holds what it has, not a batch's capacity.
		c := size
		if s.admit != nil {
			c = min(size, initialBatchCap)
		}
		b = &batch{lane: lane, prompt: q == liveQueue, size: size, src: s.tr, rows: make([]row, 0, c), routes: make([]*Route, 0, c), lines: make([]int64, 0, c)}
		slots[q] = b
		switch q {
		case liveQueue:
			s.liveSince = now
		case lateLiveQueue:
			s.lateSince = now
		}
	}
	b.rows = append(b.rows, row{
		TurbineID: route.TurbineID, RecordedAt: r.RecordedAt, ReceivedAt: r.ReceivedAt,
		Available: r.Available, PowerKw: r.PowerKW, WindMs: r.WindMS, State: r.State,
	})
	b.routes = append(b.routes, route)
	b.lines = append(b.lines, rec.Line)
	if len(b.rows) == b.size {
		slots[q] = nil
		return s.submit(ctx, route.Shard, b)
	}
	if q == liveQueue && now.Sub(s.liveSince) >= s.in.cfg.FlushInterval {
		return s.flushQueue(ctx, liveQueue)
	}
	// A replay trickling in (a slow stdin) is stored as it comes too, not
	// held until a batch fills; a fast one fills its batches first.
	if q == lateLiveQueue && now.Sub(s.lateSince) >= s.in.cfg.FlushInterval {
		return s.flushQueue(ctx, lateLiveQueue)
	}
	return nil
}

// initialBatchCap is the capacity a batch starts with before admission;
// it grows to its size by append.
const initialBatchCap = 4096

// The queues a session fills per shard: live-lane readings delivered as
// they arrive go to the shard's live writer; the backfill lane, and
// live-lane readings delivered more than the lane threshold after their
// received_at, go to its backfill writer, which yields to live work.
const (
	liveQueue = iota
	backfillQueue
	lateLiveQueue
	queues
)

// hasWrites says a batch, a reject or the count of rejects not kept
// (its ingest_reject_summary row) is waiting to be written.
func (s *session) hasWrites() bool {
	if len(s.rejects) > 0 || s.notKept.lines > 0 {
		return true
	}
	for _, slots := range s.pending {
		for _, b := range slots {
			if b != nil {
				return true
			}
		}
	}
	return false
}

// enter asks for admission before the session's first write; after a
// refusal it keeps refusing.
func (s *session) enter() error {
	if s.refused != nil {
		return s.refused
	}
	if s.admit == nil {
		return nil
	}
	if err := s.admit(s.needs()); err != nil {
		s.refused = err
		return err
	}
	s.admit = nil
	return nil
}

// needs is the rows pending per shard and lane.
func (s *session) needs() []need {
	var out []need
	for shard, slots := range s.pending {
		var live, other int
		for q, b := range slots {
			if b == nil {
				continue
			}
			if q == liveQueue {
				live += len(b.rows)
			} else {
				other += len(b.rows)
			}
		}
		if live > 0 {
			out = append(out, need{shard: shard, prompt: true, rows: live})
		}
		if other > 0 {
			out = append(out, need{shard: shard, rows: other})
		}
	}
	slices.SortFunc(out, func(a, b need) int { return cmp.Compare(a.shard, b.shard) })
	return out
}

// check validates a routed reading; it returns the reason it is refused
// (msg is empty when it is not).
// Implausible clocks come first: a reading dated 1970 or 2099 must create
// nothing (no partition, mark or job), whatever else is wrong with it.
func (in *Ingestor) check(route *Route, r *reading.Reading, now time.Time) (reason RejectReason, msg string) {
	const ts = time.RFC3339Nano
	limit := route.Rules.FutureLimit
	if ahead := r.ReceivedAt.Sub(now); ahead > limit {
		return RejectFuture, fmt.Sprintf("received_at %s is %s ahead of the ingest clock %s (limit %s)", r.ReceivedAt.UTC().Format(ts), gap(r.ReceivedAt, now), now.UTC().Format(ts), limit)
	}
	if ahead := r.RecordedAt.Sub(r.ReceivedAt); ahead > limit {
		return RejectFuture, fmt.Sprintf("recorded_at %s is %s ahead of received_at %s (limit %s)", r.RecordedAt.UTC().Format(ts), gap(r.RecordedAt, r.ReceivedAt), r.ReceivedAt.UTC().Format(ts), limit)
	}
	if ahead := r.RecordedAt.Sub(now); ahead > limit {
		return RejectFuture, fmt.Sprintf("recorded_at %s is %s ahead of the ingest clock %s (limit %s)", r.RecordedAt.UTC().Format(ts), gap(r.RecordedAt, now), now.UTC().Format(ts), limit)
	}
	if maxAge := route.Rules.MaxAge; now.Sub(r.RecordedAt) > maxAge {
		return RejectTooOld, fmt.Sprintf("recorded_at %s is older than the maximum age of %d days (a clock that lost its time?)", r.RecordedAt.UTC().Format(ts), int(maxAge.Hours()/24))
	}
	if k := route.KeepFrom; k != nil && r.RecordedAt.Before(*k) {
		return RejectRetention, fmt.Sprintf("recorded_at %s is older than the retention: farm %s keeps readings from %s", r.RecordedAt.UTC().Format(ts), route.FarmID, k.UTC().Format(ts))
	}
	if d := route.DecommissionedAt; d != nil && !r.RecordedAt.Before(*d) {
		return RejectOutOfService, fmt.Sprintf("turbine %q was decommissioned at %s; recorded_at %s is not before it", route.TurbineID, d.UTC().Format(ts), r.RecordedAt.UTC().Format(ts))
	}
	if c := route.CommissionedAt; c != nil && r.RecordedAt.Before(*c) {
		return RejectOutOfService, fmt.Sprintf("turbine %q was commissioned at %s; recorded_at %s is before it (a turbine is in service from the fleet apply that added it: its --effective-from, or the fleet file's commissioned_at)", route.TurbineID, c.UTC().Format(ts), r.RecordedAt.UTC().Format(ts))
	}
	return plausible(route, r)
}

// plausible refuses a power or wind outside the farm's bounds (a
// controller's sentinel, 3.0e38 kW): every energy sum of a stored reading
// fits its type only within them (docs/dba.md, "Bounded sums").
func plausible(route *Route, r *reading.Reading) (RejectReason, string) {
	rules := &route.Rules
	if p := float64(r.PowerKW); p < float64(rules.PowerMinKW) || p > float64(rules.PowerMaxKW) {
		return RejectImplausible, fmt.Sprintf("power_kw: %s is outside farm %s's bounds, %d to %d kW (rules power_min_kw, power_max_kw)",
			strconv.FormatFloat(p, 'g', -1, 32), route.FarmID, rules.PowerMinKW, rules.PowerMaxKW)
	}
	if w := float64(r.WindMS); w < 0 || w > float64(rules.WindMaxMS) {
		return RejectImplausible, fmt.Sprintf("wind_ms: %s is outside farm %s's bounds, 0 to %d m/s (rule wind_max_ms)",
			strconv.FormatFloat(w, 'g', -1, 32), route.FarmID, rules.WindMaxMS)
	}
	return "", ""
}

// gap says how far later is ahead of earlier: as a Duration under a week
// (25h0m0s), else in days and years counted from Unix seconds, since
// time.Sub saturates at about 292 years (a 9999-12-31 reading).
func gap(later, earlier time.Time) string {
	if d := later.Sub(earlier); d < 7*24*time.Hour {
		return d.String()
	}
	secs := float64(later.Unix()-earlier.Unix()) + float64(later.Nanosecond()-earlier.Nanosecond())/1e9
	days := secs / 86400
	if days < 365 {
		return fmt.Sprintf("%.1f days", days)
	}
	return fmt.Sprintf("%.1f days (%.1f years)", days, days/365.2425)
}

func (s *session) flushQueue(ctx context.Context, q int) error {
	for shard, slots := range s.pending {
		if b := slots[q]; b != nil {
			slots[q] = nil
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
		for q, b := range slots {
			if b != nil {
				slots[q] = nil
				errs = append(errs, s.submit(ctx, shard, b))
			}
		}
	}
	return errors.Join(errs...)
}

// submit hands a full batch to its shard's writer, blocking while the
// lane's queue is full (that is the backpressure that bounds memory).
func (s *session) submit(ctx context.Context, shard string, b *batch) error {
	if err := s.enter(); err != nil {
		return err
	}
	w := s.in.writers[shard]
	s.tr.add()
	if w == nil {
		err := fmt.Errorf("shard %q of turbine %s is not open in this process (re-apply the fleet or restart)", shard, b.rows[0].TurbineID)
		s.tr.done(shard, b, batchResult{err: err})
		return nil
	}
	ch, q, n := w.backfill, w.queue(b.prompt), int64(len(b.rows))
	if b.prompt {
		// A live batch waits for room (the backfill lane's bound is its
		// channel): a body's rows after its first batch, a file's live lane.
		ch = w.live
		if _, err := q.waitRoom(ctx, n, w.queuedRows, nil); err != nil {
			s.tr.done(shard, b, batchResult{err: err})
			return err
		}
		b.queued = time.Now()
	}
	q.add(n)
	select {
	case ch <- b:
		return nil
	case <-ctx.Done():
		s.tr.done(shard, b, batchResult{err: ctx.Err()})
		q.done(n)
		return ctx.Err()
	}
}

// MaxRawBytes is how much of a rejected line is kept.
const MaxRawBytes = 4096

func (s *session) reject(ctx context.Context, rec *reading.Record, kind RejectReason, reason string) error {
	s.rejected++
	if len(s.samples) < MaxRejectSamples {
		s.samples = append(s.samples, RejectSample{Line: rec.Line, Reason: reason})
	}
	if s.kept >= s.keepRows {
		// Over fleet_rules.reject_rows_kept: counted, not stored (a body of
		// 2,000,000 bad lines was 353 MB of ingest_reject).
		n := &s.notKept
		if n.lines == 0 {
			n.first, n.byKind = rec.Line, map[RejectReason]int64{}
		}
		n.lines++
		n.last = rec.Line
		n.byKind[kind]++
		return nil
	}
	s.kept++
	raw, escaped, _ := reading.StorableText(rec.Raw, MaxRawBytes)
	k := string(kind)
	p := controldb.IngestRejectInsertParams{
		Source: s.storableSource(), Line: rec.Line, Raw: raw, RawEscaped: escaped, Reason: storable(reason), Kind: &k, RejectedAt: s.in.now(),
	}
	if escaped {
		p.RawBytes = bytes.Clone(rec.Raw[:min(len(rec.Raw), MaxRawBytes)])
	}
	if !rec.Truncated {
		n := int32(len(rec.Raw))
		p.RawLength = &n
	}
	s.rejects = append(s.rejects, p)
	s.reasons = append(s.reasons, kind)
	if len(s.rejects) >= 1000 {
		if err := s.enter(); err != nil {
			return err
		}
		s.flushRejects(ctx)
	}
	return nil
}

func (s *session) storableSource() string { return storable(s.source) }

// storable makes any text storable in a Postgres text column (a file name
// or a reason quoting bad bytes).
func storable(text string) string {
	out, _, _ := reading.StorableText([]byte(text), len(text))
	return out
}

// flushRejects stores the pending rejects. If the batch is refused, each
// row is tried alone, so a reject that really cannot be stored fails only
// itself; a reject that cannot be stored is counted as failed, with its
// line (the ingest does not succeed), and reading goes on: the good rows
// are still worth storing.
func (s *session) flushRejects(ctx context.Context) {
	if len(s.rejects) == 0 {
		return
	}
	q := controldb.New(s.in.control)
	_, err := q.IngestRejectInsert(ctx, s.rejects)
	switch {
	case err == nil:
		for _, r := range s.reasons {
			s.in.cfg.Observer.Rejected(r, 1)
		}
	case isDataError(err):
		// One row's data was refused: find it, store the rest.
		for i := range s.rejects {
			if _, rowErr := q.IngestRejectInsert(ctx, s.rejects[i:i+1]); rowErr != nil {
				s.rejectLost(s.rejects[i:i+1], rowErr)
			} else {
				s.in.cfg.Observer.Rejected(s.reasons[i], 1)
			}
		}
	default:
		// The database itself failed (down, timed out): every row of the
		// batch is lost, and trying them one by one would only wait longer.
		s.rejectLost(s.rejects, err)
	}
	s.rejects, s.reasons = s.rejects[:0], s.reasons[:0]
}

// storeNotKept writes the one ingest_reject_summary row of the rejected
// lines beyond the cap, if there were any. If it cannot be written, those
// lines are counted as failed (Ingest), as a reject that cannot be stored.
func (s *session) storeNotKept(ctx context.Context) {
	n := &s.notKept
	if n.lines == 0 {
		return
	}
	byKind := make(map[string]int64, len(n.byKind))
	for k, c := range n.byKind {
		byKind[string(k)] = c
	}
	counts, err := json.Marshal(byKind)
	if err == nil {
		err = controldb.New(s.in.control).IngestRejectSummaryInsert(ctx, controldb.IngestRejectSummaryInsertParams{
			Source: s.storableSource(), Kept: s.kept - int64(len(s.rejectsLost)), NotKept: n.lines, NotKeptByKind: counts,
			FirstLineNotKept: n.first, LastLineNotKept: n.last, RowsKeptLimit: int32(s.keepRows), RejectedAt: s.in.now(),
		})
	}
	if err != nil {
		s.in.cfg.Observer.RejectsLost(n.lines)
		if s.rejectErr == nil {
			s.rejectErr = fmt.Errorf("store the count of rejected line(s) of %s not kept: %w", s.source, err)
		}
		return
	}
	n.stored = true
	for k, c := range n.byKind {
		s.in.cfg.Observer.Rejected(k, c)
	}
}

// joinRanges sorts line ranges and joins those that overlap or touch.
func joinRanges(rs []LineRange) []LineRange {
	slices.SortFunc(rs, func(a, b LineRange) int { return cmp.Compare(a.From, b.From) })
	var out []LineRange
	for _, r := range rs {
		if n := len(out); n > 0 && r.From <= out[n-1].To+1 {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s *session) rejectLost(rows []controldb.IngestRejectInsertParams, err error) {
	for _, r := range rows {
		s.rejectsLost = append(s.rejectsLost, r.Line)
	}
	s.in.cfg.Observer.RejectsLost(int64(len(rows)))
	if s.rejectErr == nil {
		s.rejectErr = fmt.Errorf("store rejected line(s) of %s: %w", s.source, err)
	}
}

// isDataError says Postgres refused the data itself (SQLSTATE class 22 data
// exception, 23 integrity constraint, 54 program limit), not the connection
// or the server.
func isDataError(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) < 2 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23", "54":
		return true
	}
	return false
}
