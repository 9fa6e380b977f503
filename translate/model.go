// Package translate turns a parsed Apache 2.2 configuration into orderly's
// access model: the sections of a server (Directory, DirectoryMatch,
// Files, Location, ...) with what each one contributes to every access
// module, the URL-to-file mapping (DocumentRoot, Alias), and the
// server-level request environment rules. It follows Apache's own
// per-module configuration slots so that merging a request's sections
// gives what Apache would have in force (apache-access-semantics.md §1.2,
// §4). The per-request walk over these sections is in package walk.
//
// Writing the model out as Apache 2.4 text is package translate/convert's,
// and finding in it package translate/lint's: both import translate,
// which imports neither (nor proxy, nor translate/walk).
package translate

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// Semantics says what the legacy rules mean.
type Semantics string

// The supported semantics.
const (
	// Compat24 is what Apache 2.4 does with 2.2 directives under
	// mod_access_compat: the semantics a real 2.4 server can check.
	Compat24 Semantics = "2.4-compat"
	// Legacy22 is what Apache 2.2 itself did with them: Satisfy in core
	// (a lone Satisfy does not reset Order/Allow/Deny), Require lines read
	// by mod_authz_user and mod_authz_groupfile in turn, .htaccess fully
	// allowed by default, "$" never matching in <DirectoryMatch>, "#" in
	// Allow/Deny read as host names (apache-access-semantics.md §3.2, §11).
	Legacy22 Semantics = "2.2"
)

// SectionKind is the kind of a configuration section.
type SectionKind uint8

// The section kinds that bear on access.
const (
	KindDirectory SectionKind = iota
	KindDirectoryMatch
	KindFiles
	KindFilesMatch
	KindLocation
	KindLocationMatch
	KindHtaccess // an .htaccess file, merged after the <Directory> sections of its directory
)

var kindNames = [...]string{"Directory", "DirectoryMatch", "Files", "FilesMatch", "Location", "LocationMatch", "htaccess"}

func (k SectionKind) String() string { return kindNames[k] }

// Section is one <Directory>, <DirectoryMatch>, <Files>, <FilesMatch>,
// <Location> or <LocationMatch> section (the "~" forms are the Match kinds).
type Section struct {
	Kind    SectionKind
	Pattern string        // as written
	Path    string        // Directory: canonical with a trailing "/"; Files: canonical name; Location: as written
	Regex   *regex.Regexp // the Match kinds
	Fnmatch bool          // the pattern has wildcards
	Depth   int           // Directory: number of "/" in Path ("/" itself is 0)
	Pos     apacheconf.Pos
	Order   int // position in the configuration, for stable sorting
	Conf    *DirConf
	// Default is the synthetic rule that counts the decisions this
	// section's scope made by default, when no directive decided.
	Default *policy.Rule
	// Rules are the rules of an .htaccess section (those of the main
	// configuration are in Config.Rules).
	Rules []*policy.Rule
	// Lines are the rules of the directives written in the section itself
	// (in a <Limit> or a Require container of it too, not in a section
	// nested in it), settings included, in the order written.
	Lines []*policy.Rule

	block     []*apacheconf.Directive // while building: the section's directives
	index     blockIndex              // while building: what block holds (Section.indexed)
	directive *apacheconf.Directive   // the section as parsed (Directive)
	htChain   []*Section              // an .htaccess file's: what it inherits (AddHtaccess)
}

// Directive returns the section as parsed, its directives in its Block;
// nil for an .htaccess file, which no directive holds.
func (s *Section) Directive() *apacheconf.Directive { return s.directive }

// String names the section as the configuration did.
func (s *Section) String() string {
	if s.Kind == KindHtaccess {
		return s.Pattern
	}
	return "<" + s.Kind.String() + " " + s.Pattern + ">"
}

// AuthzSlot is mod_authz_core's per-directory configuration.
type AuthzSlot struct {
	Root            *policy.Node // nil: no Require in the section
	Merge           MergeOp
	ForbiddenOnFail int8 // -1 unset, 0 off, 1 on
}

// MergeOp is AuthMerging.
type MergeOp uint8

// The AuthMerging values.
const (
	MergeUnset MergeOp = iota
	MergeOff
	MergeAnd
	MergeOr
)

// MergeAuthz is merge_authz_core_dir_config (apache-access-semantics.md §4.2): add
// over base, AuthMerging And or Or combining their Require trees.
func MergeAuthz(base, add *AuthzSlot) *AuthzSlot {
	if base == nil {
		return add
	}
	var out AuthzSlot
	switch {
	case add.Merge == MergeUnset && add.Root == nil && base.Root != nil:
		out = *base
	case add.Merge == MergeOff || add.Merge == MergeUnset || base.Root == nil && add.Root == nil:
		out = *add
	default:
		root := add.Root
		switch {
		case base.Root != nil && add.Root != nil:
			kind := policy.Any
			if add.Merge == MergeAnd {
				kind = policy.All
			}
			root = &policy.Node{Kind: kind, Methods: base.Root.Methods | add.Root.Methods, Children: []*policy.Node{base.Root, add.Root}}
		case base.Root != nil:
			root = base.Root
		}
		out = AuthzSlot{Root: root, Merge: add.Merge}
	}
	if add.ForbiddenOnFail == -1 {
		out.ForbiddenOnFail = base.ForbiddenOnFail
	} else {
		out.ForbiddenOnFail = add.ForbiddenOnFail
	}
	return &out
}

// DirConf is what one section sets, module by module. A nil field is a
// slot the section never touched, which inherits; a non-nil one takes part
// in the merge with that module's rule.
type DirConf struct {
	Compat *policy.Compat // mod_access_compat: replaces wholesale
	Authz  *AuthzSlot     // mod_authz_core: AuthMerging rules

	AuthType     *string // mod_authn_core; "" means None
	AuthTypeRule *policy.Rule
	AuthName     *string
	UserFile     *string // mod_authn_file
	// BasicAuthoritative is AuthBasicAuthoritative (nil inherits; On).
	BasicAuthoritative *bool
	// Basic22: under 2.2 semantics the section sets AuthBasicProvider or
	// AuthBasicAuthoritative, and so holds mod_auth_basic's whole
	// configuration: 2.2's module has no merger (2.4's merges each), so
	// the other is at its default there (create_auth_basic_dir_config:
	// the file provider, authoritative).
	Basic22   bool
	GroupFile *string // mod_authz_groupfile
	// BasicProviders is mod_auth_basic's AuthBasicProvider list, names
	// as written (nil inherits; a section's lines add up).
	BasicProviders []string
	// AuthnDBM is mod_authn_dbm's configuration. The module has no
	// merger: a section that sets AuthDBMUserFile or AuthDBMType replaces
	// both (nil inherits).
	AuthnDBM *AuthnDBM
	// Anon is mod_authn_anon's configuration, replaced whole as
	// AuthnDBM is (nil inherits).
	Anon *policy.Anonymous
	// Digest is mod_auth_digest's configuration (nil inherits; replaced
	// whole).
	Digest *DigestDir
	// LDAP is mod_authnz_ldap's configuration (nil inherits; replaced
	// whole).
	LDAP *LDAPDir
	// DBMGroupType is mod_authz_dbm's AuthzDBMType: with DBMGroupFile
	// and DBMAuthoritative, one configuration that replaces as AuthnDBM
	// does (all three set together, or none).
	DBMGroupType *string
	// DBMGroupFile is mod_authz_dbm's AuthDBMGroupFile
	// (2.2's Require group it serves is 2.4's Require dbm-group).
	DBMGroupFile *string
	// DBMGroupPos is where the section sets AuthDBMGroupFile (2.4), for
	// orderly serve's refusal of a file it cannot read.
	DBMGroupPos apacheconf.Pos
	// DBMAuthoritative is AuthzDBMAuthoritative (2.2; default On).
	DBMAuthoritative *bool

	SetEnv   []*EnvRule // mod_setenvif: concatenated, base first
	DirIndex []string   // mod_dir DirectoryIndex: replaces; nil inherits
	// Handler is core's SetHandler ("none" sets none); nil inherits.
	Handler *string
	// Fallback is mod_dir's FallbackResource ("disabled" sets none); nil
	// inherits.
	Fallback *string
	// Dir is mod_dir's DirectorySlash, DirectoryCheckHandler and
	// DirectoryIndexRedirect; nil where the section sets none of them.
	Dir *DirSettings
	// AcceptPathInfo is core's: "on", "off" or "default"; nil inherits.
	// AcceptPathInfoRule is its line.
	AcceptPathInfo     *string
	AcceptPathInfoRule *policy.Rule
	// HostnameLookups is core's (LookupsUnset inherits): what Remote_Host
	// is to SetEnvIf.
	HostnameLookups HostnameLookups

	Files []*Section // <Files> nested in this section: concatenated
	// Limits are core's LimitRequestBody (limits.go); nil where the
	// section sets none.
	Limits *DirLimits
	// Redirects are mod_alias's per-directory redirects, ErrorDocument
	// and UseCanonicalName (redirect.go); nil where the section sets none.
	Redirects *DirRedirects

	// Override is AllowOverride in a <Directory> section: the categories
	// of directives .htaccess files below may hold (Or* bits); 0 means
	// .htaccess files are not read. Nil inherits.
	Override *uint16
	// NonFatal is AllowOverride Nonfatal=...: violations are skipped.
	NonFatal uint16
	// OverrideOpts is what AllowOverride Options=... lets .htaccess files
	// below set with Options (override_opts); it goes with Override.
	OverrideOpts OptionBits
	// OverrideList is AllowOverrideList (2.4): the directives .htaccess
	// files below may hold whatever AllowOverride says, lower case; nil
	// inherits, empty (None) reads no file for it.
	OverrideList []string

	// Rewrite is mod_rewrite's per-directory configuration
	// (rewriteconf.go): nil where the section has no mod_rewrite
	// directive, which inherits.
	Rewrite *Rewrite

	// SSL is mod_ssl's per-directory configuration (ssl.go): nil where
	// the section has no mod_ssl directive, which inherits.
	SSL *SSLDir

	// Options is core's Options: nil where the section has no core
	// configuration of its own (an .htaccess file with no core directive;
	// every other section has one, which merges as OptUnset).
	Options *CoreOptions

	// Apache 2.2 only: Satisfy kept in core, per method (Satisfy22Set
	// marks the methods this section set), and the Require lines.
	Satisfy22 [policy.MaxMethods]policy.Satisfy
	// Satisfy22Rule names the directive that set each method's Satisfy:
	// nil where none did, and for a model only written out
	// (Options.RenderOnly), which names none.
	Satisfy22Rule *[policy.MaxMethods]*policy.Rule
	Satisfy22Set  policy.MethodMask
	Requires22    []policy.Require22 // nil: none here (inherits)
	// UserAuthoritative and GroupAuthoritative are AuthzUserAuthoritative
	// and AuthzGroupFileAuthoritative (nil inherits; default On).
	UserAuthoritative  *bool
	GroupAuthoritative *bool
	// OwnerAuthoritative is AuthzOwnerAuthoritative (2.2's
	// mod_authz_owner; nil inherits, default On).
	OwnerAuthoritative *bool
	// DefaultAuthoritative is AuthzDefaultAuthoritative (2.2's
	// mod_authz_default; nil inherits, default On).
	DefaultAuthoritative *bool
}

// AuthnDBM is mod_authn_dbm's per-directory configuration.
type AuthnDBM struct {
	UserFile string // AuthDBMUserFile ("" unset)
	Type     string // AuthDBMType ("default" unset)
	// Pos is where AuthDBMUserFile is set, for orderly serve's refusal
	// of a file it cannot read.
	Pos apacheconf.Pos
}

// A ProviderAlias is an <AuthnProviderAlias base name> section: a
// provider named name that runs base with the section's configuration
// merged over the request's (authn_alias_check_password).
type ProviderAlias struct {
	Name, Base string
	Conf       *DirConf // what the section sets
	Pos        apacheconf.Pos
}

// Alias is one Alias, ScriptAlias, AliasMatch or ScriptAliasMatch.
type Alias struct {
	Fake  string
	Real  string
	Regex *regex.Regexp // the Match forms
	Pos   apacheconf.Pos
}

// Config is the access model of a server.
type Config struct {
	Semantics    Semantics
	ServerRoot   string
	BaseDir      string // rule files are named relative to it
	DocumentRoot string
	Aliases      []Alias
	// ProviderAliases are the <AuthnProviderAlias> sections, by name
	// (the main server's: Apache allows them nowhere else).
	ProviderAliases map[string]*ProviderAlias
	Dirs            []*Section // non-regex <Directory>, sorted as ap_core_reorder_directories does
	DirMatches      []*Section // <DirectoryMatch> and <Directory ~>, configuration order
	Files           []*Section // top-level <Files>, configuration order
	Locations       []*Section // configuration order
	Defaults        *DirConf   // per-directory directives outside any section
	ServerEnv       []*EnvRule // server-level SetEnvIf, run before any section applies
	Methods         *policy.Methods

	MergeSlashes        bool
	AllowEncodedSlashes EncodedSlashes
	// Limits are the server's request limits, HttpProtocolOptions,
	// StrictHostCheck and ServerName's parts (limits.go).
	Limits ServerLimits
	// Redirects are mod_alias's server-level Redirect and RedirectMatch
	// lines, a virtual host's own before the main server's: translate_name
	// tries them before any section applies (redirect.go).
	Redirects []*Redirect
	// Rewrite is mod_rewrite's server configuration (rewriteconf.go):
	// the rules translate_name runs, a virtual host's merged with the
	// main server's; nil where the server has no mod_rewrite directive.
	Rewrite *Rewrite
	// SSL is mod_ssl's server configuration (ssl.go): nil where the
	// server has no mod_ssl server directive. sslSeen: a mod_ssl
	// directive appeared (SSLLoaded, for a model built without modules).
	SSL     *SSLServer
	sslSeen bool
	// TraceEnable is core's TraceEnable: "off" answers TRACE with 405
	// before any access control, and anything else lets Apache echo the
	// request (map_to_storage, before the section walk); "" is unset.
	TraceEnable string
	TraceRule   *policy.Rule // the TraceEnable line, which decides a 405
	// Version is the version the configuration was read as, and
	// ReadState what it defined (Define, <Macro>), for .htaccess files;
	// nil when the model was built from directives alone.
	Version   string
	ReadState *apacheconf.State
	// RegexDefaults are the regex flags RegexDefaultOptions left, which
	// .htaccess files compile with; nil: the semantics' defaults
	// (regexopts.go).
	RegexDefaults *RegexDefaults

	// AccessFileNames are the .htaccess names (AccessFileName), tried in order.
	AccessFileNames []string
	// DefaultOverride is AllowOverride where no <Directory> sets it: in
	// Apache 2.4 "unset", under which .htaccess files are read and any
	// directive in them is an error.
	DefaultOverride uint16
	// Modules are the modules loaded, by identifier ("rewrite_module").
	Modules map[string]bool

	// Rules lists every legacy directive that bears on access, in
	// configuration order, then the synthetic default rule of each scope.
	Rules []*policy.Rule
	// Default is the synthetic rule of the server scope: decisions made
	// where no section had an access directive.
	Default *policy.Rule

	// VHosts are the virtual hosts, in configuration order.
	VHosts []*VHost

	// Authz22 (2.2) lists the auth_checker hooks of the authorization
	// modules loaded, by module identifier ("authz_user_module"), in the
	// order Apache 2.2 runs them: mod_authz_groupfile's, mod_authz_user's,
	// mod_authz_dbm's, mod_authz_owner's and mod_authnz_ldap's as the
	// LoadModule order and APR's hook sort make it, then
	// mod_authz_default's when it is loaded (authz22Chain). Never nil
	// once built.
	Authz22 []string
	// Differences lists where the configuration means something else
	// under 2.2 than under 2.4 with mod_access_compat.
	Differences []Difference
	// Unfaithful lists what orderly cannot decide as Apache would
	// (mod_rewrite, third-party modules, DBM files, ...): loaded only
	// with Options.ForwardUnfaithful, and then ignored.
	Unfaithful []Difference
	// Unservable lists, in a model only written out (Options.RenderOnly),
	// what orderly serve would refuse to load and translate writes as it
	// is (a Require provider, an AuthBasicProvider alias): with
	// Unfaithful, what [Config.ServeRefusals] returns.
	Unservable apacheconf.ErrorList
	// UserDirs are the absolute UserDir paths ("/home/*/public_html",
	// "/srv/users"): for translate, directories whose .htaccess files
	// requests reach.
	UserDirs []string
	// UserDirHomes: a UserDir relative to the users' home directories
	// ("public_html"), which the configuration does not name.
	UserDirHomes bool
	// LDAPServer is mod_ldap's server configuration (a virtual host's
	// merged over the main server's); nil when no line sets any.
	LDAPServer *LDAPServer
	// ForwardUnfaithful is Options.ForwardUnfaithful, for .htaccess files.
	ForwardUnfaithful bool
	// RenderOnly is Options.RenderOnly, for .htaccess files.
	RenderOnly bool
	// ht are the .htaccess files found for this server (AddHtaccess).
	ht *htFound
	// Omit is Options.Omit, for .htaccess files.
	Omit map[string]bool
}

// Difference is a place where Apache 2.2 and Apache 2.4 with
// mod_access_compat decide differently with the same directives.
type Difference struct {
	Pos  apacheconf.Pos
	Text string
	// Moot says what is left as it is does nothing under 2.4 either (an
	// .htaccess file Apache refuses whole, or one whose access lines
	// translate commented out): it needs no mod_access_compat.
	Moot bool
	// Closed says the place refuses every request until translated by
	// hand (Require all denied).
	Closed bool
}

// VHost is a <VirtualHost>: the addresses it answers on, its names, and
// the configuration in force for requests it serves (its own directives
// merged with the main server's, as ap_fixup_virtual_hosts does).
type VHost struct {
	Addrs   []VHostAddr
	Name    string   // ServerName
	Aliases []string // ServerAlias patterns
	// NameBased says whether the host is chosen among the others of its
	// address by the Host header: always in 2.4; in 2.2 only where a
	// NameVirtualHost directive names its address (otherwise the first
	// host of the address serves every request for it).
	NameBased bool
	Pos       apacheconf.Pos
	Config    *Config
}

// VHostAddr is one address of a <VirtualHost>: an IP or a wildcard ("*",
// "_default_"), and a port or any (0).
type VHostAddr struct {
	IP       netip.Addr // invalid for a wildcard
	Port     int        // 0: any port
	Wildcard bool
}

// EncodedSlashes is AllowEncodedSlashes.
type EncodedSlashes uint8

// The AllowEncodedSlashes values.
const (
	EncodedSlashesOff EncodedSlashes = iota
	EncodedSlashesOn
	EncodedSlashesNoDecode
)

// DirSettings are mod_dir's per-directory switches (merge_dir_configs:
// each one the section sets replaces the inherited one).
type DirSettings struct {
	// Slash and CheckHandler are -1 unset, 0 Off, 1 On.
	Slash, CheckHandler int8
	// IndexRedirect is DirectoryIndexRedirect: -1 unset, 0 off, else the
	// redirect status.
	IndexRedirect int
	// IndexRedirectRule is its line.
	IndexRedirectRule *policy.Rule
}

// MergeDirSettings merges add over base.
func MergeDirSettings(base, add *DirSettings) *DirSettings {
	if base == nil {
		return add
	}
	if add == nil {
		return base
	}
	m := *base
	if add.Slash >= 0 {
		m.Slash = add.Slash
	}
	if add.CheckHandler >= 0 {
		m.CheckHandler = add.CheckHandler
	}
	if add.IndexRedirect >= 0 {
		m.IndexRedirect, m.IndexRedirectRule = add.IndexRedirect, add.IndexRedirectRule
	}
	return &m
}

// sectionAccess are the directives that make a section's access
// configuration (DirConf.WithoutAccess takes away what they set): host
// access, authorization, authentication and their settings.
var sectionAccess = map[string]bool{
	"order": true, "allow": true, "deny": true, "satisfy": true, "require": true,
	"authmerging": true, "authzsendforbiddenonfailure": true,
	"authtype": true, "authname": true, "authuserfile": true, "authgroupfile": true,
	"authbasicauthoritative": true, "authbasicprovider": true,
	"authzuserauthoritative": true, "authzgroupfileauthoritative": true, "authzdefaultauthoritative": true,
	"authzownerauthoritative": true, "authdbmgroupfile": true, "authzdbmtype": true, "authzdbmauthoritative": true, "authzldapauthoritative": true,
	"authdbmuserfile": true, "authdbmtype": true, "anonymous": true, "anonymous_nouserid": true,
	"anonymous_mustgiveemail": true, "anonymous_verifyemail": true, "anonymous_logemail": true,
	"authdigestprovider": true, "authdigestqop": true, "authdigestnoncelifetime": true, "authdigestnccheck": true,
	"authdigestalgorithm": true, "authdigestdomain": true,
	"authldapurl": true, "authldapbinddn": true, "authldapbindpassword": true, "authldapbindauthoritative": true,
	"authldapremoteuserisdn": true, "authldapremoteuserattribute": true, "authldapcomparednonserver": true,
	"authldapsubgroupattribute": true, "authldapsubgroupclass": true, "authldapmaxsubgroupdepth": true,
	"authldapgroupattribute": true, "authldapgroupattributeisdn": true, "authldapdereferencealiases": true,
	"authldapauthorizeprefix": true, "authldapinitialbindasuser": true, "authldapinitialbindpattern": true,
	"authldapsearchasuser": true, "authldapcompareasuser": true,
}

// IsSectionAccess reports whether a rule's directive (its text, "Deny
// from all") belongs to its section's access configuration: the lines
// whose deletion together is DirConf.WithoutAccess. A Require inside a
// <RequireAll> is its own line; the container has none.
func IsSectionAccess(text string) bool {
	name, _, _ := strings.Cut(text, " ")
	return sectionAccess[strings.ToLower(name)]
}

// HasAccess reports whether the section configuration sets any part of
// the access configuration.
func (c *DirConf) HasAccess() bool {
	return c.Compat != nil || c.Authz != nil || c.AuthType != nil || c.AuthName != nil || c.UserFile != nil ||
		c.BasicAuthoritative != nil || c.GroupFile != nil || c.Satisfy22Set != 0 || c.Requires22 != nil ||
		c.UserAuthoritative != nil || c.GroupAuthoritative != nil || c.OwnerAuthoritative != nil || c.DefaultAuthoritative != nil || c.BasicProviders != nil || c.AuthnDBM != nil || c.Anon != nil || c.Digest != nil || c.LDAP != nil ||
		c.DBMGroupFile != nil
}

// WithoutAccess is the configuration with its access configuration taken
// away, as if the section's access directives (IsSectionAccess) were
// deleted: what the section would merge as without them.
func (c *DirConf) WithoutAccess() *DirConf {
	d := *c
	d.Compat, d.Authz = nil, nil
	d.AuthType, d.AuthTypeRule, d.AuthName, d.UserFile, d.BasicAuthoritative, d.GroupFile, d.Basic22 = nil, nil, nil, nil, nil, nil, false
	d.Satisfy22, d.Satisfy22Rule, d.Satisfy22Set, d.Requires22 = [policy.MaxMethods]policy.Satisfy{}, nil, 0, nil
	d.UserAuthoritative, d.GroupAuthoritative, d.OwnerAuthoritative, d.DefaultAuthoritative = nil, nil, nil, nil
	d.BasicProviders, d.AuthnDBM, d.Anon, d.Digest, d.LDAP = nil, nil, nil, nil, nil
	d.DBMGroupFile, d.DBMGroupType, d.DBMAuthoritative = nil, nil, nil
	return &d
}

// ServeRefusals returns what orderly serve would refuse at load in a
// configuration read for writing out (Options.RenderOnly, as convert.Convert reads
// it), without legacy.forward_unfaithful: each "file:line: message" as
// Load would give it. The .htaccess files are not in it: read them through
// [Config.ServeView].
func (c *Config) ServeRefusals() apacheconf.ErrorList {
	out := slices.Clip(c.Unservable)
	for _, u := range c.Unfaithful {
		out = append(out, unfaithfulRefusal(u))
	}
	return out
}

// ServeView returns c as orderly serve reads the .htaccess files under it
// (no RenderOnly, no ForwardUnfaithful): a copy, sharing everything else,
// for walk's CheckHtaccess on a model built for writing out.
func (c *Config) ServeView() *Config {
	v := *c
	v.RenderOnly, v.ForwardUnfaithful = false, false
	return &v
}
