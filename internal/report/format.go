package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/galewatch/galewatch/internal/text"
)

// Format is how a report is written.
type Format string

// The formats of `orchestrator report monthly --format`.
const (
	// FormatCSV is the psql file's rows as `psql --csv` prints them: a
	// header, ISO dates, UTC times, dot decimals, UTF-8, LF line ends.
	FormatCSV Format = "csv"
	// FormatJSON is Month as JSON (what the API serves).
	FormatJSON Format = "json"
	// FormatMarkdown is a title, the days holding the month back, and a
	// table with rates as percentages.
	FormatMarkdown Format = "md"
)

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatCSV, FormatJSON, FormatMarkdown:
		return f, nil
	}
	return "", fmt.Errorf("format %q: want csv, json or md", s)
}

// FileName is the file a farm's month is written to, e.g.
// ardnave-point_2026-08.csv. Farm ids are letters, digits, '.', '_' and '-'
// (fleet validation), so the name is safe on every file system.
func FileName(farmID, month string, f Format) string {
	return farmID + "_" + month + "." + string(f)
}

// Write writes m in format f.
func Write(w io.Writer, m Month, f Format) error {
	switch f {
	case FormatCSV:
		return WriteCSV(w, m)
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	case FormatMarkdown:
		return WriteMarkdown(w, m)
	}
	return fmt.Errorf("format %q: want csv, json or md", f)
}

// WriteCSV writes the header and a record per day, then the total: the
// same bytes as `psql --csv` on the report file (both quote a field only
// when it holds a comma, a quote or a line break; NULL is an empty field),
// except that a character operator text may not hold (a row from before the
// rule) is written as its code point (text.Printable), never raw.
func WriteCSV(w io.Writer, m Month) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, d := range append(append([]Day{}, m.Days...), m.Total) {
		record := csvRecord(m.FarmID, d)
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

func csvRecord(farm string, d Day) []string {
	return []string{
		farm, d.Day, intText(d.Expected), intText(d.Received), intText(d.Available),
		rateText(d.Availability), rateText(d.Completeness), intText(d.Turbines), intText(d.RegisteredTurbines),
		d.Source, d.Path, timeText(d.ComputedAt), timeText(d.CompleteThrough),
		strconv.FormatBool(d.Pending), d.Status, d.Why,
		d.Contract, decimalText(d.WarrantyPct, 1), decimalText(d.ContractualAvailabilityPct, 4), decimalText(d.TimeBasedAvailabilityPct, 4),
		decimalText(d.ProductionBasedAvailabilityPct, 4), decimalText(d.InformationUnavailablePct, 4), decimalText(d.LostMWh, 3),
		d.LostMWhByCategory,
	}
}

// decimalText writes a number the database rounded to places decimals as
// psql prints it.
func decimalText(v *float64, places int) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', places, 64)
}

func intText(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

// rateText writes a rate as the database does (numeric rounded to 6
// decimals).
func rateText(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 6, 64)
}

func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// WriteMarkdown writes a title with the month's status, the days that hold
// it back, and a table of the days and the total (rates in percent, two
// decimals). Every text from the database goes through mdCell: a control
// character in it is written as its code point, never raw.
func WriteMarkdown(w io.Writer, m Month) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Availability of %s, %s: %s\n\n", mdCell(m.FarmID), mdCell(m.Month), mdCell(m.Status))
	if len(m.HeldBack) > 0 {
		fmt.Fprintf(&b, "Held back by %d %s:\n\n", len(m.HeldBack), plural(len(m.HeldBack), "day", "days"))
		for _, h := range m.HeldBack {
			fmt.Fprintf(&b, "- %s: %s\n", mdCell(h.Day), mdCell(h.Reason))
		}
		b.WriteString("\n")
	}
	b.WriteString("| day | expected | received | available | availability | completeness | contractual | production-based | lost MWh | path | computed at (UTC) | pending | status | why |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|---|---|---|\n")
	for _, d := range append(append([]Day{}, m.Days...), m.Total) {
		day := d.Day
		if day == TotalDay {
			day = "**total**"
		}
		pending := "no"
		if d.Pending {
			pending = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			mdCell(day), intText(d.Expected), intText(d.Received), intText(d.Available),
			percentText(d.Availability), percentText(d.Completeness), pctText(d.ContractualAvailabilityPct),
			pctText(d.ProductionBasedAvailabilityPct), decimalText(d.LostMWh, 3), mdCell(d.Path), timeText(d.ComputedAt),
			pending, mdCell(d.Status), mdCell(d.Why))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// pctText writes a percentage the database computed, two decimals.
func pctText(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 2, 64) + " %"
}

func percentText(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(100**v, 'f', 2, 64) + " %"
}

// mdCell keeps a text inside one table cell or list item: a run of spaces,
// tabs or line breaks is one space, and any other character operator text
// may not hold is written as its code point (text.Printable).
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return text.Printable(strings.Join(strings.Fields(s), " "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
