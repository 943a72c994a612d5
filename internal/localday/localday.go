// Package localday is the farm-local calendar day, bound for bound the same
// as Postgres computes it. The rollup SQL and the views take a day's bounds
// as (day::timestamp AT TIME ZONE zone); every decision Go makes about a
// day (which day a reading dirties, when a day has ended, which day is
// "yesterday") uses this package, which follows Postgres's rule, and
// TestMatchesPostgres proves the two equal for every zone Postgres knows,
// day by day over two years. `fleet apply` refuses a farm whose zone
// disagrees on the machine it runs on (different zone data, say).
//
// Postgres's rule for a local midnight that does not exist (clocks jump
// over it) or happens twice (clocks fall back over it): of the offsets in
// force just before and just after the nearby transition, take the one
// giving the later instant. So a day starts at the first instant its date
// is on the clock after a jump, and at the second midnight after a fall
// back. A day is [Start(d), Start(d+1)); the day of an instant is the one
// whose bounds hold it, which is not always its wall-clock date (in a
// fall-back at midnight the repeated hour belongs to the day before).
package localday

import (
	"context"
	"fmt"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Date is a calendar date (its time of day and zone are ignored).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the date part of t as written in t's own location (a DATE
// from pgx arrives as midnight UTC).
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// AddDays returns the date n days later (or earlier).
func (d Date) AddDays(n int) Date {
	return DateOf(time.Date(d.Year, d.Month, d.Day+n, 12, 0, 0, 0, time.UTC))
}

// UTC returns the date as midnight UTC (how pgx passes a DATE).
func (d Date) UTC() time.Time { return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) }

// String is YYYY-MM-DD.
func (d Date) String() string { return d.UTC().Format(time.DateOnly) }

// Start is the instant date d begins in loc: Postgres's
// (d::timestamp AT TIME ZONE zone).
func Start(d Date, loc *time.Location) time.Time {
	wall := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC) // the wall clock read as UTC
	guess := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
	// The offsets that compete: the one of the period holding Go's guess,
	// and the one across a transition within a day of it.
	_, cur := guess.Zone()
	offsets := []int{cur}
	start, end := guess.ZoneBounds()
	if !start.IsZero() && guess.Sub(start) < 26*time.Hour {
		_, prev := start.Add(-time.Second).Zone()
		offsets = append(offsets, prev)
	}
	if !end.IsZero() && end.Sub(guess) < 26*time.Hour {
		_, next := end.Zone()
		offsets = append(offsets, next)
	}
	// A midnight that exists under one offset is that instant; under two
	// (a fall back over it), the later; under none (a jump over it), the
	// later of the readings with the offsets on either side.
	var valid, any time.Time
	for _, o := range offsets {
		c := wall.Add(-time.Duration(o) * time.Second)
		if c.After(any) {
			any = c
		}
		if _, actual := c.In(loc).Zone(); actual == o && c.After(valid) {
			valid = c
		}
	}
	if !valid.IsZero() {
		return valid
	}
	return any
}

// Bounds is [Start(d), Start(d+1)).
func Bounds(d Date, loc *time.Location) (start, end time.Time) {
	return Start(d, loc), Start(d.AddDays(1), loc)
}

// Of is the farm-local day holding instant t: the d with
// Start(d) <= t < Start(d+1).
func Of(t time.Time, loc *time.Location) Date {
	d := DateOf(t.In(loc))
	switch {
	case t.Before(Start(d, loc)):
		return d.AddDays(-1)
	case !t.Before(Start(d.AddDays(1), loc)):
		return d.AddDays(1)
	}
	return d
}

// Disagreement is a day whose start Go and Postgres compute differently.
type Disagreement struct {
	Zone         string
	Day          Date
	Go, Postgres time.Time
}

func (d *Disagreement) Error() string {
	return fmt.Sprintf("Go and Postgres disagree on when %s starts in %q (%s vs %s): their zone data differ",
		d.Day, d.Zone, d.Go.UTC().Format(time.RFC3339), d.Postgres.UTC().Format(time.RFC3339))
}

// Check compares Start with Postgres (the control database behind q) for
// every day of [first, first+days) in zone, and returns the first
// disagreement, or nil.
func Check(ctx context.Context, q *controldb.Queries, zone string, first Date, days int) (*Disagreement, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, err
	}
	starts, err := q.LocalDayStarts(ctx, controldb.LocalDayStartsParams{Zone: zone, First: first.UTC(), Days: int32(days)})
	if err != nil {
		return nil, fmt.Errorf("day starts in %s: %w", zone, err)
	}
	for i, pg := range starts {
		d := first.AddDays(i)
		if got := Start(d, loc); !got.Equal(pg) {
			return &Disagreement{Zone: zone, Day: d, Go: got, Postgres: pg}, nil
		}
	}
	return nil, nil
}
