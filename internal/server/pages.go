package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/provenance"
	"github.com/galewatch/galewatch/internal/report"
)

// The status page: server-rendered HTML, inline SVG charts, inline CSS, no
// script and nothing fetched from elsewhere (the Content-Security-Policy
// says so to the browser). It shows the read model of status.go, the same
// values the JSON API returns.

//go:embed templates/*.html
var templateFS embed.FS

var pageTemplates = func() map[string]*template.Template {
	funcs := template.FuncMap{
		"rfc3339":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"utc":      func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"plus":     func(a, b float64) float64 { return a + b },
		"minus":    func(a, b float64) float64 { return a - b },
		"half":     func(a float64) float64 { return a / 2 },
		"hasClass": func(classes, c string) bool { return strings.Contains(" "+classes+" ", " "+c+" ") },
		"pct":      pct,
		"pct100":   pct100,
		"mwh":      mwh,
		"permille": permille,
		"count":    provenance.Count,
		"countp":   countp,
		"behind":   behind,
		"offset":   offset,
		"hours":    hoursText,
		"seconds":  seconds,
		"join":     strings.Join,
		"money":    money,
		"nonzero":  nonzero,
		"points":   points,
	}
	out := map[string]*template.Template{}
	for _, name := range []string{"overview", "farm", "day", "error"} {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}()

func (s *Server) routePages() {
	s.mux.HandleFunc("GET /{$}", s.overviewPage)
	s.mux.HandleFunc("GET /farms/{id}", s.farmPage)
	s.mux.HandleFunc("GET /farms/{id}/days/{day}", s.dayPage)
}

// pct shows a rate as a percentage with two decimals.
func pct(r *float64) string {
	if r == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f %%", *r*100)
}

// pct100 shows a percentage the database computed, two decimals.
func pct100(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f %%", *v)
}

// mwh shows energy in MWh, three decimals.
func mwh(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f", *v)
}

// permille shows a per mille value with two decimals.
func permille(v float64) string { return fmt.Sprintf("%.2f ‰", v) }

// money shows an amount the database wrote as decimal text, its thousands
// grouped as every count on the pages is (provenance.Count): 1234567.50 is
// 1,234,567.50.
func money(n *json.Number) string {
	if n == nil {
		return "—"
	}
	whole, frac, dot := strings.Cut(n.String(), ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return n.String()
	}
	if dot {
		return provenance.Count(w) + "." + frac
	}
	return provenance.Count(w)
}

// points shows percentage points, two decimals.
func points(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f", *v)
}

// nonzero: an amount is there and not zero.
func nonzero(n *json.Number) bool {
	if n == nil {
		return false
	}
	f, err := n.Float64()
	return err == nil && f != 0
}

// countp is count of a count that may be missing.
func countp(n *int64) string {
	if n == nil {
		return "—"
	}
	return provenance.Count(*n)
}

// behind shows a number of seconds as a duration ("1 h 02 m", "42 s").
func behind(sec *float64) string {
	if sec == nil {
		return "—"
	}
	d := time.Duration(math.Round(*sec)) * time.Second
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%s%d d %02d h", sign, d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%s%d h %02d m", sign, d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%s%d m %02d s", sign, d/time.Minute, d%time.Minute/time.Second)
	}
	return fmt.Sprintf("%s%d s", sign, d/time.Second)
}

// seconds shows a rule's duration: "1 h", "10 min", "90 s".
func seconds(s int) string {
	switch {
	case s != 0 && s%3600 == 0:
		return fmt.Sprintf("%d h", s/3600)
	case s != 0 && s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	}
	return fmt.Sprintf("%d s", s)
}

// offset shows a clock offset in seconds, signed (positive = ahead).
func offset(ms *int64) string {
	if ms == nil {
		return "—"
	}
	return fmt.Sprintf("%+.3f s", float64(*ms)/1000)
}

// hoursText writes silent hours as ranges: "6–8, 10".
func hoursText(hours []int) string {
	if len(hours) == 0 {
		return "none"
	}
	var parts []string
	for i := 0; i < len(hours); {
		j := i
		for j+1 < len(hours) && hours[j+1] == hours[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", hours[i], hours[j]))
		} else {
			parts = append(parts, strconv.Itoa(hours[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Local writes an instant (a time.Time or *time.Time) in the farm's zone.
func (f Farm) Local(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x != nil {
			t = *x
		}
	}
	if t.IsZero() {
		return "—"
	}
	return t.In(f.loc).Format("2006-01-02 15:04:05 MST")
}

// LocalClock writes an instant's farm-local time of day.
func (f Farm) LocalClock(t time.Time) string { return t.In(f.loc).Format("15:04") }

// provView is a number's provenance as the page writes it.
type provView struct {
	Path                                string
	ComputedAtText, CompleteThroughText string
	Revision                            int64
	Pending                             bool
}

// Prov is the provenance of a shown number, in the farm's zone.
func (f Farm) Prov(s Shown) provView {
	return provView{Path: s.Path, ComputedAtText: f.Local(s.ComputedAt), CompleteThroughText: f.Local(s.CompleteThrough), Revision: s.Revision, Pending: s.Pending}
}

// DayProv is the provenance of a day as shown, in the farm's zone.
func (f Farm) DayProv(d Day) provView {
	return provView{Path: d.Path, ComputedAtText: f.Local(d.ComputedAt), CompleteThroughText: f.Local(d.CompleteThrough), Revision: d.Revision, Pending: d.Pending}
}

type crumb struct{ URL, Label string }

// page is what the layout needs.
type page struct {
	Title  string
	Now    time.Time
	Crumbs []crumb
}

// farmMonth is one farm's month: the overview's section and the farm page.
type farmMonth struct {
	Farm                 Farm
	Month                string // YYYY-MM
	MonthLabel           string
	PrevMonth, NextMonth string
	LastDay              string
	Days                 []Day
	ProvisionalDays      int
	Tile                 Tile
	Availability         *Chart
	Divergence           *Chart
	// Year is the farm's contract year to date (nil: its contract has no
	// warranty), YearChart its months (the farm page only).
	Year      *ContractYear
	YearChart *Chart
	// Month is the month's report: its status, total and what holds it back.
	Report report.Month
	// Waiting lists the month's days with late readings still on a shard.
	Waiting []string
	// Demo is what serve --demo delivers (nil without it).
	Demo *Demo
}

// BeforeFeed: the tile's window ended by the time the demo's live feed fed
// every farm, so it is not the feed's (at most a few readings of turbines
// whose clocks run behind fall in it).
func (fm farmMonth) BeforeFeed() bool {
	return fm.Demo != nil && !fm.Demo.FeedFrom.IsZero() && fm.Tile.Window != nil && !fm.Tile.Window.End.After(fm.Demo.FeedFrom)
}

// FeedDay: day (YYYY-MM-DD) is the farm-local day the demo's live feed
// began in; its windows before the feed have no reading from the demo.
func (fm farmMonth) FeedDay(day string) bool {
	return fm.Demo != nil && !fm.Demo.FeedFrom.IsZero() && localday.Of(fm.Demo.FeedFrom, fm.Farm.loc).String() == day
}

// StoryFarm: the farm is the demo story's.
func (fm farmMonth) StoryFarm() bool { return fm.Demo != nil && fm.Demo.Farm == fm.Farm.ID }

func monthLabel(first localday.Date) string {
	return fmt.Sprintf("%s %d", first.Month, first.Year)
}

func monthParam(first localday.Date) string {
	return fmt.Sprintf("%04d-%02d", first.Year, int(first.Month))
}

func addMonths(first localday.Date, n int) localday.Date {
	return localday.DateOf(time.Date(first.Year, first.Month+time.Month(n), 1, 0, 0, 0, 0, time.UTC))
}

// farmMonth builds a farm's month; chosen is the ?month= or nil for the
// farm-local current month; year is what contractYears returned for it.
func (s *Server) farmMonth(r *http.Request, f Farm, chosen *localday.Date, fresh Freshness, backlog *Backlog, year *ContractYear, compact bool) (farmMonth, error) {
	first := monthOf(f.today)
	if chosen != nil {
		first = *chosen
	}
	last := monthEnd(first)
	days, months, err := s.days(r.Context(), f, first, last, backlog.days)
	if err != nil {
		return farmMonth{}, err
	}
	tile, err := s.tile(r.Context(), f, fresh, backlog)
	if err != nil {
		return farmMonth{}, err
	}
	tile.ContractYear = year
	fm := farmMonth{
		Farm: f, Month: monthParam(first), MonthLabel: monthLabel(first),
		PrevMonth: monthParam(addMonths(first, -1)), NextMonth: monthParam(addMonths(first, 1)), LastDay: last.String(),
		Days: days, Tile: tile, Report: months[0], Demo: s.Demo,
		Availability: availabilityChart("availability-"+f.ID, first, days, s.cfg.Warranty, compact).rounded(),
		Divergence:   divergenceChart("divergence-"+f.ID, first, days, f.DivergenceAlertPM, compact).rounded(),
		Year:         year,
	}
	if year != nil && !compact {
		fm.YearChart = contractYearChart("contract-year-"+f.ID, year).rounded()
	}
	for _, d := range days {
		if d.Provisional() {
			fm.ProvisionalDays++
		}
		if d.LateReadingsWaiting {
			fm.Waiting = append(fm.Waiting, d.Day)
		}
	}
	return fm, nil
}

type overviewView struct {
	page
	MonthLabel           string
	PrevMonth, NextMonth string
	// Fleet is the asset manager's table: a row per farm, worst first.
	Fleet    []fleetRow
	Sections []farmMonth
	// Demo is the demo's panel (serve --demo), nil without it.
	Demo *demoView
}

// fleetRow is one farm's month to date as an asset manager reads it: the
// figures the monthly report computes (report_monthly_contract and the
// report's total), the warranty, and how fresh the numbers are.
type fleetRow struct {
	ID, Name, Month string
	// Contractual is the contract's availability over the month's rolled-up
	// days (percent); TimeBased the report's availability to date (a rate,
	// fast-path days included).
	Contractual, Production, LostMWh *float64
	TimeBased, Completeness          *float64
	// Warranty is the contract's (percent), else the page's default, and
	// WarrantyOwn says which.
	Warranty      float64
	WarrantyOwn   bool
	BelowWarranty bool
	Contract      string
	Status, Why   string
	BehindS       *float64
	Stalled       int
	// NoReading are the month's rolled-up days with no reading at all, not
	// accepted: the figures count them as unavailable, which says nothing
	// of the turbines.
	NoReading []string
	// Year is the farm's contract year to date (nil: no warranty).
	Year *ContractYear
}

// yearBelow is how many points the farm's contract year to date is under
// its warranty; 0 when it is not (or has no warranty, or counts a day with
// no reading at all: its figure then measures the missing data).
func (r fleetRow) yearBelow() float64 {
	if !r.Year.Below() {
		return 0
	}
	return *r.Year.BelowPoints
}

// worst is the figure a row sorts by: the contractual availability, else
// the time-based one; a farm with neither sorts last.
func (r fleetRow) worst() float64 {
	switch {
	case r.Contractual != nil:
		return *r.Contractual
	case r.TimeBased != nil:
		return *r.TimeBased * 100
	}
	return math.Inf(1)
}

func (s *Server) fleetRow(fm farmMonth) fleetRow {
	t := fm.Report.Total
	r := fleetRow{ID: fm.Farm.ID, Name: fm.Farm.Name, Month: fm.Month, Contractual: t.ContractualAvailabilityPct,
		Production: t.ProductionBasedAvailabilityPct, LostMWh: t.LostMWh, TimeBased: t.Availability, Completeness: t.Completeness,
		Warranty: s.cfg.Warranty * 100, Contract: t.Contract, Status: fm.Report.Status, Why: t.Why, BehindS: fm.Tile.Freshness.BehindS,
		Stalled: len(fm.Tile.Stalled), NoReading: noReadingDays(fm.Days), Year: fm.Year}
	if t.WarrantyPct != nil {
		r.Warranty, r.WarrantyOwn = *t.WarrantyPct, true
	}
	// below the warranty: the contract's figure only (a month with no day
	// rolled up has none to compare), and not while a day of it has no
	// reading at all (not accepted): the figure then measures the missing
	// data, and the row says so instead
	r.BelowWarranty = r.Contractual != nil && *r.Contractual < r.Warranty && len(r.NoReading) == 0
	return r
}

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) {
	var chosen *localday.Date
	if q := r.URL.Query(); q.Has("month") {
		m, err := parseMonth("month", q.Get("month"))
		if err != nil {
			s.renderError(w, r, err)
			return
		}
		chosen = &m
	}
	farms, err := s.farms(r.Context(), nil)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	fresh, err := s.freshnesses(r.Context())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	backlogs, err := s.backlogs(r.Context(), farms, nil)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	// The fleet's contract years, one query and the page's costliest, run
	// beside the farms' months and are attached to them after.
	type yearsAnswer struct {
		years map[string]*ContractYear
		err   error
	}
	yearsc := make(chan yearsAnswer, 1)
	go func() {
		years, err := s.contractYears(r.Context(), nil)
		yearsc <- yearsAnswer{years, err}
	}()
	v := overviewView{page: page{Title: "Farms", Now: s.Now()}, MonthLabel: "current month (farm-local)"}
	nav := monthOf(localday.DateOf(s.Now().UTC()))
	if chosen != nil {
		nav, v.MonthLabel = *chosen, monthLabel(*chosen)
	}
	v.PrevMonth, v.NextMonth = monthParam(addMonths(nav, -1)), monthParam(addMonths(nav, 1))
	for _, f := range farms {
		fm, err := s.farmMonth(r, f, chosen, fresh[f.ID], backlogs[f.ID], nil, true)
		if err != nil {
			s.renderError(w, r, err)
			return
		}
		v.Sections = append(v.Sections, fm)
		v.Fleet = append(v.Fleet, s.fleetRow(fm))
	}
	years := <-yearsc
	if years.err != nil {
		s.renderError(w, r, years.err)
		return
	}
	for i := range v.Sections {
		y := years.years[v.Sections[i].Farm.ID]
		v.Sections[i].Year, v.Sections[i].Tile.ContractYear, v.Fleet[i].Year = y, y, y
	}
	// Worst first: the farms whose contract year to date is below its
	// warranty, most points below first; then (and on a tie) by the
	// month's contractual availability, else its time-based one, lowest
	// first; farms with neither last, in id order.
	sort.SliceStable(v.Fleet, func(i, j int) bool {
		if a, b := v.Fleet[i].yearBelow(), v.Fleet[j].yearBelow(); a != b {
			return a > b
		}
		return v.Fleet[i].worst() < v.Fleet[j].worst()
	})
	if v.Demo, err = s.demoPanel(r.Context(), farms, backlogs); err != nil {
		s.renderError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "overview", v)
}

type farmView struct {
	page
	farmMonth
}

func (s *Server) farmPage(w http.ResponseWriter, r *http.Request) {
	f, err := s.requestFarm(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	var chosen *localday.Date
	if q := r.URL.Query(); q.Has("month") {
		m, err := parseMonth("month", q.Get("month"))
		if err != nil {
			s.renderError(w, r, err)
			return
		}
		chosen = &m
	}
	fresh, err := s.freshnesses(r.Context())
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	backlogs, err := s.backlogs(r.Context(), []Farm{f}, &f.ID)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	years, err := s.contractYears(r.Context(), &f.ID)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	fm, err := s.farmMonth(r, f, chosen, fresh[f.ID], backlogs[f.ID], years[f.ID], false)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	v := farmView{page: page{Title: f.Name + " · " + fm.MonthLabel, Now: s.Now(), Crumbs: []crumb{{URL: "/farms/" + f.ID, Label: f.Name}}}, farmMonth: fm}
	s.render(w, r, http.StatusOK, "farm", v)
}

// turbineView is a turbine row with its silent-hours strip.
type turbineView struct {
	Turbine
	Strip SilentStrip
}

type dayView struct {
	page
	Farm              Farm
	Date, Weekday     string
	Hours             int
	Month, MonthLabel string
	PrevDay, NextDay  string
	Day               *Day
	NotClosed         bool
	Turbines          []turbineView
	// Stalls are the watcher's stalls with a stalled window in the day, or
	// one on each side, open or cleared: a stall found late in a closed
	// day's readings is shown here (the tile shows open ones).
	Stalls []dayStall
}

// dayStall is a stall as the farm-day page lists it.
type dayStall struct {
	Stalled
	ClearedWindow *time.Time // the window it produced again in (nil: open)
}

func (s *Server) dayPage(w http.ResponseWriter, r *http.Request) {
	f, err := s.requestFarm(r)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	d, err := parseDate("day", r.PathValue("day"))
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	backlogs, err := s.backlogs(r.Context(), []Farm{f}, &f.ID)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	days, _, err := s.days(r.Context(), f, d, d, backlogs[f.ID].days)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	turbines, err := s.turbines(r.Context(), f, d)
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	start, end := localday.Bounds(d, f.loc)
	first := monthOf(d)
	v := dayView{
		page: page{Title: f.Name + " · " + d.String(), Now: s.Now(), Crumbs: []crumb{{URL: "/farms/" + f.ID + "?month=" + monthParam(first), Label: f.Name}, {URL: "/farms/" + f.ID + "/days/" + d.String(), Label: d.String()}}},
		Farm: f, Date: d.String(), Weekday: d.UTC().Weekday().String(), Hours: int(math.Round(end.Sub(start).Hours())),
		Month: monthParam(first), MonthLabel: monthLabel(first), PrevDay: d.AddDays(-1).String(), NextDay: d.AddDays(1).String(),
	}
	if len(days) == 1 {
		v.Day = &days[0]
		v.NotClosed = days[0].Source != "turbine_day"
	}
	for _, t := range turbines {
		v.Turbines = append(v.Turbines, turbineView{Turbine: t, Strip: silentStrip(t.SilentHours, v.Hours)})
	}
	stalls, err := controldb.New(s.Control).StallDayList(r.Context(), controldb.StallDayListParams{FarmID: f.ID, DayStart: start, DayEnd: end})
	if err != nil {
		s.renderError(w, r, err)
		return
	}
	for _, st := range stalls {
		v.Stalls = append(v.Stalls, dayStall{Stalled: Stalled{TurbineID: st.TurbineID, Since: st.FirstWindow, Last: st.LastWindow, Windows: st.Windows, Message: st.Message,
			FoundLate: st.FoundLate, FoundAt: st.FoundAt, FoundAfterS: foundAfter(st.FoundAt, st.FirstWindowEnd)}, ClearedWindow: st.ClearedWindow})
	}
	s.render(w, r, http.StatusOK, "day", v)
}

type errorView struct {
	page
	Code       int
	StatusText string
	Message    string
}

// renderError answers a page request that failed: 400 naming the
// parameter, 404 for an unknown farm, 500 with no detail.
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	code, body := s.status(r, err)
	s.render(w, r, code, "error", errorView{page: page{Title: http.StatusText(code), Now: s.Now()}, Code: code, StatusText: http.StatusText(code), Message: body.Error})
}

// render writes a page, or a plain 500 if the template fails (a page is
// rendered whole before any byte is sent).
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, name string, v any) {
	var buf bytes.Buffer
	if err := pageTemplates[name].ExecuteTemplate(&buf, "layout", v); err != nil {
		s.log.Error("status page: template", "page", name, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error (the server's log has the details)", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}
