package text_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/galewatch/galewatch/internal/testdb"
	"github.com/galewatch/galewatch/internal/text"
)

// TestCheck: each kind of character that is not shown as typed is refused
// with the field, its code point and its byte offset; a byte that is not
// UTF-8 with its value and offset; a text over 2,000 bytes with its length.
func TestCheck(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"TSO curtailment order 4711", ""},
		{"Störung – 5 °C, no wind 🌬; ticket #12 (\"urgent\")", ""},
		{"non\u00a0breaking space, U+FFFD \ufffd as typed", ""},
		{strings.Repeat("é", 1000), ""},
		{strings.Repeat("é", 1000) + "x", "note: 2001 bytes; at most 2000"},
		{strings.Repeat("x", 120<<10), "note: 122880 bytes; at most 2000"},
		{"clear\x1b[2J", "note: U+001B at byte 5 is a control character (C0, DEL or C1)"},
		{"nul\x00", "note: U+0000 at byte 3 is a control character"},
		{"del\x7f", "note: U+007F at byte 3 is a control character"},
		{"two\nlines", "note: U+000A at byte 3 is a tab or line break (operator text is one line)"},
		{"crlf\r\n", "note: U+000D at byte 4 is a tab or line break"},
		{"a\tb", "note: U+0009 at byte 1 is a tab or line break"},
		{"é\u0085", "note: U+0085 at byte 2 is a control character (C0, DEL or C1)"},
		{"\u009b2J", "note: U+009B at byte 0 is a control character"},
		{"ab\u202ecd", "note: U+202E at byte 2 is a bidi control (it reorders the text printed after it)"},
		{"\u202a", "note: U+202A at byte 0 is a bidi control"},
		{"x\u2066", "note: U+2066 at byte 1 is a bidi control"},
		{"x\u2069", "note: U+2069 at byte 1 is a bidi control"},
		{"x\u200e", "note: U+200E at byte 1 is a bidi control"},
		{"x\u200f", "note: U+200F at byte 1 is a bidi control"},
		{"x\u061c", "note: U+061C at byte 1 is a bidi control"},
		{"x\u200by", "note: U+200B at byte 1 is a zero-width character (it cannot be seen where it is printed)"},
		{"x\u200d", "note: U+200D at byte 1 is a zero-width character"},
		{"x\u2060", "note: U+2060 at byte 1 is a zero-width character"},
		{"\ufeffnote", "note: U+FEFF at byte 0 is a zero-width character"},
		{"bad\xff", "note: byte 0xff at byte 3 is not UTF-8"},
		{"é\xe2\x82", "note: byte 0xe2 at byte 2 is not UTF-8"},
	} {
		err := text.Check("note", tc.in)
		if got := ""; err != nil {
			got = err.Error()
			if tc.want == "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("Check(%.40q) = %q, want %q", tc.in, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("Check(%.40q) = nil, want %q", tc.in, tc.want)
		}
	}
}

// TestPrintable: a refused character is written as its code point, a byte
// that is not UTF-8 as U+FFFD, and text Check accepts comes back unchanged:
// over every code point, Printable changes exactly those Check refuses, and
// what it writes Check accepts.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"note\x1b[2J\x1b[31mred":  `note\u{1B}[2J\u{1B}[31mred`,
		"a\tb\nc\u0085d":          `a\u{9}b\u{A}c\u{85}d`,
		"evil\u202eexe.txt\u200b": `evil\u{202E}exe.txt\u{200B}`,
		"bad\xff":                 "bad\ufffd",
		"TSO order 4711, Störung": "TSO order 4711, Störung",
	} {
		if got := text.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
	changed := 0
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		p := text.Printable(s)
		if refused := text.Check("x", s) != nil; refused != (p != s) || text.Check("x", p) != nil {
			t.Fatalf("%U: Check refuses it %v, Printable gives %q", r, refused, p)
		}
		if p != s {
			changed++
		}
	}
	// Unicode 15's Cc (65: C0, DEL, C1), Cf (170, bidi controls and
	// zero-width characters among them), Zl and Zp (1 each)
	if changed != 65+170+1+1 {
		t.Fatalf("Printable changed %d code points, want 237", changed)
	}
}

// TestSQLAgrees: the control database's operator_text_ok refuses exactly
// the code points text.Check refuses, and the same length.
func TestSQLAgrees(t *testing.T) {
	t.Parallel()
	env := testdb.New(t, "")
	var sqlRefused []int32
	err := env.Control.QueryRow(context.Background(), `
		SELECT array_agg(cp ORDER BY cp) FROM generate_series(1, 1114111) AS cp
		WHERE cp NOT BETWEEN 55296 AND 57343 AND NOT operator_text_ok(chr(cp))`).Scan(&sqlRefused)
	testdb.Must(t, err, "operator_text_ok over every code point")
	var goRefused []int32
	for r := rune(1); r <= utf8.MaxRune; r++ { // NUL: no Postgres text holds one
		if utf8.ValidRune(r) && text.Check("x", string(r)) != nil {
			goRefused = append(goRefused, r)
		}
	}
	if !slices.Equal(sqlRefused, goRefused) || len(goRefused) != 236 {
		t.Fatalf("operator_text_ok refuses %d code points %U; text.Check %d %U (want the same 236: every Cc but NUL, Cf, Zl, Zp)", len(sqlRefused), sqlRefused, len(goRefused), goRefused)
	}
	for _, n := range []int{text.MaxBytes, text.MaxBytes + 1} {
		s := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		if got := testdb.Text(t, env.Control, `SELECT operator_text_ok($1)::text`, s); got != map[bool]string{true: "true", false: "false"}[text.Check("x", s) == nil] {
			t.Errorf("%d bytes: operator_text_ok %s, text.Check %v", n, got, text.Check("x", s))
		}
	}
}
