package regex

import (
	"strings"
	"unicode"
)

// class reads a character class at "[".
func (p *parser) class() (*node, error) {
	open := p.i
	s := p.s[p.i:]
	if strings.HasPrefix(s, "[[:<:]]") {
		p.i += 7
		return &node{op: opAssert, assert: aWordStart}, nil
	}
	if strings.HasPrefix(s, "[[:>:]]") {
		p.i += 7
		return &node{op: opAssert, assert: aWordEnd}, nil
	}
	if len(s) > 1 && (s[1] == ':' || s[1] == '.' || s[1] == '=') && posixEnd(s) > 0 {
		return nil, p.syntaxErr("POSIX named classes are supported only within a class")
	}
	p.i++
	neg := false
	if p.more() && p.peek() == '^' {
		neg = true
		p.i++
	}
	c := classState{last: -1}
	first := true
	for {
		if !p.more() {
			p.i = open
			return nil, p.syntaxErr("missing terminating ] for character class")
		}
		ch := p.peek()
		if p.f.extMore && (ch == ' ' || ch == '\t') {
			p.i++
			continue
		}
		if ch == ']' && !first {
			p.i++
			break
		}
		first = false
		switch {
		case strings.HasPrefix(p.s[p.i:], "\\Q"):
			p.i += 2
			for p.more() && !strings.HasPrefix(p.s[p.i:], "\\E") {
				b := p.peek()
				p.i++
				if err := c.byte(p, int(b)); err != nil {
					return nil, err
				}
			}
			if p.more() {
				p.i += 2
			}
			continue
		case strings.HasPrefix(p.s[p.i:], "\\E"):
			p.i += 2
			continue
		case ch == '[' && p.i+1 < len(p.s) && (p.s[p.i+1] == ':' || p.s[p.i+1] == '.' || p.s[p.i+1] == '='):
			if end := posixEnd(p.s[p.i:]); end > 0 {
				if p.s[p.i+1] != ':' {
					return nil, p.syntaxErr("POSIX collating elements are not supported")
				}
				name := p.s[p.i+2 : p.i+end-2]
				pneg := strings.HasPrefix(name, "^")
				cls, ok := posixClasses[strings.TrimPrefix(name, "^")]
				if !ok {
					return nil, p.syntaxErr("unknown POSIX class name")
				}
				if pneg {
					cls.invert()
				}
				p.i += end
				if err := c.class(p, cls); err != nil {
					return nil, err
				}
				continue
			}
		case ch == '\\':
			b, cls, err := p.classEscape()
			if err != nil {
				return nil, err
			}
			if cls != nil {
				err = c.class(p, *cls)
			} else {
				err = c.byte(p, b)
			}
			if err != nil {
				return nil, err
			}
			continue
		case ch == '-' && c.last >= 0 && !c.open && p.i+1 < len(p.s) && p.s[p.i+1] != ']':
			p.i++
			c.open, c.lo = true, c.last
			continue
		}
		p.i++
		if err := c.byte(p, int(ch)); err != nil {
			return nil, err
		}
	}
	set := c.set
	if c.open {
		set.add('-')
	}
	if p.f.icase {
		set.fold()
	}
	if neg {
		set.invert()
	}
	return &node{op: opSet, set: set}, nil
}

// classState is a class being read.
type classState struct {
	set  byteSet
	last int  // the last single byte, which "-" can make a range's start; -1 after a type
	open bool // "x-" seen: the next byte ends a range from lo
	lo   int
}

func (c *classState) byte(p *parser, b int) error {
	if c.open {
		if c.lo > b {
			return p.syntaxErr("range out of order in character class")
		}
		c.set.addRange(c.lo, b)
		c.open, c.last = false, -1
		return nil
	}
	c.set.add(byte(b))
	c.last = b
	return nil
}

// class adds a class type (\d, [:alpha:]): a range may neither end nor
// start at one ("\d-z" is an error in PCRE2, where Perl warns).
func (c *classState) class(p *parser, s byteSet) error {
	if c.open {
		return p.syntaxErr("invalid range in character class")
	}
	c.set.addSet(s)
	c.last = -1
	if p.i+1 < len(p.s) && p.s[p.i] == '-' && p.s[p.i+1] != ']' {
		p.i++
		return p.syntaxErr("invalid range in character class")
	}
	return nil
}

// posixEnd is the length of a "[:name:]" at the start of s, or 0.
func posixEnd(s string) int {
	delim := s[1]
	for j := 2; j+1 < len(s); j++ {
		if s[j] == '\\' || s[j] == '[' {
			return 0
		}
		if s[j] == ']' {
			return 0
		}
		if s[j] == delim && s[j+1] == ']' {
			return j + 2
		}
	}
	return 0
}

// classEscape reads an escape inside a class: a byte, or a class type.
func (p *parser) classEscape() (int, *byteSet, error) {
	p.i++ // "\"
	if !p.more() {
		return 0, nil, p.syntaxErr("\\ at end of pattern")
	}
	c := p.peek()
	switch c {
	case 'b':
		p.i++
		return 8, nil, nil
	case 'h', 'H', 'v', 'V':
		return 0, nil, p.unsupportedHV()
	case 'd', 'D', 's', 'S', 'w', 'W':
		p.i++
		s := typeSet(c)
		return 0, &s, nil
	case 'p', 'P':
		s, err := p.property()
		if err != nil {
			return 0, nil, err
		}
		return 0, &s, nil
	case 'B', 'R', 'X', 'N', 'A', 'z', 'Z', 'G', 'K', 'g', 'k':
		return 0, nil, p.syntaxErr("escape sequence is invalid in character class")
	case '8', '9':
		p.i++
		return int(c), nil, nil
	}
	if c >= '1' && c <= '7' {
		return p.octal(3)
	}
	b, err := p.byteEscape()
	return b, nil, err
}

func typeSet(c byte) byteSet {
	var s byteSet
	switch c | 0x20 {
	case 'd':
		s = setDigit
	case 's':
		s = setSpace
	case 'w':
		s = setWord
	case 'h':
		s = setHSp
	case 'v':
		s = setVSp
	}
	if c >= 'A' && c <= 'Z' {
		s.invert()
	}
	return s
}

// property reads \p{Name}, \pL, \P{^Name}: in non-UTF mode PCRE2 tests
// the byte as the code point of the same value (Latin-1).
func (p *parser) property() (byteSet, error) {
	neg := p.peek() == 'P'
	p.i++
	if !p.more() {
		return byteSet{}, p.syntaxErr("malformed \\P or \\p sequence")
	}
	var name string
	if p.peek() == '{' {
		end := strings.IndexByte(p.s[p.i:], '}')
		if end < 0 {
			return byteSet{}, p.syntaxErr("malformed \\P or \\p sequence")
		}
		name = p.s[p.i+1 : p.i+end]
		p.i += end + 1
		if strings.HasPrefix(name, "^") {
			neg = !neg
			name = name[1:]
		}
	} else {
		name = p.s[p.i : p.i+1]
		p.i++
	}
	var s byteSet
	switch name {
	case "Any":
		s = setAll
	case "L&", "LC":
		s = setOf(func(c byte) bool {
			r := rune(c)
			return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
		})
	default:
		t, ok := unicode.Categories[name]
		if !ok {
			t, ok = unicode.Scripts[name]
		}
		if !ok {
			if strings.HasPrefix(name, "X") {
				return byteSet{}, p.unsupported("the property \\p{" + name + "}")
			}
			return byteSet{}, p.syntaxErr("unknown property name after \\P or \\p")
		}
		s = setOf(func(c byte) bool { return unicode.Is(t, rune(c)) })
	}
	if neg {
		s.invert()
	}
	return s, nil
}
