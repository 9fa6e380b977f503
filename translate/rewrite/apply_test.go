package rewrite

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
)

// rules parses a rule list written one directive a line ("RewriteCond
// ..." or "RewriteRule ...").
func rules(t *testing.T, text string) []*Rule {
	t.Helper()
	var out []*Rule
	var conds []*Cond
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSpace(line)
		name, raw, _ := strings.Cut(line, " ")
		switch name {
		case "RewriteCond":
			c, err := ParseCond(raw, testEnv)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			conds = append(conds, c)
		case "RewriteRule":
			r, err := ParseRule(raw, testEnv)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			r.Conds, conds = conds, nil
			out = append(out, r)
		default:
			t.Fatalf("bad line %q", line)
		}
	}
	return out
}

// What apply_rewrite_list leaves of a request: the action, the
// filename, the query, the status, the environment and the rules that
// matched, for each flag that steers it.
func TestApply(t *testing.T) {
	for _, tt := range []struct {
		name     string
		rules    string
		perdir   string
		filename string
		pathInfo string
		args     string // "-" for none
		subreq   bool
		vars     map[string]string
		action   Action
		want     string // the filename after
		wantArgs string // "-" for none
		status   int
		env      string // name=value;... as set, "!name" unset
		matched  int
		end      bool
	}{
		{name: "no match", rules: `RewriteRule ^/a /b`, filename: "/x", args: "-", action: ActionNone, want: "/x", wantArgs: "-"},
		{name: "substitution", rules: `RewriteRule ^/a(.*) /b$1`, filename: "/a/c", args: "-", action: ActionNormal, want: "/b/c", wantArgs: "-", matched: 1},
		{name: "NE", rules: `RewriteRule ^/a /b [NE]`, filename: "/a", args: "-", action: ActionNoEscape, want: "/b", wantArgs: "-", matched: 1},
		{name: "forbidden", rules: "RewriteRule ^/a - [F]\nRewriteRule ^/a /b", filename: "/a", args: "-", action: ActionStatus, want: "/a", wantArgs: "-", status: 403, matched: 1},
		{name: "gone", rules: `RewriteRule ^/a - [G]`, filename: "/a", args: "-", action: ActionStatus, want: "/a", wantArgs: "-", status: 410, matched: 1},
		{name: "R=451", rules: `RewriteRule ^/a /b [R=451]`, filename: "/a", args: "-", action: ActionStatus, want: "/a", wantArgs: "-", status: 451, matched: 1},
		{name: "no-sub goes on", rules: "RewriteRule ^/a - [E=x:1]\nRewriteRule ^/a /b", filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", env: "x=1", matched: 2},
		{name: "unset", rules: "RewriteRule ^/a - [E=!y]", filename: "/a", args: "-", action: ActionNone, want: "/a", wantArgs: "-", env: "!y", matched: 1},
		{name: "L stops", rules: "RewriteRule ^/a /b [L]\nRewriteRule ^/b /c", filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1},
		{name: "without L goes on", rules: "RewriteRule ^/a /b\nRewriteRule ^/b /c", filename: "/a", args: "-", action: ActionNormal, want: "/c", wantArgs: "-", matched: 2},
		{name: "END", rules: "RewriteRule ^/a /b [END]\nRewriteRule ^/b /c", filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1, end: true},
		{name: "PT", rules: "RewriteRule ^/a /b [PT]\nRewriteRule ^/b /c", filename: "/a", args: "-", action: ActionNormal, want: "passthrough:/b", wantArgs: "-", matched: 1},
		{name: "chain broken skips the chain", rules: "RewriteRule ^/x /y [C]\nRewriteRule ^/y /z\nRewriteRule ^/a /b", filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1},
		{name: "chain held", rules: "RewriteRule ^/a /b [C]\nRewriteRule ^/b /c", filename: "/a", args: "-", action: ActionNormal, want: "/c", wantArgs: "-", matched: 2},
		{name: "chain's second fails", rules: "RewriteRule ^/a /b [C]\nRewriteRule ^/x /c\nRewriteRule ^/b /d", filename: "/a", args: "-", action: ActionNormal, want: "/d", wantArgs: "-", matched: 2},
		{name: "skip", rules: "RewriteRule ^/a - [S=2]\nRewriteRule ^/a - [F]\nRewriteRule ^/a - [G]\nRewriteRule ^/a /b", filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", matched: 2},
		{name: "skip past the end", rules: "RewriteRule ^/a - [S=5]\nRewriteRule ^/a - [F]", filename: "/a", args: "-", action: ActionNone, want: "/a", wantArgs: "-", matched: 1},
		{name: "N rounds", rules: "RewriteRule ^/a(.*)x(.*)$ /a$1y$2 [N]", filename: "/axbxc", args: "-", action: ActionNormal, want: "/aybyc", wantArgs: "-", matched: 2},
		{name: "N bounded", rules: "RewriteRule ^/n/(.*)$ /n/x$1 [N=5]", filename: "/n/a", args: "-", action: ActionStatus, want: "/n/xxxxa", wantArgs: "-", status: 500, matched: 4},
		{name: "the last of a chain", rules: "RewriteRule ^/x /y [C]\nRewriteRule ^/y /z [C]\nRewriteRule ^/a /b", filename: "/a", args: "-", action: ActionNone, want: "/a", wantArgs: "-"},
		{name: "runaway length", rules: "RewriteRule ^/n/(.*)$ /n/$1$1 [N]", filename: "/n/ab", args: "-", action: ActionStatus, status: 500, matched: 13, wantArgs: "-", want: "/n/" + strings.Repeat("ab", 1<<13)[:10]},
		{name: "negated rule has no captures", rules: `RewriteRule !^/a(.*) /b$1`, filename: "/x", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1},
		{name: "root prefix added", rules: `RewriteRule ^/a(.*) b$1`, filename: "/a/c", args: "-", action: ActionNormal, want: "/b/c", wantArgs: "-", matched: 1},
		{name: "slashes merged", rules: `RewriteRule ^/a(.*) /$1`, filename: "/a//c", args: "-", action: ActionNormal, want: "/c", wantArgs: "-", matched: 1},
		{name: "literal slashes kept", rules: `RewriteRule ^/a(.*) //x$1`, filename: "/a/c", args: "-", action: ActionNormal, want: "//x/c", wantArgs: "-", matched: 1},
		{name: "UNC", rules: `RewriteRule ^/a(.*) /$1 [UNC]`, filename: "/a//c", args: "-", action: ActionNormal, want: "///c", wantArgs: "-", matched: 1},
		{name: "query replaced", rules: `RewriteRule ^/a /b?x=1`, filename: "/a", args: "y=2", action: ActionNormal, want: "/b", wantArgs: "x=1", matched: 1},
		{name: "QSA", rules: `RewriteRule ^/a /b?x=1 [QSA]`, filename: "/a", args: "y=2", action: ActionNormal, want: "/b", wantArgs: "x=1&y=2", matched: 1},
		{name: "QSA without a query", rules: `RewriteRule ^/a /b?x=1 [QSA]`, filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "x=1", matched: 1},
		{name: "QSD", rules: `RewriteRule ^/a /b [QSD]`, filename: "/a", args: "y=2", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1},
		{name: "query kept", rules: `RewriteRule ^/a /b`, filename: "/a", args: "y=2", action: ActionNormal, want: "/b", wantArgs: "y=2", matched: 1},
		{name: "final ? drops it", rules: `RewriteRule ^/a /b?`, filename: "/a", args: "y=2", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1},
		{name: "QSL splits on the last", rules: `RewriteRule ^/a /b?c?d [QSL]`, filename: "/a", args: "-", action: ActionNormal, want: "/b?c", wantArgs: "d", matched: 1},
		{name: "a query of & is empty", rules: `RewriteRule ^/a /b?&`, filename: "/a", args: "y", action: ActionNormal, want: "/b", wantArgs: "", matched: 1},
		{name: "unsafe question mark", rules: `RewriteRule ^/a(.*) /b$1`, filename: "/a?x", args: "-", action: ActionStatusSet, want: "/a?x", wantArgs: "-", status: 403, matched: 1},
		{name: "UnsafeAllow3F", rules: `RewriteRule ^/a(.*) /b$1 [UnsafeAllow3F]`, filename: "/a?x", args: "-", action: ActionNormal, want: "/b", wantArgs: "x", matched: 1},
		{name: "redirect", rules: `RewriteRule ^/a /b [R=301]`, filename: "/a", args: "-", action: ActionNormal, want: "http://localhost/b", wantArgs: "-", status: 301, matched: 1},
		{name: "implicit redirect", rules: `RewriteRule ^/a http://elsewhere.test/b`, filename: "/a", args: "-", action: ActionNormal, want: "http://elsewhere.test/b", wantArgs: "-", status: 302, matched: 1},
		{name: "reduced to a path", rules: `RewriteRule ^/a http://self.test:8080/b`, filename: "/a", args: "-", action: ActionNormal, want: "/b", wantArgs: "-", matched: 1},
		{name: "mailto drops the query", rules: `RewriteRule ^/a mailto:x@y.test`, filename: "/a", args: "q", action: ActionNormal, want: "mailto:x@y.test", wantArgs: "q", status: 302, matched: 1},
		{name: "ftp drops the query", rules: `RewriteRule ^/a ftp://f.test/x?y`, filename: "/a", args: "q", action: ActionNormal, want: "ftp://f.test/x?y", wantArgs: "-", status: 302, matched: 1},
		{name: "NS skipped in a subrequest", rules: "RewriteRule ^/a - [F,NS]\nRewriteRule ^/a /b [R]\nRewriteRule ^/a /c", filename: "/a", args: "-", subreq: true, action: ActionNormal, want: "/c", wantArgs: "-", matched: 1},
		{name: "NS in the main request", rules: "RewriteRule ^/a - [F,NS]", filename: "/a", args: "-", action: ActionStatus, want: "/a", wantArgs: "-", status: 403, matched: 1},
		{name: "per-dir prefix", rules: `RewriteRule ^a(.*)$ b$1`, perdir: "/srv/www/", filename: "/srv/www/ax", args: "-", action: ActionNormal, want: "/srv/www/bx", wantArgs: "-", matched: 1},
		{name: "per-dir path info", rules: `RewriteRule ^a\.php/(.*)$ b/$1`, perdir: "/srv/www/", filename: "/srv/www/a.php", pathInfo: "/x", args: "-", action: ActionNormal, want: "/srv/www/b/x", wantArgs: "-", matched: 1},
		{name: "per-dir outside the prefix", rules: `RewriteRule ^/other/(.*)$ /z/$1`, perdir: "/srv/www/", filename: "/other/x", args: "-", action: ActionNormal, want: "/z/x", wantArgs: "-", matched: 1},
		{name: "per-dir absolute substitution", rules: `RewriteRule ^a$ /abs`, perdir: "/srv/www/", filename: "/srv/www/a", args: "-", action: ActionNormal, want: "/abs", wantArgs: "-", matched: 1},
		{name: "condition", rules: "RewriteCond %{HTTP_USER_AGENT} bot [NC]\nRewriteRule .* - [F]", filename: "/a", args: "-", vars: map[string]string{"HTTP_USER_AGENT": "GoodBOT"}, action: ActionStatus, want: "/a", wantArgs: "-", status: 403, matched: 1},
		{name: "condition fails", rules: "RewriteCond %{HTTP_USER_AGENT} bot\nRewriteRule .* - [F]", filename: "/a", args: "-", vars: map[string]string{"HTTP_USER_AGENT": "GoodBOT"}, action: ActionNone, want: "/a", wantArgs: "-"},
		{name: "OR", rules: "RewriteCond %{A} x [OR]\nRewriteCond %{B} y\nRewriteRule .* - [F]", filename: "/a", args: "-", vars: map[string]string{"A": "no", "B": "y"}, action: ActionStatus, want: "/a", wantArgs: "-", status: 403, matched: 1},
		{name: "OR then AND", rules: "RewriteCond %{A} x [OR]\nRewriteCond %{B} y\nRewriteCond %{C} z\nRewriteRule .* - [F]", filename: "/a", args: "-", vars: map[string]string{"A": "x", "B": "no", "C": "no"}, action: ActionNone, want: "/a", wantArgs: "-"},
		{name: "OR short-circuits", rules: "RewriteCond %{A} x [OR]\nRewriteCond %{B} y\nRewriteCond %{C} z\nRewriteRule .* - [F]", filename: "/a", args: "-", vars: map[string]string{"A": "x", "B": "no", "C": "z"}, action: ActionStatus, want: "/a", wantArgs: "-", status: 403, matched: 1},
		{name: "%N and $N", rules: "RewriteCond %{HTTP_HOST} ^www\\.(.+)$\nRewriteRule ^/(.*)$ /%1/$1", filename: "/p", args: "-", vars: map[string]string{"HTTP_HOST": "www.a.test"}, action: ActionNormal, want: "/a.test/p", wantArgs: "-", matched: 1},
		{name: "negated condition keeps the last captures", rules: "RewriteCond %{A} ^(a)$\nRewriteCond %{B} !^(b)$\nRewriteRule ^/ /%1", filename: "/", args: "-", vars: map[string]string{"A": "a", "B": "c"}, action: ActionNormal, want: "/a", wantArgs: "-", matched: 1},
		{name: "QUERY_STRING follows the rules", rules: "RewriteRule ^/a /b?x=1\nRewriteCond %{QUERY_STRING} ^x=1$\nRewriteRule ^/b - [F]", filename: "/a", args: "y", action: ActionStatus, want: "/b", wantArgs: "x=1", status: 403, matched: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			var order []string
			matched := 0
			st := &State{
				Filename: tt.filename, PathInfo: tt.pathInfo, Subreq: tt.subreq, MaxLen: 16380,
				Scheme: "http", DefaultPort: 80,
				SameServer: func(host string, port int) bool { return host == "self.test" && port == 8080 },
				SetEnv: func(name, value string, unset bool) {
					if unset {
						order = append(order, "!"+name)
						return
					}
					env[name] = value
					order = append(order, name+"="+value)
				},
				Matched: func(*Rule) { matched++ },
			}
			if tt.args != "-" {
				st.Args, st.HasArgs = tt.args, true
			}
			st.Lookups.Var = func(name string) string {
				switch name {
				case "QUERY_STRING":
					return st.Args
				}
				return tt.vars[name]
			}
			action, _, err := Apply(rules(t, tt.rules), tt.perdir, st)
			if err != nil {
				t.Fatal(err)
			}
			args := "-"
			if st.HasArgs {
				args = st.Args
			}
			if len(st.Filename) > 1000 {
				t.Logf("filename of %d bytes", len(st.Filename))
				st.Filename = st.Filename[:13]
			}
			if action != tt.action || st.Filename != tt.want || args != tt.wantArgs || st.Status != tt.status || matched != tt.matched || st.End != tt.end {
				t.Errorf("action %d filename %q args %q status %d matched %d end %v; want %d %q %q %d %d %v",
					action, st.Filename, args, st.Status, matched, st.End, tt.action, tt.want, tt.wantArgs, tt.status, tt.matched, tt.end)
			}
			if got := strings.Join(order, ";"); got != tt.env {
				t.Errorf("environment %q, want %q", got, tt.env)
			}
		})
	}
}

// The last rule that substituted, for prefix_stat.
func TestApplyLastsub(t *testing.T) {
	rs := rules(t, "RewriteRule ^/a /b\nRewriteRule ^/b - [E=x:1]")
	_, lastsub, _ := Apply(rs, "", &State{Filename: "/a", SetEnv: func(string, string, bool) {}})
	if lastsub != rs[0] {
		t.Errorf("lastsub %v, want the first rule", lastsub)
	}
}

func TestAbsoluteURI(t *testing.T) {
	for s, want := range map[string]int{
		"http://a/": 7, "HTTPS://a": 8, "ftp://x": 6, "mailto:a@b": 7, "unix:/x|http://y": 5, "unix://x/y": 7,
		"/http://a": 0, "http:/": 0, "gopher://g": 9, "ldap://l": 7, "news:x.y": 5, "h2c://a": 6, "wss://a": 6, "other://a": 0,
		"news:": 0, "https://": 8, "unix:/": 5, "unix://": 7, "ajp://": 6,
	} {
		if got := IsAbsoluteURI(s); got != want {
			t.Errorf("IsAbsoluteURI(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestSubstPrefixPath(t *testing.T) {
	for _, tt := range []struct{ in, match, subst, want string }{
		{"/srv/www/app/x", "/srv/www/app/", "/app/", "/app/x"},
		{"/srv/www/app/x", "/srv/www/app/", "/app", "/app/x"},
		{"/srv/www/app", "/srv/www/app/", "/app/", "/srv/www/app"},
		{"/srv/www/apple/x", "/srv/www/app/", "/app/", "/srv/www/apple/x"},
		{"/srv/www/x", "/srv/www", "", "x"},
		{"/other/x", "/srv/www/", "/", "/other/x"},
		{"/x", "", "/y", "/y/x"},
		{"/srv/www/x", "/srv/www", "/base", "/base/x"},
	} {
		if got := SubstPrefixPath(tt.in, tt.match, tt.subst); got != tt.want {
			t.Errorf("SubstPrefixPath(%q, %q, %q) = %q, want %q", tt.in, tt.match, tt.subst, got, tt.want)
		}
	}
}

func TestTxtMap(t *testing.T) {
	m := &Map{Kind: MapTxt, Txt: ParseTxtMap(bufio.NewReader(strings.NewReader(
		"# comment\n key ignored\nalpha one extra\nalpha two\nbeta\ngamma\t three\nlast final"))),
	}
	for key, want := range map[string]string{"alpha": "one", "beta": "", "gamma": "three", "key": "", "last": "final", "#": ""} {
		got, ok := m.Lookup(key)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", key, got, ok, want)
		}
	}
	r := &Map{Kind: MapRnd, Txt: map[string]string{"k": "a|b|c"}}
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		v, _ := r.Lookup("k")
		seen[v] = true
	}
	if len(seen) != 3 || !seen["a"] || !seen["b"] || !seen["c"] {
		t.Errorf("rnd picked %v", seen)
	}
	if v, ok := (&Map{Kind: MapInt, Func: "toupper"}).Lookup("aBc-é"); v != "ABC-é" || !ok {
		t.Errorf("toupper: %q", v)
	}
	if v, ok := (&Map{Kind: MapInt, Func: "tolower"}).Lookup(""); v != "" || !ok {
		t.Errorf("tolower of nothing: %q %v", v, ok)
	}
	if v, _ := (&Map{Kind: MapInt, Func: "tolower"}).Lookup("@AZ[`az{"); v != "@az[`az{" {
		t.Errorf("tolower: %q", v)
	}
	if v, _ := (&Map{Kind: MapInt, Func: "toupper"}).Lookup("@AZ[`az{"); v != "@AZ[`AZ{" {
		t.Errorf("toupper: %q", v)
	}
	// A line of more than 1,024 bytes reads as two; a file may end with
	// its newline.
	long := &Map{Kind: MapTxt, Txt: ParseTxtMap(bufio.NewReader(strings.NewReader("key " + strings.Repeat("v", 1020) + "tail more\nnext one\n")))}
	if v, _ := long.Lookup("key"); v != strings.Repeat("v", 1020) {
		t.Errorf("a long line: %d bytes", len(v))
	}
	if v, _ := long.Lookup("tail"); v != "more" {
		t.Errorf("the rest of a long line: %q", v)
	}
	if v, _ := long.Lookup("next"); v != "one" {
		t.Errorf("after a long line: %q", v)
	}
	if _, ok := (&Map{}).Lookup("x"); ok {
		t.Error("no map answered")
	}
	for _, tt := range []struct{ fn, in, want string }{
		{"escape", "a b/ü?&", "a%20b/%c3%bc%3f&"}, {"escape", "plain", "plain"},
		{"unescape", "a%20b%2Fc%zz%4", "a b/c%zz%4"}, {"unescape", "x%00y", "x"}, {"unescape", "%41%62", "Ab"},
	} {
		if got, ok := (&Map{Kind: MapInt, Func: tt.fn}).Lookup(tt.in); got != tt.want || !ok {
			t.Errorf("int:%s(%q) = %q, want %q", tt.fn, tt.in, got, tt.want)
		}
	}
}

func TestVars(t *testing.T) {
	s := `%{HTTP_HOST}\%{NOT}${m:%{REMOTE_ADDR}|${n:x}}%{ENV:a}`
	if got := strings.Join(Vars(s), ","); got != "HTTP_HOST,REMOTE_ADDR,ENV:a" {
		t.Errorf("Vars = %s", got)
	}
}

// The edges of apply_rewrite_list and apply_rewrite_rule: a chain or an
// OR on the last line, [DPI], a substitution of "/" alone, [E=:value],
// the length limit exactly reached, no limit, no scheme given.
func TestApplyEdges(t *testing.T) {
	run := func(t *testing.T, text, perdir, filename, pathInfo string, maxLen int, vars map[string]string) (*State, Action, map[string]string) {
		t.Helper()
		env := map[string]string{}
		st := &State{Filename: filename, PathInfo: pathInfo, MaxLen: maxLen, SetEnv: func(n, v string, unset bool) { env[n] = v }}
		st.Lookups.Var = func(n string) string { return vars[n] }
		a, _, err := Apply(rules(t, text), perdir, st)
		if err != nil {
			t.Fatal(err)
		}
		return st, a, env
	}
	if st, a, _ := run(t, "RewriteRule ^/x /y [C]", "", "/a", "", 0, nil); a != ActionNone || st.Filename != "/a" {
		t.Errorf("a failing chain at the end: %d %q", a, st.Filename)
	}
	if st, a, _ := run(t, "RewriteCond %{A} ^1$ [OR]\nRewriteRule ^/a /b", "", "/a", "", 0, map[string]string{"A": "1"}); a != ActionNormal || st.Filename != "/b" {
		t.Errorf("an OR on the last condition: %d %q", a, st.Filename)
	}
	if st, _, _ := run(t, "RewriteRule ^a\\.php/(.*)$ b.php [DPI]\nRewriteRule ^b\\.php/x$ - [F]", "/srv/", "/srv/a.php", "/x", 0, nil); st.PathInfo != "" || st.Status != 0 {
		t.Errorf("DPI: path info %q, status %d", st.PathInfo, st.Status)
	}
	if st, _, _ := run(t, "RewriteRule ^a\\.php/(.*)$ b.php\nRewriteRule ^b\\.php/x$ - [F]", "/srv/", "/srv/a.php", "/x", 0, nil); st.PathInfo != "/x" || st.Status != 403 {
		t.Errorf("without DPI: path info %q, status %d", st.PathInfo, st.Status)
	}
	if st, _, _ := run(t, "RewriteRule ^a\\.php/(.*)$ b.php [DPI]", "", "a.php/x", "/y", 0, nil); st.PathInfo != "/y" {
		t.Errorf("DPI at the server level: path info %q", st.PathInfo)
	}
	if st, _, _ := run(t, "RewriteRule ^/x$ /", "", "/x", "", 0, nil); st.Filename != "/" {
		t.Errorf("substitution /: %q", st.Filename)
	}
	if st, _, _ := run(t, "RewriteRule ^/x(.*)$ /$1", "", "/x", "", 0, nil); st.Filename != "/" {
		t.Errorf("substitution to /: %q", st.Filename)
	}
	if _, _, env := run(t, "RewriteRule ^ - [E=:v,E=n:]", "", "/x", "", 0, nil); env[""] != "v" || env["n"] != "" || len(env) != 2 {
		t.Errorf("E=:v and E=n: %v", env)
	}
	if st, a, _ := run(t, "RewriteRule ^/(.*)$ /$1$1", "", "/abcd", "", 9, nil); a != ActionNormal || st.Status != 0 {
		t.Errorf("exactly the limit: %d %d %q", a, st.Status, st.Filename)
	}
	if st, a, _ := run(t, "RewriteRule ^/(.*)$ /$1$1", "", "/abcde", "", 9, nil); a != ActionStatus || st.Status != 500 {
		t.Errorf("past the limit: %d %d", a, st.Status)
	}
	if st, a, _ := run(t, "RewriteRule ^/(.*)$ /$1$1", "", "/abcde", "", 0, nil); a != ActionNormal || st.Status != 0 {
		t.Errorf("no limit: %d %d", a, st.Status)
	}
	if st, _, _ := run(t, "RewriteRule ^/a /b [R]", "", "/a", "", 0, nil); st.Filename != "http://localhost/b" {
		t.Errorf("no scheme: %q", st.Filename)
	}
	if st, _, _ := run(t, "RewriteRule ^/a /b [R]", "", "/a", "", 0, nil); st.Filename != "http://localhost/b" {
		t.Errorf("no scheme: %q", st.Filename)
	}
	if st, _, _ := run(t, "RewriteRule ^/a http://?q [R]", "", "/a", "", 0, nil); st.Filename != "http://" || st.Args != "q" {
		t.Errorf("a query right after the scheme: %q %q", st.Filename, st.Args)
	}
	if st, _, _ := run(t, "RewriteRule ^/(.)$ /$2", "", "/a", "", 0, nil); st.Filename != "/" {
		t.Errorf("a group the pattern does not have: %q", st.Filename)
	}
}

// reduce_uri's parsing of the host and port, with a server that is
// every host.
func TestReduce(t *testing.T) {
	for in, want := range map[string]string{
		"http://":        "http://",
		"http:///x":      "/x",
		"http://h:/x":    "/x",
		"http://h:8080":  "/",
		"http://h":       "/",
		"http://h/a?b":   "/a?b",
		"HTTP://h/a":     "/a",
		"https://h/a":    "https://h/a",
		"http:/h/a":      "http:/h/a",
		"http://h:81/a/": "/a/",
	} {
		var gotHost string
		var gotPort int
		st := &State{Filename: in, Scheme: "http", DefaultPort: 80, SameServer: func(h string, p int) bool { gotHost, gotPort = h, p; return true }}
		st.reduce()
		if st.Filename != want {
			t.Errorf("reduce(%q) = %q, want %q (host %q port %d)", in, st.Filename, want, gotHost, gotPort)
		}
	}
	st := &State{Filename: "http://h:81/a", DefaultPort: 80, SameServer: func(h string, p int) bool { return h == "h" && p == 81 }}
	if st.reduce(); st.Filename != "/a" || !st.Reduced {
		t.Errorf("the port named: %q", st.Filename)
	}
	st = &State{Filename: "http://h/a", DefaultPort: 80, SameServer: func(h string, p int) bool { return h == "h" && p == 80 }}
	if st.reduce(); st.Filename != "/a" {
		t.Errorf("the default port: %q", st.Filename)
	}
}

// EscapePath and Unescape over every byte.
func TestEscapeUnescape(t *testing.T) {
	const safe = "$-_.+!*'(),:;@&=/~"
	for c := 0; c < 256; c++ {
		b := string([]byte{byte(c)})
		want := b
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(safe, byte(c)) >= 0) {
			want = fmt.Sprintf("%%%02x", c)
		}
		if got := EscapePath(b); got != want {
			t.Errorf("EscapePath(%q) = %q, want %q", b, got, want)
		}
		if c != 0 {
			for _, x := range []string{fmt.Sprintf("%%%02x", c), fmt.Sprintf("%%%02X", c)} {
				if got := Unescape("<" + x + ">"); got != "<"+b+">" {
					t.Errorf("Unescape(%q) = %q", x, got)
				}
			}
		}
	}
	for in, want := range map[string]string{"%": "%", "%4": "%4", "a%4": "a%4", "%g0": "%g0", "%0g": "%0g", "%:0": "%:0", "%/0": "%/0", "%@1": "%@1", "%`1": "%`1", "%G1": "%G1", "%41%": "A%"} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// Vars finds the variables do_expand would, and nothing in a text that
// only looks like one.
func TestVarsScan(t *testing.T) {
	for in, want := range map[string]string{
		"x%": "", "%{A": "", "$x%{A}": "A", "${m:%{B}|%{C}}": "B,C", "%{A}%{B}": "A,B", `\%{A}`: "", "%%{A}": "A", "{%{A}}": "A", "$": "", "%{": "",
	} {
		if got := strings.Join(Vars(in), ","); got != want {
			t.Errorf("Vars(%q) = %q, want %q", in, got, want)
		}
	}
}

// The Location of a redirect as hook_uri2file and hook_fixup build it
// (corpus case 508 holds them to Apache).
func TestRedirectLocation(t *testing.T) {
	for _, tt := range []struct {
		name         string
		filename     string
		args         string
		action       Action
		oargs        string
		perdir, base string
		status       int
		want         string
		wantStatus   int
	}{
		{name: "plain", filename: "http://h.test/a b", action: ActionNormal, want: "http://h.test/a%20b", wantStatus: 302},
		{name: "ne", filename: "http://h.test/a b", action: ActionNoEscape, want: "http://h.test/a b", wantStatus: 302},
		{name: "host only", filename: "http://h.test", action: ActionNormal, want: "http://h.test", wantStatus: 302},
		{name: "host slash", filename: "http://h.test/", action: ActionNormal, want: "http://h.test/", wantStatus: 302},
		{name: "301", filename: "http://h.test/x", status: 301, action: ActionNormal, want: "http://h.test/x", wantStatus: 301},
		{name: "not 3xx", filename: "http://h.test/x", status: 200, action: ActionNormal, want: "http://h.test/x", wantStatus: 302},
		{name: "changed query", filename: "http://h.test/x", args: "a=b c", action: ActionNormal, want: "http://h.test/x?a=b%20c", wantStatus: 302},
		{name: "same query", filename: "http://h.test/x", args: "a=b%20c", oargs: "a=b%20c", action: ActionNormal, want: "http://h.test/x?a=b%20c", wantStatus: 302},
		{name: "ne query", filename: "http://h.test/x", args: "a=b c", action: ActionNoEscape, want: "http://h.test/x?a=b c", wantStatus: 302},
		{name: "mailto", filename: "mailto:a b@h.test", action: ActionNormal, want: "mailto:a%20b@h.test", wantStatus: 302},
		{name: "ldap", filename: "ldap://h.test/o=a b?cn?sub?(uid=x)?e?f", action: ActionNormal, want: "ldap://h.test/o=a%20b?cn?sub?(uid=x)?e%3ff", wantStatus: 302},
		{name: "base", filename: "http://h.test/srv/www/b/new/x", action: ActionNormal, perdir: "/srv/www/b/", base: "/b/", want: "http://h.test/b/new/x", wantStatus: 302},
		{name: "base root", filename: "http://h.test/srv/www/b/new/x", action: ActionNormal, perdir: "/srv/www/b/", base: "/", want: "http://h.test/new/x", wantStatus: 302},
		{name: "no base", filename: "http://h.test/srv/www/b/new/x", action: ActionNormal, perdir: "/srv/www/b/", want: "http://h.test/srv/www/b/new/x", wantStatus: 302},
		{name: "no host", filename: "http:///srv/www/b/new/x", action: ActionNormal, perdir: "/srv/www/b/", base: "/b/", want: "http:///b/new/x", wantStatus: 302},
		{name: "base, nothing after the host", filename: "http://h.test/", action: ActionNormal, perdir: "/srv/www/b/", base: "/b/", want: "http://h.test/", wantStatus: 302},
		{name: "host kept as it is", filename: "http://h t/a b", action: ActionNormal, want: "http://h t/a%20b", wantStatus: 302},
		{name: "host alone kept", filename: "http://h t", action: ActionNormal, want: "http://h t", wantStatus: 302},
		{name: "ldap host kept", filename: "ldap://h t/o=a b", action: ActionNormal, want: "ldap://h t/o=a%20b", wantStatus: 302},
		{name: "300", filename: "http://h.test/x", status: 300, action: ActionNormal, want: "http://h.test/x", wantStatus: 300},
		{name: "399", filename: "http://h.test/x", status: 399, action: ActionNormal, want: "http://h.test/x", wantStatus: 399},
		{name: "400", filename: "http://h.test/x", status: 400, action: ActionNormal, want: "http://h.test/x", wantStatus: 302},
		{name: "base elsewhere", filename: "http://h.test/other/x", action: ActionNormal, perdir: "/srv/www/b/", base: "/b/", want: "http://h.test/other/x", wantStatus: 302},
	} {
		st := &State{Filename: tt.filename, Args: tt.args, HasArgs: tt.args != "", Status: tt.status}
		got, status := RedirectLocation(st, tt.action, tt.oargs, tt.oargs != "", tt.perdir, tt.base)
		if got != tt.want || status != tt.wantStatus {
			t.Errorf("%s: %q %d, want %q %d", tt.name, got, status, tt.want, tt.wantStatus)
		}
	}
}
