package apacheconf

import "testing"

// What orderly shows of a directive never holds its credentials.
func TestRedacted(t *testing.T) {
	for _, tc := range []struct{ conf, want string }{
		{"AuthLDAPBindPassword s3cret\n", "AuthLDAPBindPassword [redacted]"},
		{"authldapbindpassword \"exec:/usr/local/bin/pw\"\n", "authldapbindpassword [redacted]"},
		{"AuthBasicFake demo demopass\n", "AuthBasicFake [redacted]"},
		{"DBDParams \"host=db user=app pass=hunter2\"\n", "DBDParams [redacted]"},
		{"SessionCryptoPassphrase k3y\n", "SessionCryptoPassphrase [redacted]"},
		{"ProxyPass /app http://app:pw@10.0.0.1:8080/app\n", "ProxyPass /app http://app:[redacted]@10.0.0.1:8080/app"},
		{"ProxyPass /a http://u:p@h/ /b https://v:q@k\n", "ProxyPass /a http://u:[redacted]@h/ /b https://v:[redacted]@k"},
		{"ProxyPass /app http://app@10.0.0.1/\n", "ProxyPass /app http://app@10.0.0.1/"},
		{"Redirect /x http://example.com/a@b:c\n", "Redirect /x http://example.com/a@b:c"},
		{"AuthLDAPURL \"ldap://ldap.example.com/dc=example,dc=com?uid\"\n", "AuthLDAPURL \"ldap://ldap.example.com/dc=example,dc=com?uid\""},
		{"Require user alice\n", "Require user alice"},
	} {
		ds, err := Parse("t.conf", []byte(tc.conf))
		if err != nil || len(ds) != 1 {
			t.Fatalf("%q: %v", tc.conf, err)
		}
		if got := ds[0].Redacted(); got != tc.want {
			t.Errorf("%q: Redacted() = %q, want %q", tc.conf, got, tc.want)
		}
	}
}
