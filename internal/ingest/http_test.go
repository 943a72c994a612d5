package ingest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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

	t.Run("FullPipelineIs503", func(t *testing.T) {
		// Occupy the only ingest slot with a body that is still arriving.
		pr, pw := io.Pipe()
		first := make(chan int, 1)
		go func() {
			resp, err := http.Post(srv.URL, "application/x-ndjson", pr)
			if err != nil {
				first <- -1
				return
			}
			resp.Body.Close()
			first <- resp.StatusCode
		}()
		_, err := pw.Write([]byte(line("T-004", tuesday, tuesday) + "\n"))
		testdb.Must(t, err, "start the slow body")
		// The slot is taken once the first line has been read by the handler;
		// poll with requests until the 503 shows (each is refused at once).
		var code int
		var hdr http.Header
		var out map[string]any
		for i := 0; i < 1000 && code != http.StatusServiceUnavailable; i++ {
			code, out, hdr = post(t, srv.URL, "application/x-ndjson", strings.NewReader(line("T-005", tuesday, tuesday)+"\n"))
		}
		if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") != "1" {
			t.Fatalf("with the slot taken: status %d Retry-After %q %v, want 503 with Retry-After 1", code, hdr.Get("Retry-After"), out)
		}
		pw.Close()
		if c := <-first; c != 200 {
			t.Fatalf("the slow request finished with %d, want 200", c)
		}
	})
}
