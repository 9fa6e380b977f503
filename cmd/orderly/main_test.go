package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "@DIR@", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodHCL = `listen = "127.0.0.1:0"
backend "httpd" {
  url = "http://127.0.0.1:1"
}
legacy {
  files         = ["legacy.conf"]
  document_root = "docroot"
  semantics     = "2.4-compat"
}
client_ip {
  trusted_proxies = ["127.0.0.1/32"]
}
`

// Bad input is reported as file:line[:col]: message with exit code 2.
func TestConfigErrors(t *testing.T) {
	legacy := "<Directory @DIR@/docroot/admin>\nOrder deny,allow\nDeny from all\nAllow from 127.0.0.1\n</Directory>\n"
	tests := []struct {
		name string
		hcl  string
		conf string
		want string
	}{
		{"unknown mode", goodHCL + "mode = \"dry-run\"\n", legacy, "orderly.hcl:13:1: Unsupported mode"},
		{"unknown attribute", goodHCL + "bogus = 1\n", legacy, "orderly.hcl:13:1: Unsupported argument"},
		{"bad backend", strings.Replace(goodHCL, "http://127.0.0.1:1", "ftp://x", 1), legacy, "orderly.hcl:3:3: Invalid backend URL"},
		{"unknown semantics", strings.Replace(goodHCL, `"2.4-compat"`, `"2.3"`, 1), legacy, "orderly.hcl:8:3: Unknown semantics"},
		{"2.4 directive under 2.2", strings.Replace(goodHCL, `"2.4-compat"`, `"2.2"`, 1), "<Directory /x>\nRequire all granted\n</Directory>\n", "legacy.conf:2: Require all is an Apache 2.4 form, unknown to 2.2"},
		{"syntax", "listen = \n", legacy, "orderly.hcl:1"},
		{"legacy error", goodHCL, strings.Replace(legacy, "Order deny,allow", "Order deny,alow", 1), "legacy.conf:2: unknown order"},
		{"legacy unclosed", goodHCL, "<Directory /x>\nDeny from all\n", "legacy.conf:1: <Directory> was not closed."},
		{"admin off loopback without a token", goodHCL + "admin {\n  listen = \"0.0.0.0:9101\"\n}\n", legacy, "orderly.hcl:14:3: Admin listener needs a token"},
		{"admin token too short", goodHCL + "admin {\n  listen = \"0.0.0.0:9101\"\n  token_file = \"legacy.conf\"\n}\n", "x", "orderly.hcl:15:3: Token too short"},
		{"admin token unreadable", goodHCL + "admin {\n  listen = \"127.0.0.1:9101\"\n  token_file = \"nope\"\n}\n", legacy, "orderly.hcl:15:3: Unreadable token file"},
		{"bad rule header", goodHCL + "rule_header = \"X Rule\"\n", legacy, "orderly.hcl:13:1: Invalid header name"},
		{"scope with unknown policy", goodHCL + "scope \"api\" {\n  path = \"/api\"\n  enforce = \"new\"\n}\n", legacy, "orderly.hcl:15:3: Unknown policy"},
		{"scope naming native without a native block", goodHCL + "scope \"api\" {\n  path = \"/api\"\n  enforce = \"native\"\n}\n", legacy, "orderly.hcl:15:3: No native policy"},
		{"scope covering nothing", goodHCL + "scope \"api\" {\n  mode = \"shadow\"\n}\n", legacy, "orderly.hcl:13:1: Scope covers nothing"},
		{"scope path not normalised", goodHCL + "scope \"api\" {\n  path = \"/a/../api\"\n}\n", legacy, "orderly.hcl:14:3: Invalid scope path"},
		{"scope percent without shadow", goodHCL + "scope \"api\" {\n  path = \"/api\"\n  enforce_percent = 10\n}\n", legacy, "orderly.hcl:15:3: enforce_percent without shadow"},
		{"scope percent out of range", goodHCL + "scope \"api\" {\n  path = \"/api\"\n  shadow = \"legacy\"\n  enforce = \"legacy\"\n  enforce_percent = 101\n}\n", legacy, "orderly.hcl:15:3: Shadow is the enforced policy"},
		{"scope mode", goodHCL + "scope \"api\" {\n  host = \"api.example\"\n  mode = \"loud\"\n}\n", legacy, "orderly.hcl:15:3: Unsupported mode"},
		{"duplicate scope", goodHCL + "scope \"api\" {\n  path = \"/api\"\n}\nscope \"api\" {\n  path = \"/v2\"\n}\n", legacy, "orderly.hcl:16:1: Duplicate scope"},
		{"default scope name", goodHCL + "scope \"default\" {\n  path = \"/api\"\n}\n", legacy, "orderly.hcl:13:1: Invalid scope name"},
		{"bad demoted rule ID", strings.Replace(goodHCL, `semantics     = "2.4-compat"`, "semantics = \"2.4-compat\"\n  demote = [\"Deny from all\"]", 1), legacy, "orderly.hcl:9:3: Invalid rule ID"},
		{"native file error", goodHCL + "native {\n  files = [\"native.conf\"]\n}\n", legacy, "native.conf"},
		{"backend url and urls", strings.Replace(goodHCL, `url = "http://127.0.0.1:1"`, "url = \"http://127.0.0.1:1\"\n  urls = [\"http://127.0.0.1:2\"]", 1), legacy, "orderly.hcl:4:3: Both url and urls"},
		{"backend without url", strings.Replace(goodHCL, `url = "http://127.0.0.1:1"`, "", 1), legacy, "orderly.hcl:2:1: Missing backend URL"},
		{"bad backend in urls", strings.Replace(goodHCL, `url = "http://127.0.0.1:1"`, "urls = [\"http://127.0.0.1:2\", \"gopher://x\"]", 1), legacy, "orderly.hcl:3:3: Invalid backend URL"},
		{"bad health check interval", strings.Replace(goodHCL, `url = "http://127.0.0.1:1"`, "url = \"http://127.0.0.1:1\"\n  health_check {\n    interval = \"often\"\n  }", 1), legacy, "orderly.hcl:5:5: Invalid duration"},
		{"bad limit", goodHCL + "limits {\n  max_header_bytes = 10\n}\n", legacy, "orderly.hcl:14:3: Invalid limit"},
		{"no header timeout", goodHCL + "limits {\n  read_header_timeout = \"0s\"\n}\n", legacy, "orderly.hcl:14:3: Invalid limit"},
		{"bad grace", goodHCL + "shutdown_grace = \"soon\"\n", legacy, "orderly.hcl:13:1: Invalid duration"},
		{"missing legacy file", strings.Replace(goodHCL, `["legacy.conf"]`, `["nope.conf"]`, 1), legacy, "nope.conf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"orderly.hcl": tt.hcl, "legacy.conf": tt.conf, "docroot/index.html": "x"})
			var out, errb bytes.Buffer
			code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "10.1.2.3", "/"}, &out, &errb)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errb.String())
			}
			got := strings.ReplaceAll(errb.String(), dir+"/", "")
			if !strings.Contains(got, tt.want) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", got, tt.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	legacy := "<Directory @DIR@/docroot/admin>\nOrder deny,allow\nDeny from all\nAllow from 127.0.0.1 10.0.0.0/8\n</Directory>\n"
	dir := writeFiles(t, map[string]string{"orderly.hcl": goodHCL, "legacy.conf": legacy, "docroot/admin/index.html": "x"})
	for _, tt := range []struct {
		ip, want string
	}{
		{"10.1.2.3", "decision: ALLOW"},
		{"8.8.8.8", "decision: DENY 403"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", tt.ip, "http://example.com/admin/"}, &out, &errb)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		got := out.String()
		if !strings.Contains(got, tt.want) || !strings.Contains(got, "legacy.conf:1") {
			t.Errorf("explain %s:\n%s", tt.ip, got)
		}
	}
	var out, errb bytes.Buffer
	run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "8.8.8.8", "/admin/"}, &out, &errb)
	if !strings.Contains(out.String(), "AH01797: client denied by server configuration: "+dir+"/docroot/admin/") {
		t.Errorf("explain does not show the log line:\n%s", out.String())
	}
}

func TestVersionAndUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "orderly ") {
		t.Errorf("version: %d %q", code, out.String())
	}
	if code := run([]string{"frobnicate"}, &out, &errb); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if code := run(nil, &out, &errb); code != 2 {
		t.Errorf("no command: exit %d", code)
	}
}

func TestUnreadableDocumentRoot(t *testing.T) {
	dir := writeFiles(t, map[string]string{"orderly.hcl": strings.Replace(goodHCL, `"docroot"`, `"nowhere"`, 1), "legacy.conf": "<Directory /x>\nDeny from all\n</Directory>\n"})
	var out, errb bytes.Buffer
	if code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "1.2.3.4", "/"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "document root") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// legacy.path_map: the configuration names /srv/legacy/www; orderly reads
// it where it is mounted here.
func TestPathMap(t *testing.T) {
	legacy := "<Directory /srv/legacy/www/admin>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n</Directory>\n"
	hcl := strings.Replace(goodHCL, `document_root = "docroot"`, `document_root = "/srv/legacy/www"
  path_map      = { "/srv/legacy/www" = "mnt/www" }`, 1)
	dir := writeFiles(t, map[string]string{"orderly.hcl": hcl, "legacy.conf": legacy, "mnt/www/admin/index.html": "x"})
	for _, tt := range []struct{ ip, want string }{{"10.1.2.3", "decision: ALLOW"}, {"8.8.8.8", "decision: DENY 403"}} {
		var out, errb bytes.Buffer
		if code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", tt.ip, "/admin/"}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		if !strings.Contains(out.String(), tt.want) || !strings.Contains(out.String(), "filename: /srv/legacy/www/admin/") {
			t.Errorf("%s:\n%s", tt.ip, out.String())
		}
	}
}

// Every admin endpoint is behind the bearer token when one is set.
func TestRequireToken(t *testing.T) {
	h := requireToken("0123456789abcdef", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	for _, tt := range []struct {
		auth string
		want int
	}{
		{"", 401}, {"Bearer wrong", 401}, {"Bearer 0123456789abcdef", 200}, {"bearer 0123456789abcdef", 200}, {"Basic 0123456789abcdef", 401}, {"Bearer 0123456789abcdef ", 401},
	} {
		r := httptest.NewRequest("POST", "/-/reload", nil)
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("Authorization %q: %d, want %d", tt.auth, w.Code, tt.want)
		}
	}
	if requireToken("", http.NotFoundHandler()) == nil {
		t.Error("no handler without a token")
	}
}

// The example configuration in deploy/ is valid HCL that orderly accepts
// (its legacy files are a real server's, not this machine's).
func TestExampleConfig(t *testing.T) {
	rc, _, diags := loadConfig("../../deploy/orderly.hcl.example")
	if diags.HasErrors() {
		t.Fatalf("deploy/orderly.hcl.example: %v", diags)
	}
	if len(rc.Backends) != 1 || rc.Health.Path != "/" || rc.Limits.MaxPerClient != 256 {
		t.Errorf("example read as %+v", rc)
	}
}

// legacy.version must be a release of the semantics' version.
func TestLegacyVersion(t *testing.T) {
	for _, tt := range []struct {
		version string
		ok      bool
	}{{"2.2.22", false}, {"2.4.1", true}, {"2.4", false}, {"3.0.1", false}} {
		hcl := strings.Replace(goodHCL, "semantics     = \"2.4-compat\"", "semantics     = \"2.4-compat\"\n  version       = \""+tt.version+"\"", 1)
		dir := writeFiles(t, map[string]string{"orderly.hcl": hcl, "legacy.conf": "<IfVersion >= 2.4.5>\nError \"too new\"\n</IfVersion>\n", "docroot/index.html": "x"})
		var out, errb bytes.Buffer
		code := run([]string{"check", "-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb)
		switch {
		case !tt.ok && (code != 2 || !strings.Contains(errb.String(), "Invalid legacy version")):
			t.Errorf("version %q: exit %d, %s", tt.version, code, errb.String())
		case tt.ok && code != 0:
			t.Errorf("version %q: exit %d, %s", tt.version, code, errb.String())
		}
	}
	// The default 2.4 version is past 2.4.5: the Error directive stops the load.
	dir := writeFiles(t, map[string]string{"orderly.hcl": goodHCL, "legacy.conf": "<IfVersion >= 2.4.5>\nError \"too new\"\n</IfVersion>\n", "docroot/index.html": "x"})
	var out, errb bytes.Buffer
	if code := run([]string{"check", "-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "legacy.conf:2: too new") {
		t.Errorf("default version: exit %d, %s", code, errb.String())
	}
}

// A scope's host is compared with the request's Host as Apache normalises
// it: lower case, no final dot, an IPv6 literal without its brackets.
func TestScopeHost(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"Shop.Example.", "shop.example", true},
		{"[2001:DB8::1]", "2001:db8::1", true},
		{"[::1]", "::1", true},
		{"[::1]:80", "", false},
		{"[12345::]", "", false},
		{"[fe80::1%eth0]", "", false},
		{"shop.example:80", "", false},
		{"2001:db8::1", "", false},
		{"http://shop.example", "", false},
		{"", "", false},
	} {
		got, ok := scopeHost(c.in)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("scopeHost(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
