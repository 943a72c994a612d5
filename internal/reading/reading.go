// Package reading is one turbine reading and its two wire formats (NDJSON and
// CSV): streaming decoders that report every bad line with its number and a
// specific reason, and encoders used by the simulator.
package reading

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Reading is one sample from one turbine.
type Reading struct {
	TurbineID string
	// RecordedAt is event time, from the turbine's own clock.
	RecordedAt time.Time
	// ReceivedAt is processing time, stamped by the ingest box; zero when the
	// record did not carry one (ingest stamps it).
	ReceivedAt time.Time
	Available  bool
	PowerKW    float32
	WindMS     float32
	// State is the controller's status code as sent, which the farm's
	// availability contract maps to a category; empty when the record
	// carried none (stored as ''). At most MaxState bytes of text.
	State string
}

// Format is a wire format.
type Format string

// The wire formats.
const (
	NDJSON Format = "ndjson"
	CSV    Format = "csv"
)

// fieldNames are the fields, in CSV column order; an array so that the
// decoders' per-field tables have its length as a constant.
var fieldNames = [...]string{"turbine_id", "recorded_at", "received_at", "available", "power_kw", "wind_ms", "state"}

// Fields, in CSV column order.
var Fields = fieldNames[:]

// optional says a record may leave field f out (absent, null or an empty
// CSV cell): received_at (ingest stamps it) and state (none).
func optional(f string) bool { return f == "received_at" || f == "state" }

// MaxState is the longest state accepted, in bytes.
const MaxState = 64

// ParseFormat accepts "ndjson", "jsonl", "json" or "csv".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ndjson", "jsonl", "json", "application/x-ndjson", "application/jsonl", "application/json":
		return NDJSON, nil
	case "csv", "text/csv":
		return CSV, nil
	}
	return "", fmt.Errorf("unknown format %q (want ndjson or csv)", s)
}

// FormatFromPath guesses the format from a file extension (.csv, else NDJSON).
func FormatFromPath(path string) Format {
	switch strings.ToLower(filepath.Ext(strings.TrimSuffix(path, ".gz"))) {
	case ".csv":
		return CSV
	}
	return NDJSON
}

// Record is one decoded line: either a Reading or the reason it is bad.
type Record struct {
	// Line is the 1-based line number in the source.
	Line int64
	// Raw is the line's bytes without its line end (and, on the first line,
	// without a UTF-8 byte-order mark); for a line longer than MaxLine, its
	// first MaxLine bytes. Valid only until the next call to Next. It may
	// hold any bytes: see StorableText.
	Raw []byte
	// Truncated says the line was longer than MaxLine: Raw holds only its
	// first MaxLine bytes.
	Truncated bool
	Reading   Reading
	// Problem is empty for a good line, else what is wrong with it: the
	// field and its value (quoted, at most 64 bytes of it), or for a line
	// that cannot be split into fields what is wrong and where (a 0-based
	// byte offset into Raw, or the column count). It is always valid UTF-8
	// without NUL bytes, whatever the line holds.
	Problem string
}

// Decoder yields records one at a time in constant memory.
type Decoder interface {
	// Next returns the next record, io.EOF at the end, or an error when
	// the stream itself cannot be read (not for a bad line).
	Next() (*Record, error)
}

// NewDecoder returns a decoder of format f over r.
func NewDecoder(f Format, r io.Reader) (Decoder, error) {
	switch f {
	case NDJSON:
		return newNDJSONDecoder(r), nil
	case CSV:
		return newCSVDecoder(r)
	}
	return nil, fmt.Errorf("unknown format %q", f)
}

// parseTime parses an RFC 3339 timestamp, naming the field on failure. The
// time must fall after 0001-01-01T00:00:00Z (the zero time means "absent")
// and before the year 10000 UTC (RFC 3339 has four-digit years, so such a
// time could not be written back).
func parseTime(field string, v []byte) (time.Time, string) {
	t, err := time.Parse(time.RFC3339Nano, string(v))
	if err != nil {
		return time.Time{}, fmt.Sprintf("%s: cannot parse %s (want RFC 3339, e.g. 2026-08-01T05:58:00Z)", field, quote(v))
	}
	if !t.After(time.Time{}) || t.UTC().Year() > 9999 {
		return time.Time{}, fmt.Sprintf("%s: %s is out of range (want a time after 0001-01-01T00:00:00Z and before the year 10000 UTC)", field, quote(v))
	}
	return t, ""
}

// setField parses one field's text into r and returns what is wrong with
// it, if anything. Both wire formats go through it, so a value means the
// same and is refused for the same reason in NDJSON and CSV.
func setField(r *Reading, field string, v []byte) string {
	var msg string
	switch field {
	case "turbine_id":
		if !isText(v) {
			return fmt.Sprintf("turbine_id: %s has a control character or invalid UTF-8", quote(v))
		}
		r.TurbineID = string(v)
	case "recorded_at":
		r.RecordedAt, msg = parseTime(field, v)
	case "received_at":
		r.ReceivedAt, msg = parseTime(field, v)
	case "available":
		r.Available, msg = parseBool(field, v)
	case "power_kw":
		r.PowerKW, msg = parseFloat(field, v)
	case "wind_ms":
		r.WindMS, msg = parseFloat(field, v)
	case "state":
		switch {
		case !isText(v):
			return fmt.Sprintf("state: %s has a control character or invalid UTF-8", quote(v))
		case len(v) > MaxState:
			return fmt.Sprintf("state: %s is longer than %d bytes", quote(v), MaxState)
		}
		r.State = string(v)
	}
	return msg
}

// isText says v is valid UTF-8 without control characters (C0 with NUL,
// DEL, C1): no turbine id or state has them, a NUL could not be stored, and
// the others would be printed raw wherever the state is shown.
func isText(v []byte) bool {
	ascii := true
	for i, c := range v {
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
			if c == 0xc2 && i+1 < len(v) && v[i+1] < 0xa0 {
				return false // U+0080-U+009F, the C1 controls (or not UTF-8)
			}
		}
	}
	return ascii || utf8.Valid(v)
}

// parseFloat reads a number as JSON writes it (jsonNumber), in both wire
// formats: strconv alone also takes 1_000, 0x10, +1, .5, 1., 01, hex
// floats, Inf and NaN.
func parseFloat(field string, v []byte) (float32, string) {
	if !jsonNumber(v) {
		switch {
		case nonFinite(v):
			return 0, fmt.Sprintf("%s: %s is not a finite number", field, quote(v))
		case len(v) > 0 && strings.IndexByte("0123456789+-.", v[0]) >= 0:
			return 0, fmt.Sprintf("%s: %s is not a number as JSON writes it (digits with an optional leading '-', '.' fraction and exponent: no '+', '_', hex, leading zero or bare '.')", field, quote(v))
		}
		return 0, fmt.Sprintf("%s: cannot parse %s as a number", field, quote(v))
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Sprintf("%s: %s is out of range", field, quote(v))
	}
	if err != nil {
		return 0, fmt.Sprintf("%s: cannot parse %s as a number", field, quote(v))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Sprintf("%s: %s is not a finite number", field, quote(v))
	}
	if math.Abs(x) > math.MaxFloat32 {
		return 0, fmt.Sprintf("%s: %s is out of range", field, quote(v))
	}
	return float32(x), ""
}

// jsonNumber reports whether v is a number in JSON's grammar (RFC 8259):
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && '1' <= v[i] && v[i] <= '9':
		i = skipDigits(v, i)
	default:
		return false
	}
	if i < len(v) && v[i] == '.' {
		j := skipDigits(v, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := skipDigits(v, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(v)
}

func skipDigits(v []byte, i int) int {
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	return i
}

// nonFinite reports whether v spells NaN or an infinity the way strconv
// reads them (any case, with a sign): JSON has neither.
func nonFinite(v []byte) bool {
	if len(v) > 0 && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	s := string(v)
	return strings.EqualFold(s, "nan") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity")
}

func parseBool(field string, v []byte) (bool, string) {
	switch strings.ToLower(string(v)) {
	case "true", "t", "1", "yes":
		return true, ""
	case "false", "f", "0", "no":
		return false, ""
	}
	return false, fmt.Sprintf("%s: cannot parse %s as true/false", field, quote(v))
}

// maxQuoted is how many bytes of a value a Problem quotes.
const maxQuoted = 64

// quote returns v for a Problem: at most its first maxQuoted bytes (cut on
// a character boundary), Go-quoted so that invalid UTF-8, NUL and other
// control bytes appear as escapes (\x00, \xff) and the text is always
// valid UTF-8, followed by "…" when v was cut.
func quote(v []byte) string { return quoteN(v, maxQuoted) }

// quoteN is quote with a limit of max bytes.
func quoteN(v []byte, max int) string {
	n := cutRunes(v, max)
	q := strconv.Quote(string(v[:n]))
	if n < len(v) {
		return q + "…"
	}
	return q
}
