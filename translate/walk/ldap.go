package walk

import (
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// ldapScope is mod_authnz_ldap's configuration of a section's AuthLDAP*
// lines over the module's defaults (it has no merger), compiled into
// ldapauth's Config of the semantics' version (2.2's for "2.2"), with
// mod_ldap's server configuration of the engine's server; nil when no
// section set any (the defaults).
func (e *Engine) ldapScope(dir *translate.LDAPDir) *policy.LDAPScope {
	if dir == nil {
		return nil
	}
	v := ldapauth.Apache24
	if e.cfg.Semantics == translate.Legacy22 {
		v = ldapauth.Apache22
	}
	cfg := ldapauth.NewConfig(v)
	key := ""
	for _, line := range dir.Lines {
		// The builder checked each line (translate: ldapDirective).
		_ = cfg.Apply(line.Name, line.Args, ldapauth.DirectiveOptions{})
		key += "|" + strings.ToLower(line.Name) + "=" + strings.Join(line.Args, "\x00")
	}
	s := &policy.LDAPScope{Config: cfg, Key: key}
	if e.ldap.server != nil {
		s.Server = e.ldap.server
	}
	return s
}

// ldapServerConf is an engine's mod_ldap server configuration.
type ldapServerConf struct {
	server *ldapauth.ServerConfig // nil: the defaults
}

// newLDAPServerConf is mod_ldap's server configuration of cfg (a virtual
// host's merged over the main server's by translate).
func newLDAPServerConf(cfg *translate.Config) ldapServerConf {
	if cfg.LDAPServer == nil {
		return ldapServerConf{}
	}
	v := ldapauth.Apache24
	if cfg.Semantics == translate.Legacy22 {
		v = ldapauth.Apache22
	}
	return ldapServerConf{server: cfg.LDAPServer.Config(v)}
}

// LDAPError reports the certificate files of mod_ldap's lines that do not
// exist where orderly reads them, as util_ldap_set_trusted_global_cert
// (and 2.2's util_ldap_set_trusted_client_cert) refuse them when Apache
// reads its configuration (apr_stat): "Invalid global certificate file
// path" at the line. Nil when every one is there.
func (e *Engine) LDAPError() error {
	var errs apacheconf.ErrorList
	seen := map[apacheconf.Pos]bool{}
	check := func(s *translate.LDAPServer) {
		if s == nil {
			return
		}
		for _, l := range s.Lines {
			global := strings.EqualFold(l.Name, "LDAPTrustedGlobalCert")
			if (!global && !strings.EqualFold(l.Name, "LDAPTrustedClientCert")) || len(l.Args) < 2 || seen[l.Pos] {
				continue
			}
			seen[l.Pos] = true
			if !(ldapauth.Cert{Type: ldapauth.ParseCertType(l.Args[0])}).NeedsFile() {
				continue
			}
			if _, err := e.fs.Stat(l.Args[1]); err != nil {
				msg := "Invalid global certificate file path"
				if !global {
					msg = "Invalid client certificate file path"
				}
				errs = append(errs, &apacheconf.Error{Pos: l.Pos, Msg: msg})
			}
		}
	}
	check(e.cfg.LDAPServer)
	for _, h := range e.hosts {
		check(h.e.cfg.LDAPServer)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// chain22 is the order of 2.2's auth_checker hooks policy runs, from the
// modules translate found loaded in that order (Config.Authz22), and
// whether mod_authz_default's runs after them. Without the list (a
// configuration not built by translate) it is policy's default chain,
// mod_authz_default's included.
func chain22(mods []string) ([]policy.Authz22, bool) {
	if mods == nil {
		return nil, true
	}
	chain := []policy.Authz22{}
	dflt := false
	for _, m := range mods {
		switch m {
		case "authz_user_module":
			chain = append(chain, policy.AuthzUser22)
		case "authz_groupfile_module":
			chain = append(chain, policy.AuthzGroupFile22)
		case "authz_dbm_module":
			chain = append(chain, policy.AuthzDBM22)
		case "authnz_ldap_module":
			chain = append(chain, policy.AuthzLDAP22)
		case "authz_owner_module":
			chain = append(chain, policy.AuthzOwner22)
		case "authz_default_module":
			dflt = true
		}
	}
	return chain, dflt
}
