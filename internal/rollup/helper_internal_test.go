package rollup

import (
	"context"
	"testing"

	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAHelperOnlyForASmallCorrectionOnIdleShards: a large correction takes
// a helper session for up to 14,400 turbine-windows (ten turbines' days)
// and not one more, and none while another connection of the process's
// shard pools is in use (ingest, the fast path or another job working).
func TestAHelperOnlyForASmallCorrectionOnIdleShards(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, `
shards: [{name: s1}, {name: s2}]
farms:
  - id: two
    timezone: Europe/London
    turbines:
      - {id: T-1, shard: s1}
      - {id: T-2, shard: s2}
`)
	c := &Computer{Control: env.Control, Shards: env.Shards}
	ctx := context.Background()
	job, err := env.Shards.Pool("s1").Acquire(ctx) // the job's own connection
	testdb.Must(t, err, "acquire")
	defer job.Release()
	if c.helperPool("s1", 14_400) == nil {
		t.Fatal("no helper for a correction of 14,400 turbine-windows with nothing else working, want one")
	}
	if c.helperPool("s1", 14_401) != nil {
		t.Fatal("a helper for a correction of 14,401 turbine-windows, want none")
	}
	other, err := env.Shards.Pool("s2").Acquire(ctx) // another shard's work
	testdb.Must(t, err, "acquire")
	defer other.Release()
	if c.helperPool("s1", 1_440) != nil {
		t.Fatal("a helper while another shard connection is in use, want none")
	}
}
