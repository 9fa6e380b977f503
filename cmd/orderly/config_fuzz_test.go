package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		// What loads is a configuration orderly can run: somewhere to
		// listen and a backend, rollout shares that are shares, no
		// negative duration, a trusted proxy list of valid prefixes.
		if rc.Listen == "" || rc.Backend == nil || len(rc.Backends) == 0 || rc.Backend != rc.Backends[0] {
			t.Fatalf("loaded with listen %q, backend %v, backends %v", rc.Listen, rc.Backend, rc.Backends)
		}
		for _, sc := range rc.Scopes {
			if sc.Percent < 0 || sc.Percent > 100 || sc.Percent != sc.Percent {
				t.Fatalf("scope %q enforces %v%%", sc.Name, sc.Percent)
			}
		}
		for _, d := range []time.Duration{rc.BackendTimeout, rc.ResolverTimeout, rc.ShutdownGrace} {
			if d < 0 {
				t.Fatalf("a negative duration loaded: %v", d)
			}
		}
		for _, p := range rc.TrustedProxies {
			if !p.IsValid() {
				t.Fatalf("an invalid trusted proxy prefix loaded: %v", p)
			}
		}
		// Deterministic: the same file loads the same way again.
		rc2, _, diags2 := loadConfig(path)
		if diags2.HasErrors() || rc2 == nil || rc2.Listen != rc.Listen || len(rc2.Scopes) != len(rc.Scopes) || len(rc2.LegacyFiles) != len(rc.LegacyFiles) {
			t.Fatalf("a second load differs: %v", diags2)
		}
	})
}
