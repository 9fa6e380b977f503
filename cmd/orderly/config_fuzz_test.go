package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadConfig: any bytes as orderly.hcl give a configuration or
// diagnostics, never a panic, and errors come with a position. Inputs that
// name a special file (/dev, /proc, /sys) are skipped: token_file and
// ca_root are read at load, and /dev/zero never ends.
func FuzzLoadConfig(f *testing.F) {
	seeds, _ := filepath.Glob("../../examples/*/*.hcl")
	seeds = append(seeds, "../../deploy/orderly.hcl.example")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("listen = \"127.0.0.1:8080\"\nbackend \"httpd\" {\n  url = \"http://127.0.0.1:8081\"\n}\nlegacy {\n  files = [\"legacy.conf\"]\n}\n"))
	f.Add([]byte("listen = env(\"X\")\nscope \"a\" {\n  path = \"/a\"\n  enforce_percent = 101\n}\nlimits {\n  read_timeout = \"-1s\"\n}\n"))
	dir := f.TempDir()
	path := filepath.Join(dir, "orderly.hcl")
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, special := range []string{"/dev", "/proc", "/sys"} {
			if strings.Contains(string(src), special) {
				return
			}
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		rc, _, diags := loadConfig(path)
		if diags.HasErrors() {
			for _, d := range diags {
				if d.Subject == nil && d.Summary == "" {
					t.Fatalf("a diagnostic with neither position nor summary: %#v", d)
				}
			}
			return
		}
		if rc == nil {
			t.Fatal("no configuration and no error")
		}
	})
}
