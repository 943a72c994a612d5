package ingest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
)

// TestSlowBodyIsCut: a body that falls below the
// handler's MinRate (here 64 bytes a second, small enough to cut it in
// about a second) is cut with 408: its two lines read whole are stored and
// accounted for, read_through names the last of them, and the third line,
// arriving a byte a second, is not stored.
func TestSlowBodyIsCut(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	h := ingest.NewHandler(b.in, 1<<20, 64)
	h.MinRate = ingest.MinRate{Bytes: 64, Per: time.Second}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	at := tuesday.Add(-time.Second)
	first := line("T-001", at, tuesday) + "\n" + line("T-002", at, tuesday) + "\n"
	u := startSlowUpload(http.DefaultClient, srv.URL, first, line("T-003", at, tuesday)+"\n", http.Header{})
	t.Cleanup(u.finish)

	var a postAnswer
	select {
	case a = <-u.answer:
	case <-time.After(hang):
		t.Fatal("a body arriving a byte a second was not cut")
	}
	if a.err != nil || a.code != http.StatusRequestTimeout || !a.close {
		t.Fatalf("slow body: %d %v %v (connection closed: %v), want 408 and Connection: close", a.code, a.out, a.err, a.close)
	}
	if a.out["accepted"] != 2.0 || a.out["read_through"] != 2.0 || !strings.Contains(a.out["error"].(string), "re-send from line 3") {
		t.Fatalf("slow body's summary %v: want 2 accepted, read_through 2, and to re-send from line 3", a.out)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`); n != 2 {
		t.Fatalf("%d readings stored, want the 2 lines read whole before the cut", n)
	}
}
