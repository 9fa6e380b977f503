package convert

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/dirscan"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// .htaccess files are translated in place where that keeps their meaning,
// AllowOverride gains the AuthConfig that 2.4's Require needs, and the
// 2.2 defaults 2.4 changed are written out at the end of a full 2.2
// configuration (even one without a final newline).
func TestConvertHtaccessAndDefaults(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "www")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "lan/.htaccess"), "Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n")
	write(filepath.Join(root, "broken/.htaccess"), "Order deny,allow\nAuthType Basic\n")
	write(filepath.Join(root, "files/.htaccess"), "<Files x>\nOrder deny,allow\nDeny from all\n</Files>\n")
	write(filepath.Join(root, "ifmodule/.htaccess"), "<IfModule mod_authz_host.c>\nOrder deny,allow\nDeny from all\n</IfModule>\n")
	write(filepath.Join(root, "nested/.htaccess"), "<IfVersion >= 2.2>\nOrder deny,allow\nDeny from all\n</IfVersion>\n")
	write(filepath.Join(root, "plain/.htaccess"), "DirectoryIndex a.html\n")
	conf := filepath.Join(dir, "httpd.conf")
	write(conf, "LoadModule authz_host_module modules/mod_authz_host.so\n<Directory \""+root+"\">\n    AllowOverride Limit Indexes\n</Directory>")

	conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: root}}})
	if err != nil {
		t.Fatal(err)
	}
	lan := string(conv.Files[filepath.Join(root, "lan/.htaccess")])
	if !strings.Contains(lan, "Require ip 10.0.0.0/8") || strings.Contains(lan, "\nOrder") || strings.HasPrefix(lan, "Order") {
		t.Errorf("lan/.htaccess translated to:\n%s", lan)
	}
	if files := string(conv.Files[filepath.Join(root, "files/.htaccess")]); !strings.Contains(files, "<Files x>\n") || !strings.Contains(files, "Require all denied\n# orderly DIR-10: mod_access_compat stays loaded: what this section inherits from it must not decide here\n<IfModule mod_access_compat.c>\n    Satisfy All\n</IfModule>\n</Files>") {
		t.Errorf("files/.htaccess translated to:\n%s", files)
	}
	if ifm := string(conv.Files[filepath.Join(root, "ifmodule/.htaccess")]); !strings.Contains(ifm, "<IfModule mod_authz_host.c>\n") || !strings.Contains(ifm, "Require all denied\n# orderly DIR-10: mod_access_compat stays loaded: what this section inherits from it must not decide here\n<IfModule mod_access_compat.c>\n    Satisfy All\n</IfModule>\n</IfModule>") {
		t.Errorf("ifmodule/.htaccess translated to:\n%s", ifm)
	}
	for _, f := range []string{"broken/.htaccess", "nested/.htaccess", "plain/.htaccess"} {
		if _, ok := conv.Files[filepath.Join(root, f)]; ok {
			t.Errorf("%s rewritten; want it left as it is", f)
		}
	}
	var reviewed []string
	for _, r := range conv.Reviews {
		reviewed = append(reviewed, filepath.Base(filepath.Dir(r.Pos.File)))
	}
	for _, r := range conv.Reviews {
		t.Log(r.Pos, r.Text)
	}
	if strings.Join(reviewed, ",") != "broken,nested" {
		t.Errorf("reviews for %v, want broken and nested", reviewed)
	}
	// The files left as they are go with the tree, and keep
	// mod_access_compat loaded.
	for _, f := range []string{"broken/.htaccess", "nested/.htaccess", "plain/.htaccess"} {
		if _, ok := conv.Data[filepath.Join(root, f)]; !ok {
			t.Errorf("%s: not carried with the tree", f)
		}
	}
	// broken/.htaccess is refused whole (AuthType under AllowOverride
	// Limit Indexes): 500 with or without the module.
	if len(conv.CompatKept) != 1 || filepath.Base(filepath.Dir(conv.CompatKept[0])) != "nested" {
		t.Errorf("mod_access_compat kept for %v, want nested/.htaccess alone", conv.CompatKept)
	}
	main := string(conv.Files[conf])
	// A 2.2 tree never loads mod_access_compat: what keeps it gets its
	// LoadModule line.
	if !strings.Contains(main, "\nLoadModule access_compat_module modules/mod_access_compat.so\n") {
		t.Errorf("mod_access_compat kept, not loaded:\n%s", main)
	}
	for _, want := range []string{"AllowOverride Limit Indexes AuthConfig\n", "</Directory>\n# orderly DIR-05", "EnableSendfile On\n", "FileETag INode MTime Size\n"} {
		if !strings.Contains(main, want) {
			t.Errorf("httpd.conf lacks %q:\n%s", want, main)
		}
	}
}

// An .htaccess file written for both versions, translated under 2.2: the
// translation of what 2.2 read goes outside the <IfVersion> sections,
// where 2.4 reads it, and the access lines inside them are taken out.
func TestConvertIfVersionHtaccess(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "www")
	os.MkdirAll(filepath.Join(root, "img"), 0o755)
	var mods string
	for _, m := range strings.Fields("authz_host version") {
		mods += "LoadModule " + m + "_module modules/mod_" + m + ".so\n"
	}
	conf := filepath.Join(dir, "httpd.conf")
	os.WriteFile(conf, []byte(mods+"DocumentRoot "+root+"\n<Directory "+root+">\nAllowOverride All\nOrder allow,deny\nAllow from all\n</Directory>\n"), 0o644)
	ht := filepath.Join(root, "img", ".htaccess")
	os.WriteFile(ht, []byte("# scrapers\n<IfVersion < 2.4>\n    Order allow,deny\n    Allow from all\n    Deny from 192.0.2.0/24\n</IfVersion>\n<IfVersion >= 2.4>\n    <RequireAll>\n        Require all granted\n        Require not ip 192.0.2.0/24\n    </RequireAll>\n</IfVersion>\nErrorDocument 403 \"No.\"\n"), 0o644)
	conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Reviews) > 0 {
		t.Fatalf("reviews: %v", conv.Reviews)
	}
	out := string(conv.Files[ht])
	want := "# scrapers\n" +
		"# orderly DIR-10: what Apache 2.2 read in this file's <IfVersion> sections, for every version\n" +
		"# orderly DIR-10: Order/Allow/Deny/Satisfy/Require translated to 2.4 Require\n" +
		"<RequireAll>\n    Require all granted\n    <RequireNone>\n        Require ip 192.0.2.0/24\n    </RequireNone>\n</RequireAll>\n" +
		"<IfVersion < 2.4>\n</IfVersion>\n" +
		"<IfVersion >= 2.4>\n    # orderly DIR-10: RequireAll (lines 8-11) taken out: the translation outside the <IfVersion> sections decides as Apache 2.2 did\n</IfVersion>\n" +
		"ErrorDocument 403 \"No.\"\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// An .htaccess file translate cannot read exactly, whose Require lines
// would replace the Require its parent's Allow lines became, is refused
// until translated by hand: its access lines commented out, "Require all
// denied" at its top. Without Order/Allow/Deny above it, it is left as
// it is (its lines decide on 2.4 as they did).
func TestConvertClosesUnknownHtaccess(t *testing.T) {
	for _, tt := range []struct {
		name, parent string
		closed       bool
	}{
		{"under Allow lines", "Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n", true},
		{"under Require", "Require all granted\n", false},
	} {
		dir := t.TempDir()
		root := filepath.Join(dir, "www")
		os.MkdirAll(filepath.Join(root, "sales"), 0o755)
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte("DocumentRoot "+root+"\n<Directory "+root+">\nAllowOverride All\n"+tt.parent+"</Directory>\n"), 0o644)
		ht := filepath.Join(root, "sales", ".htaccess")
		src := "AuthType Basic\nAuthName sales\nAuthUserFile /x/users\n<If \"%{HTTP_HOST} == 'sales.example'\">\n    Require valid-user\n</If>\n"
		os.WriteFile(ht, []byte(src), 0o644)
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, ForwardUnfaithful: true}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(conv.Reviews) != 1 {
			t.Fatalf("%s: reviews %v, want the .htaccess file's", tt.name, conv.Reviews)
		}
		out, ok := conv.Files[ht]
		if !tt.closed {
			if ok || string(conv.Data[ht]) != src {
				t.Errorf("%s: the file was changed:\n%s", tt.name, out)
			}
			continue
		}
		want := "# orderly DIR-10: NEEDS REVIEW, refused until translated by hand: access rules in a section other than <Files>, <FilesMatch> or <Limit> inside an .htaccess file are not translated\n" +
			"Require all denied\nAuthType Basic\nAuthName sales\nAuthUserFile /x/users\n<If \"%{HTTP_HOST} == 'sales.example'\">\n    # Require valid-user\n</If>\n"
		if string(out) != want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, out, want)
		}
		if slices.Contains(conv.CompatKept, ht) {
			t.Errorf("%s: mod_access_compat kept for a file with no legacy line left", tt.name)
		}
	}
}

// An .htaccess file Apache reads only in part (AllowOverride ...
// Nonfatal=All skips the lines it does not allow) is closed as one
// translate cannot read: its Require lines, left in force, would replace
// what the parent's Allow lines became (random translate, seed 22,
// configuration 273: the output granted what the legacy refused).
func TestConvertClosesPartlyReadHtaccess(t *testing.T) {
	for _, tt := range []struct {
		name, override string
		closed         bool
	}{
		{"partly read", "AuthConfig Limit Nonfatal=All", true},
		{"refused whole", "AuthConfig Limit", false},
	} {
		dir := t.TempDir()
		root := filepath.Join(dir, "www")
		os.MkdirAll(filepath.Join(root, "logs"), 0o755)
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte("DocumentRoot "+root+"\n<Directory "+root+">\nAllowOverride "+tt.override+"\nOrder allow,deny\nAllow from 10.1.0.0/16\n</Directory>\n"), 0o644)
		ht := filepath.Join(root, "logs", ".htaccess")
		src := "Require ip 2001:db8::/48\nSetEnvIf X-Token tok bot\n"
		os.WriteFile(ht, []byte(src), 0o644)
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, ForwardUnfaithful: true}}})
		if err != nil {
			t.Fatal(err)
		}
		out, written := conv.Files[ht]
		if closed := written && strings.Contains(string(out), "Require all denied\n# Require ip 2001:db8::/48\n"); closed != tt.closed {
			t.Errorf("%s: closed %v, want %v: reviews %v\n%s", tt.name, closed, tt.closed, conv.Reviews, out)
		}
	}
}

// The Require lines translate writes in an .htaccess file need
// AllowOverride AuthConfig where Limit allowed Order/Allow/Deny: the
// governing AllowOverride gets it where that lets no other .htaccess file
// in lines Apache refuses now; otherwise a <Directory> of the file's own
// directory does, or, where such a file is in it or below, the file is
// left as it is, mod_access_compat kept (random translate, seed
// 1795774747367395766, configuration 472: the added AuthConfig let a file
// Apache answered 500 for grant).
func TestConvertAuthConfigOverride(t *testing.T) {
	for _, tt := range []struct {
		name  string
		other string // an .htaccess file with an AuthConfig line, by path under the root
		// want: in the configuration; left: lan/.htaccess is left as it is
		want string
		left bool
	}{
		{"alone", "", "    # orderly DIR-10: .htaccess access rules are Require rules in 2.4, which need AuthConfig\n    AllowOverride Limit Indexes AuthConfig\n</Directory>\n", false},
		{"a sibling", "broken/.htaccess", "    AllowOverride Limit Indexes\n</Directory>\n<Directory @ROOT@/lan>\n    # orderly DIR-10: .htaccess access rules are Require rules in 2.4, which need AuthConfig; not in @ROOT@ as a whole, where other .htaccess files hold lines it would let Apache read\n    AllowOverride Limit Indexes AuthConfig\n</Directory>\n", false},
		{"below it", "lan/sub/.htaccess", "    AllowOverride Limit Indexes\n</Directory>\n", true},
	} {
		dir := t.TempDir()
		root := filepath.Join(dir, "www")
		write := func(p, s string) {
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		lan := filepath.Join(root, "lan/.htaccess")
		write(lan, "Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n")
		if tt.other != "" {
			write(filepath.Join(root, tt.other), "AuthType Basic\nAuthName x\nRequire valid-user\n")
		}
		conf := filepath.Join(dir, "httpd.conf")
		write(conf, "<Directory "+root+">\n    AllowOverride Limit Indexes\n</Directory>\n")
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}}})
		if err != nil {
			t.Fatal(err)
		}
		out := string(conv.Files[conf])
		if want := strings.ReplaceAll(tt.want, "@ROOT@", root); !strings.HasSuffix(out, want) {
			t.Errorf("%s: the configuration ends\n%s\nwant\n%s", tt.name, out, want)
		}
		_, rewritten := conv.Files[lan]
		if kept := slices.Contains(conv.CompatKept, lan); rewritten == tt.left || kept != tt.left {
			t.Errorf("%s: lan/.htaccess rewritten %v, mod_access_compat kept for it %v; want it left as it is: %v", tt.name, rewritten, kept, tt.left)
		}
	}
}

// An .htaccess file whose access lines only AllowOverrideList lets in is
// left as it is, mod_access_compat kept: the Require lines of a
// translation would have to be listed too (random translate, seed
// 1795775168137638789, configuration 8: it was taken for a file Apache
// refuses, and its Allow lines answered 500 once the module was dropped).
// With AllowOverride None and a list, Apache reads the file all the same.
func TestConvertHtaccessOverrideList(t *testing.T) {
	for _, override := range []string{"Options", "None"} {
		dir := t.TempDir()
		root := filepath.Join(dir, "www")
		ht := filepath.Join(root, ".htaccess")
		os.MkdirAll(root, 0o755)
		if err := os.WriteFile(ht, []byte("Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte("<Directory "+root+">\n    AllowOverride "+override+"\n    AllowOverrideList Order Allow Deny\n</Directory>\n"), 0o644)
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}}})
		if err != nil {
			t.Fatal(err)
		}
		_, rewritten := conv.Files[ht]
		if rewritten || !slices.Contains(conv.CompatKept, ht) || len(conv.Reviews) != 1 || !strings.Contains(conv.Reviews[0].Text, "AllowOverrideList") {
			t.Errorf("AllowOverride %s: rewritten %v, compat kept for %v, reviews %v; want it left as it is, the module kept", override, rewritten, conv.CompatKept, conv.Reviews)
		}
	}
}

// An .htaccess file Apache refuses whole, with Order/Allow/Deny lines, under
// an AllowOverrideList is left as it is, mod_access_compat kept: without
// the module Apache 2.4 reads it and serves its directory (random
// translate, seed 50, configuration 268). One with no such line, or with
// no list (an unknown directive is as fatal as one not allowed), needs no
// module.
func TestConvertRefusedHtaccessKeepsCompat(t *testing.T) {
	for _, tt := range []struct {
		name, ht string
		kept     bool
	}{
		{"compat lines", "Order allow,deny\nDeny from env=!tok\n<Files x.php>\n    Deny from all\n</Files>\n", true},
		{"no compat line", "Options +Indexes\n<Files x.php>\n    Require valid-user\n</Files>\n", false},
	} {
		for _, sem := range []translate.Semantics{translate.Compat24, translate.Legacy22} {
			dir := t.TempDir()
			root := filepath.Join(dir, "www")
			ht := filepath.Join(root, ".htaccess")
			os.MkdirAll(root, 0o755)
			if err := os.WriteFile(ht, []byte(tt.ht), 0o644); err != nil {
				t.Fatal(err)
			}
			conf := filepath.Join(dir, "httpd.conf")
			override := "AllowOverride Nonfatal=Override None\n    AllowOverrideList Order Allow Deny"
			if sem == translate.Legacy22 {
				override = "AllowOverride AuthConfig" // Order/Allow/Deny and <Files> not allowed
			}
			load := "LoadModule authz_host_module modules/mod_authz_host.so\n"
			if sem == translate.Compat24 {
				load += "LoadModule access_compat_module modules/mod_access_compat.so\nLoadModule authz_core_module modules/mod_authz_core.so\n"
			}
			main := load + "<Directory " + root + ">\n    " + override + "\n</Directory>\n"
			os.WriteFile(conf, []byte(main), 0o644)
			conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: root}}})
			if err != nil {
				t.Fatal(err)
			}
			_, rewritten := conv.Files[ht]
			kept := slices.Contains(conv.CompatKept, ht)
			loads := strings.Contains(string(conv.Files[conf]), "\nLoadModule access_compat_module modules/mod_access_compat.so\n")
			want := tt.kept && sem == translate.Compat24 // 2.2 has no AllowOverrideList
			if rewritten || kept != want || loads != want || len(conv.Reviews) != 1 {
				t.Errorf("%s, %s: rewritten %v, compat kept for %v (want kept %v), module loaded %v, reviews %v:\n%s", tt.name, sem, rewritten, conv.CompatKept, want, loads, conv.Reviews, conv.Files[conf])
			}
		}
	}
}

// A closed .htaccess file's Require all denied needs AuthConfig too: its
// governing AllowOverride gets it, or, where that would let Apache read
// another file's lines, the configuration refuses the file's directory
// itself; with Nonfatal=Override Apache would skip the line and the file
// would not be closed at all (random translate, seed 35, configuration
// 104: legacy 403, translation 200).
func TestConvertClosedHtaccessNeedsAuthConfig(t *testing.T) {
	for _, tt := range []struct {
		name, other, want string
	}{
		{"alone", "", "    # orderly DIR-10: .htaccess access rules are Require rules in 2.4, which need AuthConfig\n    AllowOverride Nonfatal=Override Limit AuthConfig\n"},
		{"another below", "logs/sub/.htaccess", "<Directory @ROOT@/logs>\n    # orderly DIR-10: NEEDS REVIEW, refused until @ROOT@/logs/.htaccess is translated by hand: its Require lines need AllowOverride AuthConfig (@CONF@:2), which would let Apache read lines it refuses now in @ROOT@/logs/sub/.htaccess\n    Require all denied\n</Directory>\n"},
	} {
		dir := t.TempDir()
		root := filepath.Join(dir, "www")
		os.MkdirAll(filepath.Join(root, "logs/sub"), 0o755)
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte("<Directory "+root+">\n    AllowOverride Nonfatal=Override Limit\n    Order allow,deny\n    Allow from 10.1.0.0/16\n</Directory>\n"), 0o644)
		os.WriteFile(filepath.Join(root, "logs/.htaccess"), []byte("Order allow,deny\nAllow from 10.0.0.0/8\nSatisfy Any\n"), 0o644)
		if tt.other != "" {
			os.WriteFile(filepath.Join(root, tt.other), []byte("AuthType Basic\nRequire valid-user\n"), 0o644)
		}
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root, ForwardUnfaithful: true}}})
		if err != nil {
			t.Fatal(err)
		}
		out := string(conv.Files[conf])
		if want := strings.NewReplacer("@ROOT@", root, "@CONF@", conf).Replace(tt.want); !strings.Contains(out, want) {
			t.Errorf("%s: the configuration does not hold\n%s\n%s", tt.name, want, out)
		}
		if ht := string(conv.Files[filepath.Join(root, "logs/.htaccess")]); !strings.Contains(ht, "Require all denied\n") {
			t.Errorf("%s: logs/.htaccess not closed:\n%s", tt.name, ht)
		}
	}
}

// TestPrefetchHtaccess: the document roots the directives name (relative
// ones under the last ServerRoot, those of virtual hosts too) are listed
// through the cache for the main server's AccessFileName names, so that
// the search after the model is built finds them listed: a file made
// after the prefetch is not seen through the cache, one made before is.
func TestPrefetchHtaccess(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"srv/main", "srv/v1/sub", "abs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := filepath.Join(dir, "srv/v1/sub/.acl")
	if err := os.WriteFile(before, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := "ServerRoot " + filepath.Join(dir, "srv") + "\nAccessFileName .acl\nDocumentRoot main\n" +
		"<VirtualHost *:80>\nDocumentRoot v1\n</VirtualHost>\n<VirtualHost *:80>\nDocumentRoot " + filepath.Join(dir, "abs") + "\n</VirtualHost>\n"
	ds, err := apacheconf.Parse("httpd.conf", []byte(conf))
	if err != nil {
		t.Fatal(err)
	}
	cache := new(dirscan.Cache)
	prefetchHtaccess(ds, "/elsewhere", cache)()
	var after []string
	for _, d := range []string{"srv/main", "srv/v1", "abs"} {
		p := filepath.Join(dir, d, ".acl")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		after = append(after, p)
	}
	var roots []dirscan.Root
	for _, d := range []string{"srv/main", "srv/v1", "abs"} {
		roots = append(roots, dirscan.Root{Dir: filepath.Join(dir, d), Names: []string{".acl"}})
	}
	got := slices.Concat(cache.Find(roots, 0).Files...)
	if !slices.Equal(got, []string{before}) {
		t.Errorf("through the cache after the prefetch: %v, want only %s (listed before the others were made)", got, before)
	}
	if fresh := slices.Concat(dirscan.Find(roots, 0).Files...); len(fresh) != 4 {
		t.Errorf("without the cache: %v, want the four files of %v and %s", fresh, after, before)
	}
}
