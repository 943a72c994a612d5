package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galewatch/galewatch/internal/reading"
)

// Handler serves POST /v1/readings: an NDJSON (application/x-ndjson) or CSV
// (text/csv) body, answered with the ingest Summary as JSON.
//
// Admission is by the work waiting. A body is read and parsed without
// admission until it has a batch to write (its first full batch, or all of
// it when smaller); then, for each shard and lane it has rows for, it waits
// until they fit under Config.QueuedRows rows queued or being written for
// that lane (live bodies of a shard share their writes: one COPY and one
// commit for all that is queued), for up to AdmitWait: a body already read
// and parsed is written, not thrown away. Past AdmitWait it gets 503 with
// Retry-After, saying which shard's queue was full, and nothing is stored;
// a body never waits for a shard it has no rows for. Memory is bounded by
// the reading places: at most MaxBodies bodies are read or waiting for
// admission at once (each holding at most its first batch), and one remote
// address at most its share of them (AddressShareOf); beyond either a
// request gets the same 503 at once, before its body is read. A body read
// whole and admitted gives its place back while it waits for its write
// (its rows are counted in the queues). A body slower than MinRate is cut
// with 408.
type Handler struct {
	in      *Ingestor
	maxBody int64
	reading chan struct{}
	waiting atomic.Int64
	// perAddress is the reading places one address may hold; held counts
	// them per address (an address holding none has no entry).
	perAddress int
	mu         sync.Mutex
	held       map[string]int
	// RetryAfterSeconds is sent with 503 responses.
	RetryAfterSeconds int
	// AdmitWait is how long a body that has its first batch waits for room
	// in its shards' queues before it is answered 503 (zero: it does not wait).
	AdmitWait time.Duration
	// MinRate is the slowest body read (zero: no rule).
	MinRate MinRate
	// ReadTimeout bounds the whole body from the handler's start (0: none).
	// The rate rule moves the connection's read deadline, which replaces
	// the server's own ReadTimeout: serve passes it here.
	ReadTimeout time.Duration
}

// MinRate is the slowest a body may arrive: each Bytes of it within Per of
// the previous Bytes (the first Bytes within Per of the handler's start);
// the body's last, shorter, part needs only to end within Per. Below that a
// body is cut with 408 Request Timeout: the lines read whole before the cut
// are ingested as any body's are, the summary accounts for them, and its
// read_through names the last of them (re-send from the next line, or the
// whole body: stored rows count as duplicates).
type MinRate struct {
	Bytes int64
	Per   time.Duration
}

// DefaultMinRate is 1 KiB/s, measured in 10 s steps: each 10 KiB of a body
// must arrive within 10 s of the previous 10 KiB. A byte-a-second sender is
// cut 10 s after it starts; a 300-reading body (~40 KB) is allowed 40 s.
var DefaultMinRate = MinRate{Bytes: 10 << 10, Per: 10 * time.Second}

// DefaultMaxBodies is serve's --max-bodies: bodies read or waiting for
// admission at once.
const DefaultMaxBodies = 64

// AddressShareOf: one remote address holds at most 1/AddressShareOf of the
// reading places (16 of 64 at serve's default), so it takes four
// addresses to crowd out the rest.
const AddressShareOf = 4

// NewHandler returns the ingest endpoint over in: bodies up to maxBody
// bytes, maxBodies of them read or waiting at once, at DefaultMinRate or
// faster.
func NewHandler(in *Ingestor, maxBody int64, maxBodies int) *Handler {
	maxBodies = max(1, maxBodies)
	return &Handler{
		in: in, maxBody: maxBody,
		reading:           make(chan struct{}, maxBodies),
		perAddress:        max(1, maxBodies/AddressShareOf),
		held:              map[string]int{},
		RetryAfterSeconds: 1, MinRate: DefaultMinRate, AdmitWait: DefaultAdmitWait,
	}
}

// DefaultAdmitWait: a shard's queue drains in a write or two (tens of
// milliseconds to a second); five seconds rides out a burst, and a sender
// told 503 after that has a server that is really behind.
const DefaultAdmitWait = 5 * time.Second

// errFull is admission refused: no reading place is free.
var errFull = errors.New("ingest pipeline is full: retry later")

// errNoRoom: a lane's queue had no room for a body's rows within AdmitWait.
var errNoRoom = errors.New("no room in the shard's queue")

// QueueFullError is a body refused because a shard's queue stayed full:
// which shard and lane, the rows waiting there, the limit, how long the
// body waited.
type QueueFullError struct {
	Shard   string
	Lane    Lane
	Waiting int64
	Limit   int64
	Waited  time.Duration
}

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("shard %s's %s queue is full (rows waiting to be written: %d, limit %d; waited %s): retry later",
		e.Shard, e.Lane, e.Waiting, e.Limit, e.Waited.Round(time.Millisecond))
}

// admitFor waits until each shard lane needs names has room for its rows
// (Config.QueuedRows), up to AdmitWait in all; live work that waits
// signals the shard (live first).
func (h *Handler) admitFor(ctx context.Context, needs []need) error {
	start := time.Now()
	var deadline <-chan time.Time
	for _, n := range needs {
		w := h.in.writers[n.shard]
		if w == nil {
			continue // not open here: its batch fails, naming the shard
		}
		q, rows := w.queue(n.prompt), int64(n.rows)
		if waiting, _ := q.load(); fits(waiting, rows, w.queuedRows) {
			continue
		}
		if n.prompt {
			w.liveWaits()
		}
		if deadline == nil && h.AdmitWait > 0 {
			t := time.NewTimer(h.AdmitWait)
			defer t.Stop()
			deadline = t.C
		}
		var waiting int64
		err := errNoRoom
		if h.AdmitWait > 0 {
			h.waiting.Add(1)
			waiting, err = q.waitRoom(ctx, rows, w.queuedRows, deadline)
			h.waiting.Add(-1)
		}
		if err != nil {
			if waiting == 0 {
				waiting, _ = q.load()
			}
			lane := Backfill
			if n.prompt {
				lane = Live
			}
			return &QueueFullError{Shard: n.shard, Lane: lane, Waiting: waiting, Limit: w.queuedRows, Waited: time.Since(start)}
		}
	}
	return nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every body answered is counted once (metrics); one not ingested to
	// its end failed.
	outcome := BodyFailed
	defer func() { h.in.cfg.Observer.Body(outcome) }()
	addr := addressKey(r.RemoteAddr)
	if !h.hold(addr) {
		h.refuse(w, fmt.Sprintf("%d bodies from your address are already being read or waiting, its share of the ingest pipeline: retry later", h.perAddress))
		return
	}
	select {
	case h.reading <- struct{}{}:
	default:
		h.release(addr)
		h.full(w)
		return
	}
	// The reading place (and the address's share) is given back once the
	// body is read whole and admitted: from then on its rows are counted
	// in its shards' queues (Config.QueuedRows), and a body waiting for
	// its shared write holds nothing a sender could exhaust.
	var placeOnce sync.Once
	freePlace := func() { placeOnce.Do(func() { <-h.reading; h.release(addr) }) }
	defer freePlace()
	if r.ContentLength > h.maxBody {
		writeSummary(w, http.StatusRequestEntityTooLarge, Summary{Error: fmt.Sprintf("body of %d bytes is over the limit of %d bytes; split it", r.ContentLength, h.maxBody)})
		return
	}
	format, ok := bodyFormat(r.Header.Get("Content-Type"))
	if !ok {
		// An explicit type is required: a browser page can POST text/plain
		// (or no type at all) to a loopback server without a CORS preflight.
		writeSummary(w, http.StatusUnsupportedMediaType, Summary{Error: fmt.Sprintf("Content-Type %q: want application/x-ndjson or text/csv", r.Header.Get("Content-Type"))})
		return
	}
	var body io.ReadCloser = r.Body
	paced := h.paced(w, r.Body)
	if paced != nil {
		body = paced
	}
	body = http.MaxBytesReader(w, body, h.maxBody)
	dec, err := reading.NewDecoder(format, body)
	if err != nil {
		writeSummary(w, statusFor(err, http.StatusBadRequest), Summary{Error: err.Error()})
		return
	}
	admit := func(needs []need) error { return h.admitFor(r.Context(), needs) }
	// A failed read cancels the request's context (net/http
	// handleReadError): a client gone, or our own cut, after which the
	// lines read whole are still to be written, so that one is not passed on.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	defer context.AfterFunc(r.Context(), func() {
		if paced == nil || !paced.overdue(time.Now()) {
			cancel()
		}
	})()
	sum, err := h.in.ingestAdmitted(ctx, "http:"+r.RemoteAddr, dec, admit, freePlace)
	if qf := (*QueueFullError)(nil); errors.As(err, &qf) {
		h.refuse(w, qf.Error())
		return
	}
	outcome = bodyOutcome(sum, err)
	code := http.StatusOK
	switch {
	case err == nil:
	case sum.Failed > 0:
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", fmt.Sprint(h.RetryAfterSeconds))
	default:
		code = statusFor(err, http.StatusBadRequest)
	}
	if code == http.StatusRequestTimeout || code == http.StatusRequestEntityTooLarge {
		// The rest of the body was not read: the connection cannot carry
		// another request.
		w.Header().Set("Connection", "close")
	}
	if err != nil {
		// The details (which may name a database host or user) stay in
		// the server's log; the client gets what it can act on.
		slog.Warn("POST /v1/readings", "remote", r.RemoteAddr, "accepted", sum.Accepted, "failed", sum.Failed, "err", err)
		sum.Error = publicError(sum, err)
	}
	writeSummary(w, code, sum)
}

// Waiting is the number of bodies read up to their first batch and waiting
// for room in a shard's queue.
func (h *Handler) Waiting() int64 { return h.waiting.Load() }

// full answers 503: no reading place is free, nothing stored.
func (h *Handler) full(w http.ResponseWriter) { h.refuse(w, errFull.Error()) }

// refuse answers 503 with Retry-After, nothing stored. The connection is
// closed: net/http would otherwise read what is left of the body (a slow
// sender's, at its pace) before sending the answer.
func (h *Handler) refuse(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", fmt.Sprint(h.RetryAfterSeconds))
	w.Header().Set("Connection", "close")
	writeSummary(w, http.StatusServiceUnavailable, Summary{Error: msg})
}

// hold takes one of addr's reading places; false when it holds its share.
func (h *Handler) hold(addr string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[addr] >= h.perAddress {
		return false
	}
	h.held[addr]++
	return true
}

func (h *Handler) release(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[addr]--; h.held[addr] <= 0 {
		delete(h.held, addr)
	}
}

// addressKey is whom a request counts against: its connection's IP
// (RemoteAddr; X-Forwarded-For is not trusted), an IPv6 one by its /64,
// which one host commonly has whole.
func addressKey(remote string) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return remote
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

// paced applies MinRate to body through the connection's read deadline;
// nil without a rule, or on a connection that cannot move its deadline
// (the body is then read as it comes, the server's ReadTimeout bounding it).
func (h *Handler) paced(w http.ResponseWriter, body io.ReadCloser) *pacedBody {
	if h.MinRate.Bytes <= 0 || h.MinRate.Per <= 0 {
		return nil
	}
	p := &pacedBody{ReadCloser: body, rc: http.NewResponseController(w), rule: h.MinRate}
	start := time.Now()
	if h.ReadTimeout > 0 {
		p.limit = start.Add(h.ReadTimeout)
	}
	if !p.extend(start) {
		return nil
	}
	return p
}

// pacedBody cuts a body that falls below its MinRate: owed bytes must
// arrive by the connection's read deadline, which each completed step moves
// Per ahead (never past limit).
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	rule  MinRate
	limit time.Time // the whole body's bound; zero: none
	owed  int64
	// deadline is the read deadline set, in Unix nanoseconds (read by the
	// request context's AfterFunc, on another goroutine).
	deadline atomic.Int64
	done     bool // the body ended: the deadline is the server's again
}

// extend starts a new step at now; false when the deadline cannot be set.
func (p *pacedBody) extend(now time.Time) bool {
	p.owed = p.rule.Bytes
	dl := now.Add(p.rule.Per)
	if !p.limit.IsZero() && p.limit.Before(dl) {
		dl = p.limit
	}
	p.deadline.Store(dl.UnixNano())
	return p.rc.SetReadDeadline(dl) == nil
}

// overdue says the read deadline has passed at now: a read that failed
// then was cut by the rule.
func (p *pacedBody) overdue(now time.Time) bool {
	return now.UnixNano() >= p.deadline.Load()
}

func (p *pacedBody) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if p.done {
		return n, err
	}
	if err != nil {
		// At its end the server clears the deadline for its own background
		// read (net/http startBackgroundRead): it must not be moved again.
		p.done = true
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = &SlowBodyError{Rule: p.rule, Whole: !p.limit.IsZero() && !time.Now().Before(p.limit), Err: err}
		}
		return n, err
	}
	if p.owed -= int64(n); p.owed <= 0 {
		p.extend(time.Now())
	}
	return n, nil
}

// SlowBodyError is a body cut for arriving slower than its MinRate (or not
// within the handler's ReadTimeout, Whole).
type SlowBodyError struct {
	Rule  MinRate
	Whole bool
	Err   error
}

func (e *SlowBodyError) Error() string {
	if e.Whole {
		return "body not received within the read timeout"
	}
	return fmt.Sprintf("body slower than %d bytes per %s", e.Rule.Bytes, e.Rule.Per)
}

func (e *SlowBodyError) Unwrap() error { return e.Err }

// bodyFormat maps a request's Content-Type to a wire format. Only the two
// documented types are accepted (parameters such as charset are ignored).
func bodyFormat(contentType string) (reading.Format, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	switch mt {
	case "application/x-ndjson":
		return reading.NDJSON, true
	case "text/csv":
		return reading.CSV, true
	}
	return "", false
}

// publicError is what a client is told went wrong: its own input's faults
// in full, the server's own only as what to do about them.
func publicError(sum Summary, err error) string {
	var parts []string
	var src *SourceError
	var tooBig *http.MaxBytesError
	var slow *SlowBodyError
	switch {
	case errors.As(err, &tooBig) && errors.As(err, &src):
		parts = append(parts, fmt.Sprintf("body over the limit of %d bytes after line %d; the rest was not read: split it", tooBig.Limit, src.Line))
	case errors.As(err, &slow) && errors.As(err, &src):
		parts = append(parts, fmt.Sprintf("%s: cut after line %d (read_through); the rest was not read: re-send from line %d", slow, src.Line, src.Line+1))
	case errors.As(err, &src):
		parts = append(parts, fmt.Sprintf("reading the body failed after line %d; the rest was not read", src.Line))
	case errors.Is(err, ErrClosed):
		parts = append(parts, "the server is shutting down: retry")
	}
	if sum.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d line(s) could not be stored (failed_lines); re-send them, or the whole body (stored rows count as duplicates)", sum.Failed))
	}
	if len(parts) == 0 {
		return "ingest failed"
	}
	return strings.Join(parts, "; ")
}

func statusFor(err error, otherwise int) int {
	var tooBig *http.MaxBytesError
	var slow *SlowBodyError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &slow):
		return http.StatusRequestTimeout
	}
	return otherwise
}

func writeSummary(w http.ResponseWriter, code int, s Summary) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(s)
}
