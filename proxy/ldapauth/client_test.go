package ldapauth

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

func newTestConfig(t *testing.T, srv *ldaptest.Server, url string, dirs ...[]string) *Config {
	t.Helper()
	cfg := NewConfig(Apache24)
	if err := cfg.Apply("AuthLDAPURL", []string{url}, DirectiveOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := cfg.Apply(d[0], d[1:], DirectiveOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func TestSmoke(t *testing.T) {
	srv := ldaptest.Start(t)
	c, err := NewClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := newTestConfig(t, srv, srv.URL+"/"+ldaptest.BaseDN+"?uid?sub")
	ctx := context.Background()
	for _, tc := range []struct {
		user, pw string
		want     Result
	}{
		{"alice", "alice-pw", AuthGranted},
		{"alice", "wrong", AuthDenied},
		{"nobody", "x", AuthUserNotFound},
		{"twin", "twin-pw", AuthUserNotFound},
		{"we(ird)*", "weird-pw", AuthGranted},
		{"alice", "", AuthDenied},
	} {
		res, dn, _, err := c.CheckPassword(ctx, cfg, tc.user, tc.pw)
		if res != tc.want {
			t.Errorf("%s/%s: got %v (%s, %v), want %v", tc.user, tc.pw, res, dn, err, tc.want)
		}
	}
	req := &Request{User: "dave"}
	d, err := c.Authorize(ctx, cfg, req, RequireGroup, ldaptest.Top)
	t.Logf("dave in top: %v %v", d, err)
	req = &Request{User: "alice"}
	d, err = c.Authorize(ctx, cfg, req, RequireAttribute, "employeeType=staff")
	t.Logf("alice staff: %v %v", d, err)
	t.Logf("%+v", c.CacheStats())
}

func TestAuthorize22(t *testing.T) {
	srv := ldaptest.Start(t)
	c, err := NewClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	cfg := NewConfig(Apache22)
	if err := cfg.Apply("AuthLDAPURL", []string{srv.URL + "/" + ldaptest.BaseDN}, DirectiveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Apply("AuthLDAPMaxSubGroupDepth", []string{"2"}, DirectiveOptions{}); err == nil {
		t.Error("2.2 accepted a 2.4 directive")
	}
	for _, tc := range []struct {
		user  string
		authn *Authn
		lines []string
		want  Status22
		at    int // the line that decided
	}{
		{"alice", nil, []string{"ldap-group " + ldaptest.Admins}, OK22, 0},
		{"bob", nil, []string{"ldap-group " + ldaptest.Admins}, Unauthorized22, -1},
		{"bob", nil, []string{"valid-user", "ldap-group " + ldaptest.Admins}, Unauthorized22, -1},
		{"bob", nil, []string{"valid-user"}, Declined22, -1},
		{"dave", nil, []string{"ldap-group " + ldaptest.Top}, Unauthorized22, -1}, // no nested groups in 2.2
		{"bob", nil, []string{"ldap-user alice", `ldap-attribute departmentNumber="7"`}, OK22, 1},
		{"nobody", nil, []string{"ldap-user nobody"}, Unauthorized22, -1},
		// A failed LDAP attempt leaves no DN, and 2.2 does not search
		// again: the first line that needs the DN refuses.
		{"alice", &Authn{User: "alice"}, []string{"valid-user", "ldap-group " + ldaptest.Admins, "ldap-user alice"}, Unauthorized22, 1},
		// 2.2 has no ldap-search: the line counts as an ldap-* line, and
		// nothing grants it.
		{"alice", nil, []string{"ldap-search (uid=alice)"}, Unauthorized22, -1},
	} {
		d, at, err := c.Authorize22(ctx, cfg, &Request{User: tc.user, Authn: tc.authn}, tc.lines)
		if d != tc.want || at != tc.at {
			t.Errorf("%s %q: %v at %d (%v), want %v at %d", tc.user, tc.lines, d, at, err, tc.want, tc.at)
		}
	}
	cfg.Authoritative = false
	if d, _, _ := c.Authorize22(ctx, cfg, &Request{User: "bob"}, []string{"ldap-group " + ldaptest.Admins}); d != Declined22 {
		t.Errorf("not authoritative: %v, want DECLINED", d)
	}
	// 2.2 searches before it refuses an empty password.
	if res, _, _, _ := c.CheckPassword(ctx, cfg, "nobody", ""); res != AuthUserNotFound {
		t.Errorf("2.2 empty password, unknown user: %v", res)
	}
	if res, _, _, _ := c.CheckPassword(ctx, cfg, "alice", ""); res != AuthDenied {
		t.Errorf("2.2 empty password: %v", res)
	}
}

func TestSecretsNotInErrors(t *testing.T) {
	srv := ldaptest.Start(t)
	c, _ := NewClient(nil)
	defer c.Close()
	ctx := context.Background()
	const secret = "s3cr3t-Pa55"
	cfg := newTestConfig(t, srv, srv.URL+"/"+ldaptest.BaseDN, []string{"AuthLDAPBindDN", srv.BindDN}, []string{"AuthLDAPBindPassword", secret})
	_, _, _, err := c.CheckPassword(ctx, cfg, "alice", secret)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("wrong bind password: %v", err)
	}
	srv.Stop()
	_, _, _, err = c.CheckPassword(ctx, cfg, "bob", secret)
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("server down: %v", err)
	}
}

func TestExecPassword(t *testing.T) {
	cfg := NewConfig(Apache24)
	err := cfg.Apply("AuthLDAPBindPassword", []string{"exec:/bin/echo hello"}, DirectiveOptions{})
	if !errors.Is(err, ErrExecNotAllowed) {
		t.Fatalf("exec: without AllowExec: %v", err)
	}
	if err := cfg.Apply("AuthLDAPBindPassword", []string{`exec:/bin/echo "two words"`}, DirectiveOptions{AllowExec: true}); err != nil {
		t.Fatal(err)
	}
	if cfg.BindPassword != "two words" {
		t.Errorf("exec password %q", cfg.BindPassword)
	}
	if err := cfg.Apply("AuthLDAPBindPassword", []string{"exec:/bin/true"}, DirectiveOptions{AllowExec: true}); err == nil || err.Error() != "Empty passwords are invalid for AuthLDAPBindPassword" {
		t.Errorf("empty exec output: %v", err)
	}
}

func TestLDAPSAndStartTLS(t *testing.T) {
	srv := ldaptest.Start(t)
	o := DefaultOptions()
	o.TrustedCAFiles = []string{srv.CAFile}
	c, err := NewClient(&o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, args := range [][]string{{srv.LDAPSURL + "/" + ldaptest.BaseDN}, {srv.URL + "/" + ldaptest.BaseDN, "STARTTLS"}} {
		cfg := NewConfig(Apache24)
		if err := cfg.Apply("AuthLDAPURL", args, DirectiveOptions{}); err != nil {
			t.Fatal(err)
		}
		if res, _, _, err := c.CheckPassword(context.Background(), cfg, "alice", "alice-pw"); res != AuthGranted {
			t.Errorf("%q: %v %v", args, res, err)
		}
	}
	// Without the CA the certificate is not trusted: a general error.
	c2, _ := NewClient(nil)
	defer c2.Close()
	cfg := NewConfig(Apache24)
	cfg.Apply("AuthLDAPURL", []string{srv.LDAPSURL + "/" + ldaptest.BaseDN}, DirectiveOptions{})
	if res, _, _, _ := c2.CheckPassword(context.Background(), cfg, "bob", "bob-pw"); res != AuthGeneralError {
		t.Errorf("untrusted certificate: %v", res)
	}
}
