package rollup

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// FarmDay is one farm-local day as the farm_day view gives it: the sums of
// turbine_day, and the rates computed from them at read time.
type FarmDay struct {
	FarmID                        string
	Day                           time.Time
	Turbines                      int32
	Expected, Received, Available int64
	Availability, Completeness    float64
	ComputedAt                    time.Time
	ComputedAfterDayEnd, Pending  bool
}

// FarmDays reads the farm days of farms between two dates (inclusive).
func FarmDays(ctx context.Context, control *pgxpool.Pool, farms []string, from, to time.Time) ([]FarmDay, error) {
	rows, err := controldb.New(control).FarmDayList(ctx, controldb.FarmDayListParams{FarmIds: farms, FromDay: from, ToDay: to})
	if err != nil {
		return nil, fmt.Errorf("farm days: %w", err)
	}
	out := make([]FarmDay, len(rows))
	for i, r := range rows {
		out[i] = FarmDay(r)
	}
	return out, nil
}

// Farms lists every farm id in the registry.
func Farms(ctx context.Context, control *pgxpool.Pool) ([]string, error) {
	list, err := controldb.New(control).FarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("farms: %w", err)
	}
	ids := make([]string, len(list))
	for i, f := range list {
		ids[i] = f.ID
	}
	return ids, nil
}
