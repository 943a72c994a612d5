package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/text"
	"github.com/galewatch/galewatch/sql/reports"
)

// ErrBadYear is a contract year that is not YYYY.
var ErrBadYear = errors.New("bad year")

// ErrNoContracts says no farm has a contract of its own to report on.
var ErrNoContracts = errors.New("no farm has a contract (a farm's contract: in the fleet file; orchestrator fleet apply FILE)")

// YearColumns are the contract year report's columns, in order: the psql
// file's, and the CSV header. ContractYearAt checks the file against them.
var YearColumns = []string{
	"farm", "scope", "first_day", "last_day", "contract", "terms", "currency", "days", "turbine_days",
	"warranty_pct", "contractual_availability_pct", "production_based_availability_pct", "counted_turbine_hours",
	"shortfall_points", "shortfall_turbine_hours", "counted_potential_mwh", "shortfall_mwh", "ld", "bonus",
	"status", "why",
}

// Scopes of the contract year report's rows.
const (
	ScopePeriod   = "period"
	ScopeMonth    = "month"
	ScopeYear     = "year"
	ScopeAccepted = "accepted"
)

// ContractYear is one farm's contract year report (report_contract_year):
// the periods it is settled in (each with its contract's name and terms),
// its months so far, the year to date, and the days accepted as they are.
type ContractYear struct {
	FarmID string `json:"farm_id"`
	// Year is the calendar year the contract year starts in.
	Year     string    `json:"year"`
	Periods  []YearRow `json:"periods"`
	Months   []YearRow `json:"months"`
	Total    YearRow   `json:"year_to_date"`
	Accepted []YearRow `json:"accepted"`
}

// YearRow is one row of the report. Numbers are the database's decimal
// text (json.Number: written as it printed them, never through a float);
// nil when there is nothing to compute (no rolled-up day, no warranty, no
// such term). Percentages are of counted (not excluded) time, energy in
// MWh, money in Currency.
type YearRow struct {
	Scope                          string       `json:"scope"`
	FirstDay                       string       `json:"first_day"`
	LastDay                        string       `json:"last_day"`
	Contract                       string       `json:"contract,omitempty"`
	Terms                          string       `json:"terms,omitempty"`
	Currency                       string       `json:"currency,omitempty"`
	Days                           *json.Number `json:"days"`
	TurbineDays                    *json.Number `json:"turbine_days"`
	WarrantyPct                    *json.Number `json:"warranty_pct"`
	ContractualAvailabilityPct     *json.Number `json:"contractual_availability_pct"`
	ProductionBasedAvailabilityPct *json.Number `json:"production_based_availability_pct"`
	CountedTurbineHours            *json.Number `json:"counted_turbine_hours"`
	ShortfallPoints                *json.Number `json:"shortfall_points"`
	ShortfallTurbineHours          *json.Number `json:"shortfall_turbine_hours"`
	CountedPotentialMWh            *json.Number `json:"counted_potential_mwh"`
	ShortfallMWh                   *json.Number `json:"shortfall_mwh"`
	LD                             *json.Number `json:"ld"`
	Bonus                          *json.Number `json:"bonus"`
	Status                         string       `json:"status"`
	Why                            string       `json:"why,omitempty"`

	record []string // the row as the file printed it
}

// yearStatement is sql/reports/contract_year.sql with its psql variables
// as $1 (farm), $2 (year), $3 (now).
var yearStatement = func() string {
	s, err := Statement(reports.ContractYear, "farm", "year", "now")
	if err != nil {
		panic(err) // the embedded file is part of the build; TestStatementOfTheReportFile
	}
	return s
}()

// ContractYearAt is farmID's contract year report for year (YYYY, the
// calendar year the contract year starts in), judged by the clock now. A
// farm that does not exist is ErrUnknownFarm; a year that is not YYYY,
// ErrBadYear.
func ContractYearAt(ctx context.Context, control *pgxpool.Pool, farmID, year string, now time.Time) (ContractYear, error) {
	if !utf8.ValidString(farmID) || strings.ContainsRune(farmID, 0) {
		return ContractYear{}, &inputError{kind: ErrUnknownFarm, msg: fmt.Sprintf("farm %q: no such farm", farmID)}
	}
	if !utf8.ValidString(year) || strings.ContainsRune(year, 0) {
		return ContractYear{}, &inputError{kind: ErrBadYear, msg: fmt.Sprintf("year %q: want the contract year as YYYY, e.g. 2026", year)}
	}
	rows, err := control.Query(ctx, yearStatement, farmID, year, now.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return ContractYear{}, yearError(farmID, year, err)
	}
	defer rows.Close()
	y := ContractYear{FarmID: farmID, Year: year, Periods: []YearRow{}, Months: []YearRow{}, Accepted: []YearRow{}}
	total := false
	for first := true; rows.Next(); first = false {
		if first {
			if err := checkYearColumns(rows.FieldDescriptions()); err != nil {
				return ContractYear{}, err
			}
		}
		cells := make([]*string, len(YearColumns))
		dest := make([]any, len(cells))
		for i := range cells {
			dest[i] = &cells[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return ContractYear{}, fmt.Errorf("report %s contract year %s: %w", farmID, year, err)
		}
		r := yearRow(cells)
		switch r.Scope {
		case ScopePeriod:
			y.Periods = append(y.Periods, r)
		case ScopeMonth:
			y.Months = append(y.Months, r)
		case ScopeYear:
			y.Total, total = r, true
		case ScopeAccepted:
			y.Accepted = append(y.Accepted, r)
		default:
			return ContractYear{}, fmt.Errorf("report %s contract year %s: a row of scope %q", farmID, year, r.Scope)
		}
	}
	if err := rows.Err(); err != nil {
		return ContractYear{}, yearError(farmID, year, err)
	}
	if !total {
		return ContractYear{}, fmt.Errorf("report %s contract year %s: no year row", farmID, year)
	}
	return y, nil
}

func yearRow(cells []*string) YearRow {
	rec := make([]string, len(cells))
	for i, c := range cells {
		rec[i] = deref(c)
	}
	num := func(i int) *json.Number {
		if cells[i] == nil {
			return nil
		}
		n := json.Number(*cells[i])
		return &n
	}
	return YearRow{
		Scope: rec[1], FirstDay: rec[2], LastDay: rec[3], Contract: rec[4], Terms: rec[5], Currency: rec[6],
		Days: num(7), TurbineDays: num(8), WarrantyPct: num(9), ContractualAvailabilityPct: num(10),
		ProductionBasedAvailabilityPct: num(11), CountedTurbineHours: num(12), ShortfallPoints: num(13),
		ShortfallTurbineHours: num(14), CountedPotentialMWh: num(15), ShortfallMWh: num(16), LD: num(17), Bonus: num(18),
		Status: rec[19], Why: rec[20], record: rec,
	}
}

// yearError maps report_contract_year's errors: it names the parameter at
// fault in the error's COLUMN field.
func yearError(farmID, year string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.ColumnName == "farm":
			return &inputError{kind: ErrUnknownFarm, msg: pgErr.Message}
		case pgErr.ColumnName == "year":
			return &inputError{kind: ErrBadYear, msg: pgErr.Message}
		case pgErr.Code == "42883": // undefined_function
			return fmt.Errorf("report %s contract year %s: the control database has no report_contract_year (run `orchestrator migrate`): %w", farmID, year, err)
		}
	}
	return fmt.Errorf("report %s contract year %s: %w", farmID, year, err)
}

func checkYearColumns(fields []pgconn.FieldDescription) error {
	got := make([]string, len(fields))
	for i, f := range fields {
		got[i] = f.Name
	}
	if strings.Join(got, ",") != strings.Join(YearColumns, ",") {
		return fmt.Errorf("report: sql/reports/contract_year.sql returns columns %s, the Go side knows %s", strings.Join(got, ","), strings.Join(YearColumns, ","))
	}
	return nil
}

// rows is every row in the file's order.
func (y ContractYear) rows() []YearRow {
	out := append([]YearRow{}, y.Periods...)
	out = append(out, y.Months...)
	out = append(out, y.Total)
	return append(out, y.Accepted...)
}

// WriteYear writes y in format f.
func WriteYear(w io.Writer, y ContractYear, f Format) error {
	switch f {
	case FormatCSV:
		return WriteYearCSV(w, y)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(y)
	case FormatMarkdown:
		return WriteYearMarkdown(w, y)
	}
	return fmt.Errorf("format %q: want csv, json or md", f)
}

// WriteYearCSV writes the rows as `psql --csv` prints the report file: the
// file formats every value as text, so this writes them as they came
// (text.Printable aside, as WriteCSV).
func WriteYearCSV(w io.Writer, y ContractYear) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(YearColumns); err != nil {
		return err
	}
	for _, r := range y.rows() {
		record := append([]string{}, r.record...)
		for i := range record {
			record[i] = text.Printable(record[i])
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteYearMarkdown writes a title with the year's status, the contracts
// and their terms, what holds the year back, a table of the months, the
// periods and the year, and the days accepted with their notes.
func WriteYearMarkdown(w io.Writer, y ContractYear) error {
	var b strings.Builder
	t := y.Total
	fmt.Fprintf(&b, "# Contract year %s of %s (%s to %s): %s\n\n", mdCell(y.Year), mdCell(y.FarmID), mdCell(t.FirstDay), mdCell(t.LastDay), mdCell(t.Status))
	b.WriteString("Percentages are of counted time (excluded categories apart); turbine-hours, MWh, and money in the contract's currency.\n\n")
	for _, p := range y.Periods {
		fmt.Fprintf(&b, "- **%s**, %s to %s: %s\n", mdCell(p.Contract), mdCell(p.FirstDay), mdCell(p.LastDay), mdCell(p.Terms))
	}
	if len(y.Periods) > 0 {
		b.WriteString("\n")
	}
	if t.Why != "" {
		fmt.Fprintf(&b, "%s\n\n", mdCell(t.Why))
	}
	b.WriteString("| scope | from | to | contract | warranty | contractual | production-based | shortfall (points) | shortfall (turbine-hours) | shortfall (MWh) | LDs | bonus | currency | status |\n")
	b.WriteString("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, r := range append(append(append([]YearRow{}, y.Months...), y.Periods...), t) {
		scope := r.Scope
		if scope == ScopeYear {
			scope = "**year to date**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdCell(scope), mdCell(r.FirstDay), mdCell(r.LastDay), mdCell(r.Contract), numPct(r.WarrantyPct),
			numPct(r.ContractualAvailabilityPct), numPct(r.ProductionBasedAvailabilityPct), numText(r.ShortfallPoints),
			numText(r.ShortfallTurbineHours), numText(r.ShortfallMWh), numText(r.LD), numText(r.Bonus), mdCell(r.Currency), mdCell(r.Status))
	}
	if len(y.Accepted) > 0 {
		fmt.Fprintf(&b, "\nAccepted as they are (%d %s):\n\n", len(y.Accepted), plural(len(y.Accepted), "day", "days"))
		for _, a := range y.Accepted {
			fmt.Fprintf(&b, "- %s: %s\n", mdCell(a.FirstDay), mdCell(a.Why))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func numText(n *json.Number) string {
	if n == nil {
		return ""
	}
	return string(*n)
}

func numPct(n *json.Number) string {
	if n == nil {
		return ""
	}
	return string(*n) + " %"
}

// YearFileName is the file a farm's contract year is written to, e.g.
// ardnave-point_contract_2026.csv.
func YearFileName(farmID, year string, f Format) string {
	return farmID + "_contract_" + year + "." + string(f)
}

// ExportYear writes one farm's contract year into dir, whole or not at all.
func ExportYear(ctx context.Context, control *pgxpool.Pool, farmID, year string, f Format, dir string, now time.Time) (Exported, error) {
	y, err := ContractYearAt(ctx, control, farmID, year, now)
	if err != nil {
		return Exported{}, err
	}
	var b bytes.Buffer
	if err := WriteYear(&b, y, f); err != nil {
		return Exported{}, err
	}
	path, err := writeWhole(dir, YearFileName(farmID, year, f), b.Bytes())
	if err != nil {
		return Exported{}, err
	}
	held := 0
	for _, m := range y.Months {
		if m.Status != StatusFinal {
			held++
		}
	}
	return Exported{FarmID: farmID, Path: path, Status: y.Total.Status, HeldBack: held}, nil
}

// ExportYearAll writes the contract year of every farm with a contract of
// its own (FarmsWithContract) into dir; a farm that fails on its own does
// not stop the others.
func ExportYearAll(ctx context.Context, control *pgxpool.Pool, year string, f Format, dir string, now time.Time) ([]Exported, error) {
	farms, err := controldb.New(control).FarmsWithContract(ctx)
	if err != nil {
		return nil, fmt.Errorf("list farms with a contract: %w", err)
	}
	if len(farms) == 0 {
		return nil, ErrNoContracts
	}
	var out []Exported
	var failed []error
	for _, farm := range farms {
		e, err := ExportYear(ctx, control, farm, year, f, dir, now)
		if errors.Is(err, ErrBadYear) || ctx.Err() != nil {
			return out, err
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("farm %s: %w", clip(farm), err))
			continue
		}
		out = append(out, e)
	}
	return out, errors.Join(failed...)
}

// writeWhole writes data to dir/name (dir created if missing) aside, then
// renames it into place.
func writeWhole(dir, name string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}
