// Package report is the monthly availability report: one row per
// farm-local day and a month total, with whether the month is final and,
// if not, which days hold it back and why.
//
// The rule lives in the control database (farm_day_status judges each day,
// report_monthly_availability makes the month); the psql file sql/reports/monthly_availability.sql
// formats its rows. This package runs that very file (embedded), with the
// psql variables bound as query parameters (Statement), so psql, the CLI
// and the JSON API show the same rows. Rates are computed in SQL from the
// counts; Go only carries and formats them.
package report

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/sql/reports"
)

// Sentinel errors for what a caller got wrong (use errors.Is): the API
// maps them to 404 and 400, the CLI to exit status 2. The error's message
// names the farm or month and what was wrong with it.
var (
	ErrUnknownFarm = errors.New("unknown farm")
	ErrBadMonth    = errors.New("bad month")
)

// Status of a day or a month.
const (
	StatusFinal       = "final"
	StatusProvisional = "provisional"
)

// TotalDay is the Day.Day of the month's total row.
const TotalDay = "total"

// Month is one farm's monthly report.
type Month struct {
	FarmID string `json:"farm_id"`
	// Month is YYYY-MM.
	Month string `json:"month"`
	// Status is "final" only when every day of the month has ended, was
	// rolled up after it closed, has every mark drained, no recompute
	// pending and its information resolved (missing slots within the
	// farm's threshold, or accepted); "incomplete" when only that holds
	// days back; otherwise "provisional". HeldBack lists the days that hold
	// it back.
	Status string `json:"status"`
	// Days holds one row per farm-local day of the month, in order.
	Days []Day `json:"days"`
	// Total sums the days' counts; its rates come from those sums.
	Total    Day        `json:"total"`
	HeldBack []HeldBack `json:"held_back"`
}

// HeldBack is a day that keeps the month provisional or incomplete.
type HeldBack struct {
	// Day is the farm-local date, YYYY-MM-DD.
	Day string `json:"day"`
	// Reason is every reason that holds it back, with details, separated
	// by "; " (e.g. "readings arrived after the rollup (recompute requested
	// 2026-08-04 10:00:00 UTC)").
	Reason string `json:"reason"`
}

// Day is one row of the report: a farm-local day, or the month's total
// (Day == TotalDay). Counts and rates are nil when nothing was computed.
type Day struct {
	// Day is the farm-local date (YYYY-MM-DD), or "total".
	Day       string `json:"day"`
	Expected  *int64 `json:"expected"`
	Received  *int64 `json:"received"`
	Available *int64 `json:"available"`
	// Availability is available / expected and Completeness received /
	// expected, computed from the counts (6 decimals).
	Availability *float64 `json:"availability"`
	Completeness *float64 `json:"completeness"`
	// Turbines is how many turbines in service that day have rows, against
	// RegisteredTurbines, how many the registry had in service (days only).
	Turbines           *int64 `json:"turbines"`
	RegisteredTurbines *int64 `json:"registered_turbines"`
	// Source is "turbine_day" (the closed day's rows), "farm_window" (the
	// sum of the windows published so far) or, for the total, "mixed", or
	// "partial" when a day with turbines in service has no numbers; empty
	// when nothing was computed.
	Source string `json:"source,omitempty"`
	// Path is "final" or "fast" (a window still as the fast path published
	// it), or for the total "partial" as Source; empty when nothing was
	// computed.
	Path string `json:"path,omitempty"`
	// ComputedAt is the newest computation among the numbers; and
	// CompleteThrough what they are complete through (to the second, UTC).
	ComputedAt      *time.Time `json:"computed_at"`
	CompleteThrough *time.Time `json:"complete_through"`
	// Pending: a recompute is requested or running; the numbers may change.
	Pending bool   `json:"pending"`
	Status  string `json:"status"`
	// Why says what holds the day (or the month) back, then its notes ("no
	// turbines in service": such a day is final once ended, with no
	// numbers); empty when final with nothing to note.
	Why string `json:"why,omitempty"`
	// The contract's figures (report_monthly_contract), for a day with
	// rolled-up rows and the month; nil otherwise. Percentages (0-100) and
	// MWh, rounded as the database rounds them.
	Contract                       string   `json:"contract,omitempty"`
	WarrantyPct                    *float64 `json:"warranty_pct"`
	ContractualAvailabilityPct     *float64 `json:"contractual_availability_pct"`
	TimeBasedAvailabilityPct       *float64 `json:"time_based_availability_pct"`
	ProductionBasedAvailabilityPct *float64 `json:"production_based_availability_pct"`
	InformationUnavailablePct      *float64 `json:"information_unavailable_pct"`
	LostMWh                        *float64 `json:"lost_mwh"`
	// LostMWhByCategory is "code MWh; ..." for the categories that lost any.
	LostMWhByCategory string `json:"lost_mwh_by_category,omitempty"`
}

// Columns are the report's columns, in order: the psql file's, and the
// CSV header. Monthly checks the file against them on every run.
var Columns = []string{
	"farm", "day", "expected", "received", "available", "availability", "completeness",
	"turbines", "registered_turbines", "source", "path", "computed_at_utc", "complete_through_utc",
	"pending", "status", "why",
	"contract", "warranty_pct", "contractual_availability_pct", "time_based_availability_pct",
	"production_based_availability_pct", "information_unavailable_pct", "lost_mwh", "lost_mwh_by_category",
}

// timeLayout is how the psql file writes instants (UTC).
const timeLayout = "2006-01-02 15:04:05"

// statement is sql/reports/monthly_availability.sql with its psql
// variables as $1 (farm), $2 (month), $3 (now).
var statement = func() string {
	s, err := Statement(reports.MonthlyAvailability, "farm", "month", "now")
	if err != nil {
		panic(err) // the embedded file is part of the build; TestStatementOfTheReportFile
	}
	return s
}()

// Monthly is farmID's report for month (YYYY-MM), judged by the clock now.
// A farm that does not exist is ErrUnknownFarm; a month that is not YYYY-MM
// is ErrBadMonth.
func Monthly(ctx context.Context, control *pgxpool.Pool, farmID, month string) (Month, error) {
	return MonthlyAt(ctx, control, farmID, month, time.Now())
}

// MonthlyAt is Monthly with the clock given: a day that has not ended by
// now holds the month back.
func MonthlyAt(ctx context.Context, control *pgxpool.Pool, farmID, month string, now time.Time) (Month, error) {
	// Text the database cannot hold (invalid UTF-8, NUL) names no farm or
	// month: say so rather than let the driver fail with an encoding error.
	if !utf8.ValidString(farmID) || strings.ContainsRune(farmID, 0) {
		return Month{}, &inputError{kind: ErrUnknownFarm, msg: fmt.Sprintf("farm %q: no such farm", farmID)}
	}
	if !utf8.ValidString(month) || strings.ContainsRune(month, 0) {
		return Month{}, &inputError{kind: ErrBadMonth, msg: fmt.Sprintf("month %q: want a calendar month as YYYY-MM, e.g. 2026-08", month)}
	}
	rows, err := control.Query(ctx, statement, farmID, month, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return Month{}, queryError(farmID, month, err)
	}
	defer rows.Close()
	m := Month{FarmID: farmID, Month: month, Days: []Day{}, HeldBack: []HeldBack{}}
	total := false
	for first := true; rows.Next(); first = false {
		if first {
			if err := checkColumns(rows.FieldDescriptions()); err != nil {
				return Month{}, err
			}
		}
		d, err := scanDay(rows)
		if err != nil {
			return Month{}, fmt.Errorf("report %s %s: %w", farmID, month, err)
		}
		if d.Day == TotalDay {
			m.Total, m.Status, total = d, d.Status, true
			continue
		}
		m.Days = append(m.Days, d)
		if d.Status != StatusFinal {
			m.HeldBack = append(m.HeldBack, HeldBack{Day: d.Day, Reason: d.Why})
		}
	}
	if err := rows.Err(); err != nil {
		return Month{}, queryError(farmID, month, err)
	}
	if !total {
		return Month{}, fmt.Errorf("report %s %s: no total row", farmID, month)
	}
	return m, nil
}

// inputError is a caller's mistake: its message is the database's (which
// names the parameter), and it unwraps to the sentinel.
type inputError struct {
	kind error
	msg  string
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return e.kind }

// queryError maps the report function's errors: it names the parameter at
// fault in the error's COLUMN field.
func queryError(farmID, month string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.ColumnName == "farm":
			return &inputError{kind: ErrUnknownFarm, msg: pgErr.Message}
		case pgErr.ColumnName == "month":
			return &inputError{kind: ErrBadMonth, msg: pgErr.Message}
		case pgErr.Code == "42883": // undefined_function
			return fmt.Errorf("report %s %s: the control database has no report_monthly_availability (run `orchestrator migrate`): %w", farmID, month, err)
		}
	}
	return fmt.Errorf("report %s %s: %w", farmID, month, err)
}

func checkColumns(fields []pgconn.FieldDescription) error {
	got := make([]string, len(fields))
	for i, f := range fields {
		got[i] = f.Name
	}
	if strings.Join(got, ",") != strings.Join(Columns, ",") {
		return fmt.Errorf("report: sql/reports/monthly_availability.sql returns columns %s, the Go side knows %s", strings.Join(got, ","), strings.Join(Columns, ","))
	}
	return nil
}

func scanDay(rows pgx.Rows) (Day, error) {
	var (
		d                         Day
		farm                      string
		source, path, why         *string
		computedAt, completeThrgh *string
		pending                   string
		turbines, registered      *int32
		contract, lostByCategory  *string
	)
	if err := rows.Scan(&farm, &d.Day, &d.Expected, &d.Received, &d.Available, &d.Availability, &d.Completeness,
		&turbines, &registered, &source, &path, &computedAt, &completeThrgh, &pending, &d.Status, &why,
		&contract, &d.WarrantyPct, &d.ContractualAvailabilityPct, &d.TimeBasedAvailabilityPct, &d.ProductionBasedAvailabilityPct,
		&d.InformationUnavailablePct, &d.LostMWh, &lostByCategory); err != nil {
		return Day{}, err
	}
	d.Turbines, d.RegisteredTurbines = widen(turbines), widen(registered)
	d.Source, d.Path, d.Why = deref(source), deref(path), deref(why)
	d.Contract, d.LostMWhByCategory = deref(contract), deref(lostByCategory)
	var err error
	if d.ComputedAt, err = parseTime(computedAt); err != nil {
		return Day{}, fmt.Errorf("computed_at_utc: %w", err)
	}
	if d.CompleteThrough, err = parseTime(completeThrgh); err != nil {
		return Day{}, fmt.Errorf("complete_through_utc: %w", err)
	}
	if d.Pending, err = strconv.ParseBool(pending); err != nil {
		return Day{}, fmt.Errorf("pending: %w", err)
	}
	return d, nil
}

func widen(v *int32) *int64 {
	if v == nil {
		return nil
	}
	w := int64(*v)
	return &w
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func parseTime(s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := time.ParseInLocation(timeLayout, *s, time.UTC)
	if err != nil {
		return nil, err
	}
	return &t, nil
}
