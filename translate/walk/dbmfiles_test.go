package walk

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// dbmCheckUsers is users with a DBMChecker that refuses the files whose name
// holds "bdb" unless their type is SDBM, and records what it was asked.
type dbmCheckUsers struct {
	users
	asked *[]string
}

func (d dbmCheckUsers) CheckDBMFile(file, typ string) error {
	*d.asked = append(*d.asked, filepath.Base(file)+" "+typ)
	if strings.Contains(file, "bdb") && typ != "SDBM" {
		return errors.New(file + ": a Berkeley DB file")
	}
	return nil
}

// TestDBMError: every section that sets AuthDBMUserFile or
// AuthDBMGroupFile (<Directory>, <DirectoryMatch>,
// <Files> at the top and nested, <Location>, <AuthnProviderAlias>, a
// virtual host's) is checked with the type it sets beside the file, or
// "default" (mod_authn_dbm and mod_authz_dbm have no merger); each
// refusal names the line of the file's directive, once, in the order of
// the configuration. 2.2's AuthDBMGroupFile, not evaluated, is not
// asked about. An Identity that is no DBMChecker (lint's) refuses none.
func TestDBMError(t *testing.T) {
	conf := `<AuthnProviderAlias dbm staff>
AuthDBMUserFile @DOCROOT@/../bdb-staff
</AuthnProviderAlias>
<Directory @DOCROOT@/a>
AuthDBMUserFile @DOCROOT@/../bdb-a
AuthDBMType SDBM
AuthDBMGroupFile @DOCROOT@/../bdb-groups
<Files x.html>
AuthDBMType GDBM
AuthDBMUserFile @DOCROOT@/../bdb-nested
</Files>
</Directory>
<DirectoryMatch "^/nowhere">
AuthDBMGroupFile @DOCROOT@/../sdbm-groups
AuthzDBMType SDBM
</DirectoryMatch>
<Files y.html>
AuthDBMType DB
</Files>
<Location /l>
AuthDBMUserFile @DOCROOT@/../users
</Location>
<VirtualHost *:80>
ServerName v.test
<Location /v>
AuthDBMUserFile @DOCROOT@/../bdb-vhost
</Location>
</VirtualHost>
`
	e, root := engineMods(t, translate.Compat24, append(slices.Clone(translate.FragmentModules), "authn_dbm_module", "authz_dbm_module"), conf)
	var asked []string
	e.id = dbmCheckUsers{users: users{}, asked: &asked}
	for _, h := range e.hosts {
		h.e.id = e.id
	}
	err := e.DBMError()
	wantAsked := []string{"bdb-staff default", "bdb-a SDBM", "bdb-groups default", "bdb-nested GDBM", "sdbm-groups SDBM", "users default", "bdb-vhost default"}
	if !slices.Equal(asked, wantAsked) {
		t.Errorf("asked %q,\nwant %q", asked, wantAsked)
	}
	cf := filepath.Join(filepath.Dir(root), "legacy.conf")
	up := root + "/.."
	want := []string{
		cf + ":2: AuthDBMUserFile " + up + "/bdb-staff: a Berkeley DB file; refusing to load",
		cf + ":7: AuthDBMGroupFile " + up + "/bdb-groups: a Berkeley DB file; refusing to load",
		cf + ":10: AuthDBMUserFile " + up + "/bdb-nested: a Berkeley DB file; refusing to load",
		cf + ":26: AuthDBMUserFile " + up + "/bdb-vhost: a Berkeley DB file; refusing to load",
	}
	var got []string
	if err != nil {
		got = strings.Split(err.Error(), "\n")
	}
	if !slices.Equal(got, want) {
		t.Errorf("DBMError:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	e.id = users{}
	if err := e.DBMError(); err != nil {
		t.Errorf("no DBMChecker: %v", err)
	}

	e22, _ := engineMods(t, translate.Legacy22, append(slices.Clone(translate.FragmentModules22), "authn_dbm_module", "authz_dbm_module"),
		"<Directory @DOCROOT@/a>\nAuthDBMUserFile @DOCROOT@/../bdb-users\nAuthDBMType SDBM\n</Directory>\n")
	asked = nil
	e22.id = dbmCheckUsers{users: users{}, asked: &asked}
	if err := e22.DBMError(); err != nil || !slices.Equal(asked, []string{"bdb-users SDBM"}) {
		t.Errorf("2.2: %v, asked %q", err, asked)
	}
}

// An .htaccess file that names a DBM file orderly cannot read does not
// load, as orderly's own refusal: 500 for its directory and below, no
// Apache alert, the rule naming the file's line; one with an SDBM file
// loads.
func TestHtaccessDBM(t *testing.T) {
	mods := append(slices.Clone(translate.FragmentModules), "authn_dbm_module", "authz_dbm_module")
	e, root := engineMods(t, translate.Compat24, mods, "<Directory @DOCROOT@>\nAllowOverride AuthConfig\n</Directory>\n", "bad/sub/index.html", "good/index.html")
	var asked []string
	e.id = dbmCheckUsers{users: users{"alice": "ok"}, asked: &asked}
	ht := "AuthType Basic\nAuthName x\nAuthBasicProvider dbm\nAuthDBMUserFile %s\nRequire valid-user\n"
	write := func(dir, file string) {
		if err := os.WriteFile(filepath.Join(root, dir, ".htaccess"), []byte(strings.Replace(ht, "%s", file, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bad", "/srv/bdb-users")
	write("good", "/srv/users")
	for _, target := range []string{"/bad/", "/bad/sub/index.html"} {
		res := decide(e, req{target: target, ip: "8.8.8.8", user: "alice:ok"})
		if res.Status != 500 || res.Rule == nil || res.Rule.File != "docroot/bad/.htaccess" || res.Rule.Line != 4 ||
			res.Rule.Text != "(does not load) AuthDBMUserFile /srv/bdb-users: a Berkeley DB file; refusing to load" {
			t.Errorf("%s: status %d, rule %+v", target, res.Status, res.Rule)
		}
		for _, l := range res.Logs() {
			if l.Level == "alert" {
				t.Errorf("%s: Apache's alert for orderly's own refusal: %+v", target, l)
			}
		}
	}
	if res := decide(e, req{target: "/good/", ip: "8.8.8.8"}); res.Status != 401 {
		t.Errorf("/good/: status %d, want 401", res.Status)
	}
	if !slices.Contains(asked, "users default") {
		t.Errorf("the good file was not asked about: %q", asked)
	}
}
