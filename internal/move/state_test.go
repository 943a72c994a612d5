package move_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/move"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestAMoveKeepsStates: a moved turbine's readings keep their states (and
// those without one stay ”, or NULL as stored before ”); the verify step compares the state too, so a
// reading on the new shard whose state differs from the old's (here none on
// the old, a state on the new) fails the move.
func TestAMoveKeepsStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)
	now := day.Add(10 * time.Hour)
	env := testdb.New(t, moorFleet)
	in := pipelinetest.Ingestor(t, env, func() time.Time { return now }, ingest.DefaultConfig(), nil)
	states := []string{"", "RUN", `FAULT "2,7" Störung`}
	for _, id := range []string{"M-1", "M-2"} {
		var body bytes.Buffer
		enc := reading.NewEncoder(reading.NDJSON, &body)
		for i := 0; i < 1800; i++ {
			at := day.Add(time.Duration(2*i) * time.Second)
			testdb.Must(t, enc.Encode(&reading.Reading{TurbineID: id, RecordedAt: at, ReceivedAt: at.Add(time.Second), Available: true, PowerKW: 1, WindMS: 5, State: states[i%3]}), "encode")
		}
		testdb.Must(t, enc.Flush(), "flush")
		if sum := pipelinetest.Send(t, in, body.Bytes()); sum.Accepted != 1800 {
			t.Fatalf("%s: %+v, want 1800 accepted", id, sum)
		}
	}
	// What each turbine's readings are: recorded_at → state (NULL as "<null>").
	stored := func(shard, id string) map[time.Time]string {
		t.Helper()
		rows, err := env.Shards.Pool(shard).Query(ctx, `SELECT recorded_at, coalesce(state, '<null>') FROM readings WHERE turbine_id = $1`, id)
		testdb.Must(t, err, "read %s on %s", id, shard)
		out := map[time.Time]string{}
		for rows.Next() {
			var at time.Time
			var state string
			testdb.Must(t, rows.Scan(&at, &state), "scan")
			out[at.UTC()] = state
		}
		testdb.Must(t, rows.Err(), "rows")
		return out
	}
	// One of M-1's readings without a state as stored before '' was the
	// writers' "none": NULL, which the move keeps as NULL.
	testdb.Exec(t, env.Shards.Pool("s1"), `UPDATE readings SET state = NULL WHERE turbine_id = 'M-1' AND recorded_at = $1`, day.Add(6*time.Second))
	before := stored("s1", "M-1")
	if len(before) != 1800 || before[day] != "" || before[day.Add(6*time.Second)] != "<null>" || before[day.Add(2*time.Second)] != "RUN" || before[day.Add(4*time.Second)] != states[2] {
		t.Fatalf("M-1 on s1: %d readings, first four states %q %q %q %q", len(before), before[day], before[day.Add(2*time.Second)], before[day.Add(4*time.Second)], before[day.Add(6*time.Second)])
	}

	// M-2's 00:00:00 reading (no state) is on s2 already, with a state.
	testdb.Exec(t, env.Shards.Pool("s2"), `SELECT readings_ensure_partition($1::date)`, day)
	testdb.Exec(t, env.Shards.Pool("s2"), `INSERT INTO readings (turbine_id, recorded_at, received_at, available, power_kw, wind_ms, state) VALUES ('M-2', $1, $2, true, 1, 5, 'RUN')`, day, day.Add(time.Second))

	reg := *env.Registry
	reg.Now = func() time.Time { return now }
	plan, err := fleet.Parse("moved", strings.NewReader(strings.ReplaceAll(moorFleet, "shard: s1}", "shard: s2}")))
	testdb.Must(t, err, "parse")
	res, err := reg.ApplyWith(ctx, "moved", plan, fleet.ApplyOptions{})
	testdb.Must(t, err, "apply the moves")
	if len(res.Moves) != 2 || res.Moves[0].TurbineID != "M-1" || res.Moves[1].TurbineID != "M-2" {
		t.Fatalf("apply: moves %+v, want M-1's and M-2's", res.Moves)
	}
	tick := now
	m := &move.Mover{Control: env.Control, Shards: env.Shards, Grace: time.Nanosecond,
		Now:       func() time.Time { tick = tick.Add(time.Second); return tick },
		Recompute: func(context.Context, pgx.Tx, string, []localday.Date) error { return nil }}

	testdb.Must(t, m.Run(ctx, res.Moves[0].ID), "move M-1")
	after := stored("s2", "M-1")
	if len(after) != len(before) {
		t.Fatalf("M-1 on s2 after the move: %d readings, want %d", len(after), len(before))
	}
	for at, state := range before {
		if after[at] != state {
			t.Fatalf("M-1's reading at %s: state %q on s2 after the move, %q on s1 before", at.Format(time.RFC3339), after[at], state)
		}
	}
	if n := len(stored("s1", "M-1")); n != 0 {
		t.Fatalf("s1 keeps %d readings of M-1 after the move, want 0", n)
	}

	err = m.Run(ctx, res.Moves[1].ID)
	if err == nil || !strings.Contains(err.Error(), "1 of the 1800 readings of 2026-08-02 are not on the new shard as they are on the old") {
		t.Fatalf("moving M-2 onto a reading whose state differs: err %v, want the verify step to name the 1 differing reading", err)
	}
	if got := stored("s2", "M-2")[day]; got != "RUN" {
		t.Fatalf("M-2's planted reading: state %q, want RUN (kept, not overwritten)", got)
	}
}
