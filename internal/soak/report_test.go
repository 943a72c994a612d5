package soak

import (
	"strings"
	"testing"
	"time"
)

// TestReportShowsRefusalsAndReplayAlone: the report's 503 table gives each
// reason's answers and wait p50 / p99 / max under the bodies refused, and
// the replay table puts the backlog replayed alone (3,984,000 lines in
// 10 s: 398,400 lines/s) beside the one replayed with the live feed (in
// 20 s: 199,200 lines/s), each with its drain.
func TestReportShowsRefusalsAndReplayAlone(t *testing.T) {
	at := time.Date(2026, 12, 7, 15, 21, 30, 0, time.UTC)
	r := &Report{
		Sender:      SenderStats{Bodies: 1200, BodiesRefused: 3, Resent: 5},
		Refusals:    []Refusal{{Reason: "ingest pipeline is full (N waiting) | retry later", Answers: 4, Wait: Dist{N: 4, P50: 0.1, P99: 0.5, Max: 0.7}}},
		ReplayLines: 3_984_000, ReplayStart: at, ReplayIngest: 20 * time.Second, ReplayCPU: 6 * time.Second, ReplayMaxRSS: 136 << 20,
		DrainEnd: at.Add(43 * time.Second), Drain: 23 * time.Second,
		ReplayAlone: &ReplayRun{Farm: "replayed-alone", Lines: 3_984_000, Start: at.Add(4 * time.Minute), Ingest: 10 * time.Second,
			CPU: 5 * time.Second, MaxRSS: 138 << 20, DrainEnd: at.Add(5 * time.Minute), Drain: 21 * time.Second},
	}
	md := r.Markdown()
	for _, want := range []string{
		"3 of 1200 bodies answered 503 at least once (4 answers 503 in all;",
		"| ingest pipeline is full (N waiting) \\| retry later | 4 | 0.10 / 0.50 / 0.70 s |",
		"| alone (after the live feed) | replayed-alone | 15:25:30 | 3984000 | 10s | 398400 | 5s, 138 MiB | 21s |",
		"| beside the live feed | replayed | 15:21:30 | 3984000 | 20s | 199200 | 6s, 136 MiB | 23s |",
	} {
		if !strings.Contains(md, want) {
			t.Fatalf("the report lacks %q:\n%s", want, md)
		}
	}
	r.Refusals, r.ReplayAlone = nil, nil
	md = r.Markdown()
	if !strings.Contains(md, "None: every live body was taken at its first send.") || strings.Contains(md, "Replay alone and beside") {
		t.Fatalf("with no 503 and no replay alone, want \"None\" and no replay table:\n%s", md)
	}
}
