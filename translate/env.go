package translate

import (
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// EnvAttr is what a SetEnvIf rule tests (mod_setenvif special_type).
type EnvAttr uint8

// The attributes SetEnvIf can test.
const (
	AttrHeader      EnvAttr = iota // a request header, or the variable of that name when the header is absent
	AttrHeaderRegex                // the last header whose name matches a regex
	AttrRemoteAddr
	AttrRemoteHost // the client's name under HostnameLookups On or Double, else its address
	AttrServerAddr
	AttrRequestMethod
	AttrRequestProtocol
	AttrRequestURI
)

// Feature is one variable action of a SetEnvIf line.
type Feature struct {
	Name  string
	Value string
	Unset bool
}

// EnvRule is one SetEnvIf entry. Consecutive lines with the same
// attribute, case flag and pattern are one entry in Apache, with their
// actions joined; Build does the same.
type EnvRule struct {
	Attr    EnvAttr
	Name    string        // attribute as written (header name)
	NameRe  *regex.Regexp // AttrHeaderRegex
	Pattern string        // as written
	ICase   bool
	Substr  string        // plain substring test when Re is nil
	Re      *regex.Regexp // the pattern when it has regex metacharacters
	// NameFold is NameRe without regard to case (NameRe itself for the
	// NoCase forms): what a header-name regex can match when the names'
	// spelling is not known.
	NameFold *regex.Regexp
	Features []Feature
	Rule     *policy.Rule

	// first is the entry of the same list (one section's, or the server's)
	// that first named this attribute, case aside: add_setenvif_core gives
	// them one name pointer, and match_headers reads the value again only
	// when the pointer changes, so a merged list reads it again at each
	// section's first entry.
	first *EnvRule
}

// HostnameLookups is core's HostnameLookups: whether Remote_Host is the
// client's name (ap_get_useragent_host with REMOTE_NAME).
type HostnameLookups uint8

// The HostnameLookups settings. LookupsUnset inherits, and is Off where
// nothing sets it.
const (
	LookupsUnset HostnameLookups = iota
	LookupsOff
	LookupsOn     // the PTR name of the client's address
	LookupsDouble // the PTR name, when a forward lookup of it gives the address back
)

// hostnameLookups reads a HostnameLookups directive into conf
// (set_hostname_lookups).
func (b *builder) hostnameLookups(d *apacheconf.Directive, conf *DirConf) {
	v := LookupsUnset
	if len(d.Args) == 1 {
		switch strings.ToLower(d.Args[0]) {
		case "off":
			v = LookupsOff
		case "on":
			v = LookupsOn
		case "double":
			v = LookupsDouble
		}
	}
	if v == LookupsUnset {
		b.errorf(d, "parameter must be 'on', 'off', or 'double'")
		return
	}
	conf.HostnameLookups = v
}

// RemoteNamer gives SetEnvIf's Remote_Host: ap_get_useragent_host(r,
// REMOTE_NAME), which looks the name up under HostnameLookups On or
// Double, once per request, keeps it for the rest of the request, and
// gives the address when there is no name.
type RemoteNamer interface {
	RemoteName(HostnameLookups) string
}

// EnvInput is what SetEnvIf reads of a request.
type EnvInput struct {
	// Headers is headers_in, as SetEnvIf reads it. Nil reads Header.
	Headers Headers
	// Header is the request's header in Go's form, read when Headers is
	// nil (HeaderMap).
	Header     http.Header
	RemoteAddr netip.Addr
	ServerAddr netip.Addr
	Method     string
	Protocol   string
	URI        string
	// Lookups is HostnameLookups in force for this call: the server's at
	// post_read_request, the merged per-directory one at header_parser.
	Lookups HostnameLookups
	// Names gives Remote_Host under Lookups; nil: the address.
	Names RemoteNamer
	Now   int64 // unix nanoseconds, for the rules' last-hit times
	Dry   bool  // evaluate without counting (policy.Request.Dry)
}

// ApplyEnv runs SetEnvIf rules over a request in order, as match_headers
// in mod_setenvif does: later rules see what earlier ones set. It returns
// nil, or the first rule whose attribute orderly cannot know as Apache
// would have it (Headers says so), or whose regex did not finish
// (regex.MatchError): the caller then refuses the request (500) rather
// than guess, and the rules after it are not run.
func ApplyEnv(rules []*EnvRule, in *EnvInput, env *policy.Env) *EnvRule {
	var last *EnvRule
	var val string
	for _, b := range rules {
		if last == nil || last.nameKey() != b.nameKey() {
			var known bool
			if val, known = envValue(b, in, env); !known {
				return b
			}
		}
		last = b
		var m []int
		matched := false
		if b.Re == nil {
			if b.ICase {
				matched = strmatchFold(val, b.Substr)
			} else {
				matched = strings.Contains(val, b.Substr)
			}
		} else {
			var err error
			if m, err = b.Re.FindStringSubmatchIndex(val); err != nil {
				return b
			}
			matched = m != nil
		}
		if !matched {
			continue
		}
		if !in.Dry {
			b.Rule.Hit(in.Now)
		}
		for _, f := range b.Features {
			if f.Unset {
				env.Unset(f.Name)
				continue
			}
			v := f.Value
			if b.Re != nil {
				v = pregsub(v, val, m)
			}
			env.Set(f.Name, v)
		}
	}
	return nil
}

// nameKey is what match_headers compares to read an attribute's value
// again or not: the name pointer (EnvRule.first).
func (e *EnvRule) nameKey() *EnvRule {
	if e.first != nil {
		return e.first
	}
	return e
}

// strmatchFold is apr_strmatch without regard to case: ASCII letters
// only, as apr_tolower in the C locale.
func strmatchFold(s, sub string) bool {
	n := len(sub)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(s); i++ {
		if equalFoldASCII(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

// equalFoldASCII is strcasecmp's equality: ASCII letters match either
// case, every other byte only itself.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x != y && lowerASCII(x) != lowerASCII(y) {
			return false
		}
	}
	return true
}

// toLower is strings.ToLower(s), which it returns without a copy, eight
// bytes read at a time, where s is ASCII with no upper-case letter (as
// the words of most configurations are).
func toLower(s string) string {
	const (
		high  = 0x8080808080808080
		fromA = 0x3f3f3f3f3f3f3f3f // + a byte sets its high bit from 'A' (0x41) up
		pastZ = 0x2525252525252525 // and from past 'Z' (0x5b) up
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56 // one load
		// With no high bit set, no byte's sum carries into the next.
		if x&high != 0 || (x+fromA)&^(x+pastZ)&high != 0 {
			return strings.ToLower(s)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Exactness says how much a Headers view knows of what Apache has.
type Exactness uint8

// The degrees of Exactness.
const (
	// Unknown: orderly cannot tell what Apache has.
	Unknown Exactness = iota
	// ExactFold: known but for the case of ASCII letters (of the value,
	// for Get; of the header names, for LastMatch).
	ExactFold
	// Exact: what Apache has.
	Exact
)

// Headers is a request's headers_in as mod_setenvif reads it
// (apache-access-semantics.md §7): the fields as the client sent them, in
// order, names as spelled, fields of the same name merged into the first
// (MergeFields), with Apache's own changes (a Host header replaced by
// an absolute-form target's host, Content-Length dropped beside
// Transfer-Encoding).
type Headers interface {
	// Get is apr_table_get: the value of the field named name, ASCII case
	// aside, and whether there is one.
	Get(name string) (value string, found bool, k Exactness)
	// LastMatch is the header-name regex walk of match_headers: the value
	// of the last field whose name, as spelled, matches re ("" and false
	// when none does). fold is re without regard to case, for views that
	// do not know the spelling.
	// A regex that does not finish makes it Unknown.
	LastMatch(re, fold *regex.Regexp) (value string, found bool, k Exactness)
}

// HeaderField is one field of headers_in.
type HeaderField struct {
	Name, Value string
}

// HeaderFields is headers_in exactly, in order (Headers).
type HeaderFields []HeaderField

// Get implements Headers.
func (fs HeaderFields) Get(name string) (string, bool, Exactness) {
	for _, f := range fs {
		if equalFoldASCII(f.Name, name) {
			return f.Value, true, Exact
		}
	}
	return "", false, Exact
}

// LastMatch implements Headers.
func (fs HeaderFields) LastMatch(re, _ *regex.Regexp) (string, bool, Exactness) {
	v, found := "", false
	for _, f := range fs {
		ok, err := re.MatchString(f.Name)
		if err != nil {
			return "", false, Unknown
		}
		if ok {
			v, found = f.Value, true
		}
	}
	return v, found, Exact
}

// MergeFields returns fields as Apache keeps them once read
// (ap_get_mime_headers_core: apr_table_compress with
// APR_OVERLAP_TABLES_MERGE): the fields of one name, ASCII case aside,
// become one, in the place and with the spelling of the first, their
// values joined by ", " in the order they came. fields is not changed; it
// is returned as it is when no name repeats.
func MergeFields(fields []HeaderField) HeaderFields {
	dup := false
	if len(fields) <= 32 {
		for i := 1; i < len(fields) && !dup; i++ {
			for j := 0; j < i; j++ {
				if equalFoldASCII(fields[i].Name, fields[j].Name) {
					dup = true
					break
				}
			}
		}
		if !dup {
			return fields
		}
	}
	out := make(HeaderFields, 0, len(fields))
	at := make(map[string]int, len(fields))
	var key []byte
	for _, f := range fields {
		key = key[:0]
		for i := 0; i < len(f.Name); i++ {
			key = append(key, lowerASCII(f.Name[i]))
		}
		if i, ok := at[string(key)]; ok {
			out[i].Value += ", " + f.Value
			continue
		}
		at[string(key)] = len(out)
		out = append(out, f)
	}
	return out
}

// HeaderMap is a header in Go's form as Headers: names in canonical
// spelling, with no order between them, so that a header-name regex is
// known only where at most one name can match and the regex is blind to
// case.
type HeaderMap http.Header

// Get implements Headers. Several values of one name are joined by ", ",
// as Apache merges them.
func (h HeaderMap) Get(name string) (string, bool, Exactness) {
	vs := http.Header(h).Values(name)
	switch len(vs) {
	case 0:
		return "", false, Exact
	case 1:
		return vs[0], true, Exact
	}
	return strings.Join(vs, ", "), true, Exact
}

// LastMatch implements Headers.
func (h HeaderMap) LastMatch(_, fold *regex.Regexp) (string, bool, Exactness) {
	n, name := 0, ""
	for k := range h {
		ok, err := fold.MatchString(k)
		if err != nil {
			return "", false, Unknown
		}
		if ok {
			n, name = n+1, k
		}
	}
	switch n {
	case 0:
		return "", false, Exact
	case 1:
		v, _, _ := h.Get(name)
		return v, true, ExactFold
	}
	return "", false, Unknown
}

// envValue is the value match_headers tests for b's attribute, and false
// when orderly cannot know it.
func envValue(b *EnvRule, in *EnvInput, env *policy.Env) (string, bool) {
	switch b.Attr {
	case AttrRemoteAddr:
		return in.RemoteAddr.Unmap().String(), true
	case AttrRemoteHost:
		if in.Names != nil {
			return in.Names.RemoteName(in.Lookups), true
		}
		return in.RemoteAddr.Unmap().String(), true
	case AttrServerAddr:
		return in.ServerAddr.Unmap().String(), true
	case AttrRequestMethod:
		return in.Method, true
	case AttrRequestProtocol:
		return in.Protocol, true
	case AttrRequestURI:
		return in.URI, true
	}
	h := in.Headers
	if h == nil {
		h = HeaderMap(in.Header)
	}
	if b.Attr == AttrHeaderRegex {
		v, _, k := h.LastMatch(b.NameRe, b.NameFold)
		return v, k == Exact || k == ExactFold && b.NameRe == b.NameFold
	}
	v, found, k := h.Get(b.Name)
	switch {
	case k == Unknown, k == ExactFold && !caseBlind(b):
		return "", false
	case found:
		return v, true
	}
	v, _ = env.Get(b.Name)
	return v, true
}

// caseBlind reports whether b's test gives the same answer whatever the
// ASCII case of the value: a NoCase pattern with no $N in its values.
func caseBlind(b *EnvRule) bool {
	if !b.ICase {
		return false
	}
	if b.Re != nil {
		for _, f := range b.Features {
			if strings.ContainsAny(f.Value, "$&") {
				return false
			}
		}
	}
	return true
}

// pregsub is ap_pregsub: "$0".."$9" and "&" name groups of the match,
// a backslash quotes the next character.
func pregsub(tmpl, src string, m []int) string {
	if !strings.ContainsAny(tmpl, "$&\\") {
		return tmpl
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		n := -1
		switch {
		case c == '&':
			n = 0
		case c == '$' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9':
			n = int(tmpl[i+1] - '0')
			i++
		case c == '\\' && i+1 < len(tmpl) && (tmpl[i+1] == '$' || tmpl[i+1] == '&'):
			i++
			b.WriteByte(tmpl[i])
			continue
		}
		if n < 0 {
			b.WriteByte(c)
			continue
		}
		if 2*n+1 < len(m) && m[2*n] >= 0 {
			b.WriteString(src[m[2*n]:m[2*n+1]])
		}
	}
	return b.String()
}

var headerNameRE = regexp.MustCompile(`^[-A-Za-z0-9_]*$`)

// nonRegexPattern is mod_setenvif's non_regex_pattern: the pattern as a
// plain string when it has no regex metacharacter (after backslash
// unescaping), or false.
func nonRegexPattern(s string) (string, bool) {
	inEscape, escapes := false, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '^', '.', '$', '|', '(', ')', '[', ']', '*', '+', '?', '{', '}':
			if !inEscape {
				return "", false
			}
			inEscape = false
		case '\\':
			if !inEscape {
				inEscape, escapes = true, true
			} else {
				inEscape = false
			}
		default:
			if inEscape {
				return "", false
			}
		}
	}
	if !escapes {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i >= len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

// WantsRaw reports whether Go's form of a request may not tell e's value
// as Apache has it: a regex over header names (their order and spelling),
// or a header Go's server takes out of Request.Header or changes
// (Transfer-Encoding's spelling, Trailer, the Cache-Control it adds
// beside "Pragma: no-cache").
func (e *EnvRule) WantsRaw() bool {
	switch {
	case e.Attr == AttrHeaderRegex:
		return true
	case e.Attr != AttrHeader:
		return false
	}
	return equalFoldASCII(e.Name, "Transfer-Encoding") || equalFoldASCII(e.Name, "Trailer") ||
		equalFoldASCII(e.Name, "Cache-Control")
}

// EnvWantsRaw reports whether a SetEnvIf rule of c (server-wide, in a
// section, or of a virtual host) WantsRaw. Rules of .htaccess files are
// not known here.
func (c *Config) EnvWantsRaw() bool {
	if envWantsRaw(c.ServerEnv) || envWantsRaw(c.Defaults.SetEnv) {
		return true
	}
	for _, list := range [][]*Section{c.Dirs, c.DirMatches, c.Files, c.Locations} {
		for _, s := range list {
			if SectionWantsRaw(s) {
				return true
			}
		}
	}
	for _, v := range c.VHosts {
		if v.Config.EnvWantsRaw() {
			return true
		}
	}
	return false
}

// SectionWantsRaw reports whether a SetEnvIf rule of s, or of a section
// nested in it, WantsRaw.
func SectionWantsRaw(s *Section) bool {
	if envWantsRaw(s.Conf.SetEnv) {
		return true
	}
	for _, f := range s.Conf.Files {
		if SectionWantsRaw(f) {
			return true
		}
	}
	return false
}

func envWantsRaw(rules []*EnvRule) bool {
	for _, r := range rules {
		if r.WantsRaw() {
			return true
		}
	}
	return false
}
