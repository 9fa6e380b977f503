package rewrite

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strings"
)

// MapKind is the kind of a RewriteMap.
type MapKind uint8

// The map kinds orderly reads, and the rest.
const (
	MapNone MapKind = iota // no map: every lookup fails
	MapTxt                 // txt: a file of "key value" lines
	MapRnd                 // rnd: the same, a value "a|b|c" picked at random
	MapInt                 // int: tolower, toupper, escape, unescape
)

// Map is one RewriteMap.
type Map struct {
	Kind MapKind
	Txt  map[string]string // txt: and rnd: keys, the first line of each key
	Func string            // int:
}

// ParseTxtMap reads a txt: or rnd: file as lookup_map_txtfile does: a
// line starting with "#" or a space is skipped; otherwise its first word
// is a key and its second the value; a key without a value is skipped;
// the first line of a key wins. Lines are read as apr_file_gets reads
// them, 1,024 bytes at most (the rest of a longer line reads as lines of
// its own).
func ParseTxtMap(r *bufio.Reader) map[string]string {
	m := map[string]string{}
	for {
		line, err := readLine(r, 1024)
		if line != "" {
			if line[0] != '#' && !isSpace(line[0]) {
				key := line
				end := strings.IndexFunc(line, func(c rune) bool { return c < 128 && isSpace(byte(c)) })
				if end > 0 {
					key = line[:end]
					rest := strings.TrimLeftFunc(line[end:], func(c rune) bool { return c < 128 && isSpace(byte(c)) })
					if v := rest; v != "" {
						if e := strings.IndexFunc(v, func(c rune) bool { return c < 128 && isSpace(byte(c)) }); e >= 0 {
							v = v[:e]
						}
						if _, ok := m[key]; !ok {
							m[key] = v
						}
					}
				}
			}
		}
		if err != nil {
			return m
		}
	}
}

// readLine is apr_file_gets into a buffer of size max+1: up to and
// including a newline, or max bytes.
func readLine(r *bufio.Reader, max int) (string, error) {
	var b strings.Builder
	for b.Len() < max {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF && b.Len() > 0 {
				return b.String(), nil
			}
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			break
		}
	}
	return b.String(), nil
}

// Lookup is lookup_map for one map: its value for key, ok false where
// there is none (an empty value is none).
func (m *Map) Lookup(key string) (string, bool) {
	switch m.Kind {
	case MapInt:
		switch m.Func {
		case "toupper":
			return strings.Map(upperASCII, key), true
		case "escape":
			return EscapePath(key), true
		case "unescape":
			return Unescape(key), true
		}
		return strings.Map(lowerASCII, key), true
	case MapTxt, MapRnd:
		v := m.Txt[key]
		if m.Kind == MapRnd && v != "" {
			parts := strings.Split(v, "|")
			v = parts[rand.IntN(len(parts))]
		}
		return v, v != ""
	}
	return "", false
}

func upperASCII(c rune) rune {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

func lowerASCII(c rune) rune {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

// Vars are the names of the %{NAME} variables an unexpanded text reads,
// as do_expand finds them (a backslash escapes the next character), in
// the keys and defaults of map lookups too.
func Vars(s string) []string {
	var out []string
	scan(s, func(kind byte, inner string) {
		if kind == '%' {
			out = append(out, inner)
		}
	})
	return out
}

// scan walks s as do_expand does, calling f with each %{...} and ${...}
// it would expand (nested ones included).
func scan(s string, f func(kind byte, inner string)) {
	for p := 0; p < len(s); p++ {
		switch c := s[p]; {
		case c == '\\':
			p++
		case (c == '%' || c == '$') && p+1 < len(s) && s[p+1] == '{':
			end := closingCurly(s, p+2)
			if end < 0 {
				p++
				continue
			}
			inner := s[p+2 : end]
			f(c, inner)
			if c == '$' {
				scan(inner, f)
			}
			p = end
		}
	}
}

// EscapePath is ap_os_escape_path(path, partial=1), which ap_escape_uri
// and int:escape are: every byte but letters, digits and
// "$-_.+!*'(),:;@&=/~" as %xx, lower-case hex.
func EscapePath(s string) string {
	const hex = "0123456789abcdef"
	n := 0
	for i := 0; i < len(s); i++ {
		if !pathSafe(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if pathSafe(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

func pathSafe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("$-_.+!*'(),:;@&=/~", c) >= 0
}

// Unescape is ap_unescape_url in place, as int:unescape uses it: every
// %xx decoded (a "/" too: the error it reports is ignored), a "%" not
// followed by two hex digits kept, and the string ends at a decoded NUL.
func Unescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s)+0 && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			c = hexVal(s[i+1])<<4 | hexVal(s[i+2])
			i += 2
			if c == 0 {
				break
			}
		}
		b = append(b, c)
	}
	return string(b)
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
