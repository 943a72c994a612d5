package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/report"
	"github.com/galewatch/galewatch/internal/simulate"
)

// Story is the Ardnave Saturday (internal/simulate's ardnave-saturday
// scenario) placed on a recent farm-local Saturday: the day as the link
// delivered it, then the replay of what the writer lost.
type Story struct {
	Farm     string
	Day      localday.Date
	Location *time.Location
	// Start, End bound the farm-local day.
	Start, End time.Time
	// Outage is the scenario's link-down period and lost range on Day.
	Outage simulate.Outage
	// Turbines of the farm; Stopped of those all day.
	Turbines int
	Stopped  []string
	// AfterDay and Final are what the farm-day must read once the day
	// phase, then the replay, have been rolled up.
	AfterDay, Final Counts
	// DayReadings and ReplayReadings are the readings of each phase.
	DayReadings, ReplayReadings int64
	// Windows is how many windows the day has (the farm's window rule,
	// set by New from the registry; 0 when unknown).
	Windows int

	plan         *fleet.Plan
	seed         uint64
	firstTurbine string // to find the farm in the registry
}

// Counts are a farm-day's three stored counts (slots, per the slot rule).
type Counts struct {
	Expected, Received, Available int64
}

// Availability is available / expected.
func (c Counts) Availability() float64 { return ratio(c.Available, c.Expected) }

// Completeness is received / expected.
func (c Counts) Completeness() float64 { return ratio(c.Received, c.Expected) }

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// DefaultSaturday is where the story goes when no day is given: the most
// recent farm-local Saturday that ended before the farm's yesterday began.
// Yesterday is left alone because serve rolls up every farm's yesterday
// when it starts (and nightly at 02:00), which would close the day under
// the story's first delivery.
func DefaultSaturday(now time.Time, loc *time.Location) localday.Date {
	d := localday.Of(now, loc).AddDays(-2)
	for d.UTC().Weekday() != time.Saturday {
		d = d.AddDays(-1)
	}
	return d
}

// NewStory places the story on day (a farm-local date of the scenario's
// farm) with plan's Ardnave Point, and works out what the farm-day must
// read after each phase. Every turbine of the farm must be in service all
// day, and the day's length a whole number of each turbine's cadence, so
// that each reading is exactly one slot.
func NewStory(plan *fleet.Plan, day localday.Date, seed uint64) (*Story, error) {
	cfg, err := simulate.ArdnaveSaturdayOn(plan, day, time.Time{}, simulate.PhaseDay, seed)
	if err != nil {
		return nil, err
	}
	s := &Story{
		Farm: simulate.ArdnaveFarm, Day: day, Location: cfg.Location,
		Start: cfg.From, End: cfg.To, Outage: cfg.Outages[0],
		Turbines: len(cfg.Turbines), Stopped: slices.Clone(cfg.Stopped),
		plan: plan, seed: seed, firstTurbine: cfg.Turbines[0].ID,
	}
	seconds := s.End.Sub(s.Start)
	for _, t := range cfg.Turbines {
		if t.CommissionedAt != nil && t.CommissionedAt.After(s.Start) || t.DecommissionedAt != nil && t.DecommissionedAt.Before(s.End) {
			return nil, fmt.Errorf("the story needs every turbine of %s in service all of %s; %s is not", s.Farm, day, t.ID)
		}
		cadence := time.Duration(t.CadenceSeconds) * time.Second
		if seconds%cadence != 0 {
			return nil, fmt.Errorf("the story needs %s's day (%s) to be a whole number of cadences; %s reports every %s", day, seconds, t.ID, cadence)
		}
		slots := int64(seconds / cadence)
		// Slots starting in the lost range: k with LostFrom <= Start + k·cadence < LostTo.
		lost := ceilDiv(s.Outage.LostTo.Sub(s.Start), cadence) - ceilDiv(s.Outage.LostFrom.Sub(s.Start), cadence)
		available := int64(1)
		if slices.Contains(s.Stopped, t.ID) {
			available = 0
		}
		s.AfterDay.Expected += slots
		s.AfterDay.Received += slots - lost
		s.AfterDay.Available += available * (slots - lost)
		s.Final.Expected += slots
		s.Final.Received += slots
		s.Final.Available += available * slots
		s.DayReadings += slots - lost
		s.ReplayReadings += lost
	}
	return s, nil
}

func ceilDiv(d, step time.Duration) int64 { return int64((d + step - 1) / step) }

// Observation is the farm-day as the pipeline shows it, both ways: as the
// monthly report and the status page show a day (internal/report, the one
// home of "final": its turbine_day rows once rolled up), and its windows as
// shown (day_provenance: the fast and final windows, the tiles' path). A
// window with no reading on any shard gets no row from a correction, so
// after the day phase the windows shown leave (nearly all of) the hole out
// of both sides of the ratio and read close to the streaming answer, 98.67
// %, beside the day's 75.85 %: the story's two numbers from one
// database.
type Observation struct {
	At time.Time
	// Found: the report has counts for the day.
	Found bool
	// Counts, Source ("turbine_day" once rolled up), Status ("final" or
	// "provisional"), Why (what holds it back) and Pending are the
	// report's.
	Counts
	Source, Status, Why string
	Pending             bool
	// Shown are day_provenance's sums over the windows it shows; Path is
	// "final" when every one of them is (empty when none is published),
	// Windows and FinalWindows count them, WindowsPending is its pending.
	Shown                 Counts
	Path                  string
	Windows, FinalWindows int
	WindowsPending        bool
}

// Settled: nothing is pending in either view.
func (o Observation) Settled() bool { return !o.Pending && !o.WindowsPending }

// Complete: every expected slot has been received.
func (o Observation) Complete() bool { return o.Found && o.Received == o.Expected }

// Final: the report's status. After the day phase it is not final but
// incomplete, though the day has ended, was rolled up after it closed and
// nothing is pending: a quarter of it is missing, which only completeness
// tells; final after the replay.
func (o Observation) Final() bool { return o.Found && o.Status == report.StatusFinal }

// Observe reads the story's farm-day at now.
func (s *Story) Observe(ctx context.Context, control *pgxpool.Pool, now time.Time) (Observation, error) {
	o := Observation{At: now}
	month, err := report.MonthlyAt(ctx, control, s.Farm, s.Day.UTC().Format("2006-01"), now)
	if err != nil {
		return o, err
	}
	for _, d := range month.Days {
		if d.Day != s.Day.String() {
			continue
		}
		o.Status, o.Why, o.Pending, o.Source = d.Status, d.Why, d.Pending, d.Source
		if d.Expected != nil && d.Received != nil && d.Available != nil {
			o.Found = true
			o.Counts = Counts{Expected: *d.Expected, Received: *d.Received, Available: *d.Available}
		}
	}
	p, err := provenance.Day(ctx, control, s.Farm, s.Day.UTC())
	switch {
	case errors.Is(err, provenance.ErrNotPublished):
	case err != nil:
		return o, err
	default:
		o.Shown = Counts{Expected: p.Expected, Received: p.Received, Available: p.Available}
		o.Path, o.Windows, o.FinalWindows, o.WindowsPending = p.Path, p.Windows, p.FinalWindows, p.Pending
	}
	return o, nil
}

// Phase ingests one phase of the story ("day" or "replay") at now, through
// in: the readings as the scenario generates them, except that nothing is
// stamped as received after now (a replay arriving now is received now).
// Readings already stored count as duplicates. With lines, only those
// lines of the phase are sent (a sender re-sending what failed: the lines
// are the scenario's sequence numbers, the same every time).
func (s *Story) Phase(ctx context.Context, in *ingest.Ingestor, phase string, now time.Time, lines []ingest.LineRange) (ingest.Summary, error) {
	cfg, err := simulate.ArdnaveSaturdayOn(s.plan, s.Day, now, phase, s.seed)
	if err != nil {
		return ingest.Summary{}, err
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dec, wait := simulate.Stream(gctx, cfg)
	var src reading.Decoder = &receivedBy{dec: dec, now: now}
	if lines != nil {
		src = &onlyLines{dec: src, lines: lines}
	}
	sum, err := in.Ingest(ctx, "demo:"+s.Farm+"/"+s.Day.String()+"/"+phase, src)
	cancel() // an ingest that stopped early leaves the generator waiting
	if _, gerr := wait(); gerr != nil && err == nil && !errors.Is(gerr, context.Canceled) {
		err = gerr
	}
	return sum, err
}

// receivedBy caps received_at at now.
type receivedBy struct {
	dec reading.Decoder
	now time.Time
}

func (r *receivedBy) Next() (*reading.Record, error) {
	rec, err := r.dec.Next()
	if rec != nil && rec.Reading.ReceivedAt.After(r.now) {
		rec.Reading.ReceivedAt = r.now
	}
	return rec, err
}

// onlyLines passes the records whose line is in lines (sorted ranges, as
// ingest reports failed lines), and ends after the last.
type onlyLines struct {
	dec   reading.Decoder
	lines []ingest.LineRange
}

func (o *onlyLines) Next() (*reading.Record, error) {
	for {
		if len(o.lines) == 0 {
			return nil, io.EOF
		}
		rec, err := o.dec.Next()
		if err != nil {
			return rec, err
		}
		for len(o.lines) > 0 && rec.Line > o.lines[0].To {
			o.lines = o.lines[1:]
		}
		if len(o.lines) > 0 && rec.Line >= o.lines[0].From {
			return rec, nil
		}
	}
}
