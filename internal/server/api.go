package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/report"
)

// The JSON API (/api/v1/). Every route is behind the server's access rules
// (ServeHTTP). Bad parameters answer 400 with {"error", "parameter"}, an
// unknown farm 404; the server's own failures 500 with no detail (the log
// has it).

// MaxDays is the longest range /api/v1/farms/{id}/days answers, in days
// (from and to included): a year, leap day included.
const MaxDays = 366

func (s *Server) routeAPI() {
	s.mux.HandleFunc("GET /api/v1/farms", s.apiFarms)
	s.mux.HandleFunc("GET /api/v1/farms/{id}/tile", s.apiTile)
	s.mux.HandleFunc("GET /api/v1/farms/{id}/days", s.apiDays)
	s.mux.HandleFunc("GET /api/v1/farms/{id}/months/{month}", s.apiMonth)
	s.mux.HandleFunc("GET /api/v1/farms/{id}/contract-years/{year}", s.apiContractYear)
}

// paramError is a request parameter the client got wrong.
type paramError struct {
	param string
	msg   string
}

func (e *paramError) Error() string { return e.param + ": " + e.msg }

func badParam(param, format string, args ...any) error {
	return &paramError{param: param, msg: fmt.Sprintf(format, args...)}
}

type apiError struct {
	Error     string `json:"error"`
	Parameter string `json:"parameter,omitempty"`
}

// status maps an error to the HTTP status and what the client may see.
func (s *Server) status(r *http.Request, err error) (int, apiError) {
	var pe *paramError
	switch {
	case errors.As(err, &pe):
		return http.StatusBadRequest, apiError{Error: pe.Error(), Parameter: pe.param}
	case errors.Is(err, errUnknownFarm), errors.Is(err, report.ErrUnknownFarm):
		return http.StatusNotFound, apiError{Error: fmt.Sprintf("unknown farm %q", r.PathValue("id")), Parameter: "id"}
	case errors.Is(err, report.ErrBadMonth):
		return http.StatusBadRequest, apiError{Error: "month: " + err.Error(), Parameter: "month"}
	case errors.Is(err, report.ErrBadYear):
		return http.StatusBadRequest, apiError{Error: err.Error(), Parameter: "year"}
	}
	s.log.Error("status: request failed", "path", r.URL.Path, "err", err)
	return http.StatusInternalServerError, apiError{Error: "internal error (the server's log has the details)"}
}

func (s *Server) apiError(w http.ResponseWriter, r *http.Request, err error) {
	code, body := s.status(r, err)
	writeJSON(w, code, body)
}

// farmID is the {id} of the path: any farm id the registry could hold is
// valid text; anything else is a bad parameter, not a query.
func farmID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if id == "" || !utf8.ValidString(id) || strings.ContainsRune(id, 0) || len(id) > 200 {
		return "", badParam("id", "not a farm id: %q", id)
	}
	return id, nil
}

// Dates and months are read from the year FirstYear on: telemetry has no
// earlier days, and the report takes four-digit years.
const FirstYear = 1970

// parseDate reads a YYYY-MM-DD date.
func parseDate(param, v string) (localday.Date, error) {
	t, err := time.Parse(time.DateOnly, v)
	if err != nil || t.Year() < FirstYear {
		return localday.Date{}, badParam(param, "want a date YYYY-MM-DD from %d on, got %q", FirstYear, v)
	}
	return localday.DateOf(t), nil
}

// parseMonth reads a YYYY-MM month as its first day.
func parseMonth(param, v string) (localday.Date, error) {
	t, err := time.Parse("2006-01", v)
	if err != nil || t.Year() < FirstYear {
		return localday.Date{}, badParam(param, "want a month YYYY-MM from %d on, got %q", FirstYear, v)
	}
	return localday.DateOf(t), nil
}

// monthOf is the first day of d's month.
func monthOf(d localday.Date) localday.Date {
	return localday.Date{Year: d.Year, Month: d.Month, Day: 1}
}

// monthEnd is the last day of the month starting at first.
func monthEnd(first localday.Date) localday.Date {
	return localday.DateOf(time.Date(first.Year, first.Month+1, 0, 0, 0, 0, 0, time.UTC))
}

// daysBetween is to - from in days.
func daysBetween(from, to localday.Date) int {
	return int(to.UTC().Sub(from.UTC()).Hours() / 24)
}

// dayRange reads ?from=&to= (farm-local dates, both included). to defaults
// to the farm-local today, from to the first day of to's month; the range
// may not run backwards nor be longer than MaxDays.
func dayRange(r *http.Request, f Farm) (from, to localday.Date, err error) {
	q := r.URL.Query()
	to = f.today
	if v := q.Get("to"); v != "" || q.Has("to") {
		if to, err = parseDate("to", v); err != nil {
			return from, to, err
		}
	}
	from = monthOf(to)
	if v := q.Get("from"); v != "" || q.Has("from") {
		if from, err = parseDate("from", v); err != nil {
			return from, to, err
		}
	}
	if n := daysBetween(from, to); n < 0 {
		return from, to, badParam("from", "%s is after to (%s)", from, to)
	} else if n+1 > MaxDays {
		return from, to, badParam("to", "%s..%s is %d days; at most %d at once", from, to, n+1, MaxDays)
	}
	return from, to, nil
}

// FarmListing is a farm in /api/v1/farms.
type FarmListing struct {
	Farm
	Freshness Freshness `json:"freshness"`
}

func (s *Server) apiFarms(w http.ResponseWriter, r *http.Request) {
	farms, err := s.farms(r.Context(), nil)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	fresh, err := s.freshnesses(r.Context())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	out := struct {
		Farms []FarmListing `json:"farms"`
	}{Farms: make([]FarmListing, len(farms))}
	for i, f := range farms {
		out.Farms[i] = FarmListing{Farm: f, Freshness: fresh[f.ID]}
	}
	writeJSON(w, http.StatusOK, out)
}

// requestFarm reads {id} and loads the farm.
func (s *Server) requestFarm(r *http.Request) (Farm, error) {
	id, err := farmID(r)
	if err != nil {
		return Farm{}, err
	}
	return s.farm(r.Context(), id)
}

func (s *Server) apiTile(w http.ResponseWriter, r *http.Request) {
	t, err := s.loadTile(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

func (s *Server) loadTile(r *http.Request) (Tile, error) {
	f, err := s.requestFarm(r)
	if err != nil {
		return Tile{}, err
	}
	fresh, err := s.freshnesses(r.Context())
	if err != nil {
		return Tile{}, err
	}
	backlogs, err := s.backlogs(r.Context(), []Farm{f}, &f.ID)
	if err != nil {
		return Tile{}, err
	}
	years, err := s.contractYears(r.Context(), &f.ID)
	if err != nil {
		return Tile{}, err
	}
	t, err := s.tile(r.Context(), f, fresh[f.ID], backlogs[f.ID])
	if err != nil {
		return Tile{}, err
	}
	t.ContractYear = years[f.ID]
	return t, nil
}

// DaysResponse is /api/v1/farms/{id}/days.
type DaysResponse struct {
	FarmID   string `json:"farm_id"`
	Timezone string `json:"timezone"`
	From     string `json:"from"`
	To       string `json:"to"`
	// Warranty is the availability the status page draws its threshold
	// line at; DivergenceAlertPM the farm's divergence threshold.
	Warranty          float64 `json:"warranty"`
	DivergenceAlertPM int     `json:"divergence_alert_pm"`
	// Days are the days of the range that have a number, in order: the
	// monthly report's rows, with the day's windows, divergence and alerts.
	Days    []Day   `json:"days"`
	Backlog Backlog `json:"backlog"`
}

func (s *Server) apiDays(w http.ResponseWriter, r *http.Request) {
	f, err := s.requestFarm(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	from, to, err := dayRange(r, f)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	resp, err := s.loadDays(r, f, from, to)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) loadDays(r *http.Request, f Farm, from, to localday.Date) (DaysResponse, error) {
	backlogs, err := s.backlogs(r.Context(), []Farm{f}, &f.ID)
	if err != nil {
		return DaysResponse{}, err
	}
	b := backlogs[f.ID]
	days, _, err := s.days(r.Context(), f, from, to, b.days)
	if err != nil {
		return DaysResponse{}, err
	}
	return DaysResponse{
		FarmID: f.ID, Timezone: f.Timezone, From: from.String(), To: to.String(),
		Warranty: s.cfg.Warranty, DivergenceAlertPM: f.DivergenceAlertPM, Days: days, Backlog: *b,
	}, nil
}

// apiMonth is the monthly report as JSON (internal/report: the same rows
// as the psql file and `orchestrator report monthly`), judged by the
// server's clock.
func (s *Server) apiMonth(w http.ResponseWriter, r *http.Request) {
	id, err := farmID(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	if _, err := parseMonth("month", r.PathValue("month")); err != nil {
		s.apiError(w, r, err)
		return
	}
	m, err := report.MonthlyAt(r.Context(), s.Control, id, r.PathValue("month"), s.Now())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// apiContractYear is the contract year report as JSON (internal/report:
// the same rows as sql/reports/contract_year.sql and `orchestrator report
// contract`), judged by the server's clock.
func (s *Server) apiContractYear(w http.ResponseWriter, r *http.Request) {
	id, err := farmID(r)
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	y, err := report.ContractYearAt(r.Context(), s.Control, id, r.PathValue("year"), s.Now())
	if err != nil {
		s.apiError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, y)
}
