package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The tls block's mistakes are reported as file:line:col: message with
// exit code 2, every one of them, before anything listens.
func TestTLSConfigErrors(t *testing.T) {
	legacy := "<Directory /x>\nDeny from all\n</Directory>\n"
	acme := func(body string) string {
		return "tls {\n  listen = \"127.0.0.1:8443\"\n  acme {\n    storage = \"certs\"\n" + body + "  }\n}\n"
	}
	tests := []struct {
		name string
		tls  string
		want []string
	}{
		{"cert_file without key_file", "tls {\n  listen = \"127.0.0.1:8443\"\n  cert_file = \"x.pem\"\n}\n",
			[]string{"orderly.hcl:15:3: Missing key_file"}},
		{"key_file without cert_file", "tls {\n  listen = \"127.0.0.1:8443\"\n  key_file = \"x.key\"\n}\n",
			[]string{"orderly.hcl:15:3: Missing cert_file"}},
		{"unreadable certificate", "tls {\n  listen = \"127.0.0.1:8443\"\n  cert_file = \"x.pem\"\n  key_file = \"x.key\"\n}\n",
			[]string{"orderly.hcl:15:3: Invalid certificate: " + "@DIR@/x.pem, @DIR@/x.key: open @DIR@/x.pem: no such file or directory."}},
		{"no certificate source", "tls {\n  listen = \"127.0.0.1:8443\"\n}\n",
			[]string{"orderly.hcl:13:1: No certificate"}},
		{"listen not host:port", "tls {\n  listen = \"8443\"\n  cert_file = \"legacy.conf\"\n  key_file = \"legacy.conf\"\n}\n",
			[]string{"orderly.hcl:14:3: Invalid listen address", "orderly.hcl:15:3: Invalid certificate"}},
		{"listen is the plain one", "tls {\n  listen = \"127.0.0.1:0\"\n  acme {\n    storage = \"c\"\n    hosts = [\"a.test\"]\n  }\n}\n",
			[]string{"orderly.hcl:14:3: Invalid listen address: tls.listen \"127.0.0.1:0\" is the plain listener's address too."}},
		{"unknown argument", "tls {\n  listen = \"127.0.0.1:8443\"\n  http2 = true\n}\n",
			[]string{"orderly.hcl:15:3: Unsupported argument"}},
		{"acme without storage", "tls {\n  listen = \"127.0.0.1:8443\"\n  acme {\n    hosts = [\"a.test\"]\n  }\n}\n",
			[]string{"orderly.hcl:15:8: Missing required argument"}},
		{"unknown challenge", acme("    hosts = [\"a.test\"]\n    challenges = [\"http-01\", \"dns-01\"]\n"),
			[]string{`orderly.hcl:18:5: Unknown challenge: challenge "dns-01"`}},
		{"no challenge", acme("    hosts = [\"a.test\"]\n    challenges = []\n"),
			[]string{"orderly.hcl:18:5: No challenge"}},
		{"several at once", acme("    directory = \"http://127.0.0.1:14000/dir\"\n    email = \"not an address\"\n    hosts = [\"*.example.com\", \"bad_name.test\"]\n    renew_interval = \"soon\"\n    renewal_window_ratio = 1.5\n    ca_root = \"legacy.conf\"\n"),
			[]string{
				"orderly.hcl:17:5: Invalid ACME directory",
				`orderly.hcl:18:5: Invalid email: "not an address"`,
				`orderly.hcl:19:5: Invalid host: "*.example.com": a wildcard certificate needs the DNS-01 challenge`,
				`orderly.hcl:19:5: Invalid host: "bad_name.test" is not a DNS name`,
				"orderly.hcl:20:5: Invalid renew_interval",
				"orderly.hcl:21:5: Invalid renewal_window_ratio",
				"orderly.hcl:22:5: Invalid ca_root: no PEM certificate in it.",
			}},
		{"nothing to manage", acme(""),
			[]string{"orderly.hcl:15:3: Nothing to manage"}},
		{"on_demand allows nothing", acme("    on_demand {\n      vhosts = false\n    }\n"),
			[]string{"orderly.hcl:17:5: on_demand allows nothing"}},
		{"on_demand bad name", acme("    on_demand {\n      allow = [\"ok.test\", \"*.*.test\", \"a..test\"]\n    }\n"),
			[]string{`orderly.hcl:18:7: Invalid on_demand name: "*.*.test"`, `orderly.hcl:18:7: Invalid on_demand name: "a..test"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"orderly.hcl": goodHCL + tt.tls, "legacy.conf": legacy, "docroot/index.html": "x"})
			var out, errb bytes.Buffer
			code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "10.1.2.3", "/"}, &out, &errb)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errb.String())
			}
			got := strings.ReplaceAll(errb.String(), dir+"/", "")
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "@DIR@/", ""); !strings.Contains(got, w) {
					t.Errorf("stderr:\n%s\nwant it to contain %q", got, w)
				}
			}
			if n := strings.Count(strings.TrimSpace(got), "\n") + 1; n != len(tt.want) {
				t.Errorf("%d diagnostics, want %d:\n%s", n, len(tt.want), got)
			}
		})
	}
}

// A good tls block is read into tlsRuntime with its defaults, paths
// relative to the configuration file.
func TestTLSConfig(t *testing.T) {
	dir := writeFiles(t, map[string]string{"orderly.hcl": goodHCL + `tls {
  listen        = "127.0.0.1:8443"
  redirect_http = true
  acme {
    directory = "https://127.0.0.1:14000/dir"
    email     = "ops@example.com"
    storage   = "certs"
    hosts     = ["WWW.Example.com.", "192.0.2.7"]
    on_demand {
      allow  = ["*.example.com"]
      vhosts = true
    }
    renew_interval = "1m"
  }
}
`, "legacy.conf": "", "docroot/index.html": "x"})
	rc, _, diags := loadConfig(filepath.Join(dir, "orderly.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := &tlsRuntime{
		Listen:       "127.0.0.1:8443",
		RedirectHTTP: true,
		ACME: &acmeRuntime{
			Directory:     "https://127.0.0.1:14000/dir",
			Email:         "ops@example.com",
			Storage:       filepath.Join(dir, "certs"),
			Hosts:         []string{"www.example.com", "192.0.2.7"},
			HTTP01:        true,
			TLSALPN01:     true,
			OnDemand:      true,
			Allow:         []string{"*.example.com"},
			VHosts:        true,
			RenewInterval: time.Minute,
		},
	}
	if !reflect.DeepEqual(rc.TLS, want) {
		t.Errorf("got  %+v %+v\nwant %+v %+v", rc.TLS, rc.TLS.ACME, want, want.ACME)
	}

	// A change to the tls block takes effect on restart only.
	other := *rc
	o := *rc.TLS
	o.RedirectHTTP = false
	other.TLS = &o
	if got := restartOnly(rc, &other); !reflect.DeepEqual(got, []string{"tls"}) {
		t.Errorf("restartOnly: %q, want [tls]", got)
	}
	if got := restartOnly(rc, rc); len(got) != 0 {
		t.Errorf("restartOnly on the same configuration: %q", got)
	}
}
