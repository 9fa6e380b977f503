package translate

import (
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// mod_ssl's access directives as Apache keeps and merges them
// (modules/ssl/ssl_engine_config.c in 2.2.34 and the 2.4.x branch:
// ssl_config_perdir_create/merge, ssl_cmd_SSLRequireSSL, SSLVerifyClient,
// SSLVerifyDepth, SSLCACertificateFile/Path, SSLOptions, SSLUserName,
// SSLEngine). What they do to a request is evaluated in package walk
// (walk/ssl.go) from the connection's TLS facts, and in policy
// (policy/ssl.go) at the hook where Apache runs them.

// SSLVerify is an SSLVerifyClient level (ssl_verify_t); the zero value
// is unset (SSL_CVERIFY_UNSET).
type SSLVerify uint8

// The SSLVerifyClient levels.
const (
	VerifyUnset SSLVerify = iota
	VerifyNone
	VerifyOptional
	VerifyRequire
	VerifyOptionalNoCA
)

var verifyNames = [...]string{"unset", "none", "optional", "require", "optional_no_ca"}

func (v SSLVerify) String() string { return verifyNames[v] }

// Peer reports whether the level asks the client for a certificate
// (SSL_VERIFY_PEER), Strict whether it refuses a client without one
// (SSL_VERIFY_FAIL_IF_NO_PEER_CERT).
func (v SSLVerify) Peer() bool {
	return v == VerifyOptional || v == VerifyOptionalNoCA || v == VerifyRequire
}
func (v SSLVerify) Strict() bool { return v == VerifyRequire }

// SSLOptionBits are SSLOptions' ssl_opt_t bits.
type SSLOptionBits uint8

// The SSLOptions bits.
const (
	SSLStdEnvVars SSLOptionBits = 1 << iota
	SSLExportCertData
	SSLFakeBasicAuth
	SSLStrictRequire
	SSLOptRenegotiate
	SSLLegacyDNFormat // 2.4 only: LegacyDNStringFormat
)

// SSLOptions are a section's nOptions, nOptionsAdd and nOptionsDel. Abs
// is an SSLOptions line with a word without + or -, which sets the
// options outright (SSL_OPT_RELSET cleared); otherwise they merge over
// what the section inherits.
type SSLOptions struct {
	Opts, Add, Del SSLOptionBits
	Abs            bool
}

// SSLDir is mod_ssl's per-directory configuration (SSLDirConfigRec) as
// far as access goes. A section has one only where it holds a mod_ssl
// directive; the server's defaults (Config.Defaults) have one where the
// server level sets SSLOptions or SSLUserName.
type SSLDir struct {
	// Required is SSLRequireSSL; once set, no section below clears it.
	Required     bool
	RequiredRule *policy.Rule
	Options      SSLOptions
	OptionsRule  *policy.Rule
	Verify       SSLVerify // VerifyUnset inherits
	VerifyRule   *policy.Rule
	Depth        int // -1 inherits
	// UserName is SSLUserName's variable ("" inherits).
	UserName     string
	UserNameVar  SSLVar
	UserNameRule *policy.Rule
}

func newSSLDir() *SSLDir { return &SSLDir{Depth: -1} }

// MergeSSLDir is ssl_config_perdir_merge: add (a section's) over base
// (what it inherits). Either may be nil.
func MergeSSLDir(base, add *SSLDir) *SSLDir {
	if add == nil {
		return base
	}
	if base == nil {
		return add
	}
	m := *add
	if !add.Required {
		m.Required, m.RequiredRule = base.Required, base.RequiredRule
	}
	if !add.Options.Abs {
		m.Options.Add = base.Options.Add&^add.Options.Del | add.Options.Add
		m.Options.Del = base.Options.Del&^add.Options.Add | add.Options.Del
		m.Options.Opts = base.Options.Opts&^m.Options.Del | m.Options.Add
		m.Options.Abs = base.Options.Abs
		if m.OptionsRule == nil {
			m.OptionsRule = base.OptionsRule
		}
	}
	if add.Verify == VerifyUnset {
		m.Verify, m.VerifyRule = base.Verify, base.VerifyRule
	}
	if add.Depth < 0 {
		m.Depth = base.Depth
	}
	if add.UserName == "" {
		m.UserName, m.UserNameVar, m.UserNameRule = base.UserName, base.UserNameVar, base.UserNameRule
	}
	return &m
}

// SSLEngineMode is SSLEngine (0: not set, off).
type SSLEngineMode uint8

// The SSLEngine values.
const (
	SSLEngineUnset SSLEngineMode = iota
	SSLEngineOn
	SSLEngineOff
	SSLEngineOptional
)

// SSLServer is mod_ssl's server configuration as far as access goes
// (SSLSrvConfigRec: enabled, server->auth), merged for a virtual host
// over the main server's (ssl_config_server_merge).
type SSLServer struct {
	Engine     SSLEngineMode
	Verify     SSLVerify // VerifyUnset: none
	VerifyRule *policy.Rule
	Depth      int // -1: unset (1)
	// CAFile and CAPath are SSLCACertificateFile and
	// SSLCACertificatePath, as the configuration names them (resolved
	// against ServerRoot); CARule the directive that set the last.
	CAFile, CAPath string
	CARule         *policy.Rule
}

// VerifyDepth is the server's SSLVerifyDepth: 1 when not set
// (ssl_init_ctx_verify).
func (s *SSLServer) VerifyDepth() int {
	if s == nil || s.Depth < 0 {
		return 1
	}
	return s.Depth
}

// sslServer is the builder's server configuration of mod_ssl, made on
// first use.
func (b *builder) sslServer() *SSLServer {
	if b.cfg.SSL == nil {
		b.cfg.SSL = &SSLServer{Depth: -1}
	}
	return b.cfg.SSL
}

// ssl handles a mod_ssl directive that bears on access. conf is the
// per-directory configuration of the section it is in (the server's
// defaults at the top level, top).
func (b *builder) ssl(d *apacheconf.Directive, name string, conf *DirConf, scope []string, top bool) {
	dir := func() *SSLDir {
		if conf.SSL == nil {
			conf.SSL = newSSLDir()
		}
		return conf.SSL
	}
	arg := ""
	if len(d.Args) > 0 {
		arg = d.Args[0]
	}
	switch name {
	case "sslrequiressl":
		if len(d.Args) != 0 {
			b.errorf(d, "SSLRequireSSL takes no arguments")
			return
		}
		s := dir()
		s.Required, s.RequiredRule = true, b.rule(d, scope)
	case "sslverifyclient":
		if len(d.Args) != 1 {
			b.errorf(d, "SSLVerifyClient takes one argument, %s", sslVerifyHelp)
			return
		}
		v, ok := parseVerify(arg)
		if !ok {
			b.errorf(d, "SSLVerifyClient: Invalid argument '%s'", arg)
			return
		}
		r := b.rule(d, scope)
		if top {
			s := b.sslServer()
			s.Verify, s.VerifyRule = v, r
			return
		}
		s := dir()
		s.Verify, s.VerifyRule = v, r
	case "sslverifydepth":
		if len(d.Args) != 1 {
			b.errorf(d, "SSLVerifyDepth takes one argument, Set the SSL Client verification depth ('N' - number of intermediate certificates)")
			return
		}
		n := sslAtoi(arg)
		if n < 0 {
			b.errorf(d, "SSLVerifyDepth: Invalid argument '%s'", arg)
			return
		}
		b.rule(d, scope)
		if top {
			b.sslServer().Depth = n
			return
		}
		dir().Depth = n
	case "sslcacertificatefile", "sslcacertificatepath":
		if len(d.Args) != 1 {
			b.errorf(d, "%s takes one argument", d.Name)
			return
		}
		if !top && b.cfg.Semantics != Legacy22 {
			// 2.4: cmd->path is set in a section and an .htaccess file.
			b.errorf(d, "Your SSL library does not have support for per-directory CA")
			return
		}
		if b.htaccess != nil {
			// 2.2 in an .htaccess file: it sets the server's string long
			// after the server's CA list was loaded; nothing changes.
			return
		}
		// The server level, and 2.2's sections, where it sets the
		// server's CA list ("XXX: bring back per-dir").
		s := b.sslServer()
		p := b.resolve(arg)
		if name == "sslcacertificatefile" {
			s.CAFile = p
		} else {
			s.CAPath = p
		}
		s.CARule = b.rule(d, scope)
	case "ssloptions":
		s := dir()
		if err := s.Options.apply(d.Args, b.cfg.Semantics); err != "" {
			b.errorf(d, "%s", err)
			return
		}
		s.OptionsRule = b.rule(d, scope)
	case "sslusername":
		if len(d.Args) != 1 {
			b.errorf(d, "SSLUserName takes one argument, Set user name to SSL variable value")
			return
		}
		v, why := ParseSSLVar(arg, b.cfg.Semantics)
		if why != "" {
			b.notFaithful(d, why)
			return
		}
		s := dir()
		s.UserName, s.UserNameVar, s.UserNameRule = arg, v, b.rule(d, scope)
	case "sslengine":
		if len(d.Args) != 1 {
			b.errorf(d, "SSLEngine takes one argument, SSL switch for the protocol engine ('on', 'off')")
			return
		}
		s := b.sslServer()
		switch strings.ToLower(arg) {
		case "on":
			s.Engine = SSLEngineOn
		case "off":
			s.Engine = SSLEngineOff
		case "optional":
			if b.cfg.Semantics == Legacy22 {
				b.errorf(d, "Argument must be On, Off, or Optional")
				return
			}
			// RFC 2817: SSLRequireSSL answers 426 with Upgrade headers,
			// and a plain request may turn into TLS.
			b.notFaithful(d, "SSLEngine optional upgrades plain connections to TLS (RFC 2817) and answers SSLRequireSSL with 426; orderly does not upgrade connections")
		default:
			b.errorf(d, "Argument must be On, Off, or Optional")
		}
	}
}

const sslVerifyHelp = "Set the SSL Client verification type ('none', 'optional', 'require', 'optional_no_ca')"

// parseVerify is ssl_cmd_verify_parse (case-insensitive).
func parseVerify(s string) (SSLVerify, bool) {
	switch strings.ToLower(s) {
	case "none", "off":
		return VerifyNone, true
	case "optional":
		return VerifyOptional, true
	case "require", "on":
		return VerifyRequire, true
	case "optional_no_ca":
		return VerifyOptionalNoCA, true
	}
	return VerifyUnset, false
}

// sslAtoi is C's atoi: leading blanks, a sign, digits, the rest ignored.
func sslAtoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<30; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

// apply is ssl_cmd_SSLOptions: each word, with + or - or neither, as
// Apache reads it (a plain word sets the options to itself alone, so
// "SSLOptions StdEnvVars FakeBasicAuth" leaves only FakeBasicAuth).
func (o *SSLOptions) apply(words []string, sem Semantics) string {
	first := true
	for _, w := range words {
		action := byte(0)
		if w != "" && (w[0] == '+' || w[0] == '-') {
			action, w = w[0], w[1:]
		} else if first {
			o.Opts, o.Abs, first = 0, true, false
		}
		var opt SSLOptionBits
		switch strings.ToLower(w) {
		case "stdenvvars":
			opt = SSLStdEnvVars
		case "exportcertdata":
			opt = SSLExportCertData
		case "fakebasicauth":
			opt = SSLFakeBasicAuth
		case "strictrequire":
			opt = SSLStrictRequire
		case "optrenegotiate":
			opt = SSLOptRenegotiate
		case "legacydnstringformat":
			if sem != Legacy22 {
				opt = SSLLegacyDNFormat
				break
			}
			fallthrough
		default:
			return "SSLOptions: Illegal option '" + w + "'"
		}
		switch action {
		case '-':
			o.Add &^= opt
			o.Del |= opt
			o.Opts &^= opt
		case '+':
			o.Add |= opt
			o.Del &^= opt
			o.Opts |= opt
		default:
			o.Opts, o.Add, o.Del = opt, opt, 0
		}
	}
	return ""
}

// SSLVarKind is what an SSL variable names.
type SSLVarKind uint8

// The variables orderly knows (modules/ssl/ssl_engine_vars.c).
const (
	SSLVarDN       SSLVarKind = iota + 1 // SSL_CLIENT_S_DN, SSL_CLIENT_I_DN
	SSLVarDNAttr                         // SSL_CLIENT_S_DN_CN[_n], ...
	SSLVarSerial                         // SSL_CLIENT_M_SERIAL
	SSLVarVersion                        // SSL_CLIENT_M_VERSION
	SSLVarVerify                         // SSL_CLIENT_VERIFY
	SSLVarSANEmail                       // SSL_CLIENT_SAN_Email_n (2.4)
	SSLVarSANDNS                         // SSL_CLIENT_SAN_DNS_n (2.4)
)

// SSLVar is an SSL variable of the client certificate, parsed as
// ssl_var_lookup reads its name.
type SSLVar struct {
	Kind   SSLVarKind
	Issuer bool   // I_DN rather than S_DN
	Attr   string // the DN attribute's name in mod_ssl's table ("CN", "Email", ...)
	Index  int    // the _n suffix
}

// sslDNAttrs are ssl_var_lookup_ssl_cert_dn_rec's names and the OIDs of
// their NIDs.
var sslDNAttrs = map[string]string{
	"C": "2.5.4.6", "ST": "2.5.4.8", "SP": "2.5.4.8", "L": "2.5.4.7", "O": "2.5.4.10",
	"OU": "2.5.4.11", "CN": "2.5.4.3", "T": "2.5.4.12", "I": "2.5.4.43", "G": "2.5.4.42",
	"S": "2.5.4.4", "D": "2.5.4.13", "UID": "0.9.2342.19200300.100.1.1", "Email": "1.2.840.113549.1.9.1",
}

// SSLDNAttrOID is the OID of a DN attribute name of mod_ssl's table.
func SSLDNAttrOID(name string) string { return sslDNAttrs[name] }

// ParseSSLVar reads an SSLUserName variable. why says, for one orderly
// does not know, what it is.
func ParseSSLVar(name string, sem Semantics) (SSLVar, string) {
	unknown := "SSLUserName " + name + ": orderly knows the client certificate's SSL_CLIENT_S_DN, SSL_CLIENT_I_DN, their _CN, _O, _OU, ... attributes, SSL_CLIENT_M_SERIAL, SSL_CLIENT_M_VERSION, SSL_CLIENT_VERIFY and (2.4) SSL_CLIENT_SAN_Email_n and SSL_CLIENT_SAN_DNS_n, and cannot know this variable as Apache has it"
	if len(name) <= 11 || !strings.EqualFold(name[:11], "SSL_CLIENT_") {
		return SSLVar{}, unknown
	}
	v := name[11:]
	switch {
	case strings.EqualFold(v, "VERIFY"):
		return SSLVar{Kind: SSLVarVerify}, ""
	case strings.EqualFold(v, "M_SERIAL"):
		return SSLVar{Kind: SSLVarSerial}, ""
	case strings.EqualFold(v, "M_VERSION"):
		return SSLVar{Kind: SSLVarVersion}, ""
	case len(v) == 4 && (v[0] == 'S' || v[0] == 'I') && strings.EqualFold(v[1:], "_DN"):
		return SSLVar{Kind: SSLVarDN, Issuer: v[0] == 'I'}, ""
	case len(v) > 5 && (v[0] == 'S' || v[0] == 'I') && strings.EqualFold(v[1:5], "_DN_"):
		attr := v[5:]
		if sem != Legacy22 && strings.HasSuffix(attr, "_RAW") {
			return SSLVar{}, unknown
		}
		idx := 0
		if i := strings.IndexByte(attr, '_'); i >= 0 {
			digits := attr[i+1:]
			if strings.Trim(digits, "0123456789") == "" {
				idx, attr = sslAtoi(digits), attr[:i]
			}
		}
		if sslDNAttrs[attr] == "" {
			// Apache gives nothing for a name outside its table: r->user
			// stays unset.
			return SSLVar{}, unknown
		}
		return SSLVar{Kind: SSLVarDNAttr, Issuer: v[0] == 'I', Attr: attr, Index: idx}, ""
	case sem != Legacy22 && len(v) > 4 && strings.EqualFold(v[:4], "SAN_"):
		rest, kind := v[4:], SSLVarKind(0)
		switch {
		case len(rest) > 6 && strings.EqualFold(rest[:6], "Email_"):
			rest, kind = rest[6:], SSLVarSANEmail
		case len(rest) > 4 && strings.EqualFold(rest[:4], "DNS_"):
			rest, kind = rest[4:], SSLVarSANDNS
		}
		if kind == 0 || len(rest) > 4 || strings.Trim(rest, "0123456789") != "" {
			return SSLVar{}, unknown
		}
		n, _ := strconv.Atoi(rest)
		return SSLVar{Kind: kind, Index: n}, ""
	}
	return SSLVar{}, unknown
}

// mergeSSL is a virtual host's mod_ssl server configuration: its own
// merged over the main server's (ssl_config_server_merge). Its
// per-directory defaults (SSLOptions, SSLUserName) merge over the main
// server's as any section's do (MergeSSLDir).
func mergeSSL(main, own *SSLServer) *SSLServer {
	switch {
	case own == nil:
		return main
	case main == nil:
		return own
	}
	s := *own
	if s.Engine == SSLEngineUnset {
		s.Engine = main.Engine
	}
	if s.Verify == VerifyUnset {
		s.Verify, s.VerifyRule = main.Verify, main.VerifyRule
	}
	if s.Depth < 0 {
		s.Depth = main.Depth
	}
	if s.CAFile == "" {
		s.CAFile = main.CAFile
	}
	if s.CAPath == "" {
		s.CAPath = main.CAPath
	}
	if s.CARule == nil {
		s.CARule = main.CARule
	}
	return &s
}

// SSLLoaded reports whether mod_ssl is loaded, so that its hooks run: in
// the modules loaded, or, in a model built from directives alone, where
// a mod_ssl directive appears.
func (c *Config) SSLLoaded() bool {
	if c.Modules != nil {
		return c.Modules["ssl_module"]
	}
	return c.sslSeen
}
