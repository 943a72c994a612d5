package reading

import (
	"bufio"
	"io"
	"strconv"
	"time"
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

// Encode writes one reading (received_at is omitted when zero).
func (e *Encoder) Encode(r *Reading) error {
	b := e.buf[:0]
	switch e.f {
	case CSV:
		if !e.header {
			e.header = true
			b = append(b, "turbine_id,recorded_at,received_at,available,power_kw,wind_ms\n"...)
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
	default:
		b = append(b, `{"turbine_id":`...)
		b = strconv.AppendQuote(b, r.TurbineID)
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
		b = append(b, '}')
	}
	b = append(b, '\n')
	e.buf = b
	_, err := e.w.Write(b)
	return err
}

// Flush writes any buffered output.
func (e *Encoder) Flush() error { return e.w.Flush() }
