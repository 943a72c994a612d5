package reading

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestState: a reading's optional controller status code is read from
// either format (absent, null, "" and an empty cell are none), written back
// by both encoders, and refused, naming the field, when it is not a string,
// too long or not text (invalid UTF-8, a C0 or C1 control); the other lines
// of the input are read as before.
func TestState(t *testing.T) {
	const (
		ndHead  = `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2`
		csvHead = "turbine_id,recorded_at,available,power_kw,wind_ms,state\n"
		csvRow  = "A,2026-08-01T00:00:00Z,true,1,2,"
	)
	max := strings.Repeat("s", MaxState)
	for _, tc := range []struct {
		f          Format
		line, want string
	}{
		{NDJSON, ndHead + `}`, ""},
		{NDJSON, ndHead + `,"state":null}`, ""},
		{NDJSON, ndHead + `,"state":""}`, ""},
		{NDJSON, ndHead + `,"state":"RUN"}`, "RUN"},
		{NDJSON, `{"state":"FAULT 2,7",` + ndHead[1:] + `}`, "FAULT 2,7"},
		{NDJSON, ndHead + `,"state":"St\u00f6rung \"3\""}`, `Störung "3"`},
		{NDJSON, ndHead + `,"state":"` + max + `"}`, max},
		{NDJSON, ndHead + `,"state":"` + strings.Repeat("€", MaxState/3) + `"}`, strings.Repeat("€", MaxState/3)},
		{CSV, csvRow, ""},
		{CSV, csvRow + "  ", ""},
		{CSV, csvRow + `""`, ""},
		{CSV, csvRow + "RUN", "RUN"},
		{CSV, csvRow + `"FAULT 2,7"`, "FAULT 2,7"},
		{CSV, csvRow + `"Störung ""3"""`, `Störung "3"`},
		{CSV, csvRow + max, max},
	} {
		in := tc.line
		if tc.f == CSV {
			in = csvHead + in
		}
		recs := decodeAll(t, tc.f, in)
		if len(recs) != 1 || recs[0].Problem != "" || recs[0].Reading.State != tc.want {
			t.Errorf("%s %s: %+v, want state %q", tc.f, tc.line, recs, tc.want)
		}
	}
	// A CSV without a state column: every reading has none.
	recs := decodeAll(t, CSV, "turbine_id,recorded_at,available,power_kw,wind_ms\n"+"A,2026-08-01T00:00:00Z,true,1,2\n")
	if len(recs) != 1 || recs[0].Problem != "" || recs[0].Reading.State != "" {
		t.Errorf("CSV without a state column: %+v", recs)
	}

	notString := " is not a string (a controller status code is a JSON string, or null for none)"
	long := strings.Repeat("s", MaxState+1)
	for _, tc := range []struct {
		f          Format
		line, want string
	}{
		{NDJSON, ndHead + `,"state":"` + long + `"}`, `state: "` + max + `"… is longer than 64 bytes`},
		{NDJSON, ndHead + `,"state":"` + strings.Repeat("€", MaxState/3+1) + `"}`, `state: "` + strings.Repeat("€", MaxState/3) + `"… is longer than 64 bytes`},
		{NDJSON, ndHead + `,"state":"RUN\t1"}`, `state: "RUN\t1" has a control character or invalid UTF-8`},
		{NDJSON, ndHead + `,"state":"RUN\u0000"}`, `state: "RUN\x00" has a control character or invalid UTF-8`},
		{NDJSON, ndHead + `,"state":"RUN` + "\xff" + `"}`, `state: "RUN\xff" has a control character or invalid UTF-8`},
		{NDJSON, ndHead + `,"state":"RUN\u007f"}`, `state: "RUN\x7f" has a control character or invalid UTF-8`},
		{NDJSON, ndHead + `,"state":"RUN\u0085"}`, `state: "RUN\u0085" has a control character or invalid UTF-8`},
		{NDJSON, ndHead + `,"state":"\u009bRUN"}`, `state: "\u009bRUN" has a control character or invalid UTF-8`},
		{NDJSON, ndHead + `,"state":42}`, `state: "42"` + notString},
		{NDJSON, ndHead + `,"state":true}`, `state: "true"` + notString},
		{NDJSON, ndHead + `,"state":["RUN"]}`, `state: "[\"RUN\"]"` + notString},
		{NDJSON, ndHead + `,"state":{"code":"RUN"}}`, `state: "{\"code\":\"RUN\"}"` + notString},
		{NDJSON, ndHead + `,"state":RUN}`, `state: "RUN"` + notString},
		{NDJSON, ndHead + `,"state":"RUN","state":"STOP"}`, `duplicate key "state" at byte `},
		{CSV, csvRow + long, `state: "` + max + `"… is longer than 64 bytes`},
		{CSV, csvRow + "RUN\x01", `state: "RUN\x01" has a control character or invalid UTF-8`},
		// mid-cell: a cell is trimmed of Unicode spaces, and U+0085 is one
		{CSV, csvRow + "RU\u0085N", `state: "RU\u0085N" has a control character or invalid UTF-8`},
		{CSV, csvRow + `"RUN` + "\n", `malformed CSV in column 6 ("state")`},
	} {
		in := tc.line
		if tc.f == CSV {
			in = csvHead + in
		}
		recs := decodeAll(t, tc.f, in)
		if len(recs) != 1 || !strings.HasPrefix(recs[0].Problem, tc.want) {
			t.Errorf("%s %q:\n got %+v\nwant problem prefix %q", tc.f, tc.line, recs, tc.want)
		}
	}
	if got := decodeAll(t, NDJSON, ndHead+`,"state":"RUN\t1"}`)[0].Problem; got != `state: "RUN\t1" has a control character or invalid UTF-8` {
		t.Errorf("control character: problem %q", got)
	}
	if got := decodeAll(t, NDJSON, ndHead+`,"state":"`+long+`"}`)[0].Problem; got != `state: "`+max+`"… is longer than 64 bytes` {
		t.Errorf("too long: problem %q", got)
	}

	// A bad state rejects its line only, reported with its number.
	for _, f := range []Format{NDJSON, CSV} {
		in := ndHead + `,"state":"RUN"}` + "\n" + ndHead + `,"state":"` + long + `"}` + "\n\n" + ndHead + `,"state":7}` + "\n" + ndHead + "}\n"
		if f == CSV {
			in = csvHead + csvRow + "RUN\n" + csvRow + long + "\n\n" + csvRow + "A\x00\n" + csvRow + "\n"
		}
		recs := decodeAll(t, f, in)
		base := int64(0)
		if f == CSV {
			base = 1
		}
		if len(recs) != 4 || recs[0].Problem != "" || recs[0].Reading.State != "RUN" ||
			recs[1].Line != base+2 || !strings.HasPrefix(recs[1].Problem, "state: ") ||
			recs[2].Line != base+4 || !strings.HasPrefix(recs[2].Problem, "state: ") ||
			recs[3].Line != base+5 || recs[3].Problem != "" || recs[3].Reading.State != "" {
			t.Errorf("%s: records %+v: want the first and last good, the two bad states rejected on their lines", f, recs)
		}
	}
}

// TestStateRoundTrip: both encoders write a state the decoders read back
// the same, and leave out none.
func TestStateRoundTrip(t *testing.T) {
	states := []string{"", "RUN", "FAULT 2,7", `say "stop"`, "Störung", strings.Repeat("x", MaxState), ""}
	for _, f := range []Format{NDJSON, CSV} {
		var buf bytes.Buffer
		enc := NewEncoder(f, &buf)
		for i, s := range states {
			r := Reading{TurbineID: "AP-001", RecordedAt: time.Date(2026, 8, 1, 0, 0, 2*i, 0, time.UTC), Available: true, PowerKW: 1, WindMS: 2, State: s}
			if err := enc.Encode(&r); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		if f == NDJSON && bytes.Contains(bytes.SplitN(buf.Bytes(), []byte("\n"), 2)[0], []byte(`"state"`)) {
			t.Errorf("NDJSON: a reading without a state is written with the key: %s", buf.Bytes())
		}
		recs := decodeAll(t, f, buf.String())
		if len(recs) != len(states) {
			t.Fatalf("%s: %d records, want %d:\n%s", f, len(recs), len(states), buf.Bytes())
		}
		for i, rec := range recs {
			if rec.Problem != "" || rec.Reading.State != states[i] {
				t.Errorf("%s record %d: state %q problem %q, want state %q (line %q)", f, i, rec.Reading.State, rec.Problem, states[i], rec.Raw)
			}
		}
	}
}
