package lateness

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText prints the report for an operator.
func (r *Report) WriteText(out io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Lateness of %s (%s): readings with recorded_at in [%s, %s)\n", r.Farm, r.Timezone,
		r.From.Format(time.RFC3339), r.To.Format(time.RFC3339))
	if r.Partial {
		fmt.Fprintf(&b, "PARTIAL: %d of %d shard(s) did not answer; their readings are missing from every number below:\n", len(r.ShardsFailed), len(r.Shards))
		for _, f := range r.ShardsFailed {
			fmt.Fprintf(&b, "  shard %s: %s\n", f.Shard, f.Error)
		}
	} else {
		fmt.Fprintf(&b, "shards: %s (all answered)\n", strings.Join(r.Shards, ", "))
	}
	fmt.Fprintf(&b, "rules (farm_rules): live lane when lag <= %s, early when lag < -%s\n\n",
		formatLag(float64(r.LaneThresholdMS)), formatLag(float64(r.EarlyToleranceMS)))

	fmt.Fprintln(&b, "lag = received_at - recorded_at")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\treadings\tmin\tp50\tp95\tp99\tp99.9\tmax\t")
	row := func(name string, n int64, q *Quantiles) {
		if q == nil {
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t-\t-\t-\t\n", name, n)
			return
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, n, formatLag(q.Min), formatLag(q.P50),
			formatLag(q.P95), formatLag(q.P99), formatLag(q.P999), formatLag(q.Max))
	}
	row("all", r.Readings, r.LagMS)
	row("live", r.Lanes.Live.Readings, r.Lanes.Live.LagMS)
	row("backfill", r.Lanes.Backfill.Readings, r.Lanes.Backfill.LagMS)
	row("clock-corrected", r.Readings, r.CorrectedLagMS)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "resolution: %s\n\n", r.Resolution.Description)

	fmt.Fprintf(&b, "clock offsets: %d turbine(s) measured; the %d with the largest |offset| (positive = clock ahead):\n",
		r.Turbines.Measured, len(r.Turbines.Worst))
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  turbine\tshard\toffset\tearly\treadings\twindows\t")
	for _, t := range r.Turbines.Worst {
		fmt.Fprintf(tw, "  %s\t%s\t%+.3f s\t%d\t%d\t%d\t\n", t.ID, t.Shard, t.ClockOffsetMS/1000, t.Early, t.Readings, t.Windows)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "estimator: %s\n\n", r.Turbines.Estimator)

	fmt.Fprintf(&b, "early readings (lag < -%s): %d, from %d turbine(s)\n\n", formatLag(float64(r.EarlyToleranceMS)), r.Early.Readings, r.Early.Turbines)

	if r.RecommendedAllowedLatenessS != nil {
		fmt.Fprintf(&b, "recommended allowed lateness: %d s\n", *r.RecommendedAllowedLatenessS)
	} else {
		fmt.Fprintln(&b, "recommended allowed lateness: none")
	}
	fmt.Fprintf(&b, "  rule:   %s\n  reason: %s\n", r.RecommendationRule, r.RecommendationReason)
	_, err := io.WriteString(out, b.String())
	return err
}
