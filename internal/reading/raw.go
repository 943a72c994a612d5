package reading

import (
	"bytes"
	"unicode/utf8"
)

// StorableText returns b as a string a Postgres text column can hold: valid
// UTF-8 without a NUL byte. It is meant for keeping a bad line for people to
// read (the raw column of a reject), not for recovering its bytes exactly.
//
// The rule:
//   - b is first cut to at most max bytes (max <= 0 keeps nothing). The cut
//     never splits a valid multi-byte UTF-8 character: one that would
//     straddle the cut is dropped whole, so the text may be up to 3 bytes
//     shorter than max. truncated reports that bytes were dropped.
//   - If what is kept is valid UTF-8 with no NUL byte, text is exactly those
//     bytes and escaped is false.
//   - Otherwise every byte that is not part of a valid UTF-8 encoding, and
//     every NUL, is written as \xNN (a backslash, 'x' and two lowercase hex
//     digits) and escaped is true; valid characters, multi-byte ones
//     included (even U+FEFF or U+FFFD), are kept as they are. A backslash
//     already in b is not escaped, so only escaped says whether a \xNN in
//     text was written here.
//
// The text is at most 4*max bytes long (every byte escaped).
func StorableText(b []byte, max int) (text string, escaped, truncated bool) {
	n := cutRunes(b, max)
	truncated = n < len(b)
	b = b[:n]
	if clean(b) {
		return string(b), false, truncated
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(b)+len(b)/2+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == 0 || (r == utf8.RuneError && size == 1) {
			out = append(out, '\\', 'x', hex[b[0]>>4], hex[b[0]&0xf])
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out), true, truncated
}

// clean says b is valid UTF-8 without a NUL byte.
func clean(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

// cutRunes returns how many leading bytes of b to keep so that at most max
// bytes are kept and no valid multi-byte character is split. Bytes that are
// not valid UTF-8 are not characters: the cut may fall after any of them.
func cutRunes(b []byte, max int) int {
	if max <= 0 {
		return 0
	}
	if len(b) <= max {
		return len(b)
	}
	// The character straddling the cut starts at most UTFMax-1 bytes
	// before it.
	for start := max - 1; start >= 0 && start > max-utf8.UTFMax; start-- {
		if utf8.RuneStart(b[start]) {
			r, size := utf8.DecodeRune(b[start:])
			if !(r == utf8.RuneError && size == 1) && start+size > max {
				return start // a valid character that the cut would split
			}
			break
		}
	}
	return max
}
