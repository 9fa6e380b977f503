package translate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestAuthnMatchesApache24 holds the authentication providers'
// directives to apache2 -t (every Debian module loaded): AuthBasicProvider
// names registered when the line is read (aliases defined before it,
// case-sensitively), <AuthnProviderAlias> and its errors, mod_authn_anon's
// and mod_authn_dbm's arguments, refused with Apache's message at the
// same line, and accepted where Apache accepts them.
func TestAuthnMatchesApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, _ := allModules(t, p)
	dir := func(body string) string { return "<Directory />\n" + body + "</Directory>\n" }
	alias := "<AuthnProviderAlias file staff>\nAuthUserFile /etc/staff\n</AuthnProviderAlias>\n"
	tests := []string{
		dir("AuthBasicProvider file dbm anon\n"),
		dir("AuthBasicProvider file\nAuthBasicProvider dbm\n"),
		dir("AuthBasicProvider nope\n"),
		dir("AuthBasicProvider File\n"),
		dir("AuthBasicProvider file ANON\n"),
		dir("AuthBasicProvider ldap\n"),
		alias + dir("AuthBasicProvider staff file\n"),
		alias + dir("AuthBasicProvider Staff\n"),
		dir("AuthBasicProvider staff\n") + alias,
		"<AuthnProviderAlias file>\n</AuthnProviderAlias>\n",
		"<AuthnProviderAlias>\n</AuthnProviderAlias>\n",
		"<AuthnProviderAlias file FILE>\n</AuthnProviderAlias>\n",
		"<AuthnProviderAlias file dbm>\n</AuthnProviderAlias>\n",
		"<AuthnProviderAlias nope x>\n</AuthnProviderAlias>\n",
		alias + alias,
		"<AuthnProviderAlias dbm d2>\nAuthDBMUserFile /etc/u.dbm\nAuthDBMType SDBM\n</AuthnProviderAlias>\n" + dir("AuthBasicProvider d2\n"),
		"<AuthnProviderAlias anon guests>\nAnonymous guest\nAnonymous_MustGiveEmail maybe\n</AuthnProviderAlias>\n",
		"<VirtualHost *:80>\n<AuthnProviderAlias file x>\n</AuthnProviderAlias>\n</VirtualHost>\n",
		"<Directory />\n<AuthnProviderAlias file x>\n</AuthnProviderAlias>\n</Directory>\n",
		dir("Anonymous guest \"\" other\n"),
		dir("Anonymous\n"),
		dir("Anonymous \"\"\n"),
		dir("Anonymous * guest\n"),
		dir("Anonymous_NoUserId maybe\n"),
		dir("Anonymous_VerifyEmail On\nAnonymous_LogEmail off\nAnonymous_MustGiveEmail OFF\n"),
		dir("AuthDBMUserFile\n"),
		dir("AuthDBMUserFile /a /b\n"),
		dir("AuthDBMType SDBM extra\n"),
		dir("AuthDBMUserFile /etc/u.dbm\nAuthDBMType GDBM\n"),
		dir("AuthDBMGroupFile /etc/g.dbm\nAuthzDBMType SDBM\n"),
		dir("AuthzDBMType\n"),
	}
	var cases []loadText
	for _, text := range tests {
		cases = append(cases, loadText{load, text})
	}
	refused, started := compareRefusals(t, p, cases, true)
	if refused < 10 || started < 8 {
		t.Errorf("%d refused by both, %d loaded by both: the cases no longer test both sides", refused, started)
	}
	t.Logf("%d configurations: %d refused by both with the same message, %d loaded by both", len(tests), refused, started)
}

// TestRuleTextsRedacted: what explain, the metrics and the admin page
// show of a rule never holds a URL's password.
func TestRuleTextsRedacted(t *testing.T) {
	cfg, err := buildText(t, "<Location /old>\nRedirect /old http://bob:urlPW@new.example/\n</Location>\nRedirect /x https://u:pw2@h.example/\n", Options{Semantics: Compat24, Modules: fragmentModules("alias_module")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range cfg.Rules {
		if strings.Contains(r.Text, "urlPW") || strings.Contains(r.Text, "pw2") {
			t.Errorf("rule %s shows a password: %q", r.ID, r.Text)
		}
		if strings.Contains(r.Text, "[redacted]") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d redacted rules, want 2 (the test no longer makes rules of the Redirect lines)", n)
	}
}

// TestLDAPDirectivesMatchApache24 holds mod_authnz_ldap's per-directory
// directives to apache2 -t (every Debian module loaded): bad values
// refused with Apache's message at the same line, good ones accepted,
// inside <AuthnProviderAlias ldap ...> too.
func TestLDAPDirectivesMatchApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, _ := allModules(t, p)
	dir := func(body string) string { return "<Directory />\n" + body + "</Directory>\n" }
	tests := []string{
		dir("AuthLDAPURL ldap://127.0.0.1:389/ou=people,dc=example,dc=org?uid?sub?(objectClass=*)\nAuthLDAPBindDN cn=search,dc=example,dc=org\nAuthLDAPBindPassword secret\n"),
		dir("AuthLDAPURL \"ldap://h1 h2:3389/dc=example,dc=org?cn\" NONE\n"),
		dir("AuthLDAPURL http://x/\n"),
		dir("AuthLDAPURL ldap://h/dc=x?uid?nope\n"),
		dir("AuthLDAPURL ldap://h/dc=x STARTTLS extra\n"),
		dir("AuthLDAPURL\n"),
		dir("AuthLDAPBindDN\n"),
		dir("AuthLDAPBindAuthoritative maybe\n"),
		dir("AuthLDAPBindAuthoritative off\nAuthLDAPRemoteUserIsDN on\nAuthLDAPCompareDNOnServer on\n"),
		dir("AuthLDAPGroupAttributeIsDN yes\n"),
		dir("AuthLDAPGroupAttribute memberUid\nAuthLDAPGroupAttribute member\n"),
		dir("AuthLDAPGroupAttribute a\nAuthLDAPGroupAttribute b\nAuthLDAPGroupAttribute c\nAuthLDAPGroupAttribute d\nAuthLDAPGroupAttribute e\nAuthLDAPGroupAttribute f\nAuthLDAPGroupAttribute g\nAuthLDAPGroupAttribute h\nAuthLDAPGroupAttribute i\nAuthLDAPGroupAttribute j\nAuthLDAPGroupAttribute k\n"),
		dir("AuthLDAPDereferenceAliases sometimes\n"),
		dir("AuthLDAPDereferenceAliases never\n"),
		dir("AuthLDAPMaxSubGroupDepth 3\nAuthLDAPSubGroupAttribute member\nAuthLDAPSubGroupClass groupOfNames\n"),
		dir("AuthLDAPMaxSubGroupDepth\n"),
		dir("AuthLDAPAuthorizePrefix AUTHZ_\nAuthLDAPRemoteUserAttribute mail\n"),
		dir("AuthLDAPInitialBindAsUser on\nAuthLDAPInitialBindPattern (.*) uid=$1,ou=people,dc=example,dc=org\n"),
		dir("AuthLDAPInitialBindPattern (.*)\n"),
		dir("AuthLDAPSearchAsUser on\nAuthLDAPCompareAsUser no\n"),
		"<AuthnProviderAlias ldap people>\nAuthLDAPURL ldap://h/dc=x?uid\n</AuthnProviderAlias>\n" + dir("AuthBasicProvider people file\n"),
		"<AuthnProviderAlias ldap people>\nAuthLDAPURL http://h/\n</AuthnProviderAlias>\n",
		dir("Require ldap-group \"cn=A B,ou=groups,dc=example,dc=org\"\n"),
		dir("Require ldap-search (uid=x)\nRequire not ldap-user bob\n"),
	}
	var cases []loadText
	for _, text := range tests {
		cases = append(cases, loadText{load, text})
	}
	refused, started := compareRefusals(t, p, cases, false)
	if refused < 8 || started < 10 {
		t.Errorf("%d refused by both, %d loaded by both: the cases no longer test both sides", refused, started)
	}
	t.Logf("%d configurations: %d refused by both with the same message, %d loaded by both", len(tests), refused, started)
}

// TestLDAPServerDirectivesMatchApache24 holds mod_ldap's directives to
// apache2 -t (every Debian module loaded): their values as
// util_ldap.c's handlers check them, the directives that may not be in a
// <VirtualHost> (GLOBAL_ONLY), refused with Apache's message at the same
// line and accepted where Apache accepts them; a certificate orderly
// cannot use as Apache does is orderly's own refusal of what Apache
// starts. (The walk checks that a certificate's file exists, where
// legacy.path_map says orderly reads it: walk's TestLDAPError, and
// internal/differential's TestLDAPCertFiles holds orderly check to
// apache2 -t there.)
func TestLDAPServerDirectivesMatchApache24(t *testing.T) {
	p := apachetest.Require(t)
	load, _ := allModules(t, p)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("not read when the configuration is\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := func(body string) string { return "<Directory />\n" + body + "</Directory>\n" }
	vhost := func(body string) string {
		return "<VirtualHost *:80>\nServerName v.example\n" + body + "</VirtualHost>\n"
	}
	tests := []string{
		"LDAPCacheEntries 0\nLDAPCacheTTL 5\nLDAPOpCacheEntries -1\nLDAPOpCacheTTL 0\n",
		"LDAPCacheEntries lots\nLDAPCacheTTL 5m\nLDAPOpCacheTTL x\n",
		"LDAPTimeout 5\nLDAPConnectionTimeout 2\nLDAPRetries 0\nLDAPRetryDelay 500ms\nLDAPConnectionPoolTTL 1mi\n",
		"LDAPTimeout 0\n", "LDAPTimeout \" 5\"\n", "LDAPTimeout five\n", "LDAPTimeout \"5 \"\n", "LDAPTimeout \" \"\n", "LDAPTimeout -1\n", "LDAPTimeout 5s\n",
		"LDAPRetries -1\n", "LDAPRetries x\n", "LDAPRetries 2x\n",
		"LDAPRetryDelay -1\n", "LDAPRetryDelay 5x\n", "LDAPRetryDelay 5m\n", "LDAPRetryDelay 2h\n", "LDAPRetryDelay 5sec\n", "LDAPRetryDelay x\n",
		"LDAPRetryDelay 99999999999999999999\n", "LDAPRetryDelay 9999999999999\n",
		"LDAPConnectionPoolTTL -5\n", "LDAPConnectionPoolTTL -x\n", "LDAPConnectionPoolTTL soon\n", "LDAPConnectionPoolTTL later\n", "LDAPConnectionPoolTTL 0\n",
		"LDAPTrustedMode SSL\n", "LDAPTrustedMode tls\n", "LDAPTrustedMode starttls\n", "LDAPTrustedMode ldaps\n",
		"LDAPVerifyServerCert off\n", "LDAPVerifyServerCert maybe\n",
		"LDAPTrustedGlobalCert CA_BASE64 " + ca + "\n",
		"LDAPTrustedGlobalCert ca_base64 " + ca + " secret\n",
		"LDAPTrustedGlobalCert PEM " + ca + "\n",
		"LDAPTrustedGlobalCert " + ca + " CA_BASE64\n",
		"LDAPTrustedGlobalCert CA_DER " + ca + "\n",
		"LDAPTrustedGlobalCert CA_SECMOD " + ca + "\n",
		"LDAPTrustedGlobalCert CERT_BASE64 " + ca + "\n",
		"LDAPTrustedGlobalCert CERT_NICKNAME me\n",
		dir("LDAPTrustedClientCert CERT_BASE64 " + ca + "\n"),
		dir("LDAPTrustedClientCert CA_SECMOD " + ca + "\n"),
		dir("LDAPTrustedClientCert PEM " + ca + "\n"),
		"LDAPTrustedClientCert CERT_BASE64 " + ca + "\n",
		dir("LDAPReferrals maybe\n"), dir("LDAPReferrals Default\nLDAPReferralHopLimit 5\n"), dir("LDAPReferralHopLimit 0\n"), dir("LDAPReferralHopLimit x\n"),
		"LDAPSharedCacheSize 0\nLDAPSharedCacheFile /run/ldap.cache\nLDAPLibraryDebug 7\n",
		vhost("LDAPTimeout 5\n"), vhost("LDAPCacheTTL 5\n"), vhost("LDAPRetries 1\n"), vhost("LDAPVerifyServerCert on\n"),
		vhost("LDAPTrustedGlobalCert CA_BASE64 " + ca + "\n"), vhost("LDAPSharedCacheSize 5\n"), vhost("LDAPLibraryDebug 1\n"),
		vhost("LDAPTrustedMode STARTTLS\nLDAPConnectionPoolTTL 0\n"),
		dir("LDAPTimeout 5\n"), dir("LDAPTrustedMode SSL\n"),
		"<Limit GET>\nLDAPTimeout 5\n</Limit>\n", "<Limit GET>\nLDAPTrustedMode SSL\n</Limit>\n", "<IfModule ldap_module>\nLDAPRetries 2\n</IfModule>\n",
	}
	var cases []loadText
	for _, text := range tests {
		cases = append(cases, loadText{load, text})
	}
	refused, started := compareRefusals(t, p, cases, true)
	if refused < 20 || started < 15 {
		t.Errorf("%d refused by both, %d loaded by both: the cases no longer test both sides", refused, started)
	}
	t.Logf("%d configurations: %d refused by both with the same message, %d loaded by both", len(tests), refused, started)
}
