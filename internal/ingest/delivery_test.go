package ingest_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// threeTimes sends every delivery three times: once, then twice at once
// from two ingest pipelines on the same databases (two sender processes).
type threeTimes struct {
	*pipelinetest.Pipeline
	second *ingest.Ingestor
}

func (d *threeTimes) Deliver(t testing.TB, k int, dl pipelinetest.Delivery) []ingest.Summary {
	t.Helper()
	first := pipelinetest.Send(t, d.In, dl.Body)
	sums := make([]ingest.Summary, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, in := range []*ingest.Ingestor{d.In, d.second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = pipelinetest.Ingest(context.Background(), in, dl.Body)
		}()
	}
	wg.Wait()
	testdb.Must(t, errors.Join(errs...), "delivery %d again, from two pipelines at once", k)
	return append([]ingest.Summary{first}, sums...)
}

// TestEveryDeliveryThreeTimes is at-least-once delivery: every delivery of
// the scenario (21,600 readings of two farms over an hour, in six
// deliveries between the fast path's publications and the corrections) is
// sent three times — once, then again from two ingest pipelines at once.
// Each reading is stored once and counted as a duplicate exactly twice;
// the first copy does exactly what the clean run's only copy did (the same
// accepted rows and dirty marks) and the others mark nothing; the
// rollups, windows (fast and final, with their revisions), reconciliation
// and alerts are the clean run's, row for row.
func TestEveryDeliveryThreeTimes(t *testing.T) {
	t.Parallel()
	want := pipelinetest.Clean(t)
	sc := pipelinetest.NewScenario(t)
	p := pipelinetest.New(t, testdb.New(t, pipelinetest.Fleet), pipelinetest.Options{})
	sums := pipelinetest.Play(t, &threeTimes{Pipeline: p, second: p.NewIngestor(t)}, sc, false)
	for k, s := range sums {
		pipelinetest.CheckDelivered(t, k, sc.Deliveries[k], 3, s)
		if c := want.Summaries[k]; s[0].Accepted != c.Accepted || s[0].DirtyMarks != c.DirtyMarks || s[0].Live != c.Live || s[0].Backfill != c.Backfill {
			t.Fatalf("delivery %d, first copy: %+v; the clean run's only copy: %+v", k, s[0], c)
		}
		for i, r := range s[1:] {
			if r.Accepted != 0 || r.DirtyMarks != 0 {
				t.Fatalf("delivery %d, copy %d: %+v, want nothing accepted and no mark", k, i+2, r)
			}
		}
	}
	got := pipelinetest.Read(t, p.Env.Control)
	if diff := got.Diff(want.Outcome, pipelinetest.AllSections...); diff != "" {
		t.Fatalf("three deliveries left a different outcome from the clean run:\n%s", diff)
	}
	var stored int64
	for _, s := range p.Env.Shards.Names() {
		stored += testdb.Int(t, p.Env.Shards.Pool(s), `SELECT count(*) FROM readings`)
	}
	if stored != int64(sc.Readings) {
		t.Fatalf("%d readings stored, want %d", stored, sc.Readings)
	}
}
