package ingest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
)

// TestLiveDoesNotWaitBehindALateDelivery: a past day
// delivered days later with its own received_at stamps (the demo's story
// day: each reading 1 s behind its received_at, so live by its lag) is
// written as a replay. While its first batch is held before its commit, a
// reading delivered as it arrives is written and answered; the day is
// still counted in the live lane.
func TestLiveDoesNotWaitBehindALateDelivery(t *testing.T) {
	t.Parallel()
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	hooks := &ingest.Hooks{BeforeCommit: func(string, ingest.Lane) error {
		if first.CompareAndSwap(false, true) {
			close(held)
			<-release
		}
		return nil
	}}
	cfg := ingest.DefaultConfig()
	cfg.LiveBatch, cfg.BackfillBatch = 10, 10
	b := setup(t, smallFleet, cfg, hooks)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})
	ctx := context.Background()

	var day strings.Builder
	for i := range 50 {
		at := time.Date(2026, 8, 1, 6, 0, 2*i, 0, time.UTC)
		day.WriteString(line("T-005", at, at.Add(time.Second)) + "\n")
	}
	dayDone := make(chan ingest.Summary, 1)
	go func() {
		dec, _ := reading.NewDecoder(reading.NDJSON, strings.NewReader(day.String()))
		sum, _ := b.in.Ingest(ctx, "saturday, delivered tuesday", dec)
		dayDone <- sum
	}()
	select {
	case <-held:
	case <-time.After(hang):
		t.Fatal("the late day's first batch never reached its commit")
	}

	fresh := make(chan ingest.Summary, 1)
	go func() {
		dec, _ := reading.NewDecoder(reading.NDJSON, strings.NewReader(line("T-006", tuesday.Add(-time.Second), tuesday)+"\n"))
		sum, _ := b.in.Ingest(ctx, "fresh", dec)
		fresh <- sum
	}()
	select {
	case sum := <-fresh:
		if sum.Accepted != 1 || sum.Live != 1 {
			t.Fatalf("fresh reading: %+v, want 1 accepted in the live lane", sum)
		}
	case <-time.After(hang):
		t.Fatal("a fresh reading waited behind the late day's held batch")
	}
	if n := b.count(t, "s1", `SELECT count(*) FROM readings WHERE turbine_id = 'T-005'`); n != 0 {
		t.Fatalf("%d of the late day's rows were written while held, want 0", n)
	}
	close(release)
	released = true
	if sum := <-dayDone; sum.Accepted != 50 || sum.Live != 50 || sum.Backfill != 0 {
		t.Fatalf("late day: %+v, want 50 accepted, counted in the live lane (their lag)", sum)
	}
}
