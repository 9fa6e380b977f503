package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dbmModules load what the DBM cases need (7 lines).
const dbmModules = "LoadModule authz_host_module m/mod_authz_host.so\nLoadModule auth_basic_module m/mod_auth_basic.so\nLoadModule authn_file_module m/mod_authn_file.so\n" +
	"LoadModule authz_user_module m/mod_authz_user.so\nLoadModule authz_groupfile_module m/mod_authz_groupfile.so\nLoadModule authz_dbm_module m/mod_authz_dbm.so\nLoadModule alias_module m/mod_alias.so\n"

// lint's access findings read translate's model (issue 17: one model):
// what a section's Order/Allow/Deny decide, <Limit> included, and what
// it inherits, in Apache's merge order, the sections written after it
// for the same directory included. Each case is one lint's own reading
// had wrong.
func TestAccessFindingsFollowTheModel(t *testing.T) {
	tests := []struct {
		name, conf string
		id         string
		line       int // where the finding is; 0: no finding of id at all
	}{
		// <Limit POST> refuses POST, the lines outside every other method:
		// every client is refused, and the Require is dead (ORD-01).
		{"dead Require, <Limit> included", "<Directory @ROOT@>\n" +
			"    Order deny,allow\n    Deny from all\n    <Limit POST>\n        Deny from all\n    </Limit>\n" +
			"    AuthType Basic\n    AuthName x\n    AuthUserFile /x/users\n    Require host example.org\n</Directory>\n", "ORD-01", 10},
		{"live Require, <Limit> admits", "<Directory @ROOT@>\n" +
			"    Order deny,allow\n    Deny from all\n    <Limit POST>\n        Allow from all\n    </Limit>\n" +
			"    AuthType Basic\n    AuthName x\n    AuthUserFile /x/users\n    Require host example.org\n</Directory>\n", "ORD-01", 0},
		// The groups come from the DBM file of the <Directory> above.
		{"DBM groups inherited", dbmModules + "<Directory @ROOT@>\n    AuthDBMGroupFile /x/groups\n    Order allow,deny\n    Allow from all\n</Directory>\n" +
			"<Directory @ROOT@/a>\n    AuthType Basic\n    AuthName x\n    AuthUserFile /x/users\n    Require group staff\n</Directory>\n", "AUTH-05", 17},
		{"plain groups below", dbmModules + "<Directory @ROOT@>\n    AuthDBMGroupFile /x/groups\n    Order allow,deny\n    Allow from all\n</Directory>\n" +
			"<Directory @ROOT@/a>\n    AuthGroupFile /x/groups\n    AuthType Basic\n    AuthName x\n    AuthUserFile /x/users\n    Require group staff\n</Directory>\n", "AUTH-05", 0},
		// The Require of a later section for the same directory is in
		// force for the <Files> nested in the first: no AH01627.
		{"Require written after", "<Directory @ROOT@>\n    <Files secret*>\n        AuthType Basic\n        AuthName x\n    </Files>\n</Directory>\n" +
			"<Directory @ROOT@>\n    AuthUserFile /x/users\n    Require valid-user\n</Directory>\n", "ORD-11", 0},
		{"no Require at all", "<Directory @ROOT@>\n    <Files secret*>\n        AuthType Basic\n        AuthName x\n    </Files>\n</Directory>\n", "ORD-11", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "www")
			conf := filepath.Join(dir, "httpd.conf")
			text := "DocumentRoot " + root + "\n" + strings.ReplaceAll(tt.conf, "@ROOT@", root)
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := Lint([]string{conf}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var at []int
			var all []string
			for _, f := range rep.Findings {
				all = append(all, fmt.Sprintf("%d %s", f.Pos.Line, f.ID))
				if f.ID == tt.id {
					at = append(at, f.Pos.Line-1) // the DocumentRoot line first
				}
			}
			switch {
			case tt.line == 0 && len(at) > 0:
				t.Errorf("%s at lines %v; want none (findings: %v)", tt.id, at, all)
			case tt.line != 0 && (len(at) != 1 || at[0] != tt.line):
				t.Errorf("%s at lines %v; want line %d (findings: %v)", tt.id, at, tt.line, all)
			}
		})
	}
}
