package translate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/rewrite"
)

// names lists rules by their pattern.
func names(rs []*rewrite.Rule) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Pattern)
	}
	return strings.Join(out, ",")
}

func rules(ps ...string) []*rewrite.Rule {
	var out []*rewrite.Rule
	for _, p := range ps {
		out = append(out, &rewrite.Rule{Pattern: p})
	}
	return out
}

// config_perdir_merge: the engine's state and the options inherit unless
// set; RewriteBase only under MergeBase; the rules are the section's own,
// or joined with the base's by Inherit (after), InheritBefore (before),
// or the base's InheritDown and InheritDownBefore unless IgnoreInherit.
func TestMergeRewrite(t *testing.T) {
	base := &Rewrite{Engine: 1, Options: RewriteNoSlash, OptionsSet: true, Base: "/b/", BaseSet: true, Dir: "/srv/", Rules: rules("b1", "b2")}
	for _, tt := range []struct {
		name   string
		base   *Rewrite
		over   *Rewrite
		engine int8
		opts   RewriteOption
		base2  string
		rules  string
		dir    string
	}{
		{"nothing over", base, nil, 1, RewriteNoSlash, "/b/", "b1,b2", "/srv/"},
		{"nothing under", nil, &Rewrite{Engine: -1, Dir: "/x/", Rules: rules("o")}, -1, 0, "", "o", "/x/"},
		{"own rules replace", base, &Rewrite{Dir: "/srv/a/", Rules: rules("o")}, 1, RewriteNoSlash, "", "o", "/srv/a/"},
		{"engine off", base, &Rewrite{Engine: -1, Dir: "/srv/a/"}, -1, RewriteNoSlash, "", "", "/srv/a/"},
		{"own options", base, &Rewrite{Options: RewriteAnyURI, OptionsSet: true, Dir: "/srv/a/"}, 1, RewriteAnyURI, "", "", "/srv/a/"},
		{"own base", base, &Rewrite{Base: "/o/", BaseSet: true, Dir: "/srv/a/"}, 1, RewriteNoSlash, "/o/", "", "/srv/a/"},
		{"inherit", base, &Rewrite{Options: RewriteInherit, OptionsSet: true, Rules: rules("o")}, 1, RewriteInherit, "", "o,b1,b2", ""},
		{"inherit before", base, &Rewrite{Options: RewriteInheritBefore, OptionsSet: true, Rules: rules("o")}, 1, RewriteInheritBefore, "", "b1,b2,o", ""},
		{"merge base", base, &Rewrite{Options: RewriteMergeBase, OptionsSet: true}, 1, RewriteMergeBase, "/b/", "", ""},
		{"merge base, own", base, &Rewrite{Options: RewriteMergeBase, OptionsSet: true, Base: "/o/", BaseSet: true}, 1, RewriteMergeBase, "/o/", "", ""},
		{"inherit down", &Rewrite{Options: RewriteInheritDown, OptionsSet: true, Rules: rules("b")}, &Rewrite{Rules: rules("o")}, 0, RewriteInheritDown, "", "o,b", ""},
		{"inherit down before", &Rewrite{Options: RewriteInheritDownBefore, OptionsSet: true, Rules: rules("b")}, &Rewrite{Rules: rules("o")}, 0, RewriteInheritDownBefore, "", "b,o", ""},
		{"inherit down, ignored", &Rewrite{Options: RewriteInheritDown, OptionsSet: true, Rules: rules("b")}, &Rewrite{Options: RewriteIgnoreInherit, OptionsSet: true, Rules: rules("o")}, 0, RewriteIgnoreInherit, "", "o", ""},
		{"inherit down before, ignored", &Rewrite{Options: RewriteInheritDownBefore, OptionsSet: true, Rules: rules("b")}, &Rewrite{Options: RewriteIgnoreInherit, OptionsSet: true, Rules: rules("o")}, 0, RewriteIgnoreInherit, "", "o", ""},
	} {
		m := MergeRewrite(tt.base, tt.over)
		if m.Engine != tt.engine || m.Options != tt.opts || m.Base != tt.base2 || names(m.Rules) != tt.rules || m.Dir != tt.dir {
			t.Errorf("%s: engine %d options %b base %q rules %q dir %q; want %d %b %q %q %q", tt.name, m.Engine, m.Options, m.Base, names(m.Rules), m.Dir, tt.engine, tt.opts, tt.base2, tt.rules, tt.dir)
		}
		if tt.base != nil && tt.over != nil && m.BaseSet != (tt.base2 != "") {
			t.Errorf("%s: BaseSet %v", tt.name, m.BaseSet)
		}
		if tt.base != nil && tt.over != nil && m.OptionsSet != (tt.base.OptionsSet || tt.over.OptionsSet) {
			t.Errorf("%s: OptionsSet %v", tt.name, m.OptionsSet)
		}
	}
}

// config_server_merge: a virtual host's engine and options inherit unless
// set, its rules and maps are its own unless it inherits.
func TestMergeServerRewrite(t *testing.T) {
	mmap, omap, both := &rewrite.Map{Func: "main"}, &rewrite.Map{Func: "own"}, &rewrite.Map{Func: "own-both"}
	main := &Rewrite{Engine: 1, EngineRule: nil, Rules: rules("m"), Maps: map[string]*rewrite.Map{"m": mmap, "x": &rewrite.Map{Func: "main-x"}}}
	if mergeServerRewrite(nil, nil) != nil {
		t.Error("no configuration merged into one")
	}
	for _, tt := range []struct {
		name   string
		main   *Rewrite
		own    *Rewrite
		engine int8
		rules  string
		maps   string // name=Func, sorted
	}{
		{"host without", main, nil, 1, "", ""},
		{"main without", nil, &Rewrite{Engine: 1, Rules: rules("o")}, 1, "o", ""},
		{"own rules", main, &Rewrite{Rules: rules("o"), Maps: map[string]*rewrite.Map{"o": omap}}, 1, "o", "o=own"},
		{"off", main, &Rewrite{Engine: -1}, -1, "", ""},
		{"inherit", main, &Rewrite{Options: RewriteInherit, OptionsSet: true, Rules: rules("o"), Maps: map[string]*rewrite.Map{"o": omap, "x": both}}, 1, "o,m", "m=main,o=own,x=own-both"},
		{"inherit before", main, &Rewrite{Options: RewriteInheritBefore, OptionsSet: true, Rules: rules("o"), Maps: map[string]*rewrite.Map{"x": both}}, 1, "m,o", "m=main,x=main-x"},
	} {
		m := mergeServerRewrite(tt.main, tt.own)
		var ms []string
		for k, v := range m.Maps {
			ms = append(ms, k+"="+v.Func)
		}
		slices.Sort(ms)
		if m.Engine != tt.engine || names(m.Rules) != tt.rules || strings.Join(ms, ",") != tt.maps {
			t.Errorf("%s: engine %d rules %q maps %q; want %d %q %q", tt.name, m.Engine, names(m.Rules), strings.Join(ms, ","), tt.engine, tt.rules, tt.maps)
		}
	}
}

// A demoted RewriteRule (Options.Omit) is not in the policy, nor are its
// conditions: the next rule keeps its own.
func TestDemoteRewriteRule(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(conf, []byte("RewriteEngine On\nRewriteCond %{HTTP_USER_AGENT} bot\nRewriteRule .* - [F]\nRewriteRule ^/old - [G]\n<Directory />\nRewriteEngine On\nRewriteCond %{HTTP_HOST} x\nRewriteRule ^a - [F]\nRewriteRule ^b - [F]\n</Directory>\n"), 0o644)
	load := func(omit map[string]bool) *Config {
		cfg, err := Load([]string{conf}, LoadOptions{Options: Options{Semantics: Compat24, DocumentRoot: dir, Omit: omit}, Modules: append([]string{"rewrite_module"}, FragmentModules...)})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	full := load(nil)
	ids := map[string]string{}
	for _, r := range full.Rules {
		ids[r.Text] = r.ID
	}
	dconf := func(c *Config) *Rewrite {
		for _, s := range c.Dirs {
			if s.Conf.Rewrite != nil {
				return s.Conf.Rewrite
			}
		}
		return nil
	}
	cfg := load(map[string]bool{ids["RewriteRule .* - [F]"]: true, ids["RewriteRule ^a - [F]"]: true})
	if got := names(cfg.Rewrite.Rules); got != "^/old" || len(cfg.Rewrite.Rules[0].Conds) != 0 {
		t.Errorf("server rules %q (conditions %d), want ^/old alone", got, len(cfg.Rewrite.Rules[0].Conds))
	}
	if d := dconf(cfg); names(d.Rules) != "^b" || len(d.Rules[0].Conds) != 0 {
		t.Errorf("directory rules %q, want ^b without a condition", names(d.Rules))
	}
	if got := names(full.Rewrite.Rules); got != ".*,^/old" || len(full.Rewrite.Rules[0].Conds) != 1 {
		t.Errorf("full: %q", got)
	}
}
