package ingest_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// fromAddress is a client whose connections come from ip (on Linux every
// 127.x.y.z is the loopback's).
func fromAddress(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestOneAddressCannotHoldTheReaders: at serve's default --max-bodies of 64
// (64 bodies read or waiting at once), 70 uploads from 127.0.0.2, each
// sending a line and then a byte a second, hold 16 reading places (their
// address's share): the other 54 are answered 503 with Retry-After at
// once, nothing read, and so is a normal body from 127.0.0.2. A normal body
// from 127.0.0.1 meanwhile is answered 200 and stored. Once ended, the 16
// are stored (2 readings each).
func TestOneAddressCannotHoldTheReaders(t *testing.T) {
	t.Parallel()
	const uploads, share = 70, 16
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	h := ingest.NewHandler(b.in, 1<<20, 64)
	// No rate rule: the uploads stay open however loaded the machine is
	// (cutting them is TestSlowBodyIsCut's).
	h.MinRate = ingest.MinRate{}
	reading := make(chan struct{}, uploads)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Slow") != "" {
			r.Body = &firstRead{ReadCloser: r.Body, signal: reading}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	greedy, other := fromAddress("127.0.0.2"), fromAddress("127.0.0.1")
	at := tuesday.Add(-time.Second)

	type answer struct {
		i int
		postAnswer
	}
	answers := make(chan answer, uploads)
	slow := make([]*slowUpload, uploads)
	for i := range slow {
		id, rec := fmt.Sprintf("T-%03d", i%10+1), at.Add(-time.Duration(i/10)*4*time.Second)
		slow[i] = startSlowUpload(greedy, srv.URL, line(id, rec, tuesday)+"\n", line(id, rec.Add(-2*time.Second), tuesday)+"\n", http.Header{"X-Slow": {"1"}})
		go func() { answers <- answer{i, <-slow[i].answer} }()
	}
	t.Cleanup(func() {
		for _, u := range slow {
			u.finish()
		}
	})

	// Every upload is either being read or answered; more than its share
	// being read fails at once.
	var read int
	refused := map[int]bool{}
	for deadline := time.After(hang); read+len(refused) < uploads && read <= share; {
		select {
		case <-reading:
			read++
		case a := <-answers:
			if a.err != nil || a.code != http.StatusServiceUnavailable || a.hdr.Get("Retry-After") != "1" || !strings.Contains(fmt.Sprint(a.out["error"]), "your address") {
				t.Fatalf("upload %d answered %d (Retry-After %q) %v %v while the uploads were open, want 503 with Retry-After 1 naming the address's share", a.i+1, a.code, a.hdr.Get("Retry-After"), a.out, a.err)
			}
			refused[a.i] = true
		case <-deadline:
			t.Fatalf("%d uploads from one address being read and %d answered, want %d and %d", read, len(refused), share, uploads-share)
		}
	}
	if read != share || len(refused) != uploads-share {
		t.Fatalf("%d uploads from one address being read and %d answered 503, want %d and %d", read, len(refused), share, uploads-share)
	}

	body := func(id string) *strings.Reader { return strings.NewReader(line(id, at, tuesday) + "\n") }
	a := do(other, postRequest(t, srv.URL, body("U-001")))
	if a.err != nil || a.code != http.StatusOK || a.out["accepted"] != 1.0 {
		t.Fatalf("a normal body from another address beside the %d uploads: %d %v %v, want 200 with 1 accepted", uploads, a.code, a.out, a.err)
	}
	if n := b.count(t, "s2", `SELECT count(*) FROM readings WHERE turbine_id = 'U-001'`); n != 1 {
		t.Fatalf("the normal body's reading: %d stored, want 1", n)
	}
	a = do(greedy, postRequest(t, srv.URL, body("U-002")))
	if a.err != nil || a.code != http.StatusServiceUnavailable || a.hdr.Get("Retry-After") != "1" {
		t.Fatalf("a normal body from the uploads' address: %d (Retry-After %q) %v %v, want 503 with Retry-After 1", a.code, a.hdr.Get("Retry-After"), a.out, a.err)
	}
	if n := b.count(t, "s2", `SELECT count(*) FROM readings WHERE turbine_id = 'U-002'`); n != 0 {
		t.Fatalf("the refused body's reading: %d stored, want 0", n)
	}

	for i, u := range slow {
		if refused[i] {
			continue
		}
		u.finish()
		select {
		case a := <-answers:
			if a.err != nil || a.code != http.StatusOK || a.out["accepted"] != 2.0 {
				t.Fatalf("upload %d once ended: %d %v %v, want 200 with 2 accepted", a.i+1, a.code, a.out, a.err)
			}
		case <-time.After(hang):
			t.Fatalf("upload %d not answered once ended", i+1)
		}
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`); n != 2*share {
		t.Fatalf("the uploads' readings: %d stored, want %d", n, 2*share)
	}
}

func postRequest(t *testing.T, url string, body *strings.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	testdb.Must(t, err, "request")
	req.Header.Set("Content-Type", "application/x-ndjson")
	return req
}
