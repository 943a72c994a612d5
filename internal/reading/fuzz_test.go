package reading

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/, one file per seed in
// the "go test fuzz v1" format, and run as ordinary tests in go test. The
// seed-* files are written from the tables below:
//
//	GALEWATCH_WRITE_FUZZ_CORPUS=1 go test -run TestFuzzCorpus ./internal/reading
//
// and TestFuzzCorpus fails when they are missing or out of date. Files with
// other names are inputs the fuzzer found (kept as regression tests).
//
// Fuzzing runs one target per invocation:
//
//	go test -run '^$' -fuzz '^FuzzNDJSON$' -fuzztime 60s ./internal/reading
//	go test -run '^$' -fuzz '^FuzzCSV$' -fuzztime 60s ./internal/reading
//	go test -run '^$' -fuzz '^FuzzStorableText$' -fuzztime 60s ./internal/reading

const (
	goodLine = `{"turbine_id":"AP-001","recorded_at":"2026-08-01T05:58:00Z","received_at":"2026-08-01T05:58:01.5+01:00","available":true,"power_kw":1234.5,"wind_ms":9.25}`
	csvHead  = "turbine_id,recorded_at,received_at,available,power_kw,wind_ms"
	csvGood  = "AP-001,2026-08-01T05:58:00Z,2026-08-01T05:58:01.5+01:00,true,1234.5,9.25"
	bomText  = "\xEF\xBB\xBF"
)

// straddle4096 is a line in which a 3-byte character starts at byte 4095,
// so a 4096-byte cut falls inside it.
func straddle4096(prefix, suffix string) string {
	return prefix + strings.Repeat("a", 4095-len(prefix)) + "€" + suffix
}

var ndjsonSeeds = []struct{ name, data string }{
	{"empty", ""},
	{"good", goodLine + "\n"},
	{"good-no-final-newline", goodLine},
	{"good-lines-blank-lines", "\n" + goodLine + "\n \t\n" + strings.Replace(goodLine, `"received_at":"2026-08-01T05:58:01.5+01:00",`, "", 1) + "\n\n"},
	{"bom-crlf", bomText + goodLine + "\r\n" + goodLine + "\r\n"},
	{"bom-only", bomText},
	{"bom-twice", bomText + bomText + goodLine + "\n" + bomText + goodLine},
	{"lone-cr", goodLine + "\r" + goodLine + "\r\r\n\r"},
	{"invalid-utf8-values", `{"turbine_id":"AP-` + "\xff\xfe" + `","recorded_at":"2026-08-01T05:58:00Z` + "\xc3" + `","available":true,"power_kw":1,"wind_ms":2}` + "\n" + "\xe2\x82\n"},
	{"invalid-utf8-key", `{"` + "\xff" + `":"x","turbine_id":"A","recorded_at":"2026-08-01T05:58:00Z","available":true,"power_kw":1,"wind_ms":2}`},
	{"nul-bytes", `{"turbine_id":"A` + "\x00" + `B","recorded_at":"2026-08-01T05:58:00Z","available":true,"power_kw":1,"wind_ms":2}` + "\n\x00\n" + `{"turbine_id":"A\u0000","recorded_at":"x` + "\x00" + `"}`},
	{"line-exactly-maxline", goodLine[:len(goodLine)-1] + strings.Repeat(" ", MaxLine-len(goodLine)) + "}\n" + goodLine},
	{"line-longer-than-maxline", strings.Repeat("x", MaxLine+1) + "\n" + goodLine + "\n"},
	{"long-string-value", `{"turbine_id":"` + strings.Repeat("é", MaxLine/2) + `"}` + "\r\n" + goodLine},
	{"straddle-4096", straddle4096(`{"turbine_id":"`, `"}`) + "\n" + straddle4096(`{"note":"`, `",`+goodLine[1:])},
	{"nan-inf", strings.Join([]string{
		strings.Replace(goodLine, "1234.5", "NaN", 1),
		strings.Replace(goodLine, "1234.5", "Infinity", 1),
		strings.Replace(goodLine, "1234.5", `"-Inf"`, 1),
		strings.Replace(goodLine, "9.25", "1e400", 1),
		strings.Replace(goodLine, "9.25", "3.5e38", 1),
		strings.Replace(goodLine, "9.25", "-0", 1),
		strings.Replace(goodLine, "9.25", "1e-46", 1),
	}, "\n")},
	{"nested-values", strings.Join([]string{
		`{"x":{"y":[1,{"z":"]}"},[[[]]]]},` + goodLine[1:],
		strings.Replace(goodLine, `"2026-08-01T05:58:00Z"`, `{"t":[1,2]}`, 1),
		strings.Replace(goodLine, `"AP-001"`, `["AP-001"]`, 1),
		`{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `,` + goodLine[1:],
		`{"x":{]},` + goodLine[1:],
	}, "\n")},
	{"unbalanced-quotes", strings.Join([]string{`{"turbine_id":"A`, `{"turbine_id":"A\"}`, `{"a":"\"}`, `{"`, `"`, `{"turbine_id":"A","x":"\`, `{"x":[1,"]`}, "\n")},
	{"escapes", strings.Join([]string{
		strings.Replace(goodLine, `"AP-001"`, `"AP\/\u00d8\ud83c\udf2c"`, 1),
		strings.Replace(goodLine, `"AP-001"`, `"\ud83c"`, 1),
		strings.Replace(goodLine, `"AP-001"`, `"\x41"`, 1),
		strings.Replace(goodLine, `"AP-001"`, `"\u00"`, 1),
		strings.Replace(goodLine, `"AP-001"`, `"A\tB"`, 1),
		strings.Replace(goodLine, `"turbine_id"`, `"turbine\u005fid"`, 1),
	}, "\n")},
	{"structure", strings.Join([]string{`{}`, `[]`, `{`, `}`, `{"turbine_id":}`, `{"turbine_id" "A"}`, `{"turbine_id":"A",}`, goodLine + `x`, goodLine + goodLine, `{turbine_id:"A"}`, `null`, `{"turbine_id":null}`, `{"turbine_id":"","recorded_at":null}`}, "\n")},
	{"duplicate-keys", strings.Replace(goodLine, `{`, `{"turbine_id":"B","received_at":null,"available":"maybe",`, 1) + "\n" + goodLine[:len(goodLine)-1] + `,"received_at":null}`},
	{"times", strings.Join([]string{
		strings.Replace(goodLine, "2026-08-01T05:58:00Z", "0001-01-01T00:00:00Z", 1),
		strings.Replace(goodLine, "2026-08-01T05:58:00Z", "0000-12-31T23:00:00-01:00", 1),
		strings.Replace(goodLine, "2026-08-01T05:58:00Z", "9999-12-31T23:59:59.999999999Z", 1),
		strings.Replace(goodLine, "2026-08-01T05:58:00Z", "9999-12-31T23:00:00-05:00", 1),
		strings.Replace(goodLine, "2026-08-01T05:58:00Z", "2026-08-01T05:58:00.1234567891+23:59", 1),
		strings.Replace(goodLine, "2026-08-01T05:58:00Z", "2026-02-30T05:58:00Z", 1),
	}, "\n")},
	{"strict-numbers-keys", strings.Join([]string{
		strings.Replace(goodLine, "1234.5", "1_000", 1),
		strings.Replace(goodLine, "1234.5", "0x10", 1),
		strings.Replace(goodLine, "1234.5", "+1", 1),
		strings.Replace(goodLine, "1234.5", ".5", 1),
		strings.Replace(goodLine, "1234.5", "1.", 1),
		strings.Replace(goodLine, "1234.5", "01", 1),
		strings.Replace(goodLine, "1234.5", "0x1p-2", 1),
		strings.Replace(goodLine, "1234.5", `"1_000"`, 1),
		strings.Replace(goodLine, "true", "yes", 1),
		`{"x":0x10,` + goodLine[1:],
		goodLine[:len(goodLine)-1] + `,"turbine_id":"B"}`,
		goodLine[:len(goodLine)-1] + `,"turbine\u005fid":"B"}`,
		`{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"j":2,` + goodLine[1:],
	}, "\n")},
	{"states", strings.Join([]string{
		goodLine[:len(goodLine)-1] + `,"state":"RUN"}`,
		goodLine[:len(goodLine)-1] + `,"state":null}`,
		goodLine[:len(goodLine)-1] + `,"state":""}`,
		`{"state":"FAULT \"2,7\" St\u00f6rung",` + goodLine[1:],
		goodLine[:len(goodLine)-1] + `,"state":"` + strings.Repeat("s", 64) + `"}`,
		goodLine[:len(goodLine)-1] + `,"state":"` + strings.Repeat("s", 65) + `"}`,
		goodLine[:len(goodLine)-1] + `,"state":"` + strings.Repeat("a", 63) + "€" + `"}`,
		goodLine[:len(goodLine)-1] + `,"state":"RUN\t1"}`,
		goodLine[:len(goodLine)-1] + `,"state":"RUN` + "\x00\xff" + `"}`,
		goodLine[:len(goodLine)-1] + `,"state":7}`,
		goodLine[:len(goodLine)-1] + `,"state":["RUN"]}`,
		goodLine[:len(goodLine)-1] + `,"state":RUN}`,
		goodLine[:len(goodLine)-1] + `,"state":"RUN","state":"STOP"}`,
	}, "\n")},
	{"keys-in-any-case", strings.Join([]string{
		goodLine[:len(goodLine)-1] + `,"TURBINE_ID":"FA-2","AVAILABLE":false}`,
		`{"Turbine_Id":"FA-2",` + goodLine[1:],
		`{"STATE":"A","State":"B",` + goodLine[1:],
		goodLine[:len(goodLine)-1] + `,"power_\u212aw":5}`,
		goodLine[:len(goodLine)-1] + ",\"power_\u212aw\":5}",
		goodLine[:len(goodLine)-1] + `,"state":"RUN","\u017ftate":"STOP"}`,
		goodLine[:len(goodLine)-1] + ",\"wind_m\u017f\":5}",
		`{"note":"x","NOTE":"y","Turb\u0131ne_id":"B","turbine-id":"C",` + goodLine[1:],
		`{"TURBINE_ID":"FA-2","recorded_at":"2026-08-01T05:58:00Z","available":true,"power_kw":1,"wind_ms":2}`,
		goodLine[:len(goodLine)-1] + `,"State":"FAULT"}`,
		`{"reCeived_At":"2026-08-01T05:58:09Z",` + goodLine[1:],
	}, "\n")},
	{"states-c1", strings.Join([]string{
		goodLine[:len(goodLine)-1] + `,"state":"RUN\u0085"}`,
		goodLine[:len(goodLine)-1] + ",\"state\":\"RUN\u0085\"}",
		goodLine[:len(goodLine)-1] + ",\"state\":\"RUN\xc2\"}",
		goodLine[:len(goodLine)-1] + `,"state":"RUN\u00a0"}`,
	}, "\n")},
	{"bools", strings.Join([]string{
		strings.Replace(goodLine, "true", `"YES"`, 1),
		strings.Replace(goodLine, "true", `0`, 1),
		strings.Replace(goodLine, "true", `"maybe"`, 1),
	}, "\n")},
}

var csvSeeds = []struct{ name, data string }{
	{"empty", ""},
	{"header-only", csvHead + "\n"},
	{"good", csvHead + "\n" + csvGood + "\n" + "KS-140,2026-03-29T00:59:58Z,,false,0,0.5\n"},
	{"bom-crlf", bomText + csvHead + "\r\n" + csvGood + "\r\n\r\n" + csvGood},
	{"bom-quoted-header", bomText + `"turbine_id","recorded_at","available","power_kw","wind_ms"` + "\r\n" + `"A","2026-08-01T05:58:00Z","TRUE","1","2"` + "\r\n"},
	{"columns-reordered", "  Wind_MS , power_kw,available,RECORDED_AT,turbine_id,extra\n2,1,yes,2026-08-01T05:58:00Z,A,x\n"},
	{"header-missing-column", "turbine_id,recorded_at,available,power_kw\nA,2026-08-01T05:58:00Z,true,1\n"},
	{"header-after-blank-lines", "\n \r\n" + csvHead + "\n" + csvGood},
	{"header-malformed", `turbine_id,"recorded_at,available,power_kw,wind_ms` + "\n" + csvGood},
	{"header-too-long", strings.Repeat("turbine_id,", MaxLine/10) + "\n" + csvGood},
	{"invalid-utf8", csvHead + "\n" + "AP-\xff\xfe,2026-08-01T05:58:00Z,,true,1,2\n" + "A,2026-08-01T05:58:00Z\xc3,,true,1,2\n" + "\xe2\x82\n"},
	{"nul-bytes", csvHead + "\n" + "A\x00,2026-08-01T05:58:00Z,,true,1,2\n\x00\n" + "A,2026-08-01T05:58:00Z,,true,1\x00,2\n"},
	{"quotes", csvHead + "\n" + strings.Join([]string{
		`"A,1",2026-08-01T05:58:00Z,,true,1,2`,
		`"A""1",2026-08-01T05:58:00Z,"",true,1,2`,
		`"A,2026-08-01T05:58:00Z,,true,1,2`,
		`A"1,2026-08-01T05:58:00Z,,true,1,2`,
		`"A"x,2026-08-01T05:58:00Z,,true,1,2`,
		`"{""a"":[1,{""b"":2}]}",2026-08-01T05:58:00Z,,true,1,2`,
		`"`,
		`""`,
	}, "\n")},
	{"columns", csvHead + "\n" + "A,2026-08-01T05:58:00Z,,true,1\n" + "A,2026-08-01T05:58:00Z,,true,1,2,3\n" + ",,,,,\n" + " A , 2026-08-01T05:58:00Z , , 1 , 1 , 2 \n"},
	{"nan-inf", csvHead + "\n" + "A,2026-08-01T05:58:00Z,,true,NaN,2\nA,2026-08-01T05:58:00Z,,true,1,+Inf\nA,2026-08-01T05:58:00Z,,true,1e400,2\nA,2026-08-01T05:58:00Z,,true,0x1p-2,1_0\n"},
	{"line-longer-than-maxline", csvHead + "\n" + strings.Repeat("x", MaxLine+1) + "\r\n" + csvGood},
	{"straddle-4096", csvHead + "\n" + straddle4096("", ",2026-08-01T05:58:00Z,,true,1,2") + "\n"},
	{"states", csvHead + ",state\n" + strings.Join([]string{
		csvGood + ",RUN",
		csvGood + ",",
		csvGood + `,""`,
		csvGood + `,"FAULT ""2,7"" Störung"`,
		csvGood + "," + strings.Repeat("s", 64),
		csvGood + "," + strings.Repeat("s", 65),
		csvGood + ",RUN\x01",
		csvGood + ",RUN\xff",
		csvGood + `,"RUN`,
	}, "\n") + "\n"},
	{"times", csvHead + "\n" + "A,0001-01-01T00:00:00Z,,true,1,2\nA,2026-08-01T05:58:00Z,0001-01-01T00:00:00Z,true,1,2\nA,9999-12-31T23:00:00-05:00,,true,1,2\n"},
}

var storableSeeds = []struct {
	name string
	data string
	max  int
}{
	{"empty", "", 4096},
	{"ascii", "AP-001,2026-08-01T05:58:00Z,,true,1,2", 4096},
	{"straddle-4096", strings.Repeat("a", 4095) + "€", 4096},
	{"straddle-4-byte", "ab🌬cd", 4},
	{"invalid", "a\xff\xfeb", 4096},
	{"nul", "a\x00b\x00", 4096},
	{"bom-middle", "a" + bomText + "b", 4096},
	{"invalid-at-cut", "ab\xe2\x82\x80\x80\x80", 3},
	{"max-zero", "abc", 0},
	{"max-negative", "abc", -5},
	{"long", strings.Repeat("é\x00", 5000), 4096},
}

// corpusFile is data in the "go test fuzz v1" format.
func corpusFile(vals ...any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range vals {
		switch v := v.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
		case int:
			fmt.Fprintf(&b, "int(%d)\n", v)
		default:
			panic(fmt.Sprintf("corpusFile: %T", v))
		}
	}
	return []byte(b.String())
}

// checkCorpus writes (with GALEWATCH_WRITE_FUZZ_CORPUS=1) or checks the
// seed files of one fuzz target.
func checkCorpus(t *testing.T, target string, files map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	write := os.Getenv("GALEWATCH_WRITE_FUZZ_CORPUS") == "1"
	if write {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range files {
		path := filepath.Join(dir, "seed-"+name)
		if write {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is missing or out of date (%v): run GALEWATCH_WRITE_FUZZ_CORPUS=1 go test -run TestFuzzCorpus ./internal/reading", path, err)
		}
	}
}

func TestFuzzCorpus(t *testing.T) {
	nd := map[string][]byte{}
	for _, s := range ndjsonSeeds {
		nd[s.name] = corpusFile([]byte(s.data))
	}
	checkCorpus(t, "FuzzNDJSON", nd)
	cs := map[string][]byte{}
	for _, s := range csvSeeds {
		cs[s.name] = corpusFile([]byte(s.data))
	}
	checkCorpus(t, "FuzzCSV", cs)
	st := map[string][]byte{}
	for _, s := range storableSeeds {
		st[s.name] = corpusFile([]byte(s.data), s.max)
	}
	checkCorpus(t, "FuzzStorableText", st)
}

func FuzzNDJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, NDJSON, data) })
}
func FuzzCSV(f *testing.F) { f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, CSV, data) }) }

// physicalLine is what the decoders should make of one line of input.
type physicalLine struct {
	raw     []byte
	tooLong bool
	blank   bool
}

// physicalLines splits data the simple way: on '\n', a BOM dropped from the
// start, "\r"s dropped from the end of each line.
func physicalLines(data []byte) []physicalLine {
	data = bytes.TrimPrefix(data, []byte(bomText))
	if len(data) == 0 {
		return nil
	}
	parts := bytes.Split(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1] // data ends with a line end
	}
	out := make([]physicalLine, len(parts))
	for i, p := range parts {
		raw := bytes.TrimRight(p, "\r")
		if len(raw) > MaxLine {
			out[i] = physicalLine{raw: p[:MaxLine], tooLong: true}
		} else {
			out[i] = physicalLine{raw: raw, blank: len(bytes.TrimSpace(raw)) == 0}
		}
	}
	return out
}

// checkDecode decodes all of data and checks every record against the
// decoder's contract.
func checkDecode(t *testing.T, f Format, data []byte) {
	lines := physicalLines(data)
	dec, err := NewDecoder(f, bytes.NewReader(data))
	next := 0 // index into lines of the next line that should be a record
	if f == CSV {
		if err != nil {
			if msg := err.Error(); !utf8.ValidString(msg) || strings.IndexByte(msg, 0) >= 0 || len(msg) > 1024 {
				t.Fatalf("CSV header error %q is not short valid UTF-8 without NUL", msg)
			}
			return
		}
		for next < len(lines) && lines[next].blank {
			next++
		}
		next++ // the header
	} else if err != nil {
		t.Fatal(err)
	}
	var last int64
	for {
		rec, err := dec.Next()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("Next after line %d: %v (the input is in memory: no stream error is possible)", last, err)
			}
			break
		}
		for next < len(lines) && lines[next].blank {
			next++
		}
		if next >= len(lines) {
			t.Fatalf("record at line %d after the last non-blank line (%d lines)", rec.Line, len(lines))
		}
		want := lines[next]
		next++
		if rec.Line != int64(next) || rec.Line <= last {
			t.Fatalf("record line %d after line %d; want line %d", rec.Line, last, next)
		}
		last = rec.Line
		if !bytes.Equal(rec.Raw, want.raw) {
			t.Fatalf("line %d: Raw %.80q, want %.80q", rec.Line, rec.Raw, want.raw)
		}
		if want.tooLong != (rec.Problem == tooLongProblem) {
			t.Fatalf("line %d: %d bytes, problem %q", rec.Line, len(want.raw), rec.Problem)
		}
		checkRecord(t, f, rec)
	}
	for next < len(lines) && lines[next].blank {
		next++
	}
	if next != len(lines) {
		t.Fatalf("decoding ended at line %d of %d", last, len(lines))
	}
}

func checkRecord(t *testing.T, f Format, rec *Record) {
	if text, _, _ := StorableText(rec.Raw, 4096); !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 || len(text) > 4*4096 {
		t.Fatalf("line %d: StorableText gave %d bytes %.80q", rec.Line, len(text), text)
	}
	if rec.Problem != "" {
		if p := rec.Problem; !utf8.ValidString(p) || strings.IndexByte(p, 0) >= 0 || len(p) > 512 {
			t.Fatalf("line %d: problem %q is not short valid UTF-8 without NUL", rec.Line, p)
		}
		return
	}
	if key, dup := repeatedKey(rec.Raw); f == NDJSON && dup {
		t.Fatalf("line %d: accepted with the key %q twice, or a field's name in another case: %.80q", rec.Line, key, rec.Raw)
	}
	r := rec.Reading
	if theirs, ok := asEncodingJSON(rec.Raw); f == NDJSON && ok && !sameReading(r, theirs) {
		t.Fatalf("line %d: read as %+v; encoding/json reads %+v: %.80q", rec.Line, r, theirs, rec.Raw)
	}
	if r.TurbineID == "" || r.RecordedAt.IsZero() {
		t.Fatalf("line %d: good record without a turbine or time: %+v", rec.Line, r)
	}
	if !utf8.ValidString(r.TurbineID) || strings.ContainsFunc(r.TurbineID, unicode.IsControl) {
		t.Fatalf("line %d: turbine id %q", rec.Line, r.TurbineID)
	}
	if len(r.State) > MaxState || !utf8.ValidString(r.State) || strings.ContainsFunc(r.State, unicode.IsControl) {
		t.Fatalf("line %d: state %q", rec.Line, r.State)
	}
	if math.IsNaN(float64(r.PowerKW)) || math.IsInf(float64(r.PowerKW), 0) || math.IsNaN(float64(r.WindMS)) || math.IsInf(float64(r.WindMS), 0) {
		t.Fatalf("line %d: not finite: %+v", rec.Line, r)
	}
	// The NDJSON encoder writes what the decoder reads back the same.
	var buf bytes.Buffer
	enc := NewEncoder(NDJSON, &buf)
	if err := enc.Encode(&r); err != nil {
		t.Fatal(err)
	}
	if err := enc.Flush(); err != nil {
		t.Fatal(err)
	}
	var back Reading
	line := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if msg := parseObject(line, &back); msg != "" {
		t.Fatalf("%s line %d: %+v encodes as %s, which decodes with problem %q", f, rec.Line, r, line, msg)
	}
	if !sameReading(r, back) {
		t.Fatalf("%s line %d: %+v encodes as %s, which decodes as %+v", f, rec.Line, r, line, back)
	}
}

// repeatedKey is a key that appears twice in the top level of a line
// encoding/json reads as an object (keys compared unescaped), or a field's
// name in another case (as strings.EqualFold compares them, which is how
// encoding/json matches a key to a field), if any.
func repeatedKey(raw []byte) (string, bool) {
	if !json.Valid(raw) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	keys := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key := tok.(string)
		for _, f := range Fields {
			if key != f && strings.EqualFold(key, f) {
				return key, true
			}
		}
		if keys[key] {
			return key, true
		}
		keys[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// asEncodingJSON is the reading encoding/json finds in a line that is a
// JSON object: the value it takes for each field (the last key it matches to
// the field, exactly or in any case), read by setField as this reader reads
// a value; ok is false when it finds none or one setField refuses.
func asEncodingJSON(raw []byte) (Reading, bool) {
	var v struct {
		TurbineID  json.RawMessage `json:"turbine_id"`
		RecordedAt json.RawMessage `json:"recorded_at"`
		ReceivedAt json.RawMessage `json:"received_at"`
		Available  json.RawMessage `json:"available"`
		PowerKW    json.RawMessage `json:"power_kw"`
		WindMS     json.RawMessage `json:"wind_ms"`
		State      json.RawMessage `json:"state"`
	}
	if !json.Valid(raw) || json.Unmarshal(raw, &v) != nil {
		return Reading{}, false
	}
	var r Reading
	for i, val := range []json.RawMessage{v.TurbineID, v.RecordedAt, v.ReceivedAt, v.Available, v.PowerKW, v.WindMS, v.State} {
		if val == nil || string(val) == "null" {
			continue
		}
		if val[0] == '"' {
			var s string
			if json.Unmarshal(val, &s) != nil {
				return Reading{}, false
			}
			val = []byte(s)
		}
		if setField(&r, Fields[i], val) != "" {
			return Reading{}, false
		}
	}
	return r, true
}

func sameReading(a, b Reading) bool {
	return a.TurbineID == b.TurbineID && a.RecordedAt.Equal(b.RecordedAt) && a.ReceivedAt.Equal(b.ReceivedAt) &&
		a.Available == b.Available && math.Float32bits(a.PowerKW) == math.Float32bits(b.PowerKW) &&
		math.Float32bits(a.WindMS) == math.Float32bits(b.WindMS) && a.State == b.State
}

func FuzzStorableText(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n > 1<<20 {
			n = 1 << 20
		}
		text, escaped, truncated := StorableText(data, n)
		want, wantEscaped, wantTruncated := storableRef(data, n)
		if text != want || escaped != wantEscaped || truncated != wantTruncated {
			t.Fatalf("StorableText(%.80q, %d) = %.80q, %v, %v; want %.80q, %v, %v", data, n, text, escaped, truncated, want, wantEscaped, wantTruncated)
		}
		if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
			t.Fatalf("StorableText(%.80q, %d) = %.80q: not valid UTF-8 without NUL", data, n, text)
		}
		if len(text) > 4*max(n, 0) {
			t.Fatalf("StorableText(%.80q, %d): %d bytes", data, n, len(text))
		}
		if !escaped && !strings.HasPrefix(string(data), text) {
			t.Fatalf("StorableText(%.80q, %d) = %.80q: not escaped, yet not a prefix", data, n, text)
		}
		if truncated && len(data) > 0 && n > 0 && !escaped && len(text) < n-(utf8.UTFMax-1) {
			t.Fatalf("StorableText(%.80q, %d): cut at %d bytes, more than a character short of the limit", data, n, len(text))
		}
	})
}

// storableRef is StorableText written the other way round: walking forward
// through data one character (or invalid byte) at a time, keeping each
// while it fits in max bytes.
func storableRef(data []byte, max int) (string, bool, bool) {
	var out strings.Builder
	escaped := false
	i := 0
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		if i+size > max {
			break
		}
		if r == 0 || (r == utf8.RuneError && size == 1) {
			fmt.Fprintf(&out, `\x%02x`, data[i])
			escaped = true
		} else {
			out.Write(data[i : i+size])
		}
		i += size
	}
	return out.String(), escaped, i < len(data)
}
