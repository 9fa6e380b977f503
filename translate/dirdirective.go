package translate

import (
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// skippedConfig makes the per-directory configuration that Apache makes
// for the module of a directive AllowOverride Nonfatal=Override skips
// (ap_walk_config_sub sets the module's config vector before invoke_cmd
// refuses the directive): mod_access_compat, mod_authn_file and
// mod_authz_groupfile have no merger, so their empty configuration
// replaces the inherited Order/Allow/Deny, AuthUserFile and AuthGroupFile
// (2.4 only: 2.2 has no Nonfatal).
func (b *builder) skippedConfig(info *directive.Info, conf *DirConf, ctx *dirCtx) {
	none := ""
	switch info.Module {
	case "access_compat_module":
		b.compat(conf)
	case "authn_file_module":
		if conf.UserFile == nil {
			conf.UserFile = &none // AH01619 where a password is checked
		}
	case "authz_groupfile_module":
		if conf.GroupFile == nil {
			conf.GroupFile = &none // AH01664: Require group denies
		}
	case "authn_dbm_module":
		if conf.AuthnDBM == nil {
			conf.AuthnDBM = &AuthnDBM{Type: "default"}
		}
	case "auth_digest_module":
		if conf.Digest == nil {
			conf.Digest = &DigestDir{}
		}
	case "authnz_ldap_module":
		if conf.LDAP == nil {
			conf.LDAP = &LDAPDir{}
		}
	case "authn_anon_module":
		if conf.Anon == nil {
			a := policy.DefaultAnonymous()
			conf.Anon = &a
		}
	case "core_module":
		if conf.Options == nil && ctx.sec.Kind == KindHtaccess {
			conf.Options = &CoreOptions{Opts: OptUnset}
		}
	}
}

func (b *builder) dirDirective(d *apacheconf.Directive, ctx *dirCtx) {
	name := d.LowerName()
	conf := ctx.conf
	info := b.admit(d, ctxOf(b, ctx), ctx.parent)
	if info == nil {
		if skipped := b.skipped; skipped != nil {
			b.skipped = nil
			b.skippedConfig(skipped, conf, ctx)
		}
		return
	}
	if conf.Options == nil && ctx.sec.Kind == KindHtaccess && info.Module == "core_module" {
		// The file now has a core configuration, whose options merge.
		conf.Options = &CoreOptions{Opts: OptUnset}
	}
	if name != "rewriterule" && b.omitted(d, name, ctx.scope) {
		return // a RewriteRule takes its conditions with it (rewriteLine)
	}
	switch name {
	case "order":
		o, ok := keyword(b, d, orders, "unknown order")
		if !ok {
			return
		}
		c := b.compat(conf)
		r := b.rule(d, ctx.scope)
		if c.OrderRule == nil && r != renderRule {
			c.OrderRule = new([policy.MaxMethods]*policy.Rule)
		}
		setPerMethod(&c.Order, c.OrderRule, o, r, ctx.limited)
	case "satisfy":
		v, ok := keyword(b, d, satisfies, "Satisfy either 'any' or 'all'.")
		if !ok {
			return
		}
		r := b.rule(d, ctx.scope)
		if !sectionHas(ctx.sec, hasOrder|hasAllow|hasDeny) {
			b.differ(d, "a Satisfy without Order/Allow/Deny in its section: Apache 2.4 starts a new, allowing host-access configuration here (dropping an inherited Deny); 2.2 keeps the inherited one")
		}
		if v == policy.SatisfyAny && !sectionHas(ctx.sec, hasRequire) {
			b.differ(d, "Satisfy Any with no Require in its section: where no Require applies and Order/Allow/Deny refuse, Apache 2.4 grants and 2.2 answers 403")
		}
		if b.cfg.Semantics == Legacy22 {
			// 2.2: core keeps Satisfy; Order/Allow/Deny are untouched.
			if conf.Satisfy22Rule == nil && r != renderRule {
				conf.Satisfy22Rule = new([policy.MaxMethods]*policy.Rule)
			}
			setPerMethod(&conf.Satisfy22, conf.Satisfy22Rule, v, r, ctx.limited)
			conf.Satisfy22Set |= ctx.limited
			return
		}
		c := b.compat(conf)
		if c.SatisfyRule == nil && r != renderRule {
			c.SatisfyRule = new([policy.MaxMethods]*policy.Rule)
		}
		setPerMethod(&c.Satisfy, c.SatisfyRule, v, r, ctx.limited)
	case "allow", "deny":
		b.allowDeny(d, ctx, name == "allow")
	case "require":
		if len(d.Args) > 0 && strings.EqualFold(d.Args[0], "group") && sectionHas(ctx.sec, hasRequireUser|hasRequireValidUser) ||
			len(d.Args) > 0 && (strings.EqualFold(d.Args[0], "user") || strings.EqualFold(d.Args[0], "valid-user")) && sectionHas(ctx.sec, hasRequireGroup) {
			b.differ(d, "Require lines for users and for groups in one section: Apache 2.4 grants if any line does; in 2.2 the group file module decides first, refusing users outside the groups")
		}
		if b.cfg.Semantics == Legacy22 {
			b.require22(d, ctx)
			return
		}
		b.require(d, ctx)
	case "requireall", "requireany", "requirenone", "authmerging", "authzsendforbiddenonfailure":
		if b.cfg.Semantics == Legacy22 {
			b.errorf(d, "%s is an Apache 2.4 directive, unknown to 2.2; with 2.4 directives in the configuration use semantics \"2.4-compat\"", d.Name)
			return
		}
		if name == "authmerging" || name == "authzsendforbiddenonfailure" {
			b.authz24(d, ctx, name)
			return
		}
		b.requireSection(d, ctx, name)
	case "authtype":
		if len(d.Args) == 1 && !strings.EqualFold(d.Args[0], "none") && !sectionHas(ctx.sec, hasRequire|hasRequireAll|hasRequireAny|hasRequireNone) {
			b.differ(d, "AuthType with no Require in its section: where no Require applies, Apache 2.4 answers 500 (AH01627) and 2.2 serves the request")
		}
		if len(d.Args) != 1 {
			b.errorf(d, "AuthType takes one argument")
			return
		}
		v := d.Args[0]
		if strings.EqualFold(v, "none") {
			v = ""
		}
		conf.AuthType = &v
		conf.AuthTypeRule = b.rule(d, ctx.scope)
	case "authname":
		if len(d.Args) != 1 {
			b.errorf(d, "AuthName takes one argument")
			return
		}
		name, err := exprString(d.Args[0])
		if err != nil {
			b.errorf(d, "Could not parse auth name expression '%s': %v", d.Args[0], err)
			return
		}
		v := strings.ReplaceAll(name, `"`, `\"`)
		conf.AuthName = &v
		b.rule(d, ctx.scope)
	case "authuserfile":
		if len(d.Args) < 1 || len(d.Args) > 2 {
			b.errorf(d, "AuthUserFile takes one argument")
			return
		}
		v := b.resolve(d.Args[0])
		conf.UserFile = &v
		b.rule(d, ctx.scope)
	case "authdbmgroupfile", "authzdbmtype":
		// 2.2's mod_authz_dbm serves Require group (policy's
		// dbm_check_auth), 2.4's Require dbm-group.
		b.authzDBM(d, name, conf)
		b.rule(d, ctx.scope)
	case "authdbmuserfile", "authdbmtype":
		b.authnDBM(d, name, conf)
		b.rule(d, ctx.scope)
	case "anonymous", "anonymous_nouserid", "anonymous_mustgiveemail", "anonymous_verifyemail", "anonymous_logemail":
		b.anonymous(d, name, conf)
		b.rule(d, ctx.scope)
	case "authgroupfile":
		switch {
		case b.cfg.Semantics == Legacy22 && len(d.Args) == 2 && d.Args[1] != "standard":
			// 2.2's set_authz_groupfile_slot takes an optional type.
			b.errorf(d, "Invalid auth file type: %s", d.Args[1])
			return
		case len(d.Args) != 1 && (b.cfg.Semantics != Legacy22 || len(d.Args) != 2):
			b.errorf(d, "AuthGroupFile takes one argument")
			return
		}
		v := b.resolve(d.Args[0])
		conf.GroupFile = &v
		b.groupFile22(conf)
		b.rule(d, ctx.scope)
	case "authbasicauthoritative":
		v, ok := keyword(b, d, onOff, "AuthBasicAuthoritative must be On or Off")
		if !ok {
			return
		}
		b.rule(d, ctx.scope)
		conf.BasicAuthoritative = &v
		conf.Basic22 = b.cfg.Semantics == Legacy22
	case "authbasicprovider":
		b.basicProvider(d, conf)
		b.rule(d, ctx.scope)
		conf.Basic22 = b.cfg.Semantics == Legacy22
	case "authdigestprovider", "authdigestqop", "authdigestnoncelifetime", "authdigestnccheck", "authdigestalgorithm", "authdigestdomain":
		if b.digestDirective(d, name, conf) {
			b.rule(d, ctx.scope)
		}
	case "authldapurl", "authldapbinddn", "authldapbindpassword", "authldapbindauthoritative",
		"authldapremoteuserisdn", "authldapremoteuserattribute", "authldapcomparednonserver",
		"authldapsubgroupattribute", "authldapsubgroupclass", "authldapmaxsubgroupdepth",
		"authldapgroupattribute", "authldapgroupattributeisdn", "authldapdereferencealiases",
		"authldapauthorizeprefix", "authldapinitialbindasuser", "authldapinitialbindpattern",
		"authldapsearchasuser", "authldapcompareasuser":
		if b.ldapDirective(d, conf) {
			b.rule(d, ctx.scope)
		}
	case "ldaptrustedclientcert":
		b.ldapClientCert(d) // ldapserver.go
	case "authzuserauthoritative", "authzgroupfileauthoritative":
		if b.cfg.Semantics != Legacy22 {
			b.errorf(d, "Invalid command '%s': removed in Apache 2.4 (catalogue DIR-11); with semantics %q the configuration must be valid 2.4", d.Name, Compat24)
			return
		}
		v, ok := keyword(b, d, onOff, d.Name+" must be On or Off")
		if !ok {
			return
		}
		b.rule(d, ctx.scope)
		if name == "authzuserauthoritative" {
			conf.UserAuthoritative = &v
		} else {
			conf.GroupAuthoritative = &v
			b.groupFile22(conf)
		}
	case "authzdbmauthoritative", "authzownerauthoritative", "authzldapauthoritative", "authzdbdauthoritative", "authzdefaultauthoritative":
		if b.cfg.Semantics != Legacy22 {
			b.errorf(d, "Invalid command '%s': removed in Apache 2.4 (catalogue DIR-11); with semantics %q the configuration must be valid 2.4", d.Name, Compat24)
			return
		}
		switch name {
		case "authzdefaultauthoritative":
			v, ok := keyword(b, d, onOff, d.Name+" must be On or Off")
			if !ok {
				return
			}
			b.rule(d, ctx.scope)
			conf.DefaultAuthoritative = &v
		case "authzdbmauthoritative":
			b.authzDBM(d, name, conf)
			b.rule(d, ctx.scope)
		case "authzldapauthoritative":
			if b.ldapDirective(d, conf) {
				b.rule(d, ctx.scope)
			}
		case "authzownerauthoritative":
			// mod_authz_owner's only setting (no merger: the section's
			// flag replaces the enclosing one, as a field would).
			v, ok := keyword(b, d, onOff, d.Name+" must be On or Off")
			if !ok {
				return
			}
			b.rule(d, ctx.scope)
			conf.OwnerAuthoritative = &v
		default:
			b.notFaithful(d, "this 2.2 authoritative flag belongs to a module orderly does not evaluate")
		}
	case "limit", "limitexcept":
		b.limit(d, ctx, name == "limitexcept")
	case "files", "filesmatch":
		if b.inLimit(d, ctx) {
			return
		}
		if s := b.section(d, ctx.sec, ctx.scope); s != nil {
			conf.Files = append(conf.Files, s)
		}
	case "directory", "directorymatch", "location", "locationmatch", "virtualhost":
		b.errorf(d, "<%s cannot occur within %s section", d.Name, ctx.sec)
	case "setenvif", "setenvifnocase", "browsermatch", "browsermatchnocase":
		conf.SetEnv = b.setEnvIf(d, ctx.scope, conf.SetEnv)
	case "hostnamelookups":
		b.hostnameLookups(d, conf)
	case "directoryindex":
		conf.DirIndex = addIndex(conf.DirIndex, d)
	case "options":
		b.options(d, conf, ctx.scope)
	case "sethandler", "addhandler", "addtype", "forcetype", "defaulttype":
		b.cgiHandler(d, name)
		b.unevaluated(d, info)
		if name == "sethandler" && len(d.Args) > 0 {
			h := d.Args[0]
			conf.Handler = &h
		}
	case "fallbackresource":
		if f := b.fallback(d); f != nil {
			conf.Fallback = f
		}
	case "acceptpathinfo":
		if v := b.acceptPathInfo(d); v != nil {
			conf.AcceptPathInfo, conf.AcceptPathInfoRule = v, b.namedRule(d, ctx.scope)
		}
	case "directoryslash", "directorycheckhandler", "directoryindexredirect":
		conf.Dir = b.dirSetting(d, name, conf.Dir, ctx.scope)
	case "sslrequiressl", "sslverifyclient", "sslverifydepth", "sslcacertificatefile", "sslcacertificatepath", "ssloptions", "sslusername", "sslengine":
		b.ssl(d, name, conf, ctx.scope, false) // ssl.go
	case "allowoverride":
		b.markOverride()
		v, nonfatal, err := parseOverride(d.Args, b.cfg.Semantics == Legacy22)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		if ctx.sec.Kind == KindDirectory {
			// Elsewhere Apache accepts it and it has no effect (AH00114).
			conf.Override, conf.NonFatal = &v, nonfatal
			conf.OverrideOpts = overrideOptions(d.Args)
		}
	case "allowoverridelist":
		list, err := b.overrideList(d)
		if err != "" {
			b.errorf(d, "%s", err)
			return
		}
		if ctx.sec.Kind == KindDirectory {
			conf.OverrideList = list // elsewhere it has no effect (AH00115)
		}
	case "limitrequestbody", "limitxmlrequestbody":
		b.limits(d, ctx)
	case "redirect", "redirectmatch", "redirecttemp", "redirectpermanent", "redirectrelative", "usecanonicalname", "errordocument":
		b.redirects(d, ctx)
	case "if", "elseif", "else":
		if b.inLimit(d, ctx) {
			return
		}
		b.ifSection(d)
	case "error":
		b.errorf(d, "%s", strings.Join(d.Args, " "))
	case "rewriteengine", "rewritebase", "rewriteoptions", "rewritecond", "rewriterule", "rewritemap":
		b.rewriteDirective(d, ctx)
	default:
		b.unevaluated(d, info)
		if name == "userdir" {
			b.userDir(d)
		}
	}
}

// groupFile22 completes 2.2's mod_authz_groupfile configuration of a
// section that sets AuthGroupFile or AuthzGroupFileAuthoritative: the
// module has no merger, so the other starts from its default
// (create_authz_groupfile_dir_config: no file, authoritative) and the
// two replace the enclosing section's together. 2.4's has only
// AuthGroupFile.
func (b *builder) groupFile22(conf *DirConf) {
	if b.cfg.Semantics != Legacy22 {
		return
	}
	if conf.GroupFile == nil {
		none := ""
		conf.GroupFile = &none
	}
	if conf.GroupAuthoritative == nil {
		on := true
		conf.GroupAuthoritative = &on
	}
}
