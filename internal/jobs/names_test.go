package jobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/jobs"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestLongestFarmIDIsAValidScheduleID: the longest farm id the fleet file
// accepts makes a nightly schedule River registers, and one character more
// does not (River validates a periodic job's id when it is added): the two
// limits agree.
func TestLongestFarmIDIsAValidScheduleID(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	client := newClient(t, env)
	add := func(farm string) error {
		_, err := client.PeriodicJobs().AddSafely(river.NewPeriodicJob(jobs.DailyAt{Hour: 2, Location: time.UTC},
			func() (river.JobArgs, *river.InsertOpts) { return jobs.RollupScheduleArgs{FarmID: farm}, nil },
			&river.PeriodicJobOpts{ID: jobs.ScheduleID(farm)}))
		return err
	}
	long := strings.Repeat("f", fleet.MaxFarmID-2) + ".1"
	if err := add(long); err != nil {
		t.Fatalf("River refuses the schedule of a %d-character farm id: %v", len(long), err)
	}
	if err := add(long + "x"); err == nil || !strings.Contains(err.Error(), "128") {
		t.Fatalf("River accepted the schedule of a farm id one character longer than the fleet file allows (err %v): the limits disagree", err)
	}
}

// TestFarmSchedulesSkipAFarmRiverRefuses: farms whose schedule cannot be
// registered (rows from before migration 00022: an id River refuses, a zone
// Go does not know), sorted before the others, are logged once and skipped;
// the others get their schedules and Sync does not fail (before, it stopped
// at the first, and serve exited).
func TestFarmSchedulesSkipAFarmRiverRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testdb.New(t, testdb.ArdnaveFleet)
	// A registry written before 00022, whose constraints are NOT VALID:
	// such rows stay.
	testdb.Exec(t, env.Control, `ALTER TABLE farm DROP CONSTRAINT IF EXISTS farm_id_bounded`)
	long := "a" + strings.Repeat("x", 2999)
	testdb.Exec(t, env.Control, `INSERT INTO farm (id, name, timezone) VALUES ($1, 'Too Long', 'UTC'), ('a-zone', 'Gone Zone', 'Nowhere/Land')`, long)
	client := newClient(t, env)
	cfg := jobs.DefaultConfig()
	cfg.Periodic = false
	var logged bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	s := jobs.NewFarmSchedules(cfg, jobs.Deps{Control: env.Control, Now: func() time.Time { return time.Date(2026, 8, 2, 12, 0, 0, 0, time.UTC) }}, client)
	n, err := s.Sync(ctx)
	if err != nil || n != 2 {
		t.Fatalf("sync: added %d (%v), want the 2 good farms and no error", n, err)
	}
	for _, farm := range []string{"ardnave-point", "kilmore-sands"} {
		if !client.PeriodicJobs().RemoveByID(jobs.ScheduleID(farm)) {
			t.Errorf("%s has no nightly schedule registered", farm)
		}
	}
	for _, want := range []string{"farm=\"axxx", "(3000 bytes)", "128 characters", "farm=a-zone", "Nowhere/Land"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logged.String())
		}
	}
	if logged.Len() > 4000 {
		t.Errorf("the log is %d bytes: a long id must be cut", logged.Len())
	}
	said := logged.Len()
	if n, err := s.Sync(ctx); err != nil || n != 0 || logged.Len() != said {
		t.Fatalf("second sync: added %d (%v), logged %q; want nothing added and nothing said again", n, err, logged.String()[said:])
	}
}
