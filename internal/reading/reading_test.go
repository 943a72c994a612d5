package reading

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRoundTrip(t *testing.T) {
	in := []Reading{
		{TurbineID: "AP-001", RecordedAt: time.Date(2026, 8, 1, 5, 58, 0, 0, time.UTC), ReceivedAt: time.Date(2026, 8, 4, 9, 0, 0, 123456000, time.UTC), Available: true, PowerKW: 1234.5, WindMS: 9.25, State: "RUN 12"},
		{TurbineID: "KS-140", RecordedAt: time.Date(2026, 3, 29, 0, 59, 58, 0, time.UTC), Available: false, PowerKW: 0, WindMS: 0.5},
	}
	for _, f := range []Format{NDJSON, CSV} {
		var buf bytes.Buffer
		enc := NewEncoder(f, &buf)
		for i := range in {
			if err := enc.Encode(&in[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		dec, err := NewDecoder(f, &buf)
		if err != nil {
			t.Fatal(err)
		}
		for i := range in {
			rec, err := dec.Next()
			if err != nil || rec.Problem != "" {
				t.Fatalf("%s record %d: %v %q", f, i, err, rec.Problem)
			}
			got := rec.Reading
			if got.TurbineID != in[i].TurbineID || !got.RecordedAt.Equal(in[i].RecordedAt) || !got.ReceivedAt.Equal(in[i].ReceivedAt) ||
				got.Available != in[i].Available || got.PowerKW != in[i].PowerKW || got.WindMS != in[i].WindMS || got.State != in[i].State {
				t.Fatalf("%s record %d: got %+v, want %+v", f, i, got, in[i])
			}
		}
		if _, err := dec.Next(); err != io.EOF {
			t.Fatalf("%s: after the last record err = %v, want io.EOF", f, err)
		}
	}
}

func TestNDJSONEdgeCases(t *testing.T) {
	for _, tc := range []struct{ line, problem string }{
		{`{"turbine_id":"A\u002d1","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2,"extra":{"ignored":[1,"}"]}}`, ""},
		{`{"turbine_id":"A-1","recorded_at":{"t":1},"available":true,"power_kw":1,"wind_ms":2}`, `recorded_at: cannot parse "{\"t\":1}"`},
		{`{"turbine_id":"A-1","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2,"note":"x"}`, ""},
		{` { "turbine_id" : "A-1" , "recorded_at" : "2026-08-01T00:00:00+02:00" , "received_at" : null, "available" : 1 , "power_kw" : -1e3 , "wind_ms" : 0 } `, ""},
		{`{"turbine_id":42,"recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2}`, `turbine_id: "42" is not a turbine id string`},
		{`{"turbine_id":"A-1","recorded_at":null,"available":true,"power_kw":1,"wind_ms":2}`, "recorded_at: is null"},
		{`{"turbine_id":"A-1"`, "malformed JSON"},
		{`[1,2]`, "not a JSON object"},
	} {
		var r Reading
		got := parseObject([]byte(tc.line), &r)
		if (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
			t.Fatalf("parseObject(%s) = %q, want %q", tc.line, got, tc.problem)
		}
	}
}

// decodeAll decodes all of in, failing the test on a stream error.
func decodeAll(t *testing.T, f Format, in string) []Record {
	t.Helper()
	dec, err := NewDecoder(f, strings.NewReader(in))
	if err != nil {
		t.Fatalf("%s: NewDecoder: %v", f, err)
	}
	var out []Record
	for {
		rec, err := dec.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: Next: %v", f, err)
		}
		c := *rec
		c.Raw = append([]byte(nil), rec.Raw...)
		out = append(out, c)
	}
}

func TestBOMAndCRLF(t *testing.T) {
	const bom = "\xEF\xBB\xBF"
	t1 := time.Date(2026, 8, 1, 5, 58, 0, 0, time.UTC)
	t2 := time.Date(2026, 8, 1, 5, 58, 2, 0, time.UTC)
	want := []struct {
		line int64
		r    Reading
	}{
		{2, Reading{TurbineID: "AP-001", RecordedAt: t1, Available: true, PowerKW: 1234.5, WindMS: 9.25}},
		{4, Reading{TurbineID: "AP-002", RecordedAt: t2, ReceivedAt: t2.Add(time.Second), Available: false, PowerKW: 0, WindMS: 0.5}},
		{5, Reading{TurbineID: "Østervang 7", RecordedAt: t2, Available: true, PowerKW: -3, WindMS: 12}},
	}
	check := func(t *testing.T, name string, recs []Record) {
		t.Helper()
		if len(recs) != len(want) {
			t.Fatalf("%s: %d records, want %d: %+v", name, len(recs), len(want), recs)
		}
		for i, rec := range recs {
			w := want[i]
			if rec.Problem != "" {
				t.Fatalf("%s: line %d: problem %q (raw %q)", name, rec.Line, rec.Problem, rec.Raw)
			}
			g := rec.Reading
			if rec.Line != w.line || g.TurbineID != w.r.TurbineID || !g.RecordedAt.Equal(w.r.RecordedAt) || !g.ReceivedAt.Equal(w.r.ReceivedAt) ||
				g.Available != w.r.Available || g.PowerKW != w.r.PowerKW || g.WindMS != w.r.WindMS {
				t.Fatalf("%s: record %d: line %d %+v, want line %d %+v", name, i, rec.Line, g, w.line, w.r)
			}
			if bytes.ContainsAny(rec.Raw, "\r\n") || bytes.HasPrefix(rec.Raw, []byte(bom)) {
				t.Fatalf("%s: line %d: raw %q keeps a line end or the BOM", name, rec.Line, rec.Raw)
			}
		}
	}

	// As a spreadsheet's "CSV UTF-8" export writes it: BOM, CRLF, columns
	// in its own order, a blank line.
	csvIn := bom + "Turbine_ID,recorded_at,available,power_kw,wind_ms,received_at\r\n" +
		"AP-001,2026-08-01T05:58:00Z,TRUE,1234.5,9.25,\r\n" +
		"\r\n" +
		"AP-002,2026-08-01T05:58:02Z,false,0,0.5,2026-08-01T05:58:03Z\r\n" +
		`"Østervang 7",2026-08-01T07:58:02+02:00,1,-3,12,` + "\r\n"
	check(t, "CSV", decodeAll(t, CSV, csvIn))
	// All fields quoted, the header too (as some tools write it); no final line end.
	quoted := bom + `"turbine_id","recorded_at","available","power_kw","wind_ms","received_at"` + "\r\n" +
		`"AP-001","2026-08-01T05:58:00Z","true","1234.5","9.25",""` + "\r\n\r\n" +
		`"AP-002","2026-08-01T05:58:02Z","false","0","0.5","2026-08-01T05:58:03Z"` + "\r\n" +
		`"Østervang 7","2026-08-01T07:58:02+02:00","1","-3","12",""`
	check(t, "quoted CSV", decodeAll(t, CSV, quoted))

	ndjsonIn := bom + "\r\n" +
		`{"turbine_id":"AP-001","recorded_at":"2026-08-01T05:58:00Z","available":true,"power_kw":1234.5,"wind_ms":9.25}` + "\r\n" +
		"  \r\n" +
		`{"turbine_id":"AP-002","recorded_at":"2026-08-01T05:58:02Z","received_at":"2026-08-01T05:58:03Z","available":false,"power_kw":0,"wind_ms":0.5}` + "\r\n" +
		`{"turbine_id":"\u00d8stervang 7","recorded_at":"2026-08-01T07:58:02+02:00","available":true,"power_kw":-3,"wind_ms":12}` + "\r\n"
	check(t, "NDJSON", decodeAll(t, NDJSON, ndjsonIn))

	// The BOM is skipped at the start of the stream only; elsewhere it is data.
	recs := decodeAll(t, NDJSON, bom+bom+`{}`+"\n"+bom+`{}`)
	if len(recs) != 2 || recs[0].Line != 1 || !strings.HasPrefix(recs[0].Problem, "not a JSON object") ||
		!bytes.Equal(recs[0].Raw, []byte(bom+`{}`)) || recs[1].Line != 2 || !strings.HasPrefix(recs[1].Problem, "not a JSON object") {
		t.Fatalf("BOMs after the first: %+v", recs)
	}
	// Only a BOM, or a BOM and a header: no records (and for CSV, the header is found).
	if recs := decodeAll(t, NDJSON, bom); len(recs) != 0 {
		t.Fatalf("BOM only: %+v", recs)
	}
	if recs := decodeAll(t, CSV, bom+"turbine_id,recorded_at,available,power_kw,wind_ms"); len(recs) != 0 {
		t.Fatalf("BOM and header only: %+v", recs)
	}
}

func TestCSVHeaderErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no header line"},
		{"\xEF\xBB\xBF\r\n\r\n", "no header line"},
		{"turbine_id,recorded_at,available,power_kw\r\nA,2026-08-01T00:00:00Z,1,2\r\n", `CSV header (line 1): missing column "wind_ms" (have "turbine_id,recorded_at,available,power_kw")`},
		{"\n\nturbine_id,\"recorded_at,available,power_kw,wind_ms\n", `CSV header (line 3): malformed CSV: extraneous or missing " in quoted-field`},
		{strings.Repeat("turbine_id,", MaxLine/10) + "\n", fmt.Sprintf("CSV header (line 1): longer than %d bytes", MaxLine)},
	} {
		_, err := NewDecoder(CSV, strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !utf8.ValidString(err.Error()) || len(err.Error()) > 400 {
			t.Errorf("header %.40q: err = %v, want it to contain %q (and be short valid UTF-8)", tc.in, err, tc.want)
		}
	}
}

// TestProblems checks that every kind of Problem names the field (or, for
// a line that cannot be split into fields, what is wrong and where), and is
// valid UTF-8 without NUL whatever the line holds.
func TestProblems(t *testing.T) {
	const (
		ok  = `"recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2`
		hdr = "turbine_id,recorded_at,available,power_kw,wind_ms\n"
	)
	euro63 := strings.Repeat("a", 63) + "€" // the 64-byte cut falls inside the €
	for _, tc := range []struct {
		f          Format
		line, want string
	}{
		{NDJSON, `[1,2]`, `not a JSON object: expected '{' at byte 0, found "[1,2]"`},
		{NDJSON, "\x00{}", `not a JSON object: expected '{' at byte 0, found "\x00{}"`},
		{NDJSON, `{}`, `missing field "turbine_id"`},
		{NDJSON, `{"turbine_id":"A"}`, `missing field "recorded_at"`},
		{NDJSON, `{"turbine_id":"A",` + ok + `,}`, `malformed JSON: expected a quoted key at byte 97, found "}"`},
		{NDJSON, `{turbine_id:"A"}`, `malformed JSON: expected a quoted key at byte 1, found "turbine_id:\"A\"}"`},
		{NDJSON, `{"turbine_id`, `malformed JSON: key at byte 1: unterminated string`},
		{NDJSON, `{"turbine_id" "A"}`, `malformed JSON: expected ':' after key "turbine_id" at byte 14, found "\"A\"}"`},
		{NDJSON, `{"turbine_id":"A"` + " \xff", `malformed JSON: expected ',' or '}' at byte 18, found "\xff"`},
		{NDJSON, `{"turbine_id":"A",` + ok + `}x`, `malformed JSON: trailing data after the object at byte 97, found "x"`},
		{NDJSON, `{"turbine_id":"A",` + ok + `}}`, `malformed JSON: trailing data after the object at byte 97, found "}"`},
		{NDJSON, `{"turbine_id":"A`, `malformed JSON: value of "turbine_id" at byte 14: unterminated string`},
		{NDJSON, `{"turbine_id":}`, `malformed JSON: value of "turbine_id" at byte 14: missing value`},
		{NDJSON, `{"turbine_id":`, `malformed JSON: value of "turbine_id" at byte 14: missing value`},
		{NDJSON, `{"x":[1,{"a":"]"}` + "\x00", `malformed JSON: value of "x" at byte 5: unterminated object or array`},
		{NDJSON, `{"turbine_id":"A\x41"}`, `malformed JSON: value of "turbine_id" at byte 14: bad escape "\\x41" at byte 16`},
		{NDJSON, `{"turbine_id":"A\u12"}`, `malformed JSON: value of "turbine_id" at byte 14: bad escape "\\u12" at byte 16`},
		{NDJSON, "{\"\xff\xfe\":\"A", `malformed JSON: value of "\xff\xfe" at byte 6: unterminated string`},
		{NDJSON, `{"` + euro63 + `" 1}`, `malformed JSON: expected ':' after key "` + strings.Repeat("a", 63) + `"… at byte`},
		{NDJSON, `{"turbine_id":42,` + ok + `}`, `turbine_id: "42" is not a turbine id string`},
		{NDJSON, `{"turbine_id":"",` + ok + `}`, `turbine_id: "" is not a turbine id string`},
		{NDJSON, `{"turbine_id":"A\u0000B",` + ok + `}`, `turbine_id: "A\x00B" has a control character or invalid UTF-8`},
		{NDJSON, `{"turbine_id":"A` + "\x00" + `B",` + ok + `}`, `turbine_id: "A\x00B" has a control character or invalid UTF-8`},
		{NDJSON, `{"turbine_id":"A` + "\xc3" + `",` + ok + `}`, `turbine_id: "A\xc3" has a control character or invalid UTF-8`},
		{NDJSON, `{"turbine_id":"A\t",` + ok + `}`, `turbine_id: "A\t" has a control character or invalid UTF-8`},
		{NDJSON, `{"turbine_id":null}`, `turbine_id: is null`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"` + "x\xe2\x82" + `"}`, `recorded_at: cannot parse "x\xe2\x82" (want RFC 3339`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"` + euro63 + `"}`, `recorded_at: cannot parse "` + strings.Repeat("a", 63) + `"… (want RFC 3339`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"0001-01-01T00:00:00Z"}`, `recorded_at: "0001-01-01T00:00:00Z" is out of range`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"9999-12-31T23:00:00-05:00"}`, `recorded_at: "9999-12-31T23:00:00-05:00" is out of range`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","received_at":"x\u0000"}`, `received_at: cannot parse "x\x00"`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":"maybe"}`, `available: cannot parse "maybe" as true/false`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":NaN}`, `power_kw: "NaN" is not a finite number`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":"-Inf"}`, `power_kw: "-Inf" is not a finite number`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1e39}`, `power_kw: "1e39" is out of range`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1e400}`, `power_kw: "1e400" is out of range`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":[1]}`, `wind_ms: cannot parse "[1]" as a number`},
		{NDJSON, `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":{"a":{"b":"` + "\xff" + `"}}}`, `wind_ms: cannot parse "{\"a\":{\"b\":\"\xff\"}}" as a number`},
		{NDJSON, `{"turbine_id":"A",` + ok + `,"state":1}`, `state: "1" is not a string (a controller status code is a JSON string, or null for none)`},
		{NDJSON, `{"turbine_id":"A",` + ok + `,"state":"` + euro63 + `"}`, `state: "` + strings.Repeat("a", 63) + `"… is longer than 64 bytes`},
		{NDJSON, `{"turbine_id":"A",` + ok + `,"state":"A\nB"}`, `state: "A\nB" has a control character or invalid UTF-8`},
		{CSV, `A,2026-08-01T00:00:00Z,true,1`, `has 4 columns, the header has 5`},
		{CSV, `A,"2026-08-01T00:00:00Z,true,1,2`, `malformed CSV in column 2 ("recorded_at"): extraneous or missing " in quoted-field at byte 32`},
		{CSV, `A,20"26,true,1,2`, `malformed CSV in column 2 ("recorded_at"): bare " in non-quoted-field at byte 4`},
		{CSV, `,2026-08-01T00:00:00Z,true,1,2`, `missing field "turbine_id"`},
		{CSV, "A\x00,2026-08-01T00:00:00Z,true,1,2", `turbine_id: "A\x00" has a control character or invalid UTF-8`},
		{CSV, "A,2026-08-01T00:00:00Z\xff,true,1,2", `recorded_at: cannot parse "2026-08-01T00:00:00Z\xff"`},
		{CSV, "A,2026-08-01T00:00:00Z,true,1,inf", `wind_ms: "inf" is not a finite number`},
	} {
		in := tc.line
		if tc.f == CSV {
			in = hdr + in
		}
		recs := decodeAll(t, tc.f, in)
		if len(recs) != 1 {
			t.Errorf("%s %q: %d records, want 1", tc.f, tc.line, len(recs))
			continue
		}
		got := recs[0].Problem
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s %q:\n got problem %q\nwant prefix  %q", tc.f, tc.line, got, tc.want)
		}
		if !utf8.ValidString(got) || strings.IndexByte(got, 0) >= 0 || len(got) > 300 {
			t.Errorf("%s %q: problem %q is not short valid UTF-8 without NUL", tc.f, tc.line, got)
		}
	}
}

func TestJSONStrings(t *testing.T) {
	const rest = `,"recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2}`
	for _, tc := range []struct{ in, want string }{
		{`"AP\/001"`, "AP/001"},                  // PHP writes \/
		{`"W\ud83c\udf2cT"`, "W\U0001F32CT"},     // a surrogate pair (Python's ensure_ascii)
		{`"A\ud83cB"`, "A\uFFFDB"},               // a lone surrogate becomes U+FFFD, as in encoding/json
		{`"A\udf2c\ud83cB"`, "A\uFFFD\uFFFDB"},   // two halves in the wrong order
		{`"A\ud83c\u0041"`, "A\uFFFDA"},          // a high half and not a low one
		{`"\"q\" \\ \u00d8\b\f\n\r\t"`, ""},      // control characters: refused (see TestProblems)
		{`"\u00C5\u00e5"`, "Åå"},                 // upper and lower case hex
		{`"\ufeffA"`, "\ufeffA"},                 // a BOM inside a value is a character
		{`"A` + "\xe2\x82\xac" + `"`, "A€"},      // raw UTF-8
		{`"\u20ac` + "\xe2\x82\xac" + `"`, "€€"}, // both
	} {
		recs := decodeAll(t, NDJSON, `{"turbine_id":`+tc.in+rest)
		if len(recs) != 1 {
			t.Fatalf("%s: %d records", tc.in, len(recs))
		}
		if tc.want == "" {
			if recs[0].Problem == "" {
				t.Errorf("%s: accepted as %q", tc.in, recs[0].Reading.TurbineID)
			}
			continue
		}
		if recs[0].Problem != "" || recs[0].Reading.TurbineID != tc.want {
			t.Errorf("%s: turbine_id %q problem %q, want %q", tc.in, recs[0].Reading.TurbineID, recs[0].Problem, tc.want)
		}
	}
}

func TestEncoderWritesJSON(t *testing.T) {
	for _, id := range []string{"AP-001", `q"uote\back`, "tab\there", "nul\x00", "\x7fdel", "Østervang", "\U000E0001tag", "\u2028", "bad\xffutf8", "\xe2\x82"} {
		var buf bytes.Buffer
		enc := NewEncoder(NDJSON, &buf)
		r := Reading{TurbineID: id, RecordedAt: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), State: id}
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
		if err := enc.Flush(); err != nil {
			t.Fatal(err)
		}
		var got struct {
			TurbineID string `json:"turbine_id"`
			State     string `json:"state"`
		}
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("%q: encoder wrote %s, not JSON: %v", id, buf.Bytes(), err)
		}
		if want := string([]rune(id)); got.TurbineID != want || got.State != want { // each invalid byte as U+FFFD
			t.Fatalf("%q: encoder wrote %s, which encoding/json reads as %q, state %q", id, buf.Bytes(), got.TurbineID, got.State)
		}
		var r2 Reading
		if msg := parseObject(bytes.TrimSpace(buf.Bytes()), &r2); msg == "" && r2.TurbineID != got.TurbineID {
			t.Fatalf("%q: parseObject reads %s as %q, encoding/json as %q", id, buf.Bytes(), r2.TurbineID, got.TurbineID)
		}
	}
}

func TestLongLines(t *testing.T) {
	good := `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2}`
	pad := func(n int) string { return good[:len(good)-1] + strings.Repeat(" ", n-len(good)) + "}" }
	in := pad(MaxLine) + "\n" + // exactly MaxLine: accepted
		pad(MaxLine) + "\r\n" + // and with CRLF
		pad(MaxLine+1) + "\n" + // one byte more: refused
		strings.Repeat("x", 3*MaxLine+17) + "\r\n" + // far more than the reader's chunk
		good + "\n" +
		strings.Repeat("€", MaxLine) // the last line, too long, no line end
	recs := decodeAll(t, NDJSON, in)
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	for i, rec := range recs {
		long := i == 2 || i == 3 || i == 5
		if rec.Line != int64(i+1) || (rec.Problem != "") != long || len(rec.Raw) > MaxLine || (long && len(rec.Raw) != MaxLine) {
			t.Fatalf("record %d: line %d, %d raw bytes, problem %q", i, rec.Line, len(rec.Raw), rec.Problem)
		}
		if long && !strings.HasPrefix(rec.Problem, "line longer than 65536 bytes") {
			t.Fatalf("record %d: problem %q", i, rec.Problem)
		}
	}
	if !bytes.Equal(recs[3].Raw, bytes.Repeat([]byte("x"), MaxLine)) {
		t.Fatalf("a long line's Raw is not its first MaxLine bytes")
	}
}
