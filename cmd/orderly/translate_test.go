package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// translateTree lays out a small 2.2 tree: a main file including a
// directory and Debian-style links, an empty included file, a password
// file.
func translateTree(t *testing.T) (dir, top string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"conf/httpd.conf":             "ServerRoot \"" + filepath.Join(dir, "conf") + "\"\nInclude conf.d/*.conf\nInclude sites-enabled/*.conf\n",
		"conf/conf.d/empty.conf":      "",
		"conf/conf.d/a.conf":          "<Directory /srv/a>\n    Order deny,allow\n    Deny from all\n</Directory>\n",
		"conf/sites-available/x.conf": "<Directory /srv/x>\n    AuthType Basic\n    AuthName x\n    AuthUserFile htpasswd\n    Require valid-user\n</Directory>\n",
		"conf/htpasswd":               "alice:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "conf/sites-enabled"), 0o755)
	if err := os.Symlink("../sites-available/x.conf", filepath.Join(dir, "conf/sites-enabled/x.conf")); err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(dir, "conf/httpd.conf")
}

// translate -o writes the whole tree: every file read, changed or not,
// empty ones too, links as links with the translation at their target,
// the password file; the input stays as it was.
func TestTranslateTree(t *testing.T) {
	dir, top := translateTree(t)
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if code := cmdTranslate([]string{"-o", out, top}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for name, want := range map[string]string{
		"httpd.conf":             "Include conf.d/*.conf",
		"conf.d/empty.conf":      "",
		"conf.d/a.conf":          "Require all denied",
		"sites-available/x.conf": "Require valid-user",
		"htpasswd":               "alice:",
	} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, %q; want it written, with %q", name, err, b, want)
		}
	}
	if target, err := os.Readlink(filepath.Join(out, "sites-enabled/x.conf")); err != nil || target != "../sites-available/x.conf" {
		t.Errorf("sites-enabled/x.conf: %q %v, want the link as in the input", target, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "conf/conf.d/a.conf")); !strings.Contains(string(b), "Deny from all") {
		t.Error("the input was changed")
	}
	// Never over the input: its own directory, or a link to it.
	if err := os.Symlink("conf", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{filepath.Join(dir, "conf"), filepath.Join(dir, "alias")} {
		stderr.Reset()
		if code := cmdTranslate([]string{"-o", o, top}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "never writes to") {
			t.Errorf("-o %s: exit %d, %s; want 2", o, code, stderr.String())
		}
	}
}

// translate -diff prints what it changes as a unified diff and writes
// nothing.
func TestTranslateDiff(t *testing.T) {
	_, top := translateTree(t)
	var stdout, stderr bytes.Buffer
	if code := cmdTranslate([]string{"-diff", top}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{"--- a/conf.d/a.conf\n+++ b/conf.d/a.conf\n", "-    Order deny,allow\n", "+    Require all denied\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "empty.conf") || strings.Contains(got, "httpd.conf") {
		t.Errorf("diff shows a file translate leaves as it is:\n%s", got)
	}
}
