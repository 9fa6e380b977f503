package translate

import (
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// TestAuthz22Chain: the order of 2.2's auth_checker hooks from the
// LoadModule lines, as APR sorts hooks of one priority (apr_hooks.c
// 1.5.x, sort_hook: prepare then tsort): registration order (the first
// LoadModule of a module; modules loaded without a line first, by name),
// mod_authz_groupfile and mod_authz_dbm moved after mod_authz_owner
// (their aszPre in 2.2.x register_hooks), mod_authnz_ldap before
// mod_authz_user (its aszPost), mod_authz_default last
// (APR_HOOK_LAST) when loaded.
func TestAuthz22Chain(t *testing.T) {
	load := func(mods ...string) string {
		var b strings.Builder
		for _, m := range mods {
			b.WriteString("LoadModule " + m + "_module modules/mod_" + m + ".so\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name   string
		loaded []string // LoadModule lines, in order
		extra  []string // loaded without a line
		want   string
	}{
		{"upstream httpd.conf order", []string{"authz_host", "authz_groupfile", "authz_user", "authz_dbm", "authz_owner", "authnz_ldap", "authz_default"}, nil,
			"authz_owner authz_groupfile authnz_ldap authz_user authz_dbm authz_default"},
		{"Debian mods-enabled order", []string{"authnz_ldap", "authz_dbm", "authz_default", "authz_groupfile", "authz_host", "authz_owner", "authz_user"}, nil,
			"authnz_ldap authz_owner authz_dbm authz_groupfile authz_user authz_default"},
		{"users first", []string{"authz_user", "authz_groupfile"}, nil, "authz_user authz_groupfile"},
		{"groups first", []string{"authz_groupfile", "authz_user"}, nil, "authz_groupfile authz_user"},
		{"ldap after users moves before them", []string{"authz_user", "authz_dbm", "authnz_ldap"}, nil, "authnz_ldap authz_user authz_dbm"},
		{"owner after groups moves before them", []string{"authz_dbm", "authz_user", "authz_owner"}, nil, "authz_owner authz_dbm authz_user"},
		{"a module loaded twice counts once, first", []string{"authz_user", "authz_dbm", "authz_user"}, nil, "authz_user authz_dbm"},
		{"no default: none last", []string{"authz_dbm", "authz_groupfile"}, nil, "authz_dbm authz_groupfile"},
		{"built in first, by name", []string{"authz_dbm"}, []string{"authz_user", "authz_groupfile", "authnz_ldap"}, "authnz_ldap authz_groupfile authz_user authz_dbm"},
		{"a fragment: Debian's order", nil, []string{"authz_user", "authz_groupfile", "authz_dbm", "authnz_ldap", "authz_owner", "authz_default"},
			"authnz_ldap authz_owner authz_dbm authz_groupfile authz_user authz_default"},
		{"nothing loaded", nil, nil, ""},
		// A LoadModule without arguments (Apache refuses it: the builder's
		// error) names nothing.
		{"a bare LoadModule", []string{""}, []string{"authz_user"}, "authz_user"},
	} {
		text := load(tc.loaded...)
		if len(tc.loaded) == 1 && tc.loaded[0] == "" {
			text = "LoadModule\n"
		}
		ds, err := apacheconf.Parse("httpd.conf", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		mods := map[string]bool{}
		for _, m := range append(slices.Clone(tc.loaded), tc.extra...) {
			mods[m+"_module"] = true
		}
		b := &builder{opt: &Options{Modules: mods}}
		got := b.authz22Chain(prescanOf(ds).loadOrder)
		if got == nil {
			t.Errorf("%s: nil", tc.name)
		}
		for i := range got {
			got[i] = strings.TrimSuffix(got[i], "_module")
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, g, tc.want)
		}
	}
}

// TestTsortHooks: apr_hooks.c's tsort on cases where its way of dragging
// a predecessor forward shows: the first pending predecessor of the
// first hook not placed is placed first, chains of them followed; a
// successor named by a later hook is waited for in the order prepare
// added it; names of hooks not registered are ignored.
func TestTsortHooks(t *testing.T) {
	for _, tc := range []struct {
		names       []string
		preds, succ map[string][]string
		want        string
	}{
		{[]string{"a", "b", "c"}, nil, nil, "a b c"},
		{[]string{"a", "b", "c"}, map[string][]string{"a": {"c"}}, nil, "c a b"},
		{[]string{"a", "b", "c"}, map[string][]string{"a": {"b"}, "b": {"c"}}, nil, "c b a"},
		{[]string{"a", "b", "c"}, map[string][]string{"a": {"c", "b"}}, nil, "c b a"},
		{[]string{"a", "b", "c"}, nil, map[string][]string{"c": {"a"}, "b": {"a"}}, "b c a"},
		{[]string{"a", "b", "c"}, map[string][]string{"a": {"c"}}, map[string][]string{"b": {"a"}}, "c b a"}, // a waits for c (its own), then b (b names a)
		{[]string{"b", "a", "c"}, map[string][]string{"a": {"c"}}, map[string][]string{"b": {"a"}}, "b c a"}, // b names a before a names c
		{[]string{"a", "b"}, map[string][]string{"a": {"x"}}, map[string][]string{"b": {"y"}}, "a b"},
		{[]string{"a", "b", "c", "d"}, map[string][]string{"b": {"d"}}, nil, "a d b c"},
	} {
		preds := make([][]string, len(tc.names))
		succs := make([][]string, len(tc.names))
		for i, n := range tc.names {
			preds[i], succs[i] = tc.preds[n], tc.succ[n]
		}
		var got []string
		for _, i := range tsortHooks(tc.names, preds, succs) {
			got = append(got, tc.names[i])
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%v preds %v succs %v: %q, want %q", tc.names, tc.preds, tc.succ, g, tc.want)
		}
	}
}

// TestAuthz22Modules: 2.2's mod_authz_dbm and mod_authz_groupfile have no
// merger (their module structures' dir merger is NULL), so a section that
// sets any of a module's directives holds the module's whole
// configuration, the rest at create_authz_dbm_dir_config's and
// create_authz_groupfile_dir_config's defaults; AuthDBMGroupFile is
// evaluated, not refused; 2.2's AuthGroupFile takes the type "standard".
func TestAuthz22Modules(t *testing.T) {
	mods := fragmentModules("authz_dbm_module", "authz_default_module", "authz_owner_module")
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	flag := func(p *bool) string {
		if p == nil {
			return "<nil>"
		}
		if *p {
			return "on"
		}
		return "off"
	}
	for _, tc := range []struct {
		lines string
		want  string // file type authoritative, group file authoritative
	}{
		{"AuthDBMGroupFile /etc/g.dbm", "/etc/g.dbm default on, <nil> <nil>"},
		{"AuthzDBMType SDBM", " SDBM on, <nil> <nil>"},
		{"AuthzDBMAuthoritative Off", " default off, <nil> <nil>"},
		{"AuthzDBMAuthoritative Off\nAuthDBMGroupFile /etc/g.dbm\nAuthzDBMType SDBM", "/etc/g.dbm SDBM off, <nil> <nil>"},
		{"AuthGroupFile /etc/groups", "<nil> <nil> <nil>, /etc/groups on"},
		{"AuthGroupFile /etc/groups standard", "<nil> <nil> <nil>, /etc/groups on"},
		{"AuthzGroupFileAuthoritative Off", "<nil> <nil> <nil>,  off"},
	} {
		cfg, err := buildText(t, "<Directory /srv/www>\n"+tc.lines+"\n</Directory>\n", Options{Semantics: Legacy22, Modules: mods})
		if err != nil {
			t.Errorf("%q: %v", tc.lines, err)
			continue
		}
		c := cfg.Dirs[0].Conf
		got := str(c.DBMGroupFile) + " " + str(c.DBMGroupType) + " " + flag(c.DBMAuthoritative) + ", " + str(c.GroupFile) + " " + flag(c.GroupAuthoritative)
		if got != tc.want {
			t.Errorf("%q: %s, want %s", tc.lines, got, tc.want)
		}
		if len(cfg.Unfaithful) != 0 {
			t.Errorf("%q: unfaithful %v", tc.lines, cfg.Unfaithful)
		}
	}
	for _, bad := range []struct{ text, want string }{
		{"AuthGroupFile /etc/groups dbm", "Invalid auth file type: dbm"},
		{"AuthzDBMAuthoritative maybe", "AuthzDBMAuthoritative must be On or Off"},
	} {
		_, err := buildText(t, "<Directory /srv/www>\n"+bad.text+"\n</Directory>\n", Options{Semantics: Legacy22, Modules: mods})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.text, err, bad.want)
		}
	}
	// 2.4 has no AuthzDBMAuthoritative and no type for AuthGroupFile.
	for _, text := range []string{"AuthzDBMAuthoritative Off", "AuthGroupFile /etc/groups standard"} {
		if _, err := buildText(t, "<Directory /srv/www>\n"+text+"\n</Directory>\n", Options{Semantics: Compat24, Modules: mods}); err == nil {
			t.Errorf("2.4 took %q", text)
		}
	}
}

// providerLine skips the provider's name (and "not") and the blanks
// after each, as the strings functions do: on every line of up to six
// bytes of blanks, tabs and letters.
func TestProviderLine(t *testing.T) {
	skip := func(s string) string {
		s = strings.TrimLeft(s, " \t")
		if i := strings.IndexAny(s, " \t"); i >= 0 {
			return strings.TrimLeft(s[i:], " \t")
		}
		return ""
	}
	var gen func(s string, n int)
	gen = func(s string, n int) {
		if got, want := providerLine(s, false), skip(s); got != want {
			t.Errorf("providerLine(%q, false) = %q, want %q", s, got, want)
		}
		if got, want := providerLine(s, true), skip(skip(s)); got != want {
			t.Errorf("providerLine(%q, true) = %q, want %q", s, got, want)
		}
		if n > 0 {
			for _, c := range []string{" ", "\t", "a", "b", "\n"} {
				gen(s+c, n-1)
			}
		}
	}
	gen("", 6)
}
