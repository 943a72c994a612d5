package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/fleet"
)

// The gauges read from the databases at scrape time.
var (
	descControlUp = prometheus.NewDesc("galewatch_control_up",
		"1 when the control database answered this scrape (a connection was made and its reads succeeded or ran out of time: see galewatch_control_slow), else 0 (its gauges are then left out).", nil, nil)
	descControlSlow = prometheus.NewDesc("galewatch_control_slow",
		"1 when the control database answered but its reads did not finish within the scrape's timeout (its gauges are then left out), else 0.", nil, nil)
	descShardUp = prometheus.NewDesc("galewatch_shard_up",
		"1 when the shard answered this scrape (a connection was made and its read succeeded or ran out of time: see galewatch_shard_slow), else 0 (its backlog gauges are then left out).", []string{"shard"}, nil)
	descShardSlow = prometheus.NewDesc("galewatch_shard_slow",
		"1 when the shard answered but its read did not finish within the scrape's timeout (its backlog gauges are then left out), else 0.", []string{"shard"}, nil)
	descDirtyMarks = prometheus.NewDesc("galewatch_dirty_marks",
		"Farm-days marked dirty by late readings on the shard and not yet drained into a recompute (dirty_mark).", []string{"shard", "farm"}, nil)
	descDirtyWindows = prometheus.NewDesc("galewatch_dirty_windows",
		"Turbine-windows marked on the shard, waiting for their correction or the fast path (dirty_window), summed over at most 10,000 marked runs per farm (past that, a lower bound; a window marked by two batches counts twice).", []string{"shard", "farm"}, nil)
	descDirtyOldest = prometheus.NewDesc("galewatch_dirty_oldest_mark_age_seconds",
		"Age of the oldest dirty_mark or dirty_window mark of the farm on the shard (absent when there is none).", []string{"shard", "farm"}, nil)
	descPending = prometheus.NewDesc("galewatch_rollup_pending",
		"Recomputes requested by the drain whose rollup_day job has not started (rollup_pending).", []string{"shard", "farm"}, nil)
	descPendingOldest = prometheus.NewDesc("galewatch_rollup_pending_oldest_age_seconds",
		"Age of the oldest rollup_pending request (absent when there is none).", []string{"shard", "farm"}, nil)
	descPublishLag = prometheus.NewDesc("galewatch_publish_lag_seconds",
		"How long after its end + allowed lateness the farm's latest fast window was published (publish_lag.lag_ms).", []string{"farm"}, nil)
	descBehind = prometheus.NewDesc("galewatch_farm_behind_seconds",
		"Freshness: now - the watermark the farm's latest fast window was published at (farm_freshness.behind_s). Grows while the farm is not published.", []string{"farm"}, nil)
	descPublishedThrough = prometheus.NewDesc("galewatch_farm_published_through_timestamp_seconds",
		"End of the farm's latest published (fast) window, Unix time.", []string{"farm"}, nil)
	descDivergence = prometheus.NewDesc("galewatch_divergence_per_mille",
		"Fast against final for the farm's latest period measured (reconciliation_pm): (final - fast) / final in per mille, by scope (window, day) and measure (received, available).", []string{"farm", "scope", "measure"}, nil)
	descAlerts = prometheus.NewDesc("galewatch_alerts",
		"Alerts raised for the farm, by kind (divergence, completeness, window_sum); an alert stays once raised.", []string{"farm", "kind"}, nil)
	descAlertLast = prometheus.NewDesc("galewatch_alert_last_raised_timestamp_seconds",
		"When the farm's latest alert of the kind was raised, Unix time.", []string{"farm", "kind"}, nil)
	descStalled = prometheus.NewDesc("galewatch_stalled_turbines",
		"Turbines of the farm stalled now: reporting available, producing nothing while the wind is in range and their neighbours produce (turbine_stall, open).", []string{"farm"}, nil)
)

var allDescs = []*prometheus.Desc{descControlUp, descControlSlow, descShardUp, descShardSlow, descDirtyMarks, descDirtyWindows, descDirtyOldest,
	descPending, descPendingOldest, descPublishLag, descBehind, descPublishedThrough, descDivergence, descAlerts, descAlertLast, descStalled}

// collector reads the gauges from the control database and every shard,
// all at once, within timeout, for one scrape: ctx is the scrape's request
// (a scraper that goes away cancels the reads).
type collector struct {
	ctx     context.Context
	control *pgxpool.Pool
	shards  *fleet.Shards
	now     func() time.Time
	timeout time.Duration
	// maxRuns bounds the marked runs a farm's backlog sums (nil: the
	// query's own bound, DirtyBacklogGet).
	maxRuns *int64
	log     *slog.Logger
}

// readState is how a database answered one scrape.
type readState int

const (
	readDown readState = iota // no connection: unreachable
	readSlow                  // connected, but the reads ran out of time
	readOK
)

// forScrape is c bound to one scrape's context.
func (c collector) forScrape(ctx context.Context) *collector {
	c.ctx = ctx
	return &c
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// controlRead is what one scrape read from the control database.
type controlRead struct {
	state       readState
	farmShards  []controldb.TurbineFarmShardsRow
	pending     []controldb.RollupPendingMetricsRow
	publication []controldb.FarmWindowPublicationMetricsRow
	divergence  []controldb.ReconciliationMetricsRow
	alerts      []controldb.AlertCount
	stalled     []controldb.StallMetricsRow
}

// shardRead is what one scrape read from one shard.
type shardRead struct {
	state   readState
	backlog []sharddb.DirtyBacklogGetRow
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
	defer cancel()
	now := c.now()
	names := c.shards.Names()
	shards := make([]shardRead, len(names))
	var ctl controlRead
	var wg sync.WaitGroup
	wg.Go(func() { ctl = c.readControl(ctx, now) })
	for i, name := range names {
		wg.Go(func() { shards[i] = c.readShard(ctx, name) })
	}
	wg.Wait()

	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descControlUp, bit(ctl.state != readDown))
	if ctl.state != readDown {
		gauge(descControlSlow, bit(ctl.state == readSlow))
	}
	for i, name := range names {
		gauge(descShardUp, bit(shards[i].state != readDown), name)
		if shards[i].state != readDown {
			gauge(descShardSlow, bit(shards[i].state == readSlow), name)
		}
	}
	// Backlog gauges: 0 for every farm with turbines on an answering
	// shard, so a sum over farms is 0, not absent, when all is drained.
	type key struct{ shard, farm string }
	marks := map[key]sharddb.DirtyBacklogGetRow{}
	for i, name := range names {
		if shards[i].state != readOK {
			continue
		}
		for _, b := range shards[i].backlog {
			marks[key{name, b.FarmID}] = b
		}
		for _, fs := range ctl.farmShards {
			if k := (key{name, fs.FarmID}); fs.ShardName == name {
				if _, seen := marks[k]; !seen {
					marks[k] = sharddb.DirtyBacklogGetRow{FarmID: fs.FarmID}
				}
			}
		}
	}
	for k, b := range marks {
		gauge(descDirtyMarks, float64(b.Marks), k.shard, k.farm)
		gauge(descDirtyWindows, float64(b.Windows), k.shard, k.farm)
		if b.Marks+b.Windows > 0 {
			gauge(descDirtyOldest, now.Sub(b.OldestMarkedAt).Seconds(), k.shard, k.farm)
		}
	}
	if ctl.state != readOK {
		return
	}
	pending := map[key]controldb.RollupPendingMetricsRow{}
	for _, fs := range ctl.farmShards {
		pending[key{fs.ShardName, fs.FarmID}] = controldb.RollupPendingMetricsRow{}
	}
	for _, p := range ctl.pending {
		pending[key{p.ShardName, p.FarmID}] = p
	}
	for k, p := range pending {
		gauge(descPending, float64(p.Requests), k.shard, k.farm)
		if p.Requests > 0 {
			gauge(descPendingOldest, p.OldestS, k.shard, k.farm)
		}
	}
	for _, p := range ctl.publication {
		gauge(descPublishLag, float64(p.LagMs)/1000, p.FarmID)
		gauge(descBehind, p.BehindS, p.FarmID)
		gauge(descPublishedThrough, unixSeconds(p.WindowEnd), p.FarmID)
	}
	for _, d := range ctl.divergence {
		gauge(descDivergence, d.ReceivedPm, d.FarmID, d.Scope, "received")
		gauge(descDivergence, d.AvailablePm, d.FarmID, d.Scope, "available")
	}
	for _, a := range ctl.alerts {
		gauge(descAlerts, float64(a.Alerts), a.FarmID, a.Kind)
		gauge(descAlertLast, unixSeconds(a.LastRaisedAt), a.FarmID, a.Kind)
	}
	for _, s := range ctl.stalled {
		gauge(descStalled, float64(s.Stalled), s.FarmID)
	}
}

// readControl runs the control database's reads on one connection: no
// connection makes the control side down, a read that runs out of time
// slow, any other failure down (the reason goes to the log, not the
// scrape).
func (c *collector) readControl(ctx context.Context, now time.Time) controlRead {
	conn, err := c.control.Acquire(ctx)
	if err != nil {
		c.log.Warn("metrics: control database", "err", err)
		return controlRead{state: readDown}
	}
	defer conn.Release()
	q := controldb.New(conn)
	r := controlRead{state: readOK}
	for _, read := range []func() error{
		func() (err error) { r.farmShards, err = q.TurbineFarmShards(ctx); return err },
		func() (err error) { r.pending, err = q.RollupPendingMetrics(ctx, now); return err },
		func() (err error) { r.publication, err = q.FarmWindowPublicationMetrics(ctx, now); return err },
		func() (err error) { r.divergence, err = q.ReconciliationMetrics(ctx); return err },
		func() (err error) { r.alerts, err = q.AlertMetrics(ctx); return err },
		func() (err error) { r.stalled, err = q.StallMetrics(ctx); return err },
	} {
		if err := read(); err != nil {
			c.log.Warn("metrics: control database", "err", err)
			return controlRead{state: failedState(ctx)}
		}
	}
	return r
}

func (c *collector) readShard(ctx context.Context, name string) shardRead {
	conn, err := c.shards.Pool(name).Acquire(ctx)
	if err != nil {
		c.log.Warn("metrics: shard", "shard", name, "err", err)
		return shardRead{state: readDown}
	}
	defer conn.Release()
	backlog, err := sharddb.New(conn).DirtyBacklogGet(ctx, sharddb.DirtyBacklogGetParams{MaxRuns: c.maxRuns})
	if err != nil {
		c.log.Warn("metrics: shard", "shard", name, "err", err)
		return shardRead{state: failedState(ctx)}
	}
	return shardRead{state: readOK, backlog: backlog}
}

// failedState is the state of a database whose read failed after it
// answered: slow when the scrape ran out of time, else down.
func failedState(ctx context.Context) readState {
	if ctx.Err() != nil {
		return readSlow
	}
	return readDown
}

func bit(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }
