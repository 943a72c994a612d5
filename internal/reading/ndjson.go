package reading

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxLine is the longest line accepted, in bytes without its line end
// ("\n" or "\r\n"); a longer one is rejected, not buffered.
const MaxLine = 64 << 10

// bom is the UTF-8 byte-order mark, skipped at the start of a stream.
var bom = []byte{0xEF, 0xBB, 0xBF}

// lineReader yields lines (without the line end) in constant memory.
type lineReader struct {
	r       *bufio.Reader
	line    int64
	buf     []byte
	started bool // the first bytes have been read (and a BOM skipped)
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10)}
}

// next returns the next line without its line end, whether it was longer
// than MaxLine (it is then the line's first MaxLine bytes), or io.EOF at the
// end of input. A UTF-8 byte-order mark at the very start of the input is
// skipped (spreadsheets write one); lr.line still counts physical lines.
func (lr *lineReader) next() ([]byte, bool, error) {
	lr.buf = lr.buf[:0]
	dropped := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if !lr.started {
			lr.started = true
			chunk = bytes.TrimPrefix(chunk, bom)
		}
		// Keep at most MaxLine bytes and a "\r\n"; drop the rest.
		if room := MaxLine + 2 - len(lr.buf); len(chunk) > room {
			lr.buf = append(lr.buf, chunk[:room]...)
			dropped = true
		} else {
			lr.buf = append(lr.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		if errors.Is(err, io.EOF) && len(lr.buf) == 0 {
			return nil, false, io.EOF
		}
		lr.line++
		line := bytes.TrimRight(lr.buf, "\r\n")
		if dropped || len(line) > MaxLine {
			return lr.buf[:MaxLine], true, nil
		}
		return line, false, nil
	}
}

// tooLongProblem is the Problem of a line longer than MaxLine.
var tooLongProblem = fmt.Sprintf("line longer than %d bytes (the limit; Raw holds its first %d)", MaxLine, MaxLine)

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
		d.rec = Record{Line: d.lines.line, Raw: line, Truncated: tooLong}
		if tooLong {
			d.rec.Problem = tooLongProblem
		} else {
			d.rec.Problem = parseObject(line, &d.rec.Reading)
		}
		return &d.rec, nil
	}
}

// parseObject decodes one flat JSON object into r. It is a small hand-written
// scanner: the ingest path decodes millions of lines and the reflection-based
// encoding/json costs several times more per line. Unknown keys are ignored,
// but a key may appear once (readers disagree on which value a repeated key
// means; keys are compared as encoding/json decodes them, asDecoded), a
// field's name is taken in lower case only (encoding/json takes it in any
// case, foldedIndex: such a key is refused, not ignored), and every value
// outside a nested object or array must be JSON: a string, true, false, null
// or a number in JSON's grammar (jsonNumber).
func parseObject(b []byte, r *Reading) string {
	p := jsonScanner{b: b}
	p.ws()
	if !p.eat('{') {
		return "not a JSON object: expected '{' at byte " + strconv.Itoa(p.i) + ", found " + p.found()
	}
	var seen [len(fieldNames)]bool
	var keys keySet
	p.ws()
	if p.eat('}') {
		return `missing field "turbine_id"`
	}
	for {
		p.ws()
		at := p.i
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return "malformed JSON: expected a quoted key at byte " + strconv.Itoa(at) + ", found " + p.found()
		}
		key, why := p.str()
		if why != "" {
			return "malformed JSON: key at byte " + strconv.Itoa(at) + ": " + why
		}
		idx := fieldIndex(key)
		if idx < 0 {
			if field := foldedIndex(key); field >= 0 {
				return otherCase(key, at, field, keys.fields[field])
			}
		}
		if keys.repeated(idx, key) {
			return "duplicate key " + quote(key) + " at byte " + strconv.Itoa(at) + " (a key may appear once in a line)"
		}
		p.ws()
		if !p.eat(':') {
			return "malformed JSON: expected ':' after key " + quote(key) + " at byte " + strconv.Itoa(p.i) + ", found " + p.found()
		}
		p.ws()
		at = p.i
		val, quoted, why := p.value()
		if why != "" {
			return "malformed JSON: value of " + quote(key) + " at byte " + strconv.Itoa(at) + ": " + why
		}
		if idx < 0 && !quoted && !jsonScalar(val) {
			return "malformed JSON: value of " + quote(key) + " at byte " + strconv.Itoa(at) + ": " + quote(val) + " is not a JSON value"
		}
		if idx >= 0 {
			if msg := assign(r, &seen, idx, val, quoted); msg != "" {
				return msg
			}
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			break
		}
		return "malformed JSON: expected ',' or '}' at byte " + strconv.Itoa(p.i) + ", found " + p.found()
	}
	p.ws()
	if p.i != len(p.b) {
		return "malformed JSON: trailing data after the object at byte " + strconv.Itoa(p.i) + ", found " + p.found()
	}
	for i, f := range Fields {
		if !seen[i] && !optional(f) {
			return fmt.Sprintf("missing field %q", f)
		}
	}
	return ""
}

// fieldIndex is key's index in Fields, or -1.
func fieldIndex(key []byte) int {
	for i, f := range Fields {
		if string(key) == f {
			return i
		}
	}
	return -1
}

// keySet remembers the keys of one object: Fields by index, others by
// value (on the stack for the first few, in a map past them).
type keySet struct {
	fields [len(fieldNames)]bool
	few    [8][]byte
	nFew   int
	many   map[string]struct{}
}

// repeated records key (idx is its fieldIndex) and reports whether the
// object already had it. Unknown keys are compared as decoded (asDecoded),
// not folded: every reader ignores them or, into a map, keeps "note" and
// "NOTE" apart.
func (k *keySet) repeated(idx int, key []byte) bool {
	if idx >= 0 {
		dup := k.fields[idx]
		k.fields[idx] = true
		return dup
	}
	key = asDecoded(key)
	for _, prev := range k.few[:k.nFew] {
		if bytes.Equal(prev, key) {
			return true
		}
	}
	if _, dup := k.many[string(key)]; dup {
		return true
	}
	if k.nFew < len(k.few) {
		k.few[k.nFew] = key
		k.nFew++
		return false
	}
	if k.many == nil {
		k.many = map[string]struct{}{}
	}
	k.many[string(key)] = struct{}{}
	return false
}

// otherCase is the Problem of key at byte at, Fields[field] in another case
// (foldedIndex): encoding/json reads it as that field, this reader would
// not, so the line is refused — as a repeated key when the field came
// before it (seen).
func otherCase(key []byte, at, field int, seen bool) string {
	name := strconv.Quote(Fields[field])
	if seen {
		return "duplicate key " + quote(key) + " at byte " + strconv.Itoa(at) + " (a key may appear once in a line, and " +
			name + " in any case is one key to encoding/json)"
	}
	return "key " + quote(key) + " at byte " + strconv.Itoa(at) + " is " + name + " in another case (encoding/json reads it as " +
		name + "; a field's name is written in lower case)"
}

// foldedIndex is the index in Fields of the field encoding/json decodes key
// into when key is not its exact name: the one whose name equals key under
// encoding/json's folding (foldName in encoding/json/fold.go: ASCII letters
// upper-cased, any other character to the least of its Unicode simple-fold
// orbit, so U+212A KELVIN SIGN is K and U+017F LONG S is S), or -1.
func foldedIndex(key []byte) int {
	var buf [len("received_at")]byte // the longest field name
	folded := buf[:0]
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			i++
		} else {
			r, size := utf8.DecodeRune(key[i:])
			if r = foldRune(r); r >= utf8.RuneSelf {
				return -1 // every field name is ASCII
			}
			c = byte(r)
			i += size
		}
		if len(folded) == len(buf) {
			return -1
		}
		folded = append(folded, c)
	}
	for i, f := range Fields {
		if len(f) == len(folded) && strings.EqualFold(f, string(folded)) {
			return i
		}
	}
	return -1
}

// foldRune is the least rune of r's simple-fold orbit, as encoding/json
// folds a key's non-ASCII characters.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// asDecoded is key as encoding/json decodes it: each byte that is not part of
// valid UTF-8 becomes U+FFFD, so two keys that differ only in such bytes are
// one key to such a reader (and a repeated key to this one). A valid key is
// returned as it is.
func asDecoded(key []byte) []byte {
	if utf8.Valid(key) {
		return key
	}
	out := make([]byte, 0, len(key)+8)
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRune(key[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, key[i:i+size]...)
		}
		i += size
	}
	return out
}

// jsonScalar reports whether an unquoted value is one JSON has: null (nil),
// a nested object or array (checked by whoever reads it), true, false or a
// number in JSON's grammar. A bare word such as yes, NaN or 0x10 is not.
func jsonScalar(val []byte) bool {
	if val == nil || val[0] == '{' || val[0] == '[' {
		return true
	}
	return string(val) == "true" || string(val) == "false" || jsonNumber(val)
}

// assign sets field Fields[idx]. quoted says the JSON value was a string;
// null arrives as val == nil.
func assign(r *Reading, seen *[len(fieldNames)]bool, idx int, val []byte, quoted bool) string {
	name := Fields[idx]
	if val == nil {
		if optional(name) {
			return ""
		}
		return fmt.Sprintf("%s: is null", name)
	}
	seen[idx] = true
	if name == "turbine_id" && (!quoted || len(val) == 0) {
		return fmt.Sprintf("turbine_id: %s is not a turbine id string", quote(val))
	}
	if name == "state" && !quoted {
		return fmt.Sprintf("state: %s is not a string (a controller status code is a JSON string, or null for none)", quote(val))
	}
	if !quoted && name != "power_kw" && name != "wind_ms" && !jsonScalar(val) {
		// The number fields say what is wrong with a bare word themselves.
		return fmt.Sprintf("%s: %s is not a JSON value (a string needs quotes; true and false are lower case)", name, quote(val))
	}
	return setField(r, name, val)
}

type jsonScanner struct {
	b []byte
	i int
}

// found describes what is at p.i, for a Problem: the next few bytes,
// quoted, or the end of the line.
func (p *jsonScanner) found() string {
	if p.i >= len(p.b) {
		return "the end of the line"
	}
	return quoteN(p.b[p.i:], 16)
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

// str reads a JSON string (p.b[p.i] is its opening quote) and returns its
// contents, unescaped when needed, or why it is malformed. Bytes that are
// not valid UTF-8 are passed through; setField refuses them where it
// matters.
func (p *jsonScanner) str() ([]byte, string) {
	p.i++ // the opening quote
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
				return raw, ""
			}
			s, bad := unescape(raw)
			if bad >= 0 {
				return nil, "bad escape " + quoteN(raw[bad:], 6) + " at byte " + strconv.Itoa(start+bad)
			}
			return s, ""
		}
		p.i++
	}
	return nil, "unterminated string"
}

// unescape decodes the JSON escapes in raw (a string's text between its
// quotes, which ends in no lone backslash). It returns the offset in raw of
// the first bad escape, else -1. As in encoding/json, a \u escape of a
// surrogate that is not half of a pair becomes U+FFFD.
func unescape(raw []byte) ([]byte, int) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch e := raw[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw[i+2:])
			if !ok {
				return nil, i
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if len(raw) >= i+6 && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, _ = hex4(raw[i+2:])
				}
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, i
		}
		i += 2
	}
	return out, -1
}

// hex4 decodes the four hex digits that start b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipComposite moves past one balanced {...} or [...] value (brackets are
// counted, not matched: only its end matters).
func (p *jsonScanner) skipComposite() string {
	depth := 0
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '"':
			if _, why := p.str(); why != "" {
				return why
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				p.i++
				return ""
			}
		}
		p.i++
	}
	return "unterminated object or array"
}

// value reads a string, number, true/false, null or a bare token (such as
// NaN, which JSON does not allow but broken senders write; it is then
// rejected as not a finite number rather than as unparseable), or says why
// it cannot.
func (p *jsonScanner) value() (val []byte, quoted bool, why string) {
	if p.i >= len(p.b) {
		return nil, false, "missing value"
	}
	switch p.b[p.i] {
	case '"':
		s, why := p.str()
		return s, true, why
	case '{', '[':
		// A nested value: fine for a key we do not know (senders may add
		// fields); a known field will fail to parse it and say so.
		start := p.i
		if why := p.skipComposite(); why != "" {
			return nil, false, why
		}
		return p.b[start:p.i], false, ""
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
		return nil, false, "missing value"
	}
	if string(tok) == "null" {
		return nil, false, ""
	}
	return tok, false, ""
}
