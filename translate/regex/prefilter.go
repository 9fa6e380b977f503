package regex

import "strings"

// prefilter is what a subject must hold for a pattern to match it: one
// of a set of byte strings (lower case: a subject is compared with its
// ASCII letters folded, which can only let more subjects through). A
// subject that holds none of them cannot match, and the engines are not
// run; most patterns of access rules (robot names, referers, probes in a
// query) are rejected so in a few string scans, where RE2 and regexp2
// would try every offset.
type prefilter struct {
	any []string // at least one must occur
}

// minFactor is the shortest literal worth scanning for.
const minFactor = 2

// newPrefilter derives the prefilter of a parsed pattern, or nil where
// the pattern requires no literal of minFactor bytes.
func newPrefilter(n *node) *prefilter {
	fs, ok := required(n)
	if !ok || shortest(fs) < minFactor {
		return nil
	}
	return &prefilter{any: fs}
}

// mayMatch reports whether s holds one of the literals.
func (p *prefilter) mayMatch(s string) bool {
	for _, f := range p.any {
		if containsFold(s, f) {
			return true
		}
	}
	return false
}

// required returns literals one of which every match holds (lower
// case), and whether there is such a set.
func required(n *node) ([]string, bool) {
	switch n.op {
	case opSet:
		if b, ok := literalByte(n.set); ok {
			return []string{string([]byte{b})}, true
		}
	case opCapture, opGroup, opAtomic:
		return required(n.subs[0])
	case opRepeat:
		if n.min >= 1 {
			return required(n.subs[0])
		}
	case opAlt:
		var all []string
		for _, s := range n.subs {
			fs, ok := required(s)
			if !ok {
				return nil, false
			}
			all = append(all, fs...)
		}
		return all, len(all) > 0
	case opConcat:
		var best []string
		consider := func(fs []string) {
			if shortest(fs) > shortest(best) {
				best = fs
			}
		}
		var run strings.Builder
		for _, s := range n.subs {
			if s.op == opSet {
				if b, ok := literalByte(s.set); ok {
					run.WriteByte(b)
					continue
				}
			}
			if run.Len() > 0 {
				consider([]string{run.String()})
				run.Reset()
			}
			if fs, ok := required(s); ok {
				consider(fs)
			}
		}
		if run.Len() > 0 {
			consider([]string{run.String()})
		}
		return best, best != nil
	}
	return nil, false
}

// literalByte is the byte a set stands for: a single byte, or an ASCII
// letter in both cases (folded by the parser), as its lower case.
func literalByte(s byteSet) (byte, bool) {
	switch s.count() {
	case 1:
		for c := 0; c < 256; c++ {
			if s.has(byte(c)) {
				return lowerASCII(byte(c)), true
			}
		}
	case 2:
		for c := byte('a'); c <= 'z'; c++ {
			if s.has(c) && s.has(c-32) {
				return c, true
			}
		}
	}
	return 0, false
}

// shortest is the length of the shortest literal of a set (0 for none).
func shortest(fs []string) int {
	if len(fs) == 0 {
		return 0
	}
	m := len(fs[0])
	for _, f := range fs[1:] {
		m = min(m, len(f))
	}
	return m
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

// containsFold reports whether s holds f (lower case) with s's ASCII
// letters folded.
func containsFold(s, f string) bool {
	first := f[0]
	upper := first
	if first >= 'a' && first <= 'z' {
		upper = first - 32
	}
	for i := 0; i+len(f) <= len(s); i++ {
		if c := s[i]; c != first && c != upper {
			continue
		}
		j := 1
		for ; j < len(f); j++ {
			if lowerASCII(s[i+j]) != f[j] {
				break
			}
		}
		if j == len(f) {
			return true
		}
	}
	return false
}
