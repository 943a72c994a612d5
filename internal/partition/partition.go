// Package partition keeps each shard's readings partitions: created ahead of
// time, created on demand for any day a write lands in, and dropped whole
// when older than the retention setting; and the retention of what follows
// them (retention.go): the windows of the days dropped, and refused lines.
package partition

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
)

// Day truncates t to its UTC day, the partitioning unit of readings.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Keeper remembers which days have a partition on one shard, so the write
// path asks the database only the first time it meets a day.
type Keeper struct {
	pool  *pgxpool.Pool
	mu    sync.Mutex
	known map[time.Time]bool
}

// NewKeeper returns a Keeper for the shard behind pool.
func NewKeeper(pool *pgxpool.Pool) *Keeper {
	return &Keeper{pool: pool, known: map[time.Time]bool{}}
}

// Ensure makes sure every UTC day in days has a partition.
func (k *Keeper) Ensure(ctx context.Context, days []time.Time) error {
	for _, d := range days {
		d = Day(d)
		k.mu.Lock()
		ok := k.known[d]
		k.mu.Unlock()
		if ok {
			continue
		}
		if _, err := sharddb.New(k.pool).ReadingsEnsurePartition(ctx, d); err != nil {
			return fmt.Errorf("create partition for %s: %w", d.Format(time.DateOnly), err)
		}
		k.mu.Lock()
		k.known[d] = true
		k.mu.Unlock()
	}
	return nil
}

// Forget drops the cache (a partition may have been dropped by retention).
func (k *Keeper) Forget() {
	k.mu.Lock()
	k.known = map[time.Time]bool{}
	k.mu.Unlock()
}

// Maintain creates partitions from yesterday to `ahead` days after now and,
// when keepFrom is not nil, drops the partitions whose whole UTC day ends at
// or before it (see RetentionHorizon). It returns how many it dropped.
func Maintain(ctx context.Context, pool *pgxpool.Pool, now time.Time, ahead int, keepFrom *time.Time) (int, error) {
	q := sharddb.New(pool)
	today := Day(now)
	for i := -1; i <= ahead; i++ {
		if _, err := q.ReadingsEnsurePartition(ctx, today.AddDate(0, 0, i)); err != nil {
			return 0, err
		}
	}
	if keepFrom == nil {
		return 0, nil
	}
	dropped, err := q.ReadingsDropPartitionsBefore(ctx, *keepFrom)
	return int(dropped), err
}

// KeepFrom is, per farm, the start of the oldest farm-local day retention
// keeps (nil map when retentionDays <= 0: everything is kept). Ingest refuses
// readings older than their farm's.
func KeepFrom(ctx context.Context, control *pgxpool.Pool, now time.Time, retentionDays int) (map[string]time.Time, error) {
	if retentionDays <= 0 {
		return nil, nil
	}
	rows, err := controldb.New(control).FarmRetention(ctx, controldb.FarmRetentionParams{Now: now, Days: int32(retentionDays)})
	if err != nil {
		return nil, fmt.Errorf("retention horizon: %w", err)
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.ID] = r.KeepFrom
	}
	return out, nil
}

// RetentionHorizon is the start of the oldest farm-local day kept over
// every farm: a partition may be dropped only when its whole UTC day ends
// before it, so no kept farm-local day ever loses one of its two UTC
// partitions. Nil when nothing is to be dropped.
func RetentionHorizon(ctx context.Context, control *pgxpool.Pool, now time.Time, retentionDays int) (*time.Time, error) {
	keep, err := KeepFrom(ctx, control, now, retentionDays)
	if err != nil || len(keep) == 0 {
		return nil, err
	}
	var horizon time.Time
	for _, t := range keep {
		if horizon.IsZero() || t.Before(horizon) {
			horizon = t
		}
	}
	return &horizon, nil
}
