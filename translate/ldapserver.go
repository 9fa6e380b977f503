package translate

import (
	"strings"

	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// LDAPServer is mod_ldap's server configuration (util_ldap_state_t) as
// the main server or one <VirtualHost> sets it: its lines, in order, each
// checked as mod_ldap's handler checks it (ldapauth.ServerConfig.Apply).
// A virtual host's Config holds the main server's lines and its own
// after them (mergeLDAPServer, util_ldap_merge_config). Nil: no line.
type LDAPServer struct {
	Lines []LDAPServerLine
}

// LDAPServerLine is one line of mod_ldap's server configuration. A
// certificate's file (LDAPTrustedGlobalCert, and 2.2's
// LDAPTrustedClientCert) is made relative to ServerRoot, as Apache makes
// it, in Args.
type LDAPServerLine struct {
	Name string
	Args []string
	Pos  apacheconf.Pos
}

// Config returns the lines applied to mod_ldap's defaults for the
// version.
func (s *LDAPServer) Config(v ldapauth.Version) *ldapauth.ServerConfig {
	c := ldapauth.NewServerConfig(v)
	if s == nil {
		return c
	}
	for _, l := range s.Lines {
		if strings.EqualFold(l.Name, "LDAPTrustedClientCert") {
			continue // 2.2's, a server-level line: nothing to apply
		}
		// The builder checked each line (ldapValue).
		_ = c.Apply(l.Name, l.Args, ldapauth.ServerContext{})
	}
	return c
}

// mergeLDAPServer is util_ldap_merge_config: the caches, the
// certificates, the timeouts, LDAPVerifyServerCert and the retries are
// the main server's (those lines may not appear in a <VirtualHost>),
// LDAPTrustedMode and LDAPConnectionPoolTTL the host's where it sets
// them. The host's lines after the main server's, applied in order, are
// that merge.
func mergeLDAPServer(main, own *LDAPServer) *LDAPServer {
	if own == nil {
		return main
	}
	if main == nil {
		return own
	}
	return &LDAPServer{Lines: append(append([]LDAPServerLine(nil), main.Lines...), own.Lines...)}
}

// ldapValue reports the error of mod_ldap's handler for the directive d
// (of ldap_module), "" when it takes the line: the values, and the
// directives that may not appear in a <VirtualHost> (GLOBAL_ONLY).
func (b *builder) ldapValue(info *directive.Info, d *apacheconf.Directive) string {
	v := b.ldapVersion()
	var err error
	if ldapDirDirective(info.Name) {
		err = ldapauth.CheckDirDirective(v, d.Name, d.Args)
	} else {
		err = ldapauth.NewServerConfig(v).Apply(d.Name, d.Args, ldapauth.ServerContext{VirtualHost: b.vhost != nil})
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// ldapDirDirective reports one of mod_ldap's directives that its handler
// reads as a per-directory one (or 2.2's LDAPTrustedClientCert, which
// has no server-level check of its own).
func ldapDirDirective(name string) bool {
	switch strings.ToLower(name) {
	case "ldaptrustedclientcert", "ldapreferrals", "ldapreferralhoplimit":
		return true
	}
	return false
}

// ldapServerDirective records a server-level line of mod_ldap (its values
// already checked: ldapValue). A certificate orderly cannot use as
// Apache does is refused, under either semantics: a type OpenLDAP does
// not take (Apache then uses it and every certificate line after it not
// at all) or a client certificate (orderly presents none).
func (b *builder) ldapServerDirective(d *apacheconf.Directive, name string) {
	args := append([]string(nil), d.Args...)
	switch name {
	case "ldaptrustedglobalcert", "ldaptrustedclientcert":
		c := ldapauth.Cert{Type: ldapauth.ParseCertType(args[0])}
		if len(args) > 1 && c.NeedsFile() {
			args[1] = b.resolve(args[1])
		}
		if name == "ldaptrustedglobalcert" {
			scratch := ldapauth.NewServerConfig(b.ldapVersion())
			_ = scratch.Apply(d.Name, d.Args, ldapauth.ServerContext{})
			if _, why, bad := scratch.Unsupported(); bad {
				b.cannotServe(d, "LDAPTrustedGlobalCert %s cannot be evaluated by orderly: %s; refusing to load", c.Type, why)
				return
			}
		}
	}
	if b.cfg.LDAPServer == nil {
		b.cfg.LDAPServer = &LDAPServer{}
	}
	b.cfg.LDAPServer.Lines = append(b.cfg.LDAPServer.Lines, LDAPServerLine{Name: d.Name, Args: args, Pos: d.Pos})
}

// ldapClientCert is 2.4's LDAPTrustedClientCert, a per-directory line
// (its value checked: ldapValue): orderly presents no client certificate
// to an LDAP server, so it refuses the line rather than connect without
// one.
func (b *builder) ldapClientCert(d *apacheconf.Directive) {
	b.cannotServe(d, "LDAPTrustedClientCert cannot be evaluated by orderly: it presents no client certificate to LDAP servers; refusing to load")
}
