package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// orderly check: exit 0 when serve would start and every .htaccess file
// below the document roots loads; 2 with every refusal as file:line:
// message otherwise.
func TestCheck(t *testing.T) {
	legacy := "<Directory @DIR@/docroot>\nAllowOverride All\n</Directory>\n"
	tests := []struct {
		name  string
		conf  string
		files map[string]string
		code  int
		want  []string
	}{
		{"clean", legacy, map[string]string{"docroot/a/.htaccess": "Order deny,allow\nDeny from all\n"}, 0,
			[]string{"serve would start"}},
		{"misspelt in the configuration", legacy + "<Location /x>\nDney from all\n</Location>\n", nil, 2,
			[]string{"legacy.conf:5: Invalid command 'Dney', perhaps misspelled", "serve would refuse to start"}},
		{"misspelt in an .htaccess file", legacy, map[string]string{"docroot/a/b/.htaccess": "Order deny,allow\nDney from all\n"}, 2,
			[]string{"docroot/a/b/.htaccess:2: Invalid command 'Dney'", "Apache and orderly answer 500", "1 refusal(s)"}},
		{"not allowed by AllowOverride", legacy + "<Directory @DIR@/docroot/ro>\nAllowOverride AuthConfig\n</Directory>\n",
			map[string]string{"docroot/ro/.htaccess": "Deny from all\n"}, 2,
			[]string{"docroot/ro/.htaccess:1: deny not allowed here"}},
		{"refused, not evaluated", legacy, map[string]string{"docroot/up/.htaccess": "DeflateInflateLimitRequestBody 1024\n"}, 2,
			[]string{"docroot/up/.htaccess:1: DeflateInflateLimitRequestBody: orderly does not evaluate it", "orderly answers (it does not evaluate this"}},
	}
	for _, tt := range tests {
		files := map[string]string{"orderly.hcl": goodHCL, "legacy.conf": tt.conf, "docroot/index.html": "x"}
		for k, v := range tt.files {
			files[k] = v
		}
		dir := writeFiles(t, files)
		var out, errb bytes.Buffer
		code := run([]string{"check", "-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb)
		all := out.String() + errb.String()
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d\n%s", tt.name, code, tt.code, all)
		}
		for _, w := range tt.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, all)
			}
		}
	}
}

// An IP-based <VirtualHost> is chosen by the address a request reaches
// the legacy server on: without legacy.address orderly would decide with
// the main server's rules, so it refuses to start.
func TestIPVirtualHostNeedsAddress(t *testing.T) {
	conf := "<VirtualHost 127.0.0.1:80>\nServerName ip.test\n<Location />\nOrder allow,deny\nDeny from all\n</Location>\n</VirtualHost>\n"
	for _, tt := range []struct {
		extra string
		code  int
		want  string
	}{
		{"", 2, "legacy.conf:1: <VirtualHost 127.0.0.1> is chosen by the address a request reaches the legacy server on: set legacy.address"},
		{"  address = \"127.0.0.1:80\"\n", 0, "serve would start"},
	} {
		hcl := strings.Replace(goodHCL, "  semantics     = \"2.4-compat\"\n", "  semantics     = \"2.4-compat\"\n"+tt.extra, 1)
		dir := writeFiles(t, map[string]string{"orderly.hcl": hcl, "legacy.conf": conf, "docroot/index.html": "x"})
		var out, errb bytes.Buffer
		code := run([]string{"check", "-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb)
		if code != tt.code || !strings.Contains(out.String()+errb.String(), tt.want) {
			t.Errorf("%q: exit %d\n%s%s", tt.extra, code, out.String(), errb.String())
		}
	}
}

// check warns, with file:line, about each log set to "stderr", where
// orderly's own logs go, and still exits 0.
func TestCheckLogOnStderr(t *testing.T) {
	tests := []struct {
		extra string
		want  []string // warnings
	}{
		{"", nil},
		{"error_log = \"stdout\"\naccess_log = \"access.log\"\n", nil},
		{"error_log = \"stderr\"\n", []string{`orderly.hcl:13: error_log = "stderr" shares standard error with orderly's own logs`}},
		{"access_log = \"stderr\"\nshadow_log = \"stderr\"\n", []string{"orderly.hcl:13: access_log", "orderly.hcl:14: shadow_log"}},
	}
	for _, tt := range tests {
		dir := writeFiles(t, map[string]string{"orderly.hcl": goodHCL + tt.extra, "legacy.conf": "<Directory /x>\nDeny from all\n</Directory>\n", "docroot/index.html": "x"})
		var out, errb bytes.Buffer
		if code := run([]string{"check", "-config", filepath.Join(dir, "orderly.hcl")}, &out, &errb); code != 0 {
			t.Errorf("%q: exit %d, want 0\n%s", tt.extra, code, errb.String())
		}
		if got := strings.Count(errb.String(), "warning: "); got != len(tt.want) {
			t.Errorf("%q: %d warnings, want %d:\n%s", tt.extra, got, len(tt.want), errb.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(errb.String(), "warning: "+dir+"/"+w) {
				t.Errorf("%q: stderr lacks %q:\n%s", tt.extra, w, errb.String())
			}
		}
	}
}
