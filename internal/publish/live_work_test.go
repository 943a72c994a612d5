package publish_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/pipelinetest"
)

// TestAPublicationSignalsItsShards: a round publishing the due windows of
// north (on s1) and south (on s2) tells LiveWork both shards, once each
// (live work: replays and corrections wait on them, internal/livefirst);
// a round with nothing due tells it nothing.
func TestAPublicationSignalsItsShards(t *testing.T) {
	t.Parallel()
	b := setup(t, pipelinetest.WindowFleet, pipelinetest.Options{})
	b.Clock.Set(noon.Add(61 * time.Second))
	b.ReadingsAt(t, noon, "N-001")
	p := b.PublisherWith(2 * time.Minute)
	var mu sync.Mutex
	var told []string
	p.LiveWork = func(shard string) {
		mu.Lock()
		told = append(told, shard)
		mu.Unlock()
	}
	b.Clock.Set(noon.Add(2 * time.Minute))
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	slices.Sort(told)
	if !slices.Equal(told, []string{"s1", "s2"}) {
		t.Fatalf("LiveWork was told %v for a round publishing north (s1) and south (s2), want [s1 s2]", told)
	}
	told = nil
	if _, err := p.PublishDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(told) != 0 {
		t.Fatalf("LiveWork was told %v by a round with nothing due, want nothing", told)
	}
}
