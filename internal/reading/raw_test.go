package reading

import (
	"strings"
	"testing"
)

func TestStorableText(t *testing.T) {
	a4095 := strings.Repeat("a", 4095)
	for _, tc := range []struct {
		name, in           string
		max                int
		want               string
		escaped, truncated bool
	}{
		{"empty", "", 10, "", false, false},
		{"ASCII", "AP-001,2026-08-01T00:00:00Z", 4096, "AP-001,2026-08-01T00:00:00Z", false, false},
		{"ASCII cut", "abcdef", 4, "abcd", false, true},
		{"max 0", "abc", 0, "", false, true},
		{"max negative", "abc", -1, "", false, true},
		{"multi-byte kept", "Østervang €5 🌬", 100, "Østervang €5 🌬", false, false},
		{"€ straddles 4096", a4095 + "€", 4096, a4095, false, true},
		{"€ straddles 4097", a4095 + "€", 4097, a4095, false, true},
		{"€ ends at 4098", a4095 + "€", 4098, a4095 + "€", false, false},
		{"4-byte char straddles", "ab🌬", 5, "ab", false, true},
		{"cut after a whole char", "ab€c", 5, "ab€", false, true},
		{"invalid bytes", "a\xff\xfeb", 10, `a\xff\xfeb`, true, false},
		{"NUL", "a\x00b", 10, `a\x00b`, true, false},
		{"only NUL", "\x00", 10, `\x00`, true, false},
		{"invalid and valid multi-byte", "\xc3(€\xe2\x82", 10, `\xc3(€\xe2\x82`, true, false},
		{"truncated € at the end of the input", "ab\xe2\x82", 10, `ab\xe2\x82`, true, false},
		{"invalid bytes at the cut", "ab\x80\x80\x80\x80", 4, `ab\x80\x80`, true, true},
		{"invalid lead at the cut", "ab\xe2xy", 3, `ab\xe2`, true, true},
		{"NUL after a cut char", "\x00ab€", 4, `\x00ab`, true, true},
		{"BOM in the middle is a character", "a\xEF\xBB\xBFb", 10, "a\uFEFFb", false, false},
		{"BOM at the start is kept too", "\xEF\xBB\xBFb", 10, "\uFEFFb", false, false},
		{"encoded U+FFFD is valid", "a\uFFFDb", 10, "a\uFFFDb", false, false},
		{"surrogate encoded in UTF-8 is invalid", "a\xed\xa0\x80b", 10, `a\xed\xa0\x80b`, true, false},
		{"backslash as is", `a\x00b`, 10, `a\x00b`, false, false},
		{"control characters other than NUL kept", "a\tb\x01\x7f", 10, "a\tb\x01\x7f", false, false},
	} {
		text, escaped, truncated := StorableText([]byte(tc.in), tc.max)
		if text != tc.want || escaped != tc.escaped || truncated != tc.truncated {
			t.Errorf("%s: StorableText(%.40q, %d) = %.60q, %v, %v; want %.60q, %v, %v",
				tc.name, tc.in, tc.max, text, escaped, truncated, tc.want, tc.escaped, tc.truncated)
		}
	}
}

func TestStorableTextAllocs(t *testing.T) {
	b := []byte(strings.Repeat("Ø-ascii-", 500))
	if n := testing.AllocsPerRun(100, func() { StorableText(b, 4096) }); n > 1 {
		t.Fatalf("StorableText of clean text: %v allocations, want 1 (the string)", n)
	}
}
