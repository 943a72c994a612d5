package localday

import "time"

// Calendar is a farm's calendar versions (farm_version), oldest first: the
// zone and rules each governs from its first day. A day ends at midnight
// in its version's zone and starts where the day before ended, as
// FarmDayGet bounds it (farm_day_start), so a version's first day starts
// at the previous version's midnight.
type Calendar []CalendarVersion

// CalendarVersion is one farm_version as the mark rule and fleet apply
// need it.
type CalendarVersion struct {
	// SinceEver: the first version, governing every day before the next.
	SinceEver bool
	FirstDay  Date
	// Start is the instant FirstDay starts (farm_version.valid_from).
	Start    time.Time
	Location *time.Location
	// Window, AllowedLateness and MarkMargin are its rules of the mark rule.
	Window, AllowedLateness, MarkMargin time.Duration
}

// DayOf is the farm-local day holding t, its bounds and the version that
// governs it.
func (c Calendar) DayOf(t time.Time) (d Date, start, end time.Time, v CalendarVersion) {
	v = c[0]
	for _, next := range c[1:] {
		if t.Before(next.Start) {
			break
		}
		v = next
	}
	d = Of(t, v.Location)
	start = Start(d, v.Location)
	if !v.SinceEver && !d.UTC().After(v.FirstDay.UTC()) {
		d, start = v.FirstDay, v.Start
	}
	return d, start, Start(d.AddDays(1), v.Location), v
}
