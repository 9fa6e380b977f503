package regex

import (
	"fmt"
	"slices"
	"strings"
)

// Names is the set of names a <Files> or <FilesMatch> pattern matches
// (a literal name, an apr_fnmatch wildcard or a regular expression), as
// an automaton over bytes, so that whether two patterns can ever match
// the same name is decided (Overlap) rather than guessed. For a regular
// expression it may hold more names than the pattern matches (a
// lookaround, a back reference or a word boundary is read as matching
// whatever stands there), never fewer: two sets with no name in common
// are two patterns that never match one name.
type Names struct {
	states []nstate
	start  int
	// none: the pattern matches no name at all ("/" in a wildcard).
	none bool
}

// nstate is one state of a Names automaton (Thompson's construction).
type nstate struct {
	kind   nkind
	set    byteSet    // nByte: the bytes that lead to out
	assert assertKind // nAssert: the condition to pass to out
	out    int
	alt    int // nSplit: the other way
}

type nkind uint8

const (
	nByte   nkind = iota // one byte of set, then out
	nSplit               // out or alt, reading nothing
	nEmpty               // out, reading nothing
	nAssert              // out if assert holds here
	nMatch               // the name is in the set (whatever follows)
)

// maxStates bounds an automaton: a pattern that would take more (a
// counted repetition of a counted repetition...) is read as matching
// more than it does, which Names allows.
const maxStates = 4096

// nameBytes are the bytes a name can hold: a file name's last path
// component has no "/" and no NUL.
var nameBytes = func() byteSet {
	var s byteSet
	s.addRange(1, 255)
	s[0] &^= 1 << '/'
	return s
}()

// LiteralNames is the set holding name alone (a <Files> name with no
// wildcard, compared with strcmp).
func LiteralNames(name string) Names {
	var n Names
	n.start = len(n.states)
	for i := 0; i < len(name); i++ {
		var s byteSet
		s.add(name[i])
		n.states = append(n.states, nstate{kind: nByte, set: s, out: len(n.states) + 1})
	}
	n.states = append(n.states, nstate{kind: nAssert, assert: aEnd, out: len(n.states) + 1})
	n.states = append(n.states, nstate{kind: nMatch})
	return n
}

// GlobNames is the set of names apr_fnmatch(pattern, name, flags)
// matches: each "*" any run of bytes, each other item ("?", a byte, an
// escape, a "[...]" class) the bytes fnmatch_ch takes there.
func GlobNames(pattern string, flags int) Names {
	pattern = cString(pattern)
	var n Names
	for pi := 0; pi < len(pattern); {
		if pattern[pi] == '*' {
			self := len(n.states)
			var any byteSet
			any.addSet(nameBytes)
			n.states = append(n.states,
				nstate{kind: nSplit, out: self + 1, alt: self + 2},
				nstate{kind: nByte, set: any, out: self},
			)
			pi++
			continue
		}
		var set byteSet
		next := -1
		for b := 1; b < 256; b++ {
			if b == '/' {
				continue
			}
			p, si := pi, 0
			if fnmatchCh(pattern, &p, string([]byte{byte(b)}), &si, flags) {
				set.add(byte(b))
			}
			if si == 1 {
				next = p
			}
		}
		if next < 0 {
			// fnmatch_ch cannot step past this item with a name's byte
			// (a "/" in the pattern): no name matches.
			return Names{none: true}
		}
		n.states = append(n.states, nstate{kind: nByte, set: set, out: len(n.states) + 1})
		pi = next
	}
	n.states = append(n.states, nstate{kind: nAssert, assert: aEnd, out: len(n.states) + 1})
	n.states = append(n.states, nstate{kind: nMatch})
	return n
}

// Names is the set of names the pattern matches somewhere (ap_regexec:
// a search, not a whole match), over-approximated where the pattern is
// not a regular language. It is made once for re.
func (re *Regexp) Names() Names {
	if n := re.auto.Load(); n != nil {
		return *n
	}
	n := re.nameAutomaton()
	re.auto.Store(&n)
	return n
}

func (re *Regexp) nameAutomaton() Names {
	var n Names
	if re.tree == nil {
		return allNames()
	}
	// Any bytes, then the pattern, then anything: a search.
	var any byteSet
	any.addSet(nameBytes)
	n.states = append(n.states,
		nstate{kind: nSplit, out: 2, alt: 1},
		nstate{kind: nByte, set: any, out: 0},
	)
	n.start = 0
	end := n.add(re.tree, 2)
	if end < 0 || len(n.states) > maxStates {
		return allNames()
	}
	n.states = append(n.states, nstate{kind: nMatch})
	return n
}

// allNames holds every name.
func allNames() Names {
	return Names{states: []nstate{{kind: nMatch}}}
}

// add appends the states of x, entered at in (the next state to be
// appended), and returns the state its end leads to (the next free
// one), or -1 where the automaton grows past maxStates.
func (n *Names) add(x *node, in int) int {
	if len(n.states) > maxStates {
		return -1
	}
	push := func(s nstate) int {
		n.states = append(n.states, s)
		return len(n.states) - 1
	}
	switch x.op {
	case opSet:
		push(nstate{kind: nByte, set: x.set, out: in + 1})
		return in + 1
	case opConcat:
		at := in
		for _, s := range x.subs {
			if at = n.add(s, at); at < 0 {
				return -1
			}
		}
		return at
	case opAlt:
		return n.alt(x.subs, in)
	case opCapture, opGroup, opAtomic:
		return n.add(x.subs[0], in)
	case opCond:
		subs := x.subs
		if len(subs) == 1 {
			subs = append(subs, &node{op: opEmpty})
		}
		return n.alt(subs, in)
	case opRepeat:
		return n.repeat(x, in)
	case opAssert:
		switch x.assert {
		case aBegin, aEnd, aEndNL, aNever:
			push(nstate{kind: nAssert, assert: x.assert, out: in + 1})
			return in + 1
		}
		// The others (multiline "^" and "$", word boundaries) are read
		// as holding everywhere.
	case opBackref:
		// The text a group matched: read as any bytes.
		var any byteSet
		any.addSet(nameBytes)
		push(nstate{kind: nSplit, out: in + 1, alt: in + 2})
		push(nstate{kind: nByte, set: any, out: in})
		return in + 2
	}
	// opEmpty, opLook (read as holding), the other assertions.
	push(nstate{kind: nEmpty, out: in + 1})
	return in + 1
}

// alt appends a choice between subs.
func (n *Names) alt(subs []*node, in int) int {
	// A chain of splits, each to one alternative or the next split; every
	// alternative ends in a jump to the common end, patched afterwards.
	var jumps []int
	for i, s := range subs {
		if i < len(subs)-1 {
			split := len(n.states)
			n.states = append(n.states, nstate{kind: nSplit, out: split + 1})
			end := n.add(s, split+1)
			if end < 0 {
				return -1
			}
			jumps = append(jumps, len(n.states))
			n.states = append(n.states, nstate{kind: nEmpty})
			n.states[split].alt = len(n.states)
			continue
		}
		if n.add(s, len(n.states)) < 0 {
			return -1
		}
	}
	end := len(n.states)
	for _, j := range jumps {
		n.states[j].out = end
	}
	_ = in
	return end
}

// repeat appends x's sub-pattern min to max times.
func (n *Names) repeat(x *node, in int) int {
	sub := x.subs[0]
	copies := x.min
	if x.max > x.min {
		copies = x.max
	}
	if copies > 64 {
		// Read as any number of times, which matches more.
		return n.star(sub, len(n.states))
	}
	at := len(n.states)
	for i := 0; i < x.min; i++ {
		if at = n.add(sub, at); at < 0 {
			return -1
		}
	}
	if x.max < 0 {
		return n.star(sub, at)
	}
	// Up to max-min more, each optional: a split before each to the end.
	var splits []int
	for i := x.min; i < x.max; i++ {
		splits = append(splits, len(n.states))
		n.states = append(n.states, nstate{kind: nSplit, out: len(n.states) + 1})
		if at = n.add(sub, len(n.states)); at < 0 {
			return -1
		}
	}
	for _, s := range splits {
		n.states[s].alt = at
	}
	_ = in
	return at
}

// star appends sub any number of times.
func (n *Names) star(sub *node, in int) int {
	split := len(n.states)
	n.states = append(n.states, nstate{kind: nSplit, out: split + 1})
	if n.add(sub, split+1) < 0 {
		return -1
	}
	n.states = append(n.states, nstate{kind: nEmpty, out: split})
	n.states[split].alt = len(n.states)
	_ = in
	return len(n.states)
}

// maxProduct bounds the search of Overlap: past it, the two sets are
// taken to share a name.
const maxProduct = 20000

// Overlap reports whether some name is in both sets. It is exact for
// literal names and wildcards, and for regular expressions up to what
// Names over-approximates: false means no name matches both patterns;
// true, that one may.
func Overlap(a, b Names) bool {
	if a.none || b.none {
		return false
	}
	// The product of the two automata, read one byte at a time from the
	// start of a name; a state is the two sets of positions before their
	// empty moves, and whether no byte was read yet ("^").
	type pair struct{ a, b []int }
	key := func(p pair, start bool) string {
		var sb strings.Builder
		for _, s := range p.a {
			sb.WriteString(string(rune(s + 1)))
		}
		sb.WriteByte(0)
		for _, s := range p.b {
			sb.WriteString(string(rune(s + 1)))
		}
		if start {
			sb.WriteByte(1)
		}
		return sb.String()
	}
	classes := byteClasses(a, b)
	seen := map[string]bool{}
	type item struct {
		p     pair
		start bool
	}
	queue := []item{{pair{[]int{a.start * modes}, []int{b.start * modes}}, true}}
	seen[key(queue[0].p, true)] = true
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		// The end of the name.
		_, ma, _ := a.closure(it.p.a, it.start, -1)
		_, mb, _ := b.closure(it.p.b, it.start, -1)
		if ma && mb {
			return true
		}
		for _, c := range classes {
			ca, ma, la := a.closure(it.p.a, it.start, int(c))
			cb, mb, lb := b.closure(it.p.b, it.start, int(c))
			if ma && mb {
				return true // both matched before this byte: any name going on so
			}
			na, nb := a.step(ca, c, ma, la), b.step(cb, c, mb, lb)
			if len(na) == 0 || len(nb) == 0 {
				continue
			}
			nx := item{pair{na, nb}, false}
			k := key(nx.p, false)
			if seen[k] {
				continue
			}
			if len(seen) >= maxProduct {
				return true
			}
			seen[k] = true
			queue = append(queue, nx)
		}
	}
	return false
}

// A set of positions holds each state with a mode: modeFree; modeNL,
// passed by "$" before a newline, so that the byte read next must be
// that newline and the last byte of the name; modeEnd, after it, where
// the name must end.
const (
	modeFree = iota
	modeNL
	modeEnd
	modes
)

// closure follows the empty moves from the positions in (state*modes +
// mode), before a byte c (-1: at the end of the name), start telling
// whether no byte was read yet. It returns the byte-reading positions
// reached; whether the name is in the set whatever follows (a match
// state reached freely); and whether it is if c is a newline that ends
// the name (one reached past "$" before that newline).
func (n *Names) closure(in []int, start bool, c int) (out []int, matched, ifLast bool) {
	seen := make([]bool, len(n.states)*modes)
	stack := append([]int(nil), in...)
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[e] {
			continue
		}
		seen[e] = true
		s, mode := e/modes, e%modes
		st := &n.states[s]
		to := func(next, m int) { stack = append(stack, next*modes+m) }
		switch st.kind {
		case nByte:
			if mode != modeEnd {
				out = append(out, e)
			}
		case nSplit:
			to(st.out, mode)
			to(st.alt, mode)
		case nEmpty:
			to(st.out, mode)
		case nMatch:
			switch {
			case mode == modeFree, mode == modeEnd && c < 0:
				matched = true
			case mode == modeNL:
				ifLast = true
			}
		case nAssert:
			switch st.assert {
			case aBegin:
				if start {
					to(st.out, mode)
				}
			case aEnd:
				if c < 0 {
					to(st.out, mode)
				}
			case aEndNL:
				switch {
				case c < 0:
					to(st.out, mode)
				case c == '\n' && mode != modeEnd:
					to(st.out, modeNL)
				}
			}
		}
	}
	slices.Sort(out)
	return out, matched, ifLast
}

// step reads the byte c from the byte-reading positions in. A set that
// matched holds every name going on: it stays matched (a match state);
// one that matched if c ends the name must see the end next.
func (n *Names) step(in []int, c byte, matched, ifLast bool) []int {
	if matched {
		return []int{n.matchState() * modes}
	}
	var out []int
	add := func(e int) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if ifLast {
		add(n.matchState()*modes + modeEnd)
	}
	for _, e := range in {
		st := &n.states[e/modes]
		if !st.set.has(c) {
			continue
		}
		if e%modes == modeNL {
			add(st.out*modes + modeEnd) // c is the newline; the name ends after it
		} else {
			add(st.out * modes)
		}
	}
	slices.Sort(out)
	return out
}

// matchState is the index of a match state.
func (n *Names) matchState() int {
	for i := range n.states {
		if n.states[i].kind == nMatch {
			return i
		}
	}
	return -1
}

// byteClasses picks one byte of each class of name bytes that every set
// of both automata treats alike (and "\n" apart, for "$").
func byteClasses(a, b Names) []byte {
	sig := map[string]byte{}
	var out []byte
	for c := 1; c < 256; c++ {
		if !nameBytes.has(byte(c)) {
			continue
		}
		var sb strings.Builder
		for _, n := range []Names{a, b} {
			for i := range n.states {
				if n.states[i].kind == nByte && n.states[i].set.has(byte(c)) {
					sb.WriteByte('1')
				} else {
					sb.WriteByte('0')
				}
			}
		}
		if c == '\n' {
			sb.WriteByte('n')
		}
		k := sb.String()
		if _, ok := sig[k]; !ok {
			sig[k] = byte(c)
			out = append(out, byte(c))
		}
	}
	return out
}

// GlobPattern writes, as a PCRE pattern to try at the start of a name,
// the names apr_fnmatch(pattern, name, flags) matches (wildcard), or
// those equal to pattern (not: strcmp). ok is false where no name
// matches.
func GlobPattern(pattern string, flags int, wildcard bool) (string, bool) {
	var b strings.Builder
	lit := func(c byte) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	if !wildcard {
		if strings.ContainsAny(pattern, "/\x00") {
			return "", false
		}
		for i := 0; i < len(pattern); i++ {
			lit(pattern[i])
		}
		b.WriteString(`\z`)
		return b.String(), true
	}
	n := GlobNames(pattern, flags)
	if n.none {
		return "", false
	}
	// The automaton is a chain: a "*" is a split and a byte loop, any
	// other item one byte state.
	for i := n.start; i < len(n.states); i++ {
		st := n.states[i]
		switch st.kind {
		case nSplit:
			b.WriteString(`[^/]*`)
			i++ // its loop
		case nByte:
			writeClass(&b, st.set, lit)
		}
	}
	b.WriteString(`\z`)
	return b.String(), true
}

// writeClass writes a byte set as a PCRE class (or its one byte).
func writeClass(b *strings.Builder, s byteSet, lit func(byte)) {
	if s.count() == 1 {
		for c := 0; c < 256; c++ {
			if s.has(byte(c)) {
				lit(byte(c))
				return
			}
		}
	}
	b.WriteByte('[')
	for lo := 0; lo < 256; lo++ {
		if !s.has(byte(lo)) {
			continue
		}
		hi := lo
		for hi+1 < 256 && s.has(byte(hi+1)) {
			hi++
		}
		fmt.Fprintf(b, `\x%02x`, lo)
		if hi > lo {
			fmt.Fprintf(b, `-\x%02x`, hi)
		}
		lo = hi
	}
	b.WriteByte(']')
}
