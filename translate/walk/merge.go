package walk

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// merged is the per-directory configuration in force for one combination
// of sections, merged once and cached: Engine.merge returns the same
// *merged for the same sections.
type merged struct {
	sections []*translate.Section
	// compatFrom and authzFrom are the sections whose host-access and
	// Require configurations are in force (nil: Apache's defaults).
	compatFrom, authzFrom *translate.Section
	// cover are the synthetic rules of the sections whose access lines
	// are in force: each counts the decisions made here (Rule.Cover).
	cover       []*policy.Rule
	layers      *policy.Layers
	setEnv      []*translate.EnvRule
	dirIndex    []string
	handler     string                // SetHandler in force, "" for none
	fallback    string                // FallbackResource in force, "" for none
	pathInfoOff *policy.Rule          // the AcceptPathInfo Off in force, if any
	dir         translate.DirSettings // mod_dir's switches in force
	lookups     translate.HostnameLookups
	options     translate.OptionBits // core's Options in force
	ssl         *translate.SSLDir    // mod_ssl's (ssl.go)
	rewrite     *translate.Rewrite   // mod_rewrite's (rewrite.go)

	// alts are the layers with each section's access configuration taken
	// away, made when first needed (sectionsNecessary).
	alts atomic.Pointer[[]sectionAlt]
}

// walked is what the walk found on the file system.
type walked struct {
	isDir, isReg bool
}

// maxMerged bounds the cache of merged configurations.
const maxMerged = 1 << 14

// merge returns the merged configuration of sections, from the cache when
// the same sections applied before.
func (e *Engine) merge(sections []*translate.Section) *merged {
	h := uint64(14695981039346656037)
	for _, s := range sections {
		h = (h ^ uint64(s.Order+1)) * 1099511628211
	}
	if v, ok := e.cache.Load(h); ok {
		if m := v.(*merged); slices.Equal(m.sections, sections) {
			return m
		}
	}
	m := e.mergeNow(sections)
	if e.cached.Add(1) <= maxMerged {
		e.cache.Store(h, m)
	}
	return m
}

func (e *Engine) mergeNow(sections []*translate.Section) *merged {
	a := fromConf(e.cfg.Defaults)
	a.opts, a.hasOpts = e.serverOptions(), true
	for i := 0; i < len(sections); {
		phase := translate.WalkPhase(sections[i])
		walked := fromSection(sections[i])
		j := i + 1
		for ; j < len(sections) && translate.WalkPhase(sections[j]) == phase; j++ {
			c := fromSection(sections[j])
			walked.merge(&c)
		}
		a.merge(&walked)
		i = j
	}
	scope := e.cfg.Default
	var compatFrom, authzFrom *translate.Section
	var requiresFrom []*translate.Section // the sections whose Require lines are in force
	for _, s := range sections {
		if s.Conf.Compat != nil || s.Conf.Authz != nil || s.Conf.Requires22 != nil {
			scope = s.Default
		}
		if s.Conf.Compat != nil {
			compatFrom = s
		}
		if s.Conf.Authz != nil || s.Conf.Requires22 != nil {
			authzFrom = s
		}
		switch z := s.Conf.Authz; {
		case s.Conf.Requires22 != nil:
			requiresFrom = []*translate.Section{s}
		case z == nil || z.Root == nil:
		case z.Merge == translate.MergeAnd || z.Merge == translate.MergeOr:
			requiresFrom = append(requiresFrom, s)
		default:
			requiresFrom = []*translate.Section{s}
		}
	}
	m := &merged{sections: slices.Clone(sections), setEnv: a.setEnv, dirIndex: a.dirIndex, handler: handlerOf(a.handler), fallback: fallbackOf(a.fallback), pathInfoOff: pathInfoOff(a.pathInfo, a.pathInfoRule), dir: dirSettings(a.dir), lookups: a.lookups, options: a.opts.Opts, compatFrom: compatFrom, authzFrom: authzFrom}
	m.ssl = mergedSSL(e.cfg.Defaults, sections)
	m.rewrite = e.cfg.Defaults.Rewrite
	for _, s := range sections {
		m.rewrite = translate.MergeRewrite(m.rewrite, s.Conf.Rewrite)
	}
	if compatFrom != nil && compatFrom.Default != nil {
		m.cover = append(m.cover, compatFrom.Default)
	}
	for _, s := range requiresFrom {
		if s.Default != nil && !slices.Contains(m.cover, s.Default) {
			m.cover = append(m.cover, s.Default)
		}
	}
	l := &policy.Layers{Compat: a.compat, Default: scope}
	if a.authz != nil {
		l.Authz = a.authz.Root.Compile()
		l.ForbiddenOnFail = a.authz.ForbiddenOnFail == 1
	}
	if a.authType != nil {
		l.AuthType, l.AuthTypeRule = *a.authType, a.authTypeRule
	}
	if a.authName != nil {
		l.AuthName, l.HasAuthName = *a.authName, true
	}
	if a.userFile != nil {
		l.UserFile = *a.userFile
	}
	if a.groupFile != nil {
		l.GroupFile = *a.groupFile
	}
	if a.basicAuth != nil && !*a.basicAuth {
		l.BasicNotAuthoritative = true
	}
	l.Providers = e.providers(&a)
	l.LDAP = e.ldapScope(a.ldap)
	if a.authType != nil && strings.EqualFold(*a.authType, "Digest") {
		l.Digest = e.digestScope(&a, l)
	}
	if a.dbmGroupFile != nil {
		l.DBMGroupFile, l.DBMGroupType = *a.dbmGroupFile, "default"
		if a.dbmGroupType != nil {
			l.DBMGroupType = *a.dbmGroupType
		}
	}
	if e.cfg.Semantics == translate.Legacy22 {
		chain, dflt := chain22(e.cfg.Authz22)
		lg := &policy.Legacy22{
			Satisfy: a.satisfy22, SatisfyRule: a.satisfy22Rule, Requires: a.requires22,
			UserAuthoritative: a.userAuth == nil || *a.userAuth, GroupAuthoritative: a.groupAuth == nil || *a.groupAuth,
			DBMAuthoritative:        a.dbmAuth == nil || *a.dbmAuth,
			OwnerAuthoritative:      a.ownerAuth == nil || *a.ownerAuth,
			DefaultNotAuthoritative: a.defaultAuth != nil && !*a.defaultAuth || !dflt,
			Chain:                   chain,
		}
		l.Legacy, l.Authz = lg, nil
	}
	m.layers = l
	return m
}

// providers resolves AuthBasicProvider's names for the merged
// configuration a: nil where none is set (the default file provider).
// An alias is its base provider with what its section sets of the
// providers' modules merged over the request's configuration, each
// module whole (authn_alias_check_password, and those modules have no
// merger).
func (e *Engine) providers(a *accum) []policy.AuthnProvider {
	if a.providers == nil {
		return nil
	}
	out := make([]policy.AuthnProvider, 0, len(a.providers))
	for _, name := range a.providers {
		base, userFile, dbm, anon, ldap := name, a.userFile, a.authnDBM, a.anon, a.ldap
		if al := e.cfg.ProviderAliases[name]; al != nil {
			base = al.Base
			if al.Conf.UserFile != nil {
				userFile = al.Conf.UserFile
			}
			if al.Conf.AuthnDBM != nil {
				dbm = al.Conf.AuthnDBM
			}
			if al.Conf.Anon != nil {
				anon = al.Conf.Anon
			}
			if al.Conf.LDAP != nil {
				ldap = al.Conf.LDAP
			}
		}
		p := policy.AuthnProvider{Name: name}
		switch base {
		case "dbm":
			p.Kind, p.DBMType = policy.ProviderDBM, "default"
			if dbm != nil {
				p.File, p.DBMType = dbm.UserFile, dbm.Type
			}
		case "anon":
			p.Kind, p.Anon = policy.ProviderAnon, anon
		case "ldap":
			p.Kind, p.LDAP = policy.ProviderLDAP, e.ldapScope(ldap)
		default:
			p.Kind = policy.ProviderFile
			if userFile != nil {
				p.File = *userFile
			}
		}
		out = append(out, p)
	}
	return out
}

// covered counts a decision made here for the sections whose access
// lines were in force, unless it was decided dry.
func (m *merged) covered(r *policy.Request) {
	if r.Dry {
		return
	}
	for _, c := range m.cover {
		c.Cover(r.Method)
	}
}

// accum is a per-directory configuration being merged, module by module
// (ap_merge_per_dir_configs). A nil field is a slot nobody set.
type accum struct {
	compat       *policy.Compat
	authz        *translate.AuthzSlot
	authType     *string
	authTypeRule *policy.Rule
	authName     *string
	userFile     *string
	groupFile    *string
	basicAuth    *bool
	providers    []string             // mod_auth_basic: AuthBasicProvider
	basic22      bool                 // 2.2: mod_auth_basic's configuration is whole (translate.DirConf.Basic22)
	authnDBM     *translate.AuthnDBM  // mod_authn_dbm, replaced whole
	anon         *policy.Anonymous    // mod_authn_anon, replaced whole
	dbmGroupFile *string              // mod_authz_dbm, replaced whole (with dbmGroupType, dbmAuth)
	digest       *translate.DigestDir // mod_auth_digest, replaced whole
	ldap         *translate.LDAPDir   // mod_authnz_ldap, replaced whole
	dbmGroupType *string
	dbmAuth      *bool // 2.2: AuthzDBMAuthoritative
	setEnv       []*translate.EnvRule
	dirIndex     []string
	handler      *string // core: SetHandler
	fallback     *string // mod_dir: FallbackResource
	pathInfo     *string // core: AcceptPathInfo
	pathInfoRule *policy.Rule
	dir          *translate.DirSettings    // mod_dir's switches
	lookups      translate.HostnameLookups // core: HostnameLookups
	opts         translate.CoreOptions     // core: Options, when hasOpts
	hasOpts      bool

	// Apache 2.2's core fields.
	satisfy22     [policy.MaxMethods]policy.Satisfy
	satisfy22Rule [policy.MaxMethods]*policy.Rule
	satisfy22Set  policy.MethodMask
	requires22    []policy.Require22
	userAuth      *bool
	groupAuth     *bool
	ownerAuth     *bool // AuthzOwnerAuthoritative: mod_authz_owner's one setting
	defaultAuth   *bool // 2.2: AuthzDefaultAuthoritative
}

func fromConf(c *translate.DirConf) accum {
	a := accum{
		compat: c.Compat, authz: c.Authz, authType: c.AuthType, authTypeRule: c.AuthTypeRule,
		authName: c.AuthName, userFile: c.UserFile, groupFile: c.GroupFile, setEnv: c.SetEnv, basicAuth: c.BasicAuthoritative, basic22: c.Basic22,
		dirIndex: c.DirIndex, handler: c.Handler, fallback: c.Fallback, pathInfo: c.AcceptPathInfo, pathInfoRule: c.AcceptPathInfoRule, dir: c.Dir, lookups: c.HostnameLookups, satisfy22: c.Satisfy22,
		satisfy22Set: c.Satisfy22Set, requires22: c.Requires22, userAuth: c.UserAuthoritative,
		groupAuth: c.GroupAuthoritative, ownerAuth: c.OwnerAuthoritative, defaultAuth: c.DefaultAuthoritative, providers: c.BasicProviders, authnDBM: c.AuthnDBM, anon: c.Anon,
		dbmGroupFile: c.DBMGroupFile, dbmGroupType: c.DBMGroupType, dbmAuth: c.DBMAuthoritative, digest: c.Digest, ldap: c.LDAP,
	}
	if c.Satisfy22Rule != nil {
		a.satisfy22Rule = *c.Satisfy22Rule
	}
	return a
}

// merge merges o over m, each module by its own rule.
func (m *accum) merge(o *accum) {
	if o.compat != nil {
		m.compat = o.compat
	}
	if o.authz != nil {
		m.authz = translate.MergeAuthz(m.authz, o.authz)
	}
	if o.authType != nil {
		m.authType, m.authTypeRule = o.authType, o.authTypeRule
	}
	if o.authName != nil {
		m.authName = o.authName
	}
	if o.userFile != nil {
		m.userFile = o.userFile
	}
	if o.groupFile != nil {
		m.groupFile = o.groupFile
	}
	switch {
	case o.basic22:
		// 2.2's mod_auth_basic has no merger: the section's
		// configuration replaces the enclosing one whole.
		m.basicAuth, m.providers, m.basic22 = o.basicAuth, o.providers, true
	default:
		if o.basicAuth != nil {
			m.basicAuth = o.basicAuth
		}
		if o.providers != nil {
			m.providers = o.providers
		}
	}
	if o.authnDBM != nil {
		m.authnDBM = o.authnDBM
	}
	if o.anon != nil {
		m.anon = o.anon
	}
	if o.dbmGroupFile != nil {
		m.dbmGroupFile, m.dbmGroupType, m.dbmAuth = o.dbmGroupFile, o.dbmGroupType, o.dbmAuth
	}
	if o.digest != nil {
		m.digest = o.digest
	}
	if o.ldap != nil {
		m.ldap = o.ldap
	}
	if len(o.setEnv) > 0 {
		m.setEnv = append(m.setEnv[:len(m.setEnv):len(m.setEnv)], o.setEnv...)
	}
	if o.dirIndex != nil {
		m.dirIndex = o.dirIndex
	}
	if o.handler != nil {
		m.handler = o.handler
	}
	if o.fallback != nil {
		m.fallback = o.fallback
	}
	if o.pathInfo != nil {
		m.pathInfo, m.pathInfoRule = o.pathInfo, o.pathInfoRule
	}
	m.dir = translate.MergeDirSettings(m.dir, o.dir)
	if o.lookups != translate.LookupsUnset {
		m.lookups = o.lookups
	}
	m.mergeOpts(o)
	for i := range m.satisfy22 {
		if o.satisfy22Set&(1<<uint(i)) != 0 {
			m.satisfy22[i], m.satisfy22Rule[i] = o.satisfy22[i], o.satisfy22Rule[i]
		}
	}
	m.satisfy22Set |= o.satisfy22Set
	if o.requires22 != nil {
		m.requires22 = o.requires22
	}
	if o.userAuth != nil {
		m.userAuth = o.userAuth
	}
	if o.groupAuth != nil {
		m.groupAuth = o.groupAuth
	}
	if o.ownerAuth != nil {
		m.ownerAuth = o.ownerAuth
	}
	if o.defaultAuth != nil {
		m.defaultAuth = o.defaultAuth
	}
}

// handlerOf is the handler a SetHandler value gives requests (core's
// fixups: "none", in any case, gives none).
func handlerOf(h *string) string {
	if h == nil || strings.EqualFold(*h, "none") {
		return ""
	}
	return *h
}

// pathInfoOff is the rule of an AcceptPathInfo Off in force, nil where
// none is (a rule-less model gets a placeholder).
func pathInfoOff(v *string, r *policy.Rule) *policy.Rule {
	if v == nil || *v != "off" {
		return nil
	}
	if r == nil {
		return &policy.Rule{Text: "AcceptPathInfo Off"}
	}
	return r
}
