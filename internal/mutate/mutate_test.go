package mutate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const src = `package p

func f(a, b int) bool {
	x := a + b*2 - a/b + a%b
	x++
	b--
	return -x < a && a <= b || a > b && a >= b || a == b || a != b
}

func (r *T) g(s string) string { return s + "lit" + s }

func (T) h(s, t string) string { return s + t }

var top = 1 - 2
`

func TestFind(t *testing.T) {
	ms, err := Find("p.go", []byte(src), Scope{File: "p.go"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Kind+" "+m.Func+" "+m.From+">"+m.To+" "+m.Marked())
	}
	want := []string{
		"ARITHMETIC_BASE f +>- x := a «+» b*2 - a/b + a%b",
		"ARITHMETIC_BASE f *>/ x := a + b«*»2 - a/b + a%b",
		"ARITHMETIC_BASE f ->+ x := a + b*2 «-» a/b + a%b",
		"ARITHMETIC_BASE f />* x := a + b*2 - a«/»b + a%b",
		"ARITHMETIC_BASE f +>- x := a + b*2 - a/b «+» a%b",
		"ARITHMETIC_BASE f %>* x := a + b*2 - a/b + a«%»b",
		"INCREMENT_DECREMENT f ++>-- x«++»",
		"INCREMENT_DECREMENT f -->++ b«--»",
		"INVERT_NEGATIVES f ->+ return «-»x < a && a <= b || a > b && a >= b || a == b || a != b",
		"CONDITIONALS_BOUNDARY f <><= return -x «<» a && a <= b || a > b && a >= b || a == b || a != b",
		"CONDITIONALS_NEGATION f <>>= return -x «<» a && a <= b || a > b && a >= b || a == b || a != b",
		"CONDITIONALS_BOUNDARY f <=>< return -x < a && a «<=» b || a > b && a >= b || a == b || a != b",
		"CONDITIONALS_NEGATION f <=>> return -x < a && a «<=» b || a > b && a >= b || a == b || a != b",
		"CONDITIONALS_BOUNDARY f >>>= return -x < a && a <= b || a «>» b && a >= b || a == b || a != b",
		"CONDITIONALS_NEGATION f >><= return -x < a && a <= b || a «>» b && a >= b || a == b || a != b",
		"CONDITIONALS_BOUNDARY f >=>> return -x < a && a <= b || a > b && a «>=» b || a == b || a != b",
		"CONDITIONALS_NEGATION f >=>< return -x < a && a <= b || a > b && a «>=» b || a == b || a != b",
		"CONDITIONALS_NEGATION f ==>!= return -x < a && a <= b || a > b && a >= b || a «==» b || a != b",
		"CONDITIONALS_NEGATION f !=>== return -x < a && a <= b || a > b && a >= b || a == b || a «!=» b",
		// g: both "+" have a literal operand: strings, skipped.
		"ARITHMETIC_BASE T.h +>- func (T) h(s, t string) string { return s «+» t }",
		"ARITHMETIC_BASE  ->+ var top = 1 «-» 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Find:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range ms {
		out, err := Apply([]byte(src), m)
		if err != nil {
			t.Fatal(err)
		}
		if line := strings.Split(string(out), "\n")[m.Line-1]; !strings.Contains(line, strings.Replace(m.Marked(), "«"+m.From+"»", m.To, 1)) {
			t.Errorf("%s applied: line %q", m, line)
		}
	}
	// Applying a mutant to other source is refused, not a silent no-op.
	if _, err := Apply([]byte("package p"), ms[0]); err == nil {
		t.Error("Apply on the wrong source: no error")
	}
}

func TestFindScope(t *testing.T) {
	ms, err := Find("p.go", []byte(src), Scope{File: "p.go", Funcs: []string{"T.h"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Func != "T.h" {
		t.Errorf("scope T.h: %v", ms)
	}
	if got := missingFuncs([]byte(src), []string{"f", "T.g", "g", "nope"}); !slices.Equal(got, []string{"g", "nope"}) {
		t.Errorf("missingFuncs = %v", got)
	}
	// Generic and parenthesised receivers are named by their type.
	generic := "package p\nfunc (s *S[K]) a() int { return 1 - 2 }\nfunc (s (S2[K, V])) b() int { return 1 - 2 }\n"
	ms, err = Find("g.go", []byte(generic), Scope{File: "g.go", Funcs: []string{"S.a", "S2.b"}})
	if err != nil || len(ms) != 2 || ms[0].Func != "S.a" || ms[1].Func != "S2.b" {
		t.Errorf("generic receivers: %v %v", ms, err)
	}
}

func TestParseList(t *testing.T) {
	good := "# c\nscope a.go\nscope b.go F T.m\nwithout x_test.go\nstamp abc\n\n" +
		"a.go:3:7 CONDITIONALS_BOUNDARY (F) if v «<» lo {\n\tequivalent: one,\n\ttwo.\n" +
		"a.go:9:2 INCREMENT_DECREMENT () n«++»\n\topen: not yet.\n"
	l, err := ParseList("m.txt", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Scopes) != 2 || !slices.Equal(l.Scopes[1].Funcs, []string{"F", "T.m"}) || l.Stamp != "abc" || !slices.Equal(l.Without, []string{"x_test.go"}) {
		t.Errorf("scopes %v stamp %q", l.Scopes, l.Stamp)
	}
	if len(l.Survivors) != 2 || l.Survivors[0].Reason != "equivalent: one, two." || !l.Survivors[0].Equivalent() || l.Survivors[1].Equivalent() {
		t.Errorf("survivors %+v", l.Survivors)
	}
	if k := l.Survivors[0].Key(); k != "CONDITIONALS_BOUNDARY a.go (F) if v «<» lo {" {
		t.Errorf("key %q", k)
	}
	for _, c := range []struct{ in, err string }{
		{"stamp x\n", "no scope line"},
		{"scope a.go\n\tequivalent: x\n", "m.txt:2: an indented line belongs under a survivor"},
		{"scope a.go\na.go:1:1 CONDITIONALS_BOUNDARY (F) a «<» b\n", "m.txt:2: the reason must start with"},
		{"scope a.go\na.go:1:1 CONDITIONALS_BOUNDARY (F) a «<» b\n\tbecause\n", "m.txt:2: the reason must start with"},
		{"scope a.go\na.go:1:1 FLIP (F) a «<» b\n", "m.txt:2: unknown mutator"},
		{"scope a.go\na.go:1 CONDITIONALS_BOUNDARY (F) a «<» b\n", "m.txt:2: want file:line:col"},
		{"scope a.go\na.go:1:1 CONDITIONALS_BOUNDARY (F) a < b\n", "m.txt:2: want the mutated token"},
		{"scope a.go\na.go:1:1 CONDITIONALS_BOUNDARY F a «<» b\n", "m.txt:2: want \"file:line:col MUTATOR (func) code\""},
		{"scope\n", "m.txt:1: scope names a file"},
		{"scope a.go\nwithout a.go\n", "m.txt:2: without names one test file"},
		{"scope a.go\nfloor 0.95\n", "m.txt:2: floor is a kill rate between 0 and 0.90"},
		{"scope a.go\nfloor x\n", "m.txt:2: floor is a kill rate"},
	} {
		_, err := ParseList("m.txt", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		}
	}
}

func TestWithStamp(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"scope a.go\nstamp old\n\nx\n", "scope a.go\nstamp new\n\nx\n"},
		{"# h\nscope a.go\nscope b.go\n\nx\n", "# h\nscope a.go\nscope b.go\nstamp new\n\nx\n"},
	} {
		if got := string(WithStamp([]byte(c.in), "new")); got != c.want {
			t.Errorf("WithStamp(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJudge(t *testing.T) {
	mk := func(code string, st Status) Result {
		return Result{Mutant: Mutant{File: "a.go", Kind: ConditionalsBoundary, Func: "F", Code: code, Rel: strings.Index(code, "<"), From: "<"}, Status: st}
	}
	l, err := ParseList("m.txt", []byte("scope a.go\n"+
		"a.go:1:1 CONDITIONALS_BOUNDARY (F) if a «<» b {\n\tequivalent: x\n"+
		"a.go:5:1 CONDITIONALS_BOUNDARY (F) if a «<» b {\n\tharmless: the same line twice: each entry excuses one\n"+
		"a.go:7:1 CONDITIONALS_BOUNDARY (F) if c «<» d {\n\tequivalent: gone\n"))
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	for range 16 {
		rs = append(rs, mk("k «<» 1", Killed))
	}
	rs = append(rs, mk("if a < b {", Lived), mk("if a < b {", Lived), mk("if a < b {", Lived),
		mk("t < 1", TimedOut), mk("s < t", NotViable))
	v := Judge(l, rs)
	if v.Killed != 16 || v.TimedOut != 1 || v.NotViable != 1 || v.Lived != 3 || v.Equivalent != 1 {
		t.Errorf("counts %+v", v)
	}
	if len(v.Unlisted) != 1 || len(v.Stale) != 1 || v.Stale[0].Line != 6 {
		t.Errorf("unlisted %v stale %v", v.Unlisted, v.Stale)
	}
	// 17 killed of 17+3-1 viable non-equivalent.
	if e := v.Efficacy(); e < 0.894 || e > 0.895 || v.OK(l) {
		t.Errorf("efficacy %.4f ok %v", e, v.OK(l))
	}
	stale := v.Stale
	v.Unlisted, v.Stale = nil, nil
	if v.OK(l) {
		t.Error("89.5% passes the 90% bar")
	}
	// A floor lets a package under way pass above it, unreviewed
	// survivors and all, but not with a stale entry.
	floored := *l
	floored.Floor = 0.85
	v.Unlisted = []Mutant{{}}
	if !v.OK(&floored) {
		t.Error("89.5% fails a floor of 85%")
	}
	if v.Stale = stale; v.OK(&floored) {
		t.Error("a stale entry passes under a floor")
	}
	floored.Floor, v.Stale, v.Unlisted = 0.9, nil, nil
	if v.OK(&floored) {
		t.Error("89.5% passes a floor of 90%")
	}
	v.Killed++
	if !v.OK(l) {
		t.Errorf("%.4f fails", v.Efficacy())
	}
}

func TestStamp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package a")
	write("mutants.txt", "scope a.go")
	write("sub/b.go", "package b")
	s1, _ := Stamp(dir)
	write("mutants.txt", "scope a.go\nstamp x")
	write("sub/b.go", "package c")
	if s2, _ := Stamp(dir); s2 != s1 {
		t.Error("the stamp changed with mutants.txt or a sub-package")
	}
	c1, _ := CodeStamp(dir)
	for _, f := range []string{"a_test.go", "testdata/x/case.txt", "a.go"} {
		write(f, "changed "+f)
		s, _ := Stamp(dir)
		if s == s1 {
			t.Errorf("the stamp ignores %s", f)
		}
		s1 = s
		c, _ := CodeStamp(dir)
		if code := f == "a.go"; (c != c1) != code {
			t.Errorf("changing %s changes the code stamp: %v, want %v", f, c != c1, code)
		}
	}
}

// TestRunSample mutates the fixture module in testdata with the real go
// command: Clamp's negations die, its boundaries live (one reviewed, one
// not), Join's "-" does not compile.
func TestRunSample(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to run mutants: ", err)
	}
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/sample")); err != nil {
		t.Fatal(err)
	}
	p, err := Load(root, "./.")
	if err != nil {
		t.Fatal(err)
	}
	p.Rel = "."
	r := &Runner{Go: goCmd, Workers: 2, Timeout: 2 * time.Minute}
	if _, err := r.Baseline(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	rs, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, res := range rs {
		got = append(got, res.Status.String()+" "+Entry(res.Mutant))
	}
	want := []string{
		"LIVED clamp.go:7:7 CONDITIONALS_BOUNDARY (Clamp) if v «<» lo {",
		"KILLED clamp.go:7:7 CONDITIONALS_NEGATION (Clamp) if v «<» lo {",
		"LIVED clamp.go:10:7 CONDITIONALS_BOUNDARY (Clamp) if v «>» hi {",
		"KILLED clamp.go:10:7 CONDITIONALS_NEGATION (Clamp) if v «>» hi {",
		"NOT VIABLE clamp.go:17:42 ARITHMETIC_BASE (Join) func Join(a, b string) string { return a «+» b }",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	v := Judge(p.List, rs)
	if len(v.Unlisted) != 1 || v.Unlisted[0].Line != 10 || v.Equivalent != 1 || v.OK(p.List) {
		t.Errorf("verdict %+v", v)
	}
	// A planted failure of the unmutated tests stops the run.
	if err := os.WriteFile(filepath.Join(root, "clamp_test.go"), []byte("package sample\nimport \"testing\"\nfunc TestX(t *testing.T) { t.Fatal(1) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Baseline(context.Background(), p); err == nil || !strings.Contains(err.Error(), "fails without mutants") {
		t.Errorf("baseline of failing tests: %v", err)
	}
}

func TestSample(t *testing.T) {
	order := func(seed uint64) []int {
		ms := make([]Mutant, 20)
		for i := range ms {
			ms[i].Line = i
		}
		Sample(ms, seed)
		var lines []int
		for _, m := range ms {
			lines = append(lines, m.Line)
		}
		return lines
	}
	a, b := order(1), order(2)
	if !slices.Equal(a, order(1)) {
		t.Error("the same seed draws another order")
	}
	if slices.Equal(a, b) {
		t.Error("two seeds draw the same order")
	}
	if s := slices.Sorted(slices.Values(a)); s[0] != 0 || s[19] != 19 || len(slices.Compact(s)) != 20 {
		t.Errorf("not a permutation: %v", a)
	}
}

// TestRunDeadline: past its deadline a runner hands out no more mutants,
// and returns the results of those it tested.
func TestRunDeadline(t *testing.T) {
	p := &Package{Root: t.TempDir(), Rel: ".", List: &List{}, Mutants: []Mutant{{File: "x.go"}, {File: "y.go"}}}
	r := &Runner{Workers: 1, Timeout: time.Second, Deadline: time.Now().Add(-time.Second)}
	rs, err := r.Run(context.Background(), p)
	if err != nil || len(rs) != 0 {
		t.Errorf("Run past its deadline: %v, %v", rs, err)
	}
}
