// Package regex matches Apache's regular expressions as Apache does:
// PCRE (PCRE2 10.42 in the 2.4 oracle) over bytes, with the default "C"
// character tables and no UTF mode, so that case folds for ASCII letters
// only, "." and "?" take one byte, and "$" ends a subject or, unless
// DOLLAR_ENDONLY, stands before its final newline (server/util_pcre.c
// ap_regcomp and ap_regexec, 2.2.34 and 2.4.x).
//
// A pattern is parsed here as PCRE2 reads it, then written for Go's
// regexp (RE2: linear time) when RE2 can express it, and for
// github.com/dlclark/regexp2 (a backtracking engine, bounded by a match
// timeout and a stack limit) when it cannot: lookaround, back
// references, atomic groups, possessive quantifiers, conditionals, and
// "$" or multiline "^" on a subject that ends in a newline. Both engines
// see the subject with every byte from 0x80 as a private-use rune
// (U+E000 plus the byte), so neither folds nor classifies it; case is
// folded into classes before either sees the pattern.
//
// Fnmatch is APR's apr_fnmatch over bytes, for <Files>, <Directory> and
// <Location> wildcards; EqualFold is strcasecmp's equality.
//
// The package imports only the standard library and regexp2; nothing of
// orderly.
package regex

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// Options are Apache's AP_REG_* compile flags, and the exec flag
// AP_REG_NOTEOL.
type Options struct {
	ICase         bool // AP_REG_ICASE: PCRE2_CASELESS
	Newline       bool // AP_REG_NEWLINE: PCRE2_MULTILINE
	DotAll        bool // AP_REG_DOTALL: PCRE2_DOTALL ("." takes "\n" too)
	DollarEndOnly bool // AP_REG_DOLLAR_ENDONLY: "$" only at the very end
	// DupNames is PCRE2_DUPNAMES, which 2.4's ap_regcomp always sets (2.2's
	// never does): two groups may have one name.
	DupNames bool
	// NotEOL is AP_REG_NOTEOL at match time (2.2's <DirectoryMatch>): the
	// end of the subject is not the end of a line, so "$" never matches
	// there, nor before a final newline (\Z and \z are not affected).
	NotEOL bool
	// Timeout bounds one evaluation by the backtracking engine;
	// 0 is DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout bounds one evaluation by the backtracking engine. PCRE2
// stops at its match limit (10,000,000 steps, about as long) and Apache
// then treats the pattern as not matching; orderly answers 500 instead
// (MatchError), so that a pattern that is too slow never lets a request
// through that Apache might have refused.
const DefaultTimeout = 200 * time.Millisecond

// maxStack is the backtracking engine's stack limit, in slots: enough for
// any subject Apache accepts (a request line or header of 8190 bytes)
// under patterns that backtrack over every byte.
const maxStack = 1 << 21

// Regexp is a compiled pattern. It is safe for concurrent use.
type Regexp struct {
	expr  string
	opt   Options
	std   *regexp.Regexp  // RE2, nil when it cannot express the pattern
	bt    *regexp2.Regexp // the backtracking engine, nil when std is exact for every subject
	nl    bool            // std is exact only for subjects that do not end in "\n"
	ncap  int
	names []string
	// btGroups[n] is regexp2's number for group n.
	btGroups []int
	// pre rejects subjects that lack a literal every match holds
	// (prefilter.go); nil where there is none.
	pre *prefilter
	// dotStar is set for ".*" and "^.*", which match every subject from
	// its start to its first newline (to its end under DotAll).
	dotStar bool
	// tree is the parsed pattern, for Names; auto, Names' automaton once
	// made (it is read only).
	tree *node
	auto atomic.Pointer[Names]
}

// Error is a pattern that does not compile.
type Error struct {
	Pattern string
	Offset  int
	Msg     string
	// Unsupported: PCRE2 accepts the pattern, but orderly cannot
	// evaluate it as PCRE2 would (recursion, backtracking verbs, \K, ...).
	Unsupported bool
}

func (e *Error) Error() string {
	if e.Unsupported {
		return fmt.Sprintf("regex %q cannot be evaluated by orderly: %s", e.Pattern, e.Msg)
	}
	return fmt.Sprintf("regex %q does not compile: %s at offset %d", e.Pattern, e.Msg, e.Offset)
}

// MatchError is an evaluation that did not finish (the timeout, or the
// backtracking engine's stack limit): neither a match nor not one.
type MatchError struct {
	Pattern string
	Err     error
}

func (e *MatchError) Error() string {
	return fmt.Sprintf("regex %q: evaluation stopped: %v", e.Pattern, e.Err)
}

func (e *MatchError) Unwrap() error { return e.Err }

// Compile parses pattern as PCRE2 does with opt.
func Compile(pattern string, opt Options) (*Regexp, error) {
	re, err := compile(pattern, opt, false)
	if err != nil {
		return nil, err
	}
	return re, nil
}

// MustCompile is Compile for patterns known to be good; it panics
// otherwise.
func MustCompile(pattern string, opt Options) *Regexp {
	re, err := Compile(pattern, opt)
	if err != nil {
		panic(err)
	}
	return re
}

// compile compiles pattern; both compiles both engines where RE2 can
// express it (for the tests that hold one engine to the other).
func compile(pattern string, opt Options, both bool) (*Regexp, error) {
	// ap_regcomp hands PCRE2 a NUL-terminated pattern.
	if i := strings.IndexByte(pattern, 0); i >= 0 {
		pattern = pattern[:i]
	}
	f := flags{icase: opt.ICase, multiline: opt.Newline, dotall: opt.DotAll, dollarEndOnly: opt.DollarEndOnly, notEOL: opt.NotEOL}
	tree, p, err := parse(pattern, f, opt.DupNames)
	if err != nil {
		return nil, err
	}
	re := &Regexp{expr: pattern, opt: opt, ncap: p.ncap, names: p.names, pre: newPrefilter(tree), dotStar: pattern == ".*" || pattern == "^.*", tree: tree}
	if src, _, ok, nl := render(tree, re2, p.ncap); ok {
		if std, err := regexp.Compile(src); err == nil && std.NumSubexp() == p.ncap {
			re.std, re.nl = std, nl
		}
	}
	if re.std == nil || re.nl || both {
		src, groups, _, _ := render(tree, net, p.ncap)
		re.btGroups = groups
		bt, err := regexp2.Compile(src, regexp2.None, regexp2.OptionMaintainCaptureOrder(), regexp2.OptionMaxBacktrackingStackSize(maxStack))
		if err != nil {
			if re.std == nil {
				return nil, &Error{Pattern: pattern, Msg: "the backtracking engine refused it (" + err.Error() + ")", Unsupported: true}
			}
		} else {
			bt.MatchTimeout = opt.Timeout
			if bt.MatchTimeout <= 0 {
				bt.MatchTimeout = DefaultTimeout
			}
			re.bt = bt
		}
	}
	return re, nil
}

// String is the pattern as written.
func (re *Regexp) String() string { return re.expr }

// Options are the options the pattern was compiled with.
func (re *Regexp) Options() Options { return re.opt }

// NumSubexp is the number of capturing groups.
func (re *Regexp) NumSubexp() int { return re.ncap }

// SubexpNames are the groups' names, "" for the whole match and for
// unnamed groups.
func (re *Regexp) SubexpNames() []string { return re.names }

// Backtracks reports whether some subjects are matched by the
// backtracking engine (and may then time out).
func (re *Regexp) Backtracks() bool { return re.bt != nil && (re.std == nil || re.nl) }

// MatchString reports whether s, as bytes, matches. The error is a
// MatchError: the evaluation stopped, and the answer is unknown.
func (re *Regexp) MatchString(s string) (bool, error) {
	s = cString(s)
	if re.dotStar {
		return true, nil
	}
	if re.pre != nil && !re.pre.mayMatch(s) {
		return false, nil
	}
	if re.useStd(s) {
		if isASCII(s) {
			return re.std.MatchString(s), nil
		}
		return re.std.MatchString(transcode(s)), nil
	}
	m, err := re.btMatch(s, false)
	return m != nil, err
}

// FindStringSubmatchIndex is the leftmost match of s, as bytes: pairs of
// byte offsets of the whole match and of each group (-1 for a group that
// took no part), or nil. The error is a MatchError.
func (re *Regexp) FindStringSubmatchIndex(s string) ([]int, error) {
	s = cString(s)
	if re.dotStar {
		end := len(s)
		if i := strings.IndexByte(s, '\n'); i >= 0 && !re.opt.DotAll {
			end = i
		}
		return []int{0, end}, nil
	}
	if re.pre != nil && !re.pre.mayMatch(s) {
		return nil, nil
	}
	if re.useStd(s) {
		if isASCII(s) {
			return re.std.FindStringSubmatchIndex(s), nil
		}
		t := transcode(s)
		m := re.std.FindStringSubmatchIndex(t)
		if m != nil {
			untranscode(t, m)
		}
		return m, nil
	}
	return re.btMatch(s, true)
}

func (re *Regexp) useStd(s string) bool {
	return re.std != nil && (!re.nl || !strings.HasSuffix(s, "\n"))
}

// btMatch runs the backtracking engine over s.
func (re *Regexp) btMatch(s string, groups bool) ([]int, error) {
	in := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		in[i] = runeOf(s[i])
	}
	var m []int
	err := re.bt.FindRunesMatches(in, 0, func(v regexp2.MatchView) bool {
		n := 1
		if groups {
			n = re.ncap + 1
		}
		m = make([]int, 2*n)
		for g := 0; g < n; g++ {
			idx, l, ok := v.GroupRange(re.btGroups[g])
			if !ok {
				m[2*g], m[2*g+1] = -1, -1
				continue
			}
			m[2*g], m[2*g+1] = idx, idx+l
		}
		return false
	})
	if err != nil {
		return nil, &MatchError{Pattern: re.expr, Err: err}
	}
	return m, nil
}

// cString is s as C sees it: up to its first NUL (ap_regexec takes
// strlen of the subject).
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// transcode writes every byte from 0x80 of s as its private-use rune.
func transcode(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 3)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x80 {
			b.WriteByte(c)
		} else {
			b.WriteRune(runeOf(c))
		}
	}
	return b.String()
}

// untranscode turns offsets into t (transcode's output) into offsets
// into the bytes it came from.
func untranscode(t string, m []int) {
	// Offsets are at rune starts: count the runes before each.
	idx := make([]int, len(t)+1)
	n := 0
	for i := 0; i < len(t); {
		_, w := utf8.DecodeRuneInString(t[i:])
		for k := 0; k < w; k++ {
			idx[i+k] = n
		}
		i += w
		n++
	}
	idx[len(t)] = n
	for i, v := range m {
		if v >= 0 {
			m[i] = idx[v]
		}
	}
}

// IsMatchError reports whether err is an evaluation that did not finish.
func IsMatchError(err error) bool {
	var me *MatchError
	return errors.As(err, &me)
}

// stdMatch is RE2's answer alone (tests).
func (re *Regexp) stdMatch(s string) []int {
	s = cString(s)
	if isASCII(s) {
		return re.std.FindStringSubmatchIndex(s)
	}
	t := transcode(s)
	m := re.std.FindStringSubmatchIndex(t)
	if m != nil {
		untranscode(t, m)
	}
	return m
}
