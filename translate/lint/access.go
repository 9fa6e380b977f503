package lint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// A scope is one per-directory configuration: a <Directory>, <Files>,
// <Location> ... section or an .htaccess file, with the lines written in
// it. Directives inside <Limit>, <LimitExcept> and the <Require*>
// containers belong to the enclosing scope (apache-access-semantics.md
// §1.2, §4.5). What the lines mean, what the scope inherits and what is
// in force there are read from translate's model (model), the one
// orderly serve decides with and orderly translate writes from: lint has
// no reading of its own (issue 17: one model).
type scope struct {
	sec    *dir // nil for an .htaccess file
	ht     *htFile
	kind   string // lower-case section name, or "htaccess"
	header string
	pos    apacheconf.Pos
	parent *scope // the enclosing scope in the text
	own    []*node
	owned  int // the number of own nodes, counted by buildScopes to list them
	compat compatSum
	req    reqSum
	auth   *dir // AuthType (not None)
	// model is the section in translate's model; its Section is nil
	// where the model has none (translate refuses the configuration, an
	// <If> or <Proxy> section, an .htaccess file it does not read).
	model translate.Scope
}

// compatSum says which of mod_access_compat's lines a scope holds.
type compatSum struct {
	set     bool   // any Order/Allow/Deny/Satisfy, <Limit> included
	rules   bool   // any Order/Allow/Deny outside <Limit>
	satisfy string // the last Satisfy outside <Limit>: "", "any", "all"
	satD    *dir
	first   *dir
}

// reqSum summarises a scope's own Require lines and containers.
type reqSum struct {
	set     bool
	newForm bool // a 2.4-only form: Require all/ip/host/env/local/method/expr/not, a container
	lines   int  // Require lines
	line    *dir // the first
	first   *dir
	onlyAll string // "granted" or "denied" when the scope's only Require is 'Require all ...'
}

// newProviders are the Require providers (and 'not') that 2.2 did not
// have.
var newProviders = map[string]bool{"all": true, "ip": true, "host": true, "env": true, "local": true,
	"method": true, "expr": true, "not": true, "forward-dns": true, "dbm-group": true, "dbd-group": true}

// isScopeSection reports whether n is a section with a scope of its own:
// by its name first, which the node holds, then whether it is a section,
// which the directive does.
func isScopeSection(n *node) bool {
	switch n.name {
	case "directory", "directorymatch", "files", "filesmatch", "location", "locationmatch", "if", "elseif", "else", "proxy", "proxymatch":
		return n.d.IsSection()
	}
	return false
}

// buildScopes makes the scopes of nodes and gives each its scope: first
// for those of the configuration, then (htaccess) for those of the
// .htaccess files read, whose own scopes come before all others. The
// nodes come in pre-order (model, readHtaccess), file by file.
func (l *linter) buildScopes(nodes []*node, htaccess bool) {
	htScope := map[*htFile]*scope{}
	var hts []*scope
	if htaccess {
		for _, h := range l.hts {
			s := &scope{ht: h, kind: "htaccess", header: h.path, pos: posAtStart(h.path)}
			if len(h.ds) > 0 {
				s.pos = posOf(h.ds[0])
			}
			htScope[h] = s
			hts = append(hts, s)
		}
	}
	// The scopes of sections are made in one slice, and their own nodes
	// listed in another, each scope's a part of it.
	sections := 0
	for _, n := range nodes {
		if isScopeSection(n) {
			sections++
		}
	}
	made := make([]scope, 0, sections)
	// open[i] is the scope in force inside the last node seen at depth
	// i (its own where it is a scope section): in pre-order, a node's
	// innermost parent is the last node seen one level up.
	var open []*scope
	var lastHt *htFile
	var base *scope // the scope at depth 0: the .htaccess file's, or none
	owned := 0
	for _, n := range nodes {
		depth := len(n.parents)
		switch {
		case depth > 0:
			n.scope = open[depth-1]
		case n.ht != lastHt:
			lastHt, base = n.ht, htScope[n.ht]
			fallthrough
		default:
			n.scope = base
		}
		if n.scope != nil {
			n.scope.owned++
			owned++
		}
		inside := n.scope
		if isScopeSection(n) {
			d := n.d
			made = append(made, scope{sec: d, kind: n.name, header: written(d), pos: posOf(d), parent: n.scope})
			inside = &made[len(made)-1]
		}
		open = append(open[:depth], inside)
	}
	all := make([]*node, owned)
	for _, n := range nodes {
		if s := n.scope; s != nil {
			if s.own == nil {
				s.own, all = all[:0:s.owned], all[s.owned:]
			}
			s.own = append(s.own, n)
		}
	}
	ptrs := make([]*scope, 0, len(hts)+len(l.scopes)+len(made))
	ptrs = append(append(ptrs, hts...), l.scopes...)
	for i := range made {
		ptrs = append(ptrs, &made[i])
	}
	l.scopes = ptrs
	// A scope's directives are all its own once its nodes are done:
	// those of the configuration before the .htaccess files are read.
	for _, s := range hts {
		l.summarise(s)
	}
	for i := range made {
		l.summarise(&made[i])
	}
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

func (l *linter) summarise(s *scope) {
	c, r := &s.compat, &s.req
	for _, n := range s.own {
		d := n.d
		switch n.name {
		case "order", "allow", "deny", "satisfy":
			n.text = written(d)
			c.set = true
			if c.first == nil {
				c.first = d
			}
			switch {
			case inLimit(n, s):
			case n.name != "satisfy":
				c.rules = true
			default:
				c.satisfy, c.satD = strings.ToLower(strings.Join(d.Args, "")), d
			}
		case "require":
			r.set = true
			if r.first == nil {
				r.first = d
			}
			if r.lines++; r.line == nil {
				r.line = d
			}
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
	if r.lines == 1 && r.line == r.first && len(r.line.Args) == 2 && strings.EqualFold(r.line.Args[0], "all") {
		r.onlyAll = strings.ToLower(r.line.Args[1])
	}
}

// attachModel gives each scope its section in translate's model, and
// notes, for ORD-11, how many scopes with a Require of their own each
// section is merged before.
func (l *linter) attachModel() {
	if l.tr == nil || l.tr.model == nil {
		l.byModel = map[*translate.Section]*scope{}
		return
	}
	l.byModel = make(map[*translate.Section]*scope, len(l.scopes))
	l.sem = l.tr.model.Model.Semantics
	for _, s := range l.scopes {
		sc, ok := l.tr.model.Scopes[scopeModelKey(s)]
		if !ok {
			continue
		}
		s.model = sc
		l.byModel[sc.Section] = s
	}
	l.below = map[*translate.Section]int{}
	if !slices.ContainsFunc(l.scopes, func(s *scope) bool { return s.auth != nil && !s.req.set }) {
		return // no ORD-11 to count for
	}
	for _, t := range l.scopes {
		if t.req.set && t.model.Section != nil {
			chain, _ := t.model.MergedBefore()
			for _, a := range chain {
				l.below[a]++
			}
		}
	}
}

// scopeModelKey is where scope s opens, as the model keys its sections.
func scopeModelKey(s *scope) translate.ScopeKey {
	k := scopeKey(s)
	return translate.ScopeKey{File: k.file, Line: k.line}
}

// mergedBefore returns the sections of the model merged before scope s
// for every request it applies to (none where the model has no section
// for s, or where they differ from request to request).
func mergedBefore(s *scope) []*translate.Section {
	if s.model.Section == nil {
		return nil
	}
	chain, _ := s.model.MergedBefore()
	return chain
}

// lastOf returns the last section of chain for which ok holds.
func lastOf(chain []*translate.Section, ok func(*translate.Section) bool) *translate.Section {
	for i := len(chain) - 1; i >= 0; i-- {
		if ok(chain[i]) {
			return chain[i]
		}
	}
	return nil
}

// inForce returns what the model has in force in scope s, and whether it
// knows (the same for every request of s).
func inForce(s *scope) (translate.InForce, bool) {
	if s.model.Section == nil {
		return translate.InForce{}, false
	}
	in, why := s.model.InForce()
	return in, why == ""
}

// whereSection names a section of the model as where names a scope.
func (l *linter) whereSection(a *translate.Section) string {
	if s := l.byModel[a]; s != nil {
		return where(s)
	}
	return a.String() + " at " + a.Pos.String()
}

// path returns the file-system path scope s applies to, from the model
// ("" where it is not one directory).
func (s *scope) path() string {
	if s.ht != nil {
		return s.ht.dir
	}
	if m := s.model.Section; m != nil {
		switch m.Kind {
		case translate.KindDirectory:
			if !m.Fnmatch {
				return cleanPath(m.Path)
			}
		case translate.KindLocation:
			if root := s.model.Config.DocumentRoot; !m.Fnmatch && root != "" {
				return cleanPath(filepath.Join(root, m.Path))
			}
		}
	}
	if s.kind == "files" || s.kind == "filesmatch" || s.kind == "if" || s.kind == "elseif" || s.kind == "else" {
		if s.parent != nil {
			return s.parent.path()
		}
	}
	return ""
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

// checkScopeCompat: DIR-10, AUTH-01, ERR-05 on the scope's
// Order/Allow/Deny/Satisfy lines (each written out once for its
// findings), AUTH-03, ORD-01.
//
// DIR-10 is on every such line of scope s, <Limit> included. Its fix is
// what orderly translate writes for the section (translated.go): on the
// Order line (the first line where there is none), and each other line
// points there.
func (l *linter) checkScopeCompat(s *scope) {
	if !s.compat.set {
		return
	}
	var head *dir
	for _, n := range s.own {
		if isCompatName(n.name) && (head == nil || n.name == "order" && !head.Is("Order")) {
			head = n.d
		}
	}
	ws := where(s)
	x := l.tr.text(s)
	fix, part := l.tr.dir10Fixes(s, ws, head, x)
	// The fix of AUTH-01 and the change of ERR-05 are the same for
	// every line of the scope: each is made for its first.
	var auth01, err05 string
	auth01Made := false
	for _, n := range s.own {
		if !isCompatName(n.name) {
			continue
		}
		d := n.d
		pos, text := posOf(d), n.written()
		if d == head {
			l.report("DIR-10", pos, text, "", fix)
		} else {
			l.report("DIR-10", pos, text, "", part)
		}
		deny := n.name == "deny"
		if !deny && n.name != "allow" {
			continue
		}
		if l.hostWords(d) {
			if !auth01Made {
				auth01Made = true // "": the rule's, where translate writes no Require for the scope
				if req, ok := x.requireText(); ok {
					auth01 = "In 2.4 this line is part of the Require lines orderly translate writes for " + ws + ": " + req + "."
				}
			}
			l.report("AUTH-01", pos, text, "", auth01)
		}
		if deny {
			if err05 == "" {
				p := s.path()
				if p == "" {
					p = "<the file requested>"
				}
				err05 = "a client this line refuses gets 403, and the error log '[access_compat:error] [pid ...] [client ip:port] AH01797: client denied by server configuration: " + p + "' (2.2: '[error] [client ip] client denied by server configuration: " + p + "')."
			}
			l.report("ERR-05", pos, text, err05, "")
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
	// ORD-01: one layer makes the other dead, as the model reads the
	// Order/Allow/Deny lines.
	c, m := &s.compat, s.model.Section
	switch {
	case m == nil:
	case c.satisfy == "any" && translate.AdmitsAll(m.Conf.Compat):
		l.at("ORD-01", c.satD, "Satisfy Any with an Order/Allow/Deny that admits every client: mod_access_compat grants first and the Require lines of "+ws+" are never evaluated.", "Remove Satisfy Any and the Order/Allow/Deny lines, and keep the Require lines.")
	case c.satisfy != "any" && c.rules && translate.RefusesAll(m.Conf.Compat) && s.req.onlyAll != "denied":
		l.at("ORD-01", s.req.first, "the Order/Allow/Deny of "+ws+" refuses every client (403 AH01797) before Require is evaluated: this Require grants nothing.", "Remove the Order/Allow/Deny lines (their 2.4 form is 'Require all denied'), or let them admit the clients the Require lines are for.")
	}
}

// hostWords reports whether the Allow or Deny line d names client
// addresses or host names (AUTH-01), each word read as the model reads
// it.
func (l *linter) hostWords(d *dir) bool {
	args := d.Args
	if len(args) > 0 && strings.EqualFold(args[0], "from") {
		args = args[1:]
	}
	for _, a := range args {
		if k, _ := translate.AccessWord(a, l.sem); k == policy.AccessIP || k == policy.AccessHost {
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
		if !strings.HasPrefix(n.name, "require") {
			continue // no Require line or container: d.Is holds below only where the lower-case name has the prefix
		}
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
	if user != nil && group != nil && !l.groupNotAuthoritative(s) {
		first, second := user, group
		if group.Pos.Line < user.Pos.Line {
			first, second = group, user
		}
		l.at("ORD-02", first, fmt.Sprintf("'%s' and '%s' (%s): 2.2 refused an authenticated user outside the group (mod_authz_groupfile decided first and was authoritative); 2.4 grants when either line matches.", written(user), written(group), second.Pos), "Write <RequireAll> "+written(user)+" / "+written(group)+" </RequireAll> to keep 2.2's outcome for listed users, or keep only '"+written(group)+"'.")
	}
	if s.auth != nil && !s.req.set {
		if in, ok := inForce(s); ok && !in.Require {
			change := "2.4 answers 500 ('AH01627: AuthType configured with no corresponding authorization directives') where AuthType is set and no Require is in force; 2.2 served without authentication."
			if below := l.below[s.model.Section]; below > 0 {
				change += fmt.Sprintf(" %d section(s) or .htaccess file(s) below set a Require; the other requests under %s get 500.", below, where(s))
			}
			l.at("ORD-11", s.auth, change, "")
		}
	}
}

// dbmGroups reports whether the groups of scope s come from a DBM file:
// the model has an AuthDBMGroupFile in force and no AuthGroupFile (which
// 2.4's Require group reads), or, where it has neither, only
// mod_authz_dbm is loaded.
func (l *linter) dbmGroups(s *scope) bool {
	if in, ok := inForce(s); ok && (in.DBMGroups || in.GroupFile) {
		return in.DBMGroups && !in.GroupFile
	}
	return l.has("authz_dbm_module") && !l.has("authz_groupfile_module")
}

// groupNotAuthoritative reports whether AuthzGroupFileAuthoritative Off
// is in force in scope s, as the model merges it (its own lines where the
// model has no section for it).
func (l *linter) groupNotAuthoritative(s *scope) bool {
	if in, ok := inForce(s); ok {
		return in.GroupNotAuthoritative
	}
	for _, n := range s.own {
		if n.name == "authzgroupfileauthoritative" && strings.EqualFold(strings.Join(n.d.Args, " "), "off") {
			return true
		}
	}
	return false
}

// checkScopeMerge: AUTH-06, ORD-09, ORD-10, from what the model merges
// before the scope.
func (l *linter) checkScopeMerge(s *scope) {
	c, m := &s.compat, s.model.Section
	if m == nil {
		return
	}
	// ORD-10: Satisfy Any, a refusing compat layer, no Require.
	if c.satisfy == "any" && c.rules && !s.req.set && !translate.AdmitsAll(m.Conf.Compat) {
		if in, ok := inForce(s); ok && !in.Require {
			change := "Satisfy Any with an Order/Allow/Deny that refuses some clients and no Require in force: 2.2 answered 403 to them; 2.4 answers 200 (mod_authz_core grants when it has no directives)."
			if s.auth != nil {
				change = "Satisfy Any with an Order/Allow/Deny that refuses some clients and no Require in force: 2.2 answered 403 to them; 2.4 answers 500 (AuthType with no Require, AH01627)."
			}
			l.at("ORD-10", c.satD, change, "")
		}
	}
	ord09 := c.satD != nil && !c.rules
	auth06 := s.req.newForm && !c.set || c.rules && !s.req.set
	if !ord09 && !auth06 {
		return // nothing below applies: the chain is not worked out
	}
	chain := mergedBefore(s)
	compatIn := lastOf(chain, func(a *translate.Section) bool { return a.Conf.Compat != nil })
	// ORD-09: Satisfy alone resets the inherited Order/Allow/Deny.
	if ord09 {
		if a := compatIn; a != nil && translate.HasOrderRules(a.Conf.Compat) && !translate.AdmitsAll(a.Conf.Compat) {
			wa := l.whereSection(a)
			l.at("ORD-09", c.satD, "this section has Satisfy but no Order/Allow/Deny: in 2.4 it starts a new mod_access_compat configuration that admits everybody, dropping the Order/Allow/Deny of "+wa+"; in 2.2 they still applied.", "Repeat the Order/Allow/Deny of "+wa+" here, or migrate both to Require.")
		}
	}
	// AUTH-06: one layer here, the other inherited.
	switch {
	case s.req.newForm && !c.set:
		a := compatIn
		if a == nil || translate.AdmitsAll(a.Conf.Compat) || a.SatisfiesAny(l.sem) || s.req.onlyAll == "denied" {
			return
		}
		wa := l.whereSection(a)
		l.at("AUTH-06", s.req.first, "this section sets only Require; its Order/Allow/Deny come from "+wa+", which refuses some clients. mod_access_compat runs first and its refusal ends the request (403, AH01797) before this Require is evaluated: a 2.4 grant here cannot undo an inherited Deny (upgrade document §5.3, first row).", "Add the matching 'Order deny,allow' / 'Allow from ...' here (which replaces the inherited compat layer), or migrate "+wa+" to Require.")
	case c.rules && !s.req.set:
		a := l.byModel[lastOf(chain, func(a *translate.Section) bool {
			return a.Conf.Authz != nil && a.Conf.Authz.Root != nil || a.Conf.Requires22 != nil
		})]
		if a == nil || !a.req.newForm || a.req.onlyAll == "granted" || c.satisfy == "any" || translate.RefusesAll(m.Conf.Compat) {
			return
		}
		l.at("AUTH-06", c.first, "this section sets only Order/Allow/Deny; its Require comes from "+where(a)+" ("+written(a.req.first)+"). Both layers must pass: a client this section allows is still refused by the inherited Require (403, AH01630). The upgrade document's 200 (§5.3, second row) holds only where a deeper section grants the document root, as the stock configuration's <Directory /var/www/html> Require all granted does.", "Add 'Satisfy Any' here, or migrate this section to Require"+l.migrated(s)+".")
	}
}

// migrated returns " (TEXT)", TEXT the Require lines orderly translate
// writes for scope s, or "" where it writes none.
func (l *linter) migrated(s *scope) string {
	if text, ok := l.tr.text(s).requireText(); ok {
		return " (" + text + ")"
	}
	return ""
}

// overrideCategory returns the AllowOverride category an .htaccess
// directive needs in 2.4, from the directive table ("" where every
// category lets it in, or the table does not know it). Of a directive
// that more than one category lets in (<Limit>: Limit or AuthConfig),
// AuthConfig, which 2.4's Require needs anyway.
func overrideCategory(d *dir) string {
	name := d.Name
	if d.IsSection() {
		name = "<" + name
	}
	for _, info := range directive.Lookup(name, directive.V24) {
		w := info.Where & directive.OrAll
		switch {
		case w == 0 || w == directive.OrAll:
		case w&directive.OrAuthCfg != 0:
			return "AuthConfig"
		default:
			for _, c := range []struct {
				bit  directive.Override
				name string
			}{{directive.OrLimit, "Limit"}, {directive.OrOptions, "Options"}, {directive.OrFileInfo, "FileInfo"}, {directive.OrIndexes, "Indexes"}} {
				if w&c.bit != 0 {
					return c.name
				}
			}
		}
	}
	return ""
}

// checkOverrides: DIR-04 for every .htaccess file that 2.2 read only
// because AllowOverride defaulted to All: no <Directory> section of any
// server sets AllowOverride for its directory, as the model merges them.
func (l *linter) checkOverrides() {
	if l.tr == nil || l.tr.model == nil {
		return // the model cannot be read: ORD-14 says why
	}
	for _, h := range l.hts {
		if l.tr.model.Model.OverrideSet(strings.TrimSuffix(h.dir, "/") + "/") {
			continue
		}
		cats := map[string]bool{}
		apacheconf.Walk(h.ds, func(d *dir, _ []*dir) error {
			if c := overrideCategory(d); c != "" {
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

// components returns the number of components of the path p ("/": 0).
func components(p string) int {
	if p == "/" || p == "" {
		return 0
	}
	return strings.Count(strings.Trim(p, "/"), "/") + 1
}
