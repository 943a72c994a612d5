package ingest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestMarksAreAnnouncedBeforeTheyCommit: a batch that writes dirty marks
// has announced them on the control database (dirty_mark_announced, under
// its shard transaction's id) by the time it commits, while they are not
// yet visible on the shard, so a report between the two calls the day
// pending rather than final. A batch that marks nothing announces nothing.
func TestMarksAreAnnouncedBeforeTheyCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var env *testdb.Env
	type seen struct{ announced, marksVisible int64 }
	var atCommit []seen
	// (the writer's goroutine: an error fails the batch, never the test from there)
	hooks := &ingest.Hooks{BeforeCommit: func(shard string, lane ingest.Lane) error {
		var s seen
		if err := env.Control.QueryRow(ctx, `SELECT count(*) FROM dirty_mark_announced WHERE farm_id = 'f1' AND day = '2026-08-03' AND shard_name = $1`, shard).Scan(&s.announced); err != nil {
			return err
		}
		// another session: the batch's marks are not committed yet
		if err := env.Shards.Pool(shard).QueryRow(ctx, `SELECT count(*) FROM dirty_mark`).Scan(&s.marksVisible); err != nil {
			return err
		}
		atCommit = append(atCommit, s)
		return nil
	}}
	b := setup(t, smallFleet, ingest.DefaultConfig(), hooks)
	env = b.env
	late := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	sum, err := b.ingest(t, reading.NDJSON, line("T-001", tuesday, tuesday)+"\n")
	testdb.Must(t, err, "live reading")
	if sum.DirtyMarks != 0 || len(atCommit) != 1 || atCommit[0] != (seen{0, 0}) {
		t.Fatalf("a live reading: %+v, at commit %+v; want no mark and nothing announced", sum, atCommit)
	}
	sum, err = b.ingest(t, reading.NDJSON, line("T-001", late, tuesday)+"\n")
	testdb.Must(t, err, "late reading")
	if sum.Accepted != 1 || sum.DirtyMarks != 1 || len(atCommit) != 2 || atCommit[1] != (seen{1, 0}) {
		t.Fatalf("a late reading: %+v, at commit %+v; want it stored and marked, its mark announced before it was visible", sum, atCommit)
	}
	if n := testdb.Int(t, env.Control, `SELECT count(*) FROM dirty_mark_announced`); n != 1 {
		t.Fatalf("%d announcements after the commit, want 1 (the drain passes it)", n)
	}
}

// TestAMarkIsNotStoredWithoutItsAnnouncement: with the control database out
// of reach, a batch whose readings mark a closed day is not stored (its
// lines fail, to re-send): a mark the report could not know of would let
// it call that day final without them. A live batch, which marks nothing,
// is stored.
func TestAMarkIsNotStoredWithoutItsAnnouncement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, smallFleet)
	routes, err := ingest.LoadRoutes(ctx, env.Control, tuesday, 0)
	testdb.Must(t, err, "routes")
	gone, err := pgxpool.New(ctx, env.ControlDSN)
	testdb.Must(t, err, "control pool")
	gone.Close()
	in := ingest.New(ingest.DefaultConfig(), gone, env.Shards, routes, func() time.Time { return tuesday }, nil)
	in.Start(ctx)
	t.Cleanup(in.Close)
	late := time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)
	dec, err := reading.NewDecoder(reading.NDJSON, strings.NewReader(line("T-001", tuesday, tuesday)+"\n"+line("T-002", late, tuesday)+"\n"))
	testdb.Must(t, err, "decoder")
	sum, err := in.Ingest(ctx, "test", dec)
	if err == nil || !strings.Contains(err.Error(), "announcing its marks to the control database") ||
		sum.Accepted != 1 || sum.Failed != 1 || len(sum.FailedLines) != 1 || sum.FailedLines[0] != (ingest.LineRange{From: 2, To: 2}) {
		t.Fatalf("ingest with the control database gone: %+v (%v); want line 1 stored, line 2 failed for want of its announcement", sum, err)
	}
	s1 := env.Shards.Pool("s1")
	if got := testdb.Int(t, s1, `SELECT count(*) FROM readings`)*10 + testdb.Int(t, s1, `SELECT count(*) FROM dirty_mark`); got != 10 {
		t.Fatalf("s1 holds readings*10+marks = %d, want 10: the live reading only, no mark", got)
	}
}
