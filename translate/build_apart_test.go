package translate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// TestHostsApart: virtual hosts built apart, on several cores, give what
// building them one after another gives: the same rule IDs (identical
// hosts share ordinals across hosts), rules and errors in configuration
// order, AllowOverride seen, and section numbers that stay unique.
func TestHostsApart(t *testing.T) {
	dir := t.TempDir()
	var conf strings.Builder
	fmt.Fprintf(&conf, "DocumentRoot %q\n<Directory />\n    Order deny,allow\n    Deny from all\n</Directory>\n", dir)
	for i := range 12 {
		fmt.Fprintf(&conf, "<VirtualHost *:80>\n    ServerName h%d.example\n    DocumentRoot %q\n", i, filepath.Join(dir, fmt.Sprint(i)))
		fmt.Fprintf(&conf, "    <Directory %q>\n        Order deny,allow\n        Deny from all\n        Allow from 10.0.0.%d 127.0.0.1\n", filepath.Join(dir, fmt.Sprint(i)), i)
		if i == 3 {
			conf.WriteString("        AllowOverride Limit\n")
		}
		conf.WriteString("    </Directory>\n    <Location /admin>\n        Require valid-user\n        Satisfy any\n")
		if i%5 == 4 {
			conf.WriteString("        <Limit GET>\n            Order nonsense\n        </Limit>\n") // an error inside the host
		}
		conf.WriteString("    </Location>\n")
		conf.WriteString("</VirtualHost>\n")
		if i%4 == 1 {
			fmt.Fprintf(&conf, "<Location /m%d>\n    Deny from all\n    Order sideways\n</Location>\n", i) // and one after it
		}
	}
	f := filepath.Join(dir, "httpd.conf")
	os.WriteFile(f, []byte(conf.String()), 0o644)
	ds, err := apacheconf.Load(f, apacheconf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !hostsApart(prescanOf(ds), Options{}) {
		t.Fatal("hostsApart: false for hosts that can be built apart")
	}
	build := func(opt Options) (*Config, apacheconf.ErrorList) {
		ds, _ := apacheconf.Load(f, apacheconf.Options{})
		opt.BaseDir = dir
		cfg, err := Build(ds, opt)
		el, _ := err.(apacheconf.ErrorList)
		return cfg, el
	}
	// An Omit that names no rule builds one host after another.
	_, seqErrs := build(Options{Omit: map[string]bool{"000000000000": true}})
	_, apartErrs := build(Options{})
	if len(seqErrs) == 0 || !slices.EqualFunc(seqErrs, apartErrs, func(a, b *apacheconf.Error) bool { return a.Error() == b.Error() }) {
		t.Errorf("errors:\none after another:\n%v\napart:\n%v", seqErrs, apartErrs)
	}

	// Without the errors, the models.
	valid := strings.NewReplacer("Order nonsense", "Order allow,deny", "Order sideways", "Order deny,allow").Replace(conf.String())
	os.WriteFile(f, []byte(valid), 0o644)
	seq, errs := build(Options{Omit: map[string]bool{"000000000000": true}})
	apart, errs2 := build(Options{})
	if errs != nil || errs2 != nil {
		t.Fatal(errs, errs2)
	}
	rules := func(c *Config) []string {
		var out []string
		for _, r := range c.Rules {
			out = append(out, r.ID+" "+r.String())
		}
		return out
	}
	if got, want := rules(apart), rules(seq); !slices.Equal(got, want) {
		t.Errorf("rules:\napart:\n%s\none after another:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ids := map[string]bool{}
	for _, r := range apart.Rules {
		if r.ID == "" || ids[r.ID] {
			t.Errorf("rule %s: ID %q missing or not unique", r, r.ID)
		}
		ids[r.ID] = true
	}
	orders := map[int]bool{}
	for _, c := range append([]*Config{apart}, vhostConfigs(apart)...) {
		for _, s := range slices.Concat(c.Dirs, c.Locations) {
			if s.Order < 0 {
				t.Errorf("%s: order %d", s, s.Order)
			}
			orders[s.Order] = true
		}
	}
	if len(orders) != 1+12*2+3 {
		t.Errorf("%d distinct section numbers, want %d", len(orders), 1+12*2+3)
	}
	seqDiff, apartDiff := fmt.Sprint(seq.Differences), fmt.Sprint(apart.Differences)
	if seqDiff != apartDiff || strings.Contains(apartDiff, "AllowOverride is never set") {
		t.Errorf("differences:\napart: %s\none after another: %s", apartDiff, seqDiff)
	}
}

func vhostConfigs(c *Config) []*Config {
	var out []*Config
	for _, v := range c.VHosts {
		out = append(out, v.Config)
	}
	return out
}

// TestPrescan: one walk of the directives numbers the modules of the
// LoadModule lines by their first, in sections too, counts the virtual
// hosts at the top level, and finds a method a <Limit> in one of them
// would register (not one elsewhere).
func TestPrescan(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		order      map[string]int
		hosts      int
		custom     bool
	}{
		{"loads in order, first counts", "LoadModule b_module b.so\n<IfDefine X>\nLoadModule a_module a.so\n</IfDefine>\nLoadModule b_module b.so\nLoadModule\nLoadModule c_module c.so\n",
			map[string]int{"b_module": 0, "a_module": 1, "c_module": 2}, 0, false},
		{"hosts", "<VirtualHost *:80>\n<Location />\n<Limit GET POST>\nRequire all denied\n</Limit>\n</Location>\nLoadModule h_module h.so\n</VirtualHost>\n<virtualhost *:81>\n</virtualhost>\n",
			map[string]int{"h_module": 0}, 2, false},
		{"a method of its own in a host", "<VirtualHost *:80>\n<Location />\n<LimitExcept GET FROB>\nRequire all denied\n</LimitExcept>\n</Location>\n</VirtualHost>\n",
			map[string]int{}, 1, true},
		{"a method of its own outside hosts", "<Location />\n<Limit FROB>\nRequire all denied\n</Limit>\n</Location>\n<VirtualHost *:80>\n</VirtualHost>\n",
			map[string]int{}, 1, false},
		{"a host in a section is none", "<IfDefine X>\n<VirtualHost *:80>\n<Limit FROB>\n</Limit>\n</VirtualHost>\n</IfDefine>\n",
			map[string]int{}, 0, false},
	} {
		ds, err := apacheconf.Parse("httpd.conf", []byte(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		p := prescanOf(ds)
		if !maps.Equal(p.loadOrder, tc.order) || p.hosts != tc.hosts || p.customMethod != tc.custom {
			t.Errorf("%s: %v %d %v, want %v %d %v", tc.name, p.loadOrder, p.hosts, p.customMethod, tc.order, tc.hosts, tc.custom)
		}
		if got, want := hostsApart(p, Options{}), tc.hosts >= 2 && !tc.custom && runtime.GOMAXPROCS(0) >= 2; got != want {
			t.Errorf("%s: hostsApart %v", tc.name, got)
		}
	}
	two := &prescan{hosts: 2}
	if hostsApart(two, Options{Omit: map[string]bool{"x": true}}) {
		t.Error("hostsApart with rules to omit")
	}
}

// TestSlab: a slab hands out distinct zero values and lists, a list
// capped at its length (an append past it leaves the next alone), and
// a list too long to share an array its own.
func TestSlab(t *testing.T) {
	var s slab[int]
	seen := map[*int]bool{}
	for i := range 100 {
		v := s.new(16)
		if *v != 0 || seen[v] {
			t.Fatalf("value %d: %d, seen %v", i, *v, seen[v])
		}
		*v = i + 1
		seen[v] = true
	}
	a := s.list(3, 16)
	b := s.list(2, 16)
	if len(a) != 0 || cap(a) != 3 || cap(b) != 2 {
		t.Fatalf("lists: len %d cap %d, cap %d", len(a), cap(a), cap(b))
	}
	b = append(b, 7, 8)
	a = append(a, 1, 2, 3, 4)
	if !slices.Equal(b, []int{7, 8}) || !slices.Equal(a, []int{1, 2, 3, 4}) {
		t.Errorf("lists: %v %v", a, b)
	}
	long := s.list(10, 16)
	next := s.list(1, 16)
	long = append(long, make([]int, 10)...)
	next = append(next, 5)
	if cap(long) != 10 || next[0] != 5 || slices.ContainsFunc(long, func(v int) bool { return v != 0 }) {
		t.Errorf("a long list: %v, next %v", long, next)
	}
}

// TestSetPerMethod: a value set for the methods of a <Limit> mask,
// outside any (every method) and for none, with its rule or without.
func TestSetPerMethod(t *testing.T) {
	r := &policy.Rule{Text: "Order allow,deny"}
	for _, mask := range []policy.MethodMask{policy.AllMethods, 0, 1, 1<<63 | 1<<5, policy.AllMethods &^ 4} {
		var vals [policy.MaxMethods]policy.Order
		var rules [policy.MaxMethods]*policy.Rule
		vals[3] = policy.MutualFailure
		setPerMethod(&vals, &rules, policy.AllowDeny, r, mask)
		setPerMethod(&vals, nil, policy.AllowDeny, nil, mask)
		for i := range vals {
			set := mask&(1<<uint(i)) != 0
			want, wantRule := policy.DenyAllow, (*policy.Rule)(nil)
			if i == 3 {
				want = policy.MutualFailure
			}
			if set {
				want, wantRule = policy.AllowDeny, r
			}
			if vals[i] != want || rules[i] != wantRule {
				t.Errorf("mask %x, method %d: %v %v, want %v %v", mask, i, vals[i], rules[i], want, wantRule)
			}
		}
	}
	for n := range 70 {
		s := make([]int, n)
		fill(s, 7)
		if slices.ContainsFunc(s, func(v int) bool { return v != 7 }) {
			t.Errorf("fill of %d: %v", n, s)
		}
	}
}
