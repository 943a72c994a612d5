package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

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
	format := reading.NDJSON
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err == nil {
			format, err = reading.ParseFormat(mt)
		}
		if err != nil {
			writeSummary(w, http.StatusUnsupportedMediaType, Summary{Error: fmt.Sprintf("Content-Type %q: want application/x-ndjson or text/csv", ct)})
			return
		}
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
	writeSummary(w, code, sum)
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
