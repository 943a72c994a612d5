package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

func TestDailyAtFollowsTheFarmsWallClock(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	s := jobs.DailyAt{Hour: 2, Location: london}
	for _, tc := range []struct{ now, want time.Time }{
		// Summer: 02:00 BST is 01:00 UTC.
		{time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 8, 2, 1, 0, 0, 0, time.UTC)},
		// Exactly at the firing: the next one is tomorrow's.
		{time.Date(2026, 8, 2, 1, 0, 0, 0, time.UTC), time.Date(2026, 8, 3, 1, 0, 0, 0, time.UTC)},
		// The night the clocks go back (25 October): 02:00 GMT is 02:00 UTC.
		{time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 2, 0, 0, 0, time.UTC)},
	} {
		if got := s.Next(tc.now); !got.Equal(tc.want) {
			t.Fatalf("Next(%s) = %s, want %s", tc.now, got.UTC(), tc.want)
		}
	}
	if got := jobs.PreviousDay(time.Date(2026, 8, 1, 23, 30, 0, 0, time.UTC), london); got != "2026-08-01" {
		t.Fatalf("PreviousDay at 00:30 BST on 2 August = %s, want 2026-08-01", got)
	}
}

// TestAlignedFiresJustAfterEachMultiple: rounds 150 ms after every even
// second (the fast path's are 50 ms after), so the round after a watermark
// on a whole minute starts just after it, whenever the process started.
func TestAlignedFiresJustAfterEachMultiple(t *testing.T) {
	s := jobs.Aligned{Every: 2 * time.Second, After: 150 * time.Millisecond}
	at := func(sec, ms int) time.Time { return time.Date(2026, 8, 1, 12, 0, sec, ms*1e6, time.UTC) }
	for _, tc := range []struct{ now, want time.Time }{
		{at(0, 0), at(0, 150)},
		{at(0, 149), at(0, 150)},
		{at(0, 150), at(2, 150)}, // strictly after
		{at(1, 999), at(2, 150)},
		{at(2, 100), at(2, 150)},
		{at(59, 500), time.Date(2026, 8, 1, 12, 1, 0, 150e6, time.UTC)},
	} {
		if got := s.Next(tc.now); !got.Equal(tc.want) {
			t.Fatalf("Next(%s) = %s, want %s", tc.now.Format("15:04:05.000"), got.Format("15:04:05.000"), tc.want.Format("15:04:05.000"))
		}
	}
}

func TestFarmSchedulesAddNewFarms(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	p := pipelinetest.New(t, env, pipelinetest.Options{At: time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC), NoStart: true})
	s := jobs.NewFarmSchedules(p.Config, p.Deps, p.Client)
	for i, want := range []int{2, 0} {
		n, err := s.Sync(ctx)
		testdb.Must(t, err, "sync %d", i)
		if n != want {
			t.Fatalf("sync %d added %d farm schedules, want %d", i, n, want)
		}
	}
	bigger := testdb.ArdnaveFleet + "  - id: dunmore-moss\n    timezone: Europe/London\n    turbines:\n      - {prefix: DM-, from: 1, to: 3, shard: s1}\n"
	plan, err := fleet.Parse("bigger", strings.NewReader(bigger))
	testdb.Must(t, err, "parse")
	_, err = env.Registry.Apply(ctx, "bigger", plan)
	testdb.Must(t, err, "apply")
	if n, err := s.Sync(ctx); err != nil || n != 1 {
		t.Fatalf("sync after a new farm: added %d (%v), want 1", n, err)
	}
}
