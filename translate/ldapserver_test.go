package translate

import (
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/proxy/ldapauth"
)

// TestLDAPServerRefusals: mod_ldap's directives are checked as their
// handlers in util_ldap.c check them, refused with Apache's message at
// the line (the wrong values, GLOBAL_ONLY in a <VirtualHost>), and
// refused as orderly's own where orderly cannot use what Apache would
// (a certificate type OpenLDAP does not take, a client certificate).
// TestLDAPServerDirectivesMatchApache24 holds the Apache messages to
// apache2 -t.
func TestLDAPServerRefusals(t *testing.T) {
	for _, tc := range []struct {
		text string
		sem  Semantics
		want string // "" loads; else the message at line 1 (or the line given as "N: ...")
		own  bool
	}{
		{text: "LDAPCacheEntries 0\nLDAPCacheTTL 5\nLDAPOpCacheEntries -1\nLDAPOpCacheTTL 0\n"},
		{text: "LDAPCacheEntries lots\nLDAPCacheTTL 5m\n"}, // atol: 0 and 5
		{text: "LDAPTimeout 5\nLDAPConnectionTimeout 2\nLDAPRetries 0\nLDAPRetryDelay 500ms\nLDAPConnectionPoolTTL 1mi\n"},
		{text: "LDAPTimeout 0\n"},
		{text: "LDAPTimeout five\n", want: "Timeout not numerical"},
		{text: "LDAPTimeout \"5 \"\n", want: "Timeout not numerical"},
		{text: "LDAPTimeout \" \"\n", want: "Timeout not numerical"},
		{text: "LDAPTimeout -1\n", want: "Timeout must be non-negative"},
		{text: "LDAPRetries -1\n", want: "LDAPRetries must be >= 0"},
		{text: "LDAPRetries x\n"}, // atoi: 0
		{text: "LDAPRetryDelay -1\n", want: "LDAPRetryDelay has wrong format"},
		{text: "LDAPRetryDelay 5 \n"},
		{text: "LDAPRetryDelay 5x\n", want: "LDAPRetryDelay has wrong format"},
		{text: "LDAPRetryDelay 5m\n", want: "LDAPRetryDelay has wrong format"},
		{text: "LDAPConnectionPoolTTL -5\n"},
		{text: "LDAPConnectionPoolTTL -x\n"},
		{text: "LDAPConnectionPoolTTL soon\n"}, // ap_timeout_parameter_parse: 0, and "s" for seconds
		{text: "LDAPConnectionPoolTTL later\n", want: "LDAPConnectionPoolTTL has wrong format"},
		{text: "LDAPTrustedMode SSL\n"},
		{text: "LDAPTrustedMode tls\n"},
		{text: "LDAPTrustedMode ldaps\n", want: "Invalid LDAPTrustedMode setting: must be one of NONE, SSL, or TLS/STARTTLS"},
		{text: "LDAPVerifyServerCert maybe\n", want: "LDAPVerifyServerCert must be On or Off"},
		{text: "LDAPTrustedGlobalCert CA_BASE64 /etc/ssl/ca.pem\n"},
		{text: "LDAPTrustedGlobalCert ca_base64 /etc/ssl/ca.pem secret\n"},
		{text: "LDAPTrustedGlobalCert PEM /etc/ssl/ca.pem\n", want: "The certificate type PEM is not recognised. It should be one of CA_DER, CA_BASE64, CA_CERT7_DB, CA_SECMOD, CERT_DER, CERT_BASE64, CERT_KEY3_DB, CERT_NICKNAME, KEY_DER, KEY_BASE64"},
		// 2.2 reads the type first too (its help text says otherwise).
		{text: "LDAPTrustedGlobalCert /etc/ssl/ca.pem CA_BASE64\n", sem: Legacy22, want: "The certificate type /etc/ssl/ca.pem is not recognised. It should be one of CA_DER, CA_BASE64, CA_CERT7_DB, CA_SECMOD, CERT_DER, CERT_BASE64, CERT_KEY3_DB, CERT_NICKNAME, KEY_DER, KEY_BASE64"},
		{text: "LDAPTrustedGlobalCert CA_BASE64 /etc/ssl/ca.pem\n", sem: Legacy22},
		{text: "LDAPTrustedGlobalCert CA_DER /etc/ssl/ca.der\n", want: "LDAPTrustedGlobalCert CA_DER cannot be evaluated by orderly", own: true},
		{text: "LDAPTrustedGlobalCert CA_CERT7_DB /etc/certs\n", want: "LDAPTrustedGlobalCert CA_CERT7_DB cannot be evaluated by orderly", own: true},
		{text: "LDAPTrustedGlobalCert CERT_BASE64 /etc/c.pem\n", want: "LDAPTrustedGlobalCert CERT_BASE64 cannot be evaluated by orderly: a client certificate", own: true},
		{text: "LDAPTrustedGlobalCert CERT_NICKNAME me\n", want: "LDAPTrustedGlobalCert CERT_NICKNAME cannot be evaluated by orderly", own: true},
		// Under 2.2 semantics, which evaluate LDAP too, the same refusals.
		{text: "LDAPTrustedGlobalCert CA_DER /etc/ssl/ca.der\n", sem: Legacy22, want: "LDAPTrustedGlobalCert CA_DER cannot be evaluated by orderly", own: true},
		{text: "LDAPTrustedGlobalCert CERT_NICKNAME me\n", sem: Legacy22, want: "LDAPTrustedGlobalCert CERT_NICKNAME cannot be evaluated by orderly", own: true},
		{text: "<Directory /srv/www>\nLDAPTrustedClientCert CERT_BASE64 /etc/c.pem\n</Directory>\n", want: "2: LDAPTrustedClientCert cannot be evaluated by orderly", own: true},
		{text: "<Directory /srv/www>\nLDAPTrustedClientCert CA_SECMOD /etc/c\n</Directory>\n", want: "2: The certificate type \"CA_SECMOD\" is only valid within a LDAPTrustedGlobalCert directive. Only CA_DER, CA_BASE64, CERT_DER, CERT_BASE64, CERT_NICKNAME, KEY_DER, and KEY_BASE64 may be used."},
		{text: "<Directory /srv/www>\nLDAPTrustedClientCert PEM /etc/c\n</Directory>\n", want: "2: The certificate type \"PEM\" is not recognised. It should be one of CA_DER, CA_BASE64, CERT_DER, CERT_BASE64, CERT_NICKNAME, CERT_PFX, KEY_DER, KEY_BASE64, KEY_PFX"},
		{text: "LDAPTrustedClientCert CA_BASE64 /etc/c.pem\n", sem: Legacy22, want: "The certificate type \"CA_BASE64\" is only valid within a LDAPTrustedGlobalCert directive. Only CERT_DER, CERT_BASE64, CERT_NICKNAME, KEY_DER, and KEY_BASE64 may be used."},
		{text: "LDAPTrustedClientCert CERT_BASE64 /etc/c.pem\n", sem: Legacy22},
		{text: "<Directory /srv/www>\nLDAPReferrals maybe\n</Directory>\n", want: "2: LDAPReferrals must be 'on', 'off', or 'default'"},
		{text: "<Directory /srv/www>\nLDAPReferrals Default\nLDAPReferralHopLimit 5\n</Directory>\n"},
		{text: "<Directory /srv/www>\nLDAPReferralHopLimit 0\n</Directory>\n", want: "2: LDAPReferralHopLimit must be greater than zero (Use 'LDAPReferrals Off' to disable referral chasing)"},
		{text: "LDAPSharedCacheSize 0\nLDAPSharedCacheFile /run/ldap.cache\nLDAPLibraryDebug 7\n"},
		{text: "<VirtualHost *:80>\nLDAPTimeout 5\n</VirtualHost>\n", want: "2: LDAPTimeout cannot occur within <VirtualHost> section"},
		{text: "<VirtualHost *:80>\nLDAPCacheTTL 5\n</VirtualHost>\n", want: "2: LDAPCacheTTL cannot occur within <VirtualHost> section"},
		{text: "<VirtualHost *:80>\nLDAPTrustedGlobalCert CA_BASE64 /etc/ssl/ca.pem\n</VirtualHost>\n", want: "2: LDAPTrustedGlobalCert cannot occur within <VirtualHost> section"},
		{text: "<VirtualHost *:80>\nLDAPTrustedMode STARTTLS\nLDAPConnectionPoolTTL 0\n</VirtualHost>\n"},
		{text: "<Directory /srv/www>\nLDAPTimeout 5\n</Directory>\n", want: "2: LDAPTimeout not allowed in <Directory> context"},
	} {
		sem := tc.sem
		if sem == "" {
			sem = Compat24
		}
		mods := fragmentModules(ldapModules...)
		if sem == Legacy22 {
			mods = map[string]bool{"ldap_module": true, "authnz_ldap_module": true, "auth_basic_module": true, "authn_file_module": true, "authz_user_module": true}
		}
		_, err := buildText(t, tc.text, Options{Semantics: sem, Modules: mods})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s %q: %v", sem, tc.text, err)
			}
			continue
		}
		line, want := "1", tc.want
		if l, rest, ok := strings.Cut(tc.want, ": "); ok && len(l) == 1 {
			line, want = l, rest
		}
		if err == nil || !strings.Contains(err.Error(), "legacy.conf:"+line+": "+want) {
			t.Errorf("%s %q: got %v, want legacy.conf:%s: %s", sem, tc.text, err, line, want)
			continue
		}
		if own := strings.Contains(err.Error(), "refusing to load"); own != tc.own {
			t.Errorf("%s %q: orderly's own refusal %v, want %v: %v", sem, tc.text, own, tc.own, err)
		}
	}
}

// TestLDAPServerModel: the main server's lines, made relative to
// ServerRoot where they name a file, and a virtual host's after them
// (util_ldap_merge_config): the host's LDAPTrustedMode and
// LDAPConnectionPoolTTL, the main server's everything else.
func TestLDAPServerModel(t *testing.T) {
	text := `ServerRoot /etc/apache2
LDAPCacheTTL 30
LDAPOpCacheEntries 0
LDAPTrustedGlobalCert CA_BASE64 ssl/a.pem
LDAPTrustedGlobalCert CA_BASE64 /etc/ssl/b.pem
LDAPTrustedMode SSL
LDAPTimeout 7
LDAPConnectionPoolTTL 30
<VirtualHost *:80>
ServerName one.example
LDAPTrustedMode NONE
</VirtualHost>
<VirtualHost *:80>
ServerName two.example
LDAPConnectionPoolTTL -1
</VirtualHost>
<VirtualHost *:80>
ServerName three.example
</VirtualHost>
`
	cfg, err := buildText(t, text, Options{Semantics: Compat24, Modules: fragmentModules(ldapModules...)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LDAPServer == nil || len(cfg.LDAPServer.Lines) != 7 || cfg.LDAPServer.Lines[2].Args[1] != "/etc/apache2/ssl/a.pem" || cfg.LDAPServer.Lines[2].Pos.Line != 4 {
		t.Fatalf("main server's lines %+v", cfg.LDAPServer)
	}
	main := cfg.LDAPServer.Config(ldapauth.Apache24)
	o := main.Options()
	if o.CacheTTL != 30*time.Second || o.OpCacheEntries != 0 || o.TrustedMode != ldapauth.ModeSSL || o.Timeout != 7*time.Second || o.ConnectionPoolTTL != 30*time.Second ||
		len(o.TrustedCAFiles) != 1 || o.TrustedCAFiles[0] != "/etc/ssl/b.pem" {
		t.Errorf("main server's options %+v", o)
	}
	if len(cfg.VHosts) != 3 {
		t.Fatalf("%d virtual hosts", len(cfg.VHosts))
	}
	for i, want := range []struct {
		mode ldapauth.Mode
		ttl  time.Duration
	}{{ldapauth.ModeNone, 30 * time.Second}, {ldapauth.ModeSSL, -1}, {ldapauth.ModeSSL, 30 * time.Second}} {
		o := cfg.VHosts[i].Config.LDAPServer.Config(ldapauth.Apache24).Options()
		if o.TrustedMode != want.mode || o.ConnectionPoolTTL != want.ttl || o.CacheTTL != 30*time.Second || o.Timeout != 7*time.Second || len(o.TrustedCAFiles) != 1 {
			t.Errorf("virtual host %d: %+v, want mode %v pool TTL %v and the main server's rest", i, o, want.mode, want.ttl)
		}
	}
}
