package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/galewatch/galewatch/internal/reading"
)

// Handler serves POST /v1/readings: an NDJSON (application/x-ndjson) or CSV
// (text/csv) body, answered with the ingest Summary as JSON.
//
// Memory is bounded by admission: at most MaxConcurrent bodies are ingested
// at once (each streams through the bounded shard queues); a request that
// finds every slot taken gets 503 with Retry-After instead of waiting in an
// unbounded line.
type Handler struct {
	in      *Ingestor
	maxBody int64
	slots   chan struct{}
	// RetryAfterSeconds is sent with 503 responses.
	RetryAfterSeconds int
}

// NewHandler returns the ingest endpoint over in.
func NewHandler(in *Ingestor, maxBody int64, maxConcurrent int) *Handler {
	return &Handler{in: in, maxBody: maxBody, slots: make(chan struct{}, maxConcurrent), RetryAfterSeconds: 1}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", fmt.Sprint(h.RetryAfterSeconds))
		writeSummary(w, http.StatusServiceUnavailable, Summary{Error: "ingest pipeline is full: retry later"})
		return
	}
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
	body := http.MaxBytesReader(w, r.Body, h.maxBody)
	dec, err := reading.NewDecoder(format, body)
	if err != nil {
		writeSummary(w, statusFor(err, http.StatusBadRequest), Summary{Error: err.Error()})
		return
	}
	sum, err := h.in.Ingest(r.Context(), "http:"+r.RemoteAddr, dec)
	code := http.StatusOK
	switch {
	case err == nil:
	case sum.Failed > 0:
		code = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", fmt.Sprint(h.RetryAfterSeconds))
	default:
		code = statusFor(err, http.StatusBadRequest)
	}
	if err != nil {
		// The details (which may name a database host or user) stay in
		// the server's log; the client gets what it can act on.
		slog.Warn("POST /v1/readings", "remote", r.RemoteAddr, "accepted", sum.Accepted, "failed", sum.Failed, "err", err)
		sum.Error = publicError(sum, err)
	}
	writeSummary(w, code, sum)
}

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
	switch {
	case errors.As(err, &tooBig) && errors.As(err, &src):
		parts = append(parts, fmt.Sprintf("body over the limit of %d bytes after line %d; the rest was not read: split it", tooBig.Limit, src.Line))
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
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return otherwise
}

func writeSummary(w http.ResponseWriter, code int, s Summary) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(s)
}
