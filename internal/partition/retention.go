package partition

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
)

// Retention of what the readings' retention leaves behind:
// the windows of a day whose readings are gone, and old refused lines.
//
// Windows are cut by key range, not partitioned: a farm-local day is two UTC
// days' worth of any table partitioned like readings, so a day could not
// leave whole by dropping partitions; and the window statements' plans
// (key-range LATERAL scans, OFFSET 0 fences, generic plans for a large
// correction) are tuned to one plain table each.

// TrimBatch is how many rows one retention statement deletes at most: each
// batch is its own transaction, so a backlog never holds a long one.
const TrimBatch = 20_000

// WindowCut is one farm's retention cut: every farm-local day before
// KeepDay (which starts at KeepFrom) starts before the readings' cut, its
// rollup is refused, and its derived rows leave.
type WindowCut struct {
	FarmID   string
	KeepDay  time.Time
	KeepFrom time.Time
	// Shards hold the farm's turbines: its control rows go once each of
	// them has lost its rows of the days cut.
	Shards []string
}

// WindowCuts gives each farm's cut for the readings' retention horizon (see
// RetentionHorizon; nil: nothing is cut). The readings' cut is the UTC
// midnight at or before the horizon: every partition before it is dropped
// (readings_drop_partitions_before records it as dropped_before).
func WindowCuts(ctx context.Context, control *pgxpool.Pool, horizon *time.Time) ([]WindowCut, error) {
	if horizon == nil {
		return nil, nil
	}
	rows, err := controldb.New(control).WindowRetentionCuts(ctx, Day(*horizon))
	if err != nil {
		return nil, fmt.Errorf("window retention cuts: %w", err)
	}
	cuts := make([]WindowCut, len(rows))
	for i, r := range rows {
		cuts[i] = WindowCut{FarmID: r.FarmID, KeepDay: r.KeepDay, KeepFrom: r.KeepFrom, Shards: r.Shards}
	}
	return cuts, nil
}

// TrimShardWindows deletes, on one shard, the turbine_window and
// farm_window_sum rows, dirty windows and dirty marks of every cut farm's
// days before its cut. Run only after Maintain has dropped the partitions
// (and recorded the cut) on that shard. It stops between batches once
// deadline has passed; the farms it finished are returned.
func TrimShardWindows(ctx context.Context, pool *pgxpool.Pool, shard string, cuts []WindowCut, deadline time.Time) (map[string]bool, error) {
	q := sharddb.New(pool)
	done := map[string]bool{}
	for _, c := range cuts {
		if !slices.Contains(c.Shards, shard) {
			continue
		}
		for {
			n, err := q.TurbineWindowTrim(ctx, sharddb.TurbineWindowTrimParams{FarmID: c.FarmID, KeepFrom: c.KeepFrom, MaxRows: TrimBatch})
			if err != nil {
				return done, fmt.Errorf("farm %s: turbine_window: %w", c.FarmID, err)
			}
			if n < TrimBatch {
				break
			}
			if time.Now().After(deadline) {
				return done, nil
			}
		}
		for {
			n, err := q.FarmWindowSumTrim(ctx, sharddb.FarmWindowSumTrimParams{FarmID: c.FarmID, KeepFrom: c.KeepFrom, MaxRows: TrimBatch})
			if err != nil {
				return done, fmt.Errorf("farm %s: farm_window_sum: %w", c.FarmID, err)
			}
			if n < TrimBatch {
				break
			}
			if time.Now().After(deadline) {
				return done, nil
			}
		}
		if _, err := q.DirtyWindowTrim(ctx, sharddb.DirtyWindowTrimParams{FarmID: c.FarmID, KeepDay: c.KeepDay}); err != nil {
			return done, fmt.Errorf("farm %s: dirty marks: %w", c.FarmID, err)
		}
		done[c.FarmID] = true
		if time.Now().After(deadline) {
			return done, nil
		}
	}
	return done, nil
}

// TrimControlWindows takes, day by day (each in one statement, so a day
// leaves whole), the control database's window rows of each cut farm's days
// before its cut: fast and final farm_window rows, farm_window_part,
// reconciliation, alert. Only farms for which ready says every shard has
// lost its rows; it stops between days once deadline has passed.
func TrimControlWindows(ctx context.Context, control *pgxpool.Pool, cuts []WindowCut, ready func(WindowCut) bool, deadline time.Time) error {
	q := controldb.New(control)
	for _, c := range cuts {
		if !ready(c) {
			continue
		}
		for {
			if time.Now().After(deadline) {
				return nil
			}
			oldest, err := q.WindowRetentionOldestDay(ctx, controldb.WindowRetentionOldestDayParams{FarmID: c.FarmID, KeepDay: c.KeepDay})
			if err != nil {
				return fmt.Errorf("farm %s: oldest window day: %w", c.FarmID, err)
			}
			if !oldest.Found {
				break
			}
			if _, err := q.WindowRetentionDeleteDay(ctx, controldb.WindowRetentionDeleteDayParams{FarmID: c.FarmID, Day: oldest.Day}); err != nil {
				return fmt.Errorf("farm %s: windows of %s: %w", c.FarmID, oldest.Day.Format(time.DateOnly), err)
			}
		}
	}
	return nil
}

// TrimRejects deletes the ingest_reject and ingest_reject_summary rows
// rejected more than fleet_rules.reject_retention_days before now (the
// caller's clock), oldest first; it stops between batches once deadline
// has passed.
func TrimRejects(ctx context.Context, control *pgxpool.Pool, now, deadline time.Time) error {
	q := controldb.New(control)
	rules, err := q.FleetRulesRejects(ctx)
	if err != nil {
		return fmt.Errorf("reject rules: %w", err)
	}
	before := now.Add(-time.Duration(rules.RejectRetentionDays) * 24 * time.Hour)
	for _, trim := range []func() (int64, error){
		func() (int64, error) {
			return q.IngestRejectTrim(ctx, controldb.IngestRejectTrimParams{Before: before, MaxRows: TrimBatch})
		},
		func() (int64, error) {
			return q.IngestRejectSummaryTrim(ctx, controldb.IngestRejectSummaryTrimParams{Before: before, MaxRows: TrimBatch})
		},
	} {
		for {
			n, err := trim()
			if err != nil {
				return fmt.Errorf("reject retention: %w", err)
			}
			if n < TrimBatch {
				break
			}
			if time.Now().After(deadline) {
				return nil
			}
		}
	}
	return nil
}
