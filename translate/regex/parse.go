package regex

import (
	"strconv"
	"strings"
	"unicode"
)

// The parser reads a pattern as PCRE2 10.42 does with the options Apache
// passes (pcre2_compile in server/util_pcre.c: no UTF, no UCP, the
// default "C" character tables), one byte a character. Case is folded
// here, for ASCII letters only, so that neither engine is ever asked to
// fold: a caseless letter becomes the class of its two cases.

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

func (s *byteSet) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
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

// flags are the pattern options in force at a point of the pattern.
type flags struct {
	icase, multiline, dotall, extended, extMore, noAuto, ungreedy, dollarEndOnly bool
	notEOL                                                                       bool // AP_REG_NOTEOL (at match time, but it only changes "$")
}

type parser struct {
	s      string
	i      int
	f      flags
	ncap   int
	names  []string // names[n] of capture n (index 0 unused)
	dup    bool     // duplicate names are allowed (PCRE2_DUPNAMES)
	refs   []ref    // back references and conditions to check at the end
	sawJ   bool
	byName map[*node]string // back references and conditions by name, resolved at the end
	hasLB  []*node          // lookbehinds, checked at the end (fixed length)
}

type ref struct {
	n   int
	pos int
}

// syntaxErr is a pattern PCRE2 refuses; unsupported one it accepts but
// orderly cannot evaluate.
func (p *parser) syntaxErr(msg string) *Error {
	return &Error{Pattern: p.s, Offset: p.i, Msg: msg}
}

func (p *parser) unsupported(msg string) *Error {
	return &Error{Pattern: p.s, Offset: p.i, Msg: msg, Unsupported: true}
}

func parse(pattern string, f flags, dupNames bool) (*node, *parser, error) {
	p := &parser{s: pattern, f: f, dup: dupNames, names: []string{""}, byName: map[*node]string{}}
	if err := p.startVerbs(); err != nil {
		return nil, nil, err
	}
	n, err := p.alternation()
	if err != nil {
		return nil, nil, err
	}
	if p.i < len(p.s) {
		// Only a ")" stops the top level.
		return nil, nil, p.syntaxErr("unmatched closing parenthesis")
	}
	for _, r := range p.refs {
		if r.n > p.ncap || r.n <= 0 {
			p.i = r.pos
			return nil, nil, p.syntaxErr("reference to non-existent subpattern")
		}
	}
	for n, name := range p.byName {
		num, count := 0, 0
		for i, o := range p.names {
			if o == name {
				if num == 0 {
					num = i
				}
				count++
			}
		}
		switch {
		case count == 0:
			return nil, nil, &Error{Pattern: p.s, Msg: "reference to non-existent subpattern"}
		case count > 1:
			return nil, nil, &Error{Pattern: p.s, Msg: "a reference to a duplicated group name", Unsupported: true}
		}
		n.n = num
	}
	for _, lb := range p.hasLB {
		if !plain(lb.subs[0]) {
			return nil, nil, &Error{Pattern: p.s, Msg: "a lookbehind assertion holding lookarounds, back references, conditionals or atomic groups", Unsupported: true}
		}
		if !fixedAlternatives(lb.subs[0]) {
			return nil, nil, &Error{Pattern: p.s, Msg: "lookbehind assertion is not fixed length"}
		}
	}
	return n, p, nil
}

// startVerbs reads the (*...) settings at the start of a pattern, which
// change how all of it is read: orderly evaluates none of them.
func (p *parser) startVerbs() error {
	if strings.HasPrefix(p.s, "(*") {
		end := strings.IndexByte(p.s, ')')
		name := p.s[2:]
		if end > 0 {
			name = p.s[2:end]
		}
		if name != "" && (name[0] < 'a' || name[0] > 'z') && !strings.HasPrefix(name, "atomic") {
			return p.unsupported("the pattern setting (*" + name + ")")
		}
	}
	return nil
}

func (p *parser) more() bool { return p.i < len(p.s) }
func (p *parser) peek() byte { return p.s[p.i] }

// skipSpace skips white space and comments in extended mode.
func (p *parser) skipSpace() {
	if !p.f.extended {
		return
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || '\t' <= c && c <= '\r':
			p.i++
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

// skipComments skips (?#...) comments, which PCRE2 reads as nothing at
// all: "a*(?#c)?" is a lazy "a*".
func (p *parser) skipComments() {
	for strings.HasPrefix(p.s[p.i:], "(?#") {
		end := strings.IndexByte(p.s[p.i:], ')')
		if end < 0 {
			return
		}
		p.i += end + 1
		p.skipSpace()
	}
}

// alternation reads branches up to a ")" or the end. Option changes made
// in one branch carry into the next (pcre2pattern, "Internal option
// setting"); the caller restores its own at the group's end.
func (p *parser) alternation() (*node, error) {
	var alts []*node
	for {
		c, err := p.concat()
		if err != nil {
			return nil, err
		}
		alts = append(alts, c)
		if p.more() && p.peek() == '|' {
			p.i++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &node{op: opAlt, subs: alts}, nil
}

func (p *parser) concat() (*node, error) {
	var items []*node
	for {
		p.skipSpace()
		if !p.more() || p.peek() == '|' || p.peek() == ')' {
			break
		}
		start := p.i
		it, err := p.atom()
		if err != nil {
			return nil, err
		}
		if it == nil {
			continue // an option setting, a comment, \E, or a \Q...\E with nothing in it
		}
		if it.op == opConcat {
			// \Q...\E: a quantifier takes its last byte.
			items = append(items, it.subs[:len(it.subs)-1]...)
			it = it.subs[len(it.subs)-1]
		}
		it, err = p.quantifier(it, start)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	switch len(items) {
	case 0:
		return &node{op: opEmpty}, nil
	case 1:
		return items[0], nil
	}
	return &node{op: opConcat, subs: items}, nil
}

// quantifier reads the quantifiers after an item.
func (p *parser) quantifier(it *node, start int) (*node, error) {
	p.skipSpace()
	p.skipComments()
	if !p.more() {
		return it, nil
	}
	min, max := -1, -1
	qstart := p.i
	switch p.peek() {
	case '*':
		min, max = 0, -1
		p.i++
	case '+':
		min, max = 1, -1
		p.i++
	case '?':
		min, max = 0, 1
		p.i++
	case '{':
		lo, hi, n, ok, err := p.braces()
		if err != nil {
			return nil, err
		}
		if !ok {
			return it, nil // a literal "{"
		}
		min, max = lo, hi
		p.i += n
	default:
		return it, nil
	}
	if !repeatable(it) {
		p.i = qstart
		return nil, p.syntaxErr("quantifier does not follow a repeatable item")
	}
	greedy, possessive := !p.f.ungreedy, false
	p.skipComments()
	if p.more() {
		switch p.peek() {
		case '?':
			greedy = !greedy
			p.i++
		case '+':
			possessive, greedy = true, true // (?U) does not make a possessive lazy
			p.i++
		}
	}
	if it.op == opAssert && (it.assert == aWordStart || it.assert == aWordEnd) {
		// PCRE2 expands it to \b(?=\w) and repeats the lookahead alone.
		return nil, p.unsupported("a quantifier after [[:<:]] or [[:>:]]")
	}
	if it.op == opAssert {
		p.i = qstart
		return nil, p.syntaxErr("quantifier does not follow a repeatable item")
	}
	if it.op == opLook {
		return nil, p.unsupported("a quantified lookaround assertion")
	}
	r := &node{op: opRepeat, subs: []*node{it}, min: min, max: max, greedy: greedy, possessive: possessive}
	p.skipSpace()
	p.skipComments()
	if p.more() && (p.peek() == '*' || p.peek() == '+' || p.peek() == '?' || p.peek() == '{') {
		if p.peek() == '{' {
			if _, _, _, ok, _ := p.braces(); !ok {
				return r, nil
			}
		}
		return nil, p.syntaxErr("quantifier does not follow a repeatable item")
	}
	_ = start
	return r, nil
}

// braces reads a {n}, {n,} or {n,m} quantifier at p.i: ok false when it
// is not one (the "{" is then a literal).
func (p *parser) braces() (lo, hi, n int, ok bool, err *Error) {
	s := p.s[p.i:]
	j := 1
	num := func() (int, bool) {
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == k {
			return 0, false
		}
		v, e := strconv.Atoi(s[k:j])
		if e != nil || v > 65535 {
			return 65536, true
		}
		return v, true
	}
	lo, okLo := num()
	if !okLo {
		return 0, 0, 0, false, nil
	}
	hi = lo
	if j < len(s) && s[j] == ',' {
		j++
		hi = -1
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			hi, _ = num()
		}
	}
	if j >= len(s) || s[j] != '}' {
		return 0, 0, 0, false, nil
	}
	if lo > 65535 || hi > 65535 {
		return 0, 0, 0, false, p.syntaxErr("number too big in {} quantifier")
	}
	if hi >= 0 && hi < lo {
		return 0, 0, 0, false, p.syntaxErr("numbers out of order in {} quantifier")
	}
	return lo, hi, j + 1, true, nil
}

func repeatable(n *node) bool {
	switch n.op {
	case opEmpty:
		return false
	}
	return true
}

// atom reads one item; nil for one that stands for nothing.
func (p *parser) atom() (*node, error) {
	c := p.peek()
	switch c {
	case '(':
		return p.group()
	case '[':
		return p.class()
	case '\\':
		return p.escape()
	case '.':
		p.i++
		if p.f.dotall {
			return &node{op: opSet, set: setAll}, nil
		}
		return &node{op: opSet, set: setNotNL}, nil
	case '^':
		p.i++
		if p.f.multiline {
			return &node{op: opAssert, assert: aBeginML}, nil
		}
		return &node{op: opAssert, assert: aBegin}, nil
	case '$':
		p.i++
		switch {
		case p.f.notEOL && p.f.multiline:
			return &node{op: opAssert, assert: aBeforeNL}, nil
		case p.f.notEOL:
			return &node{op: opAssert, assert: aNever}, nil
		case p.f.multiline:
			return &node{op: opAssert, assert: aEndML}, nil
		case p.f.dollarEndOnly:
			return &node{op: opAssert, assert: aEnd}, nil
		}
		return &node{op: opAssert, assert: aEndNL}, nil
	case '*', '+', '?':
		return nil, p.syntaxErr("quantifier does not follow a repeatable item")
	case '{':
		if _, _, _, ok, _ := p.braces(); ok {
			return nil, p.syntaxErr("quantifier does not follow a repeatable item")
		}
	}
	p.i++
	return p.lit(c), nil
}

// lit is one literal byte, both cases of it under caseless matching.
func (p *parser) lit(c byte) *node {
	var s byteSet
	s.add(c)
	if p.f.icase {
		s.fold()
	}
	return &node{op: opSet, set: s}
}

// group reads a parenthesised item at "(".
func (p *parser) group() (*node, error) {
	open := p.i
	p.i++
	saved := p.f
	defer func() { p.f = saved }()
	capture, name := true, ""
	var wrap func(body *node) *node
	if p.more() && p.peek() == '*' {
		return nil, p.verbGroup()
	}
	if p.more() && p.peek() == '?' {
		p.i++
		if !p.more() {
			return nil, p.syntaxErr("missing closing parenthesis")
		}
		switch c := p.peek(); {
		case c == '#':
			end := strings.IndexByte(p.s[p.i:], ')')
			if end < 0 {
				p.i = len(p.s)
				return nil, p.syntaxErr("missing ) after (?# comment")
			}
			p.i += end + 1
			p.f = saved
			return nil, nil
		case c == ':':
			p.i++
			capture = false
		case c == '|':
			return nil, p.unsupported("the branch reset group (?|...)")
		case c == '>':
			p.i++
			capture = false
			wrap = func(b *node) *node { return &node{op: opAtomic, subs: []*node{b}} }
		case c == '=' || c == '!':
			p.i++
			capture = false
			neg := c == '!'
			wrap = func(b *node) *node { return &node{op: opLook, neg: neg, subs: []*node{b}} }
		case c == '<' && p.i+1 < len(p.s) && (p.s[p.i+1] == '=' || p.s[p.i+1] == '!'):
			neg := p.s[p.i+1] == '!'
			p.i += 2
			capture = false
			wrap = func(b *node) *node {
				n := &node{op: opLook, behind: true, neg: neg, subs: []*node{b}}
				p.hasLB = append(p.hasLB, n)
				return n
			}
		case c == '<' || c == '\'' || c == 'P' && p.i+1 < len(p.s) && p.s[p.i+1] == '<':
			if c == 'P' {
				p.i++
			}
			term := byte('>')
			if c == '\'' {
				term = '\''
			}
			p.i++
			nm, err := p.groupName(term)
			if err != nil {
				return nil, err
			}
			name = nm
		case c == 'P' && p.i+1 < len(p.s) && p.s[p.i+1] == '=':
			p.i += 2
			nm, err := p.groupName(')')
			if err != nil {
				return nil, err
			}
			return p.namedRef(nm), nil
		case c == 'P' && p.i+1 < len(p.s) && p.s[p.i+1] == '>', c == 'R', c == '&', c >= '0' && c <= '9', c == '+', c == '-' && p.i+1 < len(p.s) && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9':
			return nil, p.unsupported("recursion and subroutine calls")
		case c == '(':
			return p.conditional(open)
		case c == 'C':
			return nil, p.unsupported("callouts")
		case c == '*':
			return nil, p.unsupported("non-atomic assertions")
		default:
			// Option settings: (?imnsxxJU-imnsx) or (?^...), alone or
			// as (?flags:...).
			done, err := p.options()
			if err != nil {
				return nil, err
			}
			if done {
				// (?flags): for the rest of the enclosing group.
				saved = p.f
				return nil, nil
			}
			capture = false
		}
	}
	if capture && p.f.noAuto && name == "" {
		capture = false
	}
	idx := 0
	if capture {
		p.ncap++
		idx = p.ncap
		if name != "" {
			if !p.dup {
				for _, o := range p.names {
					if o == name {
						if p.sawJ {
							return nil, p.unsupported("duplicate group names after (?J)")
						}
						return nil, p.syntaxErr("two named subpatterns have the same name (PCRE2_DUPNAMES not set)")
					}
				}
			}
		}
		p.names = append(p.names, name)
	}
	body, err := p.alternation()
	if err != nil {
		return nil, err
	}
	if !p.more() || p.peek() != ')' {
		p.i = open
		return nil, p.syntaxErr("missing closing parenthesis")
	}
	p.i++
	switch {
	case capture:
		return &node{op: opCapture, n: idx, subs: []*node{body}}, nil
	case wrap != nil:
		return wrap(body), nil
	}
	return &node{op: opGroup, subs: []*node{body}}, nil
}

// verbGroup handles "(*": backtracking verbs and the alphabetic
// assertion names, none of which orderly evaluates.
func (p *parser) verbGroup() error {
	return p.unsupported("backtracking control verbs and (*name:...) groups")
}

// options reads "imnsxJU-imnsx^" up to ")" (done: an option setting
// alone) or ":" (a group with those options).
func (p *parser) options() (done bool, err error) {
	on := true
	if p.peek() == '^' {
		// imnsx only: (?^) leaves U and J as they are.
		p.f.icase, p.f.multiline, p.f.dotall, p.f.extended, p.f.extMore, p.f.noAuto = false, false, false, false, false, false
		p.i++
	}
	for p.more() {
		c := p.peek()
		p.i++
		switch c {
		case ')':
			return true, nil
		case ':':
			return false, nil
		case '-':
			if !on {
				return false, p.syntaxErr("unrecognized character after (? or (?-")
			}
			on = false
		case 'i':
			p.f.icase = on
		case 'm':
			p.f.multiline = on
		case 'n':
			p.f.noAuto = on
		case 's':
			p.f.dotall = on
		case 'x':
			if on && p.more() && p.peek() == 'x' {
				p.i++
				p.f.extMore = true
			} else if !on {
				p.f.extMore = false
			}
			p.f.extended = on
		case 'J':
			// Where (?J) lets a later name repeat an earlier one is
			// subtle in PCRE2; orderly takes duplicate names only with
			// PCRE2_DUPNAMES (2.4), and refuses them otherwise.
			p.sawJ = true
		case 'U':
			p.f.ungreedy = on
		default:
			p.i--
			return false, p.syntaxErr("unrecognized character after (? or (?-")
		}
	}
	return false, p.syntaxErr("missing closing parenthesis")
}

// groupName reads a group name up to term.
func (p *parser) groupName(term byte) (string, error) {
	start := p.i
	for p.more() && (isWordByte(p.peek())) {
		p.i++
	}
	name := p.s[start:p.i]
	if name == "" {
		return "", p.syntaxErr("subpattern name expected")
	}
	if name[0] >= '0' && name[0] <= '9' {
		return "", p.syntaxErr("subpattern name must start with a non-digit")
	}
	if len(name) > 32 {
		return "", p.syntaxErr("subpattern name is too long (maximum 32 code units)")
	}
	if !p.more() || p.peek() != term {
		return "", p.syntaxErr("syntax error in subpattern name (missing terminator?)")
	}
	p.i++
	return name, nil
}

// namedRef is a back reference by name, resolved once the whole
// pattern is read.
func (p *parser) namedRef(name string) *node {
	n := &node{op: opBackref, fold: p.f.icase}
	p.byName[n] = name
	return n
}

// conditional reads (?(condition)yes|no) at the second "(".
func (p *parser) conditional(open int) (*node, error) {
	p.i++ // at the condition's "("
	var cond *node
	n, condName := 0, ""
	s := p.s[p.i:]
	switch {
	case strings.HasPrefix(s, "?=") || strings.HasPrefix(s, "?!") || strings.HasPrefix(s, "?<=") || strings.HasPrefix(s, "?<!"):
		p.i-- // read the assertion as a group
		g, err := p.group()
		if err != nil {
			return nil, err
		}
		cond = g
	case len(s) > 0 && s[0] >= '0' && s[0] <= '9', len(s) > 1 && (s[0] == '+' || s[0] == '-'):
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return nil, p.syntaxErr("malformed number or name after (?(")
		}
		v, err := strconv.Atoi(s[:end])
		if err != nil {
			return nil, p.syntaxErr("malformed number or name after (?(")
		}
		if s[0] == '+' || s[0] == '-' {
			if s[0] == '-' {
				v = p.ncap + v + 1
			} else {
				v = p.ncap + v
			}
		}
		if v <= 0 {
			return nil, p.syntaxErr("invalid condition (?(0)")
		}
		n = v
		p.refs = append(p.refs, ref{n: v, pos: p.i})
		p.i += end + 1
	default:
		var name string
		switch {
		case strings.HasPrefix(s, "R"), strings.HasPrefix(s, "DEFINE)"), strings.HasPrefix(s, "VERSION"):
			return nil, p.unsupported("recursion, DEFINE and VERSION conditions")
		case strings.HasPrefix(s, "<"), strings.HasPrefix(s, "'"):
			term := byte('>')
			if s[0] == '\'' {
				term = '\''
			}
			p.i++
			nm, err := p.groupName(term)
			if err != nil {
				return nil, err
			}
			name = nm
			if !p.more() || p.peek() != ')' {
				return nil, p.syntaxErr("malformed number or name after (?(")
			}
			p.i++
		default:
			nm, err := p.groupName(')')
			if err != nil {
				return nil, err
			}
			name = nm
		}
		n = -1
		condName = name
	}
	saved := p.f
	yes, err := p.concat()
	if err != nil {
		return nil, err
	}
	var no *node
	if p.more() && p.peek() == '|' {
		p.i++
		no, err = p.concat()
		if err != nil {
			return nil, err
		}
		if p.more() && p.peek() == '|' {
			return nil, p.syntaxErr("conditional subpattern contains more than two branches")
		}
	}
	p.f = saved
	if !p.more() || p.peek() != ')' {
		p.i = open
		return nil, p.syntaxErr("missing closing parenthesis")
	}
	p.i++
	if no == nil {
		no = &node{op: opEmpty}
	}
	c := &node{op: opCond, n: n, cond: cond, subs: []*node{yes, no}}
	if condName != "" {
		c.n = 0
		p.byName[c] = condName
	}
	return c, nil
}

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
