package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func at(s string) *time.Time { t, _ := time.Parse(time.RFC3339, s); return &t }

// sample is a two-day month: one final day, one held back, and the total.
func sample() Month {
	final := Day{Day: "2026-08-01", Expected: i64(43200), Received: i64(43200), Available: i64(21600),
		Availability: f64(0.5), Completeness: f64(1), Turbines: i64(1), RegisteredTurbines: i64(1),
		Source: "turbine_day", Path: "final", ComputedAt: at("2026-08-02T00:01:00Z"), CompleteThrough: at("2026-08-02T00:01:00Z"),
		Status: StatusFinal, Contract: "TSA 2026", WarrantyPct: f64(97), ContractualAvailabilityPct: f64(87.7193), TimeBasedAvailabilityPct: f64(81.25),
		ProductionBasedAvailabilityPct: f64(91.7369), InformationUnavailablePct: f64(4.8611), LostMWh: f64(0.98),
		LostMWhByCategory: "requested_shutdown 0.560; scheduled_maintenance 0.280; forced_outage 0.700"}
	held := Day{Day: "2026-08-02", Status: StatusProvisional, Why: "no rollup"}
	total := Day{Day: TotalDay, Expected: i64(43200), Received: i64(43200), Available: i64(21600),
		Availability: f64(0.5), Completeness: f64(1), Source: "turbine_day", Path: "final",
		ComputedAt: at("2026-08-02T00:01:00Z"), CompleteThrough: at("2026-08-02T00:01:00Z"), Status: StatusProvisional,
		Why: "no rollup: 2026-08-02, 2026-08-04"}
	return Month{FarmID: "north", Month: "2026-08", Status: StatusProvisional, Days: []Day{final, held}, Total: total,
		HeldBack: []HeldBack{{Day: "2026-08-02", Reason: "no rollup"}}}
}

// TestWriteCSV: the bytes psql --csv prints for the same rows: NULL as an
// empty field, rates with 6 decimals, UTC times, quotes only around a
// field with a comma.
func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, sample()); err != nil {
		t.Fatal(err)
	}
	want := "farm,day,expected,received,available,availability,completeness,turbines,registered_turbines,source,path,computed_at_utc,complete_through_utc,pending,status,why," +
		"contract,warranty_pct,contractual_availability_pct,time_based_availability_pct,production_based_availability_pct,information_unavailable_pct,lost_mwh,lost_mwh_by_category\n" +
		"north,2026-08-01,43200,43200,21600,0.500000,1.000000,1,1,turbine_day,final,2026-08-02 00:01:00,2026-08-02 00:01:00,false,final,," +
		"TSA 2026,97.0,87.7193,81.2500,91.7369,4.8611,0.980,requested_shutdown 0.560; scheduled_maintenance 0.280; forced_outage 0.700\n" +
		"north,2026-08-02,,,,,,,,,,,,false,provisional,no rollup,,,,,,,,\n" +
		"north,total,43200,43200,21600,0.500000,1.000000,,,turbine_day,final,2026-08-02 00:01:00,2026-08-02 00:01:00,false,provisional,\"no rollup: 2026-08-02, 2026-08-04\",,,,,,,,\n"
	if b.String() != want {
		t.Fatalf("CSV:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWriteMarkdown: a title with the status, the held-back days, rates in
// percent.
func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sample()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Availability of north, 2026-08: provisional\n\nHeld back by 1 day:\n\n- 2026-08-02: no rollup\n\n",
		"| 2026-08-01 | 43200 | 43200 | 21600 | 50.00 % | 100.00 % | 87.72 % | 91.74 % | 0.980 | final | 2026-08-02 00:01:00 | no | final |  |\n",
		"| 2026-08-02 |  |  |  |  |  |  |  |  |  |  | no | provisional | no rollup |\n",
		"| **total** | 43200 | 43200 | 21600 | 50.00 % | 100.00 % |  |  |  | final | 2026-08-02 00:01:00 | no | provisional | no rollup: 2026-08-02, 2026-08-04 |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("markdown:\n%s\nwant it to contain\n%s", b.String(), want)
		}
	}
}

// TestWritersPrintNoControlCharacter: whatever a text from the database
// holds (a row from before the operator-text rule), the CSV and Markdown
// writers print each control, bidi or zero-width character as its code
// point: an escape sequence in a note cleared the terminal of whoever
// printed the report, and a bidi override scrambled the row.
func TestWritersPrintNoControlCharacter(t *testing.T) {
	m := sample()
	note := "accepted by ops\u009b at 2026-08-03 09:00:00 UTC: logger\x1b[2J replaced\u202e; 3\u0085 hours\tof\r\nnothing\u200b"
	m.Days[1].Why, m.Total.Why, m.HeldBack[0].Reason = note, note+": 2026-08-02", note
	m.Days[0].Contract = "TSA\u2066 2026\x07"
	for _, tc := range []struct {
		f    Format
		want []string
	}{
		{FormatCSV, []string{
			",TSA\\u{2066} 2026\\u{7},",
			",provisional,accepted by ops\\u{9B} at 2026-08-03 09:00:00 UTC: logger\\u{1B}[2J replaced\\u{202E}; 3\\u{85} hours\\u{9}of\\u{D}\\u{A}nothing\\u{200B},,",
		}},
		{FormatMarkdown, []string{
			"- 2026-08-02: accepted by ops\\u{9B} at 2026-08-03 09:00:00 UTC: logger\\u{1B}[2J replaced\\u{202E}; 3 hours of nothing\\u{200B}\n",
			"| provisional | accepted by ops\\u{9B} at 2026-08-03 09:00:00 UTC: logger\\u{1B}[2J replaced\\u{202E}; 3 hours of nothing\\u{200B}: 2026-08-02 |\n",
		}},
	} {
		var b bytes.Buffer
		if err := Write(&b, m, tc.f); err != nil {
			t.Fatal(err)
		}
		for i, r := range b.String() {
			if r != '\n' && (r < 0x20 || (0x7f <= r && r <= 0x9f) || strings.ContainsRune("\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff", r)) {
				t.Errorf("%s: %U at byte %d:\n%s", tc.f, r, i, b.String())
			}
		}
		for _, want := range tc.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s:\n%s\nwant it to contain\n%s", tc.f, b.String(), want)
			}
		}
	}
}

// TestWriteJSON: snake_case keys, nulls for what was not computed.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sample(), FormatJSON); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	days := got["days"].([]any)
	held := days[1].(map[string]any)
	total := got["total"].(map[string]any)
	if got["farm_id"] != "north" || got["status"] != "provisional" || len(days) != 2 ||
		held["expected"] != nil || held["availability"] != nil || held["why"] != "no rollup" ||
		total["availability"] != 0.5 || total["computed_at"] != "2026-08-02T00:01:00Z" ||
		got["held_back"].([]any)[0].(map[string]any)["reason"] != "no rollup" {
		t.Fatalf("JSON: %s", b.String())
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"csv", "json", "md"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Fatalf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("xlsx"); err == nil || err.Error() != `format "xlsx": want csv, json or md` {
		t.Fatalf("ParseFormat(xlsx): %v", err)
	}
	if got := FileName("ardnave-point", "2026-08", FormatCSV); got != "ardnave-point_2026-08.csv" {
		t.Fatalf("FileName = %q", got)
	}
}
