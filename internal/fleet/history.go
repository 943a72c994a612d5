package fleet

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// HistoryFilter picks versions: of one farm or one turbine, in force at an
// instant (nil: every version).
type HistoryFilter struct {
	Farm, Turbine string
	At            *time.Time
}

// WriteHistory prints what the registry said (farm_history, then
// turbine_history) as two tables. A turbine filter leaves the farms out.
func WriteHistory(ctx context.Context, q *controldb.Queries, f HistoryFilter, w io.Writer) error {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if f.Turbine == "" {
		farms, err := q.FarmHistoryList(ctx, controldb.FarmHistoryListParams{FarmID: opt(f.Farm), At: f.At})
		if err != nil {
			return fmt.Errorf("farm_history: %w", err)
		}
		fmt.Fprintln(tw, "FARM\tNAME\tTIMEZONE\tCADENCE_S\tWINDOW_S\tFIRST_DAY\tVALID_FROM\tVALID_TO\tFLEET_SHA256\tAPPLIED_BY\tAPPLIED_AT")
		for _, h := range farms {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", h.FarmID, h.Name, h.Timezone, h.CadenceSeconds, h.WindowS,
				h.FirstDay, h.ValidFrom, current(h.ValidTo), short(h.FleetHash), h.AppliedBy, h.AppliedAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintln(tw)
	}
	turbines, err := q.TurbineHistoryList(ctx, controldb.TurbineHistoryListParams{FarmID: opt(f.Farm), TurbineID: opt(f.Turbine), At: f.At})
	if err != nil {
		return fmt.Errorf("turbine_history: %w", err)
	}
	fmt.Fprintln(tw, "TURBINE\tFARM\tSHARD\tCADENCE_S\tCOMMISSIONED_AT\tDECOMMISSIONED_AT\tVALID_FROM\tVALID_TO\tFLEET_SHA256\tAPPLIED_BY\tAPPLIED_AT")
	for _, h := range turbines {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.TurbineID, h.FarmID, h.ShardName, h.CadenceSeconds,
			orNone(h.CommissionedAt), orNone(h.DecommissionedAt), h.ValidFrom, current(h.ValidTo), short(h.FleetHash), h.AppliedBy,
			h.AppliedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func current(validTo string) string {
	if validTo == "" {
		return "(in force)"
	}
	return validTo
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// short is the first 12 hex digits of a file's hash (the rest is in
// fleet_apply).
func short(hash string) string {
	if len(hash) == 64 {
		return hash[:12]
	}
	return hash
}
