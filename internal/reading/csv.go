package reading

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

type csvDecoder struct {
	lines *lineReader
	col   [len(fieldNames)]int // field index -> column index, -1 if absent
	ncols int
	names []string // the header's column names, quoted, for messages
	rec   Record
	cells [][]byte
}

// newCSVDecoder reads the header (the first non-blank line) and maps columns
// by name, in any order. A header missing a required column makes the whole
// source unreadable: every line would be rejected for the same reason.
func newCSVDecoder(r io.Reader) (*csvDecoder, error) {
	d := &csvDecoder{lines: newLineReader(r)}
	for {
		line, tooLong, err := d.lines.next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("CSV: no header line")
		}
		if err != nil {
			return nil, err
		}
		if tooLong {
			return nil, fmt.Errorf("CSV header (line %d): longer than %d bytes", d.lines.line, MaxLine)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if msg := d.split(line); msg != "" {
			return nil, fmt.Errorf("CSV header (line %d): %s", d.lines.line, msg)
		}
		for i := range d.col {
			d.col[i] = -1
		}
		for c, name := range d.cells {
			name := strings.ToLower(string(bytes.TrimSpace(name)))
			for i, f := range Fields {
				if name == f {
					d.col[i] = c
				}
			}
		}
		d.ncols = len(d.cells)
		for _, name := range d.cells {
			d.names = append(d.names, quote(bytes.TrimSpace(name)))
		}
		for i, f := range Fields {
			if d.col[i] < 0 && !optional(f) {
				return nil, fmt.Errorf("CSV header (line %d): missing column %q (have %s)", d.lines.line, f, quoteN(line, 160))
			}
		}
		return d, nil
	}
}

func (d *csvDecoder) Next() (*Record, error) {
	for {
		line, tooLong, err := d.lines.next()
		if err != nil {
			return nil, err
		}
		if !tooLong && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		d.rec = Record{Line: d.lines.line, Raw: line, Truncated: tooLong}
		switch {
		case tooLong:
			d.rec.Problem = tooLongProblem
		default:
			d.rec.Problem = d.parse(line, &d.rec.Reading)
		}
		return &d.rec, nil
	}
}

func (d *csvDecoder) parse(line []byte, r *Reading) string {
	if msg := d.split(line); msg != "" {
		return msg
	}
	if len(d.cells) != d.ncols {
		return fmt.Sprintf("has %d columns, the header has %d", len(d.cells), d.ncols)
	}
	for i, f := range Fields {
		c := d.col[i]
		if c < 0 {
			continue
		}
		v := bytes.TrimSpace(d.cells[c])
		if len(v) == 0 {
			if optional(f) {
				continue
			}
			return fmt.Sprintf("missing field %q", f)
		}
		if msg := setField(r, f, v); msg != "" {
			return msg
		}
	}
	return ""
}

// split sets d.cells to the line's fields, or says why it cannot. A line
// without quotes is split on commas in place; one with quotes goes through
// encoding/csv (and allocates).
func (d *csvDecoder) split(line []byte) string {
	d.cells = d.cells[:0]
	if bytes.IndexByte(line, '"') < 0 {
		d.cells = appendSplit(d.cells, line)
		return ""
	}
	fields, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) && pe.Column > 0 {
			// Column is the 1-based byte index; Problems give 0-based offsets.
			at := pe.Column - 1
			if c := columnAt(line, at); c < len(d.names) {
				return fmt.Sprintf("malformed CSV in column %d (%s): %v at byte %d", c+1, d.names[c], pe.Err, at)
			}
			return fmt.Sprintf("malformed CSV: %v at byte %d", pe.Err, at)
		}
		return "malformed CSV: " + err.Error()
	}
	for _, f := range fields {
		d.cells = append(d.cells, []byte(f))
	}
	return ""
}

// columnAt is the 0-based column holding byte offset at of a CSV line:
// the commas before it that are outside quotes.
func columnAt(line []byte, at int) int {
	col, quoted := 0, false
	for i := 0; i < at && i < len(line); i++ {
		switch line[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				col++
			}
		}
	}
	return col
}

func appendSplit(dst [][]byte, line []byte) [][]byte {
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(dst, line)
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}
