package walk

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// ruleAt returns the engine's rule written on line (or, for a section's
// synthetic rule, the section header's line).
func ruleAt(t *testing.T, e *Engine, line int, synthetic bool) *policy.Rule {
	t.Helper()
	for _, r := range e.Rules() {
		if r.Line == line && r.Default == synthetic {
			return r
		}
	}
	t.Fatalf("no rule on line %d (synthetic %v)", line, synthetic)
	return nil
}

// Each decision counts, by method, for the sections whose access lines
// were in force: the host-access section, the Require sections that
// merge (AuthMerging Or) or the last one; none for a dry decision.
func TestCoverage(t *testing.T) {
	e, _ := engine(t, `<Directory "@DOCROOT@/a">
    Order deny,allow
    Allow from all
    Require all granted
</Directory>
<Directory "@DOCROOT@/a/b">
    AuthMerging Or
    Require ip 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/c">
    Require all granted
</Directory>
<Directory "@DOCROOT@/c/d">
    Require ip 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/c/d/e">
    Options None
</Directory>
<Directory "@DOCROOT@/k">
    Order allow,deny
    Allow from all
</Directory>
`, "a/b/x.html", "c/d/x.html", "c/d/e/x.html", "k/x.html")
	for _, r := range []req{
		{target: "/a/b/x.html", ip: "10.1.1.1"},
		{method: "POST", target: "/a/b/x.html", ip: "10.1.1.1"},
		{target: "/c/d/x.html", ip: "10.1.1.1"},
		{target: "/index.html", ip: "10.1.1.1"},
		{target: "/c/d/e/x.html", ip: "10.1.1.1"},
		{target: "/k/x.html", ip: "10.1.1.1"},
	} {
		decide(e, r)
	}
	dry := &Request{Method: "GET", Target: "/c/d/x.html", Proto: "HTTP/1.1", Dry: true, ClientAddr: netip.MustParseAddr("10.1.1.1")}
	e.Decide(dry, nil)
	for _, c := range []struct {
		line      int
		get, post uint64
	}{{1, 1, 1}, {6, 1, 1}, {10, 0, 0}, {13, 2, 0}, {16, 0, 0}, {19, 1, 0}} {
		got := ruleAt(t, e, c.line, true).Covered()
		var get, post uint64
		if got != nil {
			get, post = got[policy.MethodGet], got[2]
		}
		if get != c.get || post != c.post {
			t.Errorf("section on line %d: GET %d, POST %d; want %d, %d", c.line, get, post, c.get, c.post)
		}
	}
}

// A rule necessary to the main request's decision counts unless the
// final answer is the very refusal the main request would have given
// without it (an index subrequest refused it anyway), and ErrorDocument
// would not have turned that refusal into something else.
func TestNecessityFinalAnswer(t *testing.T) {
	e, _ := engine(t, `<Directory "@DOCROOT@/same">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Allow from 192.0.2.0/24
</Directory>
<Directory "@DOCROOT@/same/inner">
    <Files index.html>
        Order allow,deny
    </Files>
</Directory>
<Directory "@DOCROOT@/other">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Allow from 192.0.2.0/24
</Directory>
<Directory "@DOCROOT@/other/inner">
    <Files index.html>
        AuthType Basic
        AuthName "inner"
        AuthUserFile /nonexistent
        Require valid-user
    </Files>
</Directory>
<Directory "@DOCROOT@/doc">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Allow from 192.0.2.0/24
    ErrorDocument 403 http://example.com/denied
</Directory>
<Directory "@DOCROOT@/doc/inner">
    <Files index.html>
        Order allow,deny
    </Files>
</Directory>
<Directory "@DOCROOT@/doc2">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Allow from 192.0.2.0/24
</Directory>
<Directory "@DOCROOT@/doc2/inner">
    <Files index.html>
        Order allow,deny
    </Files>
</Directory>
<LocationMatch "^/doc2/inner/$">
    ErrorDocument 403 http://example.com/denied
</LocationMatch>
`, "same/inner/index.html", "other/inner/index.html", "doc/inner/index.html", "doc2/inner/index.html")
	for _, c := range []struct {
		target string
		line   int // the Allow line that admits 10/8
		status int
		counts uint64
	}{
		{"/same/inner/", 4, 403, 0},
		{"/other/inner/", 15, 401, 1},
		{"/doc/inner/", 29, 302, 1},
		{"/same/inner/index.html", 4, 403, 0},
		// The directory's own ErrorDocument, which its index file does
		// not have, would have answered the main request's refusal.
		{"/doc2/inner/", 41, 403, 1},
	} {
		r := ruleAt(t, e, c.line, false)
		before := r.Necessary()
		res := decide(e, req{target: c.target, ip: "10.1.1.1"})
		if res.Status != c.status {
			t.Errorf("%s: %d, want %d", c.target, res.Status, c.status)
		}
		if got := r.Necessary() - before; got != c.counts {
			t.Errorf("%s: %q counted necessary %d times, want %d", c.target, r.Text, got, c.counts)
		}
	}
}

// A 401 is the same answer only with the same realm: a rule whose
// deletion would have made the main request challenge for another realm
// than the index file's challenge counts; one for the same realm does not.
func TestNecessityRealm(t *testing.T) {
	section := func(dir, realm, inner string) string {
		return `<Directory "@DOCROOT@/` + dir + `">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
    Satisfy Any
    AuthType Basic
    AuthName "` + realm + `"
    AuthUserFile /nonexistent
    Require valid-user
    <Files index.html>
        Order allow,deny
        Allow from all
        Satisfy All
        AuthName "` + inner + `"
    </Files>
</Directory>
`
	}
	e, _ := engine(t, section("differ", "outer", "inner")+section("same", "area", "area"), "differ/index.html", "same/index.html")
	for _, c := range []struct {
		target string
		line   int
		counts uint64
	}{{"/differ/", 4, 1}, {"/same/", 20, 0}} {
		r := ruleAt(t, e, c.line, false)
		before := r.Necessary()
		if res := decide(e, req{target: c.target, ip: "10.1.1.1"}); res.Status != 401 {
			t.Errorf("%s: %d, want 401", c.target, res.Status)
		}
		if got := r.Necessary() - before; got != c.counts {
			t.Errorf("%s: %q counted necessary %d times, want %d", c.target, r.Text, got, c.counts)
		}
	}
}

// subNecessary keeps a rule once, however many subrequests needed it.
func TestSubNecessaryOnce(t *testing.T) {
	x := &policy.Rule{ID: "x", Text: "Allow from 10.0.0.0/8"}
	c := &policy.Compat{Allows: []policy.AccessRule{{Kind: policy.AccessAll, Methods: policy.AllMethods, Word: "all", Rule: x}}}
	c.Order[policy.MethodGet] = policy.AllowDeny
	c.Compile()
	l := &policy.Layers{Compat: c}
	var req Request
	for range 3 {
		d := policy.Decide(l, &policy.Request{Addr: netip.MustParseAddr("10.1.1.1"), URI: "/", DeferNecessity: true}, nil, nil)
		if len(d.Necessary()) != 1 {
			t.Fatalf("necessary %v, want the Allow", d.Necessary())
		}
		req.subNecessary(&d)
	}
	if req.nSubNeed != 1 || req.subNeed[0].Rule != x || x.Necessary() != 0 {
		t.Errorf("kept %d (%v), counted %d; want the Allow once, not yet counted", req.nSubNeed, req.subNeed[:req.nSubNeed], x.Necessary())
	}
}

// 2.2: the Require lines of the last section that has any are in force.
func TestCoverage22(t *testing.T) {
	e, _ := engineWith(t, translate.Legacy22, `<Directory "@DOCROOT@/a">
    AuthType Basic
    AuthName "a"
    AuthUserFile /nonexistent
    Require valid-user
</Directory>
<Directory "@DOCROOT@/a/b">
    Require user alice
</Directory>
`, "a/b/x.html")
	decide(e, req{target: "/a/b/x.html", ip: "10.1.1.1", user: "alice:ok"})
	if got := ruleAt(t, e, 7, true).Covered(); got == nil || got[policy.MethodGet] != 1 {
		t.Errorf("the last section with Require lines: %v, want GET 1", got)
	}
	if got := ruleAt(t, e, 1, true).Covered(); got != nil && got[policy.MethodGet] != 0 {
		t.Errorf("the section it replaces: %v, want none", got)
	}
}

// HtaccessSections lists the .htaccess files read so far that loaded;
// a broken one is not a section.
func TestHtaccessSections(t *testing.T) {
	e, root := engine(t, `<Directory "@DOCROOT@">
    AllowOverride All
</Directory>
`, "h/x.html", "b/x.html")
	if err := os.WriteFile(filepath.Join(root, "h", ".htaccess"), []byte("Order allow,deny\nDeny from all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "b", ".htaccess"), []byte("NoSuchDirective\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := len(e.HtaccessSections()); got != 0 {
		t.Fatalf("%d sections before any request", got)
	}
	decide(e, req{target: "/h/x.html", ip: "10.1.1.1"})
	decide(e, req{target: "/b/x.html", ip: "10.1.1.1"})
	secs := e.HtaccessSections()
	if len(secs) != 1 || secs[0] == nil || secs[0].Path != filepath.Join(root, "h", ".htaccess") {
		t.Errorf("sections %v, want h/.htaccess alone", secs)
	}
}

// A section's access configuration is necessary to a decision when
// deciding again without it answers otherwise: another status, or for a
// 401 another realm. It counts on the section's synthetic rule, once per
// request, in the main request and its index subrequests, not for a dry
// decision, and not where the main request's refusal without it is the
// very answer the request got anyway.
func TestSectionNecessity(t *testing.T) {
	e, _ := engine(t, `<Directory "@DOCROOT@/a">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/p">
    AuthType Basic
    AuthName "Parent"
    AuthUserFile /nonexistent
    Require valid-user
</Directory>
<Directory "@DOCROOT@/p/c">
    AuthName "Child"
</Directory>
<Directory "@DOCROOT@/d">
    Require all denied
</Directory>
<Directory "@DOCROOT@/d/g">
    Require all granted
</Directory>
<Files "index.html">
    Require all denied
</Files>
<Directory "@DOCROOT@/s">
    Satisfy Any
</Directory>
`, "a/x.html", "p/c/x.html", "d/g/index.html", "d/g/x.html", "s/x.html")
	sec := func(line int) uint64 { return ruleAt(t, e, line, true).Necessary() }
	type count struct {
		line int
		want uint64
	}
	check := func(what string, cs ...count) {
		t.Helper()
		for _, c := range cs {
			if got := sec(c.line); got != c.want {
				t.Errorf("%s: the section on line %d is necessary to %d requests, want %d", what, c.line, got, c.want)
			}
		}
	}
	// Refused by the section, granted without it: necessary; granted by
	// its Allow, granted without it too: not.
	decide(e, req{target: "/a/x.html", ip: "8.8.8.8"})
	decide(e, req{target: "/a/x.html", ip: "10.1.1.1"})
	check("host access", count{1, 1})
	// The child's AuthName is the realm of the 401: without it, the
	// parent's.
	if res := decide(e, req{target: "/p/c/x.html", ip: "8.8.8.8"}); res.Status != 401 || res.Realm != "Child" {
		t.Fatalf("/p/c/x.html: %d %q", res.Status, res.Realm)
	}
	check("realm", count{6, 1}, count{12, 1})
	// A dry decision counts nothing.
	e.Decide(&Request{Method: "GET", Target: "/a/x.html", Proto: "HTTP/1.1", Dry: true, ClientAddr: netip.MustParseAddr("8.8.8.8"), LocalAddr: netip.MustParseAddr("127.0.0.1")}, nil)
	check("dry", count{1, 1})
	// /d/g/ is granted by d/g, and its index refused by <Files>: the
	// answer is 403 with or without d/g (d refuses then), so d/g is not
	// necessary; <Files> is, to the subrequest (without it the index is
	// served); d is not on the subrequest's path of decision: d/g's
	// Require replaces it.
	if res := decide(e, req{target: "/d/g/", ip: "8.8.8.8"}); res.Status != 403 {
		t.Fatalf("/d/g/: %d", res.Status)
	}
	check("index", count{18, 0}, count{21, 1}, count{15, 0})
	// A plain file of d/g: d/g is necessary (without it, d refuses).
	decide(e, req{target: "/d/g/x.html", ip: "8.8.8.8"})
	check("granted", count{18, 1}, count{15, 0})
	// A section whose access configuration changes nothing here.
	decide(e, req{target: "/s/x.html", ip: "8.8.8.8"})
	check("Satisfy alone", count{24, 0})
}

// A section's necessity to a granted main request is moot only where the
// final answer is the very refusal the request would have got without it:
// for a 401, with the same realm. The index file challenges for its own
// realm; the directory that grants is necessary where the parent, without
// it, would have challenged for another.
func TestSectionNecessityRealm(t *testing.T) {
	section := func(dir, inner string) string {
		return `<Directory "@DOCROOT@/` + dir + `">
    AuthType Basic
    AuthName "outer"
    AuthUserFile /nonexistent
    Require valid-user
    <Files index.html>
        AuthName "` + inner + `"
        Require valid-user
    </Files>
</Directory>
<Directory "@DOCROOT@/` + dir + `/g">
    Require all granted
</Directory>
`
	}
	e, _ := engine(t, section("differ", "inner")+section("same", "outer"), "differ/g/index.html", "same/g/index.html")
	for _, c := range []struct {
		target, realm string
		line          int
		counts        uint64
	}{{"/differ/g/", "inner", 11, 1}, {"/same/g/", "outer", 24, 0}} {
		r := ruleAt(t, e, c.line, true)
		before := r.Necessary()
		if res := decide(e, req{target: c.target, ip: "10.1.1.1"}); res.Status != 401 || res.Realm != c.realm {
			t.Errorf("%s: %d %q, want 401 %q", c.target, res.Status, res.Realm, c.realm)
		}
		if got := r.Necessary() - before; got != c.counts {
			t.Errorf("%s: the section on line %d counted necessary %d times, want %d", c.target, c.line, got, c.counts)
		}
	}
}

// A section necessary to the main request and to its index subrequest
// counts once for the request: the subrequest's count is kept
// (Request.secNeed) and the main request's then skipped. (The <Files>
// section gives the index file sections of its own, so that the
// subrequest is decided apart.)
func TestSectionNecessityOncePerRequest(t *testing.T) {
	e, _ := engine(t, `<Directory "@DOCROOT@/d">
    Require all denied
</Directory>
<Directory "@DOCROOT@/d/g">
    Require all granted
</Directory>
<Files "index.html">
    AddType text/html .html
</Files>
`, "d/g/index.html")
	r := ruleAt(t, e, 4, true)
	if res := decide(e, req{target: "/d/g/", ip: "8.8.8.8"}); res.Status != 0 {
		t.Fatalf("/d/g/: %d, want it served", res.Status)
	}
	if got := r.Necessary(); got != 1 {
		t.Errorf("the section on line 4 is necessary to the main request and its index subrequest: counted %d times, want once", got)
	}
}

// A request can find more sections necessary than Request.secNeed holds
// (one refused index file after another): past its room, each is counted
// at once, and nothing is written out of bounds.
func TestSectionNecessityPastRoom(t *testing.T) {
	var conf strings.Builder
	var names, files []string
	for i := range 10 {
		name := fmt.Sprintf("i%d.html", i)
		names = append(names, name)
		files = append(files, "d/"+name)
		fmt.Fprintf(&conf, "<Files %q>\n    Require all denied\n</Files>\n", name)
	}
	conf.WriteString("<Directory \"@DOCROOT@/d\">\n    DirectoryIndex " + strings.Join(names, " ") + "\n</Directory>\n")
	e, _ := engine(t, conf.String(), files...)
	if res := decide(e, req{target: "/d/", ip: "8.8.8.8"}); res.Status != 403 {
		t.Fatalf("/d/: %d, want 403 (every index file refused)", res.Status)
	}
	for i := range 10 {
		if got := ruleAt(t, e, 1+3*i, true).Necessary(); got != 1 {
			t.Errorf("<Files i%d.html>: necessary %d times, want once", i, got)
		}
	}
}
