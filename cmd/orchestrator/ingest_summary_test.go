package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/galewatch/galewatch/internal/ingest"
)

// TestSummarySaysWhatWasNotKept: a file of 5,000 refused lines under the
// default cap prints its 20 samples, the 980 other rows in ingest_reject,
// and the 4,000 not stored, per kind of reason; totals over two files add
// the kinds up.
func TestSummarySaysWhatWasNotKept(t *testing.T) {
	sum := ingest.Summary{Rejected: 5000, RejectsKept: 1000, RejectsNotKept: map[string]int64{"unknown_turbine": 800, "invalid": 3200}}
	for i := 1; i <= ingest.MaxRejectSamples; i++ {
		sum.Rejects = append(sum.Rejects, ingest.RejectSample{Line: int64(i), Reason: "bad"})
	}
	out := printedBy(t, func() { printSummary("bad.ndjson", sum) })
	for _, want := range []string{
		"bad.ndjson: 0 accepted, 0 duplicate, 5000 rejected",
		"  line 20: bad\n  ... and 980 more rejected line(s) in ingest_reject\n",
		"  ... and 4000 more rejected line(s) not stored, over the rules' reject_rows_kept (1000 kept; counted in ingest_reject_summary): invalid 3200, unknown_turbine 800\n",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary:\n%s\nwant it to contain %q", out, want)
		}
	}
	total := ingest.Summary{}.Plus(sum).Plus(ingest.Summary{Rejected: 1005, RejectsKept: 1000, RejectsNotKept: map[string]int64{"future": 5}})
	if total.RejectsKept != 2000 || len(total.RejectsNotKept) != 3 || total.RejectsNotKept["invalid"] != 3200 || total.RejectsNotKept["future"] != 5 {
		t.Fatalf("total %+v, want 2000 kept and invalid 3200, unknown_turbine 800, future 5 not kept", total)
	}
}

// printedBy runs f and returns what it printed on os.Stdout.
func printedBy(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	f()
	os.Stdout = saved
	w.Close()
	return <-done
}
