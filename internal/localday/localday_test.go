package localday_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/testdb"
)

// TestMatchesPostgres walks every zone Postgres knows, day by day over two
// years (2025-2026, both directions of every DST rule in force, and the
// zones whose clocks jump at midnight), and compares Start with
// (d::timestamp AT TIME ZONE zone). It also checks that Of puts each
// day's first instant, and the instant before it, on the right side.
func TestMatchesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.Pool(t, testdb.NewDatabase(t))
	rows, err := pool.Query(ctx, `SELECT name FROM pg_timezone_names ORDER BY name`)
	testdb.Must(t, err, "zones")
	var zones []string
	for rows.Next() {
		var z string
		testdb.Must(t, rows.Scan(&z), "scan")
		zones = append(zones, z)
	}
	testdb.Must(t, rows.Err(), "zones")
	first := localday.Date{Year: 2025, Month: time.January, Day: 1}
	const days = 731
	checked, unloadable, mismatches := 0, 0, 0
	var badZones []string
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			unloadable++ // a name only Postgres has (e.g. posixrules aliases): no farm can use it (fleet apply loads it in Go)
			continue
		}
		starts, err := pool.Query(ctx, `SELECT (d::date)::timestamp AT TIME ZONE $1 FROM generate_series($2::date, $2::date + ($3::integer - 1), interval '1 day') d`, zone, first.UTC(), days)
		testdb.Must(t, err, "starts of %s", zone)
		i, zoneMismatches := 0, 0
		for starts.Next() {
			var pg time.Time
			testdb.Must(t, starts.Scan(&pg), "scan")
			d := first.AddDays(i)
			i++
			got := localday.Start(d, loc)
			checked++
			if !got.Equal(pg) {
				mismatches++
				zoneMismatches++
				if strings.Contains(zone, "/") && mismatches <= 10 {
					t.Errorf("%s %s: Go starts the day at %s, Postgres at %s", zone, d, got.UTC().Format(time.RFC3339), pg.UTC().Format(time.RFC3339))
				}
				continue
			}
			if of := localday.Of(pg, loc); of != d {
				t.Errorf("%s: Of(start of %s) = %s", zone, d, of)
			}
			if of := localday.Of(pg.Add(-time.Nanosecond), loc); of != d.AddDays(-1) {
				t.Errorf("%s: Of(just before %s) = %s", zone, d, of)
			}
		}
		testdb.Must(t, starts.Err(), "starts of %s", zone)
		if zoneMismatches > 0 {
			badZones = append(badZones, fmt.Sprintf("%s (%d days)", zone, zoneMismatches))
		}
	}
	// Region names (Area/Location), which farms use, must all agree. Only
	// legacy names (CET, EET, MET, WET on this machine's data) may differ;
	// fleet apply refuses a zone that does (TestApplyRefusesAZoneGoAndPostgresDisagreeOn).
	for _, z := range badZones {
		if strings.Contains(z, "/") {
			t.Errorf("Go and Postgres disagree on region zone %s", z)
		}
	}
	t.Logf("legacy zones that disagree (refused by fleet apply): %v", badZones)
	t.Logf("%d zones, %d zone-days compared, %d zones not loadable in Go, %d mismatches", len(zones), checked, unloadable, mismatches)
	if checked < 400*days {
		t.Fatalf("only %d zone-days compared: expected several hundred zones", checked)
	}
}

// TestZonesWhoseMidnightMoves pins the day starts where local midnight is
// skipped (Santiago's spring), repeated (Havana's fall back) or near a
// change (Santiago's autumn, London's), against what Postgres computes.
func TestZonesWhoseMidnightMoves(t *testing.T) {
	for _, tc := range []struct {
		zone string
		day  localday.Date
		want string
	}{
		{"America/Santiago", localday.Date{Year: 2026, Month: 9, Day: 6}, "2026-09-06T04:00:00Z"}, // clocks jump over midnight
		{"America/Santiago", localday.Date{Year: 2026, Month: 4, Day: 5}, "2026-04-05T04:00:00Z"}, // clocks fall back over midnight
		{"America/Havana", localday.Date{Year: 2026, Month: 3, Day: 8}, "2026-03-08T05:00:00Z"},
		{"America/Havana", localday.Date{Year: 2026, Month: 11, Day: 1}, "2026-11-01T05:00:00Z"}, // midnight happens twice: the second
		{"Europe/London", localday.Date{Year: 2026, Month: 3, Day: 29}, "2026-03-29T00:00:00Z"},
		{"Europe/London", localday.Date{Year: 2026, Month: 8, Day: 1}, "2026-07-31T23:00:00Z"},
	} {
		loc, err := time.LoadLocation(tc.zone)
		testdb.Must(t, err, "zone")
		if got := localday.Start(tc.day, loc).UTC().Format(time.RFC3339); got != tc.want {
			t.Errorf("%s %s starts at %s, want %s (Postgres)", tc.zone, tc.day, got, tc.want)
		}
	}
	// In Havana's fall back at midnight, 00:30 CDT on 1 November (04:30Z)
	// is on the clock as 1 November but belongs to 31 October's bounds.
	havana, _ := time.LoadLocation("America/Havana")
	if got := localday.Of(time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC), havana); got != (localday.Date{Year: 2026, Month: 10, Day: 31}) {
		t.Errorf("Of(04:30Z on 1 November, Havana) = %s, want 2026-10-31", got)
	}
}
