package walk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// How a request's sections merge, module by module
// (apache-access-semantics.md §4.1, §4.2): AuthType, AuthName,
// AuthUserFile and AuthBasicAuthoritative are each inherited unless the
// child sets them; a section holding only AuthMerging And/Or or only
// AuthzSendForbiddenOnFailure keeps the inherited Require; the latter is
// itself inherited unless set.
func TestMergeAuth(t *testing.T) {
	const base = `<Directory @DOCROOT@>
AuthType Basic
AuthName Outer
AuthUserFile /x
AuthBasicAuthoritative Off
Require user bob
AuthzSendForbiddenOnFailure On
</Directory>
<Location /realm>
AuthName Inner
</Location>
<Location /carol>
Require user carol
</Location>
<Location /fofoff>
AuthzSendForbiddenOnFailure Off
</Location>
<Location /authoritative>
AuthBasicAuthoritative On
</Location>
<Location /none>
AuthType None
</Location>
`
	type mreq struct {
		req
		realm string
	}
	tests := []struct {
		name string
		conf string
		reqs []mreq
	}{
		{"inherited auth settings", base, []mreq{
			{req: req{target: "/index.html", ip: "8.8.8.8", want: 401}, realm: "Outer"},
			{req: req{target: "/index.html", ip: "8.8.8.8", user: "bob:ok"}},
			{req: req{target: "/index.html", ip: "8.8.8.8", user: "alice:ok", want: 403}}, // ForbiddenOnFail
			{req: req{target: "/index.html", ip: "8.8.8.8", user: "carol:x", want: 500}},  // not authoritative: AH01796
			{req: req{target: "/index.html", ip: "8.8.8.8", user: "bob:bad", want: 401}, realm: "Outer"},
			{req: req{target: "/realm/", ip: "8.8.8.8", want: 401}, realm: "Inner"},
			{req: req{target: "/realm/", ip: "8.8.8.8", user: "bob:ok"}},
			{req: req{target: "/carol/", ip: "8.8.8.8", want: 401}, realm: "Outer"},
			{req: req{target: "/carol/", ip: "8.8.8.8", user: "bob:ok", want: 403}},                    // carol's list replaced bob's; forbidden on failure still on
			{req: req{target: "/fofoff/", ip: "8.8.8.8", user: "alice:ok", want: 401}, realm: "Outer"}, // keeps Require user bob
			{req: req{target: "/fofoff/", ip: "8.8.8.8", user: "bob:ok"}},
			{req: req{target: "/authoritative/", ip: "8.8.8.8", user: "carol:x", want: 401}, realm: "Outer"},
			{req: req{target: "/none/", ip: "8.8.8.8", want: 500}},
		}},
		{"a lone AuthMerging or AuthzSendForbiddenOnFailure keeps the Require", `<Directory @DOCROOT@>
Require ip 10.1
</Directory>
<Location /and>
AuthMerging And
</Location>
<Location /or>
AuthMerging Or
</Location>
<Location /fof>
AuthzSendForbiddenOnFailure On
</Location>
<Location /or/more>
AuthMerging Or
Require ip 192.168
</Location>
`, []mreq{
			{req: req{target: "/and/", ip: "10.1.2.3"}}, {req: req{target: "/and/", ip: "8.8.8.8", want: 403}},
			{req: req{target: "/or/", ip: "10.1.2.3"}}, {req: req{target: "/or/", ip: "8.8.8.8", want: 403}},
			{req: req{target: "/fof/", ip: "10.1.2.3"}}, {req: req{target: "/fof/", ip: "8.8.8.8", want: 403}},
			{req: req{target: "/or/more/", ip: "10.1.2.3"}}, {req: req{target: "/or/more/", ip: "192.168.1.1"}}, {req: req{target: "/or/more/", ip: "8.8.8.8", want: 403}},
		}},
		{"AuthMerging with nothing to merge with", `<Location /and>
AuthMerging And
Require ip 10.1
</Location>
<Location /and/x>
AuthMerging And
</Location>
`, []mreq{
			{req: req{target: "/and/", ip: "10.1.2.3"}}, {req: req{target: "/and/", ip: "8.8.8.8", want: 403}},
			{req: req{target: "/and/x/", ip: "10.1.2.3"}}, {req: req{target: "/and/x/", ip: "8.8.8.8", want: 403}},
			{req: req{target: "/", ip: "8.8.8.8"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := engine(t, tt.conf, "realm/index.html", "carol/index.html", "fofoff/index.html", "authoritative/index.html", "none/index.html", "and/x/index.html", "or/more/index.html", "fof/index.html", "and/index.html", "or/index.html")
			for _, r := range tt.reqs {
				res := decide(e, r.req)
				if res.Status != r.want || res.Realm != r.realm {
					t.Errorf("%s from %s user=%q: status %d (layer %s, rule %s) realm %q, want %d realm %q",
						r.target, r.ip, r.user, res.Status, res.Layer, res.Rule, res.Realm, r.want, r.realm)
				}
			}
		})
	}
}

// The sections whose Order/Allow/Deny and whose Require configurations
// are in force are reported separately: the two layers inherit
// independently (apache-access-semantics.md §9.3).
func TestCompatAndAuthzFrom(t *testing.T) {
	e, _ := engine(t, `<Directory @DOCROOT@>
Order deny,allow
Allow from all
</Directory>
<Directory @DOCROOT@/a>
Require all granted
</Directory>
<Location /a/b>
SetEnvIf User-Agent x y
</Location>
`, "a/b/index.html", "a/index.html")
	for _, tt := range []struct {
		target        string
		compat, authz string // the sections' paths, "" for none
	}{
		{"/index.html", "docroot", ""},
		{"/a/", "docroot", "a"},
		{"/a/b/", "docroot", "a"},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8"})
		if got := sectionTail(res.CompatFrom); got != tt.compat {
			t.Errorf("%s: CompatFrom %q, want %q", tt.target, got, tt.compat)
		}
		if got := sectionTail(res.AuthzFrom); got != tt.authz {
			t.Errorf("%s: AuthzFrom %q, want %q", tt.target, got, tt.authz)
		}
	}
}

// sectionTail is the last element of a section's path.
func sectionTail(s *translate.Section) string {
	if s == nil {
		return ""
	}
	return filepath.Base(strings.TrimSuffix(s.Path, "/"))
}

// A named group of a matching regex section sets MATCH_<NAME> (upper
// case) before authorisation (server/request.c, 2.4.8+; corpus case 129):
// one variable per group that took part in the match.
func TestMatchEnv(t *testing.T) {
	e, _ := engine(t, `<DirectoryMatch "/home/(?<owner>[^/]+)/(?<part>[a-z]+)(?<digits>[0-9]+)?">
Require all granted
</DirectoryMatch>
<FilesMatch "^(?<file>[^.]+)\.html$">
Require user %{env:MATCH_OWNER}
AuthType Basic
AuthName R
AuthUserFile /x
</FilesMatch>
`, "home/bob/private/page.html", "home/alice/pub1/page.html")
	for _, tt := range []struct {
		target, user string
		want         int
		env          map[string]string // "" for unset
	}{
		{"/home/bob/private/page.html", "bob:ok", 0, map[string]string{"MATCH_OWNER": "bob", "MATCH_PART": "private", "MATCH_DIGITS": "", "MATCH_FILE": "page"}},
		{"/home/bob/private/page.html", "alice:ok", 401, nil},
		{"/home/alice/pub1/page.html", "alice:ok", 0, map[string]string{"MATCH_OWNER": "alice", "MATCH_PART": "pub", "MATCH_DIGITS": "1", "MATCH_FILE": "page"}},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8", user: tt.user})
		if res.Status != tt.want {
			t.Errorf("%s as %s: %d, want %d", tt.target, tt.user, res.Status, tt.want)
		}
		for name, want := range tt.env {
			if got, ok := res.Env.Get(name); got != want || ok != (want != "") {
				t.Errorf("%s: %s = %q (%v), want %q", tt.target, name, got, ok, want)
			}
		}
	}
}

// Each walk merges its own sections, then merges the result over what the
// walks before it left (ap_directory_walk, ap_file_walk,
// ap_location_walk): a <Location> with AuthMerging Or is merged over the
// <Directory> sections' result, which the deeper <Directory> has already
// overridden (apache-access-semantics.md §4.2).
func TestMergePhases(t *testing.T) {
	e, _ := engine(t, `<Directory @DOCROOT@>
Require ip 10.1
</Directory>
<Directory @DOCROOT@/sub>
Require ip 10.2
</Directory>
<Files x.html>
Require ip 10.4
</Files>
<Location /sub>
AuthMerging Or
Require ip 10.3
</Location>
`, "sub/index.html", "sub/x.html")
	for _, tt := range []struct {
		target, ip string
		want       int
	}{
		{"/sub/", "10.1.2.3", 403},
		{"/sub/", "10.2.2.3", 0},
		{"/sub/", "10.3.2.3", 0},
		{"/sub/x.html", "10.4.2.3", 0},
		{"/sub/x.html", "10.3.2.3", 0},
		{"/sub/x.html", "10.2.2.3", 403},
		{"/index.html", "10.1.2.3", 0},
		{"/index.html", "10.2.2.3", 403},
	} {
		if res := decide(e, req{target: tt.target, ip: tt.ip}); res.Status != tt.want {
			t.Errorf("%s from %s: %d, want %d", tt.target, tt.ip, res.Status, tt.want)
		}
	}
}

// Under 2.2 the Require lines (Requires22) make the section whose Require
// configuration is in force.
func TestAuthzFrom22(t *testing.T) {
	e, _ := engineWith(t, translate.Legacy22, `<Directory @DOCROOT@>
Order allow,deny
Allow from all
</Directory>
<Directory @DOCROOT@/a>
AuthType Basic
AuthName R
AuthUserFile /x
Require valid-user
</Directory>
`, "a/index.html")
	for _, tt := range []struct {
		target        string
		compat, authz string
	}{
		{"/index.html", "docroot", ""},
		{"/a/index.html", "docroot", "a"},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8", user: "bob:ok"})
		if got := sectionTail(res.CompatFrom); got != tt.compat {
			t.Errorf("%s: CompatFrom %q, want %q", tt.target, got, tt.compat)
		}
		if got := sectionTail(res.AuthzFrom); got != tt.authz {
			t.Errorf("%s: AuthzFrom %q, want %q", tt.target, got, tt.authz)
		}
	}
}

// When no directive decides, the decision names the default of the last
// section that set an access configuration (Order/Allow/Deny/Satisfy or
// Require), else the server's: a section that sets none does not count.
func TestDefaultRule(t *testing.T) {
	e, _ := engine(t, `<Location /plain>
SetEnvIf User-Agent x y
</Location>
`, "plain/index.html")
	for _, target := range []string{"/plain/index.html", "/index.html"} {
		res := decide(e, req{target: target, ip: "8.8.8.8"})
		if res.Status != 0 || res.Rule != e.Config().Default {
			t.Errorf("%s: %d by %v, want 0 by %v", target, res.Status, res.Rule, e.Config().Default)
		}
	}
}

// Under 2.2, AuthzUserAuthoritative and AuthzGroupFileAuthoritative are
// inherited by a section that does not set them: with both Off, a user
// the group file does not know passes on to mod_authz_user, and one
// neither module grants falls to mod_authz_default (its first Require
// line decides).
func TestAuthoritative22Inherited(t *testing.T) {
	root := tree(t, "index.html", "sub/index.html")
	cf := filepath.Join(filepath.Dir(root), "legacy.conf")
	conf := "<Directory " + root + ">\nAuthType Basic\nAuthName R\nAuthUserFile /x\nAuthGroupFile /g\nAuthzUserAuthoritative Off\nAuthzGroupFileAuthoritative Off\n</Directory>\n" +
		"<Location /sub>\nRequire nobody-knows\nRequire user bob\nRequire group admins\n</Location>\n"
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	e := New(cfg, OS, users{"alice": "ok", "bob": "ok", "carol": "ok"})
	for _, tt := range []struct {
		user, rule string
		want       int
	}{
		{"alice:ok", "Require group admins", 0},
		{"bob:ok", "Require user bob", 0},
		{"carol:ok", "Require nobody-knows", 401},
	} {
		res := decide(e, req{target: "/sub/index.html", ip: "8.8.8.8", user: tt.user})
		if res.Status != tt.want || res.Rule == nil || res.Rule.Text != tt.rule {
			t.Errorf("%s: %d by %v, want %d by %q", tt.user, res.Status, res.Rule, tt.want, tt.rule)
		}
	}
}

// The sections a request gets, in Apache's merge order: <Directory> by
// depth with each directory's .htaccess after its sections, once each,
// then <DirectoryMatch>, <Files> (top-level, then nested), <Location>.
func TestSectionOrder(t *testing.T) {
	e, root := engine(t, `<Directory />
Require all granted
</Directory>
<Directory @DOCROOT@>
AllowOverride All
</Directory>
<Directory @DOCROOT@/d/e>
<Files x.html>
Require all granted
</Files>
</Directory>
<DirectoryMatch "/d/">
Require all granted
</DirectoryMatch>
<Files x.html>
Require all granted
</Files>
<Location /d>
Require all granted
</Location>
`, "d/e/x.html", "d/index.html")
	for _, f := range []string{"d/.htaccess", "d/e/.htaccess"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("Require all granted\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	name := func(s *translate.Section) string {
		return strings.ReplaceAll(s.String(), root, "@DOCROOT@")
	}
	for _, tt := range []struct {
		target string
		want   []string
	}{
		{"/d/e/x.html", []string{"<Directory />", "<Directory @DOCROOT@>", "@DOCROOT@/d/.htaccess", "<Directory @DOCROOT@/d/e>", "@DOCROOT@/d/e/.htaccess",
			"<DirectoryMatch /d/>", "<Files x.html>", "<Files x.html>", "<Location /d>"}},
		{"/d/e/", []string{"<Directory />", "<Directory @DOCROOT@>", "@DOCROOT@/d/.htaccess", "<Directory @DOCROOT@/d/e>", "@DOCROOT@/d/e/.htaccess",
			"<DirectoryMatch /d/>", "<Location /d>"}},
		{"/d", []string{"<Directory />", "<Directory @DOCROOT@>", "@DOCROOT@/d/.htaccess", "<Location /d>"}},
	} {
		res := decide(e, req{target: tt.target, ip: "8.8.8.8"})
		var got []string
		for _, s := range res.Sections {
			got = append(got, name(s))
		}
		if strings.Join(got, " | ") != strings.Join(tt.want, " | ") {
			t.Errorf("%s: sections\n %s\nwant\n %s", tt.target, strings.Join(got, " | "), strings.Join(tt.want, " | "))
		}
	}
}
