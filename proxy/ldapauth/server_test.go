package ldapauth

import (
	"context"
	"math"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

// TestServerApply: each server directive as its handler in util_ldap.c
// reads it (translate's TestLDAPServerDirectivesMatchApache24 holds the
// messages to apache2 -t).
func TestServerApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		vhost bool
		err   string
		check func(s *ServerConfig) bool
	}{
		{name: "LDAPCacheEntries", args: []string{"0"}, check: func(s *ServerConfig) bool { return s.CacheEntries == 0 }},
		{name: "LDAPCacheEntries", args: []string{"-7"}, check: func(s *ServerConfig) bool { return s.CacheEntries == 0 }},
		{name: "LDAPCacheEntries", args: []string{" 12abc"}, check: func(s *ServerConfig) bool { return s.CacheEntries == 12 }},
		{name: "LDAPOpCacheEntries", args: []string{"5"}, check: func(s *ServerConfig) bool { return s.OpCacheEntries == 5 }},
		{name: "LDAPCacheTTL", args: []string{"5m"}, check: func(s *ServerConfig) bool { return s.CacheTTL == 5*time.Second }},
		{name: "LDAPCacheTTL", args: []string{"-3"}, check: func(s *ServerConfig) bool { return s.CacheTTL == -3*time.Second }},
		{name: "LDAPCacheTTL", args: []string{"99999999999999999999"}, check: func(s *ServerConfig) bool { return s.CacheTTL == math.MaxInt64 }},
		{name: "LDAPOpCacheTTL", args: []string{"0"}, check: func(s *ServerConfig) bool { return s.OpCacheTTL == 0 }},
		{name: "LDAPConnectionTimeout", args: []string{"2"}, check: func(s *ServerConfig) bool { return s.ConnectionTimeout == 2*time.Second }},
		{name: "LDAPTimeout", args: []string{"0"}, check: func(s *ServerConfig) bool { return s.Timeout == 0 }},
		{name: "LDAPTimeout", args: []string{" 7"}, check: func(s *ServerConfig) bool { return s.Timeout == 7*time.Second }},
		{name: "LDAPTimeout", args: []string{"7s"}, err: "Timeout not numerical"},
		{name: "LDAPTimeout", args: []string{"-1"}, err: "Timeout must be non-negative"},
		{name: "LDAPRetries", args: []string{"0"}, check: func(s *ServerConfig) bool { return s.Retries == 0 }},
		{name: "LDAPRetries", args: []string{"2x"}, check: func(s *ServerConfig) bool { return s.Retries == 2 }},
		{name: "LDAPRetries", args: []string{"-2"}, err: "LDAPRetries must be >= 0"},
		{name: "LDAPRetryDelay", args: []string{"250ms"}, check: func(s *ServerConfig) bool { return s.RetryDelay == 250*time.Millisecond }},
		{name: "LDAPRetryDelay", args: []string{"1x"}, err: "LDAPRetryDelay has wrong format"},
		{name: "LDAPConnectionPoolTTL", args: []string{"-1"}, check: func(s *ServerConfig) bool { return s.ConnectionPoolTTL == PoolTTLInfinite }},
		{name: "LDAPConnectionPoolTTL", args: []string{"0"}, check: func(s *ServerConfig) bool { return s.ConnectionPoolTTL == 0 }},
		{name: "LDAPConnectionPoolTTL", args: []string{"2mi"}, check: func(s *ServerConfig) bool { return s.ConnectionPoolTTL == 2*time.Minute }},
		{name: "LDAPConnectionPoolTTL", args: []string{"2d"}, err: "LDAPConnectionPoolTTL has wrong format"},
		{name: "LDAPTrustedMode", args: []string{"tls"}, check: func(s *ServerConfig) bool { return s.TrustedMode == ModeSTARTTLS && s.TrustedModeSet }},
		{name: "LDAPTrustedMode", args: []string{"none"}, vhost: true, check: func(s *ServerConfig) bool { return s.TrustedMode == ModeNone && s.TrustedModeSet }},
		{name: "LDAPTrustedMode", args: []string{"ldaps"}, err: "Invalid LDAPTrustedMode setting: must be one of NONE, SSL, or TLS/STARTTLS"},
		{name: "LDAPVerifyServerCert", args: []string{"OFF"}, check: func(s *ServerConfig) bool { return !s.VerifyServerCert }},
		{name: "LDAPTrustedGlobalCert", args: []string{"ca_base64", "/a.pem", "pw"}, check: func(s *ServerConfig) bool {
			return reflect.DeepEqual(s.GlobalCerts, []Cert{{Type: CABase64, Path: "/a.pem", Password: "pw"}})
		}},
		{name: "LDAPTrustedGlobalCert", args: []string{"/a.pem", "CA_BASE64"}, err: "The certificate type /a.pem is not recognised."},
		{name: "LDAPSharedCacheSize", args: []string{"0"}, check: func(s *ServerConfig) bool { return s.SharedCacheSize == 0 }},
		{name: "LDAPLibraryDebug", args: []string{"7"}, check: func(s *ServerConfig) bool { return s.LibraryDebug == 7 }},
		{name: "LDAPTimeout", args: []string{"5"}, vhost: true, err: "LDAPTimeout cannot occur within <VirtualHost> section"},
		{name: "LDAPCacheTTL", args: []string{"5"}, vhost: true, err: "LDAPCacheTTL cannot occur within <VirtualHost> section"},
		{name: "LDAPTrustedGlobalCert", args: []string{"CA_BASE64", "/a.pem"}, vhost: true, err: "LDAPTrustedGlobalCert cannot occur within <VirtualHost> section"},
		{name: "LDAPConnectionPoolTTL", args: []string{"5"}, vhost: true, check: func(s *ServerConfig) bool { return s.ConnectionPoolTTL == 5*time.Second }},
		{name: "AuthLDAPURL", args: []string{"x"}, err: "not a server directive"},
	} {
		s := NewServerConfig(Apache24)
		err := s.Apply(tc.name, tc.args, ServerContext{VirtualHost: tc.vhost})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %q: %v, want %q", tc.name, tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s %q: %v", tc.name, tc.args, err)
		case !tc.check(s):
			t.Errorf("%s %q: %+v", tc.name, tc.args, s)
		}
	}
}

// TestTimeoutParameter is ap_timeout_parameter_parse: the number, then
// only the unit's first letter (two for m...) counts.
func TestTimeoutParameter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "5", want: 5 * time.Second},
		{in: "", want: 0},
		{in: " +5", want: 5 * time.Second},
		{in: "5sec", want: 5 * time.Second},
		{in: "soon", want: 0},
		{in: "500ms", want: 500 * time.Millisecond},
		{in: "2h", want: 2 * time.Hour},
		{in: "3mi", want: 3 * time.Minute},
		{in: "3minutes", want: 3 * time.Minute},
		{in: "3m", bad: true},
		{in: "3mx", bad: true},
		{in: "-5", bad: true},
		{in: "5 ", bad: true},
		{in: " ", bad: true},
		{in: "x", bad: true},
		{in: "9223372036854", want: math.MaxInt64}, // in range for Apache's microseconds, past a Duration's nanoseconds
		{in: "9223372036855", bad: true},
		{in: "99999999999999999999", bad: true},
		{in: "2562047788016h", bad: true},
	} {
		got, err := TimeoutParameter(tc.in, "s")
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("%q: %v %v, want %v (bad %v)", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if d, err := TimeoutParameter("7", "ms"); err != nil || d != 7*time.Millisecond {
		t.Errorf("default unit ms: %v %v", d, err)
	}
}

// TestServerOptions: the defaults are the client's; the last CA_BASE64
// is the trusted CA file; a connection timeout of 0 or less is none; a
// negative pool TTL is no limit.
func TestServerOptions(t *testing.T) {
	d := DefaultOptions()
	if got := NewServerConfig(Apache24).Options(); !reflect.DeepEqual(got, d) {
		t.Errorf("defaults:\n%+v\nwant\n%+v", got, d)
	}
	s := NewServerConfig(Apache24)
	for _, l := range [][]string{
		{"LDAPTrustedGlobalCert", "CA_BASE64", "/first.pem"}, {"LDAPTrustedGlobalCert", "CA_BASE64", "/last.pem"},
		{"LDAPConnectionTimeout", "-1"}, {"LDAPConnectionPoolTTL", "-1"}, {"LDAPCacheEntries", "99999999999"},
		{"LDAPTrustedMode", "SSL"}, {"LDAPVerifyServerCert", "off"}, {"LDAPRetries", "1"}, {"LDAPRetryDelay", "1"}, {"LDAPTimeout", "4"},
	} {
		if err := s.Apply(l[0], l[1:], ServerContext{}); err != nil {
			t.Fatal(err)
		}
	}
	o := s.Options()
	if !reflect.DeepEqual(o.TrustedCAFiles, []string{"/last.pem"}) || o.ConnectionTimeout != 0 || o.ConnectionPoolTTL != -1 || o.CacheEntries != math.MaxInt32 ||
		o.TrustedMode != ModeSSL || o.VerifyServerCert || o.Retries != 1 || o.RetryDelay != time.Second || o.Timeout != 4*time.Second {
		t.Errorf("options %+v", o)
	}
	if _, _, bad := s.Unsupported(); bad {
		t.Error("CA_BASE64 lines are supported")
	}
	for _, typ := range []string{"CA_DER", "CA_CERT7_DB", "CA_SECMOD", "CERT_DER", "CERT_BASE64", "CERT_KEY3_DB", "CERT_NICKNAME", "KEY_DER", "KEY_BASE64"} {
		s := NewServerConfig(Apache24)
		s.Apply("LDAPTrustedGlobalCert", []string{"CA_BASE64", "/ok.pem"}, ServerContext{})
		s.Apply("LDAPTrustedGlobalCert", []string{typ, "/x"}, ServerContext{})
		if c, why, bad := s.Unsupported(); !bad || c.Type.String() != typ || why == "" {
			t.Errorf("%s: unsupported %v %q %v", typ, c, why, bad)
		}
	}
}

// TestCheckDirDirective: mod_ldap's per-directory directives, and 2.2's
// LDAPTrustedClientCert, which takes client types only.
func TestCheckDirDirective(t *testing.T) {
	for _, tc := range []struct {
		v    Version
		name string
		args []string
		err  string
	}{
		{Apache24, "LDAPTrustedClientCert", []string{"CERT_BASE64", "/c.pem"}, ""},
		{Apache24, "LDAPTrustedClientCert", []string{"CA_BASE64", "/c.pem"}, ""},
		{Apache24, "LDAPTrustedClientCert", []string{"CERT_PFX", "/c.p12"}, `The certificate type "CERT_PFX" is only valid within a LDAPTrustedGlobalCert directive.`},
		{Apache24, "LDAPTrustedClientCert", []string{"PEM", "/c.pem"}, `The certificate type "PEM" is not recognised.`},
		{Apache22, "LDAPTrustedClientCert", []string{"CA_BASE64", "/c.pem"}, `The certificate type "CA_BASE64" is only valid within a LDAPTrustedGlobalCert directive. Only CERT_DER`},
		{Apache22, "LDAPTrustedClientCert", []string{"KEY_BASE64", "/k.pem"}, ""},
		{Apache22, "LDAPTrustedClientCert", []string{"PEM", "/k.pem"}, "CERT_NICKNAME, CERT_PFX,KEY_DER"},
		{Apache24, "LDAPReferrals", []string{"DEFAULT"}, ""},
		{Apache24, "LDAPReferrals", []string{"chase"}, "LDAPReferrals must be 'on', 'off', or 'default'"},
		{Apache24, "LDAPReferralHopLimit", []string{"3"}, ""},
		{Apache24, "LDAPReferralHopLimit", []string{"-3"}, "LDAPReferralHopLimit must be greater than zero"},
		{Apache24, "LDAPReferralHopLimit", []string{"4294967296"}, "LDAPReferralHopLimit must be greater than zero"},
		{Apache24, "LDAPTimeout", []string{"3"}, "not a per-directory directive"},
	} {
		err := CheckDirDirective(tc.v, tc.name, tc.args)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v %s %q: %v, want %q", tc.v, tc.name, tc.args, err, tc.err)
		}
	}
}

// TestWithServer: a virtual host's client shares the caches and counters
// of the client it comes from, and has its own connections, mode and
// pool TTL.
func TestWithServer(t *testing.T) {
	srv := ldaptest.Start(t)
	o := DefaultOptions()
	o.TrustedCAFiles = []string{srv.CAFile}
	root, err := NewClient(&o)
	if err != nil {
		t.Fatal(err)
	}
	a := root.WithServer(ModeNone, -1)
	b := root.WithServer(ModeSTARTTLS, 0)
	defer a.Close()
	defer b.Close()
	cfg := newTestConfig(t, srv, srv.URL+"/"+ldaptest.BaseDN+"?uid")
	ctx := context.Background()
	if res, _, _, err := a.CheckPassword(ctx, cfg, "alice", "alice-pw"); res != AuthGranted {
		t.Fatalf("a: %v %v", res, err)
	}
	// b's mode is STARTTLS, its connections its own: the cached bind
	// grants without one.
	if res, _, _, err := b.CheckPassword(ctx, cfg, "alice", "alice-pw"); res != AuthGranted {
		t.Fatalf("b: %v %v", res, err)
	}
	st := root.CacheStats()
	if st.Search.Hits != 1 || st.Search.Misses != 1 || st.Search.Entries != 1 || b.CacheStats() != st {
		t.Errorf("shared caches: root %+v, b %+v", st, b.CacheStats())
	}
	if len(b.pools) != 0 || len(a.pools) != 1 {
		t.Errorf("pools: a %d, b %d", len(a.pools), len(b.pools))
	}
	if res, _, _, err := b.CheckPassword(ctx, cfg, "bob", "bob-pw"); res != AuthGranted {
		t.Fatalf("b over STARTTLS: %v %v", res, err)
	}
	for k := range b.pools {
		if k.mode != ModeSTARTTLS {
			t.Errorf("b's pool %+v", k)
		}
	}
	if b.opts.ConnectionPoolTTL != 0 || a.opts.TrustedMode != ModeNone || root.opts.TrustedMode != ModeNone {
		t.Error("WithServer's settings")
	}
}

// TestSharedCounters: clients of the same Counters count into them; each
// reports its own entries.
func TestSharedCounters(t *testing.T) {
	ctr := NewCounters()
	o := DefaultOptions()
	o.Counters = ctr
	c1, _ := NewClient(&o)
	c2, _ := NewClient(&o)
	c1.cachesFor("ldap://h/").search.put("k", searchNode{})
	c2.ctr.search.hits.Add(2)
	if s := ctr.Stats(); s.Search.Inserts != 1 || s.Search.Hits != 2 || s.Search.Entries != 0 {
		t.Errorf("counters %+v", s.Search)
	}
	if s1, s2 := c1.CacheStats(), c2.CacheStats(); s1.Search.Entries != 1 || s2.Search.Entries != 0 || s2.Search.Inserts != 1 {
		t.Errorf("c1 %+v, c2 %+v", s1.Search, s2.Search)
	}
	var sum CacheStats
	sum.Add(c1.CacheStats())
	sum.Add(c2.CacheStats().EntriesOnly())
	if sum.Search.Entries != 1 || sum.Search.Hits != 2 || sum.Compare != (CacheCounters{}) {
		t.Errorf("sum %+v", sum)
	}
}

// TestTrustedCAFailsTLSOnly: a trusted CA file OpenLDAP could not load
// fails the TLS connections, as libldap fails to make its TLS context
// then, and nothing else.
func TestTrustedCAFailsTLSOnly(t *testing.T) {
	srv := ldaptest.Start(t)
	for _, f := range []string{filepath.Join(t.TempDir(), "missing.pem"), t.TempDir(), srv.Dir + "/slapd.conf"} {
		o := DefaultOptions()
		o.TrustedCAFiles = []string{f}
		o.Retries = 0
		c, err := NewClient(&o)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ctx := context.Background()
		if res, _, _, err := c.CheckPassword(ctx, newTestConfig(t, srv, srv.URL+"/"+ldaptest.BaseDN), "alice", "alice-pw"); res != AuthGranted {
			t.Errorf("%s, ldap://: %v %v", f, res, err)
		}
		for _, args := range [][]string{{srv.LDAPSURL + "/" + ldaptest.BaseDN}, {srv.URL + "/" + ldaptest.BaseDN, "STARTTLS"}} {
			cfg := NewConfig(Apache24)
			cfg.Apply("AuthLDAPURL", args, DirectiveOptions{})
			if res, _, _, err := c.CheckPassword(ctx, cfg, "bob", "bob-pw"); res != AuthGeneralError || err == nil || !strings.Contains(err.Error(), f) {
				t.Errorf("%s, %q: %v %v", f, args, res, err)
			}
		}
		c.Close()
	}
}

// TestLDAPSHandshakeBound: an LDAPS server that accepts the connection
// and never answers the handshake costs LDAPConnectionTimeout, not
// LDAPTimeout (internal/differential's TestLDAPTimeoutSettings: Apache
// waits without bound).
func TestLDAPSHandshakeBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	o := DefaultOptions()
	o.ConnectionTimeout, o.Timeout, o.Retries = 300*time.Millisecond, 30*time.Second, 0
	c, _ := NewClient(&o)
	cfg := NewConfig(Apache24)
	cfg.Apply("AuthLDAPURL", []string{"ldaps://" + ln.Addr().String() + "/dc=x"}, DirectiveOptions{})
	start := time.Now()
	res, _, _, _ := c.CheckPassword(context.Background(), cfg, "alice", "pw")
	if took := time.Since(start); res != AuthGeneralError || took < 300*time.Millisecond || took > 3*time.Second {
		t.Errorf("%v after %v, want a general error after about 300ms", res, took)
	}
}

// TestClosedClientPoolsNothing: after Close a connection given back is
// closed, not pooled.
func TestClosedClientPoolsNothing(t *testing.T) {
	srv := ldaptest.Start(t)
	c, _ := NewClient(nil)
	cfg := newTestConfig(t, srv, srv.URL+"/"+ldaptest.BaseDN)
	ctx := context.Background()
	c.CheckPassword(ctx, cfg, "alice", "alice-pw")
	if n := c.idleConns(); n != 1 {
		t.Fatalf("%d idle connections before Close", n)
	}
	c.Close()
	if res, _, _, err := c.CheckPassword(ctx, cfg, "bob", "bob-pw"); res != AuthGranted {
		t.Fatalf("after Close: %v %v", res, err)
	}
	if n := c.idleConns(); n != 0 {
		t.Errorf("%d idle connections after Close", n)
	}
}

func (c *Client) idleConns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.pools {
		p.mu.Lock()
		n += len(p.idle)
		p.mu.Unlock()
	}
	return n
}
