package translate

import (
	"strings"
	"testing"
)

// Options lines read as set_options reads them, in each version: the
// options a section sets, or Apache's refusal in its words.
func TestOptionsParse(t *testing.T) {
	const (
		I, S, O, E, M = OptIndexes, OptSymLinks, OptSymOwner, OptExecCGI, OptMulti
		U             = OptUnset
	)
	tests := []struct {
		sem  Semantics
		line string
		want CoreOptions
		err  string // the error, "" for none
	}{
		{Compat24, "Options -Indexes", CoreOptions{Opts: U, Remove: I}, ""},
		{Compat24, "Options Indexes FollowSymLinks MultiViews", CoreOptions{Opts: I | S | M}, ""},
		{Compat24, "Options +SymLinksIfOwnerMatch -ExecCGI", CoreOptions{Opts: U | O, Add: O, Remove: E}, ""},
		{Compat24, "Options None", CoreOptions{}, ""},
		{Compat24, "Options All", CoreOptions{Opts: OptAll}, ""},
		{Compat24, "Options None +Indexes", CoreOptions{Opts: I, Add: I}, ""},
		{Compat24, "Options All -ExecCGI", CoreOptions{Opts: OptAll &^ E, Remove: E}, ""},
		{Compat24, "Options indexes FOLLOWSYMLINKS", CoreOptions{Opts: I | S}, ""},
		{Compat24, "Options RunScripts", CoreOptions{Opts: M | E}, ""},
		{Compat24, "Options IncludesNOEXEC", CoreOptions{Opts: OptIncludes}, ""},
		{Compat24, "Options Includes", CoreOptions{Opts: OptIncludes | OptIncWithExec}, ""},
		{Compat24, "Options Indexes +FollowSymLinks", CoreOptions{}, "legacy.conf:2: Either all Options must start with + or -, or no Option may."},
		{Compat24, "Options +Indexes FollowSymLinks", CoreOptions{}, "Either all Options must start with + or -, or no Option may."},
		{Compat24, "Options Indexes None", CoreOptions{}, "'Options None' must be the first Option given."},
		{Compat24, "Options +None", CoreOptions{}, "You may not use 'Options +None' or 'Options -None'."},
		{Compat24, "Options Indexes All", CoreOptions{}, "'Options All' must be the first option given."},
		{Compat24, "Options -All", CoreOptions{}, "You may not use 'Options +All' or 'Options -All'."},
		{Compat24, "Options Indexes Bogus", CoreOptions{}, "legacy.conf:2: Illegal option Bogus"},
		{Compat24, "Options +Bogus FollowSymLinks", CoreOptions{}, "Illegal option Bogus"},
		{Compat24, "Options FollowSymLin\u212as", CoreOptions{}, "Illegal option"}, // Kelvin sign: ASCII case only
		// 2.2 accepts any mix; its first plain word starts over.
		{Legacy22, "Options Indexes +FollowSymLinks", CoreOptions{Opts: I | S, Add: S}, ""},
		{Legacy22, "Options +Indexes FollowSymLinks", CoreOptions{Opts: S, Add: I}, ""},
		{Legacy22, "Options -Indexes All", CoreOptions{Opts: OptAll, Remove: I}, ""},
		{Legacy22, "Options Indexes None", CoreOptions{Opts: I}, ""},
		{Legacy22, "Options Indexes Bogus", CoreOptions{}, "Illegal option Bogus"},
	}
	for _, tt := range tests {
		// MultiViews is refused (TestOptionsRefusals): read it anyway.
		cfg, err := buildText(t, "<Directory /srv/www>\n"+tt.line+"\n</Directory>\n", Options{Semantics: tt.sem, Modules: fragmentModules(), ForwardUnfaithful: true})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %q: got %v, want %q", tt.sem, tt.line, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q: %v", tt.sem, tt.line, err)
			continue
		}
		got := cfg.Dirs[0].Conf.Options
		if got == nil || got.Rule == nil || got.Rule.Text != tt.line {
			t.Errorf("%s %q: options %+v do not name their line", tt.sem, tt.line, got)
			continue
		}
		o := *got
		o.Rule = nil
		if o != tt.want {
			t.Errorf("%s %q: got %+v, want %+v", tt.sem, tt.line, o, tt.want)
		}
	}
}

// merge_core_dir_configs: a plain Options line replaces, +/- merge, and a
// 2.2 line mixing both leaves its +/- words to the sections below.
func TestOptionsMerge(t *testing.T) {
	const I, S, E = OptIndexes, OptSymLinks, OptExecCGI
	u := func(add, remove OptionBits) CoreOptions { return CoreOptions{Opts: OptUnset, Add: add, Remove: remove} }
	tests := []struct {
		name       string
		base, add  CoreOptions
		wantOpts   OptionBits
		wantAdd    OptionBits
		wantRemove OptionBits
	}{
		{"unset keeps", DefaultOptions(Compat24), u(0, 0), OptUnset | S, 0, 0},
		{"plus adds", DefaultOptions(Compat24), u(I, 0), OptUnset | S | I, I, 0},
		{"minus removes", DefaultOptions(Legacy22), u(0, I), OptUnset | OptAll&^I, 0, I},
		{"plain replaces", CoreOptions{Opts: I | S | E}, CoreOptions{Opts: I}, I, 0, 0},
		{"minus after plus", CoreOptions{Opts: I | S, Add: I}, u(0, I), S, 0, I},
		{"2.2 mix: the plus comes back below", CoreOptions{Opts: S, Add: I}, u(0, 0), S | I, I, 0},
		{"Includes loses exec to IncludesNOEXEC", CoreOptions{Opts: OptIncludes | OptIncWithExec}, CoreOptions{Opts: OptUnset | OptIncludes, Add: OptIncludes}, OptIncludes, OptIncludes, 0},
	}
	for _, tt := range tests {
		got := tt.base.Merge(tt.add)
		if got.Opts != tt.wantOpts || got.Add != tt.wantAdd || got.Remove != tt.wantRemove {
			t.Errorf("%s: got %+v, want {Opts:%d Add:%d Remove:%d}", tt.name, got, tt.wantOpts, tt.wantAdd, tt.wantRemove)
		}
	}
	// Merging is associative, so each walk may merge its own sections
	// first (mergeNow) or one by one (the directory walk).
	vals := []CoreOptions{DefaultOptions(Compat24), u(I, 0), u(0, S), u(E, I), {Opts: I | S}, {Opts: S, Add: I}, u(0, 0)}
	for _, a := range vals {
		for _, b := range vals {
			for _, c := range vals {
				if x, y := a.Merge(b).Merge(c), a.Merge(b.Merge(c)); x.Opts&^OptIncWithExec != y.Opts&^OptIncWithExec {
					t.Fatalf("not associative: %+v %+v %+v: %+v vs %+v", a, b, c, x, y)
				}
			}
		}
	}
}

// AllowOverride Options=... limits what Options an .htaccess file may set:
// Options alone allows All, which lacks SymLinksIfOwnerMatch and
// MultiViews (verified on Apache 2.4: "Option MultiViews not allowed
// here", 500); no Options word allows everything.
func TestOptionsOverride(t *testing.T) {
	tests := []struct {
		allow string
		want  OptionBits
	}{
		{"AllowOverride All", OptOverrideDefault},
		{"AllowOverride AuthConfig", OptOverrideDefault},
		{"AllowOverride Options", OptAll},
		{"AllowOverride Options=Indexes,MultiViews", OptIndexes | OptMulti},
		{"AllowOverride Options=Indexes,,FollowSymLinks", OptIndexes | OptSymLinks},
		{"AllowOverride Options=Indexes,Bogus,ExecCGI", OptIndexes},
		{"AllowOverride Options=", OptOverrideDefault},
		{"AllowOverride Options=None", 0},
	}
	for _, tt := range tests {
		cfg, err := buildText(t, "<Directory /srv/www>\n"+tt.allow+"\n</Directory>\n", Options{Semantics: Compat24, Modules: fragmentModules()})
		if err != nil {
			t.Errorf("%s: %v", tt.allow, err)
			continue
		}
		if got := cfg.Dirs[0].Conf.OverrideOpts; got != tt.want {
			t.Errorf("%s: override_opts %d, want %d", tt.allow, got, tt.want)
		}
	}
	cfg, err := buildText(t, "", Options{Semantics: Compat24, Modules: map[string]bool{}})
	if err != nil {
		t.Fatal(err)
	}
	ht := []struct {
		text  string
		allow OptionBits
		err   string
	}{
		{"Options +MultiViews\n", OptAll, ".htaccess:1: Option MultiViews not allowed here"},
		{"Options +SymLinksIfOwnerMatch\n", OptAll, "Option SymLinksIfOwnerMatch not allowed here"},
		{"Options -Indexes\n", OptIndexes, ""},
		{"Options -Indexes +FollowSymLinks\n", OptIndexes, "Option FollowSymLinks not allowed here"},
		{"Options All\n", OptAll, ""},
		{"Options All\n", OptIndexes, "Option All not allowed here"},
		{"Options None\n", 0, ""},
	}
	for _, tt := range ht {
		_, err := cfg.ParseHtaccessOpts("/srv/www/.htaccess", []byte(tt.text), OrOptions, 0, tt.allow, "/srv")
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q under %d: %v", tt.text, tt.allow, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q under %d: got %v, want %q", tt.text, tt.allow, err, tt.err)
		}
	}
}

// The server's options are each version's default, changed by Options
// outside any section, and a virtual host's merge over the main server's.
func TestOptionsServerDefaults(t *testing.T) {
	for _, tt := range []struct {
		sem        Semantics
		conf       string
		main, host OptionBits
	}{
		{Compat24, "", OptSymLinks, OptSymLinks},
		{Legacy22, "", OptAll, OptAll},
		{Compat24, "Options -FollowSymLinks\n<VirtualHost *:80>\nOptions +Indexes\n</VirtualHost>\n", 0, OptIndexes},
		{Compat24, "Options Indexes\n<VirtualHost *:80>\nOptions -Indexes\n</VirtualHost>\n", OptIndexes, 0},
		{Compat24, "Options -Indexes\n<VirtualHost *:80>\nOptions ExecCGI\n</VirtualHost>\n", OptSymLinks, OptExecCGI},
	} {
		cfg, err := buildText(t, tt.conf, Options{Semantics: tt.sem, Modules: fragmentModules()})
		if err != nil {
			t.Errorf("%q: %v", tt.conf, err)
			continue
		}
		if got := cfg.Defaults.Options.Opts &^ OptUnset; got != tt.main {
			t.Errorf("%s %q: main server %d, want %d", tt.sem, tt.conf, got, tt.main)
		}
		host := cfg
		if len(cfg.VHosts) > 0 {
			host = cfg.VHosts[0].Config
		}
		if got := host.Defaults.Options.Opts &^ OptUnset; got != tt.host {
			t.Errorf("%s %q: virtual host %d, want %d", tt.sem, tt.conf, got, tt.host)
		}
	}
}

// What orderly cannot evaluate is refused at load: MultiViews where
// mod_negotiation is loaded, a handler of mod_cgi where mod_cgi or
// mod_cgid is; otherwise they load. A 2.2 line that 2.4 refuses is a
// difference.
func TestOptionsRefusals(t *testing.T) {
	tests := []struct {
		conf    string
		extra   []string
		refused string // "" loads
	}{
		{"<Directory /srv/www>\nOptions Indexes FollowSymLinks MultiViews\n</Directory>\n", nil, "Options: MultiViews: mod_negotiation"},
		{"<Directory /srv/www>\nOptions +MultiViews\n</Directory>\n", nil, "MultiViews"},
		{"Options RunScripts\n", nil, "MultiViews"},
		{"<Directory /srv/www>\nOptions -MultiViews\n</Directory>\n", nil, ""},
		{"<Directory /srv/www>\nOptions All\n</Directory>\n", nil, ""},
		{"AddHandler cgi-script .cgi\n", nil, ""}, // no mod_cgi
		{"AddHandler cgi-script .cgi\n", []string{"cgid_module"}, "AddHandler: ExecCGI"},
		{"<Directory /srv/www>\nSetHandler cgi-script\n</Directory>\n", []string{"cgi_module"}, "SetHandler: ExecCGI"},
		{"<Files *.pl>\nForceType application/x-httpd-cgi\n</Files>\n", []string{"cgi_module"}, "ForceType: ExecCGI"},
		{"AddType application/x-httpd-cgi;q=1 .cgi\n", []string{"cgi_module"}, "AddType: ExecCGI"},
		{"AddHandler server-parsed .shtml\n", []string{"cgi_module"}, ""},
		{"DefaultType application/x-httpd-cgi\n", []string{"cgi_module"}, ""}, // ignored by 2.4
		{"ScriptAlias /cgi-bin/ /srv/cgi-bin/\n", []string{"cgi_module"}, ""},
	}
	for _, tt := range tests {
		mods := fragmentModules(tt.extra...)
		_, err := buildText(t, tt.conf, Options{Semantics: Compat24, Modules: mods})
		switch {
		case tt.refused == "" && err != nil:
			t.Errorf("%q: %v", tt.conf, err)
		case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
			t.Errorf("%q: got %v, want %q", tt.conf, err, tt.refused)
		}
		if tt.refused != "" {
			cfg, err := buildText(t, tt.conf, Options{Semantics: Compat24, Modules: mods, ForwardUnfaithful: true})
			if err != nil || len(cfg.Unfaithful) == 0 {
				t.Errorf("%q with forward_unfaithful: %v, unfaithful %v", tt.conf, err, cfg)
			}
		}
	}
	// Without mod_negotiation MultiViews does nothing.
	mods := fragmentModules()
	delete(mods, "negotiation_module")
	if _, err := buildText(t, "Options +MultiViews\n", Options{Semantics: Compat24, Modules: mods}); err != nil {
		t.Errorf("MultiViews without mod_negotiation: %v", err)
	}
	// 2.2 accepts a mixed line; the difference is recorded.
	cfg, err := buildText(t, "<Directory /srv/www>\nOptions Indexes +FollowSymLinks\n</Directory>\n", Options{Semantics: Legacy22, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range cfg.Differences {
		found = found || strings.Contains(d.Text, "Either all Options must start with + or -")
	}
	if !found {
		t.Errorf("2.2 mixed Options: no difference in %v", cfg.Differences)
	}
	// DefaultType under 2.2 still maps a type.
	if _, err := buildText(t, "DefaultType application/x-httpd-cgi\n", Options{Semantics: Legacy22, Modules: fragmentModules("cgi_module")}); err == nil {
		t.Errorf("2.2 DefaultType application/x-httpd-cgi with mod_cgi: loaded")
	}
}

// An .htaccess file has a core configuration only once a directive of the
// core appears in it: only then do its (unset) options merge, which
// matters where a 2.2 line mixing + and plain words is inherited.
func TestOptionsHtaccessCoreSlot(t *testing.T) {
	cfg, err := buildText(t, "", Options{Semantics: Legacy22, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		text string
		slot bool
	}{
		{"Order deny,allow\n", false},
		{"Require valid-user\n", true}, // core's in 2.2
		{"<Files x>\n</Files>\n", true},
	} {
		s, err := cfg.ParseHtaccess("/srv/www/.htaccess", []byte(tt.text), OrAll, 0, "/srv")
		if err != nil {
			t.Fatalf("%q: %v", tt.text, err)
		}
		if got := s.Conf.Options != nil; got != tt.slot {
			t.Errorf("%q: core configuration %v, want %v", tt.text, got, tt.slot)
		}
	}
}
