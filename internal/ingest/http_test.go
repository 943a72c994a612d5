package ingest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
)

func post(t *testing.T, url, contentType string, body io.Reader) (int, map[string]any, http.Header) {
	t.Helper()
	resp, err := http.Post(url, contentType, body)
	testdb.Must(t, err, "POST")
	defer resp.Body.Close()
	var out map[string]any
	testdb.Must(t, json.NewDecoder(resp.Body).Decode(&out), "decode response")
	return resp.StatusCode, out, resp.Header
}

func TestHTTPIngest(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	h := ingest.NewHandler(b.in, 4096, 1)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	t.Run("SummaryKeys", func(t *testing.T) {
		body := line("T-001", tuesday, tuesday) + "\n" + `{"turbine_id":"AP-999","recorded_at":"2026-08-04T09:00:00Z","available":true,"power_kw":1,"wind_ms":1}` + "\n"
		code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body))
		if code != 200 {
			t.Fatalf("status %d %v, want 200", code, out)
		}
		want := map[string]float64{"accepted": 1, "duplicate": 0, "rejected": 1, "live": 1, "backfill": 0, "early": 0, "dirty_marks": 0}
		for k, v := range want {
			if got, ok := out[k].(float64); !ok || got != v {
				t.Fatalf("response[%q] = %v, want %v (response %v)", k, out[k], v, out)
			}
		}
	})

	t.Run("CSVByContentType", func(t *testing.T) {
		body := "turbine_id,recorded_at,available,power_kw,wind_ms\nT-002,2026-08-04T09:00:00Z,true,1,1\n"
		code, out, _ := post(t, srv.URL, "text/csv; charset=utf-8", strings.NewReader(body))
		if code != 200 || out["accepted"].(float64) != 1 {
			t.Fatalf("status %d %v, want 200 with 1 accepted", code, out)
		}
	})

	t.Run("OversizedBodyIs413", func(t *testing.T) {
		big := strings.Repeat(line("T-003", tuesday, tuesday)+"\n", 100) // ~14 KB > 4 KB
		code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(big))
		if code != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d %v, want 413", code, out)
		}
		if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-003'`); n != 0 {
			t.Fatalf("an oversized body with a declared length stored %d rows, want 0", n)
		}
	})
}

// TestFullPipelineIs503: with the only ingest slot taken by a body being
// written (held before its commit), the next body, read whole, waits for
// the slot (Handler.AdmitWait) and is stored once it is free (200); a body
// that waits longer than AdmitWait is refused with 503 and Retry-After,
// nothing of it stored; with AdmitWait zero it is refused at once.
func TestFullPipelineIs503(t *testing.T) {
	t.Parallel()
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	hooks := &ingest.Hooks{BeforeCommit: func(string, ingest.Lane) error {
		if first.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
		return nil
	}}
	b := setup(t, smallFleet, ingest.DefaultConfig(), hooks)
	h := ingest.NewHandler(b.in, 4096, 1)
	h.AdmitWait = hang
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	postAsync := func(body string) chan int {
		answer := make(chan int, 1)
		go func() {
			resp, err := http.Post(srv.URL, "application/x-ndjson", strings.NewReader(body))
			if err != nil {
				answer <- -1
				return
			}
			resp.Body.Close()
			answer <- resp.StatusCode
		}()
		return answer
	}
	firstAnswer := postAsync(line("T-004", tuesday, tuesday) + "\n")
	select {
	case <-held:
	case <-time.After(hang):
		t.Fatal("the first body never reached its commit")
	}
	waiter := postAsync(line("T-006", tuesday, tuesday) + "\n")
	for deadline := time.Now().Add(hang); h.Waiting() != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("the second body never waited for the slot: %d waiting, want 1", h.Waiting())
		}
		runtime.Gosched()
	}

	// Waiting past AdmitWait, or not at all, is a 503 with nothing stored.
	body := line("T-005", tuesday, tuesday) + "\n"
	for _, wait := range []time.Duration{0, 20 * time.Millisecond} {
		h.AdmitWait = wait
		code, out, hdr := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body))
		if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" {
			t.Fatalf("AdmitWait %v, the slot taken: status %d Retry-After %q %v, want 503 with Retry-After 1", wait, code, hdr.Get("Retry-After"), out)
		}
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-005'`); n != 0 {
		t.Fatalf("a refused body stored %d rows, want 0", n)
	}
	select {
	case c := <-waiter:
		t.Fatalf("the waiting body was answered %d while the slot was taken, want it still waiting", c)
	default:
	}
	close(release)
	released = true
	if c := <-firstAnswer; c != 200 {
		t.Fatalf("the first body finished with %d, want 200", c)
	}
	if c := <-waiter; c != 200 {
		t.Fatalf("the body that waited for the slot finished with %d, want 200", c)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-006'`); n != 1 {
		t.Fatalf("the body that waited stored %d rows, want 1", n)
	}
	if code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body)); code != http.StatusOK || out["accepted"] != 1.0 {
		t.Fatalf("with the slot free: status %d %v, want 200 with 1 accepted", code, out)
	}
}
