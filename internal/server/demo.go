package server

import (
	"context"
	"time"

	"github.com/galewatch/galewatch/internal/localday"
)

// Demo is what `serve --demo` (make run) delivers, so that the status page
// can say which numbers are the demo's story and which hours the demo left
// without a reading: a farm in service counts those against itself, as it
// would a dead link, and the page would otherwise read as a failing farm.
type Demo struct {
	// Farm and Day are the story's farm-local day, delivered whole; the
	// demo put the farm in service from it. Farm is empty without a story.
	Farm string
	Day  localday.Date
	// FeedFrom is the live feed's first slot (zero without a feed): the
	// demo sends every farm's readings from then on, and none before but
	// the story day's.
	FeedFrom time.Time
}

// demoView is the demo's panel above the fleet table.
type demoView struct {
	Demo
	Farm    Farm
	Weekday string
	// Shown is the story day's row (nil before it has a number).
	Shown *Day
	// NoReading are the story farm's days after the story's, to today,
	// rolled up with no reading at all (the demo sent nothing for them).
	NoReading []string
	// Warranty is the story day's contract's (percent), else the page's.
	Warranty float64
	// Today is the story farm's farm-local today, when the feed started
	// during it (its windows before FeedFrom have no reading).
	Today bool
}

// demoPanel builds the panel; nil without a demo, and without a story (or
// its farm) just the feed's start.
func (s *Server) demoPanel(ctx context.Context, farms []Farm, backlogs map[string]*Backlog) (*demoView, error) {
	if s.Demo == nil {
		return nil, nil
	}
	v := &demoView{Demo: *s.Demo, Warranty: s.cfg.Warranty * 100}
	i := -1
	for j, f := range farms {
		if f.ID == s.Demo.Farm {
			i = j
		}
	}
	if i < 0 {
		v.Demo.Farm = ""
		return v, nil
	}
	f := farms[i]
	v.Farm, v.Weekday = f, s.Demo.Day.UTC().Weekday().String()
	var marked []time.Time
	if b := backlogs[f.ID]; b != nil {
		marked = b.days
	}
	days, _, err := s.days(ctx, f, s.Demo.Day, f.today, marked)
	if err != nil {
		return nil, err
	}
	for k := range days {
		d := &days[k]
		switch {
		case d.Day == s.Demo.Day.String():
			v.Shown = d
			if d.WarrantyPct != nil {
				v.Warranty = *d.WarrantyPct
			}
		case noReading(*d):
			v.NoReading = append(v.NoReading, d.Day)
		}
	}
	if !v.FeedFrom.IsZero() {
		start, _ := localday.Bounds(f.today, f.loc)
		v.Today = v.FeedFrom.After(start) && s.Demo.Day != f.today
	}
	return v, nil
}

// noReading: a rolled-up day that expected readings, received none and
// is not accepted (a dead link all day, or a day the demo sent nothing
// for): its figures measure the missing data, not the turbines.
func noReading(d Day) bool {
	return d.Incomplete() && d.Source == "turbine_day" && d.Expected != nil && *d.Expected > 0 && d.Received != nil && *d.Received == 0
}

// noReadingDays lists the days of days with no reading at all.
func noReadingDays(days []Day) []string {
	var out []string
	for _, d := range days {
		if noReading(d) {
			out = append(out, d.Day)
		}
	}
	return out
}
