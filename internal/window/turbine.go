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

// Turbine is what a window computation needs of one turbine.
type Turbine struct {
	ID          string
	Cadence     int32
	ServiceFrom time.Time
	ServiceTo   time.Time
}

// TurbinesOf converts the control database's rows.
func TurbinesOf(rows []controldb.TurbineRollupListRow) []Turbine {
	out := make([]Turbine, 0, len(rows))
	for _, t := range rows {
		tt := Turbine{ID: t.ID, Cadence: t.CadenceSeconds, ServiceFrom: serviceStart, ServiceTo: serviceEnd}
		if t.CommissionedAt != nil {
			tt.ServiceFrom = *t.CommissionedAt
		}
		if t.DecommissionedAt != nil {
			tt.ServiceTo = *t.DecommissionedAt
		}
		out = append(out, tt)
	}
	return out
}
