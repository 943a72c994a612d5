package reading

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStrictNDJSON: a line whose key repeats, or whose number (or bare
// word) JSON does not have, is a reject with a reason naming the key; the
// other lines of the input are read as before. strconv alone took 1_000,
// 0x10, +1, .5, 1., 01 and hex floats as numbers, and a repeated key took
// its last value (turbine_id twice: the reading was stored under the
// second), and a field's name in another case was ignored here but read as
// the field by encoding/json (after the field, or instead of it).
func TestStrictNDJSON(t *testing.T) {
	const (
		head = `{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"wind_ms":2,"power_kw":`
		good = head + `1}`
	)
	notJSONNumber := " is not a number as JSON writes it (digits with an optional leading '-', '.' fraction and exponent: no '+', '_', hex, leading zero or bare '.')"
	for _, tc := range []struct{ line, want string }{
		{head + `1_000}`, `power_kw: "1_000"` + notJSONNumber},
		{head + `0x10}`, `power_kw: "0x10"` + notJSONNumber},
		{head + `0x1p-2}`, `power_kw: "0x1p-2"` + notJSONNumber},
		{head + `+1}`, `power_kw: "+1"` + notJSONNumber},
		{head + `.5}`, `power_kw: ".5"` + notJSONNumber},
		{head + `1.}`, `power_kw: "1."` + notJSONNumber},
		{head + `1.e3}`, `power_kw: "1.e3"` + notJSONNumber},
		{head + `01}`, `power_kw: "01"` + notJSONNumber},
		{head + `-01}`, `power_kw: "-01"` + notJSONNumber},
		{head + `1e}`, `power_kw: "1e"` + notJSONNumber},
		{head + `-}`, `power_kw: "-"` + notJSONNumber},
		{head + `"1_000"}`, `power_kw: "1_000"` + notJSONNumber},
		{head + `Inf}`, `power_kw: "Inf" is not a finite number`},
		{head + `-Infinity}`, `power_kw: "-Infinity" is not a finite number`},
		{head + `NaN}`, `power_kw: "NaN" is not a finite number`},
		{head + `yes}`, `power_kw: cannot parse "yes" as a number`},
		{`{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2,"turbine_id":"B"}`,
			`duplicate key "turbine_id" at byte 97 (a key may appear once in a line)`},
		{`{"turbine_id":"A","turbine\u005fid":"B","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2}`,
			`duplicate key "turbine_id" at byte 18 (a key may appear once in a line)`},
		{`{"received_at":null,` + good[1:len(good)-1] + `,"received_at":"2026-08-01T00:00:01Z"}`,
			`duplicate key "received_at" at byte 116 (a key may appear once in a line)`},
		{`{"note":"x",` + good[1:len(good)-1] + `,"note":"y"}`, `duplicate key "note" at byte 108`},
		{`{"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"j":2}`, `duplicate key "j" at byte 67`},
		// keys that differ only in bytes that are not UTF-8 are one key to
		// encoding/json (each such byte U+FFFD), and so to this reader
		{"{\"\xb8\":1," + good[1:len(good)-1] + ",\"\x84\":2}", `duplicate key "\x84" at byte 103`},
		{"{\"\\ufffd\":1," + good[1:len(good)-1] + ",\"\xb8\":2}", `duplicate key "\xb8" at byte 108`},
		// a field's name in another case is that field to encoding/json:
		// after the field, a repeated key (the line said FA-1 available here
		// and FA-2 unavailable there); alone, the field read there and not
		// here (a state that sorts the slot, a received_at ingest would stamp)
		{`{"turbine_id":"FA-1","recorded_at":"2026-08-01T00:00:00Z","available":true,"power_kw":1,"wind_ms":2,"TURBINE_ID":"FA-2","AVAILABLE":false}`,
			`duplicate key "TURBINE_ID" at byte 100 (a key may appear once in a line, and "turbine_id" in any case is one key to encoding/json)`},
		{`{"Turbine_Id":"B",` + good[1:], `key "Turbine_Id" at byte 1 is "turbine_id" in another case (encoding/json reads it as "turbine_id"; a field's name is written in lower case)`},
		{`{"STATE":"A","State":"B",` + good[1:], `key "STATE" at byte 1 is "state" in another case`},
		{good[:len(good)-1] + `,"State":"FAULT"}`, `key "State" at byte 97 is "state" in another case`},
		{`{"reCeived_At":"2026-08-01T00:00:01Z",` + good[1:], `key "reCeived_At" at byte 1 is "received_at" in another case`},
		// K and S fold with U+212A KELVIN SIGN and U+017F LONG S, escaped or not
		{good[:len(good)-1] + `,"power_\u212aw":5}`, "duplicate key \"power_\u212aw\" at byte 97 (a key may appear once in a line, and \"power_kw\" in any case"},
		{good[:len(good)-1] + ",\"power_\u212aw\":5}", "duplicate key \"power_\u212aw\" at byte 97"},
		{good[:len(good)-1] + `,"state":"RUN","\u017ftate":"STOP"}`, "duplicate key \"\u017ftate\" at byte 111"},
		{good[:len(good)-1] + ",\"\u017ftate\":\"STOP\"}", "key \"\u017ftate\" at byte 97 is \"state\" in another case"},
		{`{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":yes,"power_kw":1,"wind_ms":2}`,
			`available: "yes" is not a JSON value (a string needs quotes; true and false are lower case)`},
		{`{"turbine_id":"A","recorded_at":"2026-08-01T00:00:00Z","available":TRUE,"power_kw":1,"wind_ms":2}`, `available: "TRUE" is not a JSON value`},
		{`{"turbine_id":"A","recorded_at":2026-08-01T00:00:00Z,"available":true,"power_kw":1,"wind_ms":2}`, `recorded_at: "2026-08-01T00:00:00Z" is not a JSON value`},
		{`{"x":0x10,` + good[1:], `malformed JSON: value of "x" at byte 5: "0x10" is not a JSON value`},
		{`{"x":1_000,` + good[1:], `malformed JSON: value of "x" at byte 5: "1_000" is not a JSON value`},
		{`{"x":NaN,` + good[1:], `malformed JSON: value of "x" at byte 5: "NaN" is not a JSON value`},
	} {
		var r Reading
		if got := parseObject([]byte(tc.line), &r); !strings.HasPrefix(got, tc.want) {
			t.Errorf("parseObject(%s)\n got %q\nwant prefix %q", tc.line, got, tc.want)
		}
	}
	// Numbers and values JSON has are read as before.
	for _, tc := range []struct {
		line  string
		power float32
	}{
		{head + `1500.25}`, 1500.25},
		{head + `-0}`, 0},
		{head + `0.5}`, 0.5},
		{head + `1E+3}`, 1000},
		{head + `-1.5e-1}`, -0.15},
		{head + `"12.5"}`, 12.5},
		{`{"x":[1_000,{"y":1}],"n":null,"b":false,"s":"0x10",` + good[1:], 1},
		{"{\"\xb8\":1,\"\xb8\xb8\":2," + good[1:], 1}, // two keys, not one: "\ufffd" and "\ufffd\ufffd"
		// Unknown keys that differ in case are two keys to every reader:
		// ignored by both, kept apart in a map. Folding stops at the
		// Unicode simple-fold orbit (U+0131 dotless i is no i) and at '-'.
		{`{"note":"x","NOTE":"y","Turb\u0131ne_id":"B","turbine-id":"C",` + good[1:], 1},
	} {
		var r Reading
		if got := parseObject([]byte(tc.line), &r); got != "" || r.PowerKW != tc.power {
			t.Errorf("parseObject(%s) = %q, power %v; want no problem, power %v", tc.line, got, r.PowerKW, tc.power)
		}
	}
	// CSV cells are numbers as JSON writes them too (one parser, setField).
	for _, tc := range []struct{ cell, want string }{
		{"1_000", `power_kw: "1_000"` + notJSONNumber},
		{"0x10", `power_kw: "0x10"` + notJSONNumber},
		{"+1", `power_kw: "+1"` + notJSONNumber},
		{".5", `power_kw: ".5"` + notJSONNumber},
		{"007", `power_kw: "007"` + notJSONNumber},
		{"Infinity", `power_kw: "Infinity" is not a finite number`},
		{"1.5e3", ""},
	} {
		recs := decodeAll(t, CSV, "turbine_id,recorded_at,available,power_kw,wind_ms\nA,2026-08-01T00:00:00Z,true,"+tc.cell+",2\n")
		if len(recs) != 1 || !strings.HasPrefix(recs[0].Problem, tc.want) || (tc.want == "") != (recs[0].Problem == "") {
			t.Errorf("CSV power_kw %q: %+v, want problem %q", tc.cell, recs, tc.want)
		}
	}
	// The rest of an input is read as before around a rejected line.
	in := good + "\n" + head + "1_000}\n" + `{"turbine_id":"A","turbine_id":"B"}` + "\n" + good + "\n"
	recs := decodeAll(t, NDJSON, in)
	if len(recs) != 4 || recs[0].Problem != "" || recs[1].Problem == "" || recs[2].Problem == "" || recs[3].Problem != "" || recs[3].Line != 4 {
		t.Fatalf("records %+v: want lines 1 and 4 good, 2 and 3 rejected", recs)
	}
}

// TestJSONNumberGrammar: jsonNumber agrees with encoding/json on every
// string of up to 5 characters over digits, signs, '.', exponents and the
// characters strconv also takes ('_', 'x', hex digits).
func TestJSONNumberGrammar(t *testing.T) {
	const alphabet = "019-+.eE_xa"
	var buf []byte
	n := 0
	var walk func(depth int)
	walk = func(depth int) {
		if depth > 0 {
			n++
			if got, want := jsonNumber(buf), json.Valid(buf); got != want {
				t.Fatalf("jsonNumber(%q) = %v, encoding/json says %v", buf, got, want)
			}
		}
		if depth == 5 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			buf = append(buf, alphabet[i])
			walk(depth + 1)
			buf = buf[:len(buf)-1]
		}
	}
	walk(0)
	if n != 11+121+1331+14641+161051 {
		t.Fatalf("checked %d strings, want every one of up to 5 characters", n)
	}
}
