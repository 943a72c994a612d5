// Package metrics is serve's /metrics: Prometheus metrics on a registry of
// its own (never the global default one).
//
// Two kinds of metric, from two places:
//   - counters of what this process did since it started, incremented
//     where it happens: ingest (through ingest.Observer) and River job runs
//     (through jobs.Observer, a worker middleware);
//   - gauges of what the databases hold, read at scrape time by a
//     collector whose queries are sqlc queries (the *Metrics ones in sql/queries/),
//     within a short timeout. A database that does not answer makes its
//     up gauge 0 and leaves out its other gauges; the scrape never fails
//     as a whole.
//
// Labels are farm and shard, and small fixed sets (lane, outcome, reason,
// kind, scope); never a turbine.
package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/jobs"
)

// DefaultTimeout bounds the database reads of one scrape.
const DefaultTimeout = 4 * time.Second

// laneNone is the lane label of rows refused before a lane was decided.
const laneNone = "none"

// Metrics holds the registry and the in-process counters.
type Metrics struct {
	reg *prometheus.Registry

	ingestRows    *prometheus.CounterVec
	ingestRejects *prometheus.CounterVec
	ingestEarly   prometheus.Counter
	ingestBodies  *prometheus.CounterVec
	jobRuns       *prometheus.CounterVec
	jobDuration   *prometheus.HistogramVec

	// gauges reads the databases; each scrape gets a copy bound to its
	// request's context (Handler).
	gauges collector
	// scrapes holds a token per scrape in flight.
	scrapes chan struct{}
}

// maxScrapes is how many scrapes may run at once; more get 503.
const maxScrapes = 4

// New builds the registry: the counters, the database collector over
// control and shards (its ages measured on now), and Go's and the
// process's own collectors.
func New(control *pgxpool.Pool, shards *fleet.Shards, now func() time.Time, timeout time.Duration) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		ingestRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "galewatch_ingest_rows_total",
			Help: "Rows ingested by this process, by lane (live, backfill; none for rows refused before a lane was decided) and outcome (accepted, duplicate, failed, rejected).",
		}, []string{"lane", "outcome"}),
		ingestRejects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "galewatch_ingest_rejects_total",
			Help: "Lines refused by this process and recorded, in ingest_reject or counted in ingest_reject_summary (over reject_rows_kept), by reason.",
		}, []string{"reason"}),
		ingestEarly: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "galewatch_ingest_early_rows_total",
			Help: "Valid rows whose recorded_at was ahead of received_at by more than the farm's early_tolerance (a fast clock).",
		}),
		ingestBodies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "galewatch_ingest_bodies_total",
			Help: "Bodies POST /v1/readings answered, by outcome: stored (every line stored or already stored), with_rejects (some lines refused, every valid one stored), failed (not every valid line stored: lines failed, or the body was turned away or cut before it was read whole).",
		}, []string{"outcome"}),
		jobRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "galewatch_job_runs_total",
			Help: "River job runs worked by this process, by kind, shard (its rollup queue; empty for the other queues) and outcome (completed, failed, cancelled, snoozed).",
		}, []string{"kind", "shard", "outcome"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "galewatch_job_duration_seconds",
			Help:    "How long River job runs worked by this process took, whatever their outcome, by kind and shard.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900},
		}, []string{"kind", "shard"}),
	}
	// Every lane/outcome, reason and body outcome exists from the start, at 0.
	for _, lane := range []string{ingest.Live.String(), ingest.Backfill.String()} {
		for _, outcome := range []string{"accepted", "duplicate", "failed"} {
			m.ingestRows.WithLabelValues(lane, outcome)
		}
	}
	m.ingestRows.WithLabelValues(laneNone, "rejected")
	m.ingestRows.WithLabelValues(laneNone, "failed")
	for _, r := range ingest.RejectReasons {
		m.ingestRejects.WithLabelValues(string(r))
	}
	for _, o := range ingest.BodyOutcomes {
		m.ingestBodies.WithLabelValues(string(o))
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	m.gauges = collector{control: control, shards: shards, now: now, timeout: timeout, log: slog.Default()}
	m.scrapes = make(chan struct{}, maxScrapes)
	m.reg.MustRegister(m.ingestRows, m.ingestRejects, m.ingestEarly, m.ingestBodies, m.jobRuns, m.jobDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in Prometheus's text format, with the
// gauges read from the databases for this scrape under its request's
// context (a scraper that goes away cancels the reads) and within the
// timeout. A collection error never fails the scrape (the collector
// reports its databases' up and slow gauges instead); at most 4 scrapes
// run at once, the next gets 503.
func (m *Metrics) Handler() http.Handler {
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case m.scrapes <- struct{}{}:
			defer func() { <-m.scrapes }()
		default:
			http.Error(w, "too many scrapes at once", http.StatusServiceUnavailable)
			return
		}
		scrape := prometheus.NewRegistry()
		scrape.MustRegister(m.gauges.forScrape(r.Context()))
		promhttp.HandlerFor(prometheus.Gatherers{m.reg, scrape}, opts).ServeHTTP(w, r)
	})
}

// Ingest is the ingest.Observer that counts into m.
func (m *Metrics) Ingest() ingest.Observer { return ingestObserver{m} }

// Jobs is the jobs.Observer that counts into m.
func (m *Metrics) Jobs() jobs.Observer { return jobObserver{m} }

type ingestObserver struct{ m *Metrics }

func (o ingestObserver) Batch(lane ingest.Lane, accepted, duplicate, failed int64) {
	l := lane.String()
	o.m.ingestRows.WithLabelValues(l, "accepted").Add(float64(accepted))
	o.m.ingestRows.WithLabelValues(l, "duplicate").Add(float64(duplicate))
	o.m.ingestRows.WithLabelValues(l, "failed").Add(float64(failed))
}

func (o ingestObserver) Rejected(reason ingest.RejectReason, n int64) {
	o.m.ingestRows.WithLabelValues(laneNone, "rejected").Add(float64(n))
	o.m.ingestRejects.WithLabelValues(string(reason)).Add(float64(n))
}

func (o ingestObserver) RejectsLost(n int64) {
	o.m.ingestRows.WithLabelValues(laneNone, "failed").Add(float64(n))
}

func (o ingestObserver) Early(n int64) { o.m.ingestEarly.Add(float64(n)) }

func (o ingestObserver) Body(outcome ingest.BodyOutcome) {
	o.m.ingestBodies.WithLabelValues(string(outcome)).Inc()
}

type jobObserver struct{ m *Metrics }

func (o jobObserver) JobRun(kind, shard string, outcome jobs.Outcome, took time.Duration) {
	o.m.jobRuns.WithLabelValues(kind, shard, string(outcome)).Inc()
	o.m.jobDuration.WithLabelValues(kind, shard).Observe(took.Seconds())
}
