package ingest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/livefirst"
	"github.com/galewatch/galewatch/internal/partition"
)

// Lane separates fresh readings from replayed ones so the former never wait
// behind the latter.
type Lane int

// The two lanes.
const (
	Live Lane = iota
	Backfill
)

func (l Lane) String() string {
	if l == Backfill {
		return "backfill"
	}
	return "live"
}

// batch is a run of readings for one shard and lane, from one source.
type batch struct {
	lane Lane
	// prompt: live lane and delivered as it arrived, for the live writer;
	// anything else is the backfill writer's.
	prompt bool
	size   int // rows when full
	rows   []row
	routes []*Route // routes[i] is rows[i]'s turbine
	lines  []int64  // lines[i] is rows[i]'s line in its source
	src    *tracker
	// queued is when it was handed to the live writer (live first: a
	// batch that waited longer than livefirst.Behind means live is behind).
	queued time.Time
	// members are the batches a shared write holds (nil for a batch of
	// one source); owner[i] is the index in members of rows[i]'s batch.
	members []*batch
	owner   []int32
}

// batchResult is what one committed (or failed) batch did.
type batchResult struct {
	accepted, duplicate int64
	marks               []markKey
	err                 error
	// perMember splits a shared write's result by its members.
	perMember []batchResult
}

// shardWriter owns the writes to one shard: a live and a backfill goroutine
// with their own queues. The live goroutine writes what is queued for it
// in one transaction (a shared write, up to LiveBatch rows: many small
// bodies cost one COPY and one commit). Before taking a batch the backfill
// goroutine waits until no live row of this process is queued or being
// written, and until no process signals live pressure on the shard
// (internal/livefirst), so live work never queues behind a replay; a live
// batch arriving mid-replay runs concurrently on its own connection.
type shardWriter struct {
	name     string
	pool     *pgxpool.Pool
	control  *pgxpool.Pool // where marks are announced before they commit
	keeper   *partition.Keeper
	now      func() time.Time
	timeout  time.Duration
	live     chan *batch
	backfill chan *batch
	// liveRows and backfillRows count the rows handed to each goroutine
	// and not yet written: admission weighs them against queuedRows.
	liveRows, backfillRows *rowQueue
	queuedRows             int64
	// groupRows: a shared write takes queued live batches up to this many rows.
	groupRows int
	// signals is raised while live work waits (nil: this process does not
	// signal); yield: the backfill goroutine waits while any process does.
	signals *livefirst.Signals
	yield   bool
	// yielded is the time the backfill goroutine waited for live work.
	yielded atomic.Int64
	// dupMode: the last batch hit the key, so go straight to staging until
	// a batch comes through with no duplicate.
	dupMode atomic.Bool
	hooks   *Hooks
	// stale is told when a batch met a fenced turbine: the routes are
	// older than a move's switch (KeepRoutes reloads at once).
	stale chan<- struct{}
}

// Hooks let tests stop a writer at a precise point. Nil in production.
type Hooks struct {
	// BeforeCommit runs inside the write transaction after the rows and the
	// marks were written; an error rolls both back.
	BeforeCommit func(shard string, lane Lane) error
	// BeforeBackfillBatch runs before a backfill batch is written.
	BeforeBackfillBatch func(shard string)
	// Yielding runs when the backfill writer finds another process's live
	// work waiting on its shard, before it waits for it.
	Yielding func(shard string)
}

func newShardWriter(name string, pool, control *pgxpool.Pool, cfg Config, now func() time.Time, hooks *Hooks, stale chan<- struct{}) *shardWriter {
	w := &shardWriter{
		name: name, pool: pool, control: control, keeper: partition.NewKeeper(pool),
		now: now, timeout: cfg.TxTimeout, stale: stale,
		live: make(chan *batch, cfg.LiveQueue), backfill: make(chan *batch, cfg.BackfillQueue), hooks: hooks,
		liveRows: newRowQueue(), backfillRows: newRowQueue(), queuedRows: int64(cfg.QueuedRows), groupRows: cfg.LiveBatch,
		yield: !cfg.NoYield, signals: cfg.LiveSignals,
	}
	return w
}

// queue returns the row count of a lane's goroutine and its limit.
func (w *shardWriter) queue(prompt bool) *rowQueue {
	if prompt {
		return w.liveRows
	}
	return w.backfillRows
}

// liveWaits says live work on the shard waits (live first).
func (w *shardWriter) liveWaits() { w.signals.Raise(w.name) }

func (w *shardWriter) runLive(ctx context.Context) {
	for b := range w.live {
		group, rows := []*batch{b}, len(b.rows)
	more:
		for rows < w.groupRows {
			select {
			case next, ok := <-w.live:
				if !ok {
					break more
				}
				group = append(group, next)
				rows += len(next.rows)
			default:
				break more
			}
		}
		// More queued than one write takes, or the oldest waited long:
		// live is behind.
		if len(w.live) > 0 || time.Since(b.queued) > livefirst.Behind {
			w.liveWaits()
		}
		res := w.writeGroup(ctx, group)
		for i, m := range group {
			m.src.done(w.name, m, res[i])
		}
		w.liveRows.done(int64(rows))
	}
}

func (w *shardWriter) runBackfill(ctx context.Context) {
	for b := range w.backfill {
		w.waitForLive(ctx)
		if w.hooks != nil && w.hooks.BeforeBackfillBatch != nil {
			w.hooks.BeforeBackfillBatch(w.name)
		}
		b.src.done(w.name, b, w.write(ctx, b))
		w.backfillRows.done(int64(len(b.rows)))
	}
}

// waitForLive returns once no live row of this process is waiting for the
// shard and no process signals live pressure on it. A signal that cannot
// be read holds nothing back (the write then says what is wrong).
func (w *shardWriter) waitForLive(ctx context.Context) {
	w.liveRows.waitEmpty()
	if !w.yield || w.pool == nil {
		return
	}
	if held, err := livefirst.Held(ctx, w.pool); err != nil || !held {
		return
	}
	if w.hooks != nil && w.hooks.Yielding != nil {
		w.hooks.Yielding(w.name)
	}
	waited, _ := livefirst.Wait(ctx, w.pool)
	w.yielded.Add(int64(waited))
	w.liveRows.waitEmpty()
}

// writeGroup writes a live goroutine's batches: alone, one batch or after
// a duplicate (the staging path counts duplicates per batch); else in one
// shared transaction, each member's result its own rows'. A shared write
// refused for what one member holds (a duplicate of a stored row or of
// another member's, a fenced turbine, a value the server refused) is
// written again member by member, so that only that member's lines fail;
// one that timed out or lost its shard fails every member.
func (w *shardWriter) writeGroup(ctx context.Context, group []*batch) []batchResult {
	out := make([]batchResult, len(group))
	if len(group) > 1 && !w.dupMode.Load() {
		shared := share(group)
		res := w.write(ctx, shared)
		if res.err == nil {
			return res.perMember
		}
		if !memberFault(res.err) {
			for i := range out {
				out[i] = batchResult{err: res.err}
			}
			return out
		}
	}
	for i, b := range group {
		out[i] = w.write(ctx, b)
	}
	return out
}

// share joins batches into one shared write.
func share(group []*batch) *batch {
	n := 0
	for _, b := range group {
		n += len(b.rows)
	}
	s := &batch{lane: group[0].lane, prompt: true, size: n, members: group,
		rows: make([]row, 0, n), routes: make([]*Route, 0, n), lines: make([]int64, 0, n), owner: make([]int32, 0, n)}
	for i, b := range group {
		s.rows = append(s.rows, b.rows...)
		s.routes = append(s.routes, b.routes...)
		s.lines = append(s.lines, b.lines...)
		for range b.rows {
			s.owner = append(s.owner, int32(i))
		}
	}
	return s
}

// memberFault says a shared write failed for what a member holds: written
// member by member, the others go through.
func memberFault(err error) bool {
	var pgErr *pgconn.PgError
	var fe *fenceError
	return errors.Is(err, errSharedDuplicate) || errors.As(err, &fe) || (errors.As(err, &pgErr) && isDataError(err))
}

// errSharedDuplicate: a shared write met the key (a re-sent body, or two
// members holding the same reading); its members are written alone.
var errSharedDuplicate = errors.New("a shared write holds a reading already stored")

// write stores one batch exactly once and records its dirty marks in the
// same transaction.
func (w *shardWriter) write(ctx context.Context, b *batch) batchResult {
	// One bound for the whole batch, the partitions it needs included: a
	// shard that hangs fails the batch (its lines reported, to re-send)
	// within it, never holds the writer for ever.
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	res := w.writeOnce(ctx, b)
	if res.err != nil && connectionLost(res.err) && ctx.Err() == nil {
		// The shard's server dropped the connection: it restarted, and the
		// pool still held connections to the server that was. Those are
		// all dead: drop them and try the batch once more on a fresh one.
		// Safe whatever the first try did: rows it committed come back
		// as duplicates (the staging path), and are counted so.
		w.pool.Reset()
		res = w.writeOnce(ctx, b)
	}
	if res.err != nil {
		res.err = fmt.Errorf("shard %s: %w", w.name, res.err)
	}
	return res
}

func (w *shardWriter) writeOnce(ctx context.Context, b *batch) batchResult {
	if err := w.keeper.Ensure(ctx, batchDays(b.rows)); err != nil {
		return batchResult{err: err}
	}
	// The write time is taken before the transaction opens: the mark rule
	// needs a time no later than the commit minus the transaction's length.
	writeTime := w.now()
	// A shared write always tries COPY: its members' duplicates are
	// counted when each is written alone.
	if !w.dupMode.Load() || b.members != nil {
		res, err := w.copyBatch(ctx, b, writeTime)
		if err == nil {
			return res
		}
		if !isUniqueViolation(err) {
			return batchResult{err: err}
		}
		w.dupMode.Store(true)
		if b.members != nil {
			return batchResult{err: errSharedDuplicate}
		}
	}
	res, err := w.stageBatch(ctx, b, writeTime)
	if err != nil {
		return batchResult{err: err}
	}
	if res.duplicate == 0 {
		w.dupMode.Store(false)
	}
	return res
}

// connectionLost says err is the shard's connection failing (the server
// went away or restarted), not the server refusing a statement, the write
// bound, nor the control database failing an announcement.
func connectionLost(err error) bool {
	var pgErr *pgconn.PgError
	var ae *announceError
	var fe *fenceError
	if errors.As(err, &pgErr) || errors.As(err, &ae) || errors.As(err, &fe) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	return true
}

// announceError is the control database refusing or failing a batch's
// announcement: the batch is not stored (its lines fail, to re-send).
type announceError struct{ err error }

func (e *announceError) Error() string {
	return "announcing its marks to the control database: " + e.err.Error()
}
func (e *announceError) Unwrap() error { return e.err }

// copyBatch is the fast path: COPY straight into readings.
func (w *shardWriter) copyBatch(ctx context.Context, b *batch, writeTime time.Time) (batchResult, error) {
	var res batchResult
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		q := sharddb.New(tx)
		if err := w.setTimeout(ctx, q); err != nil {
			return err
		}
		n, err := tx.CopyFrom(ctx, readingsTable, readingsColumns, newCopySource(b.rows))
		if err != nil {
			return err
		}
		marks := newMarkSet(writeTime)
		var memberMarks []map[markKey]struct{}
		if b.members != nil {
			memberMarks = make([]map[markKey]struct{}, len(b.members))
		}
		for i := range b.rows {
			k, marked := marks.add(b.routes[i], b.rows[i].RecordedAt)
			if marked && memberMarks != nil {
				m := &memberMarks[b.owner[i]]
				if *m == nil {
					*m = map[markKey]struct{}{}
				}
				(*m)[k] = struct{}{}
			}
		}
		if res.marks, err = w.writeMarks(ctx, q, marks); err != nil {
			return err
		}
		res.accepted = n
		for i, m := range b.members {
			r := batchResult{accepted: int64(len(m.rows))}
			for k := range memberMarks[i] {
				r.marks = append(r.marks, k)
			}
			res.perMember = append(res.perMember, r)
		}
		if err := w.checkFence(ctx, q, b); err != nil {
			return err
		}
		return w.beforeCommit(b.lane)
	})
	return res, err
}

// stageBatch is the path for a batch that hit the key: stage it, insert
// what is new, and mark only what was inserted.
func (w *shardWriter) stageBatch(ctx context.Context, b *batch, writeTime time.Time) (batchResult, error) {
	var res batchResult
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		q := sharddb.New(tx)
		if err := w.setTimeout(ctx, q); err != nil {
			return err
		}
		if err := q.ReadingsStagingCreate(ctx); err != nil {
			return err
		}
		byID := make(map[string]*Route, 128)
		for i := range b.rows {
			byID[b.rows[i].TurbineID] = b.routes[i]
		}
		if _, err := tx.CopyFrom(ctx, stagingTable, readingsColumns, newCopySource(b.rows)); err != nil {
			return err
		}
		inserted, err := q.ReadingsInsertFromStaging(ctx)
		if err != nil {
			return err
		}
		marks := newMarkSet(writeTime)
		for _, r := range inserted {
			marks.add(byID[r.TurbineID], r.RecordedAt)
		}
		if res.marks, err = w.writeMarks(ctx, q, marks); err != nil {
			return err
		}
		res.accepted = int64(len(inserted))
		res.duplicate = int64(len(b.rows) - len(inserted))
		if err := w.checkFence(ctx, q, b); err != nil {
			return err
		}
		return w.beforeCommit(b.lane)
	})
	return res, err
}

// fenceError: the batch holds readings of a turbine that moved away from
// this shard (turbine_fence); the batch is not stored, its lines fail (to
// re-send, routed by the reloaded registry).
type fenceError struct{ turbine, movedTo string }

func (e *fenceError) Error() string {
	return fmt.Sprintf("turbine %s moved to shard %s: its readings are refused here; re-send them (routes reload now)", e.turbine, e.movedTo)
}

// checkFence fails the write if a turbine of the batch is fenced off this
// shard. Run after the rows, before the commit: a move that fences the
// shard meanwhile waits for this transaction to end, then copies what it
// wrote (internal/move).
func (w *shardWriter) checkFence(ctx context.Context, q *sharddb.Queries, b *batch) error {
	fences, err := q.TurbineFenceList(ctx)
	if err != nil || len(fences) == 0 {
		return err
	}
	moved := make(map[string]string, len(fences))
	for _, f := range fences {
		moved[f.TurbineID] = f.MovedTo
	}
	for i := range b.rows {
		if to, ok := moved[b.rows[i].TurbineID]; ok {
			select {
			case w.stale <- struct{}{}:
			default:
			}
			return &fenceError{turbine: b.rows[i].TurbineID, movedTo: to}
		}
	}
	return nil
}

func (w *shardWriter) setTimeout(ctx context.Context, q *sharddb.Queries) error {
	return q.WriteTimeoutSet(ctx, strconv.FormatInt(w.timeout.Milliseconds(), 10))
}

func (w *shardWriter) writeMarks(ctx context.Context, q *sharddb.Queries, marks *markSet) ([]markKey, error) {
	params := marks.params()
	keys := make([]markKey, 0, len(params))
	for _, p := range params {
		if err := q.DirtyMarkUpsert(ctx, p); err != nil {
			return nil, fmt.Errorf("dirty mark %s/%s: %w", p.FarmID, p.Day.Format(time.DateOnly), err)
		}
		keys = append(keys, markKey{farm: p.FarmID, day: p.Day})
	}
	for _, p := range marks.windowParams() {
		if err := q.DirtyWindowInsert(ctx, p); err != nil {
			return nil, fmt.Errorf("dirty windows of %s: %w", p.FarmID, err)
		}
	}
	if len(params) > 0 {
		if err := w.announce(ctx, q, marks.writeTime, params); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// announce records on the control database, before the marks commit, that
// this transaction marks these farm-days (dirty_mark_announced): until the
// shard's drain has read them, the days are not final. A mark that cannot
// be announced is not committed, so a report never misses one.
func (w *shardWriter) announce(ctx context.Context, q *sharddb.Queries, writeTime time.Time, params []sharddb.DirtyMarkUpsertParams) error {
	xact, err := q.DirtyMarkXact(ctx)
	if err != nil {
		return err
	}
	arg := controldb.DirtyMarkAnnounceParams{ShardName: w.name, Xact: xact, MarkedAt: writeTime}
	for _, p := range params {
		arg.FarmIds = append(arg.FarmIds, p.FarmID)
		arg.Days = append(arg.Days, p.Day)
	}
	cq := controldb.New(w.control)
	err = cq.DirtyMarkAnnounce(ctx, arg)
	var pgErr *pgconn.PgError
	if err != nil && !errors.As(err, &pgErr) && ctx.Err() == nil {
		// A pooled connection the control server dropped (a restart): once
		// more on a fresh one; the insert is idempotent.
		err = cq.DirtyMarkAnnounce(ctx, arg)
	}
	if err != nil {
		return &announceError{err: err}
	}
	return nil
}

func (w *shardWriter) beforeCommit(lane Lane) error {
	if w.hooks != nil && w.hooks.BeforeCommit != nil {
		return w.hooks.BeforeCommit(w.name, lane)
	}
	return nil
}

func batchDays(rows []row) []time.Time {
	var days []time.Time
	var last time.Time
	for i := range rows {
		d := partition.Day(rows[i].RecordedAt)
		if d.Equal(last) {
			continue
		}
		last = d
		seen := false
		for _, x := range days {
			if x.Equal(d) {
				seen = true
				break
			}
		}
		if !seen {
			days = append(days, d)
		}
	}
	return days
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
