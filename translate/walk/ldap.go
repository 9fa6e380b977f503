package walk

import (
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate"
)

// ldapScope is mod_authnz_ldap's configuration of a section's AuthLDAP*
// lines over the module's defaults (it has no merger), compiled into
// ldapauth's Config of the semantics' version (2.2's for "2.2"); nil
// when no section set any (the defaults).
func ldapScope(dir *translate.LDAPDir, sem translate.Semantics) *policy.LDAPScope {
	if dir == nil {
		return nil
	}
	v := ldapauth.Apache24
	if sem == translate.Legacy22 {
		v = ldapauth.Apache22
	}
	cfg := ldapauth.NewConfig(v)
	key := ""
	for _, line := range dir.Lines {
		// The builder checked each line (translate: ldapDirective).
		_ = cfg.Apply(line.Name, line.Args, ldapauth.DirectiveOptions{})
		key += "|" + strings.ToLower(line.Name) + "=" + strings.Join(line.Args, "\x00")
	}
	return &policy.LDAPScope{Config: cfg, Key: key}
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
		case "authz_default_module":
			dflt = true
		}
		// mod_authz_owner's hook declines (policy.Authz22).
	}
	return chain, dflt
}
