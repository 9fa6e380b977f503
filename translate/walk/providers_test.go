package walk

import (
	"reflect"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate"
)

// TestProvidersResolved: AuthBasicProvider's names become providers with
// the configuration in force, an alias's own module configurations
// merged over the request's module by module (authn_alias_check_password).
func TestProvidersResolved(t *testing.T) {
	str := func(s string) *string { return &s }
	reqAnon := &policy.Anonymous{Users: []string{"guest"}, MustEmail: true}
	aliasAnon := &policy.Anonymous{Any: true}
	e := &Engine{cfg: &translate.Config{ProviderAliases: map[string]*translate.ProviderAlias{
		"staff":     {Name: "staff", Base: "file", Conf: &translate.DirConf{UserFile: str("/etc/staff")}},
		"bare-file": {Name: "bare-file", Base: "file", Conf: &translate.DirConf{}},
		"ldbm":      {Name: "ldbm", Base: "dbm", Conf: &translate.DirConf{AuthnDBM: &translate.AuthnDBM{UserFile: "/etc/l.dbm", Type: "SDBM"}}},
		"bare-dbm":  {Name: "bare-dbm", Base: "dbm", Conf: &translate.DirConf{UserFile: str("/etc/ignored")}},
		"guests":    {Name: "guests", Base: "anon", Conf: &translate.DirConf{Anon: aliasAnon}},
		"bare-anon": {Name: "bare-anon", Base: "anon", Conf: &translate.DirConf{}},
	}}}
	full := accum{userFile: str("/etc/users"), authnDBM: &translate.AuthnDBM{UserFile: "/etc/u.dbm", Type: "default"}, anon: reqAnon}
	for _, tc := range []struct {
		name string
		a    accum
		want []policy.AuthnProvider
	}{
		{"no AuthBasicProvider", full, nil},
		{"the three base providers", withProviders(full, "file", "dbm", "anon"), []policy.AuthnProvider{
			{Name: "file", Kind: policy.ProviderFile, File: "/etc/users"},
			{Name: "dbm", Kind: policy.ProviderDBM, File: "/etc/u.dbm", DBMType: "default"},
			{Name: "anon", Kind: policy.ProviderAnon, Anon: reqAnon},
		}},
		{"order kept", withProviders(full, "anon", "file"), []policy.AuthnProvider{
			{Name: "anon", Kind: policy.ProviderAnon, Anon: reqAnon},
			{Name: "file", Kind: policy.ProviderFile, File: "/etc/users"},
		}},
		{"nothing set in force", withProviders(accum{}, "file", "dbm", "anon"), []policy.AuthnProvider{
			{Name: "file", Kind: policy.ProviderFile},
			{Name: "dbm", Kind: policy.ProviderDBM, DBMType: "default"},
			{Name: "anon", Kind: policy.ProviderAnon},
		}},
		{"aliases with their own files", withProviders(full, "staff", "ldbm", "guests"), []policy.AuthnProvider{
			{Name: "staff", Kind: policy.ProviderFile, File: "/etc/staff"},
			{Name: "ldbm", Kind: policy.ProviderDBM, File: "/etc/l.dbm", DBMType: "SDBM"},
			{Name: "guests", Kind: policy.ProviderAnon, Anon: aliasAnon},
		}},
		{"aliases setting nothing of their base's module", withProviders(full, "bare-file", "bare-dbm", "bare-anon"), []policy.AuthnProvider{
			{Name: "bare-file", Kind: policy.ProviderFile, File: "/etc/users"},
			{Name: "bare-dbm", Kind: policy.ProviderDBM, File: "/etc/u.dbm", DBMType: "default"},
			{Name: "bare-anon", Kind: policy.ProviderAnon, Anon: reqAnon},
		}},
	} {
		got := e.providers(&tc.a)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tc.name, got, tc.want)
		}
	}
}

func withProviders(a accum, names ...string) accum {
	a.providers = names
	return a
}

// TestProvidersMerge: AuthBasicProvider merges as mod_auth_basic merges
// it (the section's list, else the inherited one); mod_authn_dbm's and
// mod_authn_anon's configurations are replaced whole.
func TestProvidersMerge(t *testing.T) {
	dbm1, dbm2 := &translate.AuthnDBM{UserFile: "/a"}, &translate.AuthnDBM{Type: "SDBM"}
	anon1, anon2 := &policy.Anonymous{Any: true}, &policy.Anonymous{NoUserID: true}
	base := fromConf(&translate.DirConf{BasicProviders: []string{"file"}, AuthnDBM: dbm1, Anon: anon1})
	over := fromConf(&translate.DirConf{BasicProviders: []string{"dbm", "anon"}, AuthnDBM: dbm2, Anon: anon2})
	m := base
	m.merge(&accum{})
	if !reflect.DeepEqual(m.providers, []string{"file"}) || m.authnDBM != dbm1 || m.anon != anon1 {
		t.Errorf("an empty section changed the configuration: %+v %+v %+v", m.providers, m.authnDBM, m.anon)
	}
	m.merge(&over)
	if !reflect.DeepEqual(m.providers, []string{"dbm", "anon"}) || m.authnDBM != dbm2 || m.anon != anon2 {
		t.Errorf("merged: %+v %+v %+v", m.providers, m.authnDBM, m.anon)
	}
}

// TestProvidersDecide: the providers reach the decision, and an alias
// defined in the configuration is found by its name.
func TestProvidersDecide(t *testing.T) {
	conf := `<AuthnProviderAlias anon guests>
    Anonymous guest
    Anonymous_MustGiveEmail Off
</AuthnProviderAlias>
<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "R"
    AuthUserFile /nonexistent
    AuthBasicProvider guests
    Require valid-user
</Directory>
`
	e, _ := engineMods(t, translate.Compat24, append([]string{"authn_anon_module"}, translate.FragmentModules...), conf)
	for _, r := range []req{
		{target: "/index.html", ip: "10.0.0.1", user: "guest:", want: 0},
		{target: "/index.html", ip: "10.0.0.1", user: "alice:ok", want: 401},
		{target: "/index.html", ip: "10.0.0.1", want: 401},
	} {
		if got := decide(e, r).Status; got != r.want {
			t.Errorf("%s as %q: %d, want %d", r.target, r.user, got, r.want)
		}
	}
}

// dbmUsers is users with a DBM group file per path and type: what the
// decision asked for is recorded.
type dbmUsers struct {
	users
	asked *[]string
}

func (u dbmUsers) CheckDBMPassword(file, dbmType, user, password string) (policy.PasswordResult, error) {
	return policy.UserNotFound, nil
}

func (u dbmUsers) DBMGroupsRealm(file, dbmType, user, realm string) ([]string, bool, error) {
	*u.asked = append(*u.asked, file+" "+dbmType+" "+realm)
	return []string{"ops"}, true, nil
}

// TestDBMGroupFileMerge: mod_authz_dbm's file and type are replaced
// together (the module has no merger), so a section that sets the file
// alone reads it as the default type.
func TestDBMGroupFileMerge(t *testing.T) {
	conf := `<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "Ops"
    AuthUserFile /etc/users
    AuthDBMGroupFile /etc/groups
    AuthzDBMType SDBM
    Require dbm-group ops
</Directory>
<Directory "@DOCROOT@/reset">
    AuthDBMGroupFile /etc/other
</Directory>
<Directory "@DOCROOT@/inherit">
    Require dbm-group ops
</Directory>
`
	e, _ := engineMods(t, translate.Compat24, append([]string{"authz_dbm_module"}, translate.FragmentModules...), conf, "reset/index.html", "inherit/index.html")
	var asked []string
	e = New(e.cfg, OS, dbmUsers{users: users{"alice": "ok"}, asked: &asked})
	for _, tc := range []struct{ target, want string }{
		{"/index.html", "/etc/groups SDBM Ops"},
		{"/reset/index.html", "/etc/other default Ops"},
		{"/inherit/index.html", "/etc/groups SDBM Ops"},
	} {
		asked = nil
		if got := decide(e, req{target: tc.target, ip: "10.0.0.1", user: "alice:ok"}).Status; got != 0 {
			t.Errorf("%s: %d, want granted", tc.target, got)
		}
		// The decision asks first; the necessity of each section's
		// lines may ask again (without /reset's AuthDBMGroupFile, the
		// file above).
		if len(asked) == 0 || asked[0] != tc.want {
			t.Errorf("%s: asked %q, want %q", tc.target, asked, tc.want)
		}
	}
}

// TestDefaultAuthoritative22: AuthzDefaultAuthoritative Off, inherited,
// makes an unanswered Require line a 500 (every auth_checker declined);
// a section that sets it On again answers 401.
func TestDefaultAuthoritative22(t *testing.T) {
	conf := `<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "R"
    AuthUserFile /etc/users
    AuthzUserAuthoritative Off
    AuthzDefaultAuthoritative Off
    AuthzDBMAuthoritative Off
    AuthzOwnerAuthoritative On
    Require user bob
</Directory>
<Directory "@DOCROOT@/strict">
    AuthzDefaultAuthoritative On
</Directory>
<Directory "@DOCROOT@/inherit">
    Order allow,deny
    Allow from all
</Directory>
`
	e, _ := engineMods(t, translate.Legacy22, append([]string{"authz_dbm_module", "authz_owner_module", "authz_default_module"}, translate.FragmentModules...), conf, "strict/index.html", "inherit/index.html")
	for _, r := range []req{
		{target: "/index.html", ip: "10.0.0.1", user: "alice:ok", want: 500},
		{target: "/index.html", ip: "10.0.0.1", user: "bob:ok", want: 0},
		{target: "/inherit/index.html", ip: "10.0.0.1", user: "alice:ok", want: 500},
		{target: "/strict/index.html", ip: "10.0.0.1", user: "alice:ok", want: 401},
	} {
		if got := decide(e, r).Status; got != r.want {
			t.Errorf("%s as %q: %d, want %d", r.target, r.user, got, r.want)
		}
	}
}
