package jobs_test

import (
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/jobs"
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
