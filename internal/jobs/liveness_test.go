package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestJobsOfAGoneWorkerAreGivenBack: three jobs "running": one by a client
// whose process holds its liveness lock, two by a client that is gone (no
// lock: its process was killed), one of which has used its last attempt.
// The gone client's jobs are given back at once, available again or
// discarded, with an error saying why; the live client's job is left
// alone; and a process that has held its own lock for less than the grace
// gives nothing back (after a control restart every process needs the time
// to take its lock again).
func TestJobsOfAGoneWorkerAreGivenBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	// Every hour: the test calls Rescue itself, and moves the grace's clock.
	clock := pipelinetest.NewClock(time.Now())
	alive := &jobs.Liveness{Control: env.Control, ClientID: "alive-client", Grace: time.Second, Every: time.Hour, Now: clock.Now}
	testdb.Must(t, alive.Start(ctx), "liveness")
	t.Cleanup(alive.Stop)
	running := func(client string, attempt, maxAttempts int) int64 {
		return testdb.Int(t, env.Control, `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, attempted_by, scheduled_at)
			VALUES ('{}', 'drain_dirty', $3, 'control', 'running', $2, now() - interval '1 minute', ARRAY[$1], now() - interval '1 minute')
			RETURNING id`, client, attempt, maxAttempts)
	}
	liveJob := running("alive-client", 1, 3)
	goneJob := running("gone-client", 1, 3)
	lastJob := running("gone-client", 3, 3)

	fresh := &jobs.Liveness{Control: env.Control, ClientID: "fresh-client", Grace: time.Hour, Every: time.Hour, Now: clock.Now}
	testdb.Must(t, fresh.Start(ctx), "fresh liveness")
	t.Cleanup(fresh.Stop)
	if got, err := fresh.Rescue(ctx); err != nil || len(got) != 0 {
		t.Fatalf("a process that has held its lock for less than its grace gave back %v (%v), want nothing", got, err)
	}
	if got, err := alive.Rescue(ctx); err != nil || len(got) != 0 {
		t.Fatalf("alive, its lock held for 0 s of its 1 s grace, gave back %v (%v), want nothing", got, err)
	}

	clock.Set(clock.Now().Add(time.Second)) // alive's grace has passed
	got, err := alive.Rescue(ctx)
	testdb.Must(t, err, "rescue")
	if len(got) != 2 || !strings.Contains(strings.Join(got, "\n"), "gone-client") {
		t.Fatalf("given back %q, want the gone client's two jobs", got)
	}
	state := func(id int64) string {
		var s string
		testdb.Must(t, env.Control.QueryRow(ctx, `SELECT state::text || ' ' || coalesce(cardinality(errors), 0) FROM river_job WHERE id = $1`, id).Scan(&s), "job %d", id)
		return s
	}
	if s := state(liveJob); s != "running 0" {
		t.Fatalf("the live client's job: %s, want running, untouched", s)
	}
	if s := state(goneJob); s != "available 1" {
		t.Fatalf("the gone client's job: %s, want available with 1 error", s)
	}
	if s := state(lastJob); s != "discarded 1" {
		t.Fatalf("the gone client's job on its last attempt: %s, want discarded with 1 error", s)
	}
	if alive, err := fresh.Alive(ctx, "alive-client"); err != nil || !alive {
		t.Fatalf("alive-client is alive = %v (%v), want true", alive, err)
	}
	alive.Stop()
	// The server ends the session (and its lock) as soon as it reads the
	// closed socket.
	const hang = 10 * time.Second // normal under 0.1 s; 10 s catches a hang
	deadline := time.Now().Add(hang)
	for {
		ok, err := fresh.Alive(ctx, "alive-client")
		testdb.Must(t, err, "alive")
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alive-client still alive %v after its liveness stopped: hung", hang)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
