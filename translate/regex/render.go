package regex

import (
	"strconv"
	"strings"
)

// Both engines see a subject transcoded so that a byte is one rune: a
// byte below 0x80 stays itself, a byte b from 0x80 becomes the private
// use rune U+E000+b, which no case folding, class or word boundary of
// either engine knows. The renderers write the parsed pattern in each
// engine's syntax over that alphabet, with no flags: case is already
// folded into classes, "." is a class, and every anchor is explicit.

const puaBase = 0xE000

// runeOf is the rune that stands for byte b.
func runeOf(b byte) rune {
	if b < 0x80 {
		return rune(b)
	}
	return puaBase + rune(b)
}

// dialect is one engine's syntax.
type dialect uint8

const (
	re2 dialect = iota
	net         // regexp2: .NET syntax
)

type renderer struct {
	d dialect
	b strings.Builder
	// groups[n] is the engine's number for group n: the regexp2
	// rendering adds groups of its own (see repeat).
	groups []int
	next   int
	nl     bool // RE2: the rendering is exact only when the subject does not end in "\n"
	ok     bool // RE2: every construct could be written
}

func render(n *node, d dialect, ncap int) (pattern string, groups []int, ok, needsNL bool) {
	r := &renderer{d: d, ok: true, groups: make([]int, ncap+1)}
	r.node(n)
	if r.next != ncap {
		// Back references were written before their groups were
		// numbered: write it again with the numbers known.
		groups := r.groups
		r = &renderer{d: d, ok: true, groups: groups}
		r.node(n)
	}
	return r.b.String(), r.groups, r.ok, r.nl
}

func (r *renderer) node(n *node) {
	switch n.op {
	case opEmpty:
		r.b.WriteString("(?:)")
	case opSet:
		r.set(n.set)
	case opConcat:
		for _, s := range n.subs {
			r.node(s)
		}
	case opAlt:
		r.b.WriteString("(?:")
		for i, s := range n.subs {
			if i > 0 {
				r.b.WriteByte('|')
			}
			r.node(s)
		}
		r.b.WriteByte(')')
	case opCapture:
		r.b.WriteByte('(')
		r.next++
		r.groups[n.n] = r.next
		r.node(n.subs[0])
		r.b.WriteByte(')')
	case opGroup:
		r.b.WriteString("(?:")
		r.node(n.subs[0])
		r.b.WriteByte(')')
	case opRepeat:
		r.repeat(n)
	case opAssert:
		r.assert(n.assert)
	case opLook:
		if r.d == re2 {
			r.ok = false
			return
		}
		switch {
		case !n.behind && !n.neg:
			r.b.WriteString("(?=")
		case !n.behind:
			r.b.WriteString("(?!")
		case !n.neg:
			r.b.WriteString("(?<=")
		default:
			r.b.WriteString("(?<!")
		}
		r.node(n.subs[0])
		r.b.WriteByte(')')
	case opAtomic:
		if r.d == re2 {
			r.ok = false
			return
		}
		r.b.WriteString("(?>")
		r.node(n.subs[0])
		r.b.WriteByte(')')
	case opBackref:
		if r.d == re2 {
			r.ok = false
			return
		}
		if n.fold {
			r.b.WriteString("(?i:\\" + strconv.Itoa(r.groups[n.n]) + ")")
		} else {
			r.b.WriteString("(?:\\" + strconv.Itoa(r.groups[n.n]) + ")")
		}
	case opCond:
		if r.d == re2 {
			r.ok = false
			return
		}
		if n.cond != nil {
			// (?(?=x)yes|no) as (?:(?=x)yes|(?!x)no): regexp2 counts the
			// condition of the first form as a group.
			not := *n.cond
			not.neg = !not.neg
			r.b.WriteString("(?:")
			r.node(n.cond)
			r.node(n.subs[0])
			r.b.WriteByte('|')
			r.node(&not)
			r.node(n.subs[1])
			r.b.WriteByte(')')
			return
		}
		r.b.WriteString("(?(" + strconv.Itoa(r.groups[n.n]) + ")")
		r.node(n.subs[0])
		r.b.WriteByte('|')
		r.node(n.subs[1])
		r.b.WriteByte(')')
	}
}

func (r *renderer) repeat(n *node) {
	if n.possessive && r.d == re2 {
		r.ok = false
		return
	}
	if r.d == re2 && (n.min > 1000 || n.max > 1000) {
		r.ok = false
		return
	}
	if r.d == re2 && n.max != 1 && hasCapture(n.subs[0]) && canBeEmpty(n.subs[0]) {
		// A backtracking matcher runs one more, empty, iteration that
		// sets the group again: (a?)* on "a" leaves group 1 at (1,1),
		// where RE2 leaves (0,1).
		r.ok = false
		return
	}
	if n.possessive {
		r.b.WriteString("(?>")
	}
	if r.d == net && hasAtomic(n.subs[0]) {
		// regexp2 (v2.13.0) gives up too early on a loop around an
		// atomic group: (?:(?>a+))*a does not match "aaa". A capturing
		// group around the body keeps it from that (TestPCRE2Oracle).
		r.b.WriteByte('(')
		r.next++
	} else {
		r.b.WriteString("(?:")
	}
	r.node(n.subs[0])
	r.b.WriteByte(')')
	switch {
	case n.min == 0 && n.max < 0:
		r.b.WriteByte('*')
	case n.min == 1 && n.max < 0:
		r.b.WriteByte('+')
	case n.min == 0 && n.max == 1:
		r.b.WriteByte('?')
	case n.max < 0:
		r.b.WriteString("{" + strconv.Itoa(n.min) + ",}")
	case n.min == n.max:
		r.b.WriteString("{" + strconv.Itoa(n.min) + "}")
	default:
		r.b.WriteString("{" + strconv.Itoa(n.min) + "," + strconv.Itoa(n.max) + "}")
	}
	if !n.greedy {
		r.b.WriteByte('?')
	}
	if n.possessive {
		r.b.WriteByte(')')
	}
}

func (r *renderer) assert(a assertKind) {
	if r.d == re2 {
		switch a {
		case aBegin:
			r.b.WriteString(`\A`)
		case aBeginML:
			// (?m:^) also holds after a final "\n", where PCRE's does not.
			r.b.WriteString(`(?m:^)`)
			r.nl = true
		case aEnd:
			r.b.WriteString(`\z`)
		case aEndNL:
			// Before a final "\n" too: RE2 has no such anchor, and
			// without a final "\n" it is the end.
			r.b.WriteString(`\z`)
			r.nl = true
		case aEndML:
			r.b.WriteString(`(?m:$)`)
		case aWord:
			r.b.WriteString(`\b`)
		case aNotWord:
			r.b.WriteString(`\B`)
		case aWordStart, aWordEnd, aBeforeNL:
			r.ok = false
		case aNever:
			r.b.WriteString(`[^\x00-\x{10FFFF}]`)
		}
		return
	}
	switch a {
	case aBegin:
		r.b.WriteString(`\A`)
	case aBeginML:
		r.b.WriteString(`(?:\A|(?<=\n)(?!\z))`)
	case aEnd:
		r.b.WriteString(`\z`)
	case aEndNL:
		r.b.WriteString(`(?=\n?\z)`)
	case aEndML:
		r.b.WriteString(`(?=\n|\z)`)
	case aWord:
		r.b.WriteString(`\b`)
	case aNotWord:
		r.b.WriteString(`\B`)
	case aWordStart:
		r.b.WriteString(`\b(?=[0-9A-Za-z_])`)
	case aWordEnd:
		r.b.WriteString(`\b(?<=[0-9A-Za-z_])`)
	case aBeforeNL:
		r.b.WriteString(`(?=\n)`)
	case aNever:
		r.b.WriteString(`(?!)`)
	}
}

// set writes a byte set as a class of the runes that stand for its
// bytes (a literal when it has one).
func (r *renderer) set(s byteSet) {
	n := s.count()
	if n == 1 {
		for c := 0; c < 256; c++ {
			if s.has(byte(c)) {
				r.char(runeOf(byte(c)), false)
			}
		}
		return
	}
	if n == 0 {
		// Nothing: a class no rune of the alphabet is in.
		if r.d == re2 {
			r.b.WriteString(`[^\x00-\x{10FFFF}]`)
		} else {
			r.b.WriteString(`(?!)`)
		}
		return
	}
	r.b.WriteByte('[')
	for c := 0; c < 256; c++ {
		if !s.has(byte(c)) {
			continue
		}
		lo := c
		// A run stops at 0x7f: the runes of 0x80 and up are elsewhere.
		for c+1 < 256 && c+1 != 0x80 && s.has(byte(c+1)) {
			c++
		}
		r.char(runeOf(byte(lo)), true)
		if c > lo {
			if c > lo+1 {
				r.b.WriteByte('-')
			}
			r.char(runeOf(byte(c)), true)
		}
	}
	r.b.WriteByte(']')
}

// char writes one rune, escaped unless it is a letter or digit.
func (r *renderer) char(c rune, inClass bool) {
	if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
		r.b.WriteRune(c)
		return
	}
	if r.d == re2 {
		r.b.WriteString(`\x{` + strconv.FormatInt(int64(c), 16) + `}`)
		return
	}
	if c < 0x100 {
		h := strconv.FormatInt(int64(c), 16)
		if len(h) < 2 {
			h = "0" + h
		}
		r.b.WriteString(`\x` + h)
		return
	}
	r.b.WriteString(`\u` + strconv.FormatInt(int64(c), 16))
}

// hasAtomic reports whether n holds an atomic group or a possessive
// quantifier.
func hasAtomic(n *node) bool {
	if n.op == opAtomic || n.op == opRepeat && n.possessive {
		return true
	}
	for _, s := range n.subs {
		if hasAtomic(s) {
			return true
		}
	}
	return false
}

func hasCapture(n *node) bool {
	if n.op == opCapture {
		return true
	}
	for _, s := range n.subs {
		if hasCapture(s) {
			return true
		}
	}
	return false
}

// canBeEmpty reports whether n can match the empty string.
func canBeEmpty(n *node) bool {
	switch n.op {
	case opSet, opBackref:
		return n.op == opBackref
	case opConcat:
		for _, s := range n.subs {
			if !canBeEmpty(s) {
				return false
			}
		}
		return true
	case opAlt:
		for _, s := range n.subs {
			if canBeEmpty(s) {
				return true
			}
		}
		return false
	case opCapture, opGroup, opAtomic:
		return canBeEmpty(n.subs[0])
	case opRepeat:
		return n.min == 0 || canBeEmpty(n.subs[0])
	case opCond:
		return canBeEmpty(n.subs[0]) || canBeEmpty(n.subs[1])
	}
	return true
}
