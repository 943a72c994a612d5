package lateness

import (
	"errors"
	"fmt"
	"time"
)

// Bound is one end of the measured range of recorded_at, as the operator
// gave it: an instant, or a farm-local date meaning that day's start. A
// date is resolved by the control database (FarmDayGet), the one source of
// day bounds, not here.
type Bound struct {
	// Name says which end this is in messages ("--from", "--to").
	Name string
	// Text is the value as given.
	Text string
	// At is the instant (RFC 3339), unless IsDay.
	At time.Time
	// Day is the date (midnight UTC, as pgx passes a DATE) when IsDay.
	Day   time.Time
	IsDay bool
}

// ErrBadBound says a --from/--to value does not parse.
var ErrBadBound = errors.New("bad bound")

// ParseBound reads an RFC 3339 instant (2026-08-01T10:00:00Z) or a date
// (2026-08-01: that farm-local day's start). Errors name the bound.
func ParseBound(name, text string) (Bound, error) {
	b := Bound{Name: name, Text: text}
	if text == "" {
		return b, fmt.Errorf("%w: %s is required (an RFC 3339 instant such as 2026-08-01T10:00:00Z, or a date such as 2026-08-01 for the start of that farm-local day)", ErrBadBound, name)
	}
	if d, err := time.Parse(time.DateOnly, text); err == nil {
		b.Day, b.IsDay = d, true
		return b, nil
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return b, fmt.Errorf("%w: %s %q is neither an RFC 3339 instant (2026-08-01T10:00:00Z) nor a date (2026-08-01)", ErrBadBound, name, text)
	}
	b.At = at
	return b, nil
}

func (b Bound) String() string { return b.Name + " " + b.Text }
