package regex

import (
	"strconv"
	"strings"
)

// The parser reads a pattern as PCRE2 10.42 does with the options Apache
// passes (pcre2_compile in server/util_pcre.c: no UTF, no UCP, the
// default "C" character tables), one byte a character. Case is folded
// here, for ASCII letters only, so that neither engine is ever asked to
// fold: a caseless letter becomes the class of its two cases.

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
