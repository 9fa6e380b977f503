package digest

import "strings"

// Helpers that reproduce the C library and APR functions mod_auth_digest
// relies on, byte for byte, in the "C" locale httpd runs in.

// isSpace reports whether c is white space to isspace in the "C" locale,
// which is what apr_isspace is.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// cString cuts s at its first NUL byte, where a C string would end.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFoldASCII compares as ap_cstr_casecmp and strcasecmp in the "C"
// locale do: only the 26 ASCII letters fold (unlike strings.EqualFold,
// which folds the Kelvin sign to k).
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// strtol parses s as glibc's strtol(s, &end, base) does for base 10 or
// 16: leading white space, an optional sign, for base 16 an optional 0x or
// 0X, then digits. It returns the value (clamped to the range of a 64-bit
// long, as strtol clamps it), the index in s where parsing stopped (end -
// s), and whether the value was out of range (errno ERANGE). When no
// digit follows, the value is 0 and end is 0, except that a "0x" with no
// hex digit after it parses as the 0 (end points at the x).
func strtol(s string, base int) (val int64, end int, outOfRange bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	if base == 16 && i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		i += 2
	}
	const maxMag = uint64(1) << 63 // the magnitude of LONG_MIN
	var mag uint64
	over := false
	j := i
	for j < len(s) {
		d := digitValue(s[j])
		if d >= base {
			break
		}
		if !over {
			if mag > (maxMag-uint64(d))/uint64(base) {
				over = true
			} else {
				mag = mag*uint64(base) + uint64(d)
			}
		}
		j++
	}
	if j == i {
		if i-start == 2 { // "0x" without a hex digit: the 0 is the number
			return 0, start + 1, false
		}
		return 0, 0, false
	}
	switch {
	case over || (!neg && mag > maxMag-1):
		if neg {
			return -1 << 63, j, true
		}
		return 1<<63 - 1, j, true
	case neg:
		return -int64(mag), j, false // mag == 1<<63 gives LONG_MIN
	}
	return int64(mag), j, false
}

// escapeQuotes escapes s as ap_escape_quotes does: a backslash is put
// before every '"' that is not already escaped, and a backslash that
// escapes a character is kept with it.
func escapeQuotes(s string) string {
	if !strings.Contains(s, `"`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteByte('\\')
		case c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unescapeURL decodes s as ap_unescape_url does for mod_auth_digest (its
// result, which only reports errors, is ignored there): every %XX with
// two hex digits is decoded, even %2F and %00, and a '%' without them is
// kept. A decoded NUL ends the string, as it ends a C string.
func unescapeURL(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isXDigit(s[i+1]) && isXDigit(s[i+2]) {
			c = byte(digitValue(s[i+1])<<4 | digitValue(s[i+2]))
			i += 2
		}
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

func isXDigit(c byte) bool { return digitValue(c) < 16 }
