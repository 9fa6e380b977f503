package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// TestConvertBasic22: 2.2's mod_auth_basic has no merger, 2.4's merges
// AuthBasicProvider and AuthBasicAuthoritative apart: a 2.2 section that
// sets one of them is written with the other as 2.2 had it there (the
// file provider; On), after its line, where another section of the
// configuration (an .htaccess file too) sets it otherwise; nowhere else.
// Without mod_authn_file the section had no provider (500), which 2.4
// cannot say: AuthBasicProvider file is written all the same, which
// Apache 2.4 refuses to start on, and the section is reported. testdata/
// translate22/003-auth-basic-merge.txtar holds the translation to Apache
// 2.4.
func TestConvertBasic22(t *testing.T) {
	const note = "# orderly: 2.2's mod_auth_basic has no merger: this section's "
	mods := func(names string) string {
		var s string
		for _, m := range strings.Fields(names) {
			s += "LoadModule " + m + "_module modules/mod_" + m + ".so\n"
		}
		return s
	}
	all := mods("auth_basic authn_file authn_dbm authz_host authz_user authz_default")
	dbm := "<Directory /srv/x>\n    AuthType Basic\n    AuthName x\n    AuthBasicProvider dbm\n    AuthDBMUserFile /x/users\n    Require valid-user\n</Directory>\n"
	lax := "<Directory /srv/x>\n    AuthType Basic\n    AuthName x\n    AuthUserFile /x/users\n    AuthBasicAuthoritative Off\n    Require valid-user\n</Directory>\n"
	for _, tt := range []struct {
		name, conf string
		sem        translate.Semantics
		htaccess   string // /srv/x/h/.htaccess
		want, not  []string
		review     string
	}{
		{name: "AuthBasicAuthoritative alone: the file provider", conf: all + dbm + "<Directory /srv/x/y>\n    AuthUserFile /x/htpasswd\n    AuthBasicAuthoritative On\n</Directory>\n",
			want: []string{"<Directory /srv/x/y>\n    AuthUserFile /x/htpasswd\n    AuthBasicAuthoritative On\n    " + note + "AuthBasicAuthoritative leaves", "\n    AuthBasicProvider file\n</Directory>"}},
		{name: "AuthBasicProvider alone: On", conf: all + lax + "<Directory /srv/x/y>\n    AuthBasicProvider file dbm\n    AuthDBMUserFile /x/users\n</Directory>\n",
			want: []string{"<Directory /srv/x/y>\n    AuthBasicProvider file dbm\n    " + note + "AuthBasicProvider leaves", "\n    AuthBasicAuthoritative On\n    AuthDBMUserFile"}},
		{name: "before the section's own translation", conf: all + dbm + "<Directory /srv/x/y>\n    AuthBasicAuthoritative On\n    Require user carol\n</Directory>\n",
			want: []string{"<Directory /srv/x/y>\n    AuthBasicAuthoritative On\n    " + note, "\n    AuthBasicProvider file\n    # orderly DIR-10", "Require user carol\n</Directory>"}},
		{name: "in an IfModule: after the line, inside", conf: all + dbm + "<Directory /srv/x/y>\n    <IfModule mod_auth_basic.c>\n        AuthBasicAuthoritative On\n    </IfModule>\n</Directory>\n",
			want: []string{"        AuthBasicAuthoritative On\n        " + note, "\n        AuthBasicProvider file\n    </IfModule>"}},
		{name: "nobody sets the providers: nothing", conf: all + lax + "<Directory /srv/x/y>\n    AuthBasicAuthoritative On\n</Directory>\n",
			not: []string{note}},
		{name: "only file: nothing", conf: all + strings.Replace(dbm, "dbm\n", "file\n", 1) + "<Directory /srv/x/y>\n    AuthBasicAuthoritative On\n</Directory>\n",
			not: []string{note}},
		{name: "nobody sets Off: nothing", conf: all + dbm + "<Directory /srv/x/y>\n    AuthBasicProvider file\n</Directory>\n",
			not: []string{note}},
		{name: "both set: nothing", conf: all + dbm + "<Directory /srv/x/y>\n    AuthBasicProvider file\n    AuthBasicAuthoritative On\n</Directory>\n",
			not: []string{note}},
		{name: "2.4-compat: merged in both", sem: translate.Compat24, conf: all + mods("authz_core authn_core") + dbm + "<Directory /srv/x/y>\n    AuthBasicAuthoritative On\n</Directory>\n",
			not: []string{note}},
		{name: "an .htaccess file", conf: all + strings.Replace(dbm, "    Require", "    AllowOverride AuthConfig\n    Require", 1), htaccess: "AuthBasicAuthoritative On\nRequire valid-user\n",
			want: []string{"AuthBasicAuthoritative On\n" + note, "\nAuthBasicProvider file\n# orderly DIR-10", "Require valid-user\n"}},
		{name: "an .htaccess file sets the providers", conf: all + "<Directory /srv/x>\n    AllowOverride AuthConfig\n</Directory>\n<Directory /srv/x/h/y>\n    AuthBasicAuthoritative Off\n</Directory>\n", htaccess: "AuthType Basic\nAuthName h\nAuthBasicProvider dbm\nAuthDBMUserFile /x/users\nRequire valid-user\n",
			want: []string{"<Directory /srv/x/h/y>\n    AuthBasicAuthoritative Off\n    " + note, "\n    AuthBasicProvider file\n</Directory>"}},
		{name: "no mod_authn_file: written, reported", conf: mods("auth_basic authn_dbm authz_host authz_user authz_default") + strings.Replace(dbm, "/srv/x", "/srv/z", 1) + "<Directory /srv/z/y>\n    AuthBasicAuthoritative On\n</Directory>\n",
			want: []string{"AuthBasicAuthoritative On\n    " + note, "\n    AuthBasicProvider file\n"}, review: "AuthBasicAuthoritative without AuthBasicProvider: 2.2 (mod_auth_basic has no merger) asked the default provider, file, which is not loaded"},
	} {
		dir := t.TempDir()
		conf := filepath.Join(dir, "httpd.conf")
		text := strings.ReplaceAll(tt.conf, "/srv/", dir+"/srv/")
		os.WriteFile(conf, []byte(text), 0o644)
		ht := filepath.Join(dir, "srv/x/h/.htaccess")
		if tt.htaccess != "" {
			os.MkdirAll(filepath.Dir(ht), 0o755)
			os.WriteFile(ht, []byte(tt.htaccess), 0o644)
		}
		sem := tt.sem
		if sem == "" {
			sem = translate.Legacy22
		}
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: sem, DocumentRoot: filepath.Join(dir, "srv/x")}}})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		out := string(conv.Files[conf])
		if tt.htaccess != "" && !strings.Contains(tt.htaccess, "AuthBasicProvider") {
			out = string(conv.Files[ht])
		}
		out = strings.ReplaceAll(out, dir+"/srv/", "/srv/")
		checkWritten(t, tt.name, out, tt.want, tt.not, conv, tt.review)
	}
}
