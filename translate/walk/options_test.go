package walk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// tree lays out a document root: "d/" a directory, "f" a file, "l -> t" a
// symbolic link to t (@DOCROOT@ and @OUT@, a directory outside the
// document root, replaced), "l -> t @other" a link owned by another user;
// "@OUT@/x" a file outside. It returns the document root.
func tree(t *testing.T, entries ...string) string {
	t.Helper()
	dir := t.TempDir()
	root, out := filepath.Join(dir, "docroot"), filepath.Join(dir, "out")
	for _, d := range []string{root, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := strings.NewReplacer("@DOCROOT@", root, "@OUT@", out)
	for _, e := range entries {
		e = r.Replace(e)
		name, target, link := strings.Cut(e, " -> ")
		isDir := strings.HasSuffix(name, "/")
		if !filepath.IsAbs(name) {
			name = filepath.Join(root, name)
		}
		os.MkdirAll(filepath.Dir(name), 0o755)
		switch {
		case link:
			target, other := strings.CutSuffix(target, " @other")
			if err := os.Symlink(target, name); err != nil {
				t.Fatal(err)
			}
			if other {
				if os.Geteuid() != 0 {
					t.Skip("SymLinksIfOwnerMatch cases need root to give a link another owner")
				}
				if err := os.Lchown(name, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
		case isDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// optEngine loads conf over root with the given semantics and modules
// (nil: a fragment's defaults, autoindex included).
func optEngine(t *testing.T, sem translate.Semantics, root, conf string, mods []string) *Engine {
	t.Helper()
	cf := filepath.Join(filepath.Dir(root), "legacy.conf")
	if err := os.WriteFile(cf, []byte(strings.ReplaceAll(conf, "@DOCROOT@", root)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: root}, Modules: mods})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return New(cfg, OS, users{})
}

type optReq struct {
	method, target string
	want           int
	log            string // a log line the decision must hold ("AH00037: ...@DOCROOT@/l")
}

func checkReqs(t *testing.T, e *Engine, root string, reqs []optReq) {
	t.Helper()
	for _, r := range reqs {
		res := decide(e, req{method: r.method, target: r.target, ip: "10.1.2.3"})
		if res.Status != r.want {
			t.Errorf("%s %s: status %d (layer %s), want %d; logs %v", r.method, r.target, res.Status, res.Layer, r.want, res.Logs())
			continue
		}
		if r.log == "" {
			continue
		}
		want := strings.ReplaceAll(r.log, "@DOCROOT@", root)
		found := false
		for _, l := range res.Logs() {
			found = found || l.Code+": "+l.Message() == want
		}
		if !found {
			t.Errorf("%s %s: logs %v, want %q", r.method, r.target, res.Logs(), want)
		}
	}
}

// FollowSymLinks and SymLinksIfOwnerMatch as ap_directory_walk tests
// them: each component with the options of the directory that holds it.
func TestSymlinkOptions(t *testing.T) {
	files := []string{"index.html", "pub/", "pub/page.html", "@OUT@/secret.html", "@OUT@/dir/", "@OUT@/dir/index.html",
		"link.html -> @OUT@/secret.html", "other.html -> @OUT@/secret.html @other", "dangling.html -> @OUT@/nothing",
		"linkdir -> @OUT@/dir", "pub/link.html -> @DOCROOT@/pub/page.html", "sub/", "sub/link.html -> @OUT@/secret.html",
		"rel.html -> index.html"}
	const refused = "AH00037: Symbolic link not allowed or link target not accessible: @DOCROOT@/"
	tests := []struct {
		name string
		sem  translate.Semantics
		conf string
		reqs []optReq
	}{
		{"2.4 default follows", translate.Compat24, "", []optReq{
			{"GET", "/link.html", 0, ""}, {"GET", "/other.html", 0, ""}, {"GET", "/linkdir/", 0, ""},
			{"GET", "/dangling.html", 403, refused + "dangling.html"}, // a link whose target is missing: 403, not 404
		}},
		{"2.2 default (All) follows", translate.Legacy22, "", []optReq{{"GET", "/link.html", 0, ""}, {"GET", "/linkdir/index.html", 0, ""}}},
		{"-FollowSymLinks", translate.Compat24, "<Directory @DOCROOT@>\nOptions -FollowSymLinks\n</Directory>", []optReq{
			{"GET", "/link.html", 403, refused + "link.html"}, {"GET", "/linkdir/", 403, refused + "linkdir"},
			{"GET", "/linkdir", 403, ""}, {"GET", "/linkdir/index.html", 403, refused + "linkdir"},
			{"GET", "/pub/link.html", 403, refused + "pub/link.html"}, {"GET", "/pub/page.html", 0, ""},
			{"GET", "/index.html", 0, ""}, {"GET", "/missing.html", 0, ""}, {"GET", "/rel.html", 403, ""},
		}},
		{"None", translate.Compat24, "<Directory @DOCROOT@>\nOptions None\n</Directory>", []optReq{{"GET", "/link.html", 403, ""}, {"GET", "/", 0, ""}}},
		{"SymLinksIfOwnerMatch", translate.Compat24, "<Directory @DOCROOT@>\nOptions SymLinksIfOwnerMatch\n</Directory>", []optReq{
			{"GET", "/link.html", 0, ""}, {"GET", "/other.html", 403, refused + "other.html"}, {"GET", "/linkdir/", 0, ""},
			{"GET", "/dangling.html", 403, ""},
		}},
		{"FollowSymLinks with SymLinksIfOwnerMatch checks the owner", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions FollowSymLinks SymLinksIfOwnerMatch\n</Directory>", []optReq{
				{"GET", "/link.html", 0, ""}, {"GET", "/other.html", 403, refused + "other.html"}}},
		{"parent follows, child does not", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions FollowSymLinks\n</Directory>\n<Directory @DOCROOT@/sub>\nOptions -FollowSymLinks\n</Directory>", []optReq{
				{"GET", "/link.html", 0, ""}, {"GET", "/sub/link.html", 403, refused + "sub/link.html"}}},
		{"parent does not, child does", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions None\n</Directory>\n<Directory @DOCROOT@/sub>\nOptions +FollowSymLinks\n</Directory>", []optReq{
				{"GET", "/link.html", 403, ""}, {"GET", "/sub/link.html", 0, ""}}},
		{"a link's own section applies after it is tested", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions None\n</Directory>\n<Directory @DOCROOT@/linkdir>\nOptions FollowSymLinks\n</Directory>", []optReq{
				{"GET", "/linkdir/", 403, refused + "linkdir"}}},
		{"<Files> and <Location> do not change the walk", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions None\n</Directory>\n<Files link.html>\nOptions FollowSymLinks\n</Files>\n<Location />\nOptions FollowSymLinks\n</Location>", []optReq{
				{"GET", "/link.html", 403, ""}}},
		{"<DirectoryMatch> merges after the walk", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions None\n</Directory>\n<DirectoryMatch \"/docroot\">\nOptions FollowSymLinks\n</DirectoryMatch>", []optReq{
				{"GET", "/link.html", 403, ""}}},
		{".htaccess turns it off", translate.Compat24,
			"<Directory @DOCROOT@>\nAllowOverride Options\n</Directory>", []optReq{
				{"GET", "/sub/link.html", 403, ""}, {"GET", "/link.html", 0, ""}}},
		{".htaccess may not", translate.Compat24,
			"<Directory @DOCROOT@>\nAllowOverride Options=Indexes\n</Directory>", []optReq{
				{"GET", "/sub/link.html", 500, ""}, {"GET", "/link.html", 0, ""}}},
		{"a server's Options", translate.Compat24, "Options SymLinksIfOwnerMatch", []optReq{
			{"GET", "/link.html", 0, ""}, {"GET", "/other.html", 403, ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tree(t, files...)
			if strings.Contains(tt.name, ".htaccess") {
				os.WriteFile(filepath.Join(root, "sub", ".htaccess"), []byte("Options -FollowSymLinks\n"), 0o644)
			}
			e := optEngine(t, tt.sem, root, tt.conf, nil)
			checkReqs(t, e, root, tt.reqs)
		})
	}
}

// A DirectoryIndex file that is a link is tested by the subrequest with
// the directory's options, and only when they lack FollowSymLinks (the
// walk cache's familiar path): AH00032.
func TestIndexSymlink(t *testing.T) {
	files := []string{"@OUT@/page.html", "d/", "d/index.html -> @OUT@/page.html", "o/", "o/index.html -> @OUT@/page.html @other"}
	tests := []struct {
		conf string
		reqs []optReq
	}{
		{"", []optReq{{"GET", "/d/", 0, ""}, {"GET", "/o/", 0, ""}}},
		{"<Directory @DOCROOT@>\nOptions -FollowSymLinks\n</Directory>", []optReq{
			{"GET", "/d/", 403, "AH00032: Symbolic link not allowed or link target not accessible: @DOCROOT@/d/index.html"},
			{"GET", "/d/index.html", 403, "AH00037: Symbolic link not allowed or link target not accessible: @DOCROOT@/d/index.html"}}},
		{"<Directory @DOCROOT@>\nOptions SymLinksIfOwnerMatch\n</Directory>", []optReq{{"GET", "/d/", 0, ""}, {"GET", "/o/", 403, ""}}},
		// FollowSymLinks with SymLinksIfOwnerMatch: the familiar path
		// looks at FollowSymLinks only, the full walk at the owner.
		{"<Directory @DOCROOT@>\nOptions FollowSymLinks SymLinksIfOwnerMatch\n</Directory>", []optReq{{"GET", "/o/", 0, ""}, {"GET", "/o/index.html", 403, ""}}},
	}
	for _, tt := range tests {
		root := tree(t, files...)
		checkReqs(t, optEngine(t, translate.Compat24, root, tt.conf, nil), root, tt.reqs)
	}
}

// Indexes: mod_autoindex refuses a GET (or HEAD) for a directory without a
// DirectoryIndex file where the request's options lack it; without
// mod_autoindex there is nothing to refuse (the default handler's 404).
func TestIndexesOption(t *testing.T) {
	files := []string{"index.html", "empty/", "withindex/", "withindex/index.html", "other/", "other/home.html", "other/sub/"}
	noAutoindex := []string{"authz_core_module", "authz_host_module", "access_compat_module", "dir_module", "alias_module"}
	const forbidden = "AH01276: Cannot serve directory @DOCROOT@/empty/: No matching DirectoryIndex (index.html) found, and server-generated directory index forbidden by Options directive"
	tests := []struct {
		name string
		sem  translate.Semantics
		conf string
		mods []string
		reqs []optReq
	}{
		{"2.4 default: no Indexes", translate.Compat24, "", nil, []optReq{
			{"GET", "/empty/", 403, forbidden}, {"HEAD", "/empty/", 403, ""}, {"POST", "/empty/", 0, ""}, {"OPTIONS", "/empty/", 0, ""},
			{"GET", "/empty", 0, ""}, {"GET", "/withindex/", 0, ""}, {"GET", "/missing/", 0, ""}}},
		{"without mod_autoindex", translate.Compat24, "", noAutoindex, []optReq{{"GET", "/empty/", 0, ""}}},
		{"2.2 default: All", translate.Legacy22, "", nil, []optReq{{"GET", "/empty/", 0, ""}}},
		{"2.2 -Indexes", translate.Legacy22, "<Directory @DOCROOT@>\nOptions -Indexes\n</Directory>", nil, []optReq{{"GET", "/empty/", 403, forbidden}}},
		// 2.2 lets a plus come before a plain word: the plain word sets
		// the options anew, the plus stays in opts_add, and a section
		// below with no Options line of its own brings it back
		// (merge_core_dir_configs), where an .htaccess file has no core
		// configuration to merge.
		{"2.2: a plus before a plain word comes back below", translate.Legacy22,
			"<Directory @DOCROOT@/other>\nOptions +Indexes FollowSymLinks\n</Directory>\n<Directory @DOCROOT@/other/sub>\nOrder allow,deny\nAllow from all\n</Directory>", nil, []optReq{
				{"GET", "/other/", 403, ""}, {"GET", "/other/sub/", 0, ""}}},
		{"+Indexes", translate.Compat24, "<Directory @DOCROOT@>\nOptions +Indexes\n</Directory>", nil, []optReq{{"GET", "/empty/", 0, ""}}},
		{"Indexes in a parent, -Indexes in a child", translate.Compat24,
			"<Directory @DOCROOT@>\nOptions Indexes\n</Directory>\n<Directory @DOCROOT@/empty>\nOptions -Indexes\n</Directory>", nil, []optReq{
				{"GET", "/empty/", 403, ""}, {"GET", "/other/", 0, ""}}},
		{"<Location> Options apply", translate.Compat24, "<Location /empty>\nOptions +Indexes\n</Location>", nil, []optReq{
			{"GET", "/empty/", 0, ""}, {"GET", "/other/", 403, ""}}},
		{"DirectoryIndex names", translate.Compat24, "DirectoryIndex home.html start.html", nil, []optReq{
			{"GET", "/other/", 0, ""},
			{"GET", "/withindex/", 403, "AH01276: Cannot serve directory @DOCROOT@/withindex/: No matching DirectoryIndex (home.html,start.html) found, and server-generated directory index forbidden by Options directive"}}},
		{"SetHandler: another handler answers", translate.Compat24, "<Directory @DOCROOT@/empty>\nSetHandler server-info\n</Directory>\n<Directory @DOCROOT@/other>\nSetHandler text/plain\n</Directory>\n<Directory @DOCROOT@/other>\nSetHandler None\n</Directory>", nil, []optReq{
			{"GET", "/empty/", 0, ""}, {"GET", "/other/", 403, ""}}},
		{"a refused index is the answer", translate.Compat24, "<Files index.html>\nRequire all denied\n</Files>", nil, []optReq{
			{"GET", "/withindex/", 403, "AH01630: client denied by server configuration: @DOCROOT@/withindex/index.html"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tree(t, files...)
			checkReqs(t, optEngine(t, tt.sem, root, tt.conf, tt.mods), root, tt.reqs)
		})
	}
}

// The refusals of Options are the configuration's, and name the Options
// line that took the option away, or the defaults where none did: no
// refusal goes under rule_id "-".
func TestOptionsRefusalLayer(t *testing.T) {
	root := tree(t, "index.html", "empty/", "opt/empty/")
	e := optEngine(t, translate.Compat24, root, "<Directory @DOCROOT@>\nRequire ip 10.0.0.0/8\n</Directory>\n<Directory @DOCROOT@/opt>\nOptions +Indexes\n</Directory>\n<Directory @DOCROOT@/opt/empty>\nOptions -Indexes\n</Directory>\n", nil)
	res := decide(e, req{target: "/empty/", ip: "10.1.2.3"})
	if res.Status != 403 || res.Layer != policy.LayerConfig || res.Rule == nil || res.Rule != e.cfg.Default {
		t.Errorf("no Options line: got status %d layer %s rule %v, want 403 from the configuration's defaults", res.Status, res.Layer, res.Rule)
	}
	res = decide(e, req{target: "/opt/empty/", ip: "10.1.2.3"})
	if res.Status != 403 || res.Layer != policy.LayerConfig || res.Rule == nil || res.Rule.Text != "Options -Indexes" {
		t.Errorf("Options -Indexes: got status %d layer %s rule %v, want 403 naming the line", res.Status, res.Layer, res.Rule)
	}
	ln := optEngine(t, translate.Compat24, tree(t, "index.html", "real.html", "ln.html -> real.html"), "<Directory @DOCROOT@>\nOptions Indexes\n</Directory>\n", nil)
	res = decide(ln, req{target: "/ln.html", ip: "10.1.2.3"})
	if res.Status != 403 || res.Rule == nil || res.Rule.Text != "Options Indexes" {
		t.Errorf("a symbolic link Options Indexes refuses: got status %d rule %v, want 403 naming the line", res.Status, res.Rule)
	}
	if res := decide(e, req{target: "/empty/", ip: "8.8.8.8"}); res.Status != 403 || res.Layer != policy.LayerAuthz {
		t.Errorf("refused client: status %d layer %s, want access control's 403", res.Status, res.Layer)
	}
}

// FallbackResource (mod_dir fixup_dflt): a request that maps to nothing
// is decided again as a GET subrequest for the fallback; its refusal is
// the answer, a fallback that never maps to a file ends at the
// subrequest nesting limit (500), and "disabled" or a SetHandler turn it
// off. Corpus case 433 holds the same on Apache.
func TestFallbackResource(t *testing.T) {
	root := tree(t, "index.html", "index.php", "app/front.html", "loop/x.html", "noindex/readme.txt", "off/x.html", "h/x.html")
	conf := "<Directory @DOCROOT@>\nFallbackResource /index.php\n</Directory>\n" +
		"<Files index.php>\nRequire ip 10.0.0.0/8\n</Files>\n" +
		"<Directory @DOCROOT@/app>\nFallbackResource front.html\n</Directory>\n" +
		"<Directory @DOCROOT@/loop>\nFallbackResource nothere.html\n</Directory>\n" +
		"<Directory @DOCROOT@/off>\nFallbackResource disabled\n</Directory>\n" +
		"<Directory @DOCROOT@/h>\nSetHandler default-handler\n</Directory>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	tests := []struct {
		method, target, ip string
		want               int
	}{
		{"GET", "/missing", "8.8.8.8", 403},
		{"POST", "/missing/deeper", "8.8.8.8", 403},
		{"GET", "/missing", "10.1.2.3", 0},
		{"GET", "/index.html", "8.8.8.8", 0},
		{"GET", "/app/missing", "8.8.8.8", 0},
		{"GET", "/loop/missing", "8.8.8.8", 500},
		{"GET", "/noindex/", "8.8.8.8", 403},
		{"GET", "/noindex/", "10.1.2.3", 0},
		{"GET", "/off/missing", "8.8.8.8", 0},
		{"GET", "/h/missing", "8.8.8.8", 0},
	}
	for _, tt := range tests {
		if res := decide(e, req{method: tt.method, target: tt.target, ip: tt.ip}); res.Status != tt.want {
			t.Errorf("%s %s from %s: %d, want %d", tt.method, tt.target, tt.ip, res.Status, tt.want)
		}
	}
}

// AcceptPathInfo Off: a request with path info to a file is 404 (the
// handler's answer) once access control allows it, naming the line; On
// and Default leave it to the handler, as the backend does. Corpus case
// 434 holds the same on Apache.
func TestAcceptPathInfoOff(t *testing.T) {
	root := tree(t, "index.html", "app/page.html", "app/locked/page.html", "app/private/page.html")
	conf := "<Directory @DOCROOT@/app>\nAcceptPathInfo On\n</Directory>\n" +
		"<Directory @DOCROOT@/app/locked>\nAcceptPathInfo Off\n</Directory>\n" +
		"<Directory @DOCROOT@/app/private>\nRequire ip 10.0.0.0/8\nAcceptPathInfo Off\n</Directory>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	tests := []struct {
		target, ip string
		want       int
		method     string
	}{
		{"/app/page.html/route", "8.8.8.8", 0, ""},
		{"/app/locked/page.html/route", "8.8.8.8", 404, ""},
		{"/app/locked/page.html/route", "8.8.8.8", 404, "POST"},
		{"/app/locked/page.html/route", "8.8.8.8", 404, "HEAD"},
		{"/app/locked/page.html/route", "8.8.8.8", 405, "DELETE"}, // the default handler's (random 934)
		{"/app/locked/page.html/route", "8.8.8.8", 405, "PUT"},
		{"/app/locked/page.html/route", "8.8.8.8", 501, "FOO"}, // "Invalid method in request" (random 956)
		{"/app/locked/page.html/route", "8.8.8.8", 0, "OPTIONS"},
		{"/app/locked/page.html", "8.8.8.8", 0, ""},
		{"/app/locked/nothing/x", "8.8.8.8", 0, ""},
		{"/app/private/page.html/route", "8.8.8.8", 403, ""},
		{"/app/private/page.html/route", "10.1.2.3", 404, ""},
		{"/index.html/x", "8.8.8.8", 0, ""},
	}
	for _, tt := range tests {
		res := decide(e, req{method: tt.method, target: tt.target, ip: tt.ip})
		if res.Status != tt.want {
			t.Errorf("%s from %s: %d, want %d", tt.target, tt.ip, res.Status, tt.want)
		}
		if res.Status >= 404 && (res.Rule == nil || res.Rule.Text != "AcceptPathInfo Off" || res.Rule.Line == 0) {
			t.Errorf("%s: the 404 names %v, want the AcceptPathInfo Off line", tt.target, res.Rule)
		}
	}
}

// mod_dir's switches: DirectorySlash Off (mod_autoindex's 403 for the
// slashless directory), DirectoryIndexRedirect (a redirect to an allowed
// index) and DirectoryCheckHandler (no index subrequest under another
// handler). Corpus case 435 holds the same on Apache.
func TestDirSwitches(t *testing.T) {
	root := tree(t, "index.html", "noslash/index.html", "redir/index.html", "handled/index.html", "handled/checked/index.html")
	conf := "<Directory @DOCROOT@/noslash>\nDirectorySlash Off\n</Directory>\n" +
		"<Directory @DOCROOT@/redir>\nDirectoryIndexRedirect seeother\n</Directory>\n" +
		"<Directory @DOCROOT@/handled>\nSetHandler default-handler\n<Files index.html>\nRequire all denied\n</Files>\n</Directory>\n" +
		"<Directory @DOCROOT@/handled/checked>\nDirectoryCheckHandler On\n</Directory>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	tests := []struct {
		method, target string
		want           int
		location       string
	}{
		{"GET", "/noslash", 403, ""},
		{"POST", "/noslash", 0, ""},
		{"GET", "/noslash/", 0, ""},
		{"GET", "/redir/", 303, "http://www.example.test/redir/index.html"},
		{"GET", "/redir/?q=1", 303, "http://www.example.test/redir/index.html"},
		{"GET", "/handled/", 403, ""},
		{"GET", "/handled/checked/", 0, ""},
	}
	for _, tt := range tests {
		res := decide(e, req{method: tt.method, target: tt.target, ip: "8.8.8.8", header: map[string]string{"Host": "www.example.test"}})
		if res.Status != tt.want || res.Location != tt.location {
			t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.target, res.Status, res.Location, tt.want, tt.location)
		}
	}
}

// A subrequest sees the .htaccess files its main request read (Apache's
// walk cache): with the same sections, the same merged configuration, so
// mod_dir's index subrequest skips access control as Apache does, even
// while the file is too new for the engine's cache to trust.
func TestSubrequestSharesHtaccess(t *testing.T) {
	root := tree(t, "index.html", "dir/x.txt")
	if err := os.WriteFile(filepath.Join(root, "dir", ".htaccess"), []byte("Require method PUT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := optEngine(t, translate.Compat24, root, "<Directory @DOCROOT@/dir>\nAllowOverride All\n</Directory>\n", nil)
	for _, tt := range []struct {
		method string
		want   int
	}{{"PUT", 0}, {"GET", 403}} {
		if res := decide(e, req{method: tt.method, target: "/dir/", ip: "8.8.8.8"}); res.Status != tt.want {
			t.Errorf("%s /dir/: %d, want %d (the index subrequest's check is skipped for the same configuration)", tt.method, res.Status, tt.want)
		}
	}
}

// MergeSlashes Off: r->uri keeps "//", which <LocationMatch> regexes see,
// while a plain <Location> prefix is compared with a slash-merged copy
// (corpus case 124 holds the same on Apache).
func TestMergeSlashesOffLocations(t *testing.T) {
	root := tree(t, "index.html", "admin/sec/x.html", "api/v1/admin/x.html")
	conf := "MergeSlashes Off\n" +
		"<Location /admin/sec>\nRequire all denied\n</Location>\n" +
		"<LocationMatch \"^/api/v1/admin\">\nRequire all denied\n</LocationMatch>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	tests := []struct {
		target string
		want   int
	}{
		{"/admin/sec/x.html", 403},
		{"/admin//sec/x.html", 403}, // the prefix sees /admin/sec/x.html
		{"//admin/sec/x.html", 403}, // leading slashes go first
		{"/api/v1/admin/x.html", 403},
		{"/api//v1/admin/x.html", 0}, // the regex sees the "//"
	}
	for _, tt := range tests {
		if res := decide(e, req{target: tt.target, ip: "8.8.8.8"}); res.Status != tt.want {
			t.Errorf("%s: %d, want %d", tt.target, res.Status, tt.want)
		}
	}
}

// An index candidate that is refused does not stop a later one whose
// sections are the main request's: that one still shares the main
// request's merged configuration, and its check is skipped
// (ap_process_request_internal), however the merges before it were
// cached.
func TestIndexSkipsAfterOtherCandidates(t *testing.T) {
	root := tree(t, "index.html", "dir/index.html")
	conf := "<Directory @DOCROOT@>\nRequire all granted\n</Directory>\n<Directory @DOCROOT@/dir>\nRequire method PUT\nDirectoryIndex a.html b.html index.html\n</Directory>\n" +
		"<Files a.html>\nRequire method PUT\n</Files>\n<Files b.html>\nRequire method PUT\n</Files>\n"
	e := optEngine(t, translate.Compat24, root, conf, nil)
	for _, tt := range []struct {
		method string
		want   int
	}{{"PUT", 0}, {"GET", 403}, {"PUT", 0}} {
		res := decide(e, req{method: tt.method, target: "/dir/", ip: "8.8.8.8"})
		if res.Status != tt.want || tt.want == 0 && res.Index != "index.html" {
			t.Errorf("%s /dir/: %d (index %q), want %d", tt.method, res.Status, res.Index, tt.want)
		}
	}
}

// The Options line a refusal names is the last, in merge order, that set
// the missing option: a later line that only adds or removes others is
// passed over, a line without + or - sets them all, and the main
// server's line counts after every section's.
func TestOptionsRule(t *testing.T) {
	root := tree(t, "index.html", "a/empty/", "b/empty/", "c/", "d/")
	e := optEngine(t, translate.Compat24, root, "Options -Indexes\n"+
		"<Directory @DOCROOT@/a>\nOptions +Indexes\n</Directory>\n<Directory @DOCROOT@/a/empty>\nOptions -Indexes\n</Directory>\n"+
		"<Directory @DOCROOT@/b>\nOptions -Indexes +FollowSymLinks\n</Directory>\n<Directory @DOCROOT@/b/empty>\nOptions +FollowSymLinks\n</Directory>\n"+
		"<Directory @DOCROOT@/c>\nOptions FollowSymLinks\n</Directory>\n", nil)
	for _, tt := range []struct {
		target string
		line   int
	}{
		{"/a/empty/", 6},
		{"/b/empty/", 9},
		{"/c/", 15},
		{"/d/", 1},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8"})
		if res.Status != 403 || res.Rule == nil || res.Rule.Line != tt.line {
			t.Errorf("%s: %d by %v, want 403 by line %d", tt.target, res.Status, res.Rule, tt.line)
		}
	}
}
