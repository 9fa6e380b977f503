package ldapauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

// An oracleCase is one <Location> of Apache 2.4 with mod_authnz_ldap and
// one request to it; the library must answer as Apache does.
type oracleCase struct {
	name      string
	ldap      [][]string // mod_authnz_ldap directives: name, args
	providers []string   // AuthBasicProvider (default ldap)
	requires  []string   // Require lines, after "Require"
	user, pw  string
	// want pins Apache's answer: "ok" (access), "401", "403" or "500".
	want string
	// ours, if set, is the library's answer where it knowingly differs
	// from Apache's (see the package documentation).
	ours string
}

const filePassword = "file-pw" // alice's and zed's password in the htpasswd file

// closedPort returns a port of 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func oracleCases(srv *ldaptest.Server, closed int) []oracleCase {
	base := srv.URL + "/" + ldaptest.BaseDN
	people := srv.URL + "/" + ldaptest.PeopleDN
	url := func(u string) []string { return []string{"AuthLDAPURL", u} }
	bind := [][]string{{"AuthLDAPBindDN", srv.BindDN}, {"AuthLDAPBindPassword", srv.BindPassword}}
	with := func(a [][]string, b ...[]string) [][]string { return append(append([][]string{}, a...), b...) }
	alice := ldaptest.UserDN("alice")
	// fresh returns a URL of its own (an extension Apache ignores), so that
	// no earlier case has filled its caches.
	fresh := func(tag string) string { return base + "?uid?sub?(objectclass=*)?x-" + tag }
	cs := []oracleCase{
		{name: "valid-user anonymous", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "valid-user bind DN", ldap: with(bind, url(base+"?uid?sub")), requires: []string{"valid-user"}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "wrong password", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "alice", pw: "nope", want: "401"},
		{name: "empty password", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "alice", pw: "", want: "401"},
		{name: "unknown user", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "nobody", pw: "x", want: "401"},
		{name: "two entries", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "twin", pw: "twin-pw", want: "401"},
		{name: "filter metacharacters in user", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "we(ird)*", pw: "weird-pw", want: "ok"},
		{name: "star user", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: "*", pw: "alice-pw", want: "401"},
		{name: "wrong bind password", ldap: [][]string{{"AuthLDAPBindDN", srv.BindDN}, {"AuthLDAPBindPassword", "wrong"}, url(fresh("bindpw"))}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "bind DN without password", ldap: [][]string{{"AuthLDAPBindDN", srv.BindDN}, url(fresh("nobindpw"))}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "500"},
		{name: "base DN missing", ldap: [][]string{url(srv.URL + "/ou=missing," + ldaptest.BaseDN)}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "scope one too shallow", ldap: [][]string{url(base + "?uid?one")}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "scope one", ldap: [][]string{url(people + "?uid?one")}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "filter none", ldap: [][]string{url(base + "?uid?sub?none")}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "url filter excludes", ldap: [][]string{url(base + "?uid?sub?(employeeType=staff)")}, requires: []string{"valid-user"}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "url filter admits", ldap: [][]string{url(base + "?uid?sub?(employeeType=staff)")}, requires: []string{"valid-user"}, user: "frank", pw: "frank-pw", want: "ok"},
		{name: "bad url filter", ldap: [][]string{url(base + "?uid?sub?(foo)")}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "500"},
		{name: "filter overflow", ldap: [][]string{url(base)}, requires: []string{"valid-user"}, user: strings.Repeat("*", 4200), pw: "x", want: "500"},
		{name: "cn attribute", ldap: [][]string{url(base + "?cn")}, requires: []string{"valid-user"}, user: "Alice Adams", pw: "alice-pw", want: "ok"},

		{name: "ldap-user match", ldap: [][]string{url(base)}, requires: []string{"ldap-user alice"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap-user other", ldap: [][]string{url(base)}, requires: []string{"ldap-user alice"}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-user list", ldap: [][]string{url(base)}, requires: []string{`ldap-user carol "bob" alice`}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "ldap-user whole line", ldap: [][]string{url(base + "?cn")}, requires: []string{"ldap-user Alice Adams"}, user: "Alice Adams", pw: "alice-pw", want: "ok"},
		{name: "ldap-user quoted name", ldap: [][]string{url(base + "?cn")}, requires: []string{`ldap-user "Alice Adams" other`}, user: "Alice Adams", pw: "alice-pw", want: "ok"},

		{name: "ldap-dn match", ldap: [][]string{url(base)}, requires: []string{"ldap-dn " + alice}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap-dn other", ldap: [][]string{url(base)}, requires: []string{"ldap-dn " + alice}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-dn case default", ldap: [][]string{url(base)}, requires: []string{"ldap-dn " + strings.ToUpper(alice)}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "ldap-dn case on server", ldap: [][]string{url(base), {"AuthLDAPCompareDNOnServer", "on"}}, requires: []string{"ldap-dn " + strings.ToUpper(alice)}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap-dn quoted", ldap: [][]string{url(base)}, requires: []string{`ldap-dn "` + alice + `"`}, user: "alice", pw: "alice-pw", want: "401"},

		{name: "ldap-group member", ldap: [][]string{url(base)}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap-group not member", ldap: [][]string{url(base)}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-group uniqueMember", ldap: [][]string{url(base)}, requires: []string{"ldap-group " + ldaptest.Staff}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "ldap-group attribute member only", ldap: [][]string{url(base), {"AuthLDAPGroupAttribute", "member"}}, requires: []string{"ldap-group " + ldaptest.Staff}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-group memberUid", ldap: [][]string{url(base), {"AuthLDAPGroupAttribute", "memberUid"}, {"AuthLDAPGroupAttributeIsDN", "off"}}, requires: []string{"ldap-group " + ldaptest.Posix}, user: "erin", pw: "erin-pw", want: "ok"},
		{name: "ldap-group memberUid other", ldap: [][]string{url(base), {"AuthLDAPGroupAttribute", "memberUid"}, {"AuthLDAPGroupAttributeIsDN", "off"}}, requires: []string{"ldap-group " + ldaptest.Posix}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "ldap-group memberUid as DN", ldap: [][]string{url(base), {"AuthLDAPGroupAttribute", "memberUid"}}, requires: []string{"ldap-group " + ldaptest.Posix}, user: "erin", pw: "erin-pw", want: "401"},
		{name: "ldap-group missing group", ldap: [][]string{url(base)}, requires: []string{"ldap-group cn=missing," + ldaptest.GroupsDN}, user: "alice", pw: "alice-pw", want: "401"},
	}
	for _, depth := range []int{0, 1, 2} {
		for _, u := range []string{"carol", "dave"} {
			want := "401"
			if (u == "carol" && depth >= 1) || (u == "dave" && depth >= 2) {
				want = "ok"
			}
			cs = append(cs, oracleCase{name: fmt.Sprintf("nested %s depth %d", u, depth),
				ldap:     [][]string{url(base), {"AuthLDAPMaxSubGroupDepth", strconv.Itoa(depth)}},
				requires: []string{"ldap-group " + ldaptest.Top}, user: u, pw: u + "-pw", want: want})
		}
	}
	cs = append(cs, []oracleCase{
		{name: "nested default depth", ldap: [][]string{url(base)}, requires: []string{"ldap-group " + ldaptest.Top}, user: "dave", pw: "dave-pw", want: "ok"},
		{name: "nested wrong subgroup class", ldap: [][]string{url(base), {"AuthLDAPSubGroupClass", "groupOfUniqueNames"}}, requires: []string{"ldap-group " + ldaptest.Top}, user: "dave", pw: "dave-pw", want: "401"},

		{name: "ldap-attribute match", ldap: [][]string{url(base)}, requires: []string{"ldap-attribute employeeType=staff"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap-attribute other", ldap: [][]string{url(base)}, requires: []string{"ldap-attribute employeeType=staff"}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-attribute pairs", ldap: [][]string{url(base)}, requires: []string{`ldap-attribute employeeType=staff departmentNumber="7"`}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "ldap-attribute quoted", ldap: [][]string{url(base)}, requires: []string{`ldap-attribute "cn=Bob Brown"`}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-attribute spaced value", ldap: [][]string{url(base)}, requires: []string{`ldap-attribute cn="Bob Brown"`}, user: "bob", pw: "bob-pw", want: "ok"},

		{name: "ldap-filter match", ldap: [][]string{url(base)}, requires: []string{"ldap-filter employeeType=staff"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap-filter other", ldap: [][]string{url(base)}, requires: []string{"ldap-filter employeeType=staff"}, user: "bob", pw: "bob-pw", want: "401"},
		{name: "ldap-filter compound", ldap: [][]string{url(base)}, requires: []string{"ldap-filter |(departmentNumber=7)(departmentNumber=8)"}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "ldap-filter bad", ldap: [][]string{url(base)}, requires: []string{"ldap-filter foo"}, user: "alice", pw: "alice-pw", want: "401"},

		{name: "fail-over", ldap: [][]string{url(fmt.Sprintf("ldap://127.0.0.1:%d %s/%s", closed, srv.Addr, ldaptest.BaseDN))}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "fail-over comma", ldap: [][]string{url(fmt.Sprintf("ldap://127.0.0.1:%d,%s/%s", closed, srv.Addr, ldaptest.BaseDN))}, requires: []string{"valid-user"}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "server down", ldap: [][]string{url(fmt.Sprintf("ldap://127.0.0.1:%d/%s", closed, ldaptest.BaseDN))}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "500"},
		{name: "server down empty password", ldap: [][]string{url(fmt.Sprintf("ldap://127.0.0.1:%d/%s", closed, ldaptest.BaseDN))}, requires: []string{"valid-user"}, user: "alice", pw: "", want: "401"},

		{name: "ldaps", ldap: [][]string{url(srv.LDAPSURL + "/" + ldaptest.BaseDN)}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "starttls", ldap: [][]string{{"AuthLDAPURL", base, "STARTTLS"}}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "ldap on the ldaps port", ldap: [][]string{url(fmt.Sprintf("ldap://%s/%s", srv.TLSAddr, ldaptest.BaseDN))}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "500"},

		{name: "deref never base alias", ldap: [][]string{url(srv.URL + "/" + ldaptest.PeopleAlias), {"AuthLDAPDereferenceAliases", "never"}}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "deref searching base alias", ldap: [][]string{url(srv.URL + "/" + ldaptest.PeopleAlias), {"AuthLDAPDereferenceAliases", "searching"}}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "deref finding base alias", ldap: [][]string{url(srv.URL + "/" + ldaptest.PeopleAlias), {"AuthLDAPDereferenceAliases", "finding"}}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "deref always base alias", ldap: [][]string{url(srv.URL + "/" + ldaptest.PeopleAlias)}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "deref never entry alias", ldap: [][]string{url(srv.URL + "/" + ldaptest.AliasesDN + "?uid?one"), {"AuthLDAPDereferenceAliases", "never"}}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "401"},
		{name: "deref searching entry alias", ldap: [][]string{url(srv.URL + "/" + ldaptest.AliasesDN + "?uid?one"), {"AuthLDAPDereferenceAliases", "searching"}}, requires: []string{"valid-user"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "deref never alias itself", ldap: [][]string{url(srv.URL + "/" + ldaptest.AliasesDN + "?uid?one"), {"AuthLDAPDereferenceAliases", "never"}}, requires: []string{"valid-user"}, user: "al", pw: "alice-pw", want: "401"},

		{name: "file user, ldap-group", ldap: [][]string{url(base)}, providers: []string{"file"}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "alice", pw: filePassword, want: "ok"},
		{name: "file user not in ldap", ldap: [][]string{url(base)}, providers: []string{"file"}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "zed", pw: filePassword, want: "401"},
		{name: "file user, ldap-filter", ldap: [][]string{url(base)}, providers: []string{"file"}, requires: []string{"ldap-filter employeeType=staff"}, user: "alice", pw: filePassword, want: "ok"},
		{name: "ldap then file, authoritative", ldap: [][]string{url(base)}, providers: []string{"ldap", "file"}, requires: []string{"valid-user"}, user: "alice", pw: filePassword, want: "401"},
		{name: "ldap then file, not authoritative", ldap: [][]string{url(base), {"AuthLDAPBindAuthoritative", "off"}}, providers: []string{"ldap", "file"}, requires: []string{"valid-user"}, user: "alice", pw: filePassword, want: "ok"},
		{name: "failed ldap attempt, searched again", ldap: [][]string{url(fresh("again")), {"AuthLDAPBindAuthoritative", "off"}}, providers: []string{"ldap", "file"}, requires: []string{"ldap-group " + ldaptest.Admins}, user: "alice", pw: filePassword, want: "ok"},
		{name: "failed ldap attempt, memberUid", ldap: [][]string{url(base), {"AuthLDAPBindAuthoritative", "off"}, {"AuthLDAPGroupAttribute", "memberUid"}, {"AuthLDAPGroupAttributeIsDN", "off"}}, providers: []string{"ldap", "file"}, requires: []string{"ldap-group " + ldaptest.Posix}, user: "zed", pw: filePassword, want: "401"},

		{name: "ldap-search one entry", ldap: [][]string{url(base)}, requires: []string{"ldap-search (departmentNumber=42)"}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "ldap-search two entries", ldap: [][]string{url(base)}, requires: []string{"ldap-search (uid=twin)"}, user: "bob", pw: "bob-pw", want: "403"},
		{name: "ldap-search or a user", ldap: [][]string{url(base)}, requires: []string{"ldap-search (uid=twin)", "ldap-user bob"}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "remote user is DN", ldap: [][]string{url(base), {"AuthLDAPRemoteUserIsDN", "on"}}, requires: []string{"ldap-user alice"}, user: "alice", pw: "alice-pw", want: "ok"},
		{name: "search as user", ldap: [][]string{url(base), {"AuthLDAPSearchAsUser", "on"}, {"AuthLDAPCompareAsUser", "on"}}, requires: []string{"ldap-group " + ldaptest.Top}, user: "dave", pw: "dave-pw", want: "ok"},
		{name: "initial bind as user", ldap: [][]string{url(base), {"AuthLDAPInitialBindAsUser", "on"}, {"AuthLDAPInitialBindPattern", "(.+)", "uid=$1," + ldaptest.PeopleDN}}, requires: []string{"valid-user"}, user: "bob", pw: "bob-pw", want: "ok"},
		{name: "initial bind as user wrong", ldap: [][]string{url(base), {"AuthLDAPInitialBindAsUser", "on"}, {"AuthLDAPInitialBindPattern", "(.+)", "uid=$1," + ldaptest.PeopleDN}}, requires: []string{"valid-user"}, user: "bob", pw: "nope", want: "401"},
	}...)
	// Apache's DN-compare cache is keyed by the required DN alone: once a
	// user matched "Require ldap-dn X" on the server, any user does.
	dnOnServer := [][]string{url(base + "?uid?sub?(objectClass=person)"), {"AuthLDAPCompareDNOnServer", "on"}}
	cs = append(cs,
		oracleCase{name: "dn cache: first user", ldap: dnOnServer, requires: []string{"ldap-dn " + alice}, user: "alice", pw: "alice-pw", want: "ok"},
		oracleCase{name: "dn cache: other user", ldap: dnOnServer, requires: []string{"ldap-dn " + alice}, user: "bob", pw: "bob-pw", want: "ok", ours: "401"},
	)
	return cs
}

func quoteArg(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestOracleApache runs the cases against Apache 2.4 with mod_ldap and
// mod_authnz_ldap, and against the library, in the same order (the caches
// of both see the same history).
func TestOracleApache(t *testing.T) {
	srv := ldaptest.Start(t)
	paths := apachetest.Require(t)
	closed := closedPort(t)
	cases := oracleCases(srv, closed)

	dir := apachetest.TempDir(t)
	htpasswd := filepath.Join(dir, "htpasswd")
	for i, u := range []string{"alice", "zed"} {
		args := []string{"-bB", htpasswd, u, filePassword}
		if i == 0 {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(paths.Htpasswd, args...).CombinedOutput(); err != nil {
			t.Fatalf("htpasswd: %v\n%s", err, out)
		}
	}
	os.Chmod(htpasswd, 0o644)
	var conf strings.Builder
	for i, c := range cases {
		fmt.Fprintf(&conf, "<Location /case%d>\n  AuthType Basic\n  AuthName \"case %d\"\n", i, i)
		prov := c.providers
		if prov == nil {
			prov = []string{"ldap"}
		}
		fmt.Fprintf(&conf, "  AuthBasicProvider %s\n  AuthUserFile %s\n", strings.Join(prov, " "), quoteArg(htpasswd))
		for _, d := range c.ldap {
			conf.WriteString("  " + d[0])
			for _, a := range d[1:] {
				conf.WriteString(" " + quoteArg(a))
			}
			conf.WriteString("\n")
		}
		for _, r := range c.requires {
			conf.WriteString("  Require " + r + "\n")
		}
		conf.WriteString("</Location>\n")
	}
	frag := filepath.Join(dir, "ldap.conf")
	if err := os.WriteFile(frag, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A copy of the CA the children (www-data) can read: for ldaps://,
	// libldap makes each connection's TLS context in the child.
	caFile := filepath.Join(dir, "ca.pem")
	if b, err := os.ReadFile(srv.CAFile); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(caFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf("LDAPTrustedGlobalCert CA_BASE64 %s\nLDAPConnectionTimeout 2\nLogLevel info authnz_ldap:debug\n", quoteArg(caFile))
	start := time.Now()
	ap := apachetest.Start(t, apachetest.Options{Modules: []string{"authn_file", "ldap", "authnz_ldap"}, Extra: extra, Include: []string{frag}})
	t.Logf("Apache started in %v", time.Since(start))

	opts := DefaultOptions()
	opts.ConnectionTimeout = 2 * time.Second
	opts.TrustedCAFiles = []string{srv.CAFile}
	client, err := NewClient(&opts)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	for i, c := range cases {
		got := apacheStatus(t, hc, ap.Addr, fmt.Sprintf("/case%d", i), c.user, c.pw)
		ours, why := libraryStatus(t, client, c, htpasswdUsers)
		if got != c.want {
			t.Errorf("case%d %s: Apache answered %s, the case pins %s", i, c.name, got, c.want)
		}
		want := c.want
		if c.ours != "" {
			want = c.ours
		}
		if ours != want {
			t.Errorf("case%d %s: library answered %s (%s), want %s (Apache: %s)", i, c.name, ours, why, want, got)
		}
	}
	if t.Failed() {
		t.Logf("Apache error log:\n%s", ap.ErrorLog())
	}
}

var htpasswdUsers = map[string]string{"alice": filePassword, "zed": filePassword}

func apacheStatus(t *testing.T, hc *http.Client, addr, path, user, pw string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.SetBasicAuth(user, pw)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case 401, 403, 500:
		return strconv.Itoa(resp.StatusCode)
	}
	return "ok"
}

// libraryStatus decides the case with the library as mod_auth_basic and
// mod_authz_core would use it.
func libraryStatus(t *testing.T, client *Client, c oracleCase, file map[string]string) (string, string) {
	t.Helper()
	cfg := NewConfig(Apache24)
	for _, d := range c.ldap {
		if err := cfg.Apply(d[0], d[1:], DirectiveOptions{}); err != nil {
			t.Fatalf("%s: %s: %v", c.name, d[0], err)
		}
	}
	ctx := context.Background()
	// mod_authz_core first decides without a user: a provider that needs
	// none (ldap-search) may grant, or deny with 403, before anyone logs in.
	needUser := false
	for _, line := range c.requires {
		form, args := getwordConf(line)
		if form == "valid-user" {
			needUser = true
			continue
		}
		d, _ := client.Authorize(ctx, cfg, &Request{}, Require(form), args)
		switch d {
		case AuthzGranted:
			return "ok", "granted without a user"
		case AuthzDeniedNoUser:
			needUser = true
		}
	}
	if !needUser {
		return "403", "denied without a user"
	}
	prov := c.providers
	if prov == nil {
		prov = []string{"ldap"}
	}
	req := &Request{}
	res := AuthUserNotFound
	var why string
	for _, p := range prov {
		switch p {
		case "ldap":
			a := client.Authenticate(ctx, cfg, c.user, c.pw)
			req.Authn = a
			res = a.Result
			if a.Err != nil {
				why = a.Err.Error()
			}
			if res == AuthGranted {
				req.User = a.RemoteUser(cfg)
			}
		case "file":
			pw, ok := file[c.user]
			switch {
			case !ok:
				res = AuthUserNotFound
			case pw == c.pw:
				res, req.User = AuthGranted, c.user
			default:
				res = AuthDenied
			}
		}
		if res != AuthUserNotFound {
			break
		}
	}
	switch res {
	case AuthGeneralError:
		return "500", "authn: " + why
	case AuthDenied, AuthUserNotFound:
		return "401", "authn " + res.String() + ": " + why
	}
	for _, line := range c.requires {
		form, args := getwordConf(line)
		if form == "valid-user" {
			return "ok", ""
		}
		d, err := client.Authorize(ctx, cfg, req, Require(form), args)
		if d == AuthzGranted {
			return "ok", ""
		}
		if err != nil {
			why = err.Error()
		}
	}
	return "401", "authz: " + why
}

// TestOracleServerDown stops slapd between requests: a user whose bind is
// in the search cache still gets in, anyone else is a 500, a check that
// needs the server is denied, and a restarted server is used again.
func TestOracleServerDown(t *testing.T) {
	srv := ldaptest.Start(t)
	apachetest.Require(t)
	dir := apachetest.TempDir(t)
	base := srv.URL + "/" + ldaptest.BaseDN
	conf := fmt.Sprintf(`<Location /any>
  AuthType Basic
  AuthName any
  AuthBasicProvider ldap
  AuthLDAPURL %[1]s
  Require valid-user
</Location>
<Location /admins>
  AuthType Basic
  AuthName admins
  AuthBasicProvider ldap
  AuthLDAPURL %[1]s
  Require ldap-group %[2]s
</Location>
`, quoteArg(base), ldaptest.Admins)
	frag := filepath.Join(dir, "ldap.conf")
	if err := os.WriteFile(frag, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ap := apachetest.Start(t, apachetest.Options{Modules: []string{"ldap", "authnz_ldap"}, Extra: "LDAPConnectionTimeout 2\n", Include: []string{frag}})
	opts := DefaultOptions()
	opts.ConnectionTimeout = 2 * time.Second
	client, err := NewClient(&opts)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	anyCase := oracleCase{ldap: [][]string{{"AuthLDAPURL", base}}, requires: []string{"valid-user"}}
	adminCase := oracleCase{ldap: [][]string{{"AuthLDAPURL", base}}, requires: []string{"ldap-group " + ldaptest.Admins}}
	hc := &http.Client{Timeout: 30 * time.Second}
	step := func(name, path string, c oracleCase, user, pw, want string) {
		t.Helper()
		c.name, c.user, c.pw = name, user, pw
		got := apacheStatus(t, hc, ap.Addr, path, user, pw)
		ours, why := libraryStatus(t, client, c, nil)
		if got != want {
			t.Errorf("%s: Apache answered %s, want %s", name, got, want)
		}
		if ours != want {
			t.Errorf("%s: library answered %s (%s), want %s", name, ours, why, want)
		}
	}
	step("up", "/any", anyCase, "alice", "alice-pw", "ok")
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	step("down, cached bind", "/any", anyCase, "alice", "alice-pw", "ok")
	step("down, other user", "/any", anyCase, "bob", "bob-pw", "500")
	step("down, wrong password", "/any", anyCase, "alice", "nope", "500")
	step("down, group check", "/admins", adminCase, "alice", "alice-pw", "401")
	srv.Restart(t)
	step("up again", "/any", anyCase, "bob", "bob-pw", "ok")
	step("up again, group", "/admins", adminCase, "alice", "alice-pw", "ok")
	if t.Failed() {
		t.Logf("Apache error log:\n%s", ap.ErrorLog())
	}
}
