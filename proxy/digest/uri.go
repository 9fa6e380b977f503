package digest

import (
	"fmt"
	"strings"
)

// opt is a C string that may be NULL.
type opt struct {
	s  string
	ok bool
}

func some(s string) opt { return opt{s, true} }

// nonEmpty is "p && p[0] != '\0'".
func (o opt) nonEmpty() bool { return o.ok && o.s != "" }

// aprURI holds the fields of apr_uri_t that mod_auth_digest reads.
type aprURI struct {
	scheme, hostinfo, hostname, portStr, path, query opt
	port                                             uint16 // apr_port_t
}

// Character classes of apr_uri.c's uri_delims table (ASCII).
func uriAlpha(c byte) bool  { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }
func uriScheme(c byte) bool { return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' }

// schemePorts is apr_uri_port_of_scheme's table.
var schemePorts = map[string]uint16{
	"http": 80, "ftp": 21, "https": 443, "gopher": 70, "ldap": 389,
	"nntp": 119, "snews": 563, "imap": 143, "pop": 110, "sip": 5060,
	"rtsp": 554, "wais": 210, "z39.50r": 210, "z39.50s": 210,
	"prospero": 191, "nfs": 2049, "tip": 3372, "acap": 674,
	"telnet": 23, "ssh": 22,
}

func portOfScheme(scheme opt) uint16 {
	if !scheme.ok {
		return 0
	}
	return schemePorts[strings.ToLower(scheme.s)]
}

// parseURI parses uri as apr_uri_parse of apr-util 1.6 does (the version
// Debian's httpd 2.4 links), keeping the fields mod_auth_digest reads. It
// fails (APR_EGENERAL) on an unclosed IPv6 literal, a port with something
// other than digits after it, and a relative reference without scheme
// whose first segment has a ':'.
func parseURI(uri string) (u aprURI, ok bool) {
	uri = cString(uri)
	var s int // index into uri

	pathFrom := func(start int) (aprURI, bool) {
		p := start
		for p < len(uri) && uri[p] != '?' && uri[p] != '#' {
			p++
		}
		if p != start {
			u.path = some(uri[start:p])
		}
		if p == len(uri) {
			return u, true
		}
		if uri[p] == '?' {
			rest := uri[p+1:]
			if h := strings.IndexByte(rest, '#'); h >= 0 {
				rest = rest[:h]
			}
			u.query = some(rest)
		}
		return u, true // otherwise a fragment
	}

	authority := func(start int) (aprURI, bool) {
		h := start
		for h < len(uri) && uri[h] != '/' && uri[h] != '?' && uri[h] != '#' {
			h++
		}
		end := h // whatever follows hostinfo is the start of the path
		hostinfo := uri[start:end]
		u.hostinfo = some(hostinfo)
		// The @ of user:password@host is the last one.
		if at := strings.LastIndexByte(hostinfo, '@'); at >= 0 {
			hostinfo = hostinfo[at+1:]
		}
		// hostinfo is now host[:port], up to end.
		var colon int
		v6 := 0
		if strings.HasPrefix(hostinfo, "[") {
			rb := strings.IndexByte(hostinfo, ']')
			if rb < 0 {
				return u, false
			}
			v6 = 1
			colon = rb + 1
			if colon >= len(hostinfo) || hostinfo[colon] != ':' {
				colon = -1
			}
		} else {
			colon = strings.IndexByte(hostinfo, ':')
		}
		if colon < 0 {
			u.hostname = some(hostinfo[v6 : len(hostinfo)-v6]) // without [ ]
			return pathFrom(end)
		}
		u.hostname = some(hostinfo[v6 : colon-v6])
		u.portStr = some(hostinfo[colon+1:])
		if u.portStr.s != "" {
			n, e, _ := strtol(u.portStr.s, 10)
			u.port = uint16(int32(n)) // long to int to apr_port_t
			if e != len(u.portStr.s) {
				return u, false
			}
			return pathFrom(end)
		}
		u.port = portOfScheme(u.scheme)
		return pathFrom(end)
	}

	if strings.HasPrefix(uri, "/") {
		// Two leading slashes (not three) start an authority.
		if len(uri) > 1 && uri[1] == '/' && (len(uri) == 2 || uri[2] != '/') {
			return authority(2)
		}
		return pathFrom(0)
	}

	// The scheme: a letter, then letters, digits, '+', '-', '.', then ':'.
	if len(uri) > 0 && uriAlpha(uri[0]) {
		s = 1
		for s < len(uri) && (uriAlpha(uri[s]) || uriScheme(uri[s])) {
			s++
		}
	}
	if s != 0 && s < len(uri) && uri[s] == ':' {
		u.scheme = some(uri[:s])
		s++
	} else {
		s = 0
	}

	if !strings.HasPrefix(uri[s:], "//") {
		if s == 0 {
			// No scheme and no authority: the first segment of a
			// relative path must not contain a ':' (RFC 3986 3.3).
			first := uri
			if sl := strings.IndexByte(uri, '/'); sl >= 0 {
				first = uri[:sl]
			}
			if strings.Contains(first, ":") {
				return u, false
			}
		}
		return pathFrom(s)
	}
	return authority(s + 2)
}

// uriCheck compares the uri parameter with the request as
// authenticate_digest_user does. It returns "" if they match, or the log
// code and message of the 400 Apache answers: AH01783 (the uri parameter
// does not parse), AH01785 (CONNECT) or AH01786. hack reports that
// AuthDigestEnableQueryStringHack was applied (Apache logs AH01784).
//
// The simple case is an exact match with the request-target as sent.
// Otherwise (a proxy may have rewritten the request-target) both are
// parsed and compared component by component, each unescaped as
// ap_unescape_url does (so the request's path, already normalised and
// unescaped by httpd, is unescaped a second time): the host, if the uri
// has one, without regard to case, and then the port must be the
// request's, given or the default one; the path exactly (a uri "*"
// matches an absolute-form request without a path); and the query
// exactly. With AuthDigestEnableQueryStringHack, a uri without a query
// matches a request with one (for old MSIE).
func uriCheck(uriParam string, req *Request) (code, msg string, hack bool) {
	raw := req.URI
	if uriParam == raw {
		return "", "", false
	}
	// r->parsed_uri: ap_parse_uri skips leading double slashes.
	target := raw
	for strings.HasPrefix(target, "//") {
		target = target[1:]
	}
	isConnect := req.Method == "CONNECT"
	var src aprURI
	if isConnect {
		src = aprURI{hostinfo: some(target)}
	} else {
		src, _ = parseURI(target)
	}

	// copy_uri_components
	var r aprURI
	r.hostinfo = src.hostinfo
	if src.hostname.nonEmpty() {
		r.hostname = some(unescapeURL(src.hostname.s))
	} else {
		r.hostname = some(req.ServerName)
	}
	if src.portStr.nonEmpty() {
		r.port = src.port
	} else {
		r.port = uint16(req.ServerPort)
	}
	switch {
	case src.path.nonEmpty() && req.Path != "":
		r.path = some(unescapeURL(req.Path))
	case src.path.nonEmpty():
		r.path = some(unescapeURL(src.path.s))
	default:
		r.path = src.path
	}
	if src.query.nonEmpty() {
		r.query = some(unescapeURL(src.query.s))
	} else {
		r.query = src.query
	}

	d, ok := parseURI(uriParam)
	if !ok {
		return "AH01783", fmt.Sprintf("invalid uri <%s> in Authorization header", cString(uriParam)), false
	}
	if d.hostname.ok {
		d.hostname.s = unescapeURL(d.hostname.s)
	}
	if d.path.ok {
		d.path.s = unescapeURL(d.path.s)
	}
	if d.query.ok {
		d.query.s = unescapeURL(d.query.s)
	} else if r.query.ok && req.QueryStringHack {
		d.query, hack = r.query, true
	}

	if isConnect {
		if !r.hostinfo.ok || cString(uriParam) != r.hostinfo.s {
			return "AH01785", fmt.Sprintf("uri mismatch - <%s> does not match request-uri <%s>", cString(uriParam), r.hostinfo.s), hack
		}
		return "", "", hack
	}
	defaultPort := req.DefaultPort
	if defaultPort == 0 {
		defaultPort = 80
	}
	mismatch :=
		// the host, if given
		(d.hostname.nonEmpty() && !equalFoldASCII(d.hostname.s, r.hostname.s)) ||
			// the port, if given
			(d.portStr.ok && d.port != r.port) ||
			// no port given: the request's must be the default
			(d.hostname.nonEmpty() && !d.portStr.ok && r.port != uint16(defaultPort)) ||
			// the path: both absent, equal, or "*" for an absolute-form
			// request without a path
			((d.path.ok || r.path.ok) &&
				(!d.path.ok || !r.path.ok || d.path.s != r.path.s) &&
				!(d.path.ok && !r.path.ok && src.hostname.ok && d.path.s == "*")) ||
			// the query: both absent or equal
			((d.query.ok || r.query.ok) &&
				(!d.query.ok || !r.query.ok || d.query.s != r.query.s))
	if mismatch {
		return "AH01786", fmt.Sprintf("uri mismatch - <%s> does not match request-uri <%s>", cString(uriParam), raw), hack
	}
	return "", "", hack
}
