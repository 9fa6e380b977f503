package rewrite

import "strings"

// Lookups are what an expansion reads of the request.
type Lookups struct {
	// Var is lookup_variable: the value of %{NAME} ("" for an unknown
	// name or an unset variable).
	Var func(name string) string
	// Map is lookup_map: the value of ${map:key}; ok is false where the
	// map has no such key (or no such map).
	Map func(name, key string) (value string, ok bool)
}

// Backrefs are the captures of the last match of a rule ($N) or of a
// condition (%N): the subject and the index pairs of
// regexp.FindStringSubmatchIndex (nil: no match to refer to).
type Backrefs struct {
	Source string
	Index  []int
}

// group is capture n, and whether mod_rewrite substitutes it: a group
// that took part and matched something (rm_eo > rm_so, as ap_pregsub).
func (b Backrefs) group(n int) (string, bool) {
	if b.Index == nil || 2*n+1 >= len(b.Index) {
		return "", false
	}
	so, eo := b.Index[2*n], b.Index[2*n+1]
	if so < 0 || eo <= so {
		return "", false
	}
	return b.Source[so:eo], true
}

// Qmark says where the question mark of an expansion came from, as
// do_expand's unsafe_qmark does: none yet, from the text as written
// (safe: it splits off the query string), or from an expansion (unsafe:
// a captured "?" must not start a query).
type Qmark int8

// The Qmark values.
const (
	QmarkNone   Qmark = -1
	QmarkSafe   Qmark = 0
	QmarkUnsafe Qmark = 1
)

// Expand is do_expand: in one pass over input, "\c" is c, %{NAME} a
// variable, ${map:key|default} a map lookup (its key and default
// expanded in turn), $N and %N the rule's and the conditions' captures
// (escaped under [B]); nothing an expansion produces is expanded again.
// It also reports where the first question mark came from (the last,
// under [QSL]); rule may be nil (a condition's TestString).
func Expand(input string, rr, rc Backrefs, rule *Rule, l Lookups) (string, Qmark) {
	if strings.IndexAny(input, `\$%`) < 0 {
		// Nothing to expand (a TestString or a substitution as written).
		if strings.IndexByte(input, '?') >= 0 {
			return input, QmarkSafe
		}
		return input, QmarkNone
	}
	if len(input) > 3 && input[0] == '%' && input[1] == '{' && closingCurly(input, 2) == len(input)-1 {
		// One variable, the whole of it: no copy.
		v := ""
		if l.Var != nil {
			v = l.Var(input[2 : len(input)-1])
		}
		if strings.IndexByte(v, '?') >= 0 {
			return v, QmarkUnsafe
		}
		return v, QmarkNone
	}
	var out strings.Builder
	q := QmarkNone
	tracking := true
	lastOnly := rule != nil && rule.Flags&FlagQSLast != 0
	literal := func(s string) {
		if tracking && strings.IndexByte(s, '?') >= 0 {
			q = QmarkSafe
			tracking = lastOnly
		}
		out.WriteString(s)
	}
	expanded := func(s string) {
		if tracking && strings.IndexByte(s, '?') >= 0 {
			q = QmarkUnsafe
			tracking = lastOnly
		}
		out.WriteString(s)
	}
	p := 0
	for p < len(input) {
		span := strings.IndexAny(input[p:], `\$%`)
		if span < 0 {
			literal(input[p:])
			break
		}
		literal(input[p : p+span])
		p += span
		c := input[p]
		switch {
		case c == '\\':
			if p+1 >= len(input) {
				out.WriteByte('\\') // a final backslash stays
				p = len(input)
				break
			}
			// The escaped character, outside the question mark's
			// tracking (do_expand looks at neither).
			out.WriteByte(input[p+1])
			p += 2
		case p+1 < len(input) && input[p+1] == '{':
			end := closingCurly(input, p+2)
			if end < 0 {
				literal(input[p : p+2])
				p += 2
				break
			}
			inner := input[p+2 : end]
			if c == '%' {
				if l.Var != nil {
					expanded(l.Var(inner))
				}
				p = end + 1
				break
			}
			colon := charInCurlies(input, p+2, ':')
			if colon < 0 {
				literal(input[p : p+2])
				p += 2
				break
			}
			name := input[p+2 : colon]
			key := input[colon+1 : end]
			dflt, hasDflt := "", false
			if bar := charInCurlies(input, colon+1, '|'); bar >= 0 && bar < end {
				key, dflt, hasDflt = input[colon+1:bar], input[bar+1:end], true
			}
			kx, _ := Expand(key, rr, rc, rule, l)
			v, ok := "", false
			if l.Map != nil {
				v, ok = l.Map(name, kx)
			}
			if !ok && hasDflt && dflt != "" {
				v, _ = Expand(dflt, rr, rc, rule, l)
			}
			expanded(v)
			p = end + 1
		case p+1 < len(input) && input[p+1] >= '0' && input[p+1] <= '9':
			refs := rr
			if c == '%' {
				refs = rc
			}
			if g, ok := refs.group(int(input[p+1] - '0')); ok {
				if rule != nil && rule.Flags&FlagEscapeBackref != 0 {
					g = EscapeBackref(g, rule.Escapes, rule.NoEscapes, rule.Flags)
				}
				expanded(g)
			}
			p += 2
		default:
			literal(input[p : p+1])
			p++
		}
	}
	return out.String(), q
}

// closingCurly is find_closing_curly: the index of the "}" that closes
// the "{" before from, nested pairs counted; -1 if none.
func closingCurly(s string, from int) int {
	depth := 1
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		case '{':
			depth++
		}
	}
	return -1
}

// charInCurlies is find_char_in_curlies: the index of c at the first
// level of the braces opened before from, -1 if the braces close first.
func charInCurlies(s string, from int, c byte) int {
	depth := 1
	for i := from; i < len(s); i++ {
		switch {
		case s[i] == c && depth == 1:
			return i
		case s[i] == '}':
			depth--
			if depth == 0 {
				return -1
			}
		case s[i] == '{':
			depth++
		}
	}
	return -1
}

// EscapeBackref is escape_backref, for [B]: every byte but letters,
// digits and "_" as %XX (a space as "+" unless [BNP]), or only the bytes
// of escapes when [B=...] lists them, or under [BCTLS] only controls,
// spaces and DEL; never the bytes of noEscapes ([BNE=...]).
func EscapeBackref(s, escapes, noEscapes string, flags RuleFlag) string {
	const hex = "0123456789abcdef"
	noPlus, ctls := flags&FlagEscapeNoPlus != 0, flags&FlagEscapeCTLs != 0
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			break // a C string ends there
		}
		var escape bool
		if ctls {
			escape = !vcharObsText(c)
		} else {
			escape = escapes == ""
		}
		escape = (escape || escapes != "" && strings.IndexByte(escapes, c) >= 0) &&
			(noEscapes == "" || strings.IndexByte(noEscapes, c) < 0)
		switch {
		case !escape, isAlnum(c) || c == '_':
			b.WriteByte(c)
		case c == ' ' && !noPlus:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// vcharObsText is T_VCHAR_OBSTEXT: a visible character or obs-text.
func vcharObsText(c byte) bool { return c != 0 && c >= 32 && c != 127 && c != ' ' }

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
