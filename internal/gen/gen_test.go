package gen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/directive"
)

func newRand(seed, n uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, n)) }

// TestDeterministic: a seed gives the same case, byte for byte; another
// seed gives another case.
func TestDeterministic(t *testing.T) {
	for n := range uint64(50) {
		a := Archive(Generate(newRand(42, n)))
		b := Archive(Generate(newRand(42, n)))
		if !bytes.Equal(a, b) {
			t.Fatalf("seed 42/%d: two runs differ:\n%s\n---\n%s", n, a, b)
		}
		if c := Archive(Generate(newRand(43, n))); bytes.Equal(a, c) {
			t.Errorf("seeds 42/%d and 43/%d gave the same case", n, n)
		}
	}
}

// TestShape: 8-15 requests, a Require or Allow somewhere, no host names,
// no AllowOverride other than None, and the archive parses back as a
// corpus case with the same contents.
func TestShape(t *testing.T) {
	for n := range uint64(300) {
		c := Generate(newRand(7, n))
		if k := len(c.Requests); k < 8 || k > 15 {
			t.Errorf("case %d: %d requests, want 8-15", n, k)
		}
		conf := string(c.Legacy)
		for _, line := range strings.Split(conf, "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && strings.EqualFold(f[0], "AllowOverride") && (len(f) != 2 || f[1] != "None") {
				t.Errorf("case %d: %q", n, line)
			}
		}
		data := Archive(c)
		back, err := apachetest.ParseCase("gen.txtar", data)
		if err != nil {
			t.Fatalf("case %d: the archive does not parse: %v\n%s", n, err, data)
		}
		if string(back.Legacy) != conf || len(back.Requests) != len(c.Requests) || len(back.Files) != len(c.Files) {
			t.Fatalf("case %d: the archive does not round-trip:\n%s", n, data)
		}
		for i, rq := range back.Requests {
			orig := c.Requests[i]
			if rq.Method != orig.Method || rq.Target != orig.Target || rq.ClientIP != orig.ClientIP ||
				rq.User != orig.User || rq.Password != orig.Password || fmt.Sprint(rq.Header) != fmt.Sprint(orig.Header) {
				t.Fatalf("case %d request %d: %q does not round-trip (%+v vs %+v)", n, i, rq.Text, rq, orig)
			}
		}
	}
}

// TestLoads: every generated configuration loads in orderly's own loader.
// (That Apache accepts them is checked by TestRandomDifferential, which
// fails with the configuration when the oracle does not start.)
func TestLoads(t *testing.T) {
	dir := t.TempDir()
	for n := range uint64(500) {
		c := Generate(newRand(11, n))
		l, err := c.Materialize(filepath.Join(dir, fmt.Sprint(n)))
		if err != nil {
			t.Fatal(err)
		}
		opt := translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: l.DocRoot}}
		if len(c.Modules) > 0 {
			// As the differential tells orderly: the oracle's modules.
			opt.Modules = l.OracleOptions().LoadedModules()
		}
		_, err = translate.Load([]string{l.Legacy}, opt)
		if err != nil {
			b, _ := os.ReadFile(l.Legacy)
			t.Fatalf("case %d does not load: %v\n%s", n, err, b)
		}
	}
}

func TestSHA(t *testing.T) {
	// htpasswd -bs u password
	if got, want := SHA("password"), "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="; got != want {
		t.Errorf("SHA(password) = %s, want %s", got, want)
	}
}

// TestGenerateWithZero: GenerateWith with zero Options is Generate, draw
// for draw, and holds no construct.
func TestGenerateWithZero(t *testing.T) {
	for n := range uint64(100) {
		a := Archive(Generate(newRand(3, n)))
		c, cs := GenerateWith(newRand(3, n), Options{})
		if b := Archive(c); !bytes.Equal(a, b) || len(cs) != 0 {
			t.Fatalf("case %d: GenerateWith(Options{}) differs from Generate (constructs %v)", n, cs)
		}
	}
}

// TestWide: wide cases are deterministic, archive and parse back with
// their modules, links and .htaccess files, hold every construct across
// a few hundred cases, and none that Avoid names.
func TestWide(t *testing.T) {
	seen := map[Construct]int{}
	for n := range uint64(400) {
		c, cs := GenerateWith(newRand(21, n), Options{Wide: 1})
		again, _ := GenerateWith(newRand(21, n), Options{Wide: 1})
		data := Archive(c)
		if !bytes.Equal(data, Archive(again)) {
			t.Fatalf("case %d: two runs differ", n)
		}
		for _, x := range cs {
			seen[x]++
		}
		back, err := apachetest.ParseCase("gen.txtar", data)
		if err != nil {
			t.Fatalf("case %d: the archive does not parse: %v\n%s", n, err, data)
		}
		if string(back.Legacy) != string(c.Legacy) || len(back.Requests) != len(c.Requests) || len(back.Files) != len(c.Files) ||
			strings.Join(back.Modules, " ") != strings.Join(c.Modules, " ") {
			t.Fatalf("case %d: the archive does not round-trip:\n%s", n, data)
		}
		for i, rq := range back.Requests {
			if rq.Target != c.Requests[i].Target || rq.Method != c.Requests[i].Method {
				t.Fatalf("case %d request %d: %q does not round-trip", n, i, rq.Text)
			}
			if strings.ContainsAny(rq.Target, " \t") {
				t.Fatalf("case %d request %d: a blank in the target %q", n, i, rq.Target)
			}
		}
		if k := len(c.Requests); k < 8 || k > 15 {
			t.Errorf("case %d: %d requests, want 8-15", n, k)
		}
	}
	for _, x := range Constructs {
		if seen[x] < 10 {
			t.Errorf("construct %s in %d of 400 wide cases", x, seen[x])
		}
	}
	t.Logf("constructs in 400 wide cases: %v", seen)

	// Avoided constructs, directives and modules never appear.
	avoid := map[Construct]bool{Misspelt: true, Htaccess: true, Symlinks: true, BadArgs: true, OutOfContext: true}
	names := map[string]bool{"redirect": true, "addtype": true, "limitrequestbody": true}
	mods := map[string]bool{"rewrite": true, "headers": true}
	for n := range uint64(300) {
		c, cs := GenerateWith(newRand(22, n), Options{Wide: 1, Avoid: avoid, AvoidDirectives: names, AvoidModules: mods})
		for _, m := range c.Modules {
			if mods[m] {
				t.Fatalf("case %d loads %s, which AvoidModules names", n, m)
			}
		}
		for _, x := range cs {
			if avoid[x] {
				t.Fatalf("case %d holds %s, which Avoid names", n, x)
			}
		}
		for _, f := range c.Files {
			if strings.HasSuffix(f.Name, "/.htaccess") || strings.HasSuffix(f.Name, apachetest.SymlinkSuffix) {
				t.Fatalf("case %d has %s", n, f.Name)
			}
		}
		for _, line := range strings.Split(string(c.Legacy), "\n") {
			if f := strings.Fields(line); len(f) > 0 && names[strings.ToLower(f[0])] {
				t.Fatalf("case %d writes %q", n, line)
			}
		}
	}
}

// TestSpace: the curated and probed directives are in the table, and
// none of them is unsafe.
func TestSpace(t *testing.T) {
	known := func(name string) bool { return len(directive.Lookup(name, directive.V24)) > 0 }
	for _, it := range curated {
		if !known(it.name) {
			t.Errorf("curated %s is not a directive of Apache 2.4", it.name)
		}
		if Unsafe(it.name) {
			t.Errorf("curated %s is unsafe", it.name)
		}
	}
	for _, n := range probedNames {
		if !known(n) {
			t.Errorf("probed %s is not a directive of Apache 2.4", n)
		}
		if Unsafe(n) {
			t.Errorf("probed %s is unsafe (rerun with -update-args)", n)
		}
	}
	for _, m := range ExtraModules {
		if !Loadable(m + "_module") {
			t.Errorf("extra module %s is not loadable", m)
		}
	}
}

// TestFinerSwitches: the parts of constructs Avoid can leave out.
func TestFinerSwitches(t *testing.T) {
	avoid := map[Construct]bool{NonfatalOrder: true, TraceAboveRoot: true, UnsetOverrideSections: true, HtaccessNoIndex: true,
		ErrorDocumentLocal: true, DocumentRootMoved: true, NonfatalSkipsCompat: true}
	seenNonfatal, seenTrace := 0, 0
	for n := range uint64(400) {
		c, _ := GenerateWith(newRand(23, n), Options{Wide: 1, Avoid: avoid})
		conf := string(c.Legacy)
		htaccess := false
		for _, f := range c.Files {
			if strings.HasSuffix(f.Name, "/.htaccess") {
				htaccess = true
				conf += "\n" + string(f.Data)
			}
		}
		for _, line := range strings.Split(conf, "\n") {
			f := strings.Fields(line)
			if len(f) > 1 && f[0] == "AllowOverride" && strings.Contains(line, "Nonfatal=") {
				seenNonfatal++
				nonfatal := false
				for _, w := range f[1:] {
					nonfatal = nonfatal || strings.HasPrefix(w, "Nonfatal=")
					if nonfatal && strings.EqualFold(w, "All") || !nonfatal && strings.EqualFold(w, "None") {
						t.Fatalf("case %d: %q", n, line)
					}
				}
			}
			if len(f) > 1 && f[0] == "AllowOverride" && (strings.Contains(line, "Nonfatal=Override") || strings.Contains(line, "Nonfatal=All")) &&
				!strings.Contains(line, " All") && !strings.Contains(line, "None") && (!strings.Contains(line, "Limit") || !strings.Contains(line, "AuthConfig")) {
				t.Fatalf("case %d: %q", n, line)
			}
			if len(f) > 2 && f[0] == "ErrorDocument" && strings.HasPrefix(f[2], "/") {
				t.Fatalf("case %d: %q", n, line)
			}
			if len(f) > 1 && f[0] == "DocumentRoot" && f[1] != "@DOCROOT@" {
				t.Fatalf("case %d: %q", n, line)
			}
		}
		if htaccess {
			dirs := map[string]bool{}
			indexed := map[string]bool{}
			for _, f := range c.Files {
				name, ok := strings.CutPrefix(f.Name, apachetest.DocRootDir+"/")
				if !ok || strings.HasSuffix(name, apachetest.SymlinkSuffix) {
					continue
				}
				d := ""
				if i := strings.LastIndex(strings.TrimSuffix(name, "/"), "/"); i >= 0 {
					d = name[:i]
				}
				dirs[d] = true
				if strings.HasSuffix(name, "/") {
					dirs[strings.TrimSuffix(name, "/")] = true
				}
				if strings.HasSuffix(name, "/index.html") || name == "index.html" {
					indexed[d] = true
				}
			}
			for d := range dirs {
				if !indexed[d] {
					t.Fatalf("case %d: directory %q has no index.html, and the case has .htaccess files", n, d)
				}
			}
		}
		for _, rq := range c.Requests {
			if rq.Method == "TRACE" {
				seenTrace++
				if climbs(rq.Target) {
					t.Fatalf("case %d: TRACE %s", n, rq.Target)
				}
			}
		}
	}
	if seenNonfatal == 0 || seenTrace == 0 {
		t.Errorf("the switches were not exercised: %d Nonfatal lines, %d TRACE requests", seenNonfatal, seenTrace)
	}
}

// At least a fifth of the configurations hold rewrite rules (issue 16),
// server-level and per directory both.
func TestRewriteShare(t *testing.T) {
	server, dir := 0, 0
	const n = 500
	for i := range uint64(n) {
		c := Generate(newRand(33, i))
		conf := string(c.Legacy)
		if strings.Contains(conf, "RewriteRule") && slices.Contains(c.Modules, "rewrite") {
			server++
		}
		if strings.Contains(conf, "    RewriteEngine On") {
			dir++
		}
	}
	if server < n/5 || dir < n/20 {
		t.Errorf("rewrite rules in %d of %d configurations (per directory in %d), want a fifth at least", server, n, dir)
	}
	t.Logf("rewrite rules in %d of %d configurations, per directory in %d", server, n, dir)
}
