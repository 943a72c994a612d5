package server

import (
	"fmt"
	"math"
	"time"

	"github.com/galewatch/galewatch/internal/localday"
)

// Charts are inline SVG drawn by the page template from the geometry
// computed here: no script, no external asset. Each chart has one slot per
// day of the month, so a missing day is a visible gap, not a shifted bar.

// Chart is one SVG chart.
type Chart struct {
	// ID is unique in the page (SVG pattern ids are document-wide).
	ID            string
	Kind          string // "availability" or "divergence"
	Title         string
	Width, Height float64
	// The plot area inside the axes.
	Left, Top, PlotW, PlotH float64
	Bars                    []Bar
	Points                  []Point
	Lines                   []Line
	YTicks, XTicks          []Tick
	// Legend entries, drawn under the plot.
	Legend []LegendEntry
	// Note is shown instead of a plot when there is nothing to draw.
	Note string
}

// Bar is one bar of a chart.
type Bar struct {
	X, Y, W, H float64
	Class      string
	Day        string
	Title      string
}

// Point is one marker of a chart.
type Point struct {
	X, Y, R float64
	Class   string
	Day     string
	Title   string
}

// Line is a horizontal threshold line with its label.
type Line struct {
	X1, X2, Y      float64
	Class, Label   string
	LabelX, LabelY float64
}

// Tick is an axis label (and, for the y axis, a grid line).
type Tick struct {
	X, Y  float64
	Label string
}

// LegendEntry is one entry of a chart's legend.
type LegendEntry struct {
	X     float64
	Class string
	Label string
}

// chartSize is a chart's outer size; compact is the overview's.
func chartSize(compact bool) (w, h float64) {
	if compact {
		return 560, 170
	}
	return 900, 260
}

func newChart(id, kind, title string, compact bool) *Chart {
	w, h := chartSize(compact)
	return &Chart{ID: id, Kind: kind, Title: title, Width: w, Height: h, Left: 44, Top: 12, PlotW: w - 44 - 12, PlotH: h - 12 - 46}
}

// slot returns the x of the left edge and the width of day i's slot.
func (c *Chart) slot(i, n int) (x, w float64) {
	w = c.PlotW / float64(n)
	return c.Left + float64(i)*w, w
}

// y maps v in [lo, hi] to the plot's height (hi at the top).
func (c *Chart) y(v, lo, hi float64) float64 {
	v = math.Max(lo, math.Min(hi, v))
	return c.Top + c.PlotH*(1-(v-lo)/(hi-lo))
}

// dayTicks labels the 1st, every 5th day and the last of the month.
func (c *Chart) dayTicks(first localday.Date, n int) {
	for i := 0; i < n; i++ {
		d := i + 1
		if d == 1 || d%5 == 0 && n-d >= 2 || d == n {
			x, w := c.slot(i, n)
			c.XTicks = append(c.XTicks, Tick{X: x + w/2, Y: c.Top + c.PlotH + 14, Label: fmt.Sprint(d)})
		}
	}
	c.XTicks = append(c.XTicks, Tick{X: c.Left + c.PlotW/2, Y: c.Top + c.PlotH + 28, Label: first.Month.String() + " " + fmt.Sprint(first.Year) + " (farm-local days)"})
}

// dayIndex is d's slot in the month starting at first (-1 outside it).
func dayIndex(first localday.Date, n int, day string) int {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return -1
	}
	i := daysBetween(first, localday.DateOf(d))
	if i < 0 || i >= n {
		return -1
	}
	return i
}

// availabilityChart draws a month's daily availability (bars) and
// completeness (points) with the warranty line. A provisional day's bar is
// hatched, an incomplete day's another colour.
func availabilityChart(id string, first localday.Date, days []Day, warranty float64, compact bool) *Chart {
	n := daysBetween(first, monthEnd(first)) + 1
	c := newChart(id, "availability", "Daily availability (bars) and completeness (dots), farm-local days", compact)
	c.percentAxis()
	c.dayTicks(first, n)
	for _, d := range days {
		i := dayIndex(first, n, d.Day)
		if i < 0 || d.Availability == nil {
			continue
		}
		class := "bar availability"
		label := ""
		if d.Provisional() {
			class += " provisional"
			label = " (provisional)"
		} else if d.Incomplete() {
			class += " incomplete"
			label = " (incomplete: information unavailable)"
		}
		c.Bars = append(c.Bars, c.bar(i, n, *d.Availability, class, d.Day, fmt.Sprintf("%s availability %s%s", d.Day, pct(d.Availability), label)))
		if d.Completeness != nil {
			x, w := c.slot(i, n)
			c.Points = append(c.Points, Point{X: x + w/2, Y: c.y(*d.Completeness, 0, 1), R: math.Min(3.5, w*0.3), Class: "point completeness", Day: d.Day,
				Title: fmt.Sprintf("%s completeness %s%s", d.Day, pct(d.Completeness), label)})
		}
	}
	c.warrantyLine(warranty, fmt.Sprintf("warranty %s", pct(&warranty)))
	c.Legend = []LegendEntry{{X: c.Left, Class: "availability", Label: "availability"}, {X: c.Left + 110, Class: "provisional", Label: "provisional"},
		{X: c.Left + 210, Class: "incomplete", Label: "incomplete"}, {X: c.Left + 310, Class: "completeness", Label: "completeness"}}
	if len(c.Bars) == 0 {
		c.Note = "no numbers for this month yet"
	}
	return c
}

// contractYearChart draws a contract year's months (bars: the contractual
// availability of each month's rolled-up days) against the year's
// warranty. A slot per month of the year, so a month without a rolled-up
// day is a gap, not a zero.
func contractYearChart(id string, y *ContractYear) *Chart {
	const n = 12
	c := newChart(id, "contract-year", fmt.Sprintf("Contract year %s to %s, %s: contractual availability per contract month", y.FirstDay, y.LastDay, y.Contract), false)
	c.percentAxis()
	for i := 0; i < n; i++ {
		x, w := c.slot(i, n)
		c.XTicks = append(c.XTicks, Tick{X: x + w/2, Y: c.Top + c.PlotH + 14, Label: y.first.AddDate(0, i, 0).Format("Jan 2006")})
	}
	c.XTicks = append(c.XTicks, Tick{X: c.Left + c.PlotW/2, Y: c.Top + c.PlotH + 28, Label: fmt.Sprintf("contract months from %s (farm-local days, to %s)", y.FirstDay, y.ToDate)})
	for _, m := range y.Months {
		i := (m.first.Year()-y.first.Year())*12 + int(m.first.Month()-y.first.Month())
		if i < 0 || i >= n || m.ContractualAvailabilityPct == nil {
			continue
		}
		class, warranty := "bar contract-month", y.WarrantyPct
		if m.WarrantyPct != nil {
			warranty = *m.WarrantyPct
		}
		if *m.ContractualAvailabilityPct < warranty {
			class += " below"
		}
		c.Bars = append(c.Bars, c.bar(i, n, *m.ContractualAvailabilityPct/100, class, m.FirstDay,
			fmt.Sprintf("%s to %s: contractual %s over %d rolled-up day%s (warranty %.1f %%)", m.FirstDay, m.LastDay, pct100(m.ContractualAvailabilityPct), m.Days, plural(m.Days), warranty)))
	}
	label := fmt.Sprintf("warranty %.1f %%", y.WarrantyPct)
	if y.WarrantyFrom == "latest period" {
		label += " (the latest period's)"
	}
	c.warrantyLine(y.WarrantyPct/100, label)
	c.Legend = []LegendEntry{{X: c.Left, Class: "contract-month", Label: "contractual availability"}, {X: c.Left + 170, Class: "below", Label: "below the warranty"}}
	if len(c.Bars) == 0 {
		c.Note = "no day of the year rolled up yet"
	}
	return c
}

// percentAxis labels the y axis from 0 to 100 %: a low figure is a short
// bar, never a stub on a cut axis.
func (c *Chart) percentAxis() {
	for v := 0.0; v <= 1+1e-9; v += tickStep(1) {
		c.YTicks = append(c.YTicks, Tick{X: c.Left - 6, Y: c.y(v, 0, 1), Label: fmt.Sprintf("%.0f %%", v*100)})
	}
}

// bar is the bar of slot i of n up to v, a fraction on the percent axis.
func (c *Chart) bar(i, n int, v float64, class, key, title string) Bar {
	x, w := c.slot(i, n)
	top := c.y(v, 0, 1)
	return Bar{X: x + w*0.18, Y: top, W: w * 0.64, H: c.Top + c.PlotH - top, Class: class, Day: key, Title: title}
}

// warrantyLine draws the warranty (a fraction) across the plot, labelled.
func (c *Chart) warrantyLine(warranty float64, label string) {
	wy := c.y(warranty, 0, 1)
	c.Lines = append(c.Lines, Line{X1: c.Left, X2: c.Left + c.PlotW, Y: wy, Class: "threshold warranty", Label: label, LabelX: c.Left + c.PlotW - 2, LabelY: wy - 3})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// tickStep is a y-axis step giving 3 to 6 ticks over span (a fraction).
func tickStep(span float64) float64 {
	for _, s := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.25} {
		if span/s <= 5 {
			return s
		}
	}
	return 0.25
}

// divergenceChart draws a month's fast-vs-final divergence per day (the
// larger of received and available, per mille of the final) with the
// farm's alert threshold.
func divergenceChart(id string, first localday.Date, days []Day, thresholdPM int, compact bool) *Chart {
	n := daysBetween(first, monthEnd(first)) + 1
	c := newChart(id, "divergence", "Fast vs final divergence per day (per mille of the final)", compact)
	hi := float64(thresholdPM) * 1.5
	for _, d := range days {
		if d.Divergence != nil {
			hi = math.Max(hi, math.Abs(d.Divergence.PM))
		}
	}
	hi = niceCeil(hi)
	for k := 0; k <= 4; k++ {
		v := hi * float64(k) / 4
		c.YTicks = append(c.YTicks, Tick{X: c.Left - 6, Y: c.y(v, 0, hi), Label: trimFloat(v) + " ‰"})
	}
	c.dayTicks(first, n)
	for _, d := range days {
		i := dayIndex(first, n, d.Day)
		if i < 0 || d.Divergence == nil {
			continue
		}
		x, w := c.slot(i, n)
		v := math.Abs(d.Divergence.PM)
		// A day measured at 0 per mille still shows a sliver: measured,
		// not missing.
		top := math.Min(c.y(v, 0, hi), c.Top+c.PlotH-1.5)
		class := "bar divergence"
		if v > float64(thresholdPM) {
			class += " over"
		}
		c.Bars = append(c.Bars, Bar{X: x + w*0.18, Y: top, W: w * 0.64, H: c.Top + c.PlotH - top, Class: class, Day: d.Day,
			Title: fmt.Sprintf("%s divergence %s (received %s, available %s; %d windows)", d.Day, permille(d.Divergence.PM),
				permille(d.Divergence.ReceivedPM), permille(d.Divergence.AvailablePM), d.Divergence.Windows)})
	}
	ty := c.y(float64(thresholdPM), 0, hi)
	c.Lines = append(c.Lines, Line{X1: c.Left, X2: c.Left + c.PlotW, Y: ty, Class: "threshold divergence-threshold",
		Label: fmt.Sprintf("alert above %d ‰", thresholdPM), LabelX: c.Left + c.PlotW - 2, LabelY: ty - 3})
	c.Legend = []LegendEntry{{X: c.Left, Class: "divergence", Label: "divergence"}, {X: c.Left + 110, Class: "over", Label: "above the threshold"}}
	if len(c.Bars) == 0 {
		c.Note = "no day measured fast against final yet"
	}
	return c
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// SilentStrip is a turbine's day of local hours (24, or 23/25 on a clock
// change) on a green background, its silent hours drawn red on it.
type SilentStrip struct {
	Width, Height float64
	Silent        []Bar
}

// silentStrip draws a turbine's silent hours over a day of hours hours.
func silentStrip(silent []int, hours int) SilentStrip {
	s := SilentStrip{Width: float64(hours) * 6, Height: 12}
	for _, h := range silent {
		if h >= 0 && h < hours {
			s.Silent = append(s.Silent, Bar{X: float64(h) * 6, Y: 0, W: 6, H: 12, Class: "hour silent", Title: fmt.Sprintf("silent %02d:00-%02d:00", h, h+1)})
		}
	}
	return s
}

// rounded rounds the geometry to a tenth of a pixel, so the SVG carries no
// 15-digit coordinates.
func (c *Chart) rounded() *Chart {
	r := func(v *float64) { *v = math.Round(*v*10) / 10 }
	for i := range c.Bars {
		b := &c.Bars[i]
		r(&b.X)
		r(&b.Y)
		r(&b.W)
		r(&b.H)
	}
	for i := range c.Points {
		p := &c.Points[i]
		r(&p.X)
		r(&p.Y)
		r(&p.R)
	}
	for i := range c.Lines {
		l := &c.Lines[i]
		r(&l.X1)
		r(&l.X2)
		r(&l.Y)
		r(&l.LabelX)
		r(&l.LabelY)
	}
	for _, ts := range [][]Tick{c.YTicks, c.XTicks} {
		for i := range ts {
			r(&ts[i].X)
			r(&ts[i].Y)
		}
	}
	return c
}
