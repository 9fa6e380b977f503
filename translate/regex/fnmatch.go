package regex

// Fnmatch and FnmatchTest are APR's apr_fnmatch and apr_fnmatch_test
// (strings/apr_fnmatch.c, APR 1.4 to 1.7; Apache License 2.0, as orderly
// takes APR's behaviour, not its code), over bytes: "?" takes one byte
// and a class compares bytes as the C char of x86, which is signed, so
// that a range between a byte below 0x80 and one above is empty.

// Fnmatch flags (apr_fnmatch.h).
const (
	FnmNoEscape  = 0x01 // APR_FNM_NOESCAPE: "\" is an ordinary character
	FnmPathname  = 0x02 // APR_FNM_PATHNAME: "*", "?" and "[...]" never match "/"
	FnmPeriod    = 0x04 // APR_FNM_PERIOD: a leading "." must be matched by a "."
	FnmCaseBlind = 0x08 // APR_FNM_CASE_BLIND: ASCII letters match either case
)

// sc is the byte as a signed char.
func sc(b byte) int { return int(int8(b)) }

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 32
	}
	return b
}

func isUpper(b byte) bool { return 'A' <= b && b <= 'Z' }

// at is s[i], or NUL past its end (C's terminator).
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// fnmatchCh is fnmatch_ch: one byte of str against one pattern item
// (a byte, "?", an escape or a "[...]" class) at *pi, *si; it advances
// both and reports a match.
func fnmatchCh(pat string, pi *int, str string, si *int, flags int) bool {
	mismatch := *pi
	nocase := flags&FnmCaseBlind != 0
	escape := flags&FnmNoEscape == 0
	slash := flags&FnmPathname != 0
	result := false
	if at(pat, *pi) == '[' {
		*pi++
		negate := at(pat, *pi) == '!' || at(pat, *pi) == '^'
		if negate {
			*pi++
		}
		leadingClose := at(pat, *pi) == ']'
		for at(pat, *pi) != 0 || leadingClose {
			if !leadingClose {
				if at(pat, *pi) == ']' {
					*pi++
					*si++
					return result != negate
				}
				if escape && at(pat, *pi) == '\\' {
					*pi++
					if at(pat, *pi) == 0 {
						break
					}
				}
				if slash && at(pat, *pi) == '/' {
					break
				}
			}
			leadingClose = false
			if at(pat, *pi+1) == '-' && at(pat, *pi+2) != ']' {
				start := at(pat, *pi)
				if escape && at(pat, *pi+2) == '\\' {
					*pi += 3
				} else {
					*pi += 2
				}
				if at(pat, *pi) == 0 || slash && at(pat, *pi) == '/' {
					break
				}
				c, end := at(str, *si), at(pat, *pi)
				if sc(c) >= sc(start) && sc(c) <= sc(end) {
					result = true
				} else if nocase && (isUpper(c) || isUpper(start) || isUpper(end)) &&
					sc(lower(c)) >= sc(lower(start)) && sc(lower(c)) <= sc(lower(end)) {
					result = true
				}
				*pi++
				continue
			}
			c, p := at(str, *si), at(pat, *pi)
			if c == p || nocase && (isUpper(c) || isUpper(p)) && lower(c) == lower(p) {
				result = true
			}
			*pi++
		}
		// Not a balanced [...]: the "[" is a literal.
		*pi = mismatch
		result = false
	} else if at(pat, *pi) == '?' {
		if at(str, *si) == 0 || slash && at(str, *si) == '/' {
			return false
		}
		*pi++
		*si++
		return true
	} else if escape && at(pat, *pi) == '\\' && at(pat, *pi+1) != 0 {
		*pi++
	}
	c, p := at(str, *si), at(pat, *pi)
	if c == p || nocase && (isUpper(c) || isUpper(p)) && lower(c) == lower(p) {
		result = true
	}
	if c == 0 || p == 0 || slash && (c == '/' || p == '/') {
		return result
	}
	*pi++
	*si++
	return result
}

// Fnmatch reports whether str matches the shell pattern pat, as
// apr_fnmatch does (0 is a match there). A NUL ends either string, as in C.
func Fnmatch(pat, str string, flags int) bool {
	pat, str = cString(pat), cString(str)
	escape := flags&FnmNoEscape == 0
	slash := flags&FnmPathname != 0
	pi, si := 0, 0
	var strendseg, strstartseg, mismatch, matchlen int
	first := at(pat, 0) == '*'
	for first || at(pat, pi) != 0 && at(str, si) != 0 {
		if !first {
			if slash && escape && at(pat, pi) == '\\' && at(pat, pi+1) == '/' {
				pi++
			}
			if slash && at(pat, pi) == '/' && at(str, si) == '/' {
				pi++
				si++
			}
		}
		first = false
		if flags&FnmPeriod != 0 && at(str, si) == '.' {
			switch {
			case at(pat, pi) == '.':
				pi++
			case escape && at(pat, pi) == '\\' && at(pat, pi+1) == '.':
				pi += 2
			default:
				return false
			}
			si++
		}
		strendseg = len(str)
		if slash {
			for k := si; k < len(str); k++ {
				if str[k] == '/' {
					strendseg = k
					break
				}
			}
		}
		wild := false
		for at(pat, pi) != 0 {
			if si > strendseg || si == strendseg && at(pat, pi) != '*' {
				break
			}
			if slash && (at(pat, pi) == '/' || escape && at(pat, pi) == '\\' && at(pat, pi+1) == '/') {
				break
			}
			for wild = false; at(pat, pi) == '*' || at(pat, pi) == '?'; pi++ {
				if at(pat, pi) == '*' {
					wild = true
				} else if si < strendseg {
					si++
				} else {
					return false
				}
			}
			if wild {
				strstartseg = si
				mismatch = pi
				mp := pi
				for matchlen = 0; ; matchlen++ {
					if at(pat, mp) == 0 || slash && (at(pat, mp) == '/' || escape && at(pat, mp) == '\\' && at(pat, mp+1) == '/') {
						if si+matchlen > strendseg {
							return false
						}
						si = strendseg - matchlen
						wild = false
						break
					}
					if at(pat, mp) == '*' {
						if si+matchlen > strendseg {
							return false
						}
						break
					}
					switch {
					case escape && at(pat, mp) == '\\' && at(pat, mp+1) != 0:
						mp += 2
					case at(pat, mp) == '[':
						dummy := " "
						di := 0
						fnmatchCh(pat, &mp, dummy, &di, flags)
					default:
						mp++
					}
				}
			}
			for at(pat, pi) != 0 && si < strendseg {
				if at(pat, pi) == '*' {
					break
				}
				if slash && (at(str, si) == '/' || at(pat, pi) == '/' || escape && at(pat, pi) == '\\' && at(pat, pi+1) == '/') {
					break
				}
				if fnmatchCh(pat, &pi, str, &si, flags) {
					continue
				}
				if wild {
					strstartseg++
					si = strstartseg
					if si+matchlen > strendseg {
						return false
					}
					pi = mismatch
					continue
				}
				return false
			}
		}
		if at(str, si) != 0 && !(slash && at(str, si) == '/') {
			return false
		}
		if at(pat, pi) != 0 && !(slash && (at(pat, pi) == '/' || escape && at(pat, pi) == '\\' && at(pat, pi+1) == '/')) {
			return false
		}
	}
	return at(str, si) == 0 && at(pat, pi) == 0
}

// FnmatchTest is apr_fnmatch_test: whether pattern has wildcards at all
// ("?", "*", or a "[" with a "]" after it; a backslash hides the next
// character). Apache uses it to choose between strcmp and apr_fnmatch.
func FnmatchTest(pattern string) bool {
	nesting := 0
	for i := 0; i < len(pattern) && pattern[i] != 0; i++ {
		switch pattern[i] {
		case '?', '*':
			return true
		case '\\':
			i++
			if i >= len(pattern) || pattern[i] == 0 {
				return false
			}
		case '[':
			nesting++
		case ']':
			if nesting > 0 {
				return true
			}
		}
	}
	return false
}

// EqualFold is strcasecmp's equality in the C locale: ASCII letters
// match either case, every other byte only itself (strings.EqualFold
// also folds the Kelvin sign into "k" and the long s into "s").
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if x, y := a[i], b[i]; x != y && lower(x) != lower(y) {
			return false
		}
	}
	return true
}
