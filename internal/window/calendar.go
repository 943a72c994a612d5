package window

import (
	"time"

	"github.com/galewatch/galewatch/internal/localday"
)

// Calendar is a farm's calendar versions (localday.Calendar) as grids.
type Calendar = localday.Calendar

// CalendarVersion is one of them.
type CalendarVersion = localday.CalendarVersion

// GridOfCalendar is the grid of the farm-local day holding t by the farm's
// calendar, and the version that governs it.
func GridOfCalendar(c Calendar, t time.Time) (Grid, CalendarVersion) {
	d, start, end, v := c.DayOf(t)
	return Grid{Day: d.UTC(), Start: start, End: end, Window: v.Window}, v
}
