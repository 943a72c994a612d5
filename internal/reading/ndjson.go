package reading

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxLine is the longest line accepted; a longer one is rejected, not buffered.
const MaxLine = 64 << 10

// lineReader yields lines (without the newline) in constant memory.
type lineReader struct {
	r    *bufio.Reader
	line int64
	buf  []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10)}
}

// next returns the next line, whether it was too long (and truncated), or
// io.EOF at the end of input.
func (lr *lineReader) next() ([]byte, bool, error) {
	lr.buf = lr.buf[:0]
	tooLong := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(lr.buf)+len(chunk) <= MaxLine {
			lr.buf = append(lr.buf, chunk...)
		} else {
			tooLong = true
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		if errors.Is(err, io.EOF) && len(lr.buf) == 0 && !tooLong {
			return nil, false, io.EOF
		}
		lr.line++
		line := bytes.TrimRight(lr.buf, "\r\n")
		return line, tooLong, nil
	}
}

type ndjsonDecoder struct {
	lines *lineReader
	rec   Record
}

func newNDJSONDecoder(r io.Reader) *ndjsonDecoder {
	return &ndjsonDecoder{lines: newLineReader(r)}
}

func (d *ndjsonDecoder) Next() (*Record, error) {
	for {
		line, tooLong, err := d.lines.next()
		if err != nil {
			return nil, err
		}
		if !tooLong && len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines are not records
		}
		d.rec = Record{Line: d.lines.line, Raw: line}
		if tooLong {
			d.rec.Problem = fmt.Sprintf("line longer than %d bytes", MaxLine)
		} else {
			d.rec.Problem = parseObject(line, &d.rec.Reading)
		}
		return &d.rec, nil
	}
}

// parseObject decodes one flat JSON object into r. It is a small hand-written
// scanner: the ingest path decodes millions of lines and the reflection-based
// encoding/json costs several times more per line. Unknown keys are ignored.
func parseObject(b []byte, r *Reading) string {
	p := jsonScanner{b: b}
	p.ws()
	if !p.eat('{') {
		return "not a JSON object"
	}
	var seen [6]bool
	p.ws()
	if p.eat('}') {
		return `missing field "turbine_id"`
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return "malformed JSON: expected a quoted key at byte " + strconv.Itoa(p.i)
		}
		p.ws()
		if !p.eat(':') {
			return "malformed JSON: expected ':' after key " + strconv.Quote(string(key))
		}
		p.ws()
		val, quoted, ok := p.value()
		if !ok {
			return "malformed JSON: bad value for " + strconv.Quote(string(key))
		}
		if msg := assign(r, &seen, key, val, quoted); msg != "" {
			return msg
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			break
		}
		return "malformed JSON: expected ',' or '}' at byte " + strconv.Itoa(p.i)
	}
	p.ws()
	if p.i != len(p.b) {
		return "malformed JSON: trailing data after the object"
	}
	for i, f := range Fields {
		if !seen[i] && f != "received_at" {
			return fmt.Sprintf("missing field %q", f)
		}
	}
	return ""
}

// assign sets one field. quoted says the JSON value was a string; null
// arrives as val == nil.
func assign(r *Reading, seen *[6]bool, key, val []byte, quoted bool) string {
	idx := -1
	for i, f := range Fields {
		if string(key) == f {
			idx = i
			break
		}
	}
	if idx < 0 {
		return ""
	}
	name := Fields[idx]
	if val == nil {
		if name == "received_at" {
			return ""
		}
		return fmt.Sprintf("%s: is null", name)
	}
	seen[idx] = true
	if name == "turbine_id" && (!quoted || len(val) == 0) {
		return fmt.Sprintf("turbine_id: %q is not a turbine id string", truncate(val))
	}
	return setField(r, name, val)
}

// skipComposite moves past one balanced {...} or [...] value.
func (p *jsonScanner) skipComposite() bool {
	depth := 0
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '"':
			if _, ok := p.str(); !ok {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				p.i++
				return true
			}
		}
		p.i++
	}
	return false
}

type jsonScanner struct {
	b []byte
	i int
}

func (p *jsonScanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a JSON string and returns its contents (unescaped when needed).
func (p *jsonScanner) str() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	escaped := false
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			escaped = true
			p.i += 2
			continue
		case '"':
			raw := p.b[start:p.i]
			p.i++
			if !escaped {
				return raw, true
			}
			s, err := strconv.Unquote(`"` + string(raw) + `"`)
			if err != nil {
				return nil, false
			}
			return []byte(s), true
		}
		p.i++
	}
	return nil, false
}

// value reads a string, number, true/false, null or a bare token (such as
// NaN, which JSON does not allow but broken senders write; it is then
// rejected as not a finite number rather than as unparseable).
func (p *jsonScanner) value() (val []byte, quoted bool, ok bool) {
	if p.i >= len(p.b) {
		return nil, false, false
	}
	switch p.b[p.i] {
	case '"':
		s, ok := p.str()
		return s, true, ok
	case '{', '[':
		// A nested value: fine for a key we do not know (senders may add
		// fields); a known field will fail to parse it and say so.
		start := p.i
		if !p.skipComposite() {
			return nil, false, false
		}
		return p.b[start:p.i], false, true
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
		p.i++
	}
	tok := p.b[start:p.i]
	if len(tok) == 0 {
		return nil, false, false
	}
	if string(tok) == "null" {
		return nil, false, true
	}
	return tok, false, true
}
