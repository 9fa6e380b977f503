package translate

import (
	"maps"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
)

// EnvAttr is what a SetEnvIf rule tests (mod_setenvif special_type).
type EnvAttr uint8

// The attributes SetEnvIf can test.
const (
	AttrHeader      EnvAttr = iota // a request header, or the variable of that name when the header is absent
	AttrHeaderRegex                // the last header whose name matches a regex
	AttrRemoteAddr
	AttrRemoteHost // the address itself: HostnameLookups is Off
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
	Attr     EnvAttr
	Name     string         // attribute as written (header name)
	NameRe   *regexp.Regexp // AttrHeaderRegex
	Pattern  string         // as written
	ICase    bool
	Substr   string         // plain substring test when Re is nil
	Re       *regexp.Regexp // the pattern when it has regex metacharacters
	Features []Feature
	Rule     *policy.Rule
}

// EnvInput is what SetEnvIf reads of a request.
type EnvInput struct {
	Header     http.Header
	RemoteAddr netip.Addr
	ServerAddr netip.Addr
	Method     string
	Protocol   string
	URI        string
	Now        int64 // unix nanoseconds, for the rules' last-hit times
	Dry        bool  // evaluate without counting (policy.Request.Dry)
}

// ApplyEnv runs SetEnvIf rules over a request in order, as match_headers
// in mod_setenvif does: later rules see what earlier ones set.
func ApplyEnv(rules []*EnvRule, in *EnvInput, env *policy.Env) {
	var last *EnvRule
	var val string
	for _, b := range rules {
		if last == nil || !sameAttr(last, b) {
			val = envValue(b, in, env)
		}
		last = b
		var m []int
		matched := false
		if b.Re == nil {
			if b.ICase {
				matched = strings.Contains(strings.ToLower(val), strings.ToLower(b.Substr))
			} else {
				matched = strings.Contains(val, b.Substr)
			}
		} else {
			m = b.Re.FindStringSubmatchIndex(val)
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
}

func sameAttr(a, b *EnvRule) bool {
	return a.Attr == b.Attr && strings.EqualFold(a.Name, b.Name)
}

func envValue(b *EnvRule, in *EnvInput, env *policy.Env) string {
	switch b.Attr {
	case AttrRemoteAddr, AttrRemoteHost:
		return in.RemoteAddr.Unmap().String()
	case AttrServerAddr:
		return in.ServerAddr.Unmap().String()
	case AttrRequestMethod:
		return in.Method
	case AttrRequestProtocol:
		return in.Protocol
	case AttrRequestURI:
		return in.URI
	case AttrHeaderRegex:
		// The last matching header wins; Go keeps no order between
		// header names, so names are taken in sorted order.
		v := ""
		for _, name := range slices.Sorted(maps.Keys(in.Header)) {
			if b.NameRe.MatchString(name) {
				v = strings.Join(in.Header[name], ", ")
			}
		}
		return v
	}
	if vs := in.Header.Values(b.Name); len(vs) > 0 {
		if len(vs) == 1 {
			return vs[0]
		}
		return strings.Join(vs, ", ")
	}
	v, _ := env.Get(b.Name)
	return v
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
