package demo

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
)

// TestOnlyLines: a re-send passes exactly the failed lines, then ends.
func TestOnlyLines(t *testing.T) {
	recs := make([]reading.Record, 10)
	for i := range recs {
		recs[i].Line = int64(i + 1)
	}
	dec := &onlyLines{dec: &records{recs: recs}, lines: []ingest.LineRange{{From: 2, To: 3}, {From: 7, To: 7}, {From: 9, To: 12}}}
	var got []int64
	for {
		r, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Line)
	}
	if want := []int64{2, 3, 7, 9, 10}; !slices.Equal(got, want) {
		t.Fatalf("lines %v, want %v", got, want)
	}
}
