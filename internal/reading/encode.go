package reading

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Encoder writes readings in one wire format.
type Encoder struct {
	f      Format
	w      *bufio.Writer
	buf    []byte
	header bool
}

// NewEncoder returns an encoder of format f writing to w. Call Flush at the end.
func NewEncoder(f Format, w io.Writer) *Encoder {
	return &Encoder{f: f, w: bufio.NewWriterSize(w, 256<<10)}
}

// csvHeader is the CSV encoder's header line: Fields, in order.
var csvHeader = strings.Join(Fields, ",") + "\n"

// Encode writes one reading. received_at is omitted when zero and state
// when empty: NDJSON leaves the key out; CSV always has both columns (the
// header is Fields) and leaves the cell empty, which every CSV reader of
// readings takes as none (the decoder, and psql's COPY … CSV as NULL).
func (e *Encoder) Encode(r *Reading) error {
	b := e.buf[:0]
	switch e.f {
	case CSV:
		if !e.header {
			e.header = true
			b = append(b, csvHeader...)
		}
		b = append(b, r.TurbineID...)
		b = append(b, ',')
		b = r.RecordedAt.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, ',')
		if !r.ReceivedAt.IsZero() {
			b = r.ReceivedAt.UTC().AppendFormat(b, time.RFC3339Nano)
		}
		b = append(b, ',')
		b = strconv.AppendBool(b, r.Available)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(r.PowerKW), 'f', -1, 32)
		b = append(b, ',')
		b = strconv.AppendFloat(b, float64(r.WindMS), 'f', -1, 32)
		b = append(b, ',')
		b = appendCSVField(b, r.State)
	default:
		b = append(b, `{"turbine_id":`...)
		b = appendJSONString(b, r.TurbineID)
		b = append(b, `,"recorded_at":"`...)
		b = r.RecordedAt.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
		if !r.ReceivedAt.IsZero() {
			b = append(b, `,"received_at":"`...)
			b = r.ReceivedAt.UTC().AppendFormat(b, time.RFC3339Nano)
			b = append(b, '"')
		}
		b = append(b, `,"available":`...)
		b = strconv.AppendBool(b, r.Available)
		b = append(b, `,"power_kw":`...)
		b = strconv.AppendFloat(b, float64(r.PowerKW), 'f', -1, 32)
		b = append(b, `,"wind_ms":`...)
		b = strconv.AppendFloat(b, float64(r.WindMS), 'f', -1, 32)
		if r.State != "" {
			b = append(b, `,"state":`...)
			b = appendJSONString(b, r.State)
		}
		b = append(b, '}')
	}
	b = append(b, '\n')
	e.buf = b
	_, err := e.w.Write(b)
	return err
}

// Flush writes any buffered output.
func (e *Encoder) Flush() error { return e.w.Flush() }

// appendCSVField appends s as one CSV cell, quoted (a '"' doubled) when it
// holds a comma, a quote or a line end. (The decoder trims spaces around a
// cell, quoted or not.)
func appendCSVField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// appendJSONString appends s as a JSON string: '"' and '\\' escaped,
// control characters as \u00XX, invalid UTF-8 as U+FFFD (as encoding/json
// does), everything else as is. strconv.Quote is not JSON: it writes \x..
// and \U........ escapes that JSON does not have.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
