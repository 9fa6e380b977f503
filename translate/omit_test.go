package translate

import (
	"os"
	"path/filepath"
	"testing"
)

// Omit takes demoted lines out as if deleted: the line's rule is gone,
// its section no longer replaces the inherited Order/Allow/Deny when it
// was the section's only such line, every other rule keeps its ID, and
// each Allow word has its own part.
func TestOmit(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(conf, []byte(`<Directory "`+dir+`/a">
    Order deny,allow
    Deny from all
    Deny from all
    Allow from 10.0.0.0/8 192.168.1.1
</Directory>
<Directory "`+dir+`/b">
    Deny from all
</Directory>
`), 0o644)
	load := func(omit map[string]bool) *Config {
		t.Helper()
		cfg, err := Load([]string{conf}, LoadOptions{Options: Options{Semantics: Compat24, BaseDir: dir, DocumentRoot: dir, Omit: omit}})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	full := load(nil)
	ids := map[string]string{} // "line text" -> ID
	for _, r := range full.Rules {
		ids[r.String()] = r.ID
		if r.Text == "Allow from 10.0.0.0/8 192.168.1.1" && (len(r.Parts) != 2 || r.Parts[0].Word != "10.0.0.0/8" || r.Parts[1].Word != "192.168.1.1") {
			t.Errorf("parts of %s: %v", r, r.Parts)
		}
	}
	first, second, inB := ids["legacy.conf:3: Deny from all"], ids["legacy.conf:4: Deny from all"], ids["legacy.conf:8: Deny from all"]
	if first == "" || second == "" || first == second {
		t.Fatalf("rule IDs: %v", ids)
	}
	cut := load(map[string]bool{first: true, inB: true})
	got := map[string]string{}
	for _, r := range cut.Rules {
		got[r.String()] = r.ID
	}
	if _, ok := got["legacy.conf:3: Deny from all"]; ok {
		t.Errorf("the demoted line is still a rule: %v", got)
	}
	for k, id := range ids {
		if k == "legacy.conf:3: Deny from all" || k == "legacy.conf:8: Deny from all" || got[k] == "" {
			continue
		}
		if got[k] != id {
			t.Errorf("%s: ID %s with a line demoted, %s without", k, got[k], id)
		}
	}
	if got["legacy.conf:4: Deny from all"] != second {
		t.Errorf("the identical sibling after the demoted line changed ID: %v", got)
	}
	found := 0
	for _, cfg := range []*Config{full, cut} {
		for _, s := range cfg.Dirs {
			if s.Pattern != dir+"/b" {
				continue
			}
			found++
			if hasCompat := s.Conf.Compat != nil; hasCompat != (cfg == full) {
				t.Errorf("<Directory b> has an Order/Allow/Deny configuration: %v, want %v", hasCompat, cfg == full)
			}
		}
	}
	if found != 2 {
		t.Fatalf("<Directory b> found %d times in the two configurations", found)
	}
}

// A model only written out (RenderOnly) makes no rules, unless Omit asks
// for some by ID; then every rule has the ID it has otherwise.
func TestRenderOnlyIDs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(conf, []byte(`<Directory "`+dir+`/a">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
`), 0o644)
	load := func(renderOnly bool, omit map[string]bool) *Config {
		t.Helper()
		cfg, err := Load([]string{conf}, LoadOptions{Options: Options{Semantics: Compat24, BaseDir: dir, DocumentRoot: dir, RenderOnly: renderOnly, Omit: omit}})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ids := func(cfg *Config) map[string]string {
		m := map[string]string{}
		for _, r := range cfg.Rules {
			m[r.String()] = r.ID
		}
		return m
	}
	counted := ids(load(false, nil))
	if len(counted) != 5 { // three lines, two defaults
		t.Fatalf("rules: %v", counted)
	}
	if rules := load(true, nil).Rules; len(rules) != 0 {
		t.Errorf("render only: %d rules, want none (they are never counted)", len(rules))
	}
	omitted := ids(load(true, map[string]bool{counted["legacy.conf:4: Allow from 10.0.0.0/8"]: true}))
	if _, ok := omitted["legacy.conf:4: Allow from 10.0.0.0/8"]; ok || len(omitted) != 4 {
		t.Errorf("render only with the Allow omitted: %v", omitted)
	}
	for k, id := range omitted {
		if id != counted[k] {
			t.Errorf("render only with Omit: %s has ID %q, %q otherwise", k, id, counted[k])
		}
	}
}
