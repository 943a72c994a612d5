package experiment

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the result beside the study's reference numbers.
func (r Result) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("Watermark experiment through the pipeline: seed %d, %d windows × %d events, %.1f simulated hours in %.0f s\n",
		r.Seed, r.Windows, r.EventsPerWindow, r.SimulatedHours, r.WallSeconds)
	p("events → readings: %s\n\n", r.EventsToReadings)
	p("divergence at publication\tallowed lateness\tmeasured ‰\tmodel ‰\tmedian publish lag\n")
	for _, d := range r.DivergenceAtPublication {
		p("\t%d s\t%.2f\t%.2f\t%d ms\n", d.LatenessS, d.DivergencePerMille, d.ModelPerMille, d.MedianPublishLagMs)
	}
	p("\nopen divergence after close (lateness %s)\thours\tmeasured ‰\tnot yet arrived ‰\tmodel, batch scan ‰\n", DefaultLateness)
	for _, o := range r.OpenDivergence {
		p("\t%.0f\t%.3f\t%.3f\t%.3f\n", o.HoursAfterClose, o.DivergencePerMille, o.NotArrivedPerMille, o.ModelBatchScanPerMille)
	}
	c := r.ArrivalToCorrection
	p("\narrival → correction\t%d readings arrived after publication\tp50 %.1f s\tp99 %.1f s\tmax %.1f s\tuncorrected %d\n",
		c.LateReadings, c.P50S, c.P99S, c.MaxS, c.Uncorrected)
	t := r.TotalWork
	p("total work (rows read / rows ingested)\t%.2f×\tfast %d + corrections %d + day close %d over %d ingested\tmodel %.2f×\n",
		t.Ratio, t.FastRowsRead, t.FinalRowsRead, t.CloseRowsRead, t.RowsIngested, t.ModelRatio)
	p("final counts exact\t%v\t%d drains, %d recomputes, %d ticks\n", r.FinalExact, r.Drains, r.Recomputes, r.Ticks)
	return w.Flush()
}
