package lint

import (
	"cmp"
	"fmt"
	"net/netip"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// A scope is one per-directory configuration: a <Directory>, <Files>,
// <Location> ... section or an .htaccess file. Directives inside <Limit>,
// <LimitExcept> and the <Require*> containers belong to the enclosing
// scope (apache-access-semantics.md §1.2, §4.5).
type scope struct {
	sec    *dir // nil for an .htaccess file
	ht     *htFile
	kind   string // lower-case section name, or "htaccess"
	header string
	pos    apacheconf.Pos
	vh     *vhost
	parent *scope // the enclosing scope in the text
	path   string // the file-system path it applies to; "" unknown (regex, unmapped)
	uri    string // a plain <Location>'s URI
	phase  int    // merge phase (§4.3): 0 Directory/.htaccess, 1 DirectoryMatch, 2 Files, 3 Location, 4 If
	depth  int    // 2 × path components, +1 for .htaccess
	order  int
	own    []*node
	compat compatSum
	req    reqSum
	auth   *dir // AuthType (not None)
}

// word is one argument of Allow/Deny from.
type word struct {
	kind string // all, ip, host, env
	text string
}

// compatSum summarises a scope's own Order/Allow/Deny/Satisfy outside
// <Limit> (apache-access-semantics.md §3.1).
type compatSum struct {
	set     bool // any Order/Allow/Deny/Satisfy, <Limit> included
	rules   bool // any Order/Allow/Deny outside <Limit>
	limited bool // some inside <Limit>
	order   string
	allows  []word
	denies  []word
	satisfy string // "", "any", "all"
	satD    *dir
	first   *dir
}

func (c *compatSum) ord() string {
	if c.order == "" {
		return "deny,allow"
	}
	return c.order
}

func hasAll(ws []word) bool {
	return slices.ContainsFunc(ws, func(w word) bool { return w.kind == "all" })
}

// admitsAll reports whether Order/Allow/Deny let every client through.
func (c *compatSum) admitsAll() bool {
	if c.limited {
		return false
	}
	if c.ord() == "deny,allow" {
		return hasAll(c.allows) || len(c.denies) == 0
	}
	return hasAll(c.allows) && len(c.denies) == 0
}

// refusesAll reports whether Order/Allow/Deny refuse every client.
func (c *compatSum) refusesAll() bool {
	if c.limited {
		return false
	}
	if c.ord() == "deny,allow" {
		return hasAll(c.denies) && len(c.allows) == 0
	}
	return len(c.allows) == 0 || hasAll(c.denies)
}

// reqSum summarises a scope's own Require lines and containers.
type reqSum struct {
	set     bool
	newForm bool // a 2.4-only form: Require all/ip/host/env/local/method/expr/not, a container
	lines   []*dir
	first   *dir
	onlyAll string // "granted" or "denied" when the scope's only Require is 'Require all ...'
}

// newProviders are the Require providers (and 'not') that 2.2 did not
// have.
var newProviders = map[string]bool{"all": true, "ip": true, "host": true, "env": true, "local": true,
	"method": true, "expr": true, "not": true, "forward-dns": true, "dbm-group": true, "dbd-group": true}

func isScopeSection(n *node) bool {
	if !n.d.IsSection() {
		return false
	}
	switch n.name {
	case "directory", "directorymatch", "files", "filesmatch", "location", "locationmatch", "if", "elseif", "else", "proxy", "proxymatch":
		return true
	}
	return false
}

func components(p string) int {
	if p == "/" || p == "" {
		return 0
	}
	return strings.Count(strings.Trim(p, "/"), "/") + 1
}

// buildScopes makes the scopes of nodes and gives each its scope: first
// for those of the configuration, then (htaccess) for those of the
// .htaccess files read, whose own scopes come before all others.
func (l *linter) buildScopes(nodes []*node, htaccess bool) {
	if l.secScope == nil {
		l.secScope = map[*dir]*scope{}
	}
	secScope := l.secScope
	htScope := map[*htFile]*scope{}
	var hts, made []*scope
	if htaccess {
		for _, h := range l.hts {
			s := &scope{ht: h, kind: "htaccess", header: h.path, pos: posAtStart(h.path), path: h.dir, phase: 0, depth: 2*components(h.dir) + 1, order: 1 << 30}
			if len(h.ds) > 0 {
				s.pos = posOf(h.ds[0])
			}
			htScope[h] = s
			hts = append(hts, s)
		}
	}
	inner := func(n *node) *scope {
		for i := len(n.parents) - 1; i >= 0; i-- {
			if s, ok := secScope[n.parents[i]]; ok {
				return s
			}
		}
		if n.ht != nil {
			return htScope[n.ht]
		}
		return nil
	}
	// The directives of a block share their parents (model), and so
	// their scope: it is looked up once per block.
	var lastParents []*dir
	var lastHt *htFile
	var last *scope
	for i, n := range nodes {
		if i == 0 || n.ht != lastHt || !sameSlice(n.parents, lastParents) {
			last, lastParents, lastHt = inner(n), n.parents, n.ht
		}
		n.scope = last
		if n.scope != nil {
			n.scope.own = append(n.scope.own, n)
		}
		if !isScopeSection(n) {
			continue
		}
		d := n.d
		s := &scope{sec: d, kind: n.name, header: written(d), pos: posOf(d), vh: n.vh, parent: n.scope, order: l.order}
		l.order++
		regex := len(d.Args) > 0 && d.Args[0] == "~"
		arg := ""
		if len(d.Args) > 0 {
			arg = d.Args[len(d.Args)-1]
		}
		switch s.kind {
		case "directory":
			if regex {
				s.phase = 1
			} else {
				s.path = l.abs(arg)
				s.depth = 2 * components(s.path)
			}
		case "directorymatch":
			s.phase = 1
		case "files", "filesmatch":
			s.phase = 2
			if s.parent != nil {
				s.path = s.parent.path
			}
		case "location":
			s.phase = 3
			if !regex && !hasWildcard(arg) {
				s.uri = arg
				s.path = l.mapURI(arg, n.vh)
			}
		case "locationmatch", "proxy", "proxymatch":
			s.phase = 3
		default: // If, ElseIf, Else
			s.phase = 4
			if s.parent != nil {
				s.path = s.parent.path
			}
		}
		if n.ht != nil && s.parent != nil {
			s.vh = s.parent.vh
		}
		secScope[d] = s
		made = append(made, s)
	}
	l.scopes = append(append(hts, l.scopes...), made...)
	// A scope's directives are all its own once its nodes are done:
	// those of the configuration before the .htaccess files are read.
	for _, s := range hts {
		l.summarise(s)
	}
	for _, s := range made {
		l.summarise(s)
	}
}

// sameSlice reports whether a and b are the same slice (not only equal).
func sameSlice(a, b []*dir) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// mapURI returns the file-system path a URI maps to, through Alias or the
// document root ("" if unknown).
func (l *linter) mapURI(uri string, v *vhost) string {
	for _, n := range l.byName["alias"] {
		if n.ht != nil || !n.topLevel() || (n.vh != nil && n.vh != v) || len(n.d.Args) != 2 {
			continue
		}
		from, to := n.d.Args[0], n.d.Args[1]
		if rest, ok := strings.CutPrefix(uri, from); ok && (rest == "" || strings.HasSuffix(from, "/") || strings.HasPrefix(rest, "/")) {
			return cleanPath(filepath.Join(l.abs(to), rest))
		}
	}
	root := l.docRoot
	if v != nil && v.docRoot != "" {
		root = v.docRoot
	}
	if root == "" {
		return ""
	}
	return cleanPath(filepath.Join(root, uri))
}

func inLimit(n *node, s *scope) bool {
	for i := len(n.parents) - 1; i >= 0; i-- {
		p := n.parents[i]
		if s.sec != nil && p == s.sec {
			return false
		}
		if p.Is("Limit") || p.Is("LimitExcept") {
			return true
		}
	}
	return false
}

func inContainer(n *node) bool {
	for _, p := range n.parents {
		if p.Is("RequireAll") || p.Is("RequireAny") || p.Is("RequireNone") {
			return true
		}
	}
	return false
}

func classify(a string) word {
	low := strings.ToLower(a)
	switch {
	case low == "all":
		return word{"all", a}
	case strings.HasPrefix(low, "env="):
		return word{"env", a[4:]}
	case strings.Contains(a, "/"):
		return word{"ip", a}
	}
	if _, err := netip.ParseAddr(a); err == nil {
		return word{"ip", a}
	}
	partial := strings.Trim(a, "0123456789.") == "" && strings.ContainsAny(a, "0123456789")
	if partial {
		return word{"ip", a}
	}
	return word{"host", a}
}

// fromWords returns the words of an Allow/Deny line after "from".
func fromWords(d *dir) []word {
	args := d.Args
	if len(args) > 0 && strings.EqualFold(args[0], "from") {
		args = args[1:]
	}
	var ws []word
	for _, a := range args {
		ws = append(ws, classify(a))
	}
	return ws
}

func (l *linter) summarise(s *scope) {
	c, r := &s.compat, &s.req
	for _, n := range s.own {
		d := n.d
		lim := inLimit(n, s)
		switch n.name {
		case "order", "allow", "deny", "satisfy":
			c.set = true
			if c.first == nil {
				c.first = d
			}
			if lim {
				c.limited = true
				continue
			}
			switch {
			case d.Is("Order"):
				c.rules = true
				c.order = strings.ToLower(strings.Join(d.Args, ""))
				if c.order == "mutual-failure" {
					c.order = "allow,deny"
				}
			case d.Is("Allow"):
				c.rules = true
				c.allows = append(c.allows, fromWords(d)...)
			case d.Is("Deny"):
				c.rules = true
				c.denies = append(c.denies, fromWords(d)...)
			default:
				c.satisfy, c.satD = strings.ToLower(strings.Join(d.Args, "")), d
			}
		case "require":
			r.set = true
			if r.first == nil {
				r.first = d
			}
			r.lines = append(r.lines, d)
			if len(d.Args) > 0 && newProviders[strings.ToLower(d.Args[0])] || inContainer(n) {
				r.newForm = true
			}
		case "requireall", "requireany", "requirenone":
			if d.IsSection() {
				r.set, r.newForm = true, true
				if r.first == nil {
					r.first = d
				}
			}
		case "authtype":
			if !strings.EqualFold(strings.Join(d.Args, ""), "none") {
				s.auth = d
			}
		}
	}
	if len(r.lines) == 1 && r.lines[0] == r.first && len(r.lines[0].Args) == 2 && strings.EqualFold(r.lines[0].Args[0], "all") {
		r.onlyAll = strings.ToLower(r.lines[0].Args[1])
	}
}

func mergeKey(s *scope) [3]int { return [3]int{s.phase, s.depth, s.order} }

func keyLess(a, b *scope) bool {
	ka, kb := mergeKey(a), mergeKey(b)
	return cmp.Or(cmp.Compare(ka[0], kb[0]), cmp.Compare(ka[1], kb[1]), cmp.Compare(ka[2], kb[2])) < 0
}

// dirPrefix reports whether the directory a (which may have wildcards)
// is b or contains it.
func dirPrefix(a, b string) bool {
	if a == "/" || a == b {
		return true
	}
	if !hasWildcard(a) {
		return strings.HasPrefix(b, a+"/")
	}
	ac, bc := strings.Split(strings.Trim(a, "/"), "/"), strings.Split(strings.Trim(b, "/"), "/")
	if len(ac) > len(bc) {
		return false
	}
	for i := range ac {
		if ok, _ := path.Match(ac[i], bc[i]); !ok {
			return false
		}
	}
	return true
}

func uriPrefix(a, b string) bool {
	rest, ok := strings.CutPrefix(b, a)
	return ok && (rest == "" || strings.HasSuffix(a, "/") || strings.HasPrefix(rest, "/"))
}

// covers reports whether scope a applies to every request s applies to.
func covers(a, s *scope) bool {
	for p := s.parent; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	if a.phase == 3 && s.phase == 3 {
		return a.uri != "" && s.uri != "" && uriPrefix(a.uri, s.uri)
	}
	if a.phase >= 2 || a.path == "" {
		return false
	}
	if s.path == "" {
		return a.path == "/"
	}
	return dirPrefix(a.path, s.path)
}

// ancestors returns the scopes merged before s for every request s
// applies to, in merge order (apache-access-semantics.md §4.3).
func (l *linter) ancestors(s *scope) []*scope {
	if as, ok := l.ancestry[s]; ok {
		return as
	}
	out := []*scope{}
	defer func() { l.ancestry[s] = out }()
	if l.byVhost == nil {
		// A scope's ancestors are the main server's and its own virtual
		// host's: index them once, rather than scan every scope of every
		// host for each.
		l.byVhost = map[*vhost][]*scope{}
		for _, a := range l.scopes {
			l.byVhost[a.vh] = append(l.byVhost[a.vh], a)
		}
	}
	candidates := l.byVhost[nil]
	if s.vh != nil {
		candidates = append(slices.Clip(candidates), l.byVhost[s.vh]...)
	}
	for _, a := range candidates {
		if a == s || !keyLess(a, s) {
			continue
		}
		if covers(a, s) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *scope) int {
		if keyLess(a, b) {
			return -1
		}
		if keyLess(b, a) {
			return 1
		}
		return 0
	})
	return out
}

// nearest returns the last ancestor of s (in merge order) for which ok
// holds.
func (l *linter) nearest(s *scope, ok func(*scope) bool) *scope {
	as := l.ancestors(s)
	for i := len(as) - 1; i >= 0; i-- {
		if ok(as[i]) {
			return as[i]
		}
	}
	return nil
}

func where(s *scope) string {
	if s.sec == nil {
		return s.header
	}
	return s.header + " at " + s.pos.String()
}

// scopesPerJob is how many scopes one job of the access checks takes.
const scopesPerJob = 256

// scopeChecks returns the access checks of each scope (DIR-10,
// AUTH-01, AUTH-03..06, ERR-05, ORD-01, ORD-02, ORD-09..11) as jobs for
// [linter.runJobs]: the scopes in runs of scopesPerJob (they are checked
// one by one, and are most of the work on a big configuration).
func (l *linter) scopeChecks() []func(*linter) {
	var jobs []func(*linter)
	for run := range slices.Chunk(l.scopes, scopesPerJob) {
		jobs = append(jobs, func(w *linter) {
			for _, s := range run {
				w.checkScopeCompat(s)
				w.checkScopeRequire(s)
				w.checkScopeMerge(s)
			}
		})
	}
	return jobs
}

// checkOldOnly: AUTH-02, a configuration with only the old access
// directives.
func (l *linter) checkOldOnly() {
	anyNew := false
	var firstOld *dir
	for _, s := range l.scopes {
		anyNew = anyNew || s.req.newForm
		if s.compat.first != nil && (firstOld == nil) {
			firstOld = s.compat.first
		}
	}
	if firstOld != nil && !anyNew {
		n := 0
		for _, s := range l.scopes {
			if s.compat.set {
				n++
			}
		}
		change := fmt.Sprintf("this configuration uses only the old access directives (in %d scopes): it keeps working on 2.4 with mod_access_compat loaded", n)
		if l.moduleChecks() && !l.has("access_compat_module") {
			change += ", which it does not load yet (see ERR-02)"
		}
		l.at("AUTH-02", firstOld, change+".", "")
	}
}

// checkScopeCompat: DIR-10 (checkCompatFix), AUTH-01, ERR-05,
// AUTH-03, ORD-01.
func (l *linter) checkScopeCompat(s *scope) {
	if !s.compat.set {
		return
	}
	ws := where(s)
	l.checkCompatFix(s, ws)
	err05 := "" // the change of ERR-05, the same for every Deny of the scope
	for _, n := range s.own {
		d := n.d
		deny := n.name == "deny"
		if !deny && n.name != "allow" {
			continue
		}
		if hostWords(d) {
			fix := "" // the rule's, where translate writes no Require for the scope
			if text, ok := l.tr.requireText(s); ok {
				fix = "In 2.4 this line is part of the Require lines orderly translate writes for " + ws + ": " + text + "."
			}
			l.at("AUTH-01", d, "", fix)
		}
		if deny {
			if err05 == "" {
				p := s.path
				if p == "" {
					p = "<the file requested>"
				}
				err05 = "a client this line refuses gets 403, and the error log '[access_compat:error] [pid ...] [client ip:port] AH01797: client denied by server configuration: " + p + "' (2.2: '[error] [client ip] client denied by server configuration: " + p + "')."
			}
			l.at("ERR-05", d, err05, "")
		}
	}
	if !s.req.newForm {
		return
	}
	// AUTH-03: old and new in one scope.
	var news []string
	for _, n := range s.own {
		if n.d.Is("Require") && (len(n.d.Args) > 0 && newProviders[strings.ToLower(n.d.Args[0])] || inContainer(n)) || n.d.Is("RequireAll") || n.d.Is("RequireAny") || n.d.Is("RequireNone") {
			news = append(news, written(n.d)+" ("+n.d.Pos.String()+")")
			if len(news) == 3 {
				break
			}
		}
	}
	at := s.sec
	if at == nil {
		at = s.compat.first
	}
	l.at("AUTH-03", at, fmt.Sprintf("%s mixes %s (%s) with %s: in 2.4 the compat layer decides first (AH01797), then Require (AH01630); under Satisfy All both must pass, under Satisfy Any an admitted client skips Require.", ws, written(s.compat.first), s.compat.first.Pos, strings.Join(news, ", ")), "")
	// ORD-01: one layer makes the other dead.
	c := &s.compat
	switch {
	case c.satisfy == "any" && c.admitsAll():
		l.at("ORD-01", c.satD, "Satisfy Any with an Order/Allow/Deny that admits every client: mod_access_compat grants first and the Require lines of "+ws+" are never evaluated.", "Remove Satisfy Any and the Order/Allow/Deny lines, and keep the Require lines.")
	case c.satisfy != "any" && c.rules && c.refusesAll() && s.req.onlyAll != "denied":
		l.at("ORD-01", s.req.first, "the Order/Allow/Deny of "+ws+" refuses every client (403 AH01797) before Require is evaluated: this Require grants nothing.", "Remove the Order/Allow/Deny lines (their 2.4 form is 'Require all denied'), or let them admit the clients the Require lines are for.")
	}
}

// checkCompatFix: DIR-10 on every Order/Allow/Deny/Satisfy line of
// scope s (ws names it), <Limit> included. Its fix is what orderly
// translate writes for the section (translated.go): on the Order line
// (the first line where there is none), and each other line points
// there.
func (l *linter) checkCompatFix(s *scope, ws string) {
	var head *dir
	for _, n := range s.own {
		if isCompatName(n.name) && (head == nil || n.name == "order" && !head.Is("Order")) {
			head = n.d
		}
	}
	if head == nil {
		return
	}
	fix, part := l.tr.dir10Fixes(s, ws, head)
	for _, n := range s.own {
		switch {
		case !isCompatName(n.name):
		case n.d == head:
			l.at("DIR-10", n.d, "", fix)
		default:
			l.at("DIR-10", n.d, "", part)
		}
	}
}

// hostWords reports whether the Allow or Deny line d names client
// addresses or host names (AUTH-01).
func hostWords(d *dir) bool {
	for _, w := range fromWords(d) {
		if w.kind == "ip" || w.kind == "host" {
			return true
		}
	}
	return false
}

// isCompatName reports whether the directive named name (lower case) is
// one of mod_access_compat's.
func isCompatName(name string) bool {
	switch name {
	case "order", "allow", "deny", "satisfy":
		return true
	}
	return false
}

// checkScopeRequire: AUTH-04, AUTH-05, ORD-02, ORD-11.
func (l *linter) checkScopeRequire(s *scope) {
	var user, group *dir
	for _, n := range s.own {
		d := n.d
		if (d.Is("RequireAll") || d.Is("RequireAny") || d.Is("RequireNone")) && d.IsSection() {
			l.at("AUTH-04", d, "", "")
		}
		if !d.Is("Require") || len(d.Args) == 0 {
			continue
		}
		switch strings.ToLower(d.Args[0]) {
		case "group":
			if group == nil && !inContainer(n) {
				group = d
			}
			if l.dbmGroups(s) {
				l.at("AUTH-05", d, "", "Write 'Require dbm-group "+strings.Join(d.Args[1:], " ")+"'.")
			}
		case "user", "valid-user":
			if user == nil && !inContainer(n) {
				user = d
			}
		}
	}
	if user != nil && group != nil && !l.inherits(s, "authzgroupfileauthoritative", "off") {
		first, second := user, group
		if group.Pos.Line < user.Pos.Line {
			first, second = group, user
		}
		l.at("ORD-02", first, fmt.Sprintf("'%s' and '%s' (%s): 2.2 refused an authenticated user outside the group (mod_authz_groupfile decided first and was authoritative); 2.4 grants when either line matches.", written(user), written(group), second.Pos), "Write <RequireAll> "+written(user)+" / "+written(group)+" </RequireAll> to keep 2.2's outcome for listed users, or keep only '"+written(group)+"'.")
	}
	if s.auth != nil && !s.req.set {
		if a := l.nearest(s, func(a *scope) bool { return a.req.set }); a == nil {
			below := 0
			for _, t := range l.scopes {
				if t != s && t.req.set && slices.Contains(l.ancestors(t), s) {
					below++
				}
			}
			change := "2.4 answers 500 ('AH01627: AuthType configured with no corresponding authorization directives') where AuthType is set and no Require is in force; 2.2 served without authentication."
			if below > 0 {
				change += fmt.Sprintf(" %d section(s) or .htaccess file(s) below set a Require; the other requests under %s get 500.", below, where(s))
			}
			l.at("ORD-11", s.auth, change, "")
		}
	}
}

// dbmGroups reports whether the groups of scope s come from a DBM file.
func (l *linter) dbmGroups(s *scope) bool {
	chain := append(slices.Clip(l.ancestors(s)), s)
	for i := len(chain) - 1; i >= 0; i-- {
		for _, n := range chain[i].own {
			if n.d.Is("AuthDBMGroupFile") {
				return true
			}
			if n.d.Is("AuthGroupFile") {
				return false
			}
		}
	}
	return l.has("authz_dbm_module") && !l.has("authz_groupfile_module")
}

// inherits reports whether s or an ancestor has the directive name with
// the value val.
func (l *linter) inherits(s *scope, name, val string) bool {
	for _, a := range append(slices.Clip(l.ancestors(s)), s) {
		for _, n := range a.own {
			if strings.EqualFold(n.d.Name, name) && strings.EqualFold(strings.Join(n.d.Args, " "), val) {
				return true
			}
		}
	}
	return false
}

// checkScopeMerge: AUTH-06, ORD-09, ORD-10.
func (l *linter) checkScopeMerge(s *scope) {
	c := &s.compat
	// ORD-09: Satisfy alone resets the inherited Order/Allow/Deny.
	if c.satD != nil && !c.rules {
		if a := l.nearest(s, func(a *scope) bool { return a.compat.rules }); a != nil && !a.compat.admitsAll() {
			l.at("ORD-09", c.satD, "this section has Satisfy but no Order/Allow/Deny: in 2.4 it starts a new mod_access_compat configuration that admits everybody, dropping the Order/Allow/Deny of "+where(a)+"; in 2.2 they still applied.", "Repeat the Order/Allow/Deny of "+where(a)+" here, or migrate both to Require.")
		}
	}
	// ORD-10: Satisfy Any, a refusing compat layer, no Require.
	if c.satisfy == "any" && c.rules && !c.admitsAll() && !s.req.set {
		if a := l.nearest(s, func(a *scope) bool { return a.req.set }); a == nil {
			change := "Satisfy Any with an Order/Allow/Deny that refuses some clients and no Require in force: 2.2 answered 403 to them; 2.4 answers 200 (mod_authz_core grants when it has no directives)."
			if s.auth != nil {
				change = "Satisfy Any with an Order/Allow/Deny that refuses some clients and no Require in force: 2.2 answered 403 to them; 2.4 answers 500 (AuthType with no Require, AH01627)."
			}
			l.at("ORD-10", c.satD, change, "")
		}
	}
	// AUTH-06: one layer here, the other inherited.
	switch {
	case s.req.newForm && !c.set:
		a := l.nearest(s, func(a *scope) bool { return a.compat.set })
		if a == nil || a.compat.admitsAll() || a.compat.satisfy == "any" || s.req.onlyAll == "denied" {
			return
		}
		l.at("AUTH-06", s.req.first, "this section sets only Require; its Order/Allow/Deny come from "+where(a)+", which refuses some clients. mod_access_compat runs first and its refusal ends the request (403, AH01797) before this Require is evaluated: a 2.4 grant here cannot undo an inherited Deny (upgrade document §5.3, first row).", "Add the matching 'Order deny,allow' / 'Allow from ...' here (which replaces the inherited compat layer), or migrate "+where(a)+" to Require.")
	case c.rules && !s.req.set:
		a := l.nearest(s, func(a *scope) bool { return a.req.set })
		if a == nil || !a.req.newForm || a.req.onlyAll == "granted" || c.satisfy == "any" || c.refusesAll() {
			return
		}
		l.at("AUTH-06", c.first, "this section sets only Order/Allow/Deny; its Require comes from "+where(a)+" ("+written(a.req.first)+"). Both layers must pass: a client this section allows is still refused by the inherited Require (403, AH01630). The upgrade document's 200 (§5.3, second row) holds only where a deeper section grants the document root, as the stock configuration's <Directory /var/www/html> Require all granted does.", "Add 'Satisfy Any' here, or migrate this section to Require"+l.migrated(s)+".")
	}
}

// migrated returns " (TEXT)", TEXT the Require lines orderly translate
// writes for scope s, or "" where it writes none.
func (l *linter) migrated(s *scope) string {
	if text, ok := l.tr.requireText(s); ok {
		return " (" + text + ")"
	}
	return ""
}

// overrideCategory returns the AllowOverride category an .htaccess
// directive needs ("" if unknown).
func overrideCategory(name string) string {
	n := strings.ToLower(name)
	switch n {
	case "order", "allow", "deny":
		return "Limit"
	case "options", "xbithack":
		return "Options"
	case "directoryindex", "indexoptions", "adddescription", "addicon", "addiconbytype", "addiconbyencoding",
		"addalt", "addaltbytype", "addaltbyencoding", "headername", "readmename", "indexignore",
		"defaulticon", "indexorderdefault", "indexstylesheet", "expiresactive", "expiresbytype", "expiresdefault":
		return "Indexes"
	case "limit", "limitexcept", "satisfy", "require", "requireall", "requireany", "requirenone", "authmerging":
		return "AuthConfig"
	}
	if strings.HasPrefix(n, "auth") {
		return "AuthConfig"
	}
	switch n {
	case "files", "filesmatch", "ifmodule", "ifdefine":
		return ""
	}
	if strings.HasPrefix(n, "php_") {
		return "Options"
	}
	return "FileInfo"
}

// checkOverrides: DIR-04 for every .htaccess file that 2.2 read only
// because AllowOverride defaulted to All.
func (l *linter) checkOverrides() {
	type ao struct {
		path string
		n    *node
	}
	var aos []ao
	l.each("allowoverride", func(n *node) {
		if n.ht != nil || n.scope == nil || n.scope.kind != "directory" || n.scope.path == "" {
			return
		}
		aos = append(aos, ao{n.scope.path, n})
	})
	for _, h := range l.hts {
		var best *ao
		for i := range aos {
			a := &aos[i]
			if dirPrefix(a.path, h.dir) && (best == nil || components(a.path) >= components(best.path)) {
				best = a
			}
		}
		if best != nil {
			continue
		}
		cats := map[string]bool{}
		apacheconf.Walk(h.ds, func(d *dir, _ []*dir) error {
			if c := overrideCategory(d.Name); c != "" {
				cats[c] = true
			}
			return nil
		})
		var list []string
		for _, c := range []string{"AuthConfig", "FileInfo", "Indexes", "Limit", "Options"} {
			if cats[c] {
				list = append(list, c)
			}
		}
		val := "All"
		if len(list) > 0 && len(list) < 5 {
			val = strings.Join(list, " ")
		}
		pos := posAtStart(h.path)
		if len(h.ds) > 0 {
			pos = posOf(h.ds[0])
		}
		access := ""
		for _, s := range l.scopes {
			if s.ht == h && (s.compat.set || s.req.set) {
				access = " Writing AllowOverride None instead would drop its access rules (" + written(firstOf(s.compat.first, s.req.first)) + ", ...)."
			}
		}
		l.report("DIR-04", pos, "AllowOverride (not set: 2.2 default All)", "no AllowOverride covers "+h.dir+": 2.2 read "+h.path+" with every override allowed (default All); 2.4 opens it but allows nothing (default None), so every request below "+h.dir+" answers 500 ('"+h.path+": ... not allowed here')."+access,
			fmt.Sprintf("Write <Directory %s> AllowOverride %s </Directory> (what this file needs; 'All' keeps 2.2's default exactly).", quoteIfNeeded(h.dir), val))
	}
}

func firstOf(ds ...*dir) *dir {
	for _, d := range ds {
		if d != nil {
			return d
		}
	}
	return nil
}

func quoteIfNeeded(s string) string {
	if strings.ContainsAny(s, " \t\"") {
		return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	return s
}
