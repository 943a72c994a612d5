package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestRejectsWhateverTheirBytes: lines Postgres cannot hold as text (invalid
// UTF-8, a NUL byte, a line cut at 4 KiB in the middle of a 3-byte
// character) are each stored as a reject with their line number and reason;
// the good lines around them are stored; nothing fails.
func TestRejectsWhateverTheirBytes(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	at := tuesday.Add(-30 * time.Second)
	// A 3-byte € at bytes 4094-4096: a 4 KiB cut would split it.
	prefix := `{"turbine_id":"T-002","note":"`
	long := prefix + strings.Repeat("a", 4094-len(prefix)) + "€" + strings.Repeat("b", 100) + `"}`
	bad := []string{
		"\xff\xfe\x00 not a reading",
		`{"turbine_id":"T-00` + "\x00" + `2","recorded_at":"2026-08-04T08:59:30Z","available":true,"power_kw":1,"wind_ms":1}`,
		`{"turbine_id":"T-` + "\xc3\x28" + `","recorded_at":"2026-08-04T08:59:30Z","available":true,"power_kw":1,"wind_ms":1}`,
		long,
	}
	var body bytes.Buffer
	body.WriteString(line("T-001", at, tuesday) + "\n")
	for _, l := range bad {
		body.WriteString(l + "\n")
	}
	body.WriteString(line("T-003", at, tuesday) + "\n")
	dec, err := reading.NewDecoder(reading.NDJSON, &body)
	testdb.Must(t, err, "decoder")
	sum, err := b.in.Ingest(context.Background(), "bad\xffname.ndjson", dec)
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 2 || sum.Rejected != 4 || sum.Failed != 0 || len(sum.FailedLines) != 0 {
		t.Fatalf("summary %+v, want 2 accepted, 4 rejected, 0 failed", sum)
	}
	if len(sum.Rejects) != 4 || sum.Rejects[0].Line != 2 || sum.Rejects[3].Line != 5 {
		t.Fatalf("summary rejects %+v, want lines 2..5 with reasons", sum.Rejects)
	}
	rows, err := b.env.Control.Query(context.Background(),
		`SELECT line, raw, raw_escaped, raw_bytes, raw_length, reason, source FROM ingest_reject ORDER BY line`)
	testdb.Must(t, err, "rejects")
	defer rows.Close()
	i := 0
	for rows.Next() {
		var lineNo int64
		var raw, reason, source string
		var escaped bool
		var rawBytes []byte
		var length *int32
		testdb.Must(t, rows.Scan(&lineNo, &raw, &escaped, &rawBytes, &length, &reason, &source), "scan")
		orig := []byte(bad[i])
		if lineNo != int64(i+2) || reason == "" || !utf8.ValidString(raw) || strings.ContainsRune(raw, 0) {
			t.Fatalf("reject %d: line %d raw %q reason %q", i, lineNo, raw, reason)
		}
		if length == nil || int(*length) != len(orig) {
			t.Fatalf("reject on line %d: raw_length %v, want %d", lineNo, length, len(orig))
		}
		switch i {
		case 0, 1, 2: // bad bytes: escaped text, exact bytes kept
			if !escaped || !bytes.Equal(rawBytes, orig) || !strings.Contains(raw, `\x`) {
				t.Fatalf("reject on line %d: escaped %v raw %q raw_bytes %q; want \\xNN text and the exact bytes", lineNo, escaped, raw, rawBytes)
			}
		case 3: // valid UTF-8, cut at 4 KiB on a character boundary
			if escaped || rawBytes != nil || raw != string(orig[:4094]) {
				t.Fatalf("long reject: escaped %v, %d bytes kept (ends %q); want the 4,094 bytes before the cut €", escaped, len(raw), raw[len(raw)-4:])
			}
		}
		if source != `bad\xffname.ndjson` {
			t.Fatalf("reject source %q, want the file name with its bad byte escaped", source)
		}
		i++
	}
	testdb.Must(t, rows.Err(), "rows")
	if i != 4 {
		t.Fatalf("%d rejects stored, want 4", i)
	}
}

// TestImplausibleClocksCreateNothing: a dead RTC (1970), a reading from
// 2099, a received_at from the future and readings older than the maximum
// age or the retention are each rejected with their own reason, and no
// partition, mark or row is created for them.
func TestImplausibleClocksCreateNothing(t *testing.T) {
	t.Parallel()
	b := setupRetention(t, smallFleet, ingest.DefaultConfig(), nil, 30)
	partitionsBefore := b.count(t, "s1", `SELECT count(*) FROM pg_inherits WHERE inhparent = 'readings'::regclass`)
	lines := []struct{ text, reason string }{
		{line("T-001", time.Date(1970, 1, 1, 0, 0, 12, 0, time.UTC), tuesday), "older than the maximum age of 400 days"},
		{`{"turbine_id":"T-001","recorded_at":"2099-01-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":1}`, "recorded_at 2099-01-01T00:00:00Z is 26447.6 days (72.4 years) ahead of received_at"},
		{line("T-001", tuesday, tuesday.Add(48*time.Hour)), "received_at 2026-08-06T09:00:00Z is 48h0m0s ahead of the ingest clock"},
		{line("T-001", tuesday.Add(30*time.Hour), tuesday.Add(20*time.Hour)), "recorded_at 2026-08-05T15:00:00Z is 30h0m0s ahead of the ingest clock"},
		{line("T-001", tuesday.AddDate(0, -3, 0), tuesday), "older than the retention: farm f1 keeps readings from 2026-07-04T23:00:00Z"},
	}
	var body strings.Builder
	for _, l := range lines {
		body.WriteString(l.text + "\n")
	}
	sum, err := b.ingest(t, reading.NDJSON, body.String())
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 0 || sum.Rejected != int64(len(lines)) || sum.DirtyMarks != 0 {
		t.Fatalf("summary %+v, want all %d rejected, no marks", sum, len(lines))
	}
	for i, r := range sum.Rejects {
		if !strings.Contains(r.Reason, lines[i].reason) {
			t.Fatalf("line %d: reason %q, want it to contain %q", r.Line, r.Reason, lines[i].reason)
		}
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM pg_inherits WHERE inhparent = 'readings'::regclass`); n != partitionsBefore {
		t.Fatalf("partitions on s1: %d, want %d (none created for implausible days)", n, partitionsBefore)
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`) + b.count(t, "s1", `SELECT count(*) FROM dirty_mark`); n != 0 {
		t.Fatalf("%d readings or marks stored for implausible clocks, want 0", n)
	}
}

// TestSpreadsheetCSV: a spreadsheet's "CSV UTF-8" export starts with a
// byte-order mark and ends lines with CRLF; it is read like any CSV.
func TestSpreadsheetCSV(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	body := "\xef\xbb\xbfturbine_id,recorded_at,received_at,available,power_kw,wind_ms\r\n" +
		"U-001,2026-08-04T08:59:58Z,2026-08-04T09:00:00Z,true,1200,8.5\r\n" +
		"U-002,2026-08-04T08:59:58Z,2026-08-04T09:00:00Z,false,0,8.5\r\n" +
		"U-003,2026-08-04T08:59:58Z,2026-08-04T09:00:00Z,maybe,0,8.5\r\n"
	sum, err := b.ingest(t, reading.CSV, body)
	testdb.Must(t, err, "ingest")
	if sum.Accepted != 2 || sum.Rejected != 1 || len(sum.Rejects) != 1 || sum.Rejects[0].Line != 4 || !strings.Contains(sum.Rejects[0].Reason, "available") {
		t.Fatalf("summary %+v, want 2 accepted and line 4 rejected naming the field available", sum)
	}
}

// TestFailedLinesAreNamed: when one shard fails mid-request, the response
// says 503 and lists exactly the lines that were not stored (the other
// shard's rows are stored); re-sending the whole body then stores the rest
// and counts the first delivery's rows as duplicates.
func TestFailedLinesAreNamed(t *testing.T) {
	t.Parallel()
	var failS2 = true
	hooks := &ingest.Hooks{BeforeCommit: func(shard string, _ ingest.Lane) error {
		if shard == "s2" && failS2 {
			return errors.New("shard s2 is down (injected): host=db2.internal user=galewatch")
		}
		return nil
	}}
	b := setup(t, smallFleet, ingest.DefaultConfig(), hooks)
	srv := httptest.NewServer(ingest.NewHandler(b.in, 1<<20, 32))
	t.Cleanup(srv.Close)
	at := tuesday.Add(-30 * time.Second)
	var body strings.Builder
	// Lines 1-3 T (s1), 4-5 U (s2), 6 T (s1), 7 U (s2).
	for _, id := range []string{"T-001", "T-002", "T-003", "U-001", "U-002", "T-004", "U-003"} {
		body.WriteString(line(id, at, tuesday) + "\n")
	}
	code, out, _ := post(t, srv.URL, "application/x-ndjson", strings.NewReader(body.String()))
	if code != http.StatusServiceUnavailable {
		t.Fatalf("status %d %v, want 503", code, out)
	}
	if got := fmt.Sprint(out["failed_lines"]); got != "[map[from:4 to:5] map[from:7 to:7]]" {
		t.Fatalf("failed_lines %s, want lines 4-5 and 7", got)
	}
	if out["accepted"].(float64) != 4 || out["failed"].(float64) != 3 {
		t.Fatalf("response %v, want 4 accepted, 3 failed", out)
	}
	if msg := out["error"].(string); strings.Contains(msg, "db2.internal") || strings.Contains(msg, "galewatch") || !strings.Contains(msg, "re-send") {
		t.Fatalf("error %q: want what to do, and no host or user", msg)
	}
	failS2 = false
	code, out, _ = post(t, srv.URL, "application/x-ndjson", strings.NewReader(body.String()))
	if code != 200 || out["accepted"].(float64) != 3 || out["duplicate"].(float64) != 4 {
		t.Fatalf("re-send: status %d %v, want 200 with 3 accepted and 4 duplicate", code, out)
	}
}

// TestPostNeedsAnExplicitContentType: no type, text/plain or a form type is
// 415 and stores nothing (a browser page can send those without asking).
func TestPostNeedsAnExplicitContentType(t *testing.T) {
	t.Parallel()
	b := setup(t, smallFleet, ingest.DefaultConfig(), nil)
	srv := httptest.NewServer(ingest.NewHandler(b.in, 1<<20, 32))
	t.Cleanup(srv.Close)
	body := line("T-001", tuesday, tuesday) + "\n"
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json"} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		testdb.Must(t, err, "request")
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		testdb.Must(t, err, "POST")
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Fatalf("Content-Type %q: status %d, want 415", ct, resp.StatusCode)
		}
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings`); n != 0 {
		t.Fatalf("%d readings stored from refused posts, want 0", n)
	}
}
