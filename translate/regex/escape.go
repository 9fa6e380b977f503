package regex

import (
	"strconv"
	"strings"
)

// unsupportedHV refuses \h, \H, \v and \V: PCRE2's
// auto-possessification takes them as disjoint from \S and \s, which
// they are not in 8-bit mode (0xa0, 0x85), so that \S*\h never matches
// "x\xa0"; orderly does not reproduce that.
func (p *parser) unsupportedHV() error {
	return p.unsupported("\\h, \\H, \\v and \\V")
}

// octal reads up to max octal digits at p.i.
func (p *parser) octal(max int) (int, *byteSet, error) {
	v, k := 0, 0
	for k < max && p.more() && p.peek() >= '0' && p.peek() <= '7' {
		v = v*8 + int(p.peek()-'0')
		p.i++
		k++
	}
	if v > 0xff {
		return 0, nil, p.syntaxErr("octal value is greater than \\377 in 8-bit non-UTF mode")
	}
	return v, nil, nil
}

// byteEscape reads the escapes that stand for one byte, at the letter
// after "\"; anything else not a letter or digit is itself.
func (p *parser) byteEscape() (int, error) {
	c := p.peek()
	p.i++
	switch c {
	case 'a':
		return 7, nil
	case 'e':
		return 0x1b, nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case '0':
		p.i--
		v, _, err := p.octal(3)
		return v, err
	case 'o':
		if !p.more() || p.peek() != '{' {
			return 0, p.syntaxErr("missing opening brace after \\o")
		}
		end := strings.IndexByte(p.s[p.i:], '}')
		if end < 2 {
			return 0, p.syntaxErr("digits missing in \\x{} or \\o{} or \\N{U+}")
		}
		v, err := strconv.ParseUint(p.s[p.i+1:p.i+end], 8, 32)
		if err != nil {
			return 0, p.syntaxErr("non-octal character in \\o{} (closing brace missing?)")
		}
		if v > 0xff {
			return 0, p.syntaxErr("character code point value in \\x{} or \\o{} is too large")
		}
		p.i += end + 1
		return int(v), nil
	case 'x':
		if p.more() && p.peek() == '{' {
			end := strings.IndexByte(p.s[p.i:], '}')
			if end < 0 {
				return 0, p.syntaxErr("\\x{ is not followed by hex digits and }")
			}
			digits := p.s[p.i+1 : p.i+end]
			if digits == "" {
				return 0, p.syntaxErr("digits missing in \\x{} or \\o{} or \\N{U+}")
			}
			v, err := strconv.ParseUint(digits, 16, 32)
			if err != nil {
				return 0, p.syntaxErr("non-hex character in \\x{} (closing brace missing?)")
			}
			if v > 0xff {
				return 0, p.syntaxErr("character code point value in \\x{} or \\o{} is too large")
			}
			p.i += end + 1
			return int(v), nil
		}
		v := 0
		for k := 0; k < 2 && p.more() && isHex(p.peek()); k++ {
			v = v*16 + hexVal(p.peek())
			p.i++
		}
		return v, nil
	case 'c':
		if !p.more() {
			return 0, p.syntaxErr("\\c at end of pattern")
		}
		d := p.peek()
		if d < 32 || d > 126 {
			return 0, p.syntaxErr("\\c must be followed by a printable ASCII character")
		}
		p.i++
		if d >= 'a' && d <= 'z' {
			d -= 32
		}
		return int(d ^ 0x40), nil
	case 'L', 'l', 'U', 'u', 'F':
		return 0, p.syntaxErr("PCRE2 does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u")
	}
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		p.i--
		return 0, p.syntaxErr("unrecognized character follows \\")
	}
	return int(c), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// escape reads an escape outside a class, at "\".
func (p *parser) escape() (*node, error) {
	start := p.i
	p.i++
	if !p.more() {
		return nil, p.syntaxErr("\\ at end of pattern")
	}
	c := p.peek()
	switch c {
	case 'Q':
		p.i++
		end := strings.Index(p.s[p.i:], "\\E")
		lit := p.s[p.i:]
		if end >= 0 {
			lit = p.s[p.i : p.i+end]
			p.i += end + 2
		} else {
			p.i = len(p.s)
		}
		if lit == "" {
			return nil, nil
		}
		if len(lit) == 1 {
			return p.lit(lit[0]), nil
		}
		// All but the last byte stand alone; the last takes a quantifier.
		var items []*node
		for k := 0; k < len(lit); k++ {
			items = append(items, p.lit(lit[k]))
		}
		return &node{op: opConcat, subs: items}, nil
	case 'E':
		p.i++
		return nil, nil
	case 'h', 'H', 'v', 'V':
		return nil, p.unsupportedHV()
	case 'd', 'D', 's', 'S', 'w', 'W':
		p.i++
		return &node{op: opSet, set: typeSet(c)}, nil
	case 'N':
		p.i++
		if p.more() && p.peek() == '{' {
			if _, _, _, ok, _ := p.braces(); !ok {
				return nil, p.syntaxErr("\\N{U+dddd} is supported only in Unicode (UTF) mode")
			}
		}
		return &node{op: opSet, set: setNotNL}, nil
	case 'C':
		p.i++
		return &node{op: opSet, set: setAll}, nil
	case 'R':
		// PCRE2's auto-possessification treats \R as disjoint from \S,
		// so that \S*\R never matches "a\x85": not reproduced here.
		return nil, p.unsupported("\\R (any newline sequence)")
	case 'X':
		return nil, p.unsupported("\\X (extended grapheme cluster)")
	case 'K':
		return nil, p.unsupported("\\K (reset the match start)")
	case 'p', 'P':
		s, err := p.property()
		if err != nil {
			return nil, err
		}
		return &node{op: opSet, set: s}, nil
	case 'b':
		p.i++
		return &node{op: opAssert, assert: aWord}, nil
	case 'B':
		p.i++
		return &node{op: opAssert, assert: aNotWord}, nil
	case 'A', 'G':
		// \G is the start of the match attempt: the subject's start for
		// the one match Apache asks for.
		p.i++
		return &node{op: opAssert, assert: aBegin}, nil
	case 'z':
		p.i++
		return &node{op: opAssert, assert: aEnd}, nil
	case 'Z':
		p.i++
		return &node{op: opAssert, assert: aEndNL}, nil
	case 'g':
		return p.gRef(start)
	case 'k':
		p.i++
		if !p.more() {
			return nil, p.syntaxErr("\\k is not followed by a braced, angle-bracketed, or quoted name")
		}
		var term byte
		switch p.peek() {
		case '<':
			term = '>'
		case '\'':
			term = '\''
		case '{':
			term = '}'
		default:
			return nil, p.syntaxErr("\\k is not followed by a braced, angle-bracketed, or quoted name")
		}
		p.i++
		nm, err := p.groupName(term)
		if err != nil {
			return nil, err
		}
		return p.namedRef(nm), nil
	}
	if c >= '1' && c <= '9' {
		// A back reference, or an octal escape (pcre2pattern,
		// "Non-printing characters").
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		v, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			v = 1 << 30
		}
		if v < 10 || c == '8' || c == '9' || v <= p.ncap {
			p.i = j
			if v > 65535 {
				return nil, p.syntaxErr("subpattern number is too big")
			}
			p.refs = append(p.refs, ref{n: v, pos: start})
			return &node{op: opBackref, n: v, fold: p.f.icase}, nil
		}
		b, _, err := p.octal(3)
		if err != nil {
			return nil, err
		}
		return p.lit(byte(b)), nil
	}
	b, err := p.byteEscape()
	if err != nil {
		return nil, err
	}
	return p.lit(byte(b)), nil
}

// gRef reads \g: \gN, \g{N}, \g-N, \g{-N}, \g{name}; \g<...> and
// \g'...' are subroutine calls.
func (p *parser) gRef(start int) (*node, error) {
	p.i++
	if !p.more() {
		return nil, p.syntaxErr("a numbered reference must not be zero")
	}
	if p.peek() == '<' || p.peek() == '\'' {
		return nil, p.unsupported("subroutine calls")
	}
	braced := p.peek() == '{'
	if braced {
		p.i++
	}
	j := p.i
	if j < len(p.s) && (p.s[j] == '-' || p.s[j] == '+') {
		j++
	}
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		j++
	}
	numStr := p.s[p.i:j]
	if numStr == "" || numStr == "-" || numStr == "+" {
		if !braced {
			return nil, p.syntaxErr("\\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number")
		}
		nm, err := p.groupName('}')
		if err != nil {
			return nil, err
		}
		return p.namedRef(nm), nil
	}
	v, err := strconv.Atoi(numStr)
	if err != nil {
		return nil, p.syntaxErr("subpattern number is too big")
	}
	p.i = j
	if braced {
		if !p.more() || p.peek() != '}' {
			return nil, p.syntaxErr("\\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number")
		}
		p.i++
	}
	switch {
	case numStr[0] == '+':
		return nil, p.syntaxErr("\\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number")
	case v < 0:
		v = p.ncap + v + 1
		if v <= 0 {
			return nil, p.syntaxErr("reference to non-existent subpattern")
		}
	case v == 0:
		return nil, p.syntaxErr("a numbered reference must not be zero")
	}
	p.refs = append(p.refs, ref{n: v, pos: start})
	return &node{op: opBackref, n: v, fold: p.f.icase}, nil
}
