package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/db/sharddb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/report"
)

// The read model shared by the status page and the JSON API: both show the
// same values, built here from the control database's views and the shards'
// dirty backlog. Stored numbers are counts; the rates are computed here,
// when they are shown.

// Farm is a farm and what frames its numbers.
type Farm struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Timezone string   `json:"timezone"`
	Turbines int      `json:"turbines"`
	Shards   []string `json:"shards"`
	// Today is the farm-local date at the server's clock.
	Today string `json:"today"`
	// WindowS, AllowedLatenessS, DivergenceAlertPM and CompletenessAlertPM
	// are the rules in force (farm_rules).
	WindowS             int `json:"window_s"`
	AllowedLatenessS    int `json:"allowed_lateness_s"`
	DivergenceAlertPM   int `json:"divergence_alert_pm"`
	CompletenessAlertPM int `json:"completeness_alert_pm"`

	loc   *time.Location
	today localday.Date
}

// errUnknownFarm is returned for a farm id the registry does not hold.
var errUnknownFarm = errors.New("unknown farm")

// farms lists every farm, or the one named by id (errUnknownFarm if none).
func (s *Server) farms(ctx context.Context, id *string) ([]Farm, error) {
	rows, err := controldb.New(s.Control).FarmStatusList(ctx, controldb.FarmStatusListParams{Now: s.Now(), FarmID: id})
	if err != nil {
		return nil, fmt.Errorf("farms: %w", err)
	}
	if id != nil && len(rows) == 0 {
		return nil, fmt.Errorf("%w %q", errUnknownFarm, *id)
	}
	out := make([]Farm, len(rows))
	for i, r := range rows {
		loc, err := time.LoadLocation(r.Timezone)
		if err != nil {
			return nil, fmt.Errorf("farm %s: zone %q: %w", r.ID, r.Timezone, err)
		}
		today := localday.Of(s.Now(), loc)
		out[i] = Farm{
			ID: r.ID, Name: r.Name, Timezone: r.Timezone, Turbines: int(r.Turbines), Shards: r.Shards,
			Today: today.String(), WindowS: int(r.WindowS), AllowedLatenessS: int(r.AllowedLatenessS),
			DivergenceAlertPM: int(r.DivergenceAlertPm), CompletenessAlertPM: int(r.CompletenessAlertPm),
			loc: loc, today: today,
		}
	}
	return out, nil
}

// farm is one farm (errUnknownFarm if the registry does not hold it).
func (s *Server) farm(ctx context.Context, id string) (Farm, error) {
	f, err := s.farms(ctx, &id)
	if err != nil {
		return Farm{}, err
	}
	return f[0], nil
}

// Shown is a number as every surface shows it: its counts and provenance
// (internal/provenance), with the rates computed from the counts.
type Shown struct {
	provenance.Provenance
	// Availability is available / expected, Completeness received /
	// expected; null when nothing is expected.
	Availability *float64 `json:"availability"`
	Completeness *float64 `json:"completeness"`
}

func show(p provenance.Provenance) Shown {
	return Shown{Provenance: p, Availability: rate(p.Available, p.Expected), Completeness: rate(p.Received, p.Expected)}
}

func rate(n, of int64) *float64 {
	if of == 0 {
		return nil
	}
	r := float64(n) / float64(of)
	return &r
}

// Divergence is a day's fast number against its final one, as last
// measured (reconciliation_pm).
type Divergence struct {
	// Windows is how many windows of the day have both a fast and a final row.
	Windows        int   `json:"windows"`
	FastReceived   int64 `json:"fast_received"`
	FinalReceived  int64 `json:"final_received"`
	FastAvailable  int64 `json:"fast_available"`
	FinalAvailable int64 `json:"final_available"`
	// ReceivedPM and AvailablePM are (final - fast) / final in per mille;
	// PM is the larger in size, which is what the farm's threshold (a
	// divergence alert above it) is compared with.
	ReceivedPM  float64   `json:"received_pm"`
	AvailablePM float64   `json:"available_pm"`
	PM          float64   `json:"pm"`
	ThresholdPM int       `json:"threshold_pm"`
	MeasuredAt  time.Time `json:"measured_at"`
	// Alert: a divergence alert was raised for the day.
	Alert bool `json:"alert"`
}

// Day is one farm-local day as shown: the monthly report's row (its counts,
// rates, provenance and status, by the report's one rule), and beside it
// the day's windows, divergence, alerts and late readings still on a shard.
type Day struct {
	ReportDay
	// Windows are the day's windows published so far, FinalWindows those
	// with a final row, Revision the sum of their revisions
	// (day_provenance). WindowsDue is how many of the day's windows are
	// past the watermark at the server's clock (all of them once the day
	// has closed): a day not rolled up sums Windows of them, so fewer
	// means its figure covers only part of it.
	Windows      int   `json:"windows"`
	WindowsDue   int   `json:"windows_due"`
	FinalWindows int   `json:"final_windows"`
	Revision     int64 `json:"revision"`
	// Divergence is null until a final row of one of the day's windows has
	// been measured against its fast row.
	Divergence        *Divergence `json:"divergence"`
	CompletenessAlert bool        `json:"completeness_alert"`
	// LateReadingsWaiting: readings of the day are on a shard under a dirty
	// mark the drain has not turned into a recompute request yet (within a
	// minute, or while the control database or the shard is unreachable).
	// The report cannot see them; the day may still change.
	LateReadingsWaiting bool `json:"late_readings_waiting"`
}

// ReportDay is a day of the monthly report (an alias, so that a Day's
// fields are the report's: d.Day is the date).
type ReportDay = report.Day

// Provisional reports whether the day may still change by the report's rule.
func (d Day) Provisional() bool { return d.Status == report.StatusProvisional }

// Incomplete: settled, but too many slots without a reading to be final
// (information unavailable), and not accepted.
func (d Day) Incomplete() bool { return d.Status == report.StatusIncomplete }

// monthsOf lists the months (YYYY-MM) from from's to to's.
func monthsOf(from, to localday.Date) []string {
	var out []string
	for m := monthOf(from); daysBetween(m, to) >= 0; m = addMonths(m, 1) {
		out = append(out, monthParam(m))
	}
	return out
}

// days lists the farm's days in [from, to] that have a number (the report's
// rows with a source), and the reports of the months they fall in; marked
// are the days with late readings waiting on a shard (Backlog.days).
func (s *Server) days(ctx context.Context, f Farm, from, to localday.Date, marked []time.Time) ([]Day, []report.Month, error) {
	extras, err := controldb.New(s.Control).FarmDayStatusExtras(ctx, controldb.FarmDayStatusExtrasParams{FarmID: f.ID, Now: s.Now(), FromDay: from.UTC(), ToDay: to.UTC()})
	if err != nil {
		return nil, nil, fmt.Errorf("farm %s days %s..%s: %w", f.ID, from, to, err)
	}
	byDay := make(map[string]controldb.FarmDayStatusExtrasRow, len(extras))
	for _, e := range extras {
		byDay[e.Day.Format(time.DateOnly)] = e
	}
	out := []Day{}
	var months []report.Month
	for _, month := range monthsOf(from, to) {
		m, err := report.MonthlyAt(ctx, s.Control, f.ID, month, s.Now())
		if err != nil {
			return nil, nil, err
		}
		months = append(months, m)
		for _, rd := range m.Days {
			if rd.Source == "" || rd.Day < from.String() || rd.Day > to.String() {
				continue
			}
			d := Day{ReportDay: rd}
			if e, ok := byDay[rd.Day]; ok {
				d.Windows, d.WindowsDue, d.FinalWindows, d.Revision, d.CompletenessAlert = int(e.Windows), int(e.WindowsDue), int(e.FinalWindows), e.Revision, e.CompletenessAlert
				if e.Reconciled {
					pm := e.ReceivedDivergencePm
					if abs(e.AvailableDivergencePm) > abs(pm) {
						pm = e.AvailableDivergencePm
					}
					d.Divergence = &Divergence{
						Windows: int(e.ReconciledWindows), FastReceived: e.FastReceived, FinalReceived: e.FinalReceived,
						FastAvailable: e.FastAvailable, FinalAvailable: e.FinalAvailable,
						ReceivedPM: e.ReceivedDivergencePm, AvailablePM: e.AvailableDivergencePm, PM: pm,
						ThresholdPM: f.DivergenceAlertPM, MeasuredAt: e.ReconciledAt, Alert: e.DivergenceAlert,
					}
				}
			}
			d.LateReadingsWaiting = slices.ContainsFunc(marked, func(t time.Time) bool { return t.Format(time.DateOnly) == rd.Day })
			out = append(out, d)
		}
	}
	return out, months, nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Turbine is one turbine's day.
type Turbine struct {
	TurbineID string `json:"turbine_id"`
	Shard     string `json:"shard"`
	// RolledUp: its turbine_day row exists. InService: the registry has it
	// in service that day (a row of a retired turbine is kept).
	RolledUp      bool     `json:"rolled_up"`
	InService     bool     `json:"in_service"`
	Expected      int64    `json:"expected"`
	Received      int64    `json:"received"`
	Available     int64    `json:"available"`
	Availability  *float64 `json:"availability"`
	Completeness  *float64 `json:"completeness"`
	Late          int64    `json:"late"`
	Early         int64    `json:"early"`
	BeyondCadence int64    `json:"beyond_cadence"`
	OutOfService  int64    `json:"out_of_service"`
	// MinLagMS is the day's smallest received_at - recorded_at; its
	// negation ClockOffsetMS estimates the turbine's clock offset
	// (positive = ahead), plus the fastest delivery of the day.
	MinLagMS      *int64 `json:"min_lag_ms"`
	MaxLagMS      *int64 `json:"max_lag_ms"`
	ClockOffsetMS *int64 `json:"clock_offset_ms"`
	// SilentHours are the local hours (0 = from local midnight) in which
	// the turbine expected readings and received none.
	SilentHours    []int      `json:"silent_hours"`
	LastReceivedAt *time.Time `json:"last_received_at"`
	ComputedAt     *time.Time `json:"computed_at"`
}

// turbines lists the farm-day's turbines.
func (s *Server) turbines(ctx context.Context, f Farm, day localday.Date) ([]Turbine, error) {
	rows, err := controldb.New(s.Control).TurbineStatusList(ctx, controldb.TurbineStatusListParams{FarmID: f.ID, Day: day.UTC()})
	if err != nil {
		return nil, fmt.Errorf("farm %s day %s turbines: %w", f.ID, day, err)
	}
	out := make([]Turbine, len(rows))
	for i, r := range rows {
		t := Turbine{
			TurbineID: r.TurbineID, Shard: r.ShardName, RolledUp: r.RolledUp, InService: r.InService,
			Expected: r.Expected, Received: r.Received, Available: r.Available,
			Availability: rate(r.Available, r.Expected), Completeness: rate(r.Received, r.Expected),
			Late: r.Late, Early: r.Early, BeyondCadence: r.BeyondCadence, OutOfService: r.OutOfService,
			MinLagMS: r.MinLagMs, MaxLagMS: r.MaxLagMs, SilentHours: make([]int, len(r.SilentHours)),
			LastReceivedAt: r.LastReceivedAt, ComputedAt: r.ComputedAt,
		}
		if r.MinLagMs != nil {
			off := -*r.MinLagMs
			t.ClockOffsetMS = &off
		}
		for j, h := range r.SilentHours {
			t.SilentHours[j] = int(h)
		}
		out[i] = t
	}
	return out, nil
}

// Backlog is a farm's dirty backlog: late readings whose recompute has not
// run yet.
type Backlog struct {
	// MarkedDays are the farm-days with a dirty mark on some shard: late
	// readings the drain has not turned into a recompute request yet;
	// MarkReadings the readings under those marks. DirtyWindows are the
	// turbine-windows marked for correction (drained or not) whose
	// recompute has not run.
	MarkedDays   []string `json:"marked_days"`
	MarkReadings int64    `json:"mark_readings"`
	DirtyWindows int64    `json:"dirty_windows"`
	// DirtyWindowsAtLeast: a shard had more marked runs than one read
	// sums (DirtyBacklogGet), so DirtyWindows is a lower bound.
	DirtyWindowsAtLeast bool `json:"dirty_windows_at_least"`
	// OldestMark is when the oldest mark or marked window was written;
	// OldestMarkAgeS its age at the server's clock. Null with no backlog.
	OldestMark     *time.Time `json:"oldest_mark"`
	OldestMarkAgeS *float64   `json:"oldest_mark_age_s"`
	// Requests are drained marks whose rollup job has not started
	// (rollup_pending), OldestRequest the oldest of them.
	Requests      int        `json:"requests"`
	OldestRequest *time.Time `json:"oldest_request"`
	// ShardsFailed names the shards that did not answer: the backlog above
	// is then partial.
	ShardsFailed []string `json:"shards_failed"`

	days []time.Time
}

// shardTimeout bounds one shard's answer to a status read: a shard that is
// down makes the backlog partial, not the page slow.
const shardTimeout = 3 * time.Second

// backlogs returns the dirty backlog of every farm (only of farm when it is
// not nil), keyed by farm id; every farm asked for has an entry.
func (s *Server) backlogs(ctx context.Context, farms []Farm, farm *string) (map[string]*Backlog, error) {
	out := map[string]*Backlog{}
	for _, f := range farms {
		out[f.ID] = &Backlog{MarkedDays: []string{}, ShardsFailed: []string{}}
	}
	reqs, err := controldb.New(s.Control).RollupPendingStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("rollup requests: %w", err)
	}
	for _, r := range reqs {
		if b := out[r.FarmID]; b != nil {
			b.Requests, b.OldestRequest = int(r.Requests), &r.OldestRequestedAt
		}
	}
	type answer struct {
		shard string
		rows  []sharddb.DirtyBacklogGetRow
		err   error
	}
	names := s.Shards.Names()
	answers := make([]answer, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, shardTimeout)
			defer cancel()
			rows, err := sharddb.New(s.Shards.Pool(name)).DirtyBacklogGet(sctx, sharddb.DirtyBacklogGetParams{FarmID: farm})
			answers[i] = answer{shard: name, rows: rows, err: err}
		})
	}
	wg.Wait()
	now := s.Now()
	for _, a := range answers {
		if a.err != nil {
			s.log.Warn("status: dirty backlog", "shard", a.shard, "err", a.err)
			for _, f := range farms {
				if slices.Contains(f.Shards, a.shard) {
					out[f.ID].ShardsFailed = append(out[f.ID].ShardsFailed, a.shard)
				}
			}
			continue
		}
		for _, r := range a.rows {
			b := out[r.FarmID]
			if b == nil {
				continue
			}
			for _, d := range r.MarkedDays {
				if !slices.ContainsFunc(b.days, d.Equal) {
					b.days = append(b.days, d)
				}
			}
			b.MarkReadings += r.MarkReadings
			b.DirtyWindows += r.Windows
			b.DirtyWindowsAtLeast = b.DirtyWindowsAtLeast || r.WindowsCapped
			if b.OldestMark == nil || r.OldestMarkedAt.Before(*b.OldestMark) {
				b.OldestMark = &r.OldestMarkedAt
			}
		}
	}
	for _, b := range out {
		slices.SortFunc(b.days, time.Time.Compare)
		for _, d := range b.days {
			b.MarkedDays = append(b.MarkedDays, d.Format(time.DateOnly))
		}
		if b.OldestMark != nil {
			age := now.Sub(*b.OldestMark).Seconds()
			b.OldestMarkAgeS = &age
		}
	}
	return out, nil
}

// Freshness is how far behind the clock a farm's published numbers are.
type Freshness struct {
	provenance.Freshness
	// BehindS is the server's clock - CompleteThrough, in seconds; null
	// before the first publication.
	BehindS *float64 `json:"behind_s"`
}

// freshnesses returns every farm's freshness, keyed by farm id.
func (s *Server) freshnesses(ctx context.Context) (map[string]Freshness, error) {
	all, err := provenance.Freshnesses(ctx, s.Control)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Freshness, len(all))
	now := s.Now()
	for _, f := range all {
		fr := Freshness{Freshness: f}
		if f.Published {
			b := f.Behind(now).Seconds()
			fr.BehindS = &b
		}
		out[f.FarmID] = fr
	}
	return out, nil
}

// Tile is a farm's live status: its latest window as shown, how fresh it
// is, and what waits to be recomputed.
type Tile struct {
	FarmID string `json:"farm_id"`
	// Published is false until the fast path has published a window of
	// the farm (Window is then null).
	Published bool      `json:"published"`
	Window    *Shown    `json:"window"`
	Freshness Freshness `json:"freshness"`
	Backlog   Backlog   `json:"backlog"`
	// Stalled lists the farm's turbines stalled now (turbine_stall, open):
	// reporting available, producing nothing, while the wind is in range
	// and their neighbours produce.
	Stalled []Stalled `json:"stalled"`
	// ContractYear is the farm's contract year to date; null when its
	// contract has no warranty.
	ContractYear *ContractYear `json:"contract_year"`
}

// Stalled is an open stall of the watcher.
type Stalled struct {
	TurbineID string    `json:"turbine_id"`
	Since     time.Time `json:"since"`       // the first stalled window's start
	Last      time.Time `json:"last_window"` // the latest stalled window's start
	Windows   int32     `json:"windows"`
	Message   string    `json:"message"`
	// FoundLate: the first window was judged stalled by a correction (its
	// readings arrived after the window was published); FoundAt is when,
	// FoundAfterS how long after the window ended (null: not known, a stall
	// from before the watcher kept it).
	FoundLate   bool      `json:"found_late"`
	FoundAt     time.Time `json:"found_at"`
	FoundAfterS *float64  `json:"found_after_s"`
}

// foundAfter is how long after its first window ended a stall was found
// (nil: that window's end is not known).
func foundAfter(at time.Time, firstEnd *time.Time) *float64 {
	if firstEnd == nil {
		return nil
	}
	s := at.Sub(*firstEnd).Seconds()
	return &s
}

// tile builds a farm's tile; fresh and backlog are what freshnesses and
// backlogs returned for it.
func (s *Server) tile(ctx context.Context, f Farm, fresh Freshness, backlog *Backlog) (Tile, error) {
	t := Tile{FarmID: f.ID, Freshness: fresh, Backlog: *backlog, Stalled: []Stalled{}}
	stalls, err := controldb.New(s.Control).StallOpenList(ctx, []string{f.ID})
	if err != nil {
		return Tile{}, err
	}
	for _, st := range stalls {
		t.Stalled = append(t.Stalled, Stalled{TurbineID: st.TurbineID, Since: st.FirstWindow, Last: st.LastWindow, Windows: st.Windows, Message: st.Message,
			FoundLate: st.FoundLate, FoundAt: st.FoundAt, FoundAfterS: foundAfter(st.FoundAt, st.FirstWindowEnd)})
	}
	p, err := provenance.Tile(ctx, s.Control, f.ID)
	switch {
	case errors.Is(err, provenance.ErrNotPublished):
	case err != nil:
		return Tile{}, err
	default:
		w := show(p)
		t.Published, t.Window = true, &w
	}
	return t, nil
}

// ContractYear is a farm's warranty year to date (ContractYearToDate): the
// contract year containing the farm-local today, the contractual
// availability of its rolled-up days against the warranty, the money
// accrued, and its contract months. The year to date always holds today,
// which has not ended, so by the contract year report's rule it is
// provisional until the year is over (report_contract_year).
type ContractYear struct {
	// Year is the calendar year the contract year starts in (orchestrator
	// report contract --year).
	Year     int    `json:"year"`
	FirstDay string `json:"first_day"`
	LastDay  string `json:"last_day"`
	// ToDate is the farm-local today the year runs to.
	ToDate   string `json:"to_date"`
	Contract string `json:"contract"`
	// Days is how many of the year's days are rolled up and counted.
	Days                       int      `json:"days"`
	ContractualAvailabilityPct *float64 `json:"contractual_availability_pct"`
	// WarrantyPct is what the year is held to; WarrantyFrom says whose:
	// "year" (every period's), "latest period" (its periods' warranties
	// differ) or "contract" (no day rolled up yet: the contract counting
	// today).
	WarrantyPct  float64 `json:"warranty_pct"`
	WarrantyFrom string  `json:"warranty_from"`
	// BelowPoints is the warranty minus the contractual availability, in
	// points (negative: above it); null before a day is rolled up.
	BelowPoints *float64 `json:"below_points"`
	// LD (capped at the year's cap: LDCapped) and Bonus are the money
	// accrued so far in Currency, as the database's decimal text; null
	// without such terms.
	LD       *json.Number `json:"ld"`
	LDCapped bool         `json:"ld_capped"`
	Bonus    *json.Number `json:"bonus"`
	Currency string       `json:"currency"`
	// NoReading are the year's rolled-up days with no reading at all, not
	// accepted: the figures count them as unavailable, which says nothing
	// of the turbines.
	NoReading []string `json:"no_reading_days"`
	// Months are the contract months with a rolled-up day, in order.
	Months []ContractMonth `json:"months"`

	first time.Time // FirstDay
}

// ContractMonth is one month of a contract year (from the year's start
// day), over its rolled-up days.
type ContractMonth struct {
	FirstDay                   string   `json:"first_day"`
	LastDay                    string   `json:"last_day"`
	Contract                   string   `json:"contract"`
	Days                       int      `json:"days"`
	ContractualAvailabilityPct *float64 `json:"contractual_availability_pct"`
	// WarrantyPct is null for a month counted under two warranties.
	WarrantyPct *float64 `json:"warranty_pct"`

	first time.Time // FirstDay
}

// Below: the year to date is under its warranty, and no day of it lacks
// every reading (its figure would measure the missing data).
func (y *ContractYear) Below() bool {
	return y != nil && y.BelowPoints != nil && *y.BelowPoints > 0 && len(y.NoReading) == 0
}

// contractYears returns the contract year to date of every farm whose
// contract has a warranty (of farm only, when it is not nil), keyed by
// farm id: one query for the fleet.
func (s *Server) contractYears(ctx context.Context, farm *string) (map[string]*ContractYear, error) {
	rows, err := controldb.New(s.Control).ContractYearToDate(ctx, controldb.ContractYearToDateParams{Now: s.Now(), FarmID: farm})
	if err != nil {
		return nil, fmt.Errorf("contract years: %w", err)
	}
	number := func(s *string) *json.Number {
		if s == nil {
			return nil
		}
		n := json.Number(*s)
		return &n
	}
	out := map[string]*ContractYear{}
	for _, r := range rows {
		y := out[r.FarmID]
		if y == nil {
			y = &ContractYear{NoReading: []string{}, Months: []ContractMonth{}}
			out[r.FarmID] = y
		}
		switch r.Scope {
		case "month":
			y.Months = append(y.Months, ContractMonth{FirstDay: r.FirstDay.Format(time.DateOnly), LastDay: r.LastDay.Format(time.DateOnly),
				Contract: r.Contract, Days: int(r.Days), ContractualAvailabilityPct: r.ContractualAvailabilityPct, WarrantyPct: r.WarrantyPct, first: r.FirstDay})
		case "year":
			y.Year, y.FirstDay, y.LastDay, y.ToDate, y.first = int(r.Year), r.FirstDay.Format(time.DateOnly), r.LastDay.Format(time.DateOnly), r.Today.Format(time.DateOnly), r.FirstDay
			y.Contract, y.Days, y.ContractualAvailabilityPct, y.BelowPoints = r.Contract, int(r.Days), r.ContractualAvailabilityPct, r.BelowPoints
			if r.WarrantyPct != nil {
				y.WarrantyPct = *r.WarrantyPct
			}
			y.WarrantyFrom, y.LD, y.LDCapped, y.Bonus, y.Currency = r.WarrantyFrom, number(r.Ld), r.LdCapped, number(r.Bonus), r.Currency
			for _, d := range r.NoReading {
				y.NoReading = append(y.NoReading, d.Format(time.DateOnly))
			}
		}
	}
	return out, nil
}
