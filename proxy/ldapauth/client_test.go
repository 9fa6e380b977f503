package ldapauth

import (
	"context"
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
