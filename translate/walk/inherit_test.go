package walk

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// Inherit (a reload) carries the counters of the engine a new one
// replaces to the rules that kept their ID: the configuration's at once,
// counted in what Inherit returns, and an .htaccess file's when the new
// engine reads it; a second reload carries on what no file claimed yet.
func TestInherit(t *testing.T) {
	root := tree(t, "index.html", "d/index.html", "x/")
	if err := os.WriteFile(filepath.Join(root, "d", ".htaccess"), []byte("Require ip 8.8.8.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := "<Directory @DOCROOT@/d>\nAllowOverride All\n</Directory>\n<Location /x>\nRequire all denied\n</Location>\n"
	load := func() *Engine { return optEngine(t, translate.Compat24, root, conf, nil) }
	count := func(e *Engine, text string) uint64 {
		for _, r := range e.Rules() {
			if r.Text == text {
				m, d, _ := r.Stats()
				return m + d
			}
		}
		return 0
	}
	old := load()
	for _, target := range []string{"/x/", "/x/", "/d/index.html"} {
		decide(old, req{target: target, ip: "8.8.8.8"})
	}
	denied, ip := count(old, "Require all denied"), count(old, "Require ip 8.8.8.8")
	if denied == 0 || ip == 0 {
		t.Fatalf("old engine: counts %d, %d", denied, ip)
	}
	e := load()
	if kept := e.Inherit(old); kept != len(e.Config().Rules) || kept == 0 {
		t.Errorf("Inherit kept %d rules, want all %d", kept, len(e.Config().Rules))
	}
	if got := count(e, "Require all denied"); got != denied {
		t.Errorf("Require all denied: %d after Inherit, want %d", got, denied)
	}
	// A second reload before the first new engine read the .htaccess.
	e3 := load()
	e3.Inherit(e)
	decide(e3, req{target: "/d/index.html", ip: "8.8.8.8"})
	if got := count(e3, "Require ip 8.8.8.8"); got != 2*ip {
		t.Errorf("Require ip 8.8.8.8 (.htaccess) after two reloads and one more request: %d, want %d", got, 2*ip)
	}
}
