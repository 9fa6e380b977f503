package policy

import (
	"testing"
	"time"
)

// TestEqualFold: strcasecmp's equality, ASCII letters only.
func TestEqualFold(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"abc", "ABC", true},
		{"AbZ", "aBz", true},
		{"azAZ", "AZaz", true},
		{"abc", "abd", false},
		{"abc", "ab", false},
		{"ab", "abc", false},
		{"@", "`", false}, // 'A'-1 and 'a'-1
		{"[", "{", false}, // 'Z'+1 and 'z'+1
		{"a1", "A1", true},
		{"k", "\u212a", false},
	} {
		if got := equalFold(tc.a, tc.b); got != tc.want {
			t.Errorf("equalFold(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// TestEnv: set, replace (keeping the name as first set), unset, list.
func TestEnv(t *testing.T) {
	var e Env
	e.Set("A", "1")
	e.Set("b", "2")
	e.Set("c", "3")
	e.Set("B", "two")
	if v, ok := e.Get("b"); !ok || v != "two" || e.Len() != 3 {
		t.Errorf("after replace: %q %v, %d variables", v, ok, e.Len())
	}
	for i, want := range []string{"A=1", "b=two", "c=3"} {
		if n, v := e.At(i); n+"="+v != want {
			t.Errorf("At(%d) = %q %q, want %s", i, n, v, want)
		}
	}
	e.Unset("B")
	e.Unset("nothing")
	if _, ok := e.Get("b"); ok || e.Len() != 2 {
		t.Errorf("after unset: b present %v, %d variables", ok, e.Len())
	}
	if n, v := e.At(1); n != "c" || v != "3" {
		t.Errorf("At(1) after unset = %q %q", n, v)
	}
	if v, ok := e.Get("a"); !ok || v != "1" {
		t.Errorf("a = %q %v", v, ok)
	}
}

// TestMethods: the built-in registry, and methods registered from 27 on,
// up to 64 in all.
func TestMethods(t *testing.T) {
	var nilMethods *Methods
	if nilMethods.Number("GET") != 0 || nilMethods.Number("HEAD") != 0 || nilMethods.Number("POST") != 2 || nilMethods.Number("get") != MethodInvalid || nilMethods.Number("FOO") != MethodInvalid {
		t.Error("built-in numbers")
	}
	if len(nilMethods.Registered()) != 0 {
		t.Error("a nil registry registered methods")
	}
	var m Methods
	if n, ok := m.Register("MERGE"); n != 25 || !ok {
		t.Errorf("Register(MERGE) = %d %v", n, ok)
	}
	for i := MethodFirstCustom; i < MaxMethods; i++ {
		name := "X" + MethodName(i)
		if n, ok := m.Register(name); n != i || !ok {
			t.Fatalf("Register(%s) = %d %v, want %d", name, n, ok, i)
		}
		if n, ok := m.Register(name); n != i || !ok {
			t.Fatalf("Register(%s) again = %d %v, want %d", name, n, ok, i)
		}
	}
	if _, ok := m.Register("ONEMORE"); ok {
		t.Error("a 65th method registered")
	}
	if m.Number("Xmethod#27") != 27 || len(m.Registered()) != MaxMethods-MethodFirstCustom || m.Registered()["Xmethod#63"] != 63 {
		t.Errorf("registered: %v", m.Registered())
	}
	if MethodName(0) != "GET" || MethodName(2) != "POST" || MethodName(25) != "MERGE" || MethodName(26) != "method#26" {
		t.Error("MethodName")
	}
	// Name: a registered method by its name, built-ins as MethodName.
	for n, want := range map[int]string{0: "GET", 25: "MERGE", 27: "Xmethod#27", 40: "Xmethod#40", 63: "Xmethod#63"} {
		if got := m.Name(n); got != want {
			t.Errorf("Name(%d) = %q, want %q", n, got, want)
		}
	}
	var one Methods
	one.Register("BREW")
	if one.Name(27) != "BREW" || one.Name(28) != "method#28" || nilMethods.Name(27) != "method#27" || nilMethods.Name(2) != "POST" {
		t.Errorf("Name with one registered: %q %q %q %q", one.Name(27), one.Name(28), nilMethods.Name(27), nilMethods.Name(2))
	}
}

// TestNames: the names explain prints.
func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{DenyAllow.String(), "deny,allow"},
		{AllowDeny.String(), "allow,deny"},
		{MutualFailure.String(), "mutual-failure"},
		{SatisfyNoSpec.String(), "unset (All)"},
		{SatisfyAll.String(), "All"},
		{SatisfyAny.String(), "Any"},
		{LayerNone.String(), "none"},
		{LayerSSL.String(), "ssl"},
		{Denied.String(), "denied"},
		{DeniedNoUser.String(), "denied (no user)"},
		{GeneralError.String(), "error"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}

// TestRuleStats: counters carried over from saved state and earlier
// copies, and the labels of repeated words.
func TestRuleStats(t *testing.T) {
	r := &Rule{ID: "a", File: "f.conf", Line: 3, Text: "Allow from x x y x"}
	for _, w := range []string{"x", "x", "y", "x"} {
		r.NewPart(w)
	}
	for i, want := range []string{"x", "x#2", "y", "x#3"} {
		if got := r.PartLabel(i); got != want {
			t.Errorf("PartLabel(%d) = %q, want %q", i, got, want)
		}
	}
	if r.String() != "f.conf:3: Allow from x x y x" || (&Rule{Default: true, Text: "default"}).String() != "default" || (*Rule)(nil).String() != "(default)" {
		t.Error("String")
	}
	r.Restore(5, 2, time.Unix(0, 10), time.Unix(0, 20))
	r.AddStats(1, 1, time.Unix(0, 30))
	r.AddStats(1, 0, time.Time{})
	if m, d, last := r.Stats(); m != 7 || d != 3 || last.UnixNano() != 30 || r.FirstHit().UnixNano() != 10 {
		t.Errorf("stats %d %d %v first %v", m, d, last, r.FirstHit())
	}
	fresh := &Rule{}
	fresh.Restore(1, 1, time.Time{}, time.Time{})
	if _, _, last := fresh.Stats(); !last.IsZero() || !fresh.FirstHit().IsZero() {
		t.Error("zero times restored as set")
	}
	fresh.Hit(0)
	if m, _, last := fresh.Stats(); m != 2 || !last.IsZero() {
		t.Errorf("Hit(0): %d %v", m, last)
	}
	fresh.Hit(40)
	fresh.Hit(50)
	if _, _, last := fresh.Stats(); last.UnixNano() != 50 || fresh.FirstHit().UnixNano() != 40 {
		t.Errorf("Hit: last %v first %v", last, fresh.FirstHit())
	}
	(*Rule)(nil).Hit(1)
	(*Rule)(nil).decide(&Request{Now: 1})
	// Decided: a decision made outside package policy (a RewriteRule).
	dec := &Rule{}
	dec.Decided(60)
	if m, d, last := dec.Stats(); m != 0 || d != 1 || last.UnixNano() != 60 {
		t.Errorf("Decided: %d %d %v", m, d, last)
	}
	(*Rule)(nil).Decided(1)
	p := r.Parts[0]
	p.AddMatches(4)
	p.hit(&Request{})
	p.hit(&Request{Dry: true})
	(*Part)(nil).hit(&Request{})
	if p.Matches() != 5 {
		t.Errorf("part matches %d, want 5", p.Matches())
	}
	// Adopt shares only the parts whose word is the same at the same place.
	n := &Rule{ID: "a"}
	n.NewPart("x")
	n.NewPart("z")
	n.NewPart("y")
	n.NewPart("x")
	n.NewPart("x")
	n.Adopt(r)
	if n.Parts[0].Matches() != 5 || n.Parts[1].Matches() != 0 || n.Parts[3].Matches() != 0 {
		t.Errorf("adopted parts %d %d %d", n.Parts[0].Matches(), n.Parts[1].Matches(), n.Parts[3].Matches())
	}
	n.Parts[2].AddMatches(1)
	if r.Parts[2].Matches() != 1 {
		t.Error("the same word at the same place not shared")
	}
}

// Coverage counts by method, from nothing; a rule that adopts another's
// counters shares its coverage.
func TestRuleCoverage(t *testing.T) {
	r := &Rule{ID: "section", Default: true}
	if r.Covered() != nil {
		t.Fatal("coverage before any decision")
	}
	r.Cover(MethodGet)
	r.Cover(MethodGet)
	r.AddCovered(2, 5)
	c := r.Covered()
	if len(c) != MaxMethods || c[MethodGet] != 2 || c[2] != 5 || c[1] != 0 {
		t.Errorf("coverage %v, want GET 2 and POST 5", c)
	}
	next := &Rule{ID: "section", Default: true}
	next.Adopt(r)
	next.Cover(2)
	if c := r.Covered(); c[2] != 6 {
		t.Errorf("after a reload: POST %d, want 6", c[2])
	}
}

// A rule takes an example a second at most, kept across a reload that
// keeps the rule (Adopt); no rule takes none.
func TestRuleExample(t *testing.T) {
	var none *Rule
	if none.ExampleDue(1) {
		t.Error("a nil rule takes an example")
	}
	r := &Rule{ID: "r"}
	t0 := time.Unix(1_800_000_000, 0)
	if r.Example() != nil || !r.ExampleDue(t0.UnixNano()) {
		t.Fatal("a new rule has an example, or takes none")
	}
	r.SetExample(&Example{Target: "/a", Time: t0})
	for _, c := range []struct {
		at  time.Duration
		due bool
	}{{0, false}, {ExampleEvery - 1, false}, {ExampleEvery, true}, {-time.Hour, false}} {
		if got := r.ExampleDue(t0.Add(c.at).UnixNano()); got != c.due {
			t.Errorf("%v after the example: due %v, want %v", c.at, got, c.due)
		}
	}
	next := &Rule{ID: "r"}
	next.Adopt(r)
	if ex := next.Example(); ex == nil || ex.Target != "/a" || next.ExampleDue(t0.UnixNano()) {
		t.Errorf("after Adopt: %+v", ex)
	}
	next.SetExample(&Example{Target: "/b", Time: t0.Add(ExampleEvery)})
	if r.Example().Target != "/b" {
		t.Error("the adopted rule does not share its example")
	}
}
