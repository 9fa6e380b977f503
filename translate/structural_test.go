package translate

import (
	"fmt"
	"strings"
	"testing"
)

// TestStructural: the access lines whose deletion would change how their
// section merges are marked (policy.Rule.Structural), and no others:
// retire judges them with their section, not on their own.
func TestStructural(t *testing.T) {
	cfg, err := loadConf(t, `<Directory "@DOCROOT@/sole">
    Deny from all
</Directory>
<Directory "@DOCROOT@/ordered">
    Order deny,allow
    Deny from all
</Directory>
<Directory "@DOCROOT@/two">
    Deny from 10.0.0.0/8
    Allow from 10.1.0.0/16
</Directory>
<Directory "@DOCROOT@/satisfied">
    Satisfy Any
    Allow from 10.1.0.0/16
</Directory>
<Directory "@DOCROOT@/req">
    Require valid-user
</Directory>
<Directory "@DOCROOT@/reqs">
    Require ip 10.2.0.0/16
    Require user alice
    <Limit POST>
        Require user bob
    </Limit>
    <RequireAll>
        Require env ok
    </RequireAll>
    <RequireAll>
        Require ip 10.3.0.0/16
        Require not env bad
    </RequireAll>
</Directory>
<Directory "@DOCROOT@/limited">
    <Limit POST>
        Require user carol
    </Limit>
    Require user dave
</Directory>
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"Deny from all":          true, // /sole: its section would inherit
		"Deny from 10.0.0.0/8":   false,
		"Allow from 10.1.0.0/16": false,
		"Require valid-user":     true,
		"Require ip 10.2.0.0/16": false,
		"Require user alice":     false,
		"Require user bob":       false, // POST is in the container's methods anyway
		"Require env ok":         true,  // the only line of its <RequireAll>
		"Require ip 10.3.0.0/16": true,  // would leave negated lines only
		"Require not env bad":    false,
		"Require user carol":     false,
		"Require user dave":      true, // the container would apply to POST alone
	}
	seen := map[string]int{}
	for _, r := range cfg.Rules {
		w, ok := want[r.Text]
		if !ok {
			continue
		}
		seen[r.Text]++
		if r.Text == "Deny from all" && r.Line == 6 {
			w = false // /ordered names an Order
		}
		if r.Structural != w {
			t.Errorf("%s:%d %q: structural %v, want %v", r.File, r.Line, r.Text, r.Structural, w)
		}
	}
	for text := range want {
		if seen[text] == 0 {
			t.Errorf("no rule %q", text)
		}
	}
}

// TestSectionLines: a section's Lines are the rules written in it, in a
// <Limit> or a Require container of it too, settings included, but not
// those of a section nested in it; a virtual host's sections have theirs.
func TestSectionLines(t *testing.T) {
	cfg, err := buildText(t, `SetEnvIf Referer x ok
<Directory /srv/www>
    Order deny,allow
    <Files "*.sql">
        Deny from all
    </Files>
    Deny from env=ok
    <Limit POST>
        Require valid-user
    </Limit>
    AuthName "x"
</Directory>
<VirtualHost *:80>
    <Location /a>
        Allow from 10.0.0.0/8
    </Location>
</VirtualHost>
`, Options{Semantics: Legacy22, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	lines := func(s *Section) string {
		var out []string
		for _, r := range s.Lines {
			out = append(out, fmt.Sprintf("%d %s", r.Line, r.Text))
		}
		return strings.Join(out, "|")
	}
	dir := cfg.Dirs[0]
	if got, want := lines(dir), `3 Order deny,allow|7 Deny from env=ok|9 Require valid-user|11 AuthName "x"`; got != want {
		t.Errorf("<Directory> lines %q, want %q", got, want)
	}
	if got, want := lines(dir.Conf.Files[0]), "5 Deny from all"; got != want {
		t.Errorf("<Files> lines %q, want %q", got, want)
	}
	if got, want := lines(cfg.VHosts[0].Config.Locations[0]), "15 Allow from 10.0.0.0/8"; got != want {
		t.Errorf("<Location> in the virtual host: lines %q, want %q", got, want)
	}
}
