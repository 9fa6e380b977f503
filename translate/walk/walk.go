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
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
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
	// hostSets are the virtual hosts that may serve a request, by
	// connection kind (tlsAny, tlsNo, tlsYes), worked out at load
	// (vhosts.go).
	hostSets [3]hostSet

	// owners tells Require file-owner and file-group who owns a file.
	owners *fileOwners
	// ldap is mod_ldap's server configuration (ldap.go).
	ldap ldapServerConf
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
	e.indexHosts()
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
	e := &Engine{cfg: cfg, fs: fsys, id: id, blind: map[string]bool{}, owners: newFileOwners(fsys)}
	e.ssl = newSSLState(cfg, fsys)
	e.ldap = newLDAPServerConf(cfg)
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
	e.indexHosts()
}

// host picks the virtual host of a request as Apache does (server/vhost.c):
// the hosts bound to the address (an exact IP first, else the wildcard
// ones), then by the Host header against ServerName and ServerAlias, else
// the first of them; with no host bound to the address, the main server.
func (e *Engine) host(hostHeader string) *Engine {
	return e.hostSets[tlsAny].host(e, hostHeader)
}

// host is the host of the set for the Host header hostHeader, or e when
// the set is empty.
func (s *hostSet) host(e *Engine, hostHeader string) *Engine {
	if len(s.hosts) == 0 {
		return e
	}
	if !s.hosts[0].v.NameBased {
		return s.hosts[0].e // 2.2, no NameVirtualHost for the address: the first host
	}
	name, _ := fixHostname(hostHeader, false) // a Host Apache refuses (400) names no host
	return s.pick(name)
}

func fnmatchFold(pattern, name string) bool {
	ok, err := path.Match(strings.ReplaceAll(pattern, "[!", "[^"), name)
	return err == nil && ok
}

// Config returns the configuration the engine decides by.
func (e *Engine) Config() *translate.Config { return e.cfg }

// Identity returns the Identity the engine checks credentials with.
func (e *Engine) Identity() policy.Identity { return e.id }

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

	// parsed is the target as PathOf parsed it for the scope lookup,
	// which the walk takes rather than parse it again when the same
	// host engine decides the same target.
	parsed parsedTarget

	// digest is what Digest authentication reads of the request, made
	// once (digestRequest).
	digest     policy.DigestRequest
	digestDone bool

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
	raw, uri, st := e.targetOf(req)
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
			Now: req.Now, Dry: req.Dry, DeferNecessity: true, Digest: req.digestRequest(uri), Owners: e.owners,
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
		// PHP's). The default handler serves only GET and POST: a method
		// Apache does not know it answers 501 ("Invalid method in
		// request", random 956), another 405 (random 934); OPTIONS it
		// answers itself.
		res.Status, res.Layer, res.Rule = http.StatusNotFound, policy.LayerConfig, m.pathInfoOff
		switch {
		case methodNum == policy.MethodInvalid:
			res.Status = http.StatusNotImplemented
		case methodNum != policy.MethodGet && req.Method != http.MethodPost:
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

// unknownEnv refuses a request (500) whose SetEnvIf attribute orderly
// cannot know as Apache has it (a header-name regex without the header
// fields as sent, Request.Headers): deciding without it could grant what
// Apache refuses.
func unknownEnv(res Result, r *translate.EnvRule) Result {
	res.Status, res.Layer, res.Rule = 500, policy.LayerConfig, r.Rule
	return res
}

// PathOf returns the URL-path req (its Target, on the host its Host
// picks) is decided on: decoded and normalised exactly as Apache does
// before any section matches; ok is false when Apache refuses the target
// itself. It keeps what it parsed in req, so that deciding req with this
// engine does not parse the target again.
func (e *Engine) PathOf(req *Request) (string, bool) {
	h := e.host(req.Host)
	raw, uri, st := h.target(req.Target)
	req.parsed = parsedTarget{e: h, target: req.Target, raw: raw, uri: uri, st: st}
	return uri, st == 0
}

// parsedTarget is the result of target for one request-target on one
// host engine.
type parsedTarget struct {
	e        *Engine
	target   string
	raw, uri string
	st       int
}

// targetOf is target for req.Target: what PathOf kept when it parsed the
// same target on e, else parsed now.
func (e *Engine) targetOf(req *Request) (string, string, int) {
	if p := &req.parsed; p.e == e && p.target == req.Target {
		return p.raw, p.uri, p.st
	}
	return e.target(req.Target)
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
