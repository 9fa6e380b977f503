package translate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	if !hostsApart(ds, Options{}) {
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
