package translate

import (
	"math"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// The directives that limit a request, read as Apache reads them: core's
// request limits (server/core.c set_limit_req_*, set_limit_req_body,
// set_http_protocol_options, StrictHostCheck) and LimitXMLRequestBody.
// The walk (translate/walk/limits.go) applies them at Apache's phases,
// and the proxy bounds the request line, the header fields and the body
// (proxy/limits_head.go, proxy/limits_body.go). The redirects are in
// redirect.go.

// ServerLimits are the settings of one server (the main server or a
// <VirtualHost>) that Apache keeps in its server_rec and core server
// configuration: what it reads the request with, before the host is
// chosen by name, and its server-level redirects.
type ServerLimits struct {
	// RequestLine, FieldSize and Fields are LimitRequestLine,
	// LimitRequestFieldSize and LimitRequestFields. A virtual host takes
	// the main server's values as they are when its <VirtualHost> is read
	// (ap_init_virtual_host), not as they end: a later setting of the
	// main server does not reach it.
	RequestLine, FieldSize, Fields int
	// Protocol is HttpProtocolOptions, each group unset or set.
	Protocol ProtocolOptions
	// StrictHostCheck is -1 unset, 0 Off, 1 On (2.4.49).
	StrictHostCheck int8
	// Name, Scheme and Port are ServerName's parts (server_hostname,
	// server_scheme, port): the host is lower case, Port is 0 without one.
	Name, Scheme string
	Port         int
}

// DefaultServerLimits are Apache's defaults (include/httpd.h).
var DefaultServerLimits = ServerLimits{RequestLine: 8190, FieldSize: 8190, Fields: 100, StrictHostCheck: -1}

// ProtocolOptions is HttpProtocolOptions (2.2.32, 2.4.24): three pairs
// of flags, each pair unset or one of its two.
type ProtocolOptions struct {
	Conformance int8 // 0 unset, 1 Strict, 2 Unsafe
	Methods     int8 // 0 unset, 1 RegisteredMethods, 2 LenientMethods
	HTTP09      int8 // 0 unset, 1 Allow0.9, 2 Require1.0
}

// Strict reports whether requests are read under Strict (the default).
func (p ProtocolOptions) Strict() bool { return p.Conformance != 2 }

// Registered reports whether an unregistered method is refused (501).
func (p ProtocolOptions) Registered() bool { return p.Methods == 1 }

// DirLimits are what one section sets of core's per-directory
// configuration that limits a request. Nil in DirConf is a section that
// sets none of it.
type DirLimits struct {
	// Body is LimitRequestBody, -1 unset; 0 is no limit.
	Body int64
}

// newServerLimits are a server's limits before any directive.
func newServerLimits() ServerLimits { return DefaultServerLimits }

// forHost returns the limits a <VirtualHost> starts with where it is read:
// the main server's request limits and port as they are now, nothing
// else (ap_init_virtual_host copies limit_req_* and port).
func (l ServerLimits) forHost() ServerLimits {
	h := DefaultServerLimits
	h.RequestLine, h.FieldSize, h.Fields, h.Port = l.RequestLine, l.FieldSize, l.Fields, l.Port
	return h
}

// mergeServerLimits is a virtual host's limits: its own (its request
// limits already hold what it inherited), the main server's HttpProtocol
// Options and StrictHostCheck where it set none (merge_core_server_configs).
func mergeServerLimits(main, own ServerLimits) ServerLimits {
	c := own
	if c.Protocol.Conformance == 0 {
		c.Protocol.Conformance = main.Protocol.Conformance
	}
	if c.Protocol.Methods == 0 {
		c.Protocol.Methods = main.Protocol.Methods
	}
	if c.Protocol.HTTP09 == 0 {
		c.Protocol.HTTP09 = main.Protocol.HTTP09
	}
	if c.StrictHostCheck < 0 {
		c.StrictHostCheck = main.StrictHostCheck
	}
	// ServerName's scheme is not inherited: ap_init_virtual_host starts a
	// host with none (server_scheme NULL), and nothing copies the main
	// server's (TestMergeServerLimits).
	return c
}

// MergeDirLimits merges what a section sets over what it inherits, as
// merge_core_dir_configs does. Either may be nil.
func MergeDirLimits(base, add *DirLimits) *DirLimits {
	if add == nil || add.Body < 0 {
		return base
	}
	return add
}

func (b *builder) dirLimits(c *DirConf) *DirLimits {
	if c.Limits == nil {
		c.Limits = &DirLimits{Body: -1}
	}
	return c.Limits
}

// limits reads one of the directives of this file: in a section (ctx set)
// or at the top level of a server (ctx nil).
func (b *builder) limits(d *apacheconf.Directive, ctx *dirCtx) {
	name := d.LowerName()
	conf := b.cfg.Defaults
	if ctx != nil {
		conf = ctx.conf
	}
	one := func(what string) (string, bool) {
		if len(d.Args) != 1 {
			b.errorf(d, "%s takes one argument, %s", d.Name, what)
			return "", false
		}
		return d.Args[0], true
	}
	sl := &b.cfg.Limits
	switch name {
	case "limitrequestbody":
		arg, ok := one("Limit (in bytes) on maximum size of request message body")
		if !ok {
			return
		}
		n, err := strtoff(arg)
		switch {
		case err:
			b.errorf(d, "LimitRequestBody argument is not parsable.")
		case n < 0:
			b.errorf(d, "LimitRequestBody requires a non-negative integer.")
		default:
			b.dirLimits(conf).Body = n
		}
	case "limitxmlrequestbody":
		if _, ok := one("Limit (in bytes) on maximum size of an XML-based request body"); !ok {
			return
		}
		if n := atoi(d.Args[0]); n < 0 {
			b.errorf(d, "LimitXMLRequestBody requires a non-negative integer.")
			return
		}
		// Only mod_dav's handler reads an XML body
		// (ap_xml_parse_input): without it the limit refuses nothing.
		mods := b.opt.Modules
		if b.htaccess != nil {
			mods = b.htaccess.modules
		}
		if mods["dav_module"] {
			b.notFaithful(d, "it limits the XML bodies mod_dav's handler reads, which orderly does not evaluate")
		}
	case "limitrequestline", "limitrequestfieldsize", "limitrequestfields":
		arg, ok := one(map[string]string{
			"limitrequestline":      "Limit on maximum size of an HTTP request line",
			"limitrequestfieldsize": "Limit on maximum size of an HTTP request header field",
			"limitrequestfields":    "Limit (0 = unlimited) on max number of header fields in a request message",
		}[name])
		if !ok {
			return
		}
		n := atoi(arg)
		if n < 0 {
			suffix := ""
			if name == "limitrequestfields" {
				suffix = " (0 = no limit)"
			}
			b.errorf(d, "%s \"%s\" must be a non-negative integer%s", map[string]string{
				"limitrequestline": "LimitRequestLine", "limitrequestfieldsize": "LimitRequestFieldsize", "limitrequestfields": "LimitRequestFields",
			}[name], arg, suffix)
			return
		}
		switch name {
		case "limitrequestline":
			sl.RequestLine = n
		case "limitrequestfieldsize":
			sl.FieldSize = n
		default:
			sl.Fields = n
		}
	case "httpprotocoloptions":
		b.protocolOptions(d, &sl.Protocol)
	case "stricthostcheck":
		arg, ok := one("Controls whether a hostname match is required")
		if !ok {
			return
		}
		switch strings.ToLower(arg) {
		case "on":
			sl.StrictHostCheck = 1
			b.strictHost = d
		case "off":
			sl.StrictHostCheck = 0
		default:
			b.errorf(d, "StrictHostCheck must be On or Off")
		}
	}
}

// serverName reads ServerName's scheme and port (server_hostname_port).
func (b *builder) serverName(d *apacheconf.Directive) {
	if len(d.Args) != 1 {
		return
	}
	arg := d.Args[0]
	sl := &b.cfg.Limits
	part := arg
	if i := strings.Index(arg, "://"); i >= 0 {
		sl.Scheme, part = toLower(arg[:i]), arg[i+3:]
	}
	sl.Port = 0
	if i := strings.IndexByte(part, ':'); i >= 0 {
		port := atoi(part[i+1:])
		if port <= 0 || port >= 65536 {
			b.errorf(d, "The port number \"%s\" is outside the appropriate range (i.e., 1..65535).", arg)
			return
		}
		part, sl.Port = part[:i], port
	}
	sl.Name = toLower(part)
}

// protocolOptions is set_http_protocol_options: the words of every
// HttpProtocolOptions line of a server add to its flags, and a pair set
// both ways is an error.
func (b *builder) protocolOptions(d *apacheconf.Directive, p *ProtocolOptions) {
	if len(d.Args) == 0 {
		b.errorf(d, "HttpProtocolOptions requires at least one argument, 'Allow0.9' or 'Require1.0'")
		return
	}
	set := func(slot *int8, v int8, pair string) bool {
		if *slot != 0 && *slot != v {
			b.errorf(d, "HttpProtocolOptions %s are mutually exclusive", pair)
			return false
		}
		*slot = v
		return true
	}
	for _, a := range d.Args {
		ok := true
		switch strings.ToLower(a) {
		case "allow0.9":
			ok = set(&p.HTTP09, 1, "'Allow0.9' and 'Require1.0'")
		case "require1.0":
			ok = set(&p.HTTP09, 2, "'Allow0.9' and 'Require1.0'")
		case "strict":
			ok = set(&p.Conformance, 1, "'Strict' and 'Unsafe'")
		case "unsafe":
			ok = set(&p.Conformance, 2, "'Strict' and 'Unsafe'")
			if ok {
				b.notFaithful(d, "HttpProtocolOptions Unsafe lets Apache read request lines and header fields (extra whitespace, lower-case protocols, bare LF line ends, control characters) that Go's HTTP server refuses with 400 before orderly sees them")
			}
		case "registeredmethods":
			ok = set(&p.Methods, 1, "'RegisteredMethods' and 'LenientMethods'")
		case "lenientmethods":
			ok = set(&p.Methods, 2, "'RegisteredMethods' and 'LenientMethods'")
		default:
			b.errorf(d, "HttpProtocolOptions accepts 'Unsafe' or 'Strict' (default), 'RegisteredMethods' or 'LenientMethods' (default), and 'Require1.0' or 'Allow0.9' (default)")
			ok = false
		}
		if !ok {
			return
		}
	}
}

// atoi is C's atoi: leading white space, a sign, digits, anything after
// ignored, 0 when there are none; clamped where C overflows.
func atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < math.MaxInt32/10 {
			n = n*10 + int(s[i]-'0')
		} else {
			n = math.MaxInt32
		}
	}
	if neg {
		return -n
	}
	return n
}

// strtoff is apr_strtoff in base 10 as set_limit_req_body reads it: err
// when the number overflows (ERANGE); -1 for text after the number, which
// Apache refuses as it refuses a negative one. An empty argument is 0.
func strtoff(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" {
		return 0, false
	}
	end := 0
	if t[0] == '+' || t[0] == '-' {
		end = 1
	}
	for end < len(t) && t[end] >= '0' && t[end] <= '9' {
		end++
	}
	digits := t[:end]
	if digits == "" || digits == "+" || digits == "-" {
		return -1, false // strtoll read nothing: endptr is the argument
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, true
	}
	if end < len(t) {
		return -1, false
	}
	return n, false
}

// checkStrictHost refuses StrictHostCheck On where a server it covers
// would be matched by the main server's name and the configuration sets
// none: Apache then compares the Host header with the name it derives
// from its machine's host name (ap_get_local_host), which orderly cannot
// know (vhost.c update_server_from_aliases: the main server where no
// virtual host serves the address, a virtual host's with no ServerName of
// its own).
func (b *builder) checkStrictHost() {
	if b.cfg.Limits.Name != "" {
		return
	}
	d := b.strictHost
	nameless := len(b.main.vhosts) == 0
	for _, vb := range b.main.vhosts {
		if vb.vhost.Name == "" {
			nameless = true
			if d == nil {
				d = vb.strictHost
			}
		}
	}
	if d != nil && nameless {
		b.notFaithful(d, "StrictHostCheck On with no ServerName: Apache compares the Host header with the name it derives from its machine's host name, which orderly cannot know; set ServerName")
	}
}
