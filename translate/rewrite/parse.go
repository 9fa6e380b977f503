// Package rewrite reads mod_rewrite's directives as mod_rewrite does
// (modules/mappers/mod_rewrite.c, the 2.4.x branch): the argument line of
// RewriteRule and RewriteCond (parseargline), their flags
// (cmd_parseflagfield and the setflag functions), the condition pattern
// types, and RewriteBase's and RewriteMap's checks, with Apache's
// messages for what it refuses.
//
// It also applies rules as mod_rewrite does (apply.go: apply_rewrite_list
// and apply_rewrite_rule, expand.go: do_expand, cond.go:
// apply_rewrite_cond), over a request the caller describes (State).
//
// It imports only translate/regex and policy; the configuration builder (package
// translate) gives it the compiler of the patterns (the regex defaults in
// force) and the statuses Apache knows.
package rewrite

import (
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// Env is what parsing needs of the configuration.
type Env struct {
	// Compile compiles a pattern as ap_pregcomp does where the directive
	// is (AP_REG_EXTENDED, the RegexDefaultOptions in force), icase for
	// [NC].
	Compile func(pattern string, icase bool) (*regex.Regexp, error)
	// KnownStatus reports whether Apache has a status line for a status
	// (ap_index_of_response does not fall back to 500's).
	KnownStatus func(status int) bool
	// V22 reads the flags as 2.2.x does: those 2.4 added are unknown.
	V22 bool
}

// flags24 are the RewriteRule flags 2.4 added (lower case), unknown to
// 2.2.x's cmd_rewriterule_setflag.
var flags24 = map[string]bool{
	"end": true, "qsd": true, "qsdiscard": true, "qsl": true, "qslast": true, "bnp": true, "backrefnoplus": true,
	"bctls": true, "bne": true, "unsafeprefixstat": true, "unsafeallow3f": true, "unc": true,
}

// Error is a directive mod_rewrite refuses: Msg is Apache's message;
// Regex, when set, is the pattern compiler's error behind it (which may
// say orderly cannot evaluate a pattern PCRE would take).
type Error struct {
	Msg   string
	Regex error
}

func (e *Error) Error() string { return e.Msg }

// RuleFlag is a RewriteRule flag without a value.
type RuleFlag uint32

// The flags of mod_rewrite's rewriterule_entry (RULEFLAG_*).
const (
	FlagForceRedirect    RuleFlag = 1 << iota // R
	FlagLast                                  // L
	FlagNewRound                              // N
	FlagChain                                 // C
	FlagIgnoreOnSubreq                        // NS
	FlagNoCase                                // NC
	FlagNoEscape                              // NE
	FlagPassThrough                           // PT
	FlagProxy                                 // P
	FlagQSAppend                              // QSA
	FlagQSDiscard                             // QSD
	FlagQSLast                                // QSL
	FlagQSNone                                // a substitution ending in "?" (or QSD with none)
	FlagDiscardPathInfo                       // DPI
	FlagEnd                                   // END
	FlagStatus                                // F, G, R=4xx/5xx: answer with Status
	FlagNoSub                                 // "-", F, G, R=4xx/5xx: no substitution
	FlagEscapeBackref                         // B
	FlagEscapeNoPlus                          // BNP
	FlagEscapeCTLs                            // BCTLS
	FlagUnsafePrefixStat                      // UnsafePrefixStat
	FlagUnsafeAllow3F                         // UnsafeAllow3F
	FlagUNC                                   // UNC
)

// DefaultMaxRounds is REWRITE_MAX_ROUNDS: how many times [N] restarts.
const DefaultMaxRounds = 10000

// Rule is one RewriteRule, with the RewriteCond lines before it.
type Rule struct {
	Pattern string // as written, without a leading "!"
	Regex   *regex.Regexp
	Negate  bool   // "!pattern"
	Subst   string // the substitution ("-" for none), a final "?" taken off unless QSA
	Flags   RuleFlag
	// Status is the forced response code: 302 unless R= or F or G said
	// otherwise (0 for an R= value mod_rewrite does not read).
	Status    int
	Env       []string // E=, in order
	Cookies   []string // CO=
	Skip      int      // S=
	MaxRounds int      // N=
	Handler   string   // H=
	MimeType  string   // T=
	Escapes   string   // B=
	NoEscapes string   // BNE=
	Conds     []*Cond
	// Line is the rule's line, for its hits and explain (nil where the
	// caller keeps none).
	Line *policy.Rule
}

// CondType is the kind of test a RewriteCond makes.
type CondType uint8

// The condition pattern types (CONDPAT_*).
const (
	CondRegex      CondType = iota
	CondFileExists          // -f
	CondFileSize            // -s
	CondFileDir             // -d
	CondFileXBit            // -x
	CondFileLink            // -h, -l, -L
	CondLookupURL           // -U
	CondLookupFile          // -F
	CondStrLT               // <
	CondStrLE               // <=
	CondStrEQ               // =
	CondStrGT               // >
	CondStrGE               // >=
	CondIntLT               // -lt
	CondIntLE               // -le
	CondIntEQ               // -eq, -ne
	CondIntGT               // -gt
	CondIntGE               // -ge
	CondExpr                // TestString "expr": an ap_expr
)

// Cond is one RewriteCond.
type Cond struct {
	Input   string // the TestString, unexpanded
	Pattern string // the CondPattern without "!" and its type's prefix
	Type    CondType
	Regex   *regex.Regexp // CondRegex
	Negate  bool          // "!" (or -ne)
	NoCase  bool          // NC (regex and string comparisons only)
	OrNext  bool          // OR
	NoVary  bool          // NV
	Line    *policy.Rule  // the condition's line, as Rule.Line
}

// argLine is parseargline (2.4.x): two or three arguments, each
// optionally in double or single quotes, a backslash before a space
// keeping the space in the argument; anything after the third is
// ignored. ok is false with fewer than two.
func argLine(str string) (a1, a2, a3 string, hasA3, ok bool) {
	i := 0
	skip := func() {
		for i < len(str) && isSpace(str[i]) {
			i++
		}
	}
	word := func() (string, bool) {
		var quote byte
		if i < len(str) && (str[i] == '"' || str[i] == '\'') {
			quote = str[i]
			i++
		}
		start := i
		for ; i < len(str); i++ {
			c := str[i]
			if isSpace(c) && quote == 0 || quote != 0 && c == quote {
				break
			}
			if c == '\\' && i+1 < len(str) && isSpace(str[i+1]) {
				i++
			}
		}
		return str[start:i], i < len(str)
	}
	skip()
	a1, more := word()
	if !more {
		return "", "", "", false, false
	}
	i++
	skip()
	a2, more = word()
	if !more {
		return a1, a2, "", false, true
	}
	i++
	skip()
	if i >= len(str) {
		return a1, a2, "", false, true
	}
	a3, _ = word()
	return a1, a2, a3, true, true
}

// cString is s as C reads it: up to its first NUL.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// flagField is cmd_parseflagfield, ported byte for byte (its handling of
// an empty flag between commas depends on the spaces around it): the
// comma-separated flags of "[...]", each "key" or "key=value", spaces
// around them dropped; parse is called for each in order.
func flagField(field string, parse func(key, val string) string) string {
	b := []byte(field)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return "bad flag delimiters"
	}
	b[len(b)-1] = ','
	cstr := func(i int) string { // the C string at i
		j := i
		for j < len(b) && b[j] != 0 {
			j++
		}
		return string(b[i:j])
	}
	for k := 1; k < len(b) && b[k] != 0; {
		for k < len(b) && isSpace(b[k]) {
			k++
		}
		if k >= len(b) || b[k] == 0 {
			break
		}
		next := -1
		for j := k; j < len(b) && b[j] != 0; j++ {
			if b[j] == ',' {
				next = j
				break
			}
		}
		if next < 0 {
			break
		}
		e := next - 1
		for e >= 0 && isSpace(b[e]) {
			e--
		}
		b[e+1] = 0
		val := ""
		for j := k; j < len(b) && b[j] != 0; j++ {
			if b[j] == '=' {
				b[j] = 0
				val = cstr(j + 1)
				break
			}
		}
		if msg := parse(cstr(k), val); msg != "" {
			return msg
		}
		k = next + 1
	}
	return ""
}

// atoi is C's atoi: leading space, a sign, digits; 0 without digits.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// ParseRule reads a RewriteRule's argument text (the directive's raw
// arguments) as cmd_rewriterule does.
func ParseRule(raw string, env Env) (*Rule, error) {
	raw = cString(raw)
	a1, a2, a3, hasA3, ok := argLine(raw)
	if !ok {
		return nil, &Error{Msg: "RewriteRule: bad argument line '" + raw + "'"}
	}
	r := &Rule{Status: 302, MaxRounds: DefaultMaxRounds}
	if hasA3 {
		if msg := flagField(a3, func(key, val string) string { return r.setFlag(key, val, env) }); msg != "" {
			return nil, &Error{Msg: "RewriteRule: " + msg}
		}
	}
	if strings.HasPrefix(a1, "!") {
		r.Negate = true
		a1 = a1[1:]
	}
	re, err := env.Compile(a1, r.Flags&FlagNoCase != 0)
	if err != nil {
		return nil, &Error{Msg: "RewriteRule: cannot compile regular expression '" + a1 + "'", Regex: err}
	}
	r.Pattern, r.Regex = a1, re
	if a2 == "-" {
		r.Flags |= FlagNoSub
	}
	switch {
	case strings.HasSuffix(a2, "?"):
		// A literal "?" ends the substitution: with QSA the query is
		// appended after it (QSL); without, no query string comes
		// through a capture, and the "?" has done its job.
		if r.Flags&FlagQSAppend != 0 {
			r.Flags |= FlagQSLast
		} else {
			r.Flags |= FlagQSNone
			a2 = a2[:len(a2)-1]
		}
	case r.Flags&FlagQSDiscard != 0 && !strings.Contains(a2, "?"):
		r.Flags |= FlagQSNone
	}
	r.Subst = a2
	return r, nil
}

// setFlag is cmd_rewriterule_setflag: key is the flag's name, val its
// value ("" for none).
func (r *Rule) setFlag(key, val string, env Env) string {
	if key == "" {
		return "unknown flag ''"
	}
	if env.V22 && flags24[strings.ToLower(key)] {
		return "unknown flag '" + key + "'"
	}
	rest := key[1:]
	is := func(names ...string) bool {
		for _, n := range names {
			if strings.EqualFold(rest, n) {
				return true
			}
		}
		return false
	}
	bad := false
	switch key[0] {
	case 'b', 'B':
		switch {
		case is("", "ackrefescaping"):
			r.Flags |= FlagEscapeBackref
			if val != "" {
				r.Escapes = val
			}
		case is("NE"):
			if val == "" {
				return "flag 'BNE' wants a list of characters (i.e. [BNE=...])"
			}
			r.NoEscapes = val
		case is("NP", "ackrefernoplus"):
			r.Flags |= FlagEscapeNoPlus
		case is("CTLS"):
			r.Flags |= FlagEscapeCTLs | FlagEscapeBackref
		default:
			bad = true
		}
	case 'c', 'C':
		switch {
		case is("", "hain"):
			r.Flags |= FlagChain
		case is("O", "ookie"):
			r.Cookies = append(r.Cookies, val)
		default:
			bad = true
		}
	case 'd', 'D':
		// mod_rewrite ignores any other word starting with D.
		if is("", "PI", "iscardpath") {
			r.Flags |= FlagDiscardPathInfo
		}
	case 'e', 'E':
		switch {
		case is("", "nv"):
			r.Env = append(r.Env, val)
		case is("nd"):
			r.Flags |= FlagEnd
		default:
			bad = true
		}
	case 'f', 'F':
		if is("", "orbidden") {
			r.Flags |= FlagStatus | FlagNoSub
			r.Status = 403
		} else {
			bad = true
		}
	case 'g', 'G':
		if is("", "one") {
			r.Flags |= FlagStatus | FlagNoSub
			r.Status = 410
		} else {
			bad = true
		}
	case 'h', 'H':
		if is("", "andler") {
			r.Handler = val
		} else {
			bad = true
		}
	case 'l', 'L':
		if is("", "ast") {
			r.Flags |= FlagLast
		} else {
			bad = true
		}
	case 'n', 'N':
		switch {
		case is("E", "oescape"):
			r.Flags |= FlagNoEscape
		case is("", "ext"):
			r.Flags |= FlagNewRound
			if val != "" {
				r.MaxRounds = atoi(val)
			}
		case is("S", "osubreq"):
			r.Flags |= FlagIgnoreOnSubreq
		case is("C", "ocase"):
			r.Flags |= FlagNoCase
		default:
			bad = true
		}
	case 'p', 'P':
		switch {
		case is("", "roxy"):
			r.Flags |= FlagProxy
		case is("T", "assthrough"):
			r.Flags |= FlagPassThrough
		default:
			bad = true
		}
	case 'q', 'Q':
		switch {
		case is("SA", "sappend"):
			r.Flags |= FlagQSAppend
		case is("SD", "sdiscard"):
			r.Flags |= FlagQSDiscard
		case is("SL", "slast"):
			r.Flags |= FlagQSLast
		default:
			bad = true
		}
	case 'r', 'R':
		if !is("", "edirect") {
			bad = true
			break
		}
		r.Flags |= FlagForceRedirect
		if val == "" {
			break
		}
		status := 0
		switch {
		case strings.EqualFold(val, "permanent"):
			status = 301
		case strings.EqualFold(val, "temp"):
			status = 302
		case strings.EqualFold(val, "seeother"):
			status = 303
		case val[0] >= '0' && val[0] <= '9':
			status = atoi(val)
			if status != 500 && !env.KnownStatus(status) {
				return "invalid HTTP response code '" + val + "' for flag 'R'"
			}
			if status < 300 || status > 399 {
				r.Flags |= FlagStatus | FlagNoSub
			}
		}
		r.Status = status
	case 's', 'S':
		if is("", "kip") {
			r.Skip = atoi(val)
		} else {
			bad = true
		}
	case 't', 'T':
		if is("", "ype") {
			r.MimeType = val
		} else {
			bad = true
		}
	case 'u', 'U':
		switch {
		case is("nsafePrefixStat"):
			r.Flags |= FlagUnsafePrefixStat
		case is("nsafeAllow3F"):
			r.Flags |= FlagUnsafeAllow3F
		case is("NC"):
			r.Flags |= FlagUNC
		default:
			bad = true
		}
	default:
		bad = true
	}
	if bad {
		return "unknown flag '" + key + "'"
	}
	return ""
}

// ParseCond reads a RewriteCond's argument text as cmd_rewritecond does.
// A condition on an ap_expr ("expr") is read but its expression is not
// parsed: Pattern holds it.
func ParseCond(raw string, env Env) (*Cond, error) {
	raw = cString(raw)
	a1, a2, a3, hasA3, ok := argLine(raw)
	if !ok {
		return nil, &Error{Msg: "RewriteCond: bad argument line '" + raw + "'"}
	}
	c := &Cond{Input: a1}
	if hasA3 {
		msg := flagField(a3, func(key, _ string) string {
			switch {
			case strings.EqualFold(key, "nocase") || strings.EqualFold(key, "NC"):
				c.NoCase = true
			case strings.EqualFold(key, "ornext") || strings.EqualFold(key, "OR"):
				c.OrNext = true
			case strings.EqualFold(key, "novary") || strings.EqualFold(key, "NV"):
				c.NoVary = true
			default:
				return "unknown flag '" + key + "'"
			}
			return ""
		})
		if msg != "" {
			return nil, &Error{Msg: "RewriteCond: " + msg}
		}
	}
	p := a2
	if strings.HasPrefix(p, "!") {
		c.Negate = true
		p = p[1:]
	}
	c.Type = CondRegex
	switch {
	case strings.EqualFold(a1, "expr"):
		c.Type = CondExpr
	case len(p) >= 2 && p[0] == '-' && len(p) == 2:
		switch p[1] {
		case 'f':
			c.Type = CondFileExists
		case 's':
			c.Type = CondFileSize
		case 'd':
			c.Type = CondFileDir
		case 'x':
			c.Type = CondFileXBit
		case 'h', 'L', 'l':
			c.Type = CondFileLink
		case 'U':
			c.Type = CondLookupURL
		case 'F':
			c.Type = CondLookupFile
		}
	case len(p) >= 4 && p[0] == '-':
		if t, ok := intTests[p[1:3]]; ok {
			c.Type = t
			if p[1:3] == "ne" {
				c.Negate = !c.Negate // !-ne is -eq
			}
			p = p[3:]
		}
	case len(p) >= 2 && p[0] == '>':
		c.Type, p = CondStrGT, p[1:]
		if p[0] == '=' {
			c.Type, p = CondStrGE, p[1:]
		}
	case len(p) >= 2 && p[0] == '<':
		c.Type, p = CondStrLT, p[1:]
		if p[0] == '=' {
			c.Type, p = CondStrLE, p[1:]
		}
	case len(p) >= 2 && p[0] == '=':
		c.Type, p = CondStrEQ, p[1:]
		if p == `""` {
			p = "" // "" stands for the empty string
		}
	}
	if c.Type != CondRegex && (c.Type < CondStrLT || c.Type > CondStrGE) {
		c.NoCase = false // AH00665: NoCase is ignored for other tests
	}
	c.Pattern = p
	if c.Type == CondRegex {
		re, err := env.Compile(p, c.NoCase)
		if err != nil {
			return nil, &Error{Msg: "RewriteCond: cannot compile regular expression '" + p + "'", Regex: err}
		}
		c.Regex = re
	}
	return c, nil
}

// intTests are the integer comparisons, by their two letters.
var intTests = map[string]CondType{"lt": CondIntLT, "le": CondIntLE, "eq": CondIntEQ, "ne": CondIntEQ, "gt": CondIntGT, "ge": CondIntGE}

// CheckBase is cmd_rewritebase's check of RewriteBase's argument;
// perDir says the directive is in a directory context.
func CheckBase(arg string, perDir bool) string {
	switch {
	case !perDir:
		return "RewriteBase: only valid in per-directory config files"
	case arg == "":
		return "RewriteBase: empty URL not allowed"
	case arg[0] != '/':
		return "RewriteBase: argument is not a valid URL"
	}
	return ""
}

// InternalMaps are the int: maps mod_rewrite registers.
var InternalMaps = map[string]bool{"tolower": true, "toupper": true, "escape": true, "unescape": true}
