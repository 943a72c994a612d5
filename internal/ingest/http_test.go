package ingest_test

import (
	"encoding/json"
	"fmt"
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

// postAsync posts an NDJSON body on its own goroutine; its status comes on
// the channel (-1: no answer).
func postAsync(url, body string) <-chan int {
	answer := make(chan int, 1)
	go func() {
		resp, err := http.Post(url, "application/x-ndjson", strings.NewReader(body))
		if err != nil {
			answer <- -1
			return
		}
		resp.Body.Close()
		answer <- resp.StatusCode
	}()
	return answer
}

func TestHTTPIngest(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	h := ingest.NewHandler(b.in, 4096, 16)
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

// TestFullPipelineIs503: admission is by the rows waiting for a shard.
// With room for one live row on s1 (QueuedRows 1), taken by a body being
// written (held before its commit), the next s1 body, read whole, waits for
// room (Handler.AdmitWait) and is stored once there is (200); a body that
// waits longer than AdmitWait is refused with 503 and Retry-After, saying
// which shard's queue was full, nothing of it stored; with AdmitWait zero
// it is refused at once. A body for s2 alone does not wait for s1 (200
// while s1 is held).
func TestFullPipelineIs503(t *testing.T) {
	t.Parallel()
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	hooks := &ingest.Hooks{BeforeCommit: func(shard string, _ ingest.Lane) error {
		if shard == "s1" && first.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
		return nil
	}}
	cfg := ingest.DefaultConfig()
	cfg.QueuedRows = 1
	b := setup(t, smallFleet, cfg, hooks)
	h := ingest.NewHandler(b.in, 4096, 16)
	h.AdmitWait = hang
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	postAsync := func(body string) <-chan int { return postAsync(srv.URL, body) }
	firstAnswer := postAsync(line("T-004", tuesday, tuesday) + "\n")
	select {
	case <-held:
	case <-time.After(hang):
		t.Fatal("the first body never reached its commit")
	}
	waiter := postAsync(line("T-006", tuesday, tuesday) + "\n")
	for deadline := time.Now().Add(hang); h.Waiting() != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("the second body never waited for room: %d waiting, want 1", h.Waiting())
		}
		runtime.Gosched()
	}
	// s2 has room: its body does not wait behind s1's.
	if code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(line("U-001", tuesday, tuesday)+"\n")); code != http.StatusOK || out["accepted"] != 1.0 {
		t.Fatalf("a body for s2 while s1's queue is full: status %d %v, want 200 with 1 accepted", code, out)
	}

	// Waiting past AdmitWait, or not at all, is a 503 with nothing stored.
	body := line("T-005", tuesday, tuesday) + "\n"
	for _, wait := range []time.Duration{0, 20 * time.Millisecond} {
		h.AdmitWait = wait
		code, out, hdr := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body))
		want := "shard s1's live queue is full (rows waiting to be written: 1, limit 1;"
		if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" || !strings.HasPrefix(fmt.Sprint(out["error"]), want) {
			t.Fatalf("AdmitWait %v, s1's queue full: status %d Retry-After %q %v, want 503 with Retry-After 1 and an error starting %q", wait, code, hdr.Get("Retry-After"), out, want)
		}
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-005'`); n != 0 {
		t.Fatalf("a refused body stored %d rows, want 0", n)
	}
	select {
	case c := <-waiter:
		t.Fatalf("the waiting body was answered %d while s1's queue was full, want it still waiting", c)
	default:
	}
	close(release)
	released = true
	if c := <-firstAnswer; c != 200 {
		t.Fatalf("the first body finished with %d, want 200", c)
	}
	if c := <-waiter; c != 200 {
		t.Fatalf("the body that waited for room finished with %d, want 200", c)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-006'`); n != 1 {
		t.Fatalf("the body that waited stored %d rows, want 1", n)
	}
	if code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body)); code != http.StatusOK || out["accepted"] != 1.0 {
		t.Fatalf("with room on s1: status %d %v, want 200 with 1 accepted", code, out)
	}
}
