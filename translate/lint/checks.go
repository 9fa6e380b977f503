package lint

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/orderly-proxy/orderly/internal/par"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// check runs every check: those that need no translation while translate
// may still be reading the configuration, then, with its text from tr,
// the checks of each scope (their fixes are what translate writes).
// Findings are kept in the order of the checks, as if they had run one
// after the other.
func (l *linter) check(tr <-chan *translated) {
	early := l.runJobs([]func(*linter){
		(*linter).checkModules,
		(*linter).checkBuildSplit,
		(*linter).checkDirectives,
		(*linter).checkDefaults,
		(*linter).checkVirtualHosts,
		(*linter).checkSSI,
		(*linter).checkSSL,
		(*linter).checkBehaviour,
		(*linter).checkOldOnly,
	})
	l.tr = <-tr
	l.attachModel()
	scoped := l.runJobs(append(l.scopeChecks(), (*linter).checkOverrides))
	for _, f := range slices.Concat(early[:8], scoped[:len(scoped)-1], early[8:], scoped[len(scoped)-1:]) {
		l.found.blocks = append(l.found.blocks, f.blocks...)
		l.found.n += f.n
	}
}

// runJobs runs the checks on every core and returns the findings of each.
// A check reads the model and writes nothing but findings, so each worker
// has a linter of its own, sharing the model, and each job's findings are
// kept apart.
func (l *linter) runJobs(jobs []func(*linter)) []findingList {
	found := make([]findingList, len(jobs))
	par.DoWith(len(jobs), func() func(int) {
		w := *l
		return func(i int) {
			w.found = findingList{}
			jobs[i](&w)
			found[i] = w.found
		}
	})
	return found
}

func posAtStart(file string) apacheconf.Pos { return apacheconf.Pos{File: file, Line: 1, Col: 1} }

// each calls fn for every directive named name (lower case).
func (l *linter) each(name string, fn func(n *node)) {
	for _, n := range l.named(name) {
		fn(n)
	}
}

// any reports whether some directive named name satisfies ok (nil: exists).
func (l *linter) any(name string, ok func(n *node) bool) bool {
	for _, n := range l.named(name) {
		if ok == nil || ok(n) {
			return true
		}
	}
	return false
}

// inServer reports whether n is in the main server (a == nil) or in the
// virtual host v, or at the main server's top level (inherited by v).
func inServer(n *node, v *vhost) bool {
	return n.ht == nil && (n.vh == v || n.vh == nil)
}

func loadModuleLine(id string) string {
	return "LoadModule " + id + " modules/mod_" + strings.TrimSuffix(id, "_module") + ".so"
}

// checkBuildSplit: BLD-01.
func (l *linter) checkBuildSplit() {
	need := func(ids ...string) []string {
		var miss []string
		for _, id := range ids {
			if !l.has(id) {
				miss = append(miss, loadModuleLine(id))
			}
		}
		return miss
	}
	l.each("cacheenable", func(n *node) {
		if len(n.d.Args) == 0 {
			return
		}
		switch t := strings.ToLower(n.d.Args[0]); t {
		case "disk":
			if miss := need("cache_disk_module"); len(miss) > 0 {
				l.at("BLD-01", n.d, "the disk cache is mod_cache_disk's in 2.4 (2.2: mod_disk_cache): without it 2.4 starts but caches nothing here.", "Add '"+strings.Join(miss, "' and '")+"'.")
			}
		case "mem", "fd":
			l.at("BLD-01", n.d, "mod_mem_cache ('"+t+"') is gone in 2.4: this cache is not used.", "Use 'CacheEnable socache "+strings.Join(n.d.Args[1:], " ")+"' with 'LoadModule cache_socache_module modules/mod_cache_socache.so', 'LoadModule socache_shmcb_module modules/mod_socache_shmcb.so' and 'CacheSocache shmcb', or the disk cache (mod_cache_disk).")
		}
	})
	// Balancers: the shared memory and the lbmethods are modules in 2.4.
	type bal struct {
		first   *node
		methods map[string]bool
	}
	bals := map[string]*bal{}
	var order []string
	lbRe := regexp.MustCompile(`(?i)^lbmethod=(.*)$`)
	balName := func(s string) string {
		i := strings.Index(strings.ToLower(s), "balancer://")
		if i < 0 {
			return ""
		}
		name := s[i+len("balancer://"):]
		if j := strings.IndexAny(name, "/ "); j >= 0 {
			name = name[:j]
		}
		return strings.ToLower(name)
	}
	for _, n := range l.nodes {
		if n.ht != nil || !strings.HasPrefix(n.name, "proxy") {
			continue // n.d.Is holds below only where the lower-case name has the prefix
		}
		name := ""
		switch {
		case n.d.Is("Proxy") && n.d.IsSection() && len(n.d.Args) > 0:
			name = balName(n.d.Args[0])
		case n.d.Is("ProxyPass") || n.d.Is("ProxyPassMatch") || n.d.Is("ProxySet"):
			for _, a := range n.d.Args {
				if b := balName(a); b != "" {
					name = b
				}
			}
			if name == "" && n.d.Is("ProxySet") {
				for _, p := range n.parents {
					if p.Is("Proxy") && len(p.Args) > 0 {
						name = balName(p.Args[0])
					}
				}
			}
		}
		if name == "" {
			continue
		}
		b := bals[name]
		if b == nil {
			b = &bal{first: n, methods: map[string]bool{}}
			bals[name] = b
			order = append(order, name)
		}
		for _, a := range n.d.Args {
			if m := lbRe.FindStringSubmatch(a); m != nil {
				method := strings.ToLower(m[1])
				b.methods[method] = true
				id := "lbmethod_" + method + "_module"
				if !l.has(id) {
					l.at("BLD-01", n.d, "lbmethod="+method+" is provided by mod_lbmethod_"+method+" in 2.4 (2.2: inside mod_proxy_balancer): without it start-up fails ('ProxyPass unknown lbmethod').", "Add '"+loadModuleLine(id)+"'.")
				}
			}
		}
	}
	for _, name := range order {
		b := bals[name]
		ids := []string{"slotmem_shm_module"}
		if len(b.methods) == 0 {
			ids = append(ids, "lbmethod_byrequests_module")
		}
		if miss := need(ids...); len(miss) > 0 {
			l.at("BLD-01", b.first.d, "the balancer balancer://"+name+" needs, in 2.4, mod_slotmem_shm for its shared memory and, with no lbmethod=, mod_lbmethod_byrequests for the default method: without them start-up fails ('AH01177: Failed to lookup provider 'shm' for 'slotmem'', 'AH02432: Cannot find LB Method: byrequests').", "Add '"+strings.Join(miss, "' and '")+"'.")
		}
	}
	// mod_ssl's session and stapling caches are socache providers.
	for _, name := range []string{"sslsessioncache", "sslstaplingcache"} {
		l.each(name, func(n *node) {
			if len(n.d.Args) == 0 {
				return
			}
			typ, _, _ := strings.Cut(strings.ToLower(n.d.Args[0]), ":")
			switch typ {
			case "none", "nonenotnull":
				return
			case "shm", "shmht":
				typ = "shmcb"
			}
			id := "socache_" + typ + "_module"
			if !l.has(id) {
				fix := "Add '" + loadModuleLine(id) + "'"
				if !strings.HasPrefix(strings.ToLower(n.d.Args[0]), typ) {
					fix += " and write the cache as " + typ + ":PATH(SIZE)"
				}
				l.at("BLD-01", n.d, "the '"+typ+"' cache is mod_socache_"+typ+"'s in 2.4: without it start-up fails (\""+n.d.Name+": '"+typ+"' session cache not supported\").", fix+".")
			}
		})
	}
}

var mutexNames = map[string]string{
	"acceptmutex": "mpm-accept", "lockfile": "mpm-accept", "rewritelock": "rewrite-map",
	"sslmutex": "ssl-cache", "sslstaplingmutex": "ssl-stapling",
}

// mutexFix returns the Mutex line for a 2.2 mutex directive.
func mutexFix(d *dir) string {
	name := mutexNames[strings.ToLower(d.Name)]
	arg := ""
	if len(d.Args) > 0 {
		arg = d.Args[0]
	}
	mech := "default"
	switch low := strings.ToLower(arg); {
	case d.Is("LockFile") || d.Is("RewriteLock"):
		mech = "fcntl:" + filepath.Dir(arg)
	case low == "yes" || low == "default" || low == "":
		mech = "default"
	case low == "none" || low == "no":
		return "Delete the line (no mutex): 'Mutex none " + name + "' is not needed"
	case strings.Contains(low, ":"):
		m, p, _ := strings.Cut(arg, ":")
		mech = strings.ToLower(m) + ":" + filepath.Dir(p)
	default:
		mech = low
	}
	return "Delete the line, or write 'Mutex " + mech + " " + name + "' (the path of a file-based mutex is a directory in 2.4)"
}

var authzAuthoritative = []string{"authzldapauthoritative", "authzdbdauthoritative", "authzdbmauthoritative",
	"authzgroupfileauthoritative", "authzuserauthoritative", "authzownerauthoritative", "authzdefaultauthoritative"}

// checkDirectives: DIR-01..03, 07, 09, 11..17, 19, 20, 24, ORD-03.
func (l *linter) checkDirectives() {
	l.each("maxrequestsperchild", func(n *node) {
		l.at("DIR-01", n.d, "", "Write 'MaxConnectionsPerChild "+n.d.Raw+"'.")
	})
	l.each("maxclients", func(n *node) {
		l.at("DIR-02", n.d, "", "Write 'MaxRequestWorkers "+n.d.Raw+"' (under worker/event it counts threads: at least ThreadsPerChild).")
	})
	l.each("defaulttype", func(n *node) {
		v := strings.Join(n.d.Args, " ")
		if strings.EqualFold(v, "none") {
			l.at("DIR-03", n.d, "DefaultType none has no effect in 2.4 (2.4 never assigns a default type).", "Remove the line.")
			return
		}
		l.at("DIR-03", n.d, "", "Remove the line; where files need "+v+", write 'ForceType "+v+"' in their section or 'AddType "+v+" .ext'.")
	})
	l.each("keepalive", func(n *node) {
		v := strings.ToLower(strings.Join(n.d.Args, " "))
		if v == "on" || v == "off" {
			return
		}
		fix := "KeepAlive On"
		if v == "0" {
			fix = "KeepAlive Off"
		}
		l.at("DIR-07", n.d, "", "Write '"+fix+"' (2.2 read '"+n.d.Raw+"' as "+strings.TrimPrefix(fix, "KeepAlive ")+").")
	})
	for name := range mutexNames {
		l.each(name, func(n *node) { l.at("DIR-09", n.d, "", mutexFix(n.d)+".") })
	}
	for _, name := range authzAuthoritative {
		l.each(name, func(n *node) {
			fix := "Remove the line."
			if strings.EqualFold(strings.Join(n.d.Args, ""), "off") {
				fix = "Remove the line: 2.4 already grants when any Require line matches (an implicit <RequireAny>), which is what Off let other modules do; write <RequireAll> where every line must hold."
			}
			l.at("DIR-11", n.d, "", fix)
		})
	}
	l.each("authnprovideralias", func(n *node) {
		if n.d.IsSection() {
			l.at("DIR-12", n.d, "", "")
		}
	})
	// DIR-13 wherever AddOutputFilterByType is used, as DIR-10 and DIR-12
	// are wherever their directives are; without mod_filter start-up
	// fails too, which is ERR-03 (ORD-04 in an .htaccess file) beside it.
	filter := l.has("filter_module") || !l.moduleChecks() // a fragment: not known
	l.each("addoutputfilterbytype", func(n *node) {
		if filter {
			l.at("DIR-13", n.d, "", "")
			return
		}
		l.at("DIR-13", n.d, "AddOutputFilterByType moved from the core to mod_filter, which this configuration does not load (see ERR-03).", "Add 'LoadModule filter_module modules/mod_filter.so' and keep it in the 2.4 configuration.")
	})
	l.each("cacheignoreurlsessionidentifiers", func(n *node) {
		l.at("DIR-14", n.d, "2.4 removes a session identifier only when its name is exactly one of "+strings.Join(n.d.Args, ", ")+"; 2.2 also removed names that contain them. The tool cannot see the URLs your applications use.", "")
	})
	proxyFwd := l.any("proxyrequests", func(n *node) bool { return strings.EqualFold(strings.Join(n.d.Args, ""), "on") })
	l.each("cacheenable", func(n *node) {
		if !proxyFwd || len(n.d.Args) < 2 || strings.Contains(n.d.Args[1], "://") || n.d.Args[1] == "*" {
			return
		}
		l.at("DIR-15", n.d, "this server is a forward proxy (ProxyRequests On): '"+n.d.Args[1]+"' caches local content only in 2.4; proxied content needs a URL with its protocol.", "Add 'CacheEnable "+n.d.Args[0]+" http://' (and https://, ftp:// as needed).")
	})
	l.each("ldaptrustedclientcert", func(n *node) {
		if !n.topLevel() {
			return
		}
		var where []string
		l.each("authldapurl", func(m *node) {
			if m.scope != nil {
				where = append(where, m.scope.header+" at "+m.scope.pos.String())
			}
		})
		fix := "Move it into every directory context that authenticates against LDAP"
		if len(where) > 0 {
			fix += ": " + strings.Join(where, "; ")
		}
		l.at("DIR-16", n.d, "", fix+".")
	})
	l.each("filterprovider", func(n *node) {
		if len(n.d.Args) != 4 {
			return
		}
		expr := filterExpr(n.d.Args[2], n.d.Args[3])
		l.at("DIR-17", n.d, "", fmt.Sprintf("Write 'FilterProvider %s %s \"%s\"'.", n.d.Args[0], n.d.Args[1], expr))
	})
	for _, name := range []string{"charsetoptions", "extfilteroptions"} {
		l.each(name, func(n *node) {
			for _, a := range n.d.Args {
				if lv, ok := cutFoldPrefix(a, "debuglevel="); ok {
					mod := "charset_lite"
					if n.d.Is("ExtFilterOptions") {
						mod = "ext_filter"
					}
					l.at("DIR-19", n.d, "", "Remove '"+a+"' and write 'LogLevel "+mod+":"+traceLevel(lv)+"'.")
				}
			}
		})
	}
	l.each("dumpiologlevel", func(n *node) { l.at("DIR-20", n.d, "", "") })
	l.each("davlockdb", func(n *node) {
		p := ""
		if len(n.d.Args) > 0 {
			p = l.abs(n.d.Args[0])
		}
		l.at("DIR-24", n.d, "", "Stop the server and delete "+p+"* (the lock database files) before starting 2.4.")
	})
	l.each("options", func(n *node) {
		signed, plain := 0, 0
		for _, a := range n.d.Args {
			if strings.HasPrefix(a, "+") || strings.HasPrefix(a, "-") {
				signed++
			} else if a != "" {
				plain++
			}
		}
		if signed > 0 && plain > 0 {
			change := ""
			if n.ht != nil {
				change = "2.4 refuses an Options line that mixes +/- with plain values: every request below " + n.ht.dir + " answers 500."
			}
			var fixed []string
			for _, a := range n.d.Args {
				if !strings.HasPrefix(a, "+") && !strings.HasPrefix(a, "-") {
					a = "+" + a
				}
				fixed = append(fixed, a)
			}
			l.at("ORD-03", n.d, change, "Write 'Options "+strings.Join(fixed, " ")+"' (2.2 read a plain value in a mixed line as +value; check that this is what was meant).")
		}
	})
}

func cutFoldPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// lowerIs reports whether strings.ToLower(s) is low, without making the
// lower-case copy where s is ASCII (the Options of a big configuration are
// thousands of words, most with capitals).
func lowerIs(s, low string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return strings.ToLower(s) == low // from here on, as strings.ToLower does
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if i >= len(low) || c != low[i] {
			return false // the lower-case copy starts with s[:i+1] lower-cased
		}
	}
	return len(s) == len(low)
}

func traceLevel(lv string) string {
	n, err := strconv.Atoi(lv)
	if err != nil || n <= 0 {
		return "debug"
	}
	return "trace" + strconv.Itoa(min(n, 8))
}

// filterExpr rewrites a 2.2 FilterProvider dispatch and match (mod_filter
// 2.2 filter_provider) as a 2.4 ap_expr expression.
func filterExpr(dispatch, match string) string {
	v := ""
	low := strings.ToLower(dispatch)
	switch {
	case low == "handler":
		v = "%{HANDLER}"
	case low == "content-type" || low == "resp=content-type":
		v = "%{CONTENT_TYPE}"
	case strings.HasPrefix(low, "req="), strings.HasPrefix(low, "request="):
		_, h, _ := strings.Cut(dispatch, "=")
		v = "%{req:" + h + "}"
	case strings.HasPrefix(low, "resp="), strings.HasPrefix(low, "response="):
		_, h, _ := strings.Cut(dispatch, "=")
		v = "%{resp:" + h + "}"
	case strings.HasPrefix(low, "env="):
		v = "%{env:" + dispatch[4:] + "}"
	default:
		v = "%{resp:" + dispatch + "}"
	}
	not := false
	if strings.HasPrefix(match, "!") {
		not, match = true, match[1:]
	}
	var e string
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
	switch {
	case strings.HasPrefix(match, "<="):
		e = v + " -le " + match[2:]
	case strings.HasPrefix(match, ">="):
		e = v + " -ge " + match[2:]
	case strings.HasPrefix(match, "<"):
		e = v + " -lt " + match[1:]
	case strings.HasPrefix(match, ">"):
		e = v + " -gt " + match[1:]
	case strings.HasPrefix(match, "="):
		e = v + " -eq " + match[1:]
	case strings.HasPrefix(match, "/"):
		re := strings.TrimSuffix(match[1:], "/")
		e = v + " =~ m#" + re + "#"
	case strings.HasPrefix(match, "$"):
		e = v + " =~ m#" + regexp.QuoteMeta(match[1:]) + "#"
	case match == "*":
		e = "-n " + v
	default:
		e = v + " == " + quote(match)
	}
	if not {
		e = "!(" + e + ")"
	}
	return e
}

// checkDefaults: DIR-05, DIR-06 where the configuration relies on 2.2's
// defaults.
func (l *linter) checkDefaults() {
	if !l.moduleChecks() || l.written24() {
		return
	}
	pos := posAtStart(l.firstFile())
	if !l.any("enablesendfile", nil) {
		l.report("DIR-05", pos, "(EnableSendfile not set)", "", "")
	}
	if !l.any("fileetag", nil) {
		l.report("DIR-06", pos, "(FileETag not set)", "", "")
	}
}

// checkVirtualHosts: DIR-08.
func (l *linter) checkVirtualHosts() {
	declared := map[string]bool{}
	l.each("namevirtualhost", func(n *node) {
		for _, a := range n.d.Args {
			declared[normAddr(a)] = true
		}
		l.at("DIR-08", n.d, "NameVirtualHost has no effect in 2.4 ('AH00548: NameVirtualHost has no effect and will be removed in the next release').", "")
	})
	first := map[string]*dir{}
	for _, v := range l.vhosts {
		for _, a := range v.d.Args {
			k := normAddr(a)
			f, seen := first[k]
			if !seen {
				first[k] = v.d
				continue
			}
			if declared[k] {
				continue
			}
			l.at("DIR-08", v.d, fmt.Sprintf("%s is also used by the virtual host at %s and no NameVirtualHost names it: 2.2 served every request for it with the first virtual host; 2.4 makes it name-based and chooses this host by ServerName/ServerAlias.", a, f.Pos), "Check that the ServerName/ServerAlias of the hosts on "+a+" select what 2.2 served, or give the hosts different addresses.")
		}
	}
}

func normAddr(a string) string {
	a = strings.ToLower(a)
	if !strings.Contains(a, ":") || strings.HasSuffix(a, "]") {
		a += ":*"
	}
	return a
}

// checkSSI: DIR-18, BEH-10.
func (l *linter) checkSSI() {
	legacy := l.any("ssilegacyexprparser", func(n *node) bool { return strings.EqualFold(strings.Join(n.d.Args, ""), "on") })
	if legacy {
		return
	}
	var enabling []*node
	for _, n := range l.nodes {
		if ssiEnables(n) {
			enabling = append(enabling, n)
		}
	}
	for _, n := range enabling {
		l.at("DIR-18", n.d, "", "")
	}
	if len(enabling) == 0 {
		return
	}
	l.each("errordocument", func(n *node) {
		if len(n.d.Args) < 2 || !strings.HasPrefix(n.d.Args[1], "/") {
			return
		}
		l.at("BEH-10", n.d, "server-side includes are on in this configuration (for example at "+enabling[0].d.Pos.String()+"): if "+n.d.Args[1]+" is processed by mod_include (as 2.2's multi-language error documents are), its '#if expr' is read by 2.4's parser. The upgrade document does not show the details; the tool does not read the document.", "")
	})
}

// ssiEnables reports whether n switches server-side includes on.
func ssiEnables(n *node) bool {
	d := n.d
	switch n.name {
	case "options":
		for _, a := range d.Args {
			if v := strings.TrimPrefix(a, "+"); !strings.HasPrefix(a, "-") && (lowerIs(v, "includes") || lowerIs(v, "includesnoexec")) {
				return true
			}
		}
	case "addoutputfilter", "setoutputfilter", "addoutputfilterbytype":
		if len(d.Args) > 0 {
			for _, f := range strings.Split(d.Args[0], ";") {
				if strings.EqualFold(f, "INCLUDES") {
					return true
				}
			}
		}
	case "addhandler", "sethandler":
		return len(d.Args) > 0 && strings.EqualFold(d.Args[0], "server-parsed")
	case "xbithack":
		v := strings.ToLower(strings.Join(d.Args, ""))
		return v == "on" || v == "full"
	}
	return false
}

var dnRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`SSL_(CLIENT|SERVER)_[SI]_DN([^_A-Za-z0-9]|$)`) })

// checkSSL: DIR-21, DIR-22, DIR-23, BEH-06, ORD-12.
func (l *linter) checkSSL() {
	for _, pair := range [][2]string{{"sslcarevocationfile", "SSLCARevocationCheck"}, {"sslcarevocationpath", "SSLCARevocationCheck"}, {"sslproxycarevocationfile", "SSLProxyCARevocationCheck"}, {"sslproxycarevocationpath", "SSLProxyCARevocationCheck"}} {
		check := pair[1]
		checks := l.named(strings.ToLower(check))
		l.each(pair[0], func(n *node) {
			if slices.ContainsFunc(checks, func(m *node) bool { return inServer(m, n.vh) }) {
				return
			}
			l.at("DIR-21", n.d, "with "+n.d.Name+" but no "+check+", 2.4 checks no CRL (the default is none): revoked certificates are accepted.", "Add '"+check+" chain' (or leaf) beside it.")
		})
	}
	legacyDN := l.any("ssloptions", func(n *node) bool {
		for _, a := range n.d.Args {
			if strings.EqualFold(strings.TrimPrefix(a, "+"), "LegacyDNStringFormat") {
				return true
			}
		}
		return false
	})
	if !legacyDN {
		for _, n := range l.nodes {
			if n.d.Is("SSLOptions") {
				for _, a := range n.d.Args {
					if strings.EqualFold(strings.TrimPrefix(a, "+"), "FakeBasicAuth") {
						l.at("DIR-22", n.d, "FakeBasicAuth makes the client certificate's subject DN the user name: in 2.4 it is written in RFC 2253 form, so the entries of the password file (2.2: '/C=../O=../CN=..') no longer match.", "Rewrite the user names in the password file in the new form, or add 'SSLOptions +LegacyDNStringFormat'.")
					}
				}
				continue
			}
			if strings.Contains(n.d.Raw, "SSL_") && dnRe().MatchString(n.d.Raw) { // the regexp on the few lines that may match
				l.at("DIR-22", n.d, "", "")
			}
		}
	}
	l.each("sslproxyengine", func(n *node) {
		if !strings.EqualFold(strings.Join(n.d.Args, ""), "on") || n.ht != nil {
			return
		}
		cn := l.any("sslproxycheckpeercn", func(m *node) bool { return inServer(m, n.vh) }) || l.any("sslproxycheckpeername", func(m *node) bool { return inServer(m, n.vh) })
		exp := l.any("sslproxycheckpeerexpire", func(m *node) bool { return inServer(m, n.vh) })
		if cn && exp {
			return
		}
		l.at("DIR-23", n.d, "", "")
	})
	// BEH-06 where SSLv2 is enabled: 2.4 refuses 'SSLv2' and '+SSLv2'
	// but skips '-SSLv2' (mod_ssl's ssl_cmd_protocol_parse; Red Hat's
	// stock 'SSLProtocol all -SSLv2' passes apache2 2.4.71 -t), so an
	// exclusion is no finding (testdata/included/ssl-excluded.txtar).
	for _, name := range []string{"sslprotocol", "sslproxyprotocol"} {
		l.each(name, func(n *node) {
			for _, a := range n.d.Args {
				if strings.EqualFold(strings.TrimPrefix(a, "+"), "SSLv2") {
					var keep []string
					for _, b := range n.d.Args {
						if b != a {
							keep = append(keep, b)
						}
					}
					fix := "Remove '" + a + "'"
					if len(keep) > 0 {
						fix += ": '" + n.d.Name + " " + strings.Join(keep, " ") + "'"
					}
					l.at("BEH-06", n.d, "", fix+".")
				}
			}
		})
	}
	for _, name := range []string{"sslciphersuite", "sslproxyciphersuite"} {
		l.each(name, func(n *node) {
			for _, a := range n.d.Args {
				for _, c := range strings.FieldsFunc(a, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
					if strings.EqualFold(strings.TrimLeft(c, "+"), "SSLv2") {
						l.at("ORD-12", n.d, "", "Remove '"+c+"' from the cipher list.")
					}
				}
			}
		})
	}
}

var shellSyntax = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("[;&|<>$`*?(){}~'\"\\\\]|^\\s*[A-Za-z_][A-Za-z0-9_]*=|^\\s*(exec|cd|export)\\s")
})

// checkBehaviour: BEH-01..05, BEH-07..09.
func (l *linter) checkBehaviour() {
	pathinfo := l.any("setenv", func(n *node) bool { return len(n.d.Args) > 0 && strings.EqualFold(n.d.Args[0], "proxy-scgi-pathinfo") }) ||
		l.any("setenvif", func(n *node) bool { return strings.Contains(strings.ToLower(n.d.Raw), "proxy-scgi-pathinfo") })
	if !pathinfo {
		for _, n := range l.nodes {
			if raw := n.d.Raw; strings.Contains(raw, "://") && strings.Contains(strings.ToLower(raw), "scgi://") { // the lines with a URL made lower case
				l.at("BEH-01", n.d, "", "")
			}
		}
	}
	l.each("substitute", func(n *node) { l.at("BEH-02", n.d, "", "") })
	if d, ok := l.loaded["reqtimeout_module"]; ok && d != nil && !l.any("requestreadtimeout", nil) {
		l.at("BEH-03", d, "", "")
	}
	for _, n := range l.nodes {
		d := n.d
		deflate := false
		switch n.name {
		case "addoutputfilterbytype", "addoutputfilter", "setoutputfilter":
			if len(d.Args) > 0 {
				for _, f := range strings.Split(d.Args[0], ";") {
					deflate = deflate || strings.EqualFold(f, "DEFLATE")
				}
			}
		case "filterprovider":
			deflate = len(d.Args) > 1 && strings.EqualFold(d.Args[1], "DEFLATE")
		}
		if deflate {
			l.at("BEH-04", d, "", "")
		}
	}
	l.each("indexoptions", func(n *node) {
		for _, a := range n.d.Args {
			if strings.EqualFold(strings.TrimPrefix(a, "+"), "ScanHTMLTitles") {
				l.at("BEH-05", n.d, "", "")
			}
		}
	})
	for _, name := range []string{"errorlog", "customlog", "transferlog"} {
		l.each(name, func(n *node) {
			if len(n.d.Args) == 0 {
				return
			}
			a := n.d.Args[0]
			if !strings.HasPrefix(a, "|") || strings.HasPrefix(a, "||") || strings.HasPrefix(a, "|$") {
				return
			}
			cmd := strings.TrimSpace(a[1:])
			if !shellSyntax().MatchString(cmd) {
				return
			}
			rest := ""
			if len(n.d.Args) > 1 {
				rest = " " + strings.Join(n.d.Args[1:], " ")
			}
			l.at("BEH-07", n.d, "the command '"+cmd+"' uses shell syntax, which 2.4 no longer interprets: it is run directly, not through /bin/sh -c.", "Write '"+n.d.Name+" \"|$"+cmd+"\""+rest+"' to keep the shell, or remove the shell syntax.")
		})
	}
	changes := map[string]string{} // by password file: a file many sections name is read once
	l.each("authuserfile", func(n *node) {
		change := ""
		if len(n.d.Args) > 0 {
			p := l.abs(n.d.Args[0])
			var ok bool
			if change, ok = changes[p]; !ok {
				if des, total, err := countCrypt(p); err == nil {
					change = fmt.Sprintf("2.4's htpasswd writes MD5 ($apr1$) hashes by default; 2.2 on Unix wrote crypt(3). %s: %d entries, of which crypt(3) (DES, which only uses 8 characters of a password): %d; they keep working.", p, total, des)
				} else {
					change = "2.4's htpasswd writes MD5 ($apr1$) hashes by default; 2.2 on Unix wrote crypt(3). Existing entries keep working. The tool could not read " + p + " to count crypt entries."
				}
				changes[p] = change
			}
		}
		l.at("BEH-08", n.d, change, "")
	})
	l.each("rewritelog", func(n *node) {
		l.at("BEH-09", n.d, "", "Remove the line: mod_rewrite logs to the error log in 2.4 (grep for '[rewrite:'); set the level with 'LogLevel rewrite:traceN'.")
	})
	l.each("rewriteloglevel", func(n *node) {
		lv := strings.Join(n.d.Args, "")
		fix := "Write 'LogLevel rewrite:" + traceLevel(lv) + "'"
		if lv == "0" {
			fix = "Remove the line (level 0: no rewrite logging, 2.4's default)"
		}
		l.at("BEH-09", n.d, "", fix+".")
	})
}

var desRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[./0-9A-Za-z]{13}$`) })

// countCrypt counts the crypt(3) DES entries of a password file.
func countCrypt(p string) (des, total int, err error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		_, hash, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		total++
		if desRe().MatchString(hash) {
			des++
		}
	}
	return des, total, sc.Err()
}
