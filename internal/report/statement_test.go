package report

import (
	"strings"
	"testing"

	"github.com/galewatch/galewatch/sql/reports"
)

// TestStatement: psql's lines go, each :'name' becomes its parameter
// (every occurrence), the trailing semicolon goes; anything else is refused.
func TestStatement(t *testing.T) {
	script := "-- header; with a semicolon\n\\set ON_ERROR_STOP on\n\\if :{?a}\n\\else\n\\set a ''\n\\endif\n" +
		"SELECT :'a' AS x, 'HH24:MI:SS' AS y,\n       :'b'::text || :'a' AS z\nFROM t;\n"
	got, err := Statement(script, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	want := "SELECT $1 AS x, 'HH24:MI:SS' AS y,\n       $2::text || $1 AS z\nFROM t"
	if got != want {
		t.Fatalf("Statement =\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct {
		name, script string
		vars         []string
		want         string
	}{
		{"UnboundVariable", "SELECT :'a', :'c';", []string{"a"}, "psql variable(s) c not bound"},
		{"UnusedVariable", "SELECT :'a';", []string{"a", "b"}, "psql variable b is never used"},
		{"TwoStatements", "SELECT 1; SELECT :'a';", []string{"a"}, "more than one statement"},
		{"NoStatement", "-- nothing\n\\set x 1\n", nil, "no statement"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Statement(tc.script, tc.vars...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Statement: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestStatementOfTheReportFile: the embedded psql file becomes one SELECT of
// the report function with farm, month and now as $1, $2, $3.
func TestStatementOfTheReportFile(t *testing.T) {
	got, err := Statement(reports.MonthlyAvailability, "farm", "month", "now")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "SELECT r.farm_id AS farm,") || !strings.HasSuffix(got, "ORDER BY r.scope, r.day") ||
		!strings.Contains(got, "FROM report_monthly_availability($1, $2, CAST($3 AS text)::timestamptz) AS r") ||
		strings.Contains(got, `\`) || strings.Contains(got, ":'") {
		t.Fatalf("statement of the report file:\n%s", got)
	}
	if got != statement {
		t.Fatal("the package's statement is not the report file's")
	}
}
