// Package lateness measures how late a farm's readings really arrive, so an
// operator can choose the allowed lateness of event-time windows from data
// rather than a guess.
//
// Over the farm's readings with recorded_at in [from, to), lag is
// received_at - recorded_at. Every shard holding turbines of the farm is
// asked in parallel, each within its own timeout, for two things in one
// snapshot: each turbine's estimated clock offset (sql/queries/shard/
// lateness.sql explains the estimator) and a histogram of lag, bucketed
// with bounds defined once on the control database (lateness_lag_bounds_ms).
// Quantiles cannot be merged from per-shard percentiles; histograms can: the
// control database sums the shards' buckets and reads the quantiles off the
// cumulative counts, ranks the turbines and applies the recommendation
// rule. Go routes the arrays from one database to the other and prints. A
// shard that fails or times out is named in the report, which is then
// marked partial: never a silent hole.
package lateness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// Errors a caller may want to tell apart (bad input, not a failure).
var (
	ErrUnknownFarm = errors.New("unknown farm")
	ErrEmptyRange  = errors.New("empty range")
)

// Defaults of Measurer.
const (
	DefaultShardTimeout = 5 * time.Minute
	DefaultWorst        = 10
)

// Measurer measures a farm's lateness.
type Measurer struct {
	Control *pgxpool.Pool
	Shards  *fleet.Shards
	// ShardTimeout bounds each shard's part (default 5 minutes), so a slow
	// or unreachable shard is reported instead of holding up the rest.
	ShardTimeout time.Duration
	// Worst is how many turbines to name, by |estimated clock offset|
	// (default 10).
	Worst int
}

// window is the resolved range and the rules in force.
type window struct {
	farm             controldb.LatenessFarmGetRow
	from, to         time.Time
	bounds           []int64
	laneThresholdMS  int64
	earlyToleranceMS int64
}

// shardPart is what one shard measured.
type shardPart struct {
	shard  string
	clocks []sharddb.LatenessTurbineClocksRow
	hist   []sharddb.LatenessLagHistogramRow
	err    error
}

// Measure measures farm's lateness over [from, to). Unknown farms and
// empty ranges are ErrUnknownFarm and ErrEmptyRange; a shard that fails
// does not fail the measurement but is reported (Report.Partial).
func (m *Measurer) Measure(ctx context.Context, farm string, from, to Bound) (*Report, error) {
	w, err := m.resolve(ctx, farm, from, to)
	if err != nil {
		return nil, err
	}
	q := controldb.New(m.Control)
	placements, err := q.LatenessShardTurbines(ctx, farm)
	if err != nil {
		return nil, fmt.Errorf("lateness %s: shards: %w", farm, err)
	}
	parts := m.fanOut(ctx, placements, w)
	if err := ctx.Err(); err != nil {
		return nil, err // interrupted: no report rather than one that blames the shards
	}
	return m.merge(ctx, w, parts)
}

// resolve reads the farm's rules, turns dates into day starts (FarmDayGet)
// and fetches the histogram's bucket bounds.
func (m *Measurer) resolve(ctx context.Context, farm string, from, to Bound) (window, error) {
	q := controldb.New(m.Control)
	var w window
	var err error
	w.farm, err = q.LatenessFarmGet(ctx, farm)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, fmt.Errorf("%w %q (not in the fleet registry)", ErrUnknownFarm, farm)
	}
	if err != nil {
		return w, fmt.Errorf("lateness %s: %w", farm, err)
	}
	w.laneThresholdMS, w.earlyToleranceMS = int64(w.farm.LaneThresholdMs), int64(w.farm.EarlyToleranceMs)
	if w.from, err = m.instant(ctx, q, farm, from); err != nil {
		return w, err
	}
	if w.to, err = m.instant(ctx, q, farm, to); err != nil {
		return w, err
	}
	if !w.to.After(w.from) {
		loc, err := time.LoadLocation(w.farm.Timezone)
		if err != nil {
			loc = time.UTC
		}
		return w, fmt.Errorf("%w: %s (%s) is not after %s (%s)", ErrEmptyRange,
			to, w.to.In(loc).Format(time.RFC3339), from, w.from.In(loc).Format(time.RFC3339))
	}
	if w.bounds, err = q.LatenessLagBounds(ctx); err != nil {
		return w, fmt.Errorf("lateness %s: bucket bounds: %w", farm, err)
	}
	return w, nil
}

func (m *Measurer) instant(ctx context.Context, q *controldb.Queries, farm string, b Bound) (time.Time, error) {
	if !b.IsDay {
		return b.At, nil
	}
	day, err := q.FarmDayGet(ctx, controldb.FarmDayGetParams{ID: farm, Day: b.Day})
	if err != nil {
		return time.Time{}, fmt.Errorf("lateness %s: %s: day bounds: %w", farm, b, err)
	}
	return day.DayStart, nil
}

// fanOut asks every shard holding turbines of the farm, in parallel, each
// within its own timeout.
func (m *Measurer) fanOut(ctx context.Context, placements []controldb.LatenessShardTurbinesRow, w window) []shardPart {
	timeout := cmp.Or(m.ShardTimeout, DefaultShardTimeout)
	parts := make([]shardPart, len(placements))
	var wg sync.WaitGroup
	for i, p := range placements {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			parts[i] = m.measureShard(sctx, p.ShardName, p.TurbineIds, w)
			if parts[i].err != nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
				parts[i].err = fmt.Errorf("no answer within %s: %w", timeout, parts[i].err)
			}
		}()
	}
	wg.Wait()
	return parts
}

// measureShard runs the shard's two queries in one read-only snapshot: the
// histogram's corrected series uses the clock estimates of the same rows.
func (m *Measurer) measureShard(ctx context.Context, shard string, turbines []string, w window) shardPart {
	part := shardPart{shard: shard}
	pool := m.Shards.Pool(shard)
	if pool == nil {
		part.err = errors.New("not open in this process (registered after it started?)")
		return part
	}
	part.err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		q := sharddb.New(tx)
		clocks, err := q.LatenessTurbineClocks(ctx, sharddb.LatenessTurbineClocksParams{
			EarlyToleranceMs: w.earlyToleranceMS, TurbineIds: turbines, FromAt: w.from, ToAt: w.to,
		})
		if err != nil {
			return fmt.Errorf("clock estimates: %w", err)
		}
		ids := make([]string, len(clocks))
		offsets := make([]float64, len(clocks))
		for i, c := range clocks {
			ids[i], offsets[i] = c.TurbineID, c.ClockOffsetMs
		}
		hist, err := q.LatenessLagHistogram(ctx, sharddb.LatenessLagHistogramParams{
			Bounds: w.bounds, TurbineIds: ids, ClockOffsetMs: offsets, FromAt: w.from, ToAt: w.to, LaneThresholdMs: w.laneThresholdMS,
		})
		if err != nil {
			return fmt.Errorf("lag histogram: %w", err)
		}
		part.clocks, part.hist = clocks, hist
		return nil
	})
	return part
}

// merge hands what the shards that answered measured to the control
// database, which merges the histograms, reads the quantiles and ranks the
// turbines.
func (m *Measurer) merge(ctx context.Context, w window, parts []shardPart) (*Report, error) {
	var hist controldb.LatenessQuantilesParams
	var clocks controldb.LatenessTurbineRankParams
	var failed []ShardFailure
	var asked []string
	for _, p := range parts {
		asked = append(asked, p.shard)
		if p.err != nil {
			failed = append(failed, ShardFailure{Shard: p.shard, Error: p.err.Error()})
			continue
		}
		for _, h := range p.hist {
			hist.Series = append(hist.Series, h.Series)
			hist.Bucket = append(hist.Bucket, h.Bucket)
			hist.Readings = append(hist.Readings, h.Readings)
			hist.MinLagMs = append(hist.MinLagMs, h.MinLagMs)
			hist.MaxLagMs = append(hist.MaxLagMs, h.MaxLagMs)
		}
		for _, c := range p.clocks {
			clocks.TurbineIds = append(clocks.TurbineIds, c.TurbineID)
			clocks.ShardNames = append(clocks.ShardNames, p.shard)
			clocks.Readings = append(clocks.Readings, c.Readings)
			clocks.Windows = append(clocks.Windows, c.Windows)
			clocks.Early = append(clocks.Early, c.Early)
			clocks.MinLagMs = append(clocks.MinLagMs, c.MinLagMs)
			clocks.ClockOffsetMs = append(clocks.ClockOffsetMs, c.ClockOffsetMs)
		}
	}
	clocks.Worst = int32(cmp.Or(m.Worst, DefaultWorst))
	q := controldb.New(m.Control)
	quantiles, err := q.LatenessQuantiles(ctx, hist)
	if err != nil {
		return nil, fmt.Errorf("lateness %s: merge histograms: %w", w.farm.ID, err)
	}
	worst, err := q.LatenessTurbineRank(ctx, clocks)
	if err != nil {
		return nil, fmt.Errorf("lateness %s: rank turbines: %w", w.farm.ID, err)
	}
	res, err := q.LatenessResolution(ctx)
	if err != nil {
		return nil, fmt.Errorf("lateness %s: resolution: %w", w.farm.ID, err)
	}
	slices.SortFunc(failed, func(a, b ShardFailure) int { return cmp.Compare(a.Shard, b.Shard) })
	return newReport(w, asked, failed, quantiles, worst, res), nil
}
