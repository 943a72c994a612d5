package reading

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	in := []Reading{
		{TurbineID: "AP-001", RecordedAt: time.Date(2026, 8, 1, 5, 58, 0, 0, time.UTC), ReceivedAt: time.Date(2026, 8, 4, 9, 0, 0, 123456000, time.UTC), Available: true, PowerKW: 1234.5, WindMS: 9.25},
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
				got.Available != in[i].Available || got.PowerKW != in[i].PowerKW || got.WindMS != in[i].WindMS {
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
