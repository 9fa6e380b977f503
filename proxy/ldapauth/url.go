package ldapauth

import (
	"fmt"
	"strconv"
	"strings"
)

// Scope is the scope of the user search. mod_authnz_ldap knows only two:
// a URL's "one" (or "onetree") is [ScopeOne], everything else, "base"
// included, is [ScopeSub] (mod_auth_ldap_parse_url).
type Scope int

const (
	ScopeSub Scope = iota // LDAP_SCOPE_SUBTREE (2 on the wire)
	ScopeOne              // LDAP_SCOPE_ONELEVEL (1 on the wire)
)

func (s Scope) String() string {
	if s == ScopeOne {
		return "one"
	}
	return "sub"
}

// Mode is the connection security: AuthLDAPURL's second argument, an
// ldaps:// URL, or LDAPTrustedMode (APR_LDAP_NONE, _SSL, _STARTTLS).
type Mode int

const (
	// ModeUnset: the URL said nothing, so LDAPTrustedMode decides
	// (Options.TrustedMode; NONE by default). It is mod_authnz_ldap's -1.
	ModeUnset Mode = iota
	ModeNone
	ModeSSL
	ModeSTARTTLS
)

func (m Mode) String() string {
	switch m {
	case ModeNone:
		return "NONE"
	case ModeSSL:
		return "SSL"
	case ModeSTARTTLS:
		return "STARTTLS"
	}
	return ""
}

// ParseMode reads a connection mode as AuthLDAPURL's second argument and
// LDAPTrustedMode read it (case-insensitive NONE, SSL, TLS, STARTTLS).
func ParseMode(s string) (Mode, bool) {
	switch {
	case strings.EqualFold(s, "NONE"):
		return ModeNone, true
	case strings.EqualFold(s, "SSL"):
		return ModeSSL, true
	case strings.EqualFold(s, "TLS"), strings.EqualFold(s, "STARTTLS"):
		return ModeSTARTTLS, true
	}
	return ModeUnset, false
}

// Default LDAP ports (LDAP_PORT, LDAPS_PORT).
const (
	PortLDAP  = 389
	PortLDAPS = 636
)

// A URL is an AuthLDAPURL as mod_authnz_ldap keeps it
// (mod_auth_ldap_parse_url over apr_ldap_url_parse).
type URL struct {
	// Raw is the URL as written: Apache's sec->url, and the key of the
	// mod_ldap caches (one set of caches per distinct URL string).
	Raw string
	// Scheme is "ldap", "ldaps" or "ldapi", as the parser recognised it
	// (after an optional "<" and "URL:").
	Scheme string
	// Host is the host part, hex-unescaped, with any ":port" still in it,
	// e.g. "ldap1 ldap2:3389" for several servers; "" if the URL has none
	// (Apache then uses "localhost", see [URL.Hosts]).
	Host string
	// Port is sec->port: the last ":port" of the host part (C atoi), or
	// 389, or 636 for a URL that starts with "ldaps". Only the host list
	// decides where connections go (see [URL.Hosts]).
	Port int
	// BaseDN is the search base ("" if none).
	BaseDN string
	// Attributes are the URL's attributes (nil if none): the first is the
	// one searched for, all are fetched and returned by Authenticate.
	Attributes []string
	// Attribute is the attribute searched for: Attributes[0] or "uid".
	Attribute string
	// Scope is the search scope.
	Scope Scope
	// Filter is the URL's filter without its outer parentheses (Apache
	// strips the first and last character of a filter that starts with
	// "("), "objectclass=*" when the URL has none. "none" (any case)
	// means no filter (2.4.10 and later).
	Filter string
	// Mode is the connection security the directive asks for: SSL for a
	// URL starting with "ldaps", else the second argument, else ModeUnset.
	Mode Mode
	// Extensions are the URL's extensions, which Apache ignores.
	Extensions []string
}

// Hosts returns the host list as mod_authnz_ldap hands it to the LDAP
// library: the host part, or "localhost" when the URL has none.
func (u *URL) Hosts() string {
	if u.Host == "" {
		return "localhost"
	}
	return u.Host
}

// ParseURL parses the arguments of an AuthLDAPURL directive, url and the
// optional connection mode extra ("" if absent), as mod_authnz_ldap's
// mod_auth_ldap_parse_url does with apr-util's apr_ldap_url_parse. The
// error is Apache's message for the directive.
func ParseURL(url, extra string) (*URL, error) {
	ud, reason := aprLDAPURLParse(url)
	if reason != "" {
		return nil, &URLError{URL: url, Reason: reason}
	}
	u := &URL{Raw: url, Scheme: ud.scheme, Host: ud.host, BaseDN: ud.dn, Extensions: ud.exts}
	if len(ud.attrs) > 0 {
		u.Attributes = ud.attrs
		u.Attribute = ud.attrs[0]
	} else {
		u.Attribute = "uid"
	}
	if ud.scope == ScopeOne {
		u.Scope = ScopeOne
	}
	switch {
	case !ud.hasFilter:
		u.Filter = "objectclass=*"
	case strings.HasPrefix(ud.filter, "("):
		if len(ud.filter) < 2 {
			// apr_pstrmemdup(p, f+1, strlen(f)-2) with a length of -1:
			// Apache 2.4 crashes while reading its configuration.
			return nil, &URLError{URL: url, Reason: `a filter of "(" makes Apache 2.4 crash while reading its configuration`}
		}
		u.Filter = ud.filter[1 : len(ud.filter)-1]
	default:
		u.Filter = ud.filter
	}
	if extra != "" {
		m, ok := ParseMode(extra)
		if !ok {
			return nil, &URLError{URL: url, Reason: "Invalid LDAP connection mode setting: must be one of NONE, SSL, or TLS/STARTTLS"}
		}
		u.Mode = m
	}
	if len(url) >= 5 && strings.EqualFold(url[:5], "ldaps") {
		u.Mode = ModeSSL
		u.Port = ud.port
		if u.Port == 0 {
			u.Port = PortLDAPS
		}
	} else {
		u.Port = ud.port
		if u.Port == 0 {
			u.Port = PortLDAP
		}
	}
	return u, nil
}

// A URLError is a refused AuthLDAPURL; Reason is Apache's message.
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string { return e.Reason }

// String returns a URL that ParseURL, with [URL.Extra] as second argument,
// reads back into the same fields (Raw aside). The host is always written
// in brackets with an explicit port.
func (u *URL) String() string {
	var b strings.Builder
	if u.Scheme == "ldaps" && u.Mode != ModeSSL {
		// Only a URL that starts with "ldaps" is made secure by its scheme.
		b.WriteString("URL:")
	}
	b.WriteString(u.Scheme)
	b.WriteString("://[")
	b.WriteString(urlEscape(u.Host, "%/?]"))
	b.WriteString("]:")
	b.WriteString(strconv.Itoa(u.Port))
	b.WriteString("/")
	b.WriteString(urlEscape(u.BaseDN, "%?"))
	b.WriteString("?")
	for i, a := range u.Attributes {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(urlEscape(a, "%?,"))
	}
	b.WriteString("?")
	b.WriteString(u.Scope.String())
	b.WriteString("?(")
	b.WriteString(urlEscape(u.Filter, "%?"))
	b.WriteString(")")
	if len(u.Extensions) > 0 {
		b.WriteString("?")
		for i, e := range u.Extensions {
			if i > 0 {
				b.WriteString(",")
			}
			if e == "" {
				// A lone "%" unescapes to nothing: an empty extension.
				b.WriteString("%")
			}
			b.WriteString(urlEscape(e, "%?,"))
		}
	}
	return b.String()
}

// Extra returns the second AuthLDAPURL argument that goes with
// [URL.String].
func (u *URL) Extra() string {
	if u.Mode == ModeSSL && u.Scheme == "ldaps" {
		return ""
	}
	return u.Mode.String()
}

func urlEscape(s, special string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte(special, c) >= 0 || c == 0 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ludesc is apr_ldap_url_desc_t, reduced to what mod_authnz_ldap reads.
type ludesc struct {
	scheme    string
	host      string // "" is lud_host == NULL
	port      int    // lud_port
	dn        string
	attrs     []string
	scope     Scope
	filter    string
	hasFilter bool
	exts      []string
}

// aprLDAPURLParse follows apr-util's apr_ldap_url_parse (ldap/apr_ldap_url.c,
// which derives from OpenLDAP's) step by step on a NUL-terminated byte
// buffer, since its in-place unescaping makes some later steps read bytes
// that earlier ones rewrote. It returns apr's reason on failure.
func aprLDAPURLParse(in string) (ludesc, string) {
	var ud ludesc
	// A C string ends at its first NUL.
	if i := strings.IndexByte(in, 0); i >= 0 {
		in = in[:i]
	}
	// skip_url_prefix
	p := in
	enclosed := false
	if strings.HasPrefix(p, "<") {
		enclosed = true
		p = p[1:]
	}
	if len(p) >= 4 && strings.EqualFold(p[:4], "URL:") {
		p = p[4:]
	}
	switch {
	case len(p) >= 7 && strings.EqualFold(p[:7], "ldap://"):
		ud.scheme, p = "ldap", p[7:]
	case len(p) >= 8 && strings.EqualFold(p[:8], "ldaps://"):
		ud.scheme, p = "ldaps", p[8:]
	case len(p) >= 8 && strings.EqualFold(p[:8], "ldapi://"):
		ud.scheme, p = "ldapi", p[8:]
	default:
		return ud, "The scheme was not recognised as a valid LDAP URL scheme."
	}
	buf := append([]byte(p), 0)
	if enclosed {
		n := cstrlen(buf, 0)
		// strlen(url)-1 of an empty string reads before the buffer; the
		// byte there is never '>' in practice.
		if n == 0 || buf[n-1] != '>' {
			return ud, "Bad enclosure error while parsing LDAP URL."
		}
		buf[n-1] = 0
	}
	ud.port = PortLDAP
	if ud.scheme == "ldaps" {
		ud.port = PortLDAPS
	}
	scope := -1
	// The '/' that ends host:port.
	slash := cindex(buf, 0, '/')
	if slash >= 0 {
		buf[slash] = 0
		slash++
	}
	url := 0
	q := -1
	if buf[url] == '[' {
		r := cindex(buf, url, ']')
		if r < 0 {
			return ud, "Bad LDAP URL while parsing IPV6 syntax."
		}
		buf[r] = 0
		r++
		q = crindex(buf, r, ':')
	} else {
		q = crindex(buf, url, ':')
	}
	if q >= 0 {
		q++
		hexUnescape(buf, q)
		if buf[q] == 0 {
			return ud, "Bad LDAP URL while parsing."
		}
		ud.port = catoi(cstr(buf, q))
	}
	hexUnescape(buf, url)
	if buf[url] == '[' {
		ud.host = cstr(buf, url+1)
	} else {
		ud.host = cstr(buf, url)
	}
	// The kludge for early Novell referrals, ldap://host:389??dn.
	if slash < 0 && q >= 0 {
		if k := cindex(buf, q, '?'); k >= 0 {
			k++
			if buf[k] == '?' {
				k++
				if buf[k] != 0 {
					hexUnescape(buf, k)
					ud.dn = cstr(buf, k)
				}
			}
		}
	}
	finish := func() (ludesc, string) {
		// apr_ldap_url_parse: no scope is base, an empty host is none.
		if scope == int(ldapScopeOne) {
			ud.scope = ScopeOne
		}
		return ud, ""
	}
	if slash < 0 {
		return finish()
	}
	// dn
	p0 := slash
	q = cutField(buf, p0)
	if buf[p0] != 0 {
		hexUnescape(buf, p0)
		ud.dn = cstr(buf, p0)
	} else {
		ud.dn = ""
	}
	if q < 0 {
		return finish()
	}
	// attributes
	p0 = q
	q = cutField(buf, p0)
	if buf[p0] != 0 {
		hexUnescape(buf, p0)
		ud.attrs = strtokAll(cstr(buf, p0), ",")
	}
	if q < 0 {
		return finish()
	}
	// scope
	p0 = q
	q = cutField(buf, p0)
	if buf[p0] != 0 {
		hexUnescape(buf, p0)
		scope = str2scope(cstr(buf, p0))
		if scope == -1 {
			return ud, "Bad scope encountered while parsing LDAP URL."
		}
	}
	if q < 0 {
		return finish()
	}
	// filter
	p0 = q
	q = cutField(buf, p0)
	if buf[p0] != 0 {
		hexUnescape(buf, p0)
		if buf[p0] == 0 {
			return ud, "Bad filter encountered while parsing LDAP URL."
		}
		ud.filter = cstr(buf, p0)
		ud.hasFilter = true
	}
	if q < 0 {
		return finish()
	}
	// extensions
	p0 = q
	if cindex(buf, p0, '?') >= 0 {
		return ud, "Bad URL encountered while parsing LDAP URL."
	}
	exts := strtokAll(cstr(buf, p0), ",")
	if len(exts) == 0 {
		return ud, "Bad extensions encountered while parsing LDAP URL."
	}
	for i, e := range exts {
		b := append([]byte(e), 0)
		hexUnescape(b, 0)
		exts[i] = cstr(b, 0)
	}
	ud.exts = exts
	return finish()
}

const (
	ldapScopeBase = 0
	ldapScopeOne  = 1
	ldapScopeSub  = 2
)

func str2scope(s string) int {
	switch {
	case strings.EqualFold(s, "one"), strings.EqualFold(s, "onetree"):
		return ldapScopeOne
	case strings.EqualFold(s, "base"):
		return ldapScopeBase
	case strings.EqualFold(s, "sub"), strings.EqualFold(s, "subtree"):
		return ldapScopeSub
	}
	return -1
}

// hexUnescape is apr_ldap_pvt_hex_unescape: %XY escapes undone in place,
// with C char arithmetic for non-hex digits, a dangling escape dropped.
func hexUnescape(buf []byte, s int) {
	p := s
	for ; buf[s] != 0; s++ {
		if buf[s] == '%' {
			s++
			if buf[s] == 0 {
				break
			}
			buf[p] = byte(unhex(buf[s]) << 4)
			s++
			if buf[s] == 0 {
				break
			}
			buf[p] += byte(unhex(buf[s]))
			p++
		} else {
			buf[p] = buf[s]
			p++
		}
	}
	buf[p] = 0
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c) - '0'
	case c >= 'A' && c <= 'F':
		return int(c) - 'A' + 10
	}
	return int(c) - 'a' + 10
}

func cstrlen(buf []byte, i int) int {
	n := 0
	for buf[i+n] != 0 {
		n++
	}
	return n
}

func cstr(buf []byte, i int) string { return string(buf[i : i+cstrlen(buf, i)]) }

// cindex is strchr on the C string at i: the index of c, or -1.
func cindex(buf []byte, i int, c byte) int {
	for ; buf[i] != 0; i++ {
		if buf[i] == c {
			return i
		}
	}
	return -1
}

// cutField ends the URL field at p0 at the next '?' (writing a NUL there,
// as apr_ldap_url_parse does) and returns where the next field starts, or
// -1 when this one is the last.
func cutField(buf []byte, p0 int) int {
	q := cindex(buf, p0, '?')
	if q >= 0 {
		buf[q] = 0
		q++
	}
	return q
}

// crindex is strrchr on the C string at i.
func crindex(buf []byte, i int, c byte) int {
	last := -1
	for ; buf[i] != 0; i++ {
		if buf[i] == c {
			last = i
		}
	}
	return last
}

// strtokAll splits s at any byte of sep, dropping empty tokens, as a loop
// of apr_strtok does.
func strtokAll(s, sep string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(sep, r) }) {
		out = append(out, f)
	}
	return out
}

// catoi is C's atoi on a 64-bit Linux: strtol (leading white space, a
// sign, decimal digits, saturating at the long range), then truncated to
// int.
func catoi(s string) int {
	return int(int32(cstrtol(s)))
}

// cstrtol is strtol(s, NULL, 10) with a 64-bit long.
func cstrtol(s string) int64 {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var v uint64
	over := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (1<<63)/10 || (v == (1<<63)/10 && d > (1<<63)%10) {
			over = true
		}
		if !over {
			v = v*10 + d
		}
	}
	if neg {
		if over || v > 1<<63 {
			return -1 << 63
		}
		return -int64(v)
	}
	if over || v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

// isCSpace is C's isspace in the C locale (apr_isspace).
func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
