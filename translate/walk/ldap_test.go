package walk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// TestLDAPScope: a section's AuthLDAP* lines over the module's defaults,
// compiled once; no lines, no scope (the defaults); the same lines, the
// same key, other lines another.
func TestLDAPScope(t *testing.T) {
	ldapScope := (&Engine{cfg: &translate.Config{}}).ldapScope
	if ldapScope(nil) != nil {
		t.Error("no lines, yet a scope")
	}
	dir := &translate.LDAPDir{Lines: []translate.DigestLine{
		{Name: "AuthLDAPURL", Args: []string{"ldap://h1/dc=x?cn"}},
		{Name: "AuthLDAPBindDN", Args: []string{"cn=a b"}},
		{Name: "AuthLDAPGroupAttributeIsDN", Args: []string{"off"}},
	}}
	s := ldapScope(dir)
	cfg, ok := s.Config.(*ldapauth.Config)
	if !ok || cfg.URL == nil || cfg.URL.Attributes[0] != "cn" || cfg.BindDN != "cn=a b" || cfg.GroupAttributeIsDN || cfg.Version != ldapauth.Apache24 || !cfg.BindAuthoritative {
		t.Fatalf("config %+v", s.Config)
	}
	if ldapScope(dir).Key != s.Key || s.Key == "" {
		t.Errorf("the same lines, keys %q %q", ldapScope(dir).Key, s.Key)
	}
	for _, other := range []*translate.LDAPDir{
		{Lines: dir.Lines[:2]},
		{Lines: []translate.DigestLine{dir.Lines[0], {Name: "AuthLDAPBindDN", Args: []string{"cn=a", "b"}}, dir.Lines[2]}},
		{Lines: []translate.DigestLine{dir.Lines[0], {Name: "AuthLDAPBindDNx", Args: []string{"cn=a b"}}, dir.Lines[2]}},
	} {
		if ldapScope(other).Key == s.Key {
			t.Errorf("%+v shares the key %q", other.Lines, s.Key)
		}
	}
}

// TestLDAPMerge: mod_authnz_ldap's lines are replaced whole (no merger),
// as mod_auth_digest's are;
// the ldap provider takes the request's, an alias of it its own.
func TestLDAPMerge(t *testing.T) {
	l1 := &translate.LDAPDir{Lines: []translate.DigestLine{{Name: "AuthLDAPURL", Args: []string{"ldap://one/dc=x"}}}}
	l2 := &translate.LDAPDir{Lines: []translate.DigestLine{{Name: "AuthLDAPBindDN", Args: []string{"cn=b"}}}}
	la := &translate.LDAPDir{Lines: []translate.DigestLine{{Name: "AuthLDAPURL", Args: []string{"ldap://alias/dc=x"}}}}
	d1, d2 := &translate.DigestDir{}, &translate.DigestDir{}
	m := fromConf(&translate.DirConf{LDAP: l1, Digest: d1})
	m.merge(&accum{})
	if m.ldap != l1 || m.digest != d1 {
		t.Error("an empty section changed the LDAP or Digest lines")
	}
	over := fromConf(&translate.DirConf{LDAP: l2, Digest: d2})
	m.merge(&over)
	if m.ldap != l2 || m.digest != d2 {
		t.Error("the section's lines did not replace the enclosing ones")
	}
	e := &Engine{cfg: &translate.Config{ProviderAliases: map[string]*translate.ProviderAlias{
		"people": {Name: "people", Base: "ldap", Conf: &translate.DirConf{LDAP: la}},
		"plain":  {Name: "plain", Base: "ldap", Conf: &translate.DirConf{}},
	}}}
	a := accum{ldap: l1, providers: []string{"ldap", "people", "plain"}}
	ps := e.providers(&a)
	if len(ps) != 3 {
		t.Fatalf("providers %+v", ps)
	}
	urlOf := func(p policy.AuthnProvider) string {
		return p.LDAP.Config.(*ldapauth.Config).URL.Host
	}
	for i, want := range []string{"one", "alias", "one"} {
		if ps[i].Kind != policy.ProviderLDAP || ps[i].LDAP == nil || urlOf(ps[i]) != want {
			t.Errorf("provider %d: %+v, want ldap with the URL of %s", i, ps[i], want)
		}
	}
	if p := e.providers(&accum{providers: []string{"ldap"}}); p[0].Kind != policy.ProviderLDAP || p[0].LDAP != nil {
		t.Errorf("no lines: %+v, want the defaults (nil)", p[0])
	}
}

// ldapUsers answers LDAP as a directory where alice's password is "ok"
// and her r->user is "Alice A", and records the bind DN of each scope
// asked and the lines asked.
type ldapUsers struct {
	users
	asked *[]string
}

func (u ldapUsers) CheckLDAPPassword(s *policy.LDAPScope, st *policy.LDAPState, user, password string) (policy.PasswordResult, string, error) {
	*u.asked = append(*u.asked, "authn "+s.Config.(*ldapauth.Config).BindDN)
	if user == "alice" && password == "ok" {
		return policy.PasswordOK, "Alice A", nil
	}
	return policy.UserNotFound, "", nil
}

func (u ldapUsers) AuthorizeLDAP22(s *policy.LDAPScope, st *policy.LDAPState, user string, lines []string) (policy.Answer22, int, error) {
	*u.asked = append(*u.asked, "authz22 "+s.Config.(*ldapauth.Config).BindDN+" "+user+" "+strings.Join(lines, "|"))
	if user == "Alice A" {
		return policy.OK22, 0, nil
	}
	return policy.Unauthorized22, -1, nil
}

func (u ldapUsers) AuthorizeLDAP(s *policy.LDAPScope, st *policy.LDAPState, user, form, args string) (policy.Result, error) {
	*u.asked = append(*u.asked, "authz "+s.Config.(*ldapauth.Config).BindDN+" "+user+" "+form+" "+args)
	if user == "Alice A" {
		return policy.Granted, nil
	}
	return policy.Denied, nil
}

// TestLDAPDecide: the walk hands the merged section's LDAP configuration
// to the ldap provider and to the ldap-* lines; r->user is the one LDAP
// made.
func TestLDAPDecide(t *testing.T) {
	conf := `<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "L"
    AuthBasicProvider ldap
    AuthLDAPURL ldap://127.0.0.1/dc=example,dc=org?uid
    AuthLDAPBindDN cn=outer
    Require ldap-group cn=staff
</Directory>
<Directory "@DOCROOT@/in">
    AuthLDAPBindDN cn=inner
</Directory>
`
	e, _ := engineMods(t, translate.Compat24, append([]string{"ldap_module", "authnz_ldap_module"}, translate.FragmentModules...), conf, "in/x.html")
	var asked []string
	e.id = ldapUsers{asked: &asked}
	for _, r := range []struct {
		req
		asked string
	}{
		{req{target: "/index.html", ip: "10.0.0.1", user: "alice:ok", want: 0}, "authn cn=outer|authz cn=outer Alice A ldap-group cn=staff"},
		{req{target: "/in/x.html", ip: "10.0.0.1", user: "alice:ok", want: 0}, "authn cn=inner|authz cn=inner Alice A ldap-group cn=staff"},
		{req{target: "/index.html", ip: "10.0.0.1", user: "bob:ok", want: 401}, "authn cn=outer"},
	} {
		asked = nil
		res := decide(e, r.req)
		if res.Status != r.want || r.want == 0 && res.User != "Alice A" {
			t.Errorf("%s as %q: %d %q, want %d", r.target, r.user, res.Status, res.User, r.want)
		}
		// (Later asks are necessity's counterfactuals: the decision
		// without the inner BindDN line.)
		if got := strings.Join(asked, "|"); !strings.HasPrefix(got, r.asked) {
			t.Errorf("%s as %q asked %q, want %q", r.target, r.user, got, r.asked)
		}
	}
}

// ldapServers records the mod_ldap server configuration each LDAP
// question comes with.
type ldapServers struct {
	users
	got *[]string
}

func (u ldapServers) record(s *policy.LDAPScope) {
	srv, _ := s.Server.(*ldapauth.ServerConfig)
	if srv == nil {
		*u.got = append(*u.got, "defaults")
		return
	}
	*u.got = append(*u.got, fmt.Sprintf("%v %v", srv.TrustedMode, srv.CacheTTL))
}

func (u ldapServers) CheckLDAPPassword(s *policy.LDAPScope, st *policy.LDAPState, user, password string) (policy.PasswordResult, string, error) {
	u.record(s)
	return policy.PasswordOK, user, nil
}

func (u ldapServers) AuthorizeLDAP(s *policy.LDAPScope, st *policy.LDAPState, user, form, args string) (policy.Result, error) {
	u.record(s)
	return policy.Granted, nil
}

func (u ldapServers) AuthorizeLDAP22(s *policy.LDAPScope, st *policy.LDAPState, user string, lines []string) (policy.Answer22, int, error) {
	u.record(s)
	return policy.OK22, 0, nil
}

// TestLDAPServerScope: the ldap provider and the ldap-* lines get the
// mod_ldap server configuration of the request's virtual host: the
// main server's caches and mode, a host's own LDAPTrustedMode over them
// (util_ldap_merge_config); without any mod_ldap line, the defaults.
func TestLDAPServerScope(t *testing.T) {
	section := `<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "L"
    AuthBasicProvider ldap
    AuthLDAPURL ldap://127.0.0.1/dc=example,dc=org?uid
    Require ldap-group cn=staff
</Directory>
`
	mods := append([]string{"ldap_module", "authnz_ldap_module"}, translate.FragmentModules...)
	for _, tc := range []struct {
		conf string
		host string
		want string
	}{
		{conf: section, want: "defaults|defaults"},
		{conf: "LDAPTrustedMode SSL\nLDAPCacheTTL 30\n" + section, want: "SSL 30s|SSL 30s"},
		{conf: "LDAPTrustedMode SSL\nLDAPCacheTTL 30\n" + section + "<VirtualHost *>\nServerName a.example\n</VirtualHost>\n<VirtualHost *>\nServerName b.example\nLDAPTrustedMode NONE\n</VirtualHost>\n",
			host: "b.example", want: "NONE 30s|NONE 30s"},
		{conf: "LDAPTrustedMode SSL\nLDAPCacheTTL 30\n" + section + "<VirtualHost *>\nServerName a.example\n</VirtualHost>\n<VirtualHost *>\nServerName b.example\nLDAPTrustedMode NONE\n</VirtualHost>\n",
			host: "a.example", want: "SSL 30s|SSL 30s"},
		{conf: section + "<VirtualHost *>\nServerName b.example\nLDAPTrustedMode STARTTLS\n</VirtualHost>\n",
			host: "b.example", want: "STARTTLS 10m0s|STARTTLS 10m0s"},
	} {
		e0, _ := engineMods(t, translate.Compat24, mods, tc.conf)
		var got []string
		e := New(e0.Config(), OS, ldapServers{got: &got})
		r := req{target: "/index.html", ip: "10.0.0.1", user: "alice:ok"}
		if tc.host != "" {
			r.header = map[string]string{"Host": tc.host}
		}
		if res := decide(e, r); res.Status != 0 {
			t.Errorf("%q: %d", tc.conf, res.Status)
		}
		if g := strings.Join(got, "|"); !strings.HasPrefix(g, tc.want) {
			t.Errorf("%s: the checks got %q, want %q", tc.host, g, tc.want)
		}
	}
}

// TestLDAPError: a certificate file of mod_ldap that does not exist where
// orderly reads it is Apache's refusal at the line ("Invalid global
// certificate file path"; 2.2's LDAPTrustedClientCert "Invalid client
// certificate file path"), and one that exists where legacy.path_map
// maps it is not. (A CERT_NICKNAME, which names no file, is refused at
// load under both semantics: translate's TestLDAPServerRefusals.)
func TestLDAPError(t *testing.T) {
	mods := append([]string{"ldap_module", "authnz_ldap_module"}, translate.FragmentModules...)
	e, _ := engineMods(t, translate.Compat24, mods, "LDAPTrustedGlobalCert CA_BASE64 /etc/orderly-test/ldap-ca.pem\n<VirtualHost *>\nServerName a.example\n</VirtualHost>\n")
	err := e.LDAPError()
	var el apacheconf.ErrorList
	if !errors.As(err, &el) || len(el) != 1 || el[0].Pos.Line != 1 || el[0].Msg != "Invalid global certificate file path" {
		t.Fatalf("a missing CA file: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ldap-ca.pem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped := New(e.Config(), NewPathMap(OS, map[string]string{"/etc/orderly-test": dir}), users{})
	if err := mapped.LDAPError(); err != nil {
		t.Errorf("the CA file where legacy.path_map maps it: %v", err)
	}
	mods22 := append([]string{"ldap_module", "authnz_ldap_module"}, translate.FragmentModules22...)
	e22, _ := engineMods(t, translate.Legacy22, mods22, "LDAPTrustedClientCert CERT_BASE64 /etc/orderly-test/c.pem\n")
	if err := e22.LDAPError(); err == nil || !strings.Contains(err.Error(), "legacy.conf:1: Invalid client certificate file path") || strings.Contains(err.Error(), ":2:") {
		t.Errorf("2.2: %v", err)
	}
}

// TestChain22Merge: under semantics "2.2" the merged configuration holds
// 2.2's auth_checker chain in the order translate found (a fragment: the
// names' order), mod_authz_default's authority (none when it is not
// loaded), mod_authz_dbm's flag, replaced with its file, and
// mod_authnz_ldap's configuration as 2.2's, AuthzLDAPAuthoritative
// among its lines; 2.2's hook is what the ldap-* lines ask.
func TestChain22Merge(t *testing.T) {
	conf := `<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "L"
    AuthBasicProvider ldap
    AuthLDAPURL ldap://127.0.0.1/dc=example,dc=org?uid
    AuthLDAPBindDN cn=outer
    AuthDBMGroupFile /etc/groups.dbm
    AuthzDBMType SDBM
    Require ldap-user alice
    Require valid-user
</Directory>
<Directory "@DOCROOT@/off">
    AuthLDAPURL ldap://127.0.0.1/dc=example,dc=org?uid
    AuthLDAPBindDN cn=off
    AuthzLDAPAuthoritative Off
    AuthzDBMAuthoritative Off
</Directory>
`
	for _, tc := range []struct {
		mods  []string
		chain string
		dflt  bool
	}{
		{[]string{"authz_default_module"}, "[mod_authnz_ldap mod_authz_dbm mod_authz_groupfile mod_authz_user]", true},
		{nil, "[mod_authnz_ldap mod_authz_dbm mod_authz_groupfile mod_authz_user]", false},
	} {
		mods := append([]string{"ldap_module", "authnz_ldap_module", "authz_dbm_module", "auth_basic_module", "authn_file_module", "authz_user_module", "authz_groupfile_module"}, tc.mods...)
		e, _ := engineMods(t, translate.Legacy22, mods, conf, "off/x.html")
		var asked []string
		e.id = ldapUsers{asked: &asked}
		for _, r := range []struct {
			target    string
			bind      string
			ldapAuth  bool
			dbm, dbmA bool
			want      int
		}{
			{"/index.html", "cn=outer", true, true, true, 0},
			{"/off/x.html", "cn=off", false, false, false, 0}, // the flag alone: no file (no merger)
		} {
			asked = nil
			res := decide(e, req{target: r.target, ip: "10.0.0.1", user: "alice:ok"})
			if res.Status != r.want || res.User != "Alice A" {
				t.Errorf("%v %s: %d %q", tc.mods, r.target, res.Status, res.User)
			}
			l := e.merge(res.Sections).layers
			lg := l.Legacy
			if lg == nil || fmt.Sprint(lg.Chain) != tc.chain || lg.DefaultNotAuthoritative == tc.dflt {
				t.Fatalf("%v %s: legacy %+v", tc.mods, r.target, lg)
			}
			if lg.DBMAuthoritative != r.dbmA || (l.DBMGroupFile != "") != r.dbm {
				t.Errorf("%v %s: DBM file %q, authoritative %v", tc.mods, r.target, l.DBMGroupFile, lg.DBMAuthoritative)
			}
			cfg, _ := l.LDAP.Config.(*ldapauth.Config)
			if cfg == nil || cfg.Version != ldapauth.Apache22 || cfg.BindDN != r.bind || cfg.Authoritative != r.ldapAuth {
				t.Errorf("%v %s: LDAP %+v", tc.mods, r.target, l.LDAP.Config)
			}
			if want := "authn " + r.bind + "|authz22 " + r.bind + " Alice A ldap-user alice|valid-user"; !strings.HasPrefix(strings.Join(asked, "|"), want) {
				t.Errorf("%v %s: asked %q, want %q first", tc.mods, r.target, asked, want)
			}
		}
	}
	// A configuration translate did not build: policy's default chain.
	if c, d := chain22(nil); c != nil || !d {
		t.Errorf("chain22(nil) = %v %v", c, d)
	}
}

// TestBasicProvider22Merge: 2.2's mod_auth_basic has no merger, so a
// section with AuthBasicAuthoritative alone authenticates with the
// default file provider, not the enclosing AuthBasicProvider ldap; 2.4's
// merges each setting, and the section keeps ldap.
func TestBasicProvider22Merge(t *testing.T) {
	conf := `<Directory "@DOCROOT@">
    AuthType Basic
    AuthName "L"
    AuthBasicProvider ldap
    AuthUserFile /etc/users
    AuthLDAPURL ldap://127.0.0.1/dc=example,dc=org?uid
    AuthLDAPBindDN cn=outer
    Require valid-user
</Directory>
<Directory "@DOCROOT@/in">
    AuthBasicAuthoritative Off
</Directory>
`
	for _, tc := range []struct {
		sem      translate.Semantics
		out, in  string // r->user of alice at / and at /in
		provider string
	}{
		{translate.Legacy22, "Alice A", "alice", "file"},
		{translate.Compat24, "Alice A", "Alice A", "ldap"},
	} {
		mods := append([]string{"ldap_module", "authnz_ldap_module"}, translate.FragmentModules...)
		if tc.sem == translate.Legacy22 {
			mods = append([]string{"ldap_module", "authnz_ldap_module"}, translate.FragmentModules22...)
		}
		e, _ := engineMods(t, tc.sem, mods, conf, "in/x.html")
		var asked []string
		e.id = ldapUsers{users: users{"alice": "ok"}, asked: &asked}
		for _, r := range []struct{ target, user string }{{"/index.html", tc.out}, {"/in/x.html", tc.in}} {
			res := decide(e, req{target: r.target, ip: "10.0.0.1", user: "alice:ok"})
			if res.Status != 0 || res.User != r.user {
				t.Errorf("%s %s: %d %q, want r->user %q", tc.sem, r.target, res.Status, res.User, r.user)
			}
		}
		res := decide(e, req{target: "/in/x.html", ip: "10.0.0.1", user: "alice:ok"})
		if ps := e.merge(res.Sections).layers.Providers; tc.provider == "file" && ps != nil || tc.provider == "ldap" && (len(ps) != 1 || ps[0].Kind != policy.ProviderLDAP) {
			t.Errorf("%s: providers %+v, want %s", tc.sem, ps, tc.provider)
		}
	}
}
