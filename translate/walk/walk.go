// Package walk decides one request the way Apache httpd does: it
// normalises the URL, maps it to a file name (Alias, DocumentRoot), walks
// the real file system to find which <Directory> sections apply, adds
// <DirectoryMatch>, <Files> and <Location> sections in Apache's order,
// merges what they set module by module, runs SetEnvIf, and asks package
// policy for the decision. It is the one home of Apache's per-request
// section walk (server/request.c), shared by the proxy and by explain.
//
// walk imports translate and policy; it never imports proxy.
package walk

import (
	"errors"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/regex"
)

// FS is the file system the directory walk reads. OS is the real one.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error)  { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) ReadFile(name string) ([]byte, error)   { return os.ReadFile(name) }

// OS is the file system of this machine.
var OS FS = osFS{}

// Engine decides requests for one translated configuration. It is
// immutable and safe for concurrent use.
type Engine struct {
	cfg    *translate.Config
	fs     FS
	id     policy.Identity
	cache  sync.Map // uint64 hash of a section list -> *merged
	cached atomic.Int64
	ht     sync.Map // .htaccess path and categories -> *htEntry

	blind     map[string]bool // Alias targets orderly cannot read
	hosts     []hostEngine    // virtual hosts, in configuration order
	localIP   netip.Addr      // the legacy server's address this traffic stands for
	localPort int
	prior     map[string]*policy.Rule // Inherit: the replaced engine's rules, by ID

	// wantsRaw: a SetEnvIf rule of the configuration needs headers_in as
	// the client sent it (translate.EnvRule.WantsRaw); rawSeen: one of an
	// .htaccess file read since does. Shared by the virtual hosts.
	wantsRaw bool
	rawSeen  *atomic.Bool

	// ssl is mod_ssl (ssl.go); sslHosts: a virtual host has SSLEngine
	// on, and TLS requests pick among those.
	ssl      *sslState
	sslHosts bool
}

// New returns an Engine over cfg that reads the file system fsys and
// checks passwords with id.
func New(cfg *translate.Config, fsys FS, id policy.Identity) *Engine {
	if fsys == nil {
		fsys = OS
	}
	e := newEngine(cfg, fsys, id)
	e.wantsRaw, e.rawSeen = cfg.EnvWantsRaw(), new(atomic.Bool)
	for _, v := range cfg.VHosts {
		h := newEngine(v.Config, fsys, id)
		h.rawSeen = e.rawSeen
		e.hosts = append(e.hosts, hostEngine{v: v, e: h})
	}
	e.sslHosts = e.sslVHosts()
	return e
}

// WantsRawHeaders reports whether a SetEnvIf rule (of the configuration,
// or of an .htaccess file read so far) needs the request's header fields
// as the client sent them, in order and as spelled (Request.Headers),
// where Go's form of the request may not tell what Apache has. Without
// them such a rule refuses the requests it cannot decide (500).
func (e *Engine) WantsRawHeaders() bool {
	return e.wantsRaw || e.rawSeen != nil && e.rawSeen.Load()
}

func newEngine(cfg *translate.Config, fsys FS, id policy.Identity) *Engine {
	e := &Engine{cfg: cfg, fs: fsys, id: id, blind: map[string]bool{}}
	e.ssl = newSSLState(cfg, fsys)
	for _, a := range cfg.Aliases {
		if a.Regex != nil {
			continue
		}
		if _, err := fsys.Stat(a.Real); err != nil {
			e.blind[a.Real] = true
		}
	}
	return e
}

// Blind lists the Alias targets orderly cannot read: requests mapped into
// them are refused (403) rather than decided without their <Directory>
// sections.
func (e *Engine) Blind() []string {
	var out []string
	for p := range e.blind {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

type hostEngine struct {
	v *translate.VHost
	e *Engine
}

// SetLegacyAddress says which address and port of the legacy server the
// traffic orderly receives stands for, for <VirtualHost> selection. An
// invalid ip matches only wildcard hosts; port 0 matches any port. Call it
// before the engine is used.
func (e *Engine) SetLegacyAddress(ip netip.Addr, port int) {
	e.localIP, e.localPort = ip.Unmap(), port
}

// host picks the virtual host of a request as Apache does (server/vhost.c):
// the hosts bound to the address (an exact IP first, else the wildcard
// ones), then by the Host header against ServerName and ServerAlias, else
// the first of them; with no host bound to the address, the main server.
func (e *Engine) host(hostHeader string) *Engine {
	set := e.addressHosts()
	if len(set) == 0 {
		return e
	}
	if !set[0].v.NameBased {
		return set[0].e // 2.2, no NameVirtualHost for the address: the first host
	}
	name, _ := fixHostname(hostHeader, false) // a Host Apache refuses (400) names no host
	if name != "" {
		for _, h := range set {
			if h.v.Name == name {
				return h.e
			}
			for _, a := range h.v.Aliases {
				if a == name || strings.ContainsAny(a, "*?[") && fnmatchFold(a, name) {
					return h.e
				}
			}
		}
	}
	return set[0].e
}

func fnmatchFold(pattern, name string) bool {
	ok, err := path.Match(strings.ReplaceAll(pattern, "[!", "[^"), name)
	return err == nil && ok
}

// Config returns the configuration the engine decides by.
func (e *Engine) Config() *translate.Config { return e.cfg }

// Request is one HTTP request as access control needs it.
type Request struct {
	Method string
	Target string // the request-target as sent
	Host   string // the Host header, for <VirtualHost> selection
	Proto  string // "HTTP/1.1"
	Header http.Header
	// Headers, when set, is headers_in as SetEnvIf reads it; nil reads
	// Header (translate.HeaderMap: exact but for header-name regexes that
	// more than one name, or a name of unknown spelling, can match).
	Headers    translate.Headers
	ClientAddr netip.Addr
	LocalAddr  netip.Addr
	Auth       policy.Credentials
	// TLSInfo is the request's TLS: over TLS or not, the client
	// certificate (ssl.go).
	TLSInfo TLSInfo
	// Resolver gives the client's verified host name for host rules; nil
	// means the client has none.
	Resolver HostResolver
	Now      int64 // unix nanoseconds, for rules' last-hit times; 0 leaves them alone
	// Dry decides without counting (policy.Request.Dry).
	Dry bool
	// TLS says the request came over TLS: the scheme of the URLs Apache
	// builds (ap_construct_url).
	TLS bool

	hostDone bool
	host     string
	hostOK   bool

	// rw is mod_rewrite's state across the request's internal redirects.
	rw rewriteRun

	// Remote_Host's name: r->useragent_host, once looked up.
	nameDone bool
	name     string

	// subNeed are the rules necessary to the request's subrequests'
	// decisions, counted with the main request's (countNecessary).
	subNeed  [policy.MaxNecessary]policy.Necessity
	nSubNeed uint8
	// secNeed are the sections found necessary so far
	// (sectionsNecessary), by their synthetic rules.
	secNeed  [8]*policy.Rule
	nSecNeed uint8
}

// subNecessary keeps what a subrequest's decision needed, for
// countNecessary; past the room it has, a rule is counted at once.
func (r *Request) subNecessary(d *policy.Decision) {
next:
	for _, n := range d.Necessary() {
		for _, m := range r.subNeed[:r.nSubNeed] {
			if m.Rule == n.Rule {
				continue next
			}
		}
		if int(r.nSubNeed) == len(r.subNeed) {
			n.Count(r.Now)
			continue
		}
		r.subNeed[r.nSubNeed] = n
		r.nSubNeed++
	}
}

// HostResolver finds the double-reverse verified name of an address.
type HostResolver interface {
	Verified(netip.Addr) (string, bool)
}

// NameResolver finds the name of an address (its PTR name, lower case,
// as apr_getnameinfo gives it) without the forward check, for
// HostnameLookups On. A HostResolver that is not one gives no name under
// On.
type NameResolver interface {
	Name(netip.Addr) (string, bool)
}

// RemoteName implements translate.RemoteNamer: SetEnvIf's Remote_Host,
// as ap_get_useragent_host(r, REMOTE_NAME) gives it. Under HostnameLookups
// On or Double it looks the name up (Double: kept only when verified),
// once per request; under Off it looks nothing up, but a name looked up
// earlier in the request is still given. Without a name it is the
// client's address.
func (r *Request) RemoteName(l translate.HostnameLookups) string {
	if !r.nameDone && (l == translate.LookupsOn || l == translate.LookupsDouble) {
		r.nameDone = true
		switch {
		case r.Resolver == nil:
		case l == translate.LookupsDouble:
			r.name, _ = r.VerifiedHost()
		default:
			if nr, ok := r.Resolver.(NameResolver); ok {
				r.name, _ = nr.Name(r.ClientAddr)
			}
		}
	}
	if r.name != "" {
		return r.name
	}
	return r.ClientAddr.Unmap().String()
}

// VerifiedHost implements policy.HostNamer: the name is looked up at most
// once per request, as Apache caches it per connection, and shared with
// DirectoryIndex subrequests.
func (r *Request) VerifiedHost() (string, bool) {
	if !r.hostDone {
		r.hostDone = true
		if r.Resolver != nil {
			r.host, r.hostOK = r.Resolver.Verified(r.ClientAddr)
		}
	}
	return r.host, r.hostOK
}

// Result is a decision with what led to it.
type Result struct {
	policy.Decision
	URI      string // r->uri
	Filename string // r->filename after the walk
	PathInfo string
	Sections []*translate.Section // the sections that applied, in merge order
	Env      policy.Env
	Index    string // the DirectoryIndex file whose check decided, if any

	// SlashesKept is set when URI keeps %2F escapes undecoded
	// (AllowEncodedSlashes NoDecode; under 2.2, On as well), where Apache
	// reads %2F and %252F alike; otherwise every "%" in URI is a literal
	// percent sign.
	SlashesKept bool

	dirN int // how many of Sections the directory walk found
	// dirOpts are the options the directory walk left in force, with
	// <DirectoryMatch> sections merged (a DirectoryIndex subrequest's walk
	// tests its index file with them).
	dirOpts translate.OptionBits
	// matchEnv are the MATCH_<NAME> variables named groups of matching
	// regex sections set (name, value, ...).
	matchEnv []string

	// ht is what the request's walk read of .htaccess files, shared with
	// its subrequests, as Apache's walk cache is (prep_walk_cache): a
	// subrequest sees the same sections, so the same merged
	// configuration, as its main request even while a file is too new
	// for the engine's cache to trust.
	ht *htMemo

	// storageFailed is set when the directory walk (map_to_storage)
	// refused the request: Apache's per-directory configuration is then
	// the server's defaults (ap_process_request_internal resets it before
	// the walk, which sets it only when it completes), so no section's
	// ErrorDocument applies.
	storageFailed bool

	// RegexErr is a regex whose evaluation did not finish (its timeout):
	// the request is refused with 500 rather than decided without it.
	RegexErr error

	// Location is where a redirect sends the client (a 3xx Status).
	Location string
	// Rewritten is what mod_rewrite did, if anything (rewrite.go).
	Rewritten *Rewritten
	// clientURI is the URI the client sent, where the rules rewrote it
	// (ForwardURI).
	clientURI string
	// aliased says an Alias mapped the URI (mod_rewrite's context
	// prefix).
	aliased bool
	// preFilename is the file the server's rewrite rules mapped the URI
	// to: translate_name is done.
	preFilename string
	// prevWalk is the walk cache of the request an internal redirect
	// comes from, which the new request's directory walk may reuse
	// (redirectWalk); cachedDir is what the walk cache keeps of this
	// walk (cache->cached).
	prevWalk  *walkCache
	cachedDir string
	// served is, for a look-ahead subrequest, the file its fixups put in
	// its place: the index or fallback mod_dir served
	// (ap_internal_fast_redirect), or "redirect:" and the URL of a
	// rewrite's internal redirect.
	served string
	// engine is the server that decided (BodyLimit).
	engine *Engine

	// CompatFrom and AuthzFrom are the sections whose Order/Allow/Deny/
	// Satisfy and Require configurations were in force: the two layers
	// inherit independently (apache-access-semantics.md §9.3).
	CompatFrom, AuthzFrom *translate.Section

	// main is the main request's policy decision, whose necessary rules
	// are counted once the final answer is known (countNecessary).
	main mainDecision
}

// ForwardURI is the path to forward: the client's request's, decoded and
// normalised (URI), even where mod_rewrite mapped it to another.
func (r *Result) ForwardURI() string {
	if r.clientURI != "" {
		return r.clientURI
	}
	return r.URI
}

// mainDecision is what countNecessary needs of the main request's policy
// decision.
type mainDecision struct {
	need     [policy.MaxNecessary]policy.Necessity
	n        uint8
	sec      [4]policy.Necessity // sections (sectionsNecessary)
	nsec     uint8
	allowed  bool
	sections []*translate.Section
}

// decide runs access control for req (Decide, limits.go, runs the
// phases around it). tr may be nil.
func (e *Engine) decide(req *Request, tr policy.Tracer) (out Result) {
	lk := req.rw.lookup // a look-ahead subrequest (lookup.go): its server is its main request's
	if h := e.hostFor(req); lk == nil && h != e {
		return h.Decide(req, tr)
	}
	// Whichever result the walk answers with (an index subrequest's, a
	// fallback's), it carries the main decision for countNecessary.
	var main mainDecision
	defer func() { out.main = main }()
	var res Result
	if req.rw.hasEnv {
		// An internal redirect starts from the environment of the request
		// before it (rename_original_env), and its walk cache.
		res.Env, req.rw.hasEnv = *req.rw.env, false
		if req.rw.hasCache {
			res.prevWalk, req.rw.hasCache = &req.rw.cache, false
		}
	}
	// ap_process_request_internal: the path is unescaped and its dot
	// segments resolved first (400 for a bad escape or a path above the
	// root, 404 for an encoded slash), TRACE after.
	raw, uri, st := e.target(req.Target)
	fileReq := lk != nil && lk.file != ""
	if fileReq {
		// A file subrequest: its path was normalised (fileLookup), and
		// translate_name does not run.
		raw, uri, st, res.preFilename = lk.uri, lk.uri, 0, lk.file
	}
	if st != 0 {
		res.Status, res.Layer = st, policy.LayerRequest
		return res
	}
	rewriting := e.serverRewriteOn() || req.rw.redirects != 0 || lk != nil
	if !rewriting && e.trace(req, &res) {
		return res
	}
	if uri == "" && !fileReq {
		// "OPTIONS *" maps to no file and no section.
		return res
	}
	req.rw.uri = uri
	res.URI = uri
	res.SlashesKept = e.cfg.AllowEncodedSlashes == translate.EncodedSlashesNoDecode ||
		e.cfg.Semantics == translate.Legacy22 && e.cfg.AllowEncodedSlashes != translate.EncodedSlashesOff
	// post_read_request: server-level SetEnvIf sees the raw path, under
	// the server's HostnameLookups.
	in := translate.EnvInput{
		Headers: req.Headers, Header: req.Header, RemoteAddr: req.ClientAddr, ServerAddr: req.LocalAddr,
		Method: req.Method, Protocol: req.Proto, URI: raw, Lookups: e.cfg.Defaults.HostnameLookups,
		Names: req, Now: req.Now, Dry: req.Dry,
	}
	if lk != nil {
		// A subrequest runs neither post_read_request nor header_parser.
	} else if r := translate.ApplyEnv(e.cfg.ServerEnv, &in, &res.Env); r != nil {
		return unknownEnv(res, r)
	}
	if rewriting && !fileReq {
		// translate_name: mod_rewrite's rules, then mod_alias's redirects
		// (which Decide runs itself where no rewrite rule can run first);
		// TRACE after, in map_to_storage.
		if r, done := e.translate(req, &res, &uri, req.rw.kind(), tr); done {
			return r
		}
		if e.trace(req, &res) {
			return res
		}
		res.URI, req.rw.uri = uri, uri
	}
	in.URI = uri

	methodNum := e.cfg.Methods.Number(req.Method)
	m, w, st := e.walk(uri, &res)
	if st != 0 {
		// A file system error or a broken .htaccess file.
		res.Status, res.Layer = st, policy.LayerConfig
		return res
	}
	for i := 0; i+1 < len(res.matchEnv); i += 2 {
		res.Env.Set(res.matchEnv[i], res.matchEnv[i+1])
	}
	// header_parser: the merged per-directory SetEnvIf list, under the
	// merged HostnameLookups.
	in.Lookups = m.lookups
	if lk != nil {
		// The main request's only.
	} else if r := translate.ApplyEnv(m.setEnv, &in, &res.Env); r != nil {
		return unknownEnv(res, r)
	}
	prevM, prevUser := req.rw.prevM, req.rw.prevUser
	req.rw.prevM = nil
	switch {
	case lk != nil && lk.parentM == m:
		// A subrequest with its main request's configuration skips
		// access control and takes its user (ap_process_request_internal).
		res.User = lk.parentUser
	case prevM == m:
		// So does an internal redirect with the configuration of the
		// request it comes from (r->prev->per_dir_config).
		res.User = prevUser
	default:
		pr := policy.Request{
			Method: methodNum, Addr: req.ClientAddr, LocalAddr: req.LocalAddr,
			Env: res.Env, URI: uri, Filename: res.Filename, Auth: req.Auth, Host: req,
			Now: req.Now, Dry: req.Dry, DeferNecessity: true,
		}
		pr.SSL = e.sslRequest(req, m, res.Filename, lk != nil)
		e.decideInto(&res, m, &pr, tr)
		m.covered(&pr)
		if lk == nil {
			e.sectionsNecessary(m, &pr, &res.Decision, req, &main)
		} else {
			e.sectionsNecessary(m, &pr, &res.Decision, req, nil) // counted at once
		}
		main.n = uint8(copy(main.need[:], res.Decision.Necessary()))
		main.allowed, main.sections = res.Status == 0, res.Sections
	}
	res.CompatFrom, res.AuthzFrom = m.compatFrom, m.authzFrom
	if res.Status == 0 && m.rewrite != nil {
		// mod_rewrite's fixup comes first (APR_HOOK_FIRST).
		switch out, target := e.dirRewrite(req, m, &res, uri, req.rw.kind(), tr); out {
		case rewriteAnswered:
			return res
		case rewriteRedirect:
			if e.fixupRedirect(req, &res) {
				return res
			}
			if w.isDir && res.PathInfo == "" && !strings.HasSuffix(uri, "/") && m.dir.Slash != 0 && !carefully(req, &res) {
				if lk != nil {
					res.Status = http.StatusMovedPermanently
				}
				return res // fixup_dir's DirectorySlash redirect comes before the handler
			}
			if lk != nil {
				// The handler, which a lookup never reaches, redirects.
				res.served = "redirect:" + target
				return res
			}
			req.rw.prevM = m
			return e.internalRedirect(req, target, &res, tr)
		}
	}
	if res.Status == 0 && e.fixupRedirect(req, &res) {
		return res // mod_alias's fixups come before mod_dir's
	}
	if res.Status == 0 && !w.isDir && !w.isReg && m.fallback != "" && m.handler == "" {
		return e.fallbackResource(req, m, res, tr)
	}
	if lk != nil && (res.Status != 0 || !w.isDir) {
		return res // no handler runs for a lookup
	}
	if res.Status == 0 && w.isReg && res.PathInfo != "" && m.pathInfoOff != nil && req.Method != http.MethodOptions {
		// AcceptPathInfo Off: core's fixup makes the request reject path
		// info, and its handler answers 404 (the default handler, mod_cgi,
		// PHP's). The default handler serves only GET and POST: another
		// method it answers 405 (random 934); OPTIONS it answers itself.
		res.Status, res.Layer, res.Rule = http.StatusNotFound, policy.LayerConfig, m.pathInfoOff
		if methodNum != policy.MethodGet && req.Method != http.MethodPost {
			res.Status = http.StatusMethodNotAllowed
		}
		return res
	}
	if res.Status != 0 || !w.isDir {
		return res
	}
	if !strings.HasSuffix(uri, "/") {
		// fixup_dir: DirectorySlash redirects (the backend answers it);
		// Off leaves the directory to its handler, mod_autoindex's
		// without an index lookup.
		if lk != nil && m.dir.Slash != 0 {
			res.Status = http.StatusMovedPermanently // the lookup's status
		}
		if lk == nil && m.dir.Slash == 0 && e.autoindexForbids(m, methodNum) {
			e.autoindexRefuseNames(&res, m, "none")
		}
		return res
	}
	if m.dir.CheckHandler == 1 && m.handler != "" {
		// DirectoryCheckHandler On: another handler takes the directory
		// over, with no index subrequest.
		return res
	}
	return e.dirIndex(req, m, res, methodNum, tr)
}

// carefully is fixup_dir's exception to its DirectorySlash redirect: a
// method other than GET where the environment has redirect-carefully.
func carefully(req *Request, res *Result) bool {
	_, set := res.Env.Get("redirect-carefully")
	return req.Method != "GET" && set
}

// trace is http_core's map_to_storage hook (ap_send_http_trace), which
// answers TRACE before the section walk and access control: 405 under
// TraceEnable Off, the echoed request otherwise (the path was checked
// before: one above the root is 400, an encoded slash 404 under
// AllowEncodedSlashes Off, whatever TraceEnable says).
func (e *Engine) trace(req *Request, res *Result) bool {
	if req.Method != "TRACE" {
		return false
	}
	if e.cfg.TraceEnable == "off" {
		res.Status, res.Layer, res.Rule = http.StatusMethodNotAllowed, policy.LayerRequest, e.cfg.TraceRule
		if r := e.cfg.TraceRule; r != nil && !req.Dry {
			r.Hit(req.Now)
		}
	}
	return true
}

// countNecessary counts the rules necessary to the main request's
// decision that the final answer depends on. One is not, where the main
// decision granted and without the rule would have refused with the very
// answer the request got anyway (an index subrequest refused it): the
// refusal would have come sooner, the same. Every other one counts, a
// count too many only ever calling a removable rule needed.
//
// A rule necessary to a subrequest's decision counts too, once per
// request whatever the number of decisions it was necessary to.
func (e *Engine) countNecessary(req *Request, res *Result) {
	var counted [2 * policy.MaxNecessary]*policy.Rule
	k := 0
	for _, n := range res.main.sec[:res.main.nsec] {
		if slices.Contains(req.secNeed[:req.nSecNeed], n.Rule) ||
			res.main.allowed && res.Status != 0 && n.Status == res.Status && (n.Status != http.StatusUnauthorized || n.Realm == res.Realm) &&
				e.dirRedirects(res.main.sections).ErrorURL(n.Status) == "" {
			continue
		}
		n.Rule.AddNecessary(1)
	}
	for _, n := range res.main.need[:res.main.n] {
		if res.main.allowed && res.Status != 0 && n.Status == res.Status && (n.Status != http.StatusUnauthorized || n.Realm == res.Realm) &&
			e.dirRedirects(res.main.sections).ErrorURL(n.Status) == "" {
			continue
		}
		n.Count(req.Now)
		counted[k] = n.Rule
		k++
	}
	for _, n := range req.subNeed[:req.nSubNeed] {
		if !slices.Contains(counted[:k], n.Rule) {
			n.Count(req.Now)
		}
	}
	req.nSubNeed, req.nSecNeed = 0, 0
}

// dirSettings are mod_dir's switches in force, unset ones at their
// defaults (DirectorySlash On, DirectoryCheckHandler Off, no index
// redirect).
func dirSettings(d *translate.DirSettings) translate.DirSettings {
	s := translate.DirSettings{Slash: 1, CheckHandler: 0, IndexRedirect: 0}
	if d == nil {
		return s
	}
	if d.Slash >= 0 {
		s.Slash = d.Slash
	}
	if d.CheckHandler >= 0 {
		s.CheckHandler = d.CheckHandler
	}
	if d.IndexRedirect >= 0 {
		s.IndexRedirect, s.IndexRedirectRule = d.IndexRedirect, d.IndexRedirectRule
	}
	return s
}

// fallbackResource is mod_dir's fixup_dflt (2.2.16 and later, 2.4): a
// request that maps to nothing on the file system, and that no SetHandler
// gives a handler, is served by a subrequest for FallbackResource (a GET,
// decided by its own sections), whose refusal or redirect is the answer.
// The subrequest runs mod_dir's fixups too: a directory gets its index
// subrequests, and a fallback that maps to nothing falls back again,
// until the subrequest nesting limit answers 500 (AH00125). Where mod_mime
// gives the request a handler by its extension (AddHandler) Apache does
// not fall back; orderly, which does not know those handlers, still
// decides the subrequest, which can only refuse more.
func (e *Engine) fallbackResource(req *Request, m *merged, res Result, tr policy.Tracer) Result {
	sub, served := e.fallbackSub(req, m, res, req.rw.depth()+1, tr)
	if served {
		res.served = sub.lookupFilename()
	}
	logs := append(res.Logs(), sub.Logs()...)
	if sub.Status != 0 && sub.Status != 404 {
		// The status only: fixup_dflt copies the subrequest's headers
		// for a redirect, not a 401's WWW-Authenticate.
		sub.NoChallenge = sub.Status == 401
		sub.URI, sub.Filename, sub.Env = res.URI, res.Filename, res.Env
		sub.SetLogs(logs)
		return sub
	}
	res.SetLogs(logs)
	return res
}

// maxSubrequestDepth is LimitInternalRecursion's default for subrequests.
const maxSubrequestDepth = 10

// ah00125 is what Apache logs for a subrequest past the nesting limit.
var ah00125 = policy.LogLine{Module: "core", Level: "error", Code: "AH00125", Subject: "Request exceeded the limit of 10 subrequest nesting levels due to probable configuration error. Use 'LimitInternalRecursion' to increase the limit if necessary. Use 'LogLevel debug' to get a backtrace."}

// fallbackSub is the subrequest for the fallback of the request res (at
// nesting depth depth): its decision, and whether it serves a file (the
// request is then served as the subrequest, ap_internal_fast_redirect).
func (e *Engine) fallbackSub(req *Request, m *merged, res Result, depth int, tr policy.Tracer) (Result, bool) {
	var sub Result
	shareWalk(&sub, &res)
	if depth > maxSubrequestDepth {
		sub.Status, sub.Layer = 500, policy.LayerConfig
		sub.AddLogs([]policy.LogLine{ah00125})
		return sub, false
	}
	target := m.fallback
	if !strings.HasPrefix(target, "/") {
		// ap_sub_req_lookup_uri: relative to the directory of r->uri,
		// escaped again.
		target = osEscapePath(res.URI[:strings.LastIndexByte(res.URI, '/')+1]) + target
	}
	_, suburi, st := e.target(target)
	if st != 0 {
		sub.Status, sub.Layer = st, policy.LayerConfig
		return sub, false
	}
	sub.Env = res.Env // mod_rewrite copies it before it sets a variable
	if rr, ok := e.subTranslate(req, &sub, &suburi, tr); ok {
		return rr, false // mod_rewrite's and mod_alias's translate_name, for the subrequest too
	}
	env := sub.Env
	sm, sw, st := e.walk(suburi, &sub)
	sub.URI, sub.Env = suburi, env
	if st != 0 {
		sub.Status, sub.Layer = st, policy.LayerConfig
		return sub, false
	}
	e.subAccess(req, m, sm, &res, &sub, suburi, tr)
	if sub.Status == 0 && sm.rewrite != nil {
		if out, _ := e.dirRewrite(req, sm, &sub, suburi, kindDirSub, tr); out != rewriteNone {
			// orderly does not follow a fallback subrequest that
			// mod_rewrite rewrites: fail closed.
			sub.Status, sub.Layer = http.StatusInternalServerError, policy.LayerConfig
			sub.AddLogs([]policy.LogLine{{Module: "orderly", Subject: "mod_rewrite rewrote the FallbackResource subrequest, which orderly does not follow"}})
			return sub, false
		}
	}
	if sub.Status == 0 && e.fixupRedirect(req, &sub) {
		// mod_alias's fixups, before mod_dir's: fixup_dflt answers the
		// subrequest's redirect, or its error.
		return sub, false
	}
	switch {
	case sub.Status != 0:
		return sub, false
	case sw.isDir && strings.HasSuffix(suburi, "/"):
		sub = e.dirIndex(req, sm, sub, policy.MethodGet, tr)
		return sub, sub.Status == 0 && sub.Index != ""
	case !sw.isDir && !sw.isReg && sm.fallback != "" && sm.handler == "":
		next, served := e.fallbackSub(req, sm, sub, depth+1, tr)
		next.SetLogs(append(sub.Logs(), next.Logs()...))
		return next, served
	}
	return sub, sw.isReg
}

// subAccess is the access check of a subrequest of mod_dir's, which
// looks its index or fallback up with ap_sub_req_lookup_uri: a GET,
// whatever the main request's method; skipped, with the user copied,
// where its merged configuration is its main request's (m), as
// ap_process_request_internal does (r->main->per_dir_config).
func (e *Engine) subAccess(req *Request, m, sm *merged, main, sub *Result, suburi string, tr policy.Tracer) {
	if sm == m {
		sub.Decision = policy.Decision{User: main.User, Layer: main.Layer, Rule: main.Rule}
		return
	}
	pr := policy.Request{
		Method: policy.MethodGet, Addr: req.ClientAddr, LocalAddr: req.LocalAddr,
		Env: sub.Env, URI: suburi, Filename: sub.Filename, Auth: req.Auth, Host: req,
		Now: req.Now, Dry: req.Dry, DeferNecessity: true,
	}
	pr.SSL = e.sslRequest(req, sm, sub.Filename, true)
	e.decideInto(sub, sm, &pr, tr)
	sm.covered(&pr)
	req.subNecessary(&sub.Decision)
	e.sectionsNecessary(sm, &pr, &sub.Decision, req, nil)
}

// decideInto makes the access decision of res under m, after the log
// lines res already holds (what its look-ahead subrequests logged in
// translate_name).
func (e *Engine) decideInto(res *Result, m *merged, pr *policy.Request, tr policy.Tracer) {
	var pre []policy.LogLine
	if len(res.Logs()) > 0 {
		pre = append(pre, res.Logs()...)
	}
	res.Decision = policy.Decide(m.layers, pr, e.id, tr)
	if len(pre) > 0 {
		res.SetLogs(append(pre, res.Logs()...))
	}
}

// fallbackOf is the FallbackResource a value gives ("disabled", in any
// case, gives none).
func fallbackOf(f *string) string {
	if f == nil || strings.EqualFold(*f, "disabled") {
		return ""
	}
	return *f
}

// unknownEnv refuses a request (500) whose SetEnvIf attribute orderly
// cannot know as Apache has it (a header-name regex without the header
// fields as sent, Request.Headers): deciding without it could grant what
// Apache refuses.
func unknownEnv(res Result, r *translate.EnvRule) Result {
	res.Status, res.Layer, res.Rule = 500, policy.LayerConfig, r.Rule
	return res
}

// Path returns the URL-path a request for target on host is decided on:
// decoded and normalised exactly as Apache does before any section
// matches. ok is false when Apache refuses the target itself.
func (e *Engine) Path(host, target string) (string, bool) {
	_, uri, st := e.host(host).target(target)
	return uri, st == 0
}

// target parses a request-target as ap_parse_uri and normalises its path.
// It returns the raw path (without query), the normalised URI ("" for
// "*"), and the status of a refusal.
func (e *Engine) target(raw string) (string, string, int) {
	if strings.IndexByte(raw, '#') >= 0 {
		// "URI must not contain a fragment" (server/protocol.c, RFC 3986 3.5).
		return raw, "", 400
	}
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		raw = raw[:i]
	}
	// ap_parse_uri: a request-target is a path, not a network-path
	// reference; extra leading slashes go before anything reads it
	// (MergeSlashes Off or not).
	for strings.HasPrefix(raw, "//") {
		raw = raw[1:]
	}
	if !strings.HasPrefix(raw, "/") {
		switch {
		case raw == "*":
			return raw, "", 0
		case strings.Contains(raw, "://"):
			// Absolute-form: Apache decides on the path of the URI
			// (ap_parse_uri), and so does the backend orderly forwards to.
			rest := raw[strings.Index(raw, "://")+3:]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				raw = rest[j:]
			} else {
				raw = "/"
			}
		default:
			// Authority-form (CONNECT) and anything else: refused rather
			// than guessed at.
			return raw, "", 400
		}
	}
	var uri string
	var st int
	if e.cfg.Semantics == translate.Legacy22 {
		uri, st = NormalizePath22(raw, e.cfg.AllowEncodedSlashes != translate.EncodedSlashesOff)
	} else {
		uri, st = NormalizePath(raw, e.cfg.MergeSlashes, uint8(e.cfg.AllowEncodedSlashes))
	}
	return raw, uri, st
}

// dirIndex repeats the check for each DirectoryIndex file as mod_dir's
// subrequests do (mod_dir.c fixup_dir): the first allowed regular file is
// served; a refusal of the only candidate, or any error when no candidate
// exists, is the answer. Apache logs what each subrequest logged.
func (e *Engine) dirIndex(req *Request, m *merged, res Result, methodNum int, tr policy.Tracer) Result {
	names := m.dirIndex
	if names == nil {
		names = defaultIndex
	}
	errStatus := 0
	var errRes Result
	var logs policy.Decision
	logs.SetLogs(res.Logs())
	for _, name := range names {
		var sub Result
		shareWalk(&sub, &res)
		if req.rw.depth() >= maxSubrequestDepth {
			// A look-ahead subrequest at the nesting limit makes no more
			// (AH00125): each index subrequest is a 500.
			sub.Status, sub.Layer = http.StatusInternalServerError, policy.LayerConfig
			logs.AddLogs([]policy.LogLine{ah00125})
			errStatus, errRes = sub.Status, sub
			continue
		}
		suburi := res.URI + name
		if strings.HasPrefix(name, "/") {
			suburi = name
		}
		sub.Env = res.Env // mod_rewrite copies it before it sets a variable
		asked := suburi
		if rr, ok := e.subTranslate(req, &sub, &suburi, tr); ok {
			// mod_rewrite's or mod_alias's translate_name answers the
			// subrequest: fixup_dir answers a redirect at once (a
			// rewrite's, which the backend makes), keeps an error.
			logs.AddLogs(rr.Logs())
			if translate.IsRedirect(rr.Status) || rr.Status == 0 {
				rr.Index, rr.URI, rr.Filename = name, res.URI, res.Filename
				rr.SetLogs(logs.Logs())
				return rr
			}
			errStatus, errRes = rr.Status, rr
			continue
		}
		pre, env := sub.preFilename, sub.Env
		var sm *merged
		var sw walked
		var st int
		ok := false
		if pre == "" && suburi == asked {
			// The index file is the directory's own (no rewrite rule
			// mapped it elsewhere): the main request's walk serves.
			sm, sw, st, ok = e.indexWalk(&res, name, suburi, &sub)
		}
		if !ok {
			logged := append([]policy.LogLine(nil), sub.Logs()...)
			sub = Result{preFilename: pre}
			sub.SetLogs(logged)
			shareWalk(&sub, &res)
			if res.cachedDir != "" && !res.storageFailed {
				// The subrequest starts from the main request's walk
				// cache (prep_walk_cache): a file in the directory that
				// walk ended in takes its <Directory> sections as they are.
				sub.prevWalk = &walkCache{dir: res.cachedDir, opts: res.dirOpts, sections: res.Sections[:res.dirN]}
			}
			sm, sw, st = e.walk(suburi, &sub)
		}
		sub.URI = suburi
		sub.Env = env
		if st != 0 {
			sub.Status, sub.Layer = st, policy.LayerConfig // with what the walk logged
		} else {
			e.subAccess(req, m, sm, &res, &sub, suburi, tr)
		}
		if sub.Status == 0 && st == 0 && sm.rewrite != nil {
			// mod_rewrite's fixup, for the subrequest too.
			switch out, target := e.dirRewrite(req, sm, &sub, suburi, kindDirSub, tr); {
			case out == rewriteAnswered && translate.IsRedirect(sub.Status):
				// A redirect to a URL: fixup_dir sends it.
				logs.AddLogs(sub.Logs())
				sub.Index, sub.URI, sub.Filename = name, res.URI, res.Filename
				sub.SetLogs(logs.Logs())
				return sub
			case out == rewriteRedirect && sw.isReg && req.rw.lookup != nil:
				// The index is served by mod_rewrite's handler, which a
				// lookup does not reach.
				res.Index, res.served = name, "redirect:"+target
				res.SetLogs(logs.Logs())
				return res
			case out == rewriteRedirect && sw.isReg:
				// The index is served (ap_internal_fast_redirect), by
				// mod_rewrite's handler: an internal redirect.
				req.rw.prevM = sm
				return e.internalRedirect(req, target, &sub, tr)
			case out == rewriteRedirect:
				sub.Index = name
				logs.AddLogs(sub.Logs())
				continue // not a file: the next name
			}
		}
		if sub.Status == 0 && e.fixupRedirect(req, &sub) && translate.IsRedirect(sub.Status) {
			// mod_alias's fixups run for the subrequest too, before
			// mod_dir's: fixup_dir answers its redirect at once (an
			// error, such as a redirect to a non-URL, is kept as one).
			logs.AddLogs(sub.Logs())
			sub.Index = name
			sub.URI, sub.Filename = res.URI, res.Filename
			sub.SetLogs(logs.Logs())
			return sub
		}
		served := sw.isReg
		if sub.Status == 0 && !sw.isReg && !sw.isDir && sm.fallback != "" && sm.handler == "" {
			// The index subrequest maps to nothing: its own fixups fall
			// back (fixup_dflt), and a served fallback serves the
			// directory.
			fb, ok := e.fallbackSub(req, sm, sub, req.rw.depth()+2, tr)
			fb.SetLogs(append(sub.Logs(), fb.Logs()...))
			sub, served = fb, ok
		}
		sub.Index = name
		logs.AddLogs(sub.Logs())
		if sub.Status == 0 && served {
			if m.dir.IndexRedirect != 0 {
				// DirectoryIndexRedirect: an external redirect to the
				// index (ap_construct_url of the subrequest's path, no
				// query).
				res.Status, res.Layer, res.Rule = m.dir.IndexRedirect, policy.LayerConfig, m.dir.IndexRedirectRule
				res.Location = e.constructURL(req, suburi, e.dirRedirects(m.sections))
			}
			res.Index, res.served = name, sub.lookupFilename()
			res.SetLogs(logs.Logs())
			return res
		}
		if sub.Status == 401 && len(names) == 1 {
			sub.URI, sub.Filename = res.URI, res.Filename
			sub.SetLogs(logs.Logs())
			return sub
		}
		if sub.Status != 0 && sub.Status != 404 {
			errStatus, errRes = sub.Status, sub
		}
	}
	if errStatus != 0 {
		// fixup_dir returns the last error of several candidates as a
		// status only: the subrequest's headers (WWW-Authenticate) stay
		// behind.
		errRes.NoChallenge = len(names) > 1
		errRes.URI, errRes.Filename = res.URI, res.Filename
		errRes.SetLogs(logs.Logs())
		return errRes
	}
	res.SetLogs(logs.Logs())
	if req.rw.lookup == nil && e.autoindexForbids(m, methodNum) {
		e.autoindexRefuse(&res, m) // the handler's
	}
	return res
}

var defaultIndex = []string{"index.html"}

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

// sectionAlt is the access decision's layers as they would be without
// one section's access configuration (translate.DirConf.WithoutAccess).
type sectionAlt struct {
	sec    *translate.Section
	layers *policy.Layers
}

// sectionAlts returns m's alternatives, one for each section with an
// access configuration of its own.
func (e *Engine) sectionAlts(m *merged) []sectionAlt {
	if p := m.alts.Load(); p != nil {
		return *p
	}
	alts := []sectionAlt{}
	for i, s := range m.sections {
		if s.Default == nil || !s.Conf.HasAccess() {
			continue
		}
		without := *s
		without.Conf = s.Conf.WithoutAccess()
		secs := slices.Clone(m.sections)
		secs[i] = &without
		alts = append(alts, sectionAlt{sec: s, layers: e.mergeNow(secs).layers})
	}
	m.alts.Store(&alts)
	return alts
}

// sectionsNecessary finds the sections whose access configuration is
// necessary to decision d of pr, made with m: deciding again without it
// answers otherwise (another status, or for a 401 another realm). Each is
// counted once per request on the section's synthetic rule
// (Rule.Necessary), in the main request and its subrequests alike; a
// count too many only ever calls a removable section needed.
//
// A subrequest's are counted at once; the main request's wait for the
// final answer (countNecessary), which may make one of them moot.
func (e *Engine) sectionsNecessary(m *merged, pr *policy.Request, d *policy.Decision, req *Request, main *mainDecision) {
	if pr.Dry {
		return
	}
	for _, alt := range e.sectionAlts(m) {
		if slices.Contains(req.secNeed[:req.nSecNeed], alt.sec.Default) {
			continue
		}
		q := *pr
		q.Dry, q.DeferNecessity = true, false
		a := policy.Decide(alt.layers, &q, e.id, nil)
		if a.Status == d.Status && (d.Status != http.StatusUnauthorized || a.Realm == d.Realm) {
			continue
		}
		n := policy.Necessity{Rule: alt.sec.Default, Status: a.Status, Realm: a.Realm}
		if main != nil && int(main.nsec) < len(main.sec) {
			main.sec[main.nsec] = n
			main.nsec++
			continue
		}
		alt.sec.Default.AddNecessary(1)
		if int(req.nSecNeed) < len(req.secNeed) {
			req.secNeed[req.nSecNeed] = alt.sec.Default
			req.nSecNeed++
		}
	}
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
	if e.cfg.Semantics == translate.Legacy22 {
		lg := &policy.Legacy22{
			Satisfy: a.satisfy22, SatisfyRule: a.satisfy22Rule, Requires: a.requires22,
			UserAuthoritative: a.userAuth == nil || *a.userAuth, GroupAuthoritative: a.groupAuth == nil || *a.groupAuth,
			GroupFirst: e.cfg.GroupFirst,
		}
		l.Legacy, l.Authz = lg, nil
	}
	m.layers = l
	return m
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
}

func fromConf(c *translate.DirConf) accum {
	a := accum{
		compat: c.Compat, authz: c.Authz, authType: c.AuthType, authTypeRule: c.AuthTypeRule,
		authName: c.AuthName, userFile: c.UserFile, groupFile: c.GroupFile, setEnv: c.SetEnv, basicAuth: c.BasicAuthoritative,
		dirIndex: c.DirIndex, handler: c.Handler, fallback: c.Fallback, pathInfo: c.AcceptPathInfo, pathInfoRule: c.AcceptPathInfoRule, dir: c.Dir, lookups: c.HostnameLookups, satisfy22: c.Satisfy22,
		satisfy22Set: c.Satisfy22Set, requires22: c.Requires22, userAuth: c.UserAuthoritative,
		groupAuth: c.GroupAuthoritative,
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
	if o.basicAuth != nil {
		m.basicAuth = o.basicAuth
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
}

// walk maps uri to a file and finds every section that applies, in
// Apache's order: <Directory> by depth over the real file system,
// <DirectoryMatch>, <Files> (top-level ones, then those nested in the
// sections that applied), <Location>. It returns their merged
// configuration.
func (e *Engine) walk(uri string, res *Result) (*merged, walked, int) {
	cfg := e.cfg
	var w walked
	filename, st := res.preFilename, 0
	if filename == "" {
		filename, res.aliased, st = e.translateName(uri)
	}
	if st != 0 {
		return nil, w, st
	}
	if res.prevWalk != nil {
		if m, w, st, ok := e.redirectWalk(res.prevWalk, uri, filename, res); ok {
			return m, w, st
		}
	}
	if res.Sections == nil {
		res.Sections = make([]*translate.Section, 0, 8)
	}
	fname, pathInfo, isDir, isReg, opts, st := e.dirWalk(filename, res)
	if st != 0 {
		res.storageFailed = true
		return nil, w, st
	}
	res.Filename, res.PathInfo = fname, pathInfo
	w.isDir, w.isReg = isDir, isReg
	for _, s := range cfg.DirMatches {
		if matchRegex(s, fname, res) {
			res.Sections = append(res.Sections, s)
			opts = mergeOptions(opts, s)
		}
	}
	res.dirOpts = opts.Opts
	res.dirN = len(res.Sections)
	res.cachedDir = fname
	if !isDir {
		res.cachedDir = fname[:strings.LastIndexByte(fname, '/')+1] // ap_make_dirstr_parent
	}
	m := e.fileAndLocation(uri, fname, res)
	if res.RegexErr != nil {
		return nil, w, 500
	}
	return m, w, 0
}

// indexWalk is the walk of a DirectoryIndex subrequest for a file that
// exists: Apache reuses the directory walk of the main request, whose
// directory is the file's (the walk cache of server/request.c), so only
// <Files> and <Location> are walked again.
func (e *Engine) indexWalk(main *Result, name, uri string, sub *Result) (*merged, walked, int, bool) {
	fname := main.Filename + name
	if strings.Contains(name, "/") || !strings.HasSuffix(main.Filename, "/") {
		return nil, walked{}, 0, false
	}
	fi, err := e.fs.Stat(fname)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, walked{}, 0, false
	}
	sub.Filename = fname
	if st := e.indexSymlink(main, fname, sub); st != 0 {
		return nil, walked{}, st, true
	}
	sub.Sections = append(make([]*translate.Section, 0, 8), main.Sections[:main.dirN]...)
	sub.dirN, sub.dirOpts = main.dirN, main.dirOpts
	return e.fileAndLocation(uri, fname, sub), walked{isReg: true}, 0, true
}

// fileAndLocation adds the <Files> sections (top-level ones, then those
// nested in the sections that applied) and the <Location> sections, and
// returns the merged configuration.
func (e *Engine) fileAndLocation(uri, fname string, res *Result) *merged {
	cfg := e.cfg
	base := fname
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	matchFile := func(s *translate.Section) {
		var ok bool
		switch {
		case s.Regex != nil:
			ok = matchRegex(s, base, res)
		case s.Fnmatch:
			ok = fnmatch(s.Path, base)
		default:
			ok = s.Path == base
		}
		if ok {
			res.Sections = append(res.Sections, s)
		}
	}
	for _, s := range cfg.Files {
		matchFile(s)
	}
	for _, d := range res.Sections {
		if d.Kind == translate.KindFiles || d.Kind == translate.KindFilesMatch {
			break
		}
		for _, s := range d.Conf.Files {
			matchFile(s)
		}
	}
	locURI := uri
	if !cfg.MergeSlashes {
		locURI = no2slash(uri)
	}
	for _, s := range cfg.Locations {
		if locationMatches(s, uri, locURI, res) {
			res.Sections = append(res.Sections, s)
		}
	}
	return e.merge(res.Sections)
}

// translateName is mod_alias's translate_name, then core's: the first
// matching Alias wins; otherwise DocumentRoot plus the URI.
func (e *Engine) translateName(uri string) (filename string, aliased bool, status int) {
	for _, a := range e.cfg.Aliases {
		if a.Regex != nil {
			mm, err := a.Regex.FindStringSubmatchIndex(uri)
			if err != nil {
				return "", false, 500 // a regex that did not finish (regex.MatchError)
			}
			if mm != nil {
				return cleanFilename(expand(a.Real, uri, mm)), true, 0
			}
			continue
		}
		if n := translate.AliasMatches(uri, a.Fake); n > 0 {
			if e.blind[a.Real] {
				// orderly cannot see this tree: Apache might apply
				// <Directory> sections it cannot find. Fail closed.
				return "", false, 403
			}
			return cleanFilename(a.Real + uri[n:]), true, 0
		}
	}
	p := strings.TrimLeft(uri, "/")
	root := e.cfg.DocumentRoot
	if p == "" {
		return cleanFilename(root + "/"), false, 0
	}
	return cleanFilename(root + "/" + p), false, 0
}

func expand(tmpl, src string, m []int) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if (c == '$' && i+1 < len(tmpl) && tmpl[i+1] >= '0' && tmpl[i+1] <= '9') || c == '&' {
			n := 0
			if c == '$' {
				n = int(tmpl[i+1] - '0')
				i++
			}
			if 2*n+1 < len(m) && m[2*n] >= 0 {
				b.WriteString(src[m[2*n]:m[2*n+1]])
			}
			continue
		}
		if c == '\\' && i+1 < len(tmpl) {
			i++
			c = tmpl[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}

// cleanFilename canonicalises a file name as apr_filepath_merge does on
// Unix: "//" and "." segments go, ".." removes the previous segment, a
// trailing "/" stays.
func cleanFilename(p string) string {
	trailing := strings.HasSuffix(p, "/")
	c := path.Clean(p)
	if trailing && c != "/" {
		c += "/"
	}
	return c
}

// dirWalk is ap_directory_walk over the real file system. It merges the
// <Directory> sections of each directory from "/" down, stops at the
// first component that is a regular file or does not exist, and returns
// r->filename, path_info and the type of what was found.
func (e *Engine) dirWalk(filename string, res *Result) (fname, pathInfo string, isDir, isReg bool, opts translate.CoreOptions, status int) {
	dirs := e.cfg.Dirs
	idx := 0
	allow := translate.HtaccessAllow{Override: e.cfg.DefaultOverride, Opts: translate.OptOverrideDefault}
	// The options merged so far (core_opts_merge): each component is
	// tested with those of the directory that holds it (options.go).
	opts = e.serverOptions()
	apply := func(prefix string, depth int) int {
		for ; idx < len(dirs); idx++ {
			s := dirs[idx]
			if s.Depth > depth {
				break
			}
			if s.Depth != 0 && (s.Depth < depth || !(s.Fnmatch && fnmatch(s.Path, prefix) || !s.Fnmatch && s.Path == prefix)) {
				continue
			}
			res.Sections = append(res.Sections, s)
			opts = mergeOptions(opts, s)
			if s.Conf.Override != nil {
				allow.Override, allow.NonFatal, allow.Opts = *s.Conf.Override, s.Conf.NonFatal, s.Conf.OverrideOpts
			}
			if s.Conf.OverrideList != nil {
				allow.List = s.Conf.OverrideList
			}
		}
		// The directory's .htaccess, after its <Directory> sections.
		if !allow.Reads() {
			return 0
		}
		sec, st, broken := e.htaccessMemo(res, prefix, allow)
		if st != 0 {
			// r->filename is the directory being walked, with its slash
			// (what %{LA-U:REQUEST_FILENAME} reads of a subrequest the
			// file refused).
			res.Filename = prefix
		}
		if broken != nil {
			// Apache's line ([core:alert] FILE: MESSAGE, no code), and
			// the rule that names the directive behind the 500.
			res.Rule = broken.rule
			if broken.alert != "" {
				res.AddLogs([]policy.LogLine{{Module: "core", Level: "alert", Subject: broken.alert}})
			}
		}
		if sec != nil {
			res.Sections = append(res.Sections, sec)
			opts = mergeOptions(opts, sec)
		}
		return st
	}
	// The whole path exists: where FollowSymLinks (without
	// SymLinksIfOwnerMatch) is in force, Apache skips the component's
	// lstat and treats it as a directory.
	whole, err := e.fs.Stat(filename)
	wholeOK := err == nil && (whole.IsDir() || !strings.HasSuffix(filename, "/"))

	// Walk the components by index: "next" is the path up to and including
	// the current component, "rest" what follows it (path_info if the
	// walk stops here).
	depth := 1
	if st := apply("/", 0); st != 0 {
		return "/", filename, false, false, opts, st
	}
	for start := 1; start < len(filename); {
		segEnd := len(filename)
		if j := strings.IndexByte(filename[start:], '/'); j >= 0 {
			segEnd = start + j
		}
		next, rest := filename[:segEnd], filename[segEnd:]
		dirPrefix := func() string {
			if segEnd < len(filename) {
				return filename[:segEnd+1]
			}
			return next + "/"
		}
		start = segEnd + 1
		if wholeOK && opts.Opts&(translate.OptSymOwner|translate.OptSymLinks) == translate.OptSymLinks {
			depth++
			if st := apply(dirPrefix(), depth); st != 0 {
				return next, rest, false, false, opts, st
			}
			continue
		}
		fi, err := e.fs.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return next, rest, false, false, opts, 0
			}
			// EACCES (AH00035), ENOTDIR and the rest (AH00036): 403.
			return next, rest, false, false, opts, 403
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			var ok bool
			if fi, ok = e.symlinkOK(next, fi, opts.Opts); !ok {
				symlinkRefused(res, "AH00037", next)
				res.Rule = e.optionsRule(res.Sections, translate.OptSymLinks|translate.OptSymOwner)
				return next, rest, false, false, opts, 403
			}
		}
		switch {
		case fi.Mode().IsRegular():
			return next, rest, false, true, opts, 0
		case fi.IsDir():
			depth++
			if st := apply(dirPrefix(), depth); st != 0 {
				return next, rest, false, false, opts, st
			}
		default:
			return next, rest, false, false, opts, 403
		}
	}
	// Every component was consumed.
	if wholeOK {
		return filename, "", whole.IsDir(), whole.Mode().IsRegular(), opts, 0
	}
	return filename, "", true, false, opts, 0
}

// fnmatch is apr_fnmatch with APR_FNM_PATHNAME: "*", "?" and "[...]" never
// match "/".
func fnmatch(pattern, name string) bool {
	return regex.Fnmatch(pattern, name, regex.FnmPathname)
}

// htEntry is a parsed .htaccess file, kept while the file is unchanged.
type htEntry struct {
	mod  int64
	size int64
	ino  uint64
	sec  *translate.Section
	err  error
	// broken stands for the file when it does not load.
	broken *brokenFile
}

// htaccess reads the .htaccess file of a directory (prefix ends in "/") as
// ap_parse_htaccess does: the first AccessFileName that exists is parsed
// with the AllowOverride categories in force; an error in it answers 500
// for everything below, a file that exists but cannot be read 403. It is
// looked at on every request, as Apache does, and parsed again when it
// changes, so edits take effect without a restart.
func (e *Engine) htaccess(prefix string, allow translate.HtaccessAllow) (*translate.Section, int, *brokenFile) {
	for _, name := range e.cfg.AccessFileNames {
		p := prefix + name
		fi, err := e.fs.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			return nil, 403, nil // AH00529: unable to check htaccess file
		}
		if !fi.Mode().IsRegular() {
			return nil, 403, nil
		}
		key := htKey(p, allow)
		mod, size, ino := fi.ModTime().UnixNano(), fi.Size(), inode(fi)
		if v, ok := e.ht.Load(key); ok {
			h := v.(*htEntry)
			// A file changed within the clock's resolution may look the
			// same: only trust entries older than two seconds.
			if h.mod == mod && h.size == size && h.ino == ino && time.Since(time.Unix(0, mod)) > 2*time.Second {
				return h.sec, htStatus(h.err), h.broken
			}
		}
		data, err := e.fs.ReadFile(p)
		if err != nil {
			return nil, 403, nil
		}
		sec, err := e.cfg.ParseHtaccessWith(p, data, allow, e.cfg.BaseDir)
		if sec != nil && e.rawSeen != nil && translate.SectionWantsRaw(sec) {
			e.rawSeen.Store(true)
		}
		if sec != nil {
			// Counters of rules that did not change survive the edit,
			// and a reload.
			if v, ok := e.ht.Load(key); ok && v.(*htEntry).sec != nil {
				adopt(sec.Rules, v.(*htEntry).sec.Rules)
			} else if e.prior != nil {
				for _, r := range sec.Rules {
					if o := e.prior[r.ID]; o != nil {
						r.Adopt(o)
					}
				}
			}
		}
		h := &htEntry{mod: mod, size: size, ino: ino, sec: sec, err: err}
		if err != nil {
			h.broken = newBrokenFile(p, err, e.cfg.BaseDir)
			if v, ok := e.ht.Load(key); ok && v.(*htEntry).broken != nil {
				h.broken.rule.Adopt(v.(*htEntry).broken.rule)
			} else if o := e.prior[h.broken.rule.ID]; o != nil {
				h.broken.rule.Adopt(o)
			}
		}
		e.ht.Store(key, h)
		return sec, htStatus(err), h.broken
	}
	return nil, 0, nil
}

// htKey keys a path read under what allow allows, for the engine's cache
// of .htaccess files and a request's memo of them.
func htKey(path string, allow translate.HtaccessAllow) string {
	return path + "\x00" + strconv.Itoa(int(allow.Override)) + "\x00" + strconv.Itoa(int(allow.NonFatal)) + "\x00" + strconv.Itoa(int(allow.Opts)) + "\x00" + strings.Join(allow.List, " ")
}

// htMemo holds the .htaccess files one request (and its subrequests)
// read, by the key of the engine's cache.
type htMemo struct {
	files map[string]htRead
}

type htRead struct {
	sec    *translate.Section
	st     int
	broken *brokenFile
}

// htaccessMemo is htaccess, read once per request: a subrequest given the
// main request's memo (shareWalk) sees what the main request saw.
func (e *Engine) htaccessMemo(res *Result, prefix string, allow translate.HtaccessAllow) (*translate.Section, int, *brokenFile) {
	key := htKey(prefix, allow)
	if res.ht != nil {
		if r, ok := res.ht.files[key]; ok {
			return r.sec, r.st, r.broken
		}
	}
	sec, st, broken := e.htaccess(prefix, allow)
	if sec == nil && st == 0 && broken == nil {
		return nil, 0, nil // no file: nothing to share
	}
	if res.ht == nil {
		res.ht = &htMemo{files: map[string]htRead{}}
	}
	res.ht.files[key] = htRead{sec, st, broken}
	return sec, st, broken
}

// shareWalk gives a subrequest its main request's .htaccess memo.
func shareWalk(sub, main *Result) {
	if main.ht == nil {
		main.ht = &htMemo{files: map[string]htRead{}}
	}
	sub.ht = main.ht
}

func htStatus(err error) int {
	if err != nil {
		return 500
	}
	return 0
}

// adopt makes the rules of to that kept their ID count on the counters
// of their copies in from.
func adopt(to, from []*policy.Rule) {
	byID := make(map[string]*policy.Rule, len(from))
	for _, r := range from {
		byID[r.ID] = r
	}
	for _, r := range to {
		if o := byID[r.ID]; o != nil && o != r {
			r.Adopt(o)
		}
	}
}

// Inherit carries the counters of old, the engine this one replaces on a
// reload, to the rules that kept their ID: those of the configuration
// now, those of .htaccess files as they are read. It returns how many
// configuration rules kept theirs. Call it before e is in use.
func (e *Engine) Inherit(old *Engine) int {
	prior := map[string]*policy.Rule{}
	for id, r := range old.prior {
		prior[id] = r // saved state not yet claimed by an .htaccess file
	}
	for _, r := range old.Rules() {
		prior[r.ID] = r
	}
	kept := 0
	for _, r := range e.cfg.Rules {
		if o := prior[r.ID]; o != nil {
			r.Adopt(o)
			kept++
		}
	}
	e.prior = prior
	for i := range e.hosts {
		e.hosts[i].e.prior = prior
	}
	return kept
}

// Restore gives the counters of saved rules (orderly's state_file) to the
// rules with their IDs: those of the configuration now, those of .htaccess
// files as they are read. It returns the rules of saved that no rule has
// claimed yet. Call it before e is in use.
func (e *Engine) Restore(saved []*policy.Rule) []*policy.Rule {
	byID := map[string]*policy.Rule{}
	for _, r := range saved {
		byID[r.ID] = r
	}
	for _, r := range e.cfg.Rules {
		if s := byID[r.ID]; s != nil {
			r.Adopt(s)
			delete(byID, r.ID)
		}
	}
	if e.prior == nil {
		e.prior = map[string]*policy.Rule{}
	}
	for id, r := range byID {
		e.prior[id] = r
	}
	for i := range e.hosts {
		e.hosts[i].e.prior = e.prior
	}
	var left []*policy.Rule
	for _, r := range byID {
		left = append(left, r)
	}
	return left
}

// Unclaimed returns the saved or inherited rules no rule in force has
// claimed yet (the .htaccess files not read since), so that saving state
// does not lose them.
func (e *Engine) Unclaimed() []*policy.Rule {
	have := map[string]bool{}
	for _, r := range e.Rules() {
		have[r.ID] = true
	}
	var out []*policy.Rule
	for id, r := range e.prior {
		if !have[id] {
			out = append(out, r)
		}
	}
	return out
}

// HtaccessRules returns the rules of the .htaccess files read so far.
func (e *Engine) HtaccessRules() []*policy.Rule {
	var out []*policy.Rule
	e.ht.Range(func(_, v any) bool {
		if h := v.(*htEntry); h.sec != nil {
			out = append(out, h.sec.Rules...)
		} else if h.broken != nil {
			out = append(out, h.broken.rule)
		}
		return true
	})
	return out
}

// HtaccessSections returns the .htaccess files read so far, as sections.
func (e *Engine) HtaccessSections() []*translate.Section {
	var out []*translate.Section
	e.ht.Range(func(_, v any) bool {
		if h := v.(*htEntry); h.sec != nil {
			out = append(out, h.sec)
		}
		return true
	})
	return out
}

// Rules returns every rule the engine decides with: the configuration's
// (virtual hosts' included) and those of the .htaccess files read so far.
func (e *Engine) Rules() []*policy.Rule {
	out := append(append([]*policy.Rule(nil), e.cfg.Rules...), e.HtaccessRules()...)
	for _, h := range e.hosts {
		out = append(out, h.e.HtaccessRules()...)
		out = append(out, h.v.Config.Default)
	}
	return out
}

// regexFailed records a section's regex that did not finish: the walk
// answers 500, with the section's rule and a line that says why.
func regexFailed(s *translate.Section, err error, res *Result) {
	if res.RegexErr != nil {
		return
	}
	res.RegexErr = err
	res.Rule = s.Default
	res.AddLogs([]policy.LogLine{{Module: "orderly", Subject: s.String() + " at " + s.Pos.String() + ": " + err.Error()}})
}

// matchRegex matches a regex section; its named groups set MATCH_<NAME>
// variables, as the walks of server/request.c do (ap_regname with
// AP_REG_MATCH, upper case).
func matchRegex(s *translate.Section, subject string, res *Result) bool {
	names := s.Regex.SubexpNames()
	named := false
	for _, n := range names {
		if n != "" {
			named = true
			break
		}
	}
	if !named {
		ok, err := s.Regex.MatchString(subject)
		if err != nil {
			regexFailed(s, err, res)
		}
		return ok
	}
	m, err := s.Regex.FindStringSubmatchIndex(subject)
	if err != nil {
		regexFailed(s, err, res)
	}
	if m == nil {
		return false
	}
	for i, n := range names {
		if n != "" && m[2*i] >= 0 {
			res.matchEnv = append(res.matchEnv, "MATCH_"+strings.ToUpper(n), subject[m[2*i]:m[2*i+1]])
		}
	}
	return true
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
