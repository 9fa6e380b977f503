package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backend.guard_token_file: bad values are reported at file:line:col.
func TestGuardTokenFileErrors(t *testing.T) {
	withToken := func(file string) string {
		return strings.Replace(goodHCL, "  url = \"http://127.0.0.1:1\"\n", "  url = \"http://127.0.0.1:1\"\n  guard_token_file = \""+file+"\"\n", 1)
	}
	for _, tt := range []struct {
		name, token, want string
	}{
		{"unreadable", "", "orderly.hcl:4:3: Invalid guard token file: open nope.token"},
		{"too short", "abc\n", "orderly.hcl:4:3: Invalid guard token file: guard.token: the guard token must be at least 16 characters"},
		{"quote", "0123456789abcdef'x\n", "orderly.hcl:4:3: Invalid guard token file: guard.token: the guard token may hold only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := "guard.token"
			if tt.token == "" {
				file = "nope.token"
			}
			dir := writeFiles(t, map[string]string{"orderly.hcl": withToken(file), "legacy.conf": "\n", "docroot/index.html": "x", "guard.token": tt.token})
			var out, errb bytes.Buffer
			code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", "10.1.2.3", "/"}, &out, &errb)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr:\n%s", code, errb.String())
			}
			if got := strings.ReplaceAll(errb.String(), dir+"/", ""); !strings.Contains(got, tt.want) {
				t.Errorf("stderr:\n%s\nwant it to contain %q", got, tt.want)
			}
		})
	}
	// A good token loads, white space around it removed.
	dir := writeFiles(t, map[string]string{"orderly.hcl": withToken("guard.token"), "legacy.conf": "\n", "docroot/index.html": "x", "guard.token": "  0123456789abcdef0123\n"})
	rc, _, diags := loadConfig(filepath.Join(dir, "orderly.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if rc.GuardToken != "0123456789abcdef0123" {
		t.Errorf("GuardToken = %q", rc.GuardToken)
	}
}

func TestTranslateBackendGuard(t *testing.T) {
	dir := writeFiles(t, map[string]string{"guard.token": "0123456789abcdef0123\n", "short.token": "abc", "httpd.conf": "Listen 80\n"})
	tr := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"translate"}, args...), &out, &errb)
		return code, out.String(), strings.ReplaceAll(errb.String(), dir+"/", "")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-backend-guard"}, "-backend-guard needs -orderly-addr"},
		{[]string{"-orderly-addr", "10.0.0.5"}, "go with -backend-guard"},
		{[]string{"-backend-guard", "-orderly-addr", "10.0.0.5,bogus"}, `-orderly-addr: "bogus" is not an address or CIDR prefix`},
		{[]string{"-backend-guard", "-orderly-addr", "10.0.0.5", "-trusted-proxies", "10.9.0.0/33"}, `-trusted-proxies: "10.9.0.0/33"`},
		{[]string{"-backend-guard", "-orderly-addr", "10.0.0.5", "-guard-token-file", filepath.Join(dir, "short.token")}, "short.token: the guard token must be at least 16 characters"},
		{[]string{"-backend-guard", "-orderly-addr", "10.0.0.5", "-guard-token-file", filepath.Join(dir, "nope")}, "nope: no such file"},
	} {
		code, _, errs := tr(tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("translate %q: exit %d, stderr %q; want 2 and %q", tt.args, code, errs, tt.want)
		}
	}

	// Alone, on stdout: the snippet only.
	code, out, errs := tr("-backend-guard", "-orderly-addr", "10.0.0.5, 10.0.0.6", "-guard-token-file", filepath.Join(dir, "guard.token"))
	if code != 0 || !strings.HasPrefix(out, "# Backend guard") || !strings.Contains(out, "RemoteIPInternalProxy 10.0.0.5 10.0.0.6\n") || !strings.Contains(out, "'0123456789abcdef0123'") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	// Under -o, beside the translated configuration, readable by its
	// owner only since it holds the token.
	outDir := filepath.Join(dir, "out")
	code, _, errs = tr("-o", outDir, "-backend-guard", "-orderly-addr", "10.0.0.5", "-guard-token-file", filepath.Join(dir, "guard.token"), filepath.Join(dir, "httpd.conf"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	fi, err := os.Stat(filepath.Join(outDir, guardFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", guardFile, fi.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(outDir, "httpd.conf")); err != nil {
		t.Errorf("the translated configuration is missing beside the guard: %v", err)
	}
	// Printed with other files: marked as one of them.
	code, out, _ = tr("-backend-guard", "-orderly-addr", "10.0.0.5", filepath.Join(dir, "httpd.conf"))
	if code != 0 || !strings.Contains(out, "# ==== "+guardFile+"\n# Backend guard") || strings.Contains(out, "req_novary") {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}
