package ingest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
)

// hang bounds a wait that only a hang exceeds (each of these waits takes
// milliseconds).
const hang = 30 * time.Second

// firstRead signals once, when the handler first reads the body.
type firstRead struct {
	io.ReadCloser
	signal chan<- struct{}
	done   bool
}

func (f *firstRead) Read(p []byte) (int, error) {
	if !f.done {
		f.done = true
		f.signal <- struct{}{}
	}
	return f.ReadCloser.Read(p)
}

// slowUpload is a POST (by client) whose body is one line whole, then the
// next a byte a second until finish sends the rest (once, however often
// it is called).
type slowUpload struct {
	answer chan postAnswer
	finish func()
}

type postAnswer struct {
	code int
	out  map[string]any
	hdr  http.Header
	// close: the server said Connection: close (net/http moves it here)
	close bool
	err   error
}

func startSlowUpload(client *http.Client, url, first, second string, header http.Header) *slowUpload {
	pr, pw := io.Pipe()
	u := &slowUpload{answer: make(chan postAnswer, 1)}
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, pr)
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/x-ndjson")
		u.answer <- do(client, req)
	}()
	stop, sent := make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		if _, err := pw.Write([]byte(first)); err != nil {
			sent <- n
			return
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				sent <- n
				return
			case <-tick.C:
				if n < len(second)-1 {
					if _, err := pw.Write([]byte{second[n]}); err != nil {
						sent <- n
						return
					}
					n++
				}
			}
		}
	}()
	u.finish = sync.OnceFunc(func() {
		close(stop)
		n := <-sent
		_, _ = pw.Write([]byte(second[n:]))
		_ = pw.Close()
	})
	return u
}

func do(client *http.Client, req *http.Request) postAnswer {
	resp, err := client.Do(req)
	if err != nil {
		return postAnswer{err: err}
	}
	defer resp.Body.Close()
	a := postAnswer{code: resp.StatusCode, hdr: resp.Header, close: resp.Close}
	a.err = json.NewDecoder(resp.Body).Decode(&a.out)
	return a
}

// TestSlowSendersDoNotHoldIngest: four uploads sending a
// byte a second, each being read by the handler, at serve's default
// --max-bodies of 64, do not delay a normal POST: it is answered 200 and its
// readings are stored while all four are still open (none answered yet).
// Then the four end, and are stored too.
func TestSlowSendersDoNotHoldIngest(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	h := ingest.NewHandler(b.in, 1<<20, 64)
	reading := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Slow") != "" {
			r.Body = &firstRead{ReadCloser: r.Body, signal: reading}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	at := tuesday.Add(-time.Second)

	slow := make([]*slowUpload, 4)
	for i := range slow {
		id := fmt.Sprintf("T-%03d", i+1)
		slow[i] = startSlowUpload(http.DefaultClient, srv.URL, line(id, at, tuesday)+"\n", line(id, at.Add(-2*time.Second), tuesday)+"\n", http.Header{"X-Slow": {"1"}})
	}
	t.Cleanup(func() {
		for _, u := range slow {
			if u.finish != nil {
				u.finish()
			}
		}
	})
	for range slow {
		select {
		case <-reading:
		case <-time.After(hang):
			t.Fatal("the four slow uploads were not all being read")
		}
	}

	body := line("T-007", at, tuesday) + "\n" + line("T-008", at, tuesday) + "\n" + line("T-009", at, tuesday) + "\n"
	code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body))
	if code != http.StatusOK || out["accepted"] != 3.0 {
		t.Fatalf("normal POST beside four slow uploads: status %d %v, want 200 with 3 accepted", code, out)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id IN ('T-007', 'T-008', 'T-009')`); n != 3 {
		t.Fatalf("the normal POST's readings: %d stored, want 3", n)
	}
	for i, u := range slow {
		select {
		case a := <-u.answer:
			t.Fatalf("slow upload %d was answered (%d %v %v) before the normal POST's check: want it still open", i+1, a.code, a.out, a.err)
		default:
		}
	}

	for i, u := range slow {
		u.finish()
		slow[i].finish = nil
		select {
		case a := <-u.answer:
			if a.err != nil || a.code != http.StatusOK || a.out["accepted"] != 2.0 {
				t.Fatalf("slow upload %d once ended: %d %v %v, want 200 with 2 accepted", i+1, a.code, a.out, a.err)
			}
		case <-time.After(hang):
			t.Fatalf("slow upload %d not answered once ended", i+1)
		}
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id IN ('T-001', 'T-002', 'T-003', 'T-004')`); n != 8 {
		t.Fatalf("the slow uploads' readings: %d stored, want 8", n)
	}
}
