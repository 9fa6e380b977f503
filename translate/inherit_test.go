package translate

import (
	"slices"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/regex"
	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// locationCovers is location_walk's match of a plain <Location> path a
// against b's: "/api/" does not cover "/api" (random translate, seed 60,
// configuration 54, and corpus 949: the Satisfy Any of <Location "/api/">
// was folded into <Location "/api">, granting the URL "/api").
func TestLocationCovers(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		sem  Semantics
		want bool
	}{
		{"/api", "/api", Compat24, true},
		{"/api", "/api/v1", Compat24, true},
		{"/api/", "/api/v1", Compat24, true},
		{"/api/", "/api", Compat24, false},
		{"/api", "/apix", Compat24, false},
		{"/api", "/apix", Legacy22, true}, // 2.2: any prefix
		{"/", "/api", Compat24, true},
		{"/api/v1", "/api", Compat24, false},
	} {
		if got := locationCovers(&Config{Semantics: tt.sem}, tt.a, tt.b); got != tt.want {
			t.Errorf("locationCovers(%q, %q) under %s = %v, want %v", tt.a, tt.b, tt.sem, got, tt.want)
		}
	}
}

// locationFile maps a <Location> as mod_alias would, and names the other
// trees its URLs may reach (corpus 950: <Location /api> under an Alias
// inherited the document root's <Directory> sections, and its Allow from
// all replaced the Require valid-user of the Alias target's).
func TestLocationFile(t *testing.T) {
	cfg := &Config{DocumentRoot: "/srv/www", Aliases: []Alias{
		{Fake: "/api", Real: "/srv/api"},
		{Fake: "/icons/", Real: "/usr/share/icons/"},
	}}
	manual, err := regex.Compile(`^/manual(?:/(?:de|en))?(/.*)?$`, regex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	any, err := regex.Compile(`(.*)\.cgi$`, regex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		loc, file string
		others    []string
		aliases   []Alias
		userDirs  []string
	}{
		{"/api", "/srv/api/", nil, nil, nil},
		{"/api/v1", "/srv/api/v1/", nil, nil, nil},
		{"/apix", "/srv/www/apix/", nil, nil, nil},
		{"/", "/srv/www/", []string{"/srv/api/", "/usr/share/icons/"}, nil, nil},
		{"/dav", "/srv/www/dav/", nil, []Alias{{Fake: "/manual", Regex: manual}}, nil},
		{"/manual/en", "/srv/www/manual/en/", []string{""}, []Alias{{Fake: "/manual", Regex: manual}}, nil},
		{"/dav", "/srv/www/dav/", []string{""}, []Alias{{Regex: any}}, nil},
		{"/", "/srv/www/", []string{"/home/"}, []Alias{}, []string{"/home/*/public_html"}},
		{"/docs", "/srv/www/docs/", nil, []Alias{}, []string{"/home/*/public_html"}},
	} {
		c := *cfg
		if tt.aliases != nil {
			c.Aliases = tt.aliases
		}
		c.UserDirs = tt.userDirs
		file, others, why := locationFile(&c, tt.loc)
		if file != tt.file || !slices.Equal(others, tt.others) || why != "" {
			t.Errorf("locationFile(%q) = %q, %q, %q; want %q, %q", tt.loc, file, others, why, tt.file, tt.others)
		}
	}
	// Below "/~", the home directories: not known here.
	if _, _, why := locationFile(&Config{DocumentRoot: "/srv/www", UserDirs: []string{"public_html"}}, "/~alice/x"); why == "" {
		t.Error(`locationFile("/~alice/x") with a UserDir: no reason to review`)
	}
	for expr, want := range map[string]string{`^/manual(?:/.*)?$`: "/manual", `^/a|^/b`: "", `^/cgi-bin/x?y`: "/cgi-bin/", `/x`: "", `^\/x`: "", `^/(a|b)/c`: "/"} {
		if got, _ := anchoredPrefix(expr); got != want {
			t.Errorf("anchoredPrefix(%q) = %q, want %q", expr, got, want)
		}
	}
}

// servedTrees bounds the directories requests reach outside the document
// root (corpus 951: a <Files> section inherited the document root's
// <Directory> sections for the files of an Alias target too).
func TestServedTrees(t *testing.T) {
	manual, err := regex.Compile(`^/manual(/.*)?$`, regex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Aliases: []Alias{{Fake: "/api", Real: "/srv/api"}, {Regex: manual, Real: "/var/www/manual$1"}, {Regex: manual, Real: "$1"}},
		UserDirs: []string{"/home/*/public_html"}}
	want := []string{"/srv/api/", "/var/www/", "", "/home/"}
	if got := servedTrees(cfg); !slices.Equal(got, want) {
		t.Errorf("servedTrees = %q, want %q", got, want)
	}
	cfg = &Config{UserDirHomes: true}
	if got := servedTrees(cfg); !slices.Equal(got, []string{""}) {
		t.Errorf("servedTrees with UserDir public_html = %q, want any directory", got)
	}
}

// UserDir relative to the home directories is recorded as such; switched
// off, or naming users only, it is not.
func TestUserDirHomes(t *testing.T) {
	for text, want := range map[string]bool{
		"UserDir public_html\nUserDir disabled root\n": true,
		"UserDir disabled\n":                           false,
		"UserDir enabled alice bob\n":                  false,
		"UserDir /srv/users\n":                         false,
		"UserDir http://www.example.com/users\n":       false,
	} {
		ds, err := apacheconf.Parse("t.conf", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Build(ds, Options{Semantics: Compat24, DocumentRoot: "/srv/www", RenderOnly: true, ForwardUnfaithful: true, Modules: map[string]bool{"userdir_module": true}})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if cfg.UserDirHomes != want {
			t.Errorf("%q: UserDirHomes %v, want %v", text, cfg.UserDirHomes, want)
		}
	}
}

// rewriteTrees names where a server's RewriteRule lines map URLs as file
// paths (corpus 952): a substitution whose first segment exists on disk;
// not a URL path, [PT], "-" or a redirect.
func TestRewriteTrees(t *testing.T) {
	dir := t.TempDir() // exists, so its first segment does too
	rules := []*rewrite.Rule{
		{Subst: dir + "/api/$1"},
		{Subst: "/index.php"},
		{Subst: dir + "/x", Flags: rewrite.FlagPassThrough},
		{Subst: "-"},
		{Subst: "http://example.com/$1"},
		{Subst: "/$1"},
		{Subst: dir + "/file.html"},
	}
	got := RewriteTrees(&Config{Rewrite: &Rewrite{Engine: 1, Rules: rules}})
	want := []string{dir + "/api/", "", dir + "/"}
	if !slices.Equal(got, want) {
		t.Errorf("rewriteTrees = %q, want %q", got, want)
	}
	if got := RewriteTrees(&Config{Rewrite: &Rewrite{Engine: -1, Rules: rules}}); got != nil {
		t.Errorf("RewriteEngine Off: rewriteTrees = %q, want none", got)
	}
}

// A virtual host's view has the UserDir directories of the host and of
// the main server, and reaches home directories where either does.
func TestUserDirsInHosts(t *testing.T) {
	text := "UserDir public_html\n<VirtualHost *:80>\nServerName a.test\nUserDir /srv/users\n</VirtualHost>\n<VirtualHost *:80>\nServerName b.test\n</VirtualHost>\n"
	ds, err := apacheconf.Parse("t.conf", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Build(ds, Options{Semantics: Compat24, DocumentRoot: "/srv/www", RenderOnly: true, ForwardUnfaithful: true, Modules: map[string]bool{"userdir_module": true}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.VHosts[0].Config, cfg.VHosts[1].Config
	if !slices.Equal(a.UserDirs, []string{"/srv/users"}) || !a.UserDirHomes || len(b.UserDirs) != 0 || !b.UserDirHomes {
		t.Errorf("a.test: %q, homes %v; b.test: %q, homes %v", a.UserDirs, a.UserDirHomes, b.UserDirs, b.UserDirHomes)
	}
	text = "<VirtualHost *:80>\nServerName a.test\nUserDir public_html\n</VirtualHost>\n"
	ds, _ = apacheconf.Parse("t.conf", []byte(text))
	cfg, err = Build(ds, Options{Semantics: Compat24, DocumentRoot: "/srv/www", RenderOnly: true, ForwardUnfaithful: true, Modules: map[string]bool{"userdir_module": true}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UserDirHomes || !cfg.VHosts[0].Config.UserDirHomes {
		t.Errorf("a host's own relative UserDir: main %v, host %v; want false, true", cfg.UserDirHomes, cfg.VHosts[0].Config.UserDirHomes)
	}
}
