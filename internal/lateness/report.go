package lateness

import (
	"fmt"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Estimator and Rule say, in the report, how the clock offsets and the
// recommendation are computed: LatenessTurbineClocks (shard) and
// LatenessQuantiles (control) are where they are computed.
const (
	Estimator = "clock offset = -(median over the turbine's 10-minute windows of recorded_at of the window's smallest lag). " +
		"Network delay is >= 0, so a window's smallest lag is -offset plus that window's smallest delay (milliseconds on a prompt link); " +
		"the median over windows makes it robust: a glitching timestamp or an outage moves only its own window's minimum. " +
		"Positive = the turbine's clock is ahead. Bias: the median window's smallest delay, always towards a slower clock"
	Rule = "the smallest positive multiple of 5 s at or above the p99 of lag after removing each turbine's estimated clock offset " +
		"(the network delay): at most 1 % of readings would miss a window closed that long after its end, once clocks are right"
)

// Report is a lateness measurement. JSON keys name what they hold; lags are
// in milliseconds (received_at - recorded_at: negative when a turbine's
// clock is ahead).
type Report struct {
	Farm     string    `json:"farm"`
	Timezone string    `json:"timezone"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	// The rules in force (farm_rules).
	LaneThresholdMS  int64 `json:"lane_threshold_ms"`
	EarlyToleranceMS int64 `json:"early_tolerance_ms"`
	// Readings is every reading measured (live + backfill).
	Readings int64 `json:"readings"`
	// LagMS is the quantiles of lag over every reading (nil: no readings).
	LagMS *Quantiles `json:"lag_ms"`
	Lanes Lanes      `json:"lanes"`
	// CorrectedLagMS is lag plus the turbine's estimated clock offset: the
	// network delay, which the recommendation is read from.
	CorrectedLagMS *Quantiles `json:"corrected_lag_ms"`
	Turbines       Turbines   `json:"turbines"`
	Early          Early      `json:"early"`
	// RecommendedAllowedLatenessS is Rule applied (nil: no readings).
	RecommendedAllowedLatenessS *int32     `json:"recommended_allowed_lateness_s"`
	RecommendationRule          string     `json:"recommendation_rule"`
	RecommendationReason        string     `json:"recommendation_reason"`
	Resolution                  Resolution `json:"resolution"`
	// Shards is every shard holding turbines of the farm (all were asked);
	// ShardsFailed those that did not answer, whose readings are missing.
	Shards       []string       `json:"shards"`
	ShardsFailed []ShardFailure `json:"shards_failed"`
	Partial      bool           `json:"partial"`
	Notes        []string       `json:"notes"`
}

// Quantiles of lag, ms. A quantile is nearest-rank, read off the merged
// histogram: the largest lag in the bucket holding it (at most one bucket
// width above the exact value, never below). Min and max are exact.
type Quantiles struct {
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Lanes splits the readings by the farm's lane threshold.
type Lanes struct {
	Live     Lane `json:"live"`     // lag <= lane threshold
	Backfill Lane `json:"backfill"` // lag > lane threshold
}

// Lane is one lane's count and quantiles (nil when it has no readings).
type Lane struct {
	Readings int64      `json:"readings"`
	LagMS    *Quantiles `json:"lag_ms"`
}

// Turbines is the clock offset estimates: how many turbines had readings,
// and the worst by |estimate|.
type Turbines struct {
	Measured  int       `json:"measured"`
	Estimator string    `json:"estimator"`
	Worst     []Turbine `json:"worst"`
}

// Turbine is one turbine's estimate.
type Turbine struct {
	ID    string `json:"turbine_id"`
	Shard string `json:"shard"`
	// ClockOffsetMS is the estimated offset of its clock: positive = ahead.
	ClockOffsetMS float64 `json:"clock_offset_ms"`
	Readings      int64   `json:"readings"`
	// Windows is how many 10-minute windows the estimate is the median of.
	Windows  int32   `json:"windows"`
	Early    int64   `json:"early"`
	MinLagMS float64 `json:"min_lag_ms"`
}

// Early counts readings stamped ahead of their arrival by more than the
// farm's early tolerance (lag < -tolerance).
type Early struct {
	ToleranceMS int64 `json:"tolerance_ms"`
	Readings    int64 `json:"readings"`
	Turbines    int   `json:"turbines"`
}

// Resolution describes the histogram's buckets (read off the bounds).
type Resolution struct {
	FineWidthMS         int64   `json:"fine_width_ms"`
	FineLimitMS         int64   `json:"fine_limit_ms"`
	CoarseRelativeWidth float64 `json:"coarse_relative_width"`
	OuterLimitMS        int64   `json:"outer_limit_ms"`
	Description         string  `json:"description"`
}

// ShardFailure names a shard that did not answer, and why.
type ShardFailure struct {
	Shard string `json:"shard"`
	Error string `json:"error"`
}

func newReport(w window, asked []string, failed []ShardFailure, quantiles []controldb.LatenessQuantilesRow,
	worst []controldb.LatenessTurbineRankRow, res controldb.LatenessResolutionRow) *Report {
	// Shown in the farm's zone (the instants are the control database's).
	loc, err := time.LoadLocation(w.farm.Timezone)
	if err != nil {
		loc = time.UTC
	}
	r := &Report{
		Farm: w.farm.ID, Timezone: w.farm.Timezone, From: w.from.In(loc), To: w.to.In(loc),
		LaneThresholdMS: w.laneThresholdMS, EarlyToleranceMS: w.earlyToleranceMS,
		Turbines:           Turbines{Estimator: Estimator, Worst: []Turbine{}},
		Early:              Early{ToleranceMS: w.earlyToleranceMS},
		RecommendationRule: Rule,
		Shards:             asked, ShardsFailed: failed, Partial: len(failed) > 0,
		Resolution: Resolution{
			FineWidthMS: res.FineWidthMs, FineLimitMS: res.FineLimitMs,
			CoarseRelativeWidth: res.CoarseRelativeWidth, OuterLimitMS: res.OuterLimitMs,
		},
	}
	if r.Shards == nil {
		r.Shards = []string{}
	}
	if r.ShardsFailed == nil {
		r.ShardsFailed = []ShardFailure{}
	}
	r.Resolution.Description = fmt.Sprintf("lag buckets %d ms wide within ±%s, at most %.2f %% of the lag wide beyond (open-ended past ±%s); "+
		"a quantile is the largest lag in its bucket: at most one bucket width above the exact value, never below; min and max are exact",
		res.FineWidthMs, formatLag(float64(res.FineLimitMs)), 100*res.CoarseRelativeWidth, days(res.OuterLimitMs))
	var corrected, all *controldb.LatenessQuantilesRow
	for i := range quantiles {
		row := &quantiles[i]
		switch row.Series {
		case "all":
			all = row
			r.Readings, r.LagMS = row.Readings, quantilesOf(row)
		case "live":
			r.Lanes.Live = Lane{Readings: row.Readings, LagMS: quantilesOf(row)}
		case "backfill":
			r.Lanes.Backfill = Lane{Readings: row.Readings, LagMS: quantilesOf(row)}
		case "corrected":
			corrected = row
			r.CorrectedLagMS = quantilesOf(row)
		}
	}
	for _, t := range worst { // every row carries the totals over all turbines measured
		r.Turbines.Measured, r.Early.Readings, r.Early.Turbines = int(t.TurbinesMeasured), t.EarlyReadings, int(t.TurbinesWithEarly)
		r.Turbines.Worst = append(r.Turbines.Worst, Turbine{
			ID: t.TurbineID, Shard: t.ShardName, ClockOffsetMS: t.ClockOffsetMs, Readings: t.Readings,
			Windows: t.Windows, Early: t.Early, MinLagMS: t.MinLagMs,
		})
	}
	r.RecommendationReason = "no readings in the range: nothing to recommend from"
	if corrected != nil && all != nil {
		s := corrected.AllowedLatenessS
		r.RecommendedAllowedLatenessS = &s
		r.RecommendationReason = fmt.Sprintf("p99 of clock-corrected lag is %s over %d readings, so %d s is the smallest positive multiple of 5 s at or above it "+
			"(p99 of raw lag, clocks as they are: %s)", formatLag(corrected.P99Ms), corrected.Readings, s, formatLag(all.P99Ms))
	}
	r.Notes = []string{
		"estimator: " + Estimator,
		"recommendation: " + Rule,
		"resolution: " + r.Resolution.Description,
		fmt.Sprintf("lanes: live when lag <= %s, backfill beyond (farm_rules.lane_threshold_ms); early when lag < -%s (farm_rules.early_tolerance_ms)",
			formatLag(float64(w.laneThresholdMS)), formatLag(float64(w.earlyToleranceMS))),
	}
	if r.Partial {
		names := make([]string, len(failed))
		for i, f := range failed {
			names[i] = f.Shard
		}
		r.Notes = append(r.Notes, "PARTIAL: shard(s) "+strings.Join(names, ", ")+" did not answer; their turbines' readings are missing from every number here")
		r.RecommendationReason += "; PARTIAL: without shard(s) " + strings.Join(names, ", ")
	}
	return r
}

func quantilesOf(row *controldb.LatenessQuantilesRow) *Quantiles {
	return &Quantiles{Min: row.MinMs, P50: row.P50Ms, P95: row.P95Ms, P99: row.P99Ms, P999: row.P999Ms, Max: row.MaxMs}
}

// formatLag prints a lag given in ms: as seconds to the millisecond, or
// under a second as ms to the µs.
func formatLag(ms float64) string {
	if ms > -1000 && ms < 1000 {
		return fmt.Sprintf("%.3f ms", ms)
	}
	return fmt.Sprintf("%.3f s", ms/1000)
}

func days(ms int64) string {
	return fmt.Sprintf("%d days", ms/86_400_000)
}
