package window

import (
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// A turbine without commissioned_at was always in service; without
// decommissioned_at it still is. The shard statement takes bounds, so
// "always" is these two instants.
var (
	serviceStart = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	serviceEnd   = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Turbine is what a window computation needs of one turbine over one span
// of a day in which its registry version (cadence) does not change: a
// turbine whose cadence changed during the day is two Turbines with the
// same ID. A window belongs to the span holding its start and is counted
// at that span's cadence; the span's slots start at its start.
type Turbine struct {
	ID          string
	Cadence     int32
	ServiceFrom time.Time
	ServiceTo   time.Time
	// From and To bound the span within the day (zero: the day's bound).
	From, To time.Time
}

// Holds says whether the window starting at start is counted in this span
// (a zero bound is open).
func (t Turbine) Holds(start time.Time) bool {
	return (t.From.IsZero() || !start.Before(t.From)) && (t.To.IsZero() || start.Before(t.To))
}

// TurbinesOf converts the control database's rows (TurbineRollupList: one
// per version in force during the day, by turbine and start), joining
// consecutive versions of one cadence into one span.
func TurbinesOf(rows []controldb.TurbineRollupListRow) []Turbine {
	out := make([]Turbine, 0, len(rows))
	for _, t := range rows {
		if n := len(out); n > 0 && out[n-1].ID == t.ID && out[n-1].Cadence == t.CadenceSeconds && out[n-1].To.Equal(t.ValidFrom) {
			out[n-1].To = t.ValidTo
			continue
		}
		tt := Turbine{ID: t.ID, Cadence: t.CadenceSeconds, ServiceFrom: serviceStart, ServiceTo: serviceEnd, From: t.ValidFrom, To: t.ValidTo}
		if t.CommissionedAt != nil {
			tt.ServiceFrom = *t.CommissionedAt
		}
		if t.DecommissionedAt != nil {
			tt.ServiceTo = *t.DecommissionedAt
		}
		out = append(out, tt)
	}
	// A turbine's spans cover the whole day between them (its first opens,
	// its last closes it: the service interval says when it counts); a span
	// after another counts its slots from its start, a span before another
	// cuts its last slot at its end, so no reading counts in two spans.
	for i := range out {
		if i == 0 || out[i-1].ID != out[i].ID {
			out[i].From = time.Time{}
		} else if out[i].From.After(out[i].ServiceFrom) {
			out[i].ServiceFrom = out[i].From
		}
		if i == len(out)-1 || out[i+1].ID != out[i].ID {
			out[i].To = time.Time{}
		} else if out[i].To.Before(out[i].ServiceTo) {
			out[i].ServiceTo = out[i].To
		}
	}
	return out
}

// IDs is the distinct turbine ids of turbines, in order.
func IDs(turbines []Turbine) []string {
	out := make([]string, 0, len(turbines))
	for i, t := range turbines {
		if i > 0 && turbines[i-1].ID == t.ID {
			continue
		}
		out = append(out, t.ID)
	}
	return out
}
