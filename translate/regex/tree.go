package regex

// op is a node's kind.
type op uint8

const (
	opEmpty   op = iota
	opSet        // one byte of set
	opConcat     // subs in order
	opAlt        // one of subs
	opCapture    // group n around subs[0]
	opGroup      // non-capturing group around subs[0] (kept for rendering)
	opRepeat     // subs[0] min..max times (max < 0: no limit)
	opAssert     // a zero-width assertion (assert)
	opLook       // lookahead or lookbehind (behind, neg) around subs[0]
	opAtomic     // atomic group around subs[0]
	opBackref    // the text group n matched (fold: caseless)
	opCond       // subs[0] if the condition holds, else subs[1] (or empty)
)

// assertKind is what an opAssert tests.
type assertKind uint8

const (
	aBegin     assertKind = iota // \A, ^ without multiline
	aBeginML                     // ^ with multiline: start, or after a newline that is not the last byte
	aEnd                         // \z, $ with DOLLAR_ENDONLY
	aEndNL                       // \Z, $: the end, or before a newline that is the last byte
	aEndML                       // $ with multiline: the end, or before any newline
	aWord                        // \b
	aNotWord                     // \B
	aWordStart                   // [[:<:]]
	aWordEnd                     // [[:>:]]
	aBeforeNL                    // multiline "$" under NOTEOL: before a newline only
	aNever                       // "$" under NOTEOL
)

type node struct {
	op         op
	set        byteSet
	subs       []*node
	min, max   int
	greedy     bool
	possessive bool
	n          int // capture index, back reference, condition group
	fold       bool
	assert     assertKind
	neg        bool
	behind     bool
	cond       *node // opCond: an opLook, or nil for a group condition (n)
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(b byte) { s[b>>6] |= 1 << (b & 63) }

func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

func (s *byteSet) addSet(o byteSet) {
	s[0], s[1], s[2], s[3] = s[0]|o[0], s[1]|o[1], s[2]|o[2], s[3]|o[3]
}

func (s *byteSet) invert() { s[0], s[1], s[2], s[3] = ^s[0], ^s[1], ^s[2], ^s[3] }

func (s *byteSet) addRange(lo, hi int) {
	for c := lo; c <= hi; c++ {
		s.add(byte(c))
	}
}

func (s *byteSet) count() int {
	n := 0
	for c := 0; c < 256; c++ {
		if s.has(byte(c)) {
			n++
		}
	}
	return n
}

// fold adds the other case of every ASCII letter of s.
func (s *byteSet) fold() {
	for c := byte('A'); c <= 'Z'; c++ {
		if s.has(c) || s.has(c+32) {
			s.add(c)
			s.add(c + 32)
		}
	}
}

func setOf(pred func(c byte) bool) byteSet {
	var s byteSet
	for c := 0; c < 256; c++ {
		if pred(byte(c)) {
			s.add(byte(c))
		}
	}
	return s
}

// The character types of PCRE's default "C" tables (pcre2_chartables.c.dist)
// and of its fixed definitions of \h, \v and \R in 8-bit non-UTF mode.
var (
	setDigit = setOf(func(c byte) bool { return '0' <= c && c <= '9' })
	setSpace = setOf(func(c byte) bool { return c == ' ' || '\t' <= c && c <= '\r' })
	setWord  = setOf(func(c byte) bool { return isWordByte(c) })
	setHSp   = setOf(func(c byte) bool { return c == '\t' || c == ' ' || c == 0xa0 })
	setVSp   = setOf(func(c byte) bool { return '\n' <= c && c <= '\r' || c == 0x85 })
	setNotNL = setOf(func(c byte) bool { return c != '\n' })
	setAll   = setOf(func(byte) bool { return true })
)

func isWordByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

var posixClasses = map[string]byteSet{
	"alnum":  setOf(func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }),
	"alpha":  setOf(func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }),
	"ascii":  setOf(func(c byte) bool { return c < 0x80 }),
	"blank":  setOf(func(c byte) bool { return c == ' ' || c == '\t' }),
	"cntrl":  setOf(func(c byte) bool { return c < 0x20 || c == 0x7f }),
	"digit":  setDigit,
	"graph":  setOf(func(c byte) bool { return c > 0x20 && c < 0x7f }),
	"lower":  setOf(func(c byte) bool { return 'a' <= c && c <= 'z' }),
	"print":  setOf(func(c byte) bool { return c >= 0x20 && c < 0x7f }),
	"punct":  setOf(func(c byte) bool { return c > 0x20 && c < 0x7f && !isWordByte(c) || c == '_' }),
	"space":  setSpace,
	"upper":  setOf(func(c byte) bool { return 'A' <= c && c <= 'Z' }),
	"word":   setWord,
	"xdigit": setOf(func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }),
}

// fixedAlternatives reports whether every top-level branch of a
// lookbehind has a fixed length, as PCRE2 requires.
func fixedAlternatives(n *node) bool {
	if n.op == opAlt {
		for _, s := range n.subs {
			if _, ok := fixedLen(s); !ok {
				return false
			}
		}
		return true
	}
	_, ok := fixedLen(n)
	return ok
}

func fixedLen(n *node) (int, bool) {
	switch n.op {
	case opEmpty, opAssert, opLook:
		return 0, true
	case opSet:
		return 1, true
	case opConcat:
		t := 0
		for _, s := range n.subs {
			l, ok := fixedLen(s)
			if !ok {
				return 0, false
			}
			t += l
		}
		return t, true
	case opAlt:
		l0 := -1
		for _, s := range n.subs {
			l, ok := fixedLen(s)
			if !ok || l0 >= 0 && l != l0 {
				return 0, false
			}
			l0 = l
		}
		return l0, true
	case opCapture, opGroup, opAtomic:
		return fixedLen(n.subs[0])
	case opRepeat:
		if n.min != n.max {
			return 0, false
		}
		l, ok := fixedLen(n.subs[0])
		return l * n.min, ok
	}
	return 0, false
}

// plain reports whether n holds only bytes, groups, alternatives,
// repeats and simple assertions: the lookbehinds whose length PCRE2's
// rule and fixedLen agree on.
func plain(n *node) bool {
	switch n.op {
	case opLook, opBackref, opCond, opAtomic:
		return false
	}
	for _, s := range n.subs {
		if !plain(s) {
			return false
		}
	}
	return true
}
