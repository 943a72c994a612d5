package faultpoint

import (
	"context"
	"errors"
	"testing"
)

// TestReached: an armed point blocks the first time its detail holds every
// armed text (until its context ends here), and never again; other points,
// other details and an unarmed process go straight on.
func TestReached(t *testing.T) {
	saved := armed
	t.Cleanup(func() { armed = saved; hit = map[string]bool{} })
	armed = parse("rollup.between_commits=dirty+/s2, drain.before_mark_delete")
	if len(armed) != 2 || armed["rollup.between_commits"] != "dirty+/s2" || armed["drain.before_mark_delete"] != "" {
		t.Fatalf("parse: %q", armed)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name, detail string
		blocks       bool
	}{
		{"rollup.between_commits", "schedule fa/2026-11-29/s2", false}, // not dirty
		{"rollup.between_commits", "dirty fa/2026-11-26/s1", false},    // not s2
		{"fastpath.before_publish", "fa 2026-11-30T13:33:00Z", false},  // not armed
		{"rollup.between_commits", "dirty fa/2026-11-26/s2", true},
		{"rollup.between_commits", "dirty fa/2026-11-27/s2", false}, // once only
		{"drain.before_mark_delete", "fa/2026-11-26/s1", true},
	} {
		err := Reached(done, c.name, c.detail)
		if blocked := errors.Is(err, context.Canceled); blocked != c.blocks {
			t.Fatalf("Reached(%s, %q) = %v, want blocking %v", c.name, c.detail, err, c.blocks)
		}
	}
	armed = parse("")
	if armed != nil || Reached(done, "drain.before_mark_delete", "x") != nil {
		t.Fatal("an unarmed process blocked")
	}
}
