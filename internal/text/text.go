// Package text is the rule for the words an operator types that Galewatch
// prints back — an event's or an acceptance's note, who entered it, a
// contract's name: one line of UTF-8 that shows as typed wherever it is
// printed (a terminal, a Markdown or CSV report, a tab-aligned list). Check
// refuses what could not; Printable escapes it in text stored before the
// rule. The control database's operator_text_ok says the same for the
// rows a psql reader prints (TestSQLAgrees holds the two together).
package text

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBytes is the longest operator text, in bytes: a note says why in a
// few sentences, and each is printed with every row it explains.
const MaxBytes = 2000

// Check returns nil when s may be entered as field, else an error naming
// field and the first thing wrong: a byte that is not UTF-8, or a character
// that is not shown as typed (its code point and byte offset), or the
// length over MaxBytes.
func Check(field, s string) error {
	if len(s) > MaxBytes {
		return fmt.Errorf("%s: %d bytes; at most %d", field, len(s), MaxBytes)
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return fmt.Errorf("%s: byte %#02x at byte %d is not UTF-8", field, s[i], i)
			}
		}
		if why := refused(r); why != "" {
			return fmt.Errorf("%s: %U at byte %d is %s", field, r, i, why)
		}
	}
	return nil
}

// refused says why r may not be in operator text, or "".
func refused(r rune) string {
	switch {
	case r == '\n' || r == '\r' || r == '\t':
		// Every printer of a note is line- or tab-aligned (event list,
		// the report's cell, why joined with "; ").
		return "a tab or line break (operator text is one line)"
	case r < 0x20 || r == 0x7f || (0x80 <= r && r <= 0x9f):
		return "a control character (C0, DEL or C1)"
	case (0x202a <= r && r <= 0x202e) || (0x2066 <= r && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c:
		return "a bidi control (it reorders the text printed after it)"
	case (0x200b <= r && r <= 0x200d) || r == 0x2060 || r == 0xfeff:
		return "a zero-width character (it cannot be seen where it is printed)"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator (operator text is one line)"
	case unicode.Is(unicode.Cf, r):
		// the rest of Unicode's format characters: a soft hyphen, invisible
		// operators, tags, interlinear annotation; none shows as typed
		return "a format character (it cannot be seen where it is printed)"
	}
	return ""
}

// Printable is s with each character Check refuses written as its code
// point, \u{1B}, and each byte that is not UTF-8 as U+FFFD: what a printer
// writes of a text it did not check (a row from before the rule). Text
// Check accepts comes back unchanged.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || refused(r) != "" {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r != utf8.RuneError && refused(r) != "" {
			fmt.Fprintf(&b, `\u{%X}`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
