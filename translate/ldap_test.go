package translate

import (
	"errors"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

var ldapModules = []string{"ldap_module", "authnz_ldap_module", "auth_basic_module", "authn_core_module", "authz_core_module", "authz_user_module", "authn_file_module"}

// The AuthLDAP* lines of a section are kept in order, raw, for the walk to
// compile (no merger: the section's lines replace the enclosing ones);
// an alias keeps its own; the ldap provider and the ldap-* Require lines
// are evaluated under 2.4 semantics.
func TestLDAPModel(t *testing.T) {
	text := `<AuthnProviderAlias ldap people>
AuthLDAPURL ldap://127.0.0.1/ou=people,dc=example,dc=org?uid
</AuthnProviderAlias>
<Directory /srv/www/a>
AuthType Basic
AuthName A
AuthBasicProvider ldap people
AuthLDAPURL "ldap://127.0.0.1/dc=example,dc=org?uid"
AuthLDAPBindDN cn=search,dc=example,dc=org
AuthLDAPGroupAttributeIsDN off
<RequireAll>
Require ldap-group "cn=A B,ou=groups,dc=example,dc=org"
Require not ldap-user  bob carol
Require ldap-search (uid=x)
</RequireAll>
</Directory>
`
	cfg, err := buildText(t, text, Options{Semantics: Compat24, Modules: fragmentModules(ldapModules...)})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Dirs[0].Conf
	if c.LDAP == nil || len(c.LDAP.Lines) != 3 || c.LDAP.Lines[0].Name != "AuthLDAPURL" || c.LDAP.Lines[0].Args[0] != "ldap://127.0.0.1/dc=example,dc=org?uid" ||
		c.LDAP.Lines[2].Name != "AuthLDAPGroupAttributeIsDN" || c.LDAP.Lines[2].Args[0] != "off" {
		t.Fatalf("LDAP lines %+v", c.LDAP)
	}
	if !c.HasAccess() || c.WithoutAccess().LDAP != nil {
		t.Error("the LDAP lines are not access configuration")
	}
	for _, n := range []string{"AuthLDAPURL x", "AuthLDAPBindDN x", "AuthLDAPCompareAsUser on"} {
		if !IsSectionAccess(n) {
			t.Errorf("%s is not section access", n)
		}
	}
	al := cfg.ProviderAliases["people"]
	if al == nil || al.Base != "ldap" || al.Conf.LDAP == nil || len(al.Conf.LDAP.Lines) != 1 {
		t.Fatalf("alias %+v", al)
	}
	var leaves []*policy.Node
	for _, n := range c.Authz.Root.Children[0].Children {
		leaves = append(leaves, n)
	}
	if len(leaves) != 3 {
		t.Fatalf("leaves %+v", leaves)
	}
	want := [][]string{{"ldap-group", `"cn=A B,ou=groups,dc=example,dc=org"`}, {"ldap-user", "bob carol"}, {"ldap-search", "(uid=x)"}}
	for i, n := range leaves {
		if n.Provider != policy.ProvLDAP || len(n.Args) != 2 || n.Args[0] != want[i][0] || n.Args[1] != want[i][1] {
			t.Errorf("leaf %d: %v %q, want ldap %q", i, n.Provider, n.Args, want[i])
		}
	}
	if !leaves[1].Negate {
		t.Error("Require not ldap-user lost its not")
	}
}

// An exec: bind password is refused under either semantics (orderly
// runs no program of the configuration); a Require ldap-* with an
// expression is refused. Each at the line, as orderly's own refusal.
func TestLDAPRefusals(t *testing.T) {
	for _, tc := range []struct {
		sem  Semantics
		text string
		line int
		want string
	}{
		{Legacy22, "<Directory /srv/www>\nAuthLDAPBindPassword \"exec:/bin/echo pw\"\n</Directory>\n", 2, "orderly does not run programs"},
		{Compat24, "<Directory /srv/www>\nAuthLDAPBindPassword \"exec:/bin/echo pw\"\n</Directory>\n", 2, "orderly does not run programs"},
		{Compat24, "<AuthnProviderAlias ldap x>\nAuthLDAPBindPassword exec:/bin/pw\n</AuthnProviderAlias>\n", 2, "orderly does not run programs"},
		{Compat24, "<Directory /srv/www>\nRequire ldap-user %{REMOTE_USER}\n</Directory>\n", 2, "Require ldap-user with an expression"},
	} {
		mods := ldapModules
		if tc.sem == Legacy22 {
			mods = []string{"ldap_module", "authnz_ldap_module", "auth_basic_module", "authn_file_module"}
		}
		_, err := buildText(t, tc.text, Options{Semantics: tc.sem, Modules: fragmentModules(mods...)})
		var el apacheconf.ErrorList
		if !errors.As(err, &el) || len(el) != 1 || !el[0].Own || el[0].Pos.Line != tc.line || !strings.Contains(el[0].Msg, tc.want) {
			t.Errorf("%q: %v, want an own refusal at line %d saying %q", tc.text, err, tc.line, tc.want)
		}
		if strings.Contains(err.Error(), "/bin/") {
			t.Errorf("%q: the refusal shows the password: %v", tc.text, err)
		}
	}
	// The same written out (RenderOnly): kept as Unservable, and the
	// expression line kept as it is.
	cfg, err := buildText(t, "<Directory /srv/www>\nRequire ldap-user %{REMOTE_USER}\n</Directory>\n", Options{Semantics: Compat24, RenderOnly: true, Modules: fragmentModules(ldapModules...)})
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Dirs[0].Conf.Authz.Root.Children[0]
	if n.Provider != policy.ProvOther || n.Args[0] != "ldap-user" || n.Args[1] != "%{REMOTE_USER}" || len(cfg.Unservable) != 1 {
		t.Errorf("written out: %v %q, %d unservable", n.Provider, n.Args, len(cfg.Unservable))
	}
}

// Under 2.2 semantics mod_authnz_ldap's lines are 2.2's: kept with
// AuthzLDAPAuthoritative among them, checked as 2.2 checks them (a 2.4
// directive is unknown), inside an alias too; AuthBasicProvider ldap is
// evaluated; every Require ldap-* line is kept as core keeps it,
// ldap-search included (an unknown word to 2.2).
func TestLDAP22Model(t *testing.T) {
	mods := []string{"ldap_module", "authnz_ldap_module", "auth_basic_module", "authn_file_module", "authn_alias_module", "authz_user_module", "authz_default_module"}
	text := `<AuthnProviderAlias ldap people>
AuthLDAPURL ldap://127.0.0.1/ou=people,dc=example,dc=org?uid
AuthzLDAPAuthoritative off
</AuthnProviderAlias>
<Directory /srv/www/a>
AuthType Basic
AuthName A
AuthBasicProvider ldap people
AuthLDAPURL "ldap://127.0.0.1/dc=example,dc=org?uid"
AuthzLDAPAuthoritative Off
Require ldap-group "cn=A B,ou=groups,dc=example,dc=org"
Require ldap-search (uid=x)
Require valid-user
</Directory>
`
	cfg, err := buildText(t, text, Options{Semantics: Legacy22, Modules: fragmentModules(mods...)})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Dirs[0].Conf
	if c.LDAP == nil || len(c.LDAP.Lines) != 2 || c.LDAP.Lines[1].Name != "AuthzLDAPAuthoritative" || c.LDAP.Lines[1].Args[0] != "Off" {
		t.Fatalf("LDAP lines %+v", c.LDAP)
	}
	if al := cfg.ProviderAliases["people"]; al == nil || al.Conf.LDAP == nil || len(al.Conf.LDAP.Lines) != 2 {
		t.Fatalf("alias %+v", al)
	}
	want := []string{`ldap-group "cn=A B,ou=groups,dc=example,dc=org"`, "ldap-search (uid=x)", "valid-user"}
	if len(c.Requires22) != len(want) {
		t.Fatalf("Require lines %+v", c.Requires22)
	}
	for i, q := range c.Requires22 {
		if q.Line != want[i] {
			t.Errorf("line %d: %q, want %q", i, q.Line, want[i])
		}
	}
	if len(cfg.Unfaithful) != 0 || len(cfg.Unservable) != 0 {
		t.Errorf("unfaithful %v, unservable %v", cfg.Unfaithful, cfg.Unservable)
	}
	for _, bad := range []struct{ text, want string }{
		{"AuthLDAPMaxSubGroupDepth 2", "Invalid command 'AuthLDAPMaxSubGroupDepth'"},
		{"AuthzLDAPAuthoritative maybe", "AuthzLDAPAuthoritative must be On or Off"},
	} {
		_, err := buildText(t, "<Directory /srv/www>\n"+bad.text+"\n</Directory>\n", Options{Semantics: Legacy22, Modules: fragmentModules(mods...)})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.text, err, bad.want)
		}
	}
}
