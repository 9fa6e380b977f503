package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRewriteDocExample runs the explain examples of docs/rewrite.md on
// its legacy.conf and compares the output with the document's.
func TestRewriteDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rewrite.md")
	if err != nil {
		t.Fatal(err)
	}
	conf := regexp.MustCompile("(?s)```apache\n(.*?)```").FindSubmatch(doc)
	runs := regexp.MustCompile("(?s)```text\n\\$ orderly explain ([^\n]*)\n(.*?)```").FindAllSubmatch(doc, -1)
	if conf == nil || len(runs) < 2 {
		t.Fatalf("docs/rewrite.md: want an apache block and explain runs, found %d runs", len(runs))
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "www"), 0o755)
	os.WriteFile(filepath.Join(dir, "legacy.conf"), conf[1], 0o644)
	hcl := "listen = \"127.0.0.1:0\"\nbackend \"b\" {\n  url = \"http://127.0.0.1:1\"\n}\nlegacy {\n  semantics = \"2.4-compat\"\n  files = [\"legacy.conf\"]\n  document_root = \"www\"\n  modules = [\"rewrite_module\"]\n}\n"
	os.WriteFile(filepath.Join(dir, "orderly.hcl"), []byte(hcl), 0o644)
	t.Chdir(dir)
	for _, run := range runs {
		var args []string
		for _, m := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(string(run[1]), -1) {
			args = append(args, strings.Trim(m, "'"))
		}
		var out, errOut bytes.Buffer
		if code := cmdExplain(args, &out, &errOut); code != 0 {
			t.Fatalf("explain %s: exit %d: %s", run[1], code, errOut.String())
		}
		if out.String() != string(run[2]) {
			t.Errorf("explain %s: the document says\n%s\norderly says\n%s", run[1], run[2], out.String())
		}
	}
}
