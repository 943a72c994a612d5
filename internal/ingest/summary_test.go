package ingest_test

import (
	"testing"

	"github.com/galewatch/galewatch/internal/ingest"
)

// TestSummaryPlusAddsCountsOnly: two inputs' counts add up, the refused
// reasons not kept merge by reason, and what names an input's lines stays
// with that input.
func TestSummaryPlusAddsCountsOnly(t *testing.T) {
	a := ingest.Summary{Accepted: 10, Duplicate: 2, Rejected: 3, Live: 7, Backfill: 3, Early: 1, DirtyMarks: 2, Failed: 1, RejectsKept: 2,
		RejectsNotKept: map[string]int64{"future": 1}, FailedLines: []ingest.LineRange{{From: 4, To: 4}}}
	b := ingest.Summary{Accepted: 5, Rejected: 1, Live: 5, RejectsKept: 1, RejectsNotKept: map[string]int64{"future": 2, "invalid": 1}}
	got := a.Plus(b)
	if got.Accepted != 15 || got.Duplicate != 2 || got.Rejected != 4 || got.Live != 12 || got.Backfill != 3 || got.Early != 1 ||
		got.DirtyMarks != 2 || got.Failed != 1 || got.RejectsKept != 3 || got.RejectsNotKept["future"] != 3 || got.RejectsNotKept["invalid"] != 1 ||
		len(got.FailedLines) != 0 {
		t.Fatalf("a.Plus(b) = %+v; want 15 accepted, 2 duplicate, 4 rejected, 12 live, 3 backfill, 1 early, 2 marks, 1 failed, 3 kept, future 3 and invalid 1 not kept, no failed lines", got)
	}
	if a.RejectsNotKept["future"] != 1 {
		t.Fatalf("Plus changed its receiver's map: %v", a.RejectsNotKept)
	}
}
