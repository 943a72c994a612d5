package pipelinetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sections of an Outcome.
const (
	// TurbineDays: every turbine_day row's counts.
	TurbineDays = "turbine_day"
	// Finals: every final farm_window row's counts.
	Finals = "farm_window final"
	// Revisions: every final row's revision (how many times it was written).
	Revisions = "farm_window final revision"
	// Fasts: every fast farm_window row: counts, when it was published and
	// what it was complete through.
	Fasts = "farm_window fast"
	// Reconciliation: fast against final, per window and day, as last
	// measured (without the revision measured).
	Reconciliation = "reconciliation"
	// Alerts: which alerts were raised, for what.
	Alerts = "alert"
)

// Counts are the sections a run must reproduce whatever the order in which
// processes did the work; AllSections adds the revisions, which only a run
// that does the same work in the same steps reproduces.
var (
	Counts      = []string{TurbineDays, Finals, Fasts, Reconciliation, Alerts}
	AllSections = append(slices.Clone(Counts), Revisions)
)

// sectionSQL reads each section as sorted text rows (times in UTC).
var sectionSQL = map[string]string{
	TurbineDays: `SELECT format('%s %s %s expected %s received %s available %s late %s early %s beyond %s out %s lag %s..%s last %s silent %s',
	                  farm_id, day, turbine_id, expected, received, available, late, early, beyond_cadence, out_of_service,
	                  min_lag_ms, max_lag_ms, last_received_at AT TIME ZONE 'UTC', silent_hours)
	              FROM turbine_day ORDER BY 1`,
	Finals: `SELECT format('%s %s expected %s received %s available %s late %s readings %s', farm_id, window_start AT TIME ZONE 'UTC',
	             expected, received, available, late, readings)
	         FROM farm_window WHERE path = 'final' ORDER BY 1`,
	Revisions: `SELECT format('%s %s revision %s', farm_id, window_start AT TIME ZONE 'UTC', revision)
	            FROM farm_window WHERE path = 'final' ORDER BY 1`,
	Fasts: `SELECT format('%s %s expected %s received %s available %s late %s readings %s published %s through %s', farm_id,
	            window_start AT TIME ZONE 'UTC', expected, received, available, late, readings,
	            computed_at AT TIME ZONE 'UTC', complete_through AT TIME ZONE 'UTC')
	        FROM farm_window WHERE path = 'fast' ORDER BY 1`,
	Reconciliation: `SELECT format('%s %s %s fast %s/%s/%s final %s/%s/%s windows %s', farm_id, scope, period_start AT TIME ZONE 'UTC',
	                     fast_expected, fast_received, fast_available, final_expected, final_received, final_available, windows)
	                 FROM reconciliation ORDER BY 1`,
	Alerts: `SELECT format('%s %s %s %s', kind, farm_id, scope, period_start AT TIME ZONE 'UTC') FROM alert ORDER BY 1`,
}

// Outcome is what a run left in the control database: per section, its
// rows as sorted text.
type Outcome map[string][]string

// Read reads every section.
func Read(t testing.TB, control *pgxpool.Pool) Outcome {
	t.Helper()
	o := Outcome{}
	for name, sql := range sectionSQL {
		rows, err := control.Query(context.Background(), sql)
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		o[name], err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		slices.Sort(o[name]) // Go's order, whatever the database's collation
	}
	return o
}

// Diff says how o differs from want in the given sections ("" when it
// does not): per section, the row counts and the first rows only one side has.
func (o Outcome) Diff(want Outcome, sections ...string) string {
	var b strings.Builder
	for _, s := range sections {
		missing, extra := minus(want[s], o[s]), minus(o[s], want[s])
		if len(missing) == 0 && len(extra) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: %d rows, want %d; %d missing, %d not in the clean run\n", s, len(o[s]), len(want[s]), len(missing), len(extra))
		for i, r := range missing {
			if i == 5 {
				fmt.Fprintf(&b, "  ... %d more missing\n", len(missing)-i)
				break
			}
			fmt.Fprintf(&b, "  want %s\n", r)
		}
		for i, r := range extra {
			if i == 5 {
				fmt.Fprintf(&b, "  ... %d more extra\n", len(extra)-i)
				break
			}
			fmt.Fprintf(&b, "  got  %s\n", r)
		}
	}
	return b.String()
}

// Len is the number of rows of a section.
func (o Outcome) Len(section string) int { return len(o[section]) }

// minus returns the rows of a (sorted) that b (sorted) does not have,
// counting repeats.
func minus(a, b []string) []string {
	var out []string
	j := 0
	for _, r := range a {
		for j < len(b) && b[j] < r {
			j++
		}
		if j < len(b) && b[j] == r {
			j++
			continue
		}
		out = append(out, r)
	}
	return out
}
