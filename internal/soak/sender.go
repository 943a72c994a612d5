package soak

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
)

// FarmWindow names one farm's window.
type FarmWindow struct {
	FarmID string
	Start  time.Time
}

// Sender is the live feed: every farm of the fleet posts, once a second,
// the readings its turbines took that second to serve's ingest endpoint,
// as one NDJSON body. Farms are spread over the second (farm k at k/n of
// it). A body or the lines of it that were not stored are sent again
// until they are acknowledged (at least once); each reading acknowledged
// is counted once, in its farm-window.
type Sender struct {
	// URL is serve's base URL (http://127.0.0.1:port).
	URL    string
	Fleet  *Fleet
	Client *http.Client
	// ClientFor, when set, gives farm k (its index in Fleet.Farms) its own
	// client: in the field each farm posts from its own gateway, and serve
	// shares its body readers out per remote address.
	ClientFor func(k int) *http.Client
	// From and To bound the seconds sent: [From, To), whole minutes.
	From, To time.Time
	// RequestTimeout bounds one request (default 60 s); MaxInFlight the
	// bodies not yet acknowledged at once (default 4,096, 100 s of the
	// whole fleet's bodies: past it the sender would fall behind its own
	// schedule, which the report's send delay shows).
	RequestTimeout time.Duration
	MaxInFlight    int

	mu     sync.Mutex
	acked  map[FarmWindow]*Count
	stats  SenderStats
	reqLat []time.Duration // every request, whatever its answer
	ackLat []time.Duration // a body's first send to its last line acknowledged
	delays []time.Duration // a body's first send after its second's due time
	// refused holds each 503's wait (its send to the answer) by its
	// error text with every run of digits as N.
	refused map[string][]time.Duration
	errs    []string
}

// SenderStats counts what the sender did.
type SenderStats struct {
	Bodies    int64 `json:"bodies"`
	Requests  int64 `json:"requests"`
	Resent    int64 `json:"resent_requests"`
	Readings  int64 `json:"readings"` // distinct readings acknowledged
	Accepted  int64 `json:"accepted"`
	Duplicate int64 `json:"duplicate"`
	// Status counts answers by HTTP status; TransportErrors counts
	// requests that got none (connection error, timeout).
	Status          map[int]int64 `json:"status"`
	TransportErrors int64         `json:"transport_errors"`
	LinesFailed     int64         `json:"lines_failed"` // lines named in failed_lines, re-sent
	// BodiesRefused counts the bodies answered 503 at least once (each
	// then sent again until acknowledged).
	BodiesRefused int64 `json:"bodies_refused"`
}

// Refusal is one reason live bodies were answered 503: the answer's error
// text with every run of digits as N, how many answers gave it, and how
// long the sender waited for each of them (its send to the 503).
type Refusal struct {
	Reason  string `json:"reason"`
	Answers int    `json:"answers"`
	Wait    Dist   `json:"wait"`
}

// Run sends every second in [From, To), each at its due time, and returns
// once every body is acknowledged, or ctx ends (then with ctx's error).
func (s *Sender) Run(ctx context.Context) error {
	s.acked = map[FarmWindow]*Count{}
	s.refused = map[string][]time.Duration{}
	s.stats.Status = map[int]int64{}
	timeout := s.RequestTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	limit := s.MaxInFlight
	if limit <= 0 {
		limit = 4096
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	n := len(s.Fleet.Farms)
	for k := range s.Fleet.Farms {
		farm := &s.Fleet.Farms[k]
		offset := time.Duration(k) * time.Second / time.Duration(n)
		client := s.Client
		if s.ClientFor != nil {
			client = s.ClientFor(k)
		}
		wg.Go(func() {
			var bodies sync.WaitGroup
			defer bodies.Wait()
			for sec := s.From.Unix(); sec < s.To.Unix(); sec++ {
				due := time.Unix(sec, 0).Add(offset)
				if d := time.Until(due); d > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(d):
					}
				}
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				delay := time.Since(due)
				bodies.Go(func() {
					defer func() { <-sem }()
					s.deliver(ctx, client, farm, sec, delay, timeout)
				})
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// deliver sends farm's second sec until every line is acknowledged.
func (s *Sender) deliver(ctx context.Context, client *http.Client, farm *Farm, sec int64, delay, timeout time.Duration) {
	var pending []int // turbine indexes not acknowledged yet
	for i := 1; i <= farm.Turbines(); i++ {
		if Reports(i, sec) {
			pending = append(pending, i)
		}
	}
	win := FarmWindow{FarmID: farm.ID, Start: farm.WindowStart(time.Unix(sec, 0).UTC())}
	first := time.Now()
	refused := false
	for attempt := 1; len(pending) > 0; attempt++ {
		if ctx.Err() != nil {
			return
		}
		// A fresh body each attempt: a body waiting to be sent again holds
		// only its turbine list, not its bytes.
		var body bytes.Buffer
		enc := reading.NewEncoder(reading.NDJSON, &body)
		for _, i := range pending {
			r := farm.Reading(i, sec)
			_ = enc.Encode(&r)
		}
		_ = enc.Flush()
		status, sum, lat, hint, err := s.post(ctx, client, body.Bytes(), timeout)
		acked, retryAfter, fatal := s.judge(pending, status, sum, err)
		if hint > 0 {
			retryAfter = hint
		}
		s.record(win, sec, attempt, status, sum, lat, err, acked, !refused)
		refused = refused || status == http.StatusServiceUnavailable
		if fatal != "" {
			s.fail("%s %s: %s", farm.ID, time.Unix(sec, 0).UTC().Format(time.RFC3339), fatal)
			return
		}
		if len(acked) == len(pending) {
			pending = nil
			break
		}
		pending = remove(pending, acked)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryAfter):
		}
	}
	s.mu.Lock()
	s.stats.Bodies++
	s.ackLat = append(s.ackLat, time.Since(first))
	s.delays = append(s.delays, delay)
	s.mu.Unlock()
}

// post sends one body and returns the answer's status, summary, latency
// and Retry-After.
func (s *Sender) post(ctx context.Context, client *http.Client, body []byte, timeout time.Duration) (int, *ingest.Summary, time.Duration, time.Duration, error) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, s.URL+"/v1/readings", bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	lat := time.Since(start)
	var retryAfter time.Duration
	if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
		retryAfter = time.Duration(n) * time.Second
	}
	if err != nil {
		return resp.StatusCode, nil, lat, retryAfter, err
	}
	var sum ingest.Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		return resp.StatusCode, nil, lat, retryAfter, fmt.Errorf("answer %d is not an ingest summary: %q", resp.StatusCode, truncate(raw, 200))
	}
	return resp.StatusCode, &sum, lat, retryAfter, nil
}

// judge says which of pending the answer acknowledges (indexes into the
// body's lines, 1-based line n is pending[n-1]), how long to wait before
// sending the rest, and whether the answer is one no re-send can fix.
func (s *Sender) judge(pending []int, status int, sum *ingest.Summary, err error) (acked []int, retryAfter time.Duration, fatal string) {
	switch {
	case err != nil || sum == nil:
		// No answer (or not one we can read): nothing is known stored;
		// send it all again (stored lines come back as duplicates).
		return nil, 500 * time.Millisecond, ""
	case status == http.StatusOK:
		if sum.Rejected != 0 || sum.Failed != 0 || sum.Accepted+sum.Duplicate != int64(len(pending)) {
			return nil, 0, fmt.Sprintf("200 with %d accepted, %d duplicate, %d rejected, %d failed for %d lines (%s)",
				sum.Accepted, sum.Duplicate, sum.Rejected, sum.Failed, len(pending), sum.Error)
		}
		return pending, 0, ""
	case status == http.StatusServiceUnavailable:
		if sum.Rejected != 0 {
			return nil, 0, fmt.Sprintf("503 with %d rejected lines (%s)", sum.Rejected, sum.Error)
		}
		failed := map[int64]bool{}
		for _, r := range sum.FailedLines {
			for l := r.From; l <= r.To; l++ {
				failed[l] = true
			}
		}
		if len(failed) == 0 {
			// The pipeline is full (admission): nothing was read.
			return nil, time.Second, ""
		}
		for n, i := range pending {
			if !failed[int64(n+1)] {
				acked = append(acked, i)
			}
		}
		return acked, time.Second, ""
	default:
		return nil, 0, fmt.Sprintf("answer %d: %s", status, sum.Error)
	}
}

// record counts one answer; firstRefusal says the body was not answered
// 503 before.
func (s *Sender) record(win FarmWindow, sec int64, attempt, status int, sum *ingest.Summary, lat time.Duration, err error, acked []int, firstRefusal bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Requests++
	if attempt > 1 {
		s.stats.Resent++
	}
	s.reqLat = append(s.reqLat, lat)
	if err != nil && status == 0 {
		s.stats.TransportErrors++
	} else {
		s.stats.Status[status]++
	}
	if status == http.StatusServiceUnavailable {
		if firstRefusal {
			s.stats.BodiesRefused++
		}
		reason := "(an answer that is not an ingest summary)"
		if sum != nil {
			reason = RefusalReason(sum.Error)
		}
		s.refused[reason] = append(s.refused[reason], lat)
	}
	if sum != nil {
		s.stats.Accepted += sum.Accepted
		s.stats.Duplicate += sum.Duplicate
		for _, r := range sum.FailedLines {
			s.stats.LinesFailed += r.To - r.From + 1
		}
	}
	if len(acked) == 0 {
		return
	}
	c := s.acked[win]
	if c == nil {
		c = &Count{}
		s.acked[win] = c
	}
	for _, i := range acked {
		c.Received++
		if Available(i, sec) {
			c.Available++
		}
	}
	s.stats.Readings += int64(len(acked))
}

func (s *Sender) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 20 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
}

// Acked is, per farm-window, the distinct readings acknowledged.
func (s *Sender) Acked() map[FarmWindow]Count {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[FarmWindow]Count, len(s.acked))
	for k, v := range s.acked {
		out[k] = *v
	}
	return out
}

// Stats is what the sender did so far.
func (s *Sender) Stats() SenderStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Status = map[int]int64{}
	for k, v := range s.stats.Status {
		st.Status[k] = v
	}
	return st
}

// Latencies returns every request's latency, every body's time from its
// first send to its acknowledgement, and every body's send delay after its
// due time.
func (s *Sender) Latencies() (requests, acks, delays []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.reqLat...), append([]time.Duration(nil), s.ackLat...), append([]time.Duration(nil), s.delays...)
}

// Refusals groups every 503 answer by its reason, most frequent first.
func (s *Sender) Refusals() []Refusal {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Refusal, 0, len(s.refused))
	for reason, waits := range s.refused {
		out = append(out, Refusal{Reason: reason, Answers: len(waits), Wait: Summarize(waits)})
	}
	slices.SortFunc(out, func(a, b Refusal) int {
		return cmp.Or(cmp.Compare(b.Answers, a.Answers), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

var digits = regexp.MustCompile(`[0-9]+`)

// RefusalReason is a 503's error text as the report groups it: every run
// of digits as N (a count or a time in the text does not make a reason of
// its own), "(no error text)" when there is none.
func RefusalReason(text string) string {
	if text == "" {
		return "(no error text)"
	}
	return digits.ReplaceAllString(text, "N")
}

// Errors lists answers no re-send could fix (a bug: the test fails).
func (s *Sender) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// remove returns pending without the acknowledged ones (both in order).
func remove(pending, acked []int) []int {
	out := pending[:0:0]
	j := 0
	for _, i := range pending {
		if j < len(acked) && acked[j] == i {
			j++
			continue
		}
		out = append(out, i)
	}
	return out
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
