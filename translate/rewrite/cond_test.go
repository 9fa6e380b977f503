package rewrite

import (
	"errors"
	"testing"
)

// Each condition type as apply_rewrite_cond decides it.
func TestCondEval(t *testing.T) {
	files := map[string]FileInfo{
		"/srv/a.php":   {Kind: FileRegular, Size: 10},
		"/srv/empty":   {Kind: FileRegular},
		"/srv/dir":     {Kind: FileDir, Exec: true},
		"/srv/run.cgi": {Kind: FileRegular, Size: 1, Exec: true},
	}
	w := World{
		Stat: func(p string, link bool) FileInfo {
			if link && p == "/srv/ln" {
				return FileInfo{Kind: FileLink}
			}
			if p == "/srv/ln" {
				return files["/srv/a.php"]
			}
			return files[p]
		},
		LookupURL: func(u string) (int, bool) {
			if u == "/same" {
				return 200, false // subreq_ok: no subrequest made
			}
			return map[string]int{"/ok": 200, "/moved": 301, "/denied": 403, "/bad": 400, "/notfound": 399}[u] + 0, true
		},
		LookupFile: func(p string) (int, string, bool) {
			switch p {
			case "/srv/redirected":
				return 300, "/srv/a.php", true
			case "/srv/ok":
				return 299, "/srv/a.php", true
			case "/srv/same":
				return 200, "/srv/a.php", false
			}
			return 200, p, true
		},
	}
	for _, tt := range []struct {
		cond, input string
		want        bool
	}{
		{"x -f", "/srv/a.php", true},
		{"x -f", "/srv/dir", false},
		{"x -f", "/srv/nope", false},
		{"x !-f", "/srv/nope", true},
		{"x -s", "/srv/a.php", true},
		{"x -s", "/srv/empty", false},
		{"x -d", "/srv/dir", true},
		{"x !-d", "/srv/a.php", true},
		{"x -l", "/srv/ln", true},
		{"x -l", "/srv/a.php", false},
		{"x -x", "/srv/run.cgi", true},
		{"x -x", "/srv/a.php", false},
		{"x -x", "/srv/dir", true},
		{"x -U", "/ok", true},
		{"x -U", "/moved", true},
		{"x -U", "/denied", false},
		{"x -U", "", false},
		{"x -F", "/srv/a.php", true},
		{"x -F", "/srv/nope", false},
		{"x -F", "/srv/redirected", false},
		{"x -F", "/srv/ok", true},
		{"x -U", "/bad", false},
		{"x -U", "/notfound", true},
		{"x -U", "/same", false},
		{"x !-U", "/same", true},
		{"x -F", "/srv/same", false},
		{"x -F", "/srv/dir", true},
		{"x -ge5", "5", true},
		{"x -ge5", "4", false},
		{"x -gt5", "5", false},
		{"x -gt5", "6", true},
		{"x -le5", "5", true},
		{"x -lt5", "5", false},
		{"x =aBc [NC]", "AbC", true},
		{"x =@[`{ [NC]", "@[`{", true},
		{"x =a@ [NC]", "a`", false},
		{"x =z[ [NC]", "Z{", false},
		{"x =az [NC]", "AZ", true},
		{"x <abc [NC]", "ab", true},
		{"x >ab [NC]", "abc", true},
		{"x <ab [NC]", "abc", false},
		{"x >abc [NC]", "ab", false},
		{"x >=abc [NC]", "ABC", true},
		{"x <=abc [NC]", "ABC", true},
		{"x =abc", "abc", true},
		{"x =abc", "ABC", false},
		{"x =abc [NC]", "ABC", true},
		{`x =""`, "", true},
		{`x !=""`, "", false},
		{"x >b", "a", false},
		{"x >b", "aa", true}, // longer is greater: compare_lexicography
		{"x >b [NC]", "aa", false},
		{"x >=b", "b", true},
		{"x <b", "a", true},
		{"x <=b", "c", false},
		{"x <b", "", true},
		{"x -lt10", "9", true},
		{"x -lt10", "10", false},
		{"x -le10", "10", true},
		{"x -gt10", " 11abc", true},
		{"x -ge10", "x", false},
		{"x -eq0", "", true},
		{"x -ne0", "1", true},
		{"x !-ne0", "0", true},
		{"x ^www\\.", "www.example.com", true},
		{"x ^www\\. [NC]", "WWW.example.com", true},
		{"x !^www\\.", "www.example.com", false},
	} {
		c, err := ParseCond(tt.cond, testEnv)
		if err != nil {
			t.Fatalf("%s: %v", tt.cond, err)
		}
		var rc Backrefs
		got, err := c.Eval(tt.input, w, &rc)
		if err != nil || got != tt.want {
			t.Errorf("%s on %q: %v %v, want %v", tt.cond, tt.input, got, err, tt.want)
		}
	}
	// A match becomes %N; a negated one does not.
	c, _ := ParseCond(`%{HTTP_HOST} ^(www\.)?(.+)$`, testEnv)
	var rc Backrefs
	if ok, _ := c.Eval("www.example.com", w, &rc); !ok {
		t.Fatal("no match")
	}
	if g, ok := rc.group(2); !ok || g != "example.com" {
		t.Errorf("%%2 = %q", g)
	}
	n, _ := ParseCond(`%{HTTP_HOST} !^(a)`, testEnv)
	before := rc
	if ok, _ := n.Eval("b", w, &rc); !ok || rc.Source != before.Source {
		t.Errorf("a negated match changed the captures: %+v", rc)
	}
	// Without subrequests (subreq_ok false), -U and -F do not hold.
	u, _ := ParseCond("x -U", testEnv)
	if ok, _ := u.Eval("/ok", World{}, &rc); ok {
		t.Error("-U without subrequests holds")
	}
	e, _ := ParseCond(`expr "true"`, testEnv)
	if _, err := e.Eval("", w, &rc); !errors.Is(err, ErrExpr) {
		t.Errorf("expr: %v", err)
	}
}
