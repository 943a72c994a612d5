package demo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/demo"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/pipelinetest"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestDefaultSaturday: the most recent farm-local Saturday that ended
// before yesterday began, whatever the weekday.
func TestDefaultSaturday(t *testing.T) {
	london, err := time.LoadLocation("Europe/London")
	testdb.Must(t, err, "zone")
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC), "2026-11-28"},  // Monday: the day before yesterday
		{time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC), "2026-11-21"},  // Sunday: yesterday is Saturday, left alone
		{time.Date(2026, 11, 28, 13, 0, 0, 0, time.UTC), "2026-11-21"},  // Saturday: not ended
		{time.Date(2026, 12, 5, 23, 30, 0, 0, time.UTC), "2026-11-28"},  // Saturday night
		{time.Date(2026, 7, 12, 23, 30, 0, 0, time.UTC), "2026-07-11"},  // Sunday 23:30 UTC is Monday 00:30 in London (BST)
		{time.Date(2026, 7, 12, 22, 30, 0, 0, time.UTC), "2026-07-04"},  // Sunday 23:30 in London
		{time.Date(2026, 7, 13, 23, 30, 0, 0, time.UTC), "2026-07-11"},  // Tuesday 00:30 in London
		{time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), "2026-12-26"},     // Friday
		{time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC), "2026-03-28"},   // the Monday after the clocks went forward
		{time.Date(2026, 10, 26, 12, 0, 0, 0, time.UTC), "2026-10-24"},  // the Monday after they went back
		{time.Date(2026, 11, 30, 0, 30, 0, 0, time.UTC), "2026-11-28"},  // Monday 00:30
		{time.Date(2026, 11, 29, 23, 59, 0, 0, time.UTC), "2026-11-21"}, // Sunday 23:59
	} {
		if got := demo.DefaultSaturday(c.now, london).String(); got != c.want {
			t.Errorf("DefaultSaturday(%s) = %s, want %s", c.now.Format(time.RFC3339), got, c.want)
		}
	}
}

// TestStoryCountsOnTheDemoFleet: on the demo fleet (300 turbines at 2 s)
// the story's Saturday reads 9,830,160 / 12,960,000 = 75.85 % after the
// day phase and 12,787,200 / 12,960,000 = 98.67 % after the replay.
func TestStoryCountsOnTheDemoFleet(t *testing.T) {
	plan, err := fleet.ReadFile("../../fleet/demo.yaml")
	testdb.Must(t, err, "demo fleet")
	s, err := demo.NewStory(plan, localday.Date{Year: 2026, Month: time.November, Day: 28}, 1)
	testdb.Must(t, err, "story")
	afterDay := demo.Counts{Expected: 12_960_000, Received: 9_963_000, Available: 9_830_160}
	final := demo.Counts{Expected: 12_960_000, Received: 12_960_000, Available: 12_787_200}
	if s.AfterDay != afterDay || s.Final != final || s.DayReadings != 9_963_000 || s.ReplayReadings != 2_997_000 || s.Turbines != 300 || len(s.Stopped) != 4 {
		t.Fatalf("story: %+v then %+v from %d + %d readings, %d turbines, stopped %v; want %+v then %+v from 9,963,000 + 2,997,000, 300 turbines, 4 stopped",
			s.AfterDay, s.Final, s.DayReadings, s.ReplayReadings, s.Turbines, s.Stopped, afterDay, final)
	}
	if a, f := s.AfterDay.Availability(), s.Final.Availability(); int(a*10000+0.5) != 7585 || int(f*10000+0.5) != 9867 {
		t.Fatalf("availability %.4f then %.4f, want 75.85 %% then 98.67 %%", a, f)
	}
	if got := s.Start.Format(time.RFC3339); got != "2026-11-28T00:00:00Z" {
		t.Fatalf("day starts %s, want local midnight 2026-11-28T00:00:00Z (GMT)", got)
	}
}

// TestNewRefusesWhatIngestWouldReject: the demo fails before delivering
// anything when the story cannot be told: a day that has not ended, one
// beyond the farm's max_age (400 days), a fleet without Ardnave Point.
func TestNewRefusesWhatIngestWouldReject(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, storyFleet)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	in := pipelinetest.Ingestor(t, env, func() time.Time { return now }, ingest.DefaultConfig(), nil)
	clock := demo.NewScaledClock(now, 1)
	try := func(day localday.Date, plan *fleet.Plan) error {
		cfg := demo.DefaultConfig()
		cfg.Plan, cfg.Clock, cfg.Saturday = plan, clock, day
		_, err := demo.New(cfg, env.Control, in)
		return err
	}
	for _, c := range []struct {
		day  localday.Date
		want string
	}{
		{localday.Date{Year: 2026, Month: time.November, Day: 30}, "has not ended"},
		{localday.Date{Year: 2025, Month: time.October, Day: 25}, "beyond ardnave-point's max_age of 400 days"},
	} {
		if err := try(c.day, env.Plan); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("story on %s: %v, want an error saying %q", c.day, err, c.want)
		}
	}
	if err := try(localday.Date{Year: 2025, Month: time.November, Day: 1}, env.Plan); err != nil {
		t.Errorf("story on 2025-11-01 (394 days back): %v, want accepted", err)
	}
	noArdnave := &fleet.Plan{Farms: env.Plan.Farms[1:], Turbines: env.Plan.Turbines[300:]}
	if err := try(localday.Date{}, noArdnave); err == nil || !strings.Contains(err.Error(), `no farm "ardnave-point"`) {
		t.Errorf("fleet without Ardnave Point: %v, want an error naming it", err)
	}
}
