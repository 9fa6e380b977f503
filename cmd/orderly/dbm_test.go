package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dbmModules loads what the DBM configurations of TestServeRefusesDBM
// need (a configuration with LoadModule lines is no fragment).
const dbmModules = `LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authn_core_module modules/mod_authn_core.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule auth_basic_module modules/mod_auth_basic.so
LoadModule authn_dbm_module modules/mod_authn_dbm.so
LoadModule authz_dbm_module modules/mod_authz_dbm.so
LoadModule authz_user_module modules/mod_authz_user.so
LoadModule auth_digest_module modules/mod_auth_digest.so
`

// makeDBM writes the DBM file base of type typ (htdbm -T) with one user.
func makeDBM(t *testing.T, base, typ string) {
	t.Helper()
	htdbm, err := exec.LookPath("htdbm")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("htdbm (apache2-utils) is needed when CI=true: %v", err)
		}
		t.Skipf("htdbm not found: %v", err)
	}
	os.MkdirAll(filepath.Dir(base), 0o755)
	if out, err := exec.Command(htdbm, "-c", "-b", "-T"+typ, base, "alice", "secret").CombinedOutput(); err != nil {
		t.Fatalf("htdbm -T%s: %v: %s", typ, err, out)
	}
}

// orderly serve refuses at load, with the line that names it, a DBM file
// of a type it does not read (Berkeley DB, which AuthDBMType default is
// on Debian, GDBM, NDBM) where the file is there: in the configuration,
// an <AuthnProviderAlias>, a virtual host, and an .htaccess file (which
// then answers 500, orderly's own); read through legacy.path_map. An
// SDBM file loads, and so does a file that is not there yet (Apache and
// orderly answer 500 while it is missing) or an AuthDBMType apr-util
// does not know (500 on each request, in both). orderly lint and
// orderly translate, whose output Apache 2.4 reads with its own drivers,
// do not refuse it.
func TestServeRefusesDBM(t *testing.T) {
	area := func(dir, lines string) string {
		return "<Directory @DIR@/docroot/" + dir + ">\nAuthType Basic\nAuthName a\nAuthBasicProvider dbm\n" + lines + "Require valid-user\n</Directory>\n"
	}
	convert := "Convert it to SDBM (with db-util and apache2-utils): db_dump -p "
	tests := []struct {
		name  string
		conf  string
		ht    string // docroot/h/.htaccess
		dbm   map[string]string
		hcl   string // replaces the legacy block's document_root line
		code  int
		want  []string
		wantN int // lines with "refusing to load"
	}{
		{"SDBM", area("a", "AuthDBMUserFile @DIR@/auth/users\nAuthDBMType SDBM\n"), "", map[string]string{"auth/users": "SDBM"}, "", 0, []string{"serve would start"}, 0},
		{"default is Berkeley DB", area("a", "AuthDBMUserFile @DIR@/auth/users\n"), "", map[string]string{"auth/users": "DB"}, "", 2,
			[]string{"legacy.conf:14: AuthDBMUserFile @DIR@/auth/users: DBM type not supported: AuthDBMType DB (or default, which is DB here): the file is a Berkeley DB hash database", convert + "@DIR@/auth/users", "; refusing to load"}, 1},
		{"DB", area("a", "AuthDBMType db\nAuthDBMUserFile @DIR@/auth/users\n"), "", map[string]string{"auth/users": "DB"}, "", 2,
			[]string{"legacy.conf:15: AuthDBMUserFile", "AuthDBMType DB"}, 1},
		{"GDBM group file", area("a", "AuthDBMUserFile @DIR@/auth/users\nAuthDBMType SDBM\nAuthDBMGroupFile @DIR@/auth/groups\nAuthzDBMType GDBM\n"), "",
			map[string]string{"auth/users": "SDBM", "auth/groups": "GDBM"}, "", 2, []string{"legacy.conf:16: AuthDBMGroupFile @DIR@/auth/groups: ", "a GDBM database", "gdbmtool -r"}, 1},
		{"AuthDBMType is not the group file's (missing as DB)", area("a", "AuthDBMUserFile @DIR@/auth/users\nAuthDBMType SDBM\nAuthDBMGroupFile @DIR@/auth/users\n"), "",
			map[string]string{"auth/users": "SDBM"}, "", 0, []string{"serve would start"}, 0},
		{"alias", "<AuthnProviderAlias dbm staff>\nAuthDBMUserFile @DIR@/auth/staff\n</AuthnProviderAlias>\n" + area("a", "AuthDBMUserFile @DIR@/auth/users\nAuthDBMType SDBM\n"), "",
			map[string]string{"auth/users": "SDBM", "auth/staff": "DB"}, "", 2, []string{"legacy.conf:11: AuthDBMUserFile @DIR@/auth/staff: DBM type not supported"}, 1},
		{"virtual host", "<VirtualHost *:80>\nServerName v.test\n" + area("a", "AuthDBMUserFile @DIR@/auth/users\n") + "</VirtualHost>\n", "",
			map[string]string{"auth/users": "DB"}, "", 2, []string{"legacy.conf:16: AuthDBMUserFile"}, 1},
		{"missing", area("a", "AuthDBMUserFile @DIR@/auth/none\n"), "", nil, "", 0, []string{"serve would start"}, 0},
		{"unknown type", area("a", "AuthDBMUserFile @DIR@/auth/users\nAuthDBMType foo\n"), "", map[string]string{"auth/users": "DB"}, "", 0, []string{"serve would start"}, 0},
		{"only the type", area("a", "AuthDBMType DB\n"), "", nil, "", 0, []string{"serve would start"}, 0},
		{".htaccess", "<Directory @DIR@/docroot>\nAllowOverride AuthConfig\n</Directory>\n", "AuthType Basic\nAuthName h\nAuthBasicProvider dbm\nAuthDBMUserFile @DIR@/auth/users\nRequire valid-user\n",
			map[string]string{"auth/users": "DB"}, "", 2, []string{"docroot/h/.htaccess:4: AuthDBMUserFile @DIR@/auth/users: DBM type not supported", "a Berkeley DB hash database", "orderly answers (it does not evaluate this"}, 1},
		{"path map", area("a", "AuthDBMUserFile /srv/legacy/auth/users\n"), "", map[string]string{"mnt/auth/users": "DB"},
			"document_root = \"docroot\"\n  path_map      = { \"/srv/legacy/auth\" = \"mnt/auth\" }", 2,
			[]string{"legacy.conf:14: AuthDBMUserFile /srv/legacy/auth/users: @DIR@/mnt/auth/users: ", "a Berkeley DB hash database"}, 1},
		{"path map, SDBM", area("a", "AuthDBMUserFile /srv/legacy/auth/users\nAuthDBMType SDBM\n"), "", map[string]string{"mnt/auth/users": "SDBM"},
			"document_root = \"docroot\"\n  path_map      = { \"/srv/legacy/auth\" = \"mnt/auth\" }", 0, []string{"serve would start"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hcl := goodHCL
			if tt.hcl != "" {
				hcl = strings.Replace(hcl, `document_root = "docroot"`, tt.hcl, 1)
			}
			files := map[string]string{"orderly.hcl": hcl, "legacy.conf": dbmModules + "DocumentRoot @DIR@/docroot\n" + tt.conf, "docroot/index.html": "x", "docroot/h/index.html": "x"}
			if tt.ht != "" {
				files["docroot/h/.htaccess"] = tt.ht
			}
			dir := writeFiles(t, files)
			for name, typ := range tt.dbm {
				makeDBM(t, filepath.Join(dir, name), typ)
			}
			var out, errb bytes.Buffer
			code := run([]string{"check", "-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb)
			all := out.String() + errb.String()
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, all)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "@DIR@", dir); !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			if n := strings.Count(all, "refusing to load"); n != tt.wantN {
				t.Errorf("%d refusals, want %d:\n%s", n, tt.wantN, all)
			}

			// lint and translate read the configuration for Apache 2.4,
			// which reads the file itself.
			if tt.hcl != "" {
				return
			}
			out.Reset()
			errb.Reset()
			code = cmdLint([]string{"-semantics", "2.4-compat", "-document-root", filepath.Join(dir, "docroot"), filepath.Join(dir, "legacy.conf")}, &out, &errb)
			if strings.Contains(out.String()+errb.String(), "DBM type not supported") || code != 0 {
				t.Errorf("lint: exit %d:\n%s%s", code, out.String(), errb.String())
			}
			out.Reset()
			errb.Reset()
			code = run([]string{"translate", "-semantics", "2.4-compat", "-document-root", filepath.Join(dir, "docroot"), "-o", filepath.Join(dir, "out"), filepath.Join(dir, "legacy.conf")}, &out, &errb)
			if strings.Contains(out.String()+errb.String(), "DBM type not supported") || code != 0 {
				t.Errorf("translate: exit %d:\n%s%s", code, out.String(), errb.String())
			}
		})
	}
}
