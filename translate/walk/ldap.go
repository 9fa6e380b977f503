package walk

import (
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate"
)

// ldapScope is mod_authnz_ldap's configuration of a section's AuthLDAP*
// lines over the module's defaults (it has no merger), compiled into
// ldapauth's Config; nil when no section set any (the defaults).
func ldapScope(dir *translate.LDAPDir) *policy.LDAPScope {
	if dir == nil {
		return nil
	}
	cfg := ldapauth.NewConfig(ldapauth.Apache24)
	key := ""
	for _, line := range dir.Lines {
		// The builder checked each line (translate: ldapDirective).
		_ = cfg.Apply(line.Name, line.Args, ldapauth.DirectiveOptions{})
		key += "|" + strings.ToLower(line.Name) + "=" + strings.Join(line.Args, "\x00")
	}
	return &policy.LDAPScope{Config: cfg, Key: key}
}
