package convert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// TestConvertChain22: 2.2's Require lines are written for 2.4 as 2.2's
// auth_checker chain reads them (policy/decide22.go), in the order the
// LoadModule lines give the hooks (here upstream's: groupfile, then
// authnz_ldap, which precedes mod_authz_user, then user, then dbm):
// the lines of the modules up to the first authoritative one that has
// lines of its own, as alternatives; the Authz*Authoritative lines go
// (DIR-11); a Require group mod_authz_dbm serves is Require dbm-group
// (AUTH-05); 2.2's unknown ldap-search grants nothing.
func TestConvertChain22(t *testing.T) {
	dir := t.TempDir()
	var mods string
	for _, m := range strings.Fields("auth_basic authn_file authz_host authz_groupfile authz_user authz_dbm ldap authnz_ldap authz_default") {
		mods += "LoadModule " + m + "_module modules/mod_" + m + ".so\n"
	}
	ldap := "AuthType Basic\nAuthName it\nAuthBasicProvider ldap\nAuthLDAPURL ldap://127.0.0.1/dc=x?uid\n"
	files := "AuthType Basic\nAuthName hr\nAuthUserFile /x/users\nAuthDBMGroupFile /x/groups.dbm\n"
	for _, tt := range []struct {
		name, conf string
		want, not  []string
	}{
		{"ldap authoritative: valid-user never reached", ldap + "Require ldap-group cn=it,dc=x\nRequire valid-user\n",
			[]string{"\nRequire ldap-group cn=it,dc=x\n"}, []string{"Require valid-user"}},
		{"ldap not authoritative: either", ldap + "AuthzLDAPAuthoritative Off\nRequire ldap-group cn=it,dc=x\nRequire valid-user\n",
			[]string{"Require ldap-group cn=it,dc=x\n", "Require valid-user\n", "DIR-11"}, []string{"\nAuthzLDAPAuthoritative"}},
		{"no AuthLDAPURL: ldap declines", "AuthType Basic\nAuthName it\nAuthUserFile /x/users\nRequire ldap-group cn=it,dc=x\nRequire valid-user\n",
			[]string{"Require valid-user\n"}, []string{"Require ldap-group"}},
		{"2.2's ldap-search grants nothing", ldap + "Require ldap-search (uid=bob)\nRequire valid-user\n",
			[]string{"Require user ::no-such-user::\n"}, []string{"ldap-search", "Require valid-user"}},
		{"mod_authz_user before mod_authz_dbm", files + "Require user carol\nRequire group ops\n",
			[]string{"Require user carol\n"}, []string{"group ops"}},
		{"users not authoritative: dbm next", files + "AuthzUserAuthoritative Off\nRequire user carol\nRequire group ops\n",
			[]string{"Require user carol\n", "Require dbm-group ops\n"}, []string{"\nAuthzUserAuthoritative"}},
		{"dbm not authoritative: default refuses the rest", files + "AuthzDBMAuthoritative Off\nRequire group ops\n",
			[]string{"Require dbm-group ops\n"}, []string{"\nAuthzDBMAuthoritative"}},
		{"both group files: the text file decides", files + "AuthGroupFile /x/groups\nRequire group ops\n",
			[]string{"Require group ops\n"}, []string{"dbm-group"}},
		{"both, the text file not authoritative", files + "AuthGroupFile /x/groups\nAuthzGroupFileAuthoritative Off\nRequire group ops\n",
			[]string{"Require group ops\n", "Require dbm-group ops\n"}, nil},
	} {
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte(mods+"<Directory /srv/x>\n"+tt.conf+"</Directory>\n"), 0o644)
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: dir}}})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		out := string(conv.Files[conf])
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", tt.name, w, out)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(out, w) {
				t.Errorf("%s: has %q:\n%s", tt.name, w, out)
			}
		}
	}
}

// TestConvertChain22Sections: under 2.2 what the authorization modules
// read in an enclosing section (a group file, an authoritative flag)
// changes what a section's Require lines mean, and a section that sets
// only those changes what the lines it inherits mean: each is written
// with the Require in force there. A section whose only mod_authnz_ldap
// line is AuthzLDAPAuthoritative is left for review (2.2 has no
// AuthLDAPURL there, 2.4 would inherit one).
func TestConvertChain22Sections(t *testing.T) {
	dir := t.TempDir()
	var mods string
	for _, m := range strings.Fields("auth_basic authn_file authz_host authz_groupfile authz_user authz_dbm ldap authnz_ldap authz_default") {
		mods += "LoadModule " + m + "_module modules/mod_" + m + ".so\n"
	}
	for _, tt := range []struct {
		name, conf string
		want       []string // in order
		review     string
	}{
		{"the group file above: mod_authz_groupfile decides",
			"<Directory /srv/x>\nAuthGroupFile /x/groups\n</Directory>\n<Directory /srv/x/y>\nAuthType Basic\nAuthName y\nAuthUserFile /x/users\nRequire group staff\nRequire valid-user\n</Directory>\n",
			[]string{"<Directory /srv/x/y>", "Require group staff\n</Directory>"}, ""},
		{"a flag alone below: written with the lines it inherits",
			"<Directory /srv/x>\nAuthType Basic\nAuthName x\nAuthUserFile /x/users\nAuthGroupFile /x/groups\nRequire group staff\nRequire valid-user\n</Directory>\n<Directory /srv/x/y>\nAuthGroupFile /x/groups\nAuthzGroupFileAuthoritative Off\n</Directory>\n",
			[]string{"<Directory /srv/x>", "Require group staff\n</Directory>", "<Directory /srv/x/y>", "AuthGroupFile /x/groups\n# orderly DIR-10", "Require group staff\nRequire valid-user\n</Directory>"}, ""},
		{"a DBM file alone below: Require dbm-group there",
			"<Directory /srv/x>\nAuthType Basic\nAuthName x\nAuthUserFile /x/users\nRequire group staff\n</Directory>\n<Directory /srv/x/y>\nAuthDBMGroupFile /x/groups.dbm\n</Directory>\n",
			[]string{"<Directory /srv/x>", "Require user ::no-such-user::\n</Directory>", "<Directory /srv/x/y>", "AuthDBMGroupFile /x/groups.dbm\n", "Require dbm-group staff\n</Directory>"}, ""},
		{"settings with no Require in force: left as they are",
			"<Directory /srv/x>\nAuthGroupFile /x/groups\nAuthzGroupFileAuthoritative Off\n</Directory>\n",
			[]string{"<Directory /srv/x>\nAuthGroupFile /x/groups\n# orderly DIR-11"}, ""},
		{"AuthzLDAPAuthoritative alone, nothing above: the defaults in 2.4 too",
			"<Directory /srv/x>\nAuthType Basic\nAuthName x\nAuthUserFile /x/users\nAuthzLDAPAuthoritative Off\nRequire valid-user\n</Directory>\n",
			[]string{"<Directory /srv/x>", "Require valid-user\n</Directory>"}, ""},
		{"AuthzLDAPAuthoritative alone: review",
			"<Directory /srv/x>\nAuthType Basic\nAuthName x\nAuthBasicProvider ldap\nAuthLDAPURL ldap://127.0.0.1/dc=x?uid\nRequire ldap-group cn=a,dc=x\nRequire valid-user\n</Directory>\n<Directory /srv/x/y>\nAuthzLDAPAuthoritative Off\n</Directory>\n",
			[]string{"<Directory /srv/x/y>", "NEEDS REVIEW", "Require all denied\n</Directory>"}, "AuthzLDAPAuthoritative is this section's only"},
	} {
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte(mods+tt.conf), 0o644)
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: dir}}})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		out := string(conv.Files[conf])
		checkWritten(t, tt.name, out, tt.want, nil, conv, tt.review)
	}
}

// TestConvertOwner22: 2.2's "file-owner" and "file-group" (mod_authz_owner,
// then mod_authz_groupfile or mod_authz_dbm with the group it noted) are
// written as 2.4's Require file-owner, file-group and dbm-file-group,
// as the chain reads them (policy/owner22.go): authoritative,
// mod_authz_owner's first line decides (a file-owner refusal is final);
// AuthzOwnerAuthoritative Off makes them alternatives. Where a file whose
// group has no name would be decided otherwise than 2.4's Require
// file-group (false there) says, the section is left for review. The
// hooks run as upstream's LoadModule order gives them: mod_authz_owner,
// mod_authz_groupfile, mod_authnz_ldap, mod_authz_user, mod_authz_dbm.
func TestConvertOwner22(t *testing.T) {
	dir := t.TempDir()
	var mods, noOwner string
	for _, m := range strings.Fields("auth_basic authn_file authz_host authz_groupfile authz_user authz_dbm authz_owner ldap authnz_ldap authz_default") {
		mods += "LoadModule " + m + "_module modules/mod_" + m + ".so\n"
		if m != "authz_owner" {
			noOwner += "LoadModule " + m + "_module modules/mod_" + m + ".so\n"
		}
	}
	const auth = "AuthType Basic\nAuthName x\nAuthUserFile /x/users\n"
	const review = "Require file-group: where mod_authz_owner finds no name"
	for _, tt := range []struct {
		name, mods, conf string
		want, not        []string
		review           string
	}{
		{"file-owner", mods, "<Directory /srv/x>\n" + auth + "Require file-owner\n</Directory>\n",
			[]string{"Require file-owner\n</Directory>"}, nil, ""},
		{"file-owner's refusal is final", mods, "<Directory /srv/x>\n" + auth + "Require file-owner\nRequire valid-user\n</Directory>\n",
			[]string{"Require file-owner\n</Directory>"}, []string{"Require valid-user"}, ""},
		{"not authoritative: either", mods, "<Directory /srv/x>\n" + auth + "AuthzOwnerAuthoritative Off\nRequire file-owner\nRequire valid-user\n</Directory>\n",
			[]string{"DIR-11", "Require file-owner\n", "Require valid-user\n"}, []string{"\nAuthzOwnerAuthoritative"}, ""},
		{"file-group, the group file", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nRequire file-group\n</Directory>\n",
			[]string{"Require file-group\n</Directory>"}, []string{"no-such-user"}, ""},
		{"file-group, the DBM file", mods, "<Directory /srv/x>\n" + auth + "AuthDBMGroupFile /x/groups.dbm\nRequire file-group\n</Directory>\n",
			[]string{"Require dbm-file-group\n</Directory>"}, []string{"Require file-group"}, ""},
		{"file-group, no group file: nobody", mods, "<Directory /srv/x>\n" + auth + "Require file-group\n</Directory>\n",
			[]string{"Require user ::no-such-user::\n</Directory>"}, []string{"Require file-group"}, ""},
		{"file-group's refusal is final", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nRequire file-group\nRequire valid-user\n</Directory>\n",
			[]string{"Require file-group\n</Directory>"}, []string{"Require valid-user"}, ""},
		{"either owner or group", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nAuthzOwnerAuthoritative Off\nRequire file-owner\nRequire file-group\n</Directory>\n",
			[]string{"Require file-owner\n", "Require file-group\n"}, nil, ""},
		{"file-group first: file-owner not read", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nRequire file-group\nRequire file-owner\n</Directory>\n",
			[]string{"Require file-group\n</Directory>"}, []string{"Require file-owner"}, ""},
		{"a group line before the file's group", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nAuthzOwnerAuthoritative Off\nRequire group staff\nRequire file-group\n</Directory>\n",
			[]string{"Require group staff\n", "Require file-group\n"}, nil, ""},
		{"without mod_authz_owner: nobody's lines", noOwner, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nRequire file-owner\nRequire file-group\n</Directory>\n",
			[]string{"Require user ::no-such-user::\n</Directory>"}, []string{"Require file-"}, ""},
		{"a quoted valid-user is nobody's", mods, "<Directory /srv/x>\n" + auth + "Require \"valid-user\"\n</Directory>\n",
			[]string{"Require user ::no-such-user::\n</Directory>"}, []string{"Require valid-user"}, ""},
		// mod_authz_owner's refusal of a file without a group name is
		// final; 2.4 would let valid-user grant.
		{"review: the group file not authoritative", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nAuthzGroupFileAuthoritative Off\nRequire file-group\nRequire valid-user\n</Directory>\n",
			[]string{"NEEDS REVIEW", "Require all denied\n</Directory>"}, []string{"\nRequire file-group"}, review},
		// Without the file's group mod_authz_groupfile reads the group
		// line, which the file-group refusal otherwise ends.
		{"review: a group line after it", mods, "<Directory /srv/x>\n" + auth + "AuthGroupFile /x/groups\nAuthzOwnerAuthoritative Off\nRequire file-group\nRequire group staff\n</Directory>\n",
			[]string{"NEEDS REVIEW", "Require all denied\n</Directory>"}, nil, review},
		{"AuthzOwnerAuthoritative alone below: written with the lines it inherits", mods,
			"<Directory /srv/x>\n" + auth + "Require file-owner\nRequire valid-user\n</Directory>\n<Directory /srv/x/y>\nAuthzOwnerAuthoritative Off\n</Directory>\n",
			[]string{"Require file-owner\n</Directory>", "<Directory /srv/x/y>", "# orderly DIR-10", "Require file-owner\nRequire valid-user\n", "</Directory>"}, nil, ""},
	} {
		conf := filepath.Join(dir, "httpd.conf")
		os.WriteFile(conf, []byte(tt.mods+tt.conf), 0o644)
		conv, err := Convert([]string{conf}, Options{LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: dir}}})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		out := string(conv.Files[conf])
		checkWritten(t, tt.name, out, tt.want, tt.not, conv, tt.review)
	}
}

// checkWritten checks a conversion's text out: it has the strings of want
// in that order and none of not, and its reviews mention review ("": it
// has none).
func checkWritten(t *testing.T, name, out string, want, not []string, conv *Conversion, review string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("%s: lacks %q (in order):\n%s", name, w, out)
			break
		}
		rest = rest[i+len(w):]
	}
	for _, w := range not {
		if strings.Contains(out, w) {
			t.Errorf("%s: has %q:\n%s", name, w, out)
		}
	}
	reviews := ""
	for _, r := range conv.Reviews {
		reviews += r.Text + "\n"
	}
	if review == "" && reviews != "" || !strings.Contains(reviews, review) {
		t.Errorf("%s: reviews %q, want %q", name, reviews, review)
	}
}
