package translate

import (
	"errors"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/digest"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// authnProviders are the authentication providers of the stock modules,
// with the module that registers each (ap_register_auth_provider):
// without it loaded the name is unknown. Names are case-sensitive, as the
// provider table is.
var authnProviders = map[string]string{
	"file": "authn_file_module", "dbm": "authn_dbm_module", "anon": "authn_anon_module",
	"ldap": "authnz_ldap_module", "dbd": "authn_dbd_module", "socache": "authn_socache_module",
}

// evaluatedProvider reports whether orderly evaluates provider kind name
// (ldap as the semantics' version decides it).
func (b *builder) evaluatedProvider(name string) bool {
	return name == "file" || name == "dbm" || name == "anon" || name == "ldap"
}

// providerBase returns the base provider a name registered for
// AuthBasicProvider stands for ("" and false when none is registered).
func (b *builder) providerBase(name string) (string, bool) {
	if m, ok := authnProviders[name]; ok && b.loaded(m) {
		return name, true
	}
	if a := b.cfg.ProviderAliases[name]; a != nil {
		return a.Base, true
	}
	return "", false
}

// basicProvider is AuthBasicProvider (add_authn_provider): each name must
// be registered when the line is read, and the names add up.
func (b *builder) basicProvider(d *apacheconf.Directive, conf *DirConf) {
	list := append([]string(nil), conf.BasicProviders...)
	for _, a := range d.Args {
		base, ok := b.providerBase(a)
		if !ok {
			b.errorf(d, "Unknown Authn provider: %s", a)
			return
		}
		if !b.evaluatedProvider(base) {
			// translate writes it as it is: 2.4 reads it the same way.
			b.cannotServe(d, "AuthBasicProvider %s cannot be evaluated by orderly (the %s provider; orderly evaluates file, dbm, anon and ldap, and aliases of them); refusing to load", a, base)
		}
		list = append(list, a)
	}
	conf.BasicProviders = list
}

// authnDBM is AuthDBMUserFile and AuthDBMType. mod_authn_dbm has no
// merger: the section's configuration starts from the defaults.
func (b *builder) authnDBM(d *apacheconf.Directive, name string, conf *DirConf) {
	if len(d.Args) != 1 {
		b.errorf(d, "%s takes one argument, %s", d.Name, map[string]string{
			"authdbmuserfile": "dbm database file containing user IDs and passwords",
			"authdbmtype":     "what type of DBM file the user file is"}[name])
		return
	}
	if conf.AuthnDBM == nil {
		conf.AuthnDBM = &AuthnDBM{Type: "default"}
	}
	if name == "authdbmuserfile" {
		conf.AuthnDBM.UserFile, conf.AuthnDBM.Pos = b.resolve(d.Args[0]), d.Pos
	} else {
		conf.AuthnDBM.Type = d.Args[0]
	}
}

// authzDBM is AuthDBMGroupFile, AuthzDBMType and (2.2)
// AuthzDBMAuthoritative: mod_authz_dbm has no merger either, so a
// section that sets any of them starts from the module's defaults
// (create_authz_dbm_dir_config: no file, type "default", authoritative).
func (b *builder) authzDBM(d *apacheconf.Directive, name string, conf *DirConf) {
	var flag bool
	if name == "authzdbmauthoritative" {
		v, ok := keyword(b, d, onOff, d.Name+" must be On or Off")
		if !ok {
			return
		}
		flag = v
	} else if len(d.Args) != 1 {
		b.errorf(d, "%s takes one argument", d.Name)
		return
	}
	if conf.DBMGroupFile == nil {
		none, def, on := "", "default", true
		conf.DBMGroupFile, conf.DBMGroupType, conf.DBMAuthoritative = &none, &def, &on
	}
	switch name {
	case "authdbmgroupfile":
		v := b.resolve(d.Args[0])
		conf.DBMGroupFile, conf.DBMGroupPos = &v, d.Pos
	case "authzdbmtype":
		v := d.Args[0]
		conf.DBMGroupType = &v
	default:
		conf.DBMAuthoritative = &flag
	}
}

// anonymous is mod_authn_anon's directives, on a configuration that
// starts from the module's defaults in each section that sets one.
func (b *builder) anonymous(d *apacheconf.Directive, name string, conf *DirConf) {
	if conf.Anon == nil {
		a := policy.DefaultAnonymous()
		conf.Anon = &a
	}
	a := conf.Anon
	if name == "anonymous" {
		for _, u := range d.Args {
			if u == "" {
				// ITERATE stops at an empty word (ap_getword_conf), so
				// anon_set_string_slots never sees one from a file.
				break
			}
			if a.Any {
				continue
			}
			if u == "*" {
				a.Any = true
				continue
			}
			a.Users = append(a.Users, u)
		}
		return
	}
	v, ok := keyword(b, d, onOff, d.Name+" must be On or Off")
	if !ok {
		return
	}
	switch name {
	case "anonymous_nouserid":
		a.NoUserID = v
	case "anonymous_mustgiveemail":
		a.MustEmail = v
	case "anonymous_verifyemail":
		a.VerifyEmail = v
	case "anonymous_logemail":
		a.LogEmail = v
	}
}

// providerAlias is <AuthnProviderAlias base alias> (authaliassection):
// the alias is registered once its section is read, for the
// AuthBasicProvider lines after it, with what the section sets of the
// providers' modules.
func (b *builder) providerAlias(d *apacheconf.Directive) {
	if b.vhost != nil {
		b.errorf(d, "<%s> cannot occur within <VirtualHost> section", d.Name)
		return
	}
	if len(d.Args) < 2 || d.Args[0] == "" || d.Args[1] == "" {
		b.errorf(d, "<%s> directive requires additional arguments", d.Name)
		return
	}
	base, name := d.Args[0], d.Args[1]
	if strings.EqualFold(base, name) {
		b.errorf(d, "The alias provider name must be different from the base provider name.")
		return
	}
	if _, ok := b.providerBase(name); ok {
		b.errorf(d, "The alias provider %s has already be registered previously as either a base provider or an alias provider.", name)
		return
	}
	conf := &DirConf{}
	for _, c := range d.Block {
		info := b.admit(c, directive.Dir, d.Name)
		if info == nil {
			continue
		}
		switch n := c.LowerName(); n {
		case "authuserfile":
			if len(c.Args) >= 1 {
				v := b.resolve(c.Args[0])
				conf.UserFile = &v
			}
		case "authdbmuserfile", "authdbmtype":
			b.authnDBM(c, n, conf)
		case "anonymous", "anonymous_nouserid", "anonymous_mustgiveemail", "anonymous_verifyemail", "anonymous_logemail":
			b.anonymous(c, n, conf)
		default:
			if ldapDirectives[n] || n == "authzldapauthoritative" {
				b.ldapDirective(c, conf)
			}
		}
	}
	realBase, ok := b.providerBase(base)
	if !ok {
		b.errorf(d, "Unknown Authn provider: %s", base)
		return
	}
	if realBase != base {
		// An alias of an alias: Apache looks the outer name up again and
		// recurses; refuse rather than guess.
		b.cannotServe(d, "<AuthnProviderAlias %s %s>: an alias of another alias cannot be evaluated by orderly; refusing to load", base, name)
	}
	if b.cfg.ProviderAliases == nil {
		b.cfg.ProviderAliases = map[string]*ProviderAlias{}
	}
	b.cfg.ProviderAliases[name] = &ProviderAlias{Name: name, Base: realBase, Conf: conf, Pos: d.Pos}
}

// DigestDir is mod_auth_digest's per-directory configuration as a
// section sets it: its AuthDigest* lines, in order. The module has no
// merger: the innermost section with any of them has them all, the
// others at their defaults.
type DigestDir struct {
	Lines []DigestLine
}

// DigestLine is one AuthDigest* directive of a section.
type DigestLine struct {
	Name string
	Args []string
}

// digestProviders are the base providers with a realm hash
// (get_realm_hash), which Digest authentication needs: mod_authn_file's
// and mod_authn_dbm's, both of which orderly evaluates.
var digestProviders = map[string]bool{"file": true, "dbm": true}

// digestDirective is one of mod_auth_digest's per-directory directives:
// its value checked as Apache checks it (digest.Config.Set), its
// providers registered ones with a realm hash (add_authn_provider).
func (b *builder) digestDirective(d *apacheconf.Directive, name string, conf *DirConf) bool {
	var scratch digest.Config
	if err := scratch.Set(d.Name, d.Args...); err != nil {
		if b.cfg.Semantics == Legacy22 && len(d.Args) > 0 && (name == "authdigestqop" || name == "authdigestalgorithm") {
			// 2.2 took qop none and auth-int, and MD5-sess; orderly
			// decides Digest as Apache 2.4 does.
			b.cannotServe(d, "%s: Apache 2.2 accepts it, orderly decides Digest authentication as Apache 2.4 (%v); refusing to load", d.Text(), err)
			return false
		}
		b.errorf(d, "%s", err)
		return false
	}
	if name == "authdigestprovider" {
		for _, a := range d.Args {
			base, ok := b.providerBase(a)
			if !ok {
				b.errorf(d, "Unknown Authn provider: %s", a)
				return false
			}
			if !digestProviders[base] {
				b.errorf(d, "The '%s' Authn provider doesn't support Digest Authentication", a)
				return false
			}
		}
	}
	if conf.Digest == nil {
		conf.Digest = &DigestDir{}
	}
	conf.Digest.Lines = append(conf.Digest.Lines, DigestLine{Name: d.Name, Args: d.Args})
	return true
}

// LDAPDir is mod_authnz_ldap's per-directory configuration as a section
// sets it: its AuthLDAP* lines, in order. The module has no merger: the
// innermost section with any of them has them all, the others at their
// defaults (create_authnz_ldap_dir_config).
type LDAPDir struct {
	Lines []DigestLine
}

// ldapDirectives are mod_authnz_ldap's per-directory directives of Apache
// 2.4 (AuthzLDAPAuthoritative is 2.2's).
var ldapDirectives = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range ldapauth.Directives {
		if n != "authzldapauthoritative" {
			m[n] = true
		}
	}
	return m
}()

// ldapVersion is the mod_authnz_ldap whose directives and decisions
// orderly follows under the builder's semantics.
func (b *builder) ldapVersion() ldapauth.Version {
	if b.cfg.Semantics == Legacy22 {
		return ldapauth.Apache22
	}
	return ldapauth.Apache24
}

// ldapDirective is one of mod_authnz_ldap's per-directory directives:
// its value checked as Apache (2.4, or 2.2 under semantics "2.2") checks
// it (ldapauth.Config.Apply), the other version's directives refused as
// that version refuses an unknown one. An exec: bind password is
// refused: orderly runs no program the configuration names.
func (b *builder) ldapDirective(d *apacheconf.Directive, conf *DirConf) bool {
	scratch := ldapauth.NewConfig(b.ldapVersion())
	if err := scratch.Apply(d.Name, d.Args, ldapauth.DirectiveOptions{}); err != nil {
		if errors.Is(err, ldapauth.ErrExecNotAllowed) {
			b.cannotServe(d, "%s exec:...: orderly does not run programs named by the configuration; refusing to load", d.Name)
			return false
		}
		b.errorf(d, "%s", err)
		return false
	}
	if conf.LDAP == nil {
		conf.LDAP = &LDAPDir{}
	}
	conf.LDAP.Lines = append(conf.LDAP.Lines, DigestLine{Name: d.Name, Args: d.Args})
	return true
}
