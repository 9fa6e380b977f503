package translate

import (
	"strings"
	"testing"
)

// The directives of limits.go read as Apache reads them: their argument
// errors in Apache's words.
func TestLimitsArguments(t *testing.T) {
	tests := []struct {
		sem  Semantics
		conf string
		err  string // "" for none
	}{
		{Compat24, "LimitRequestBody 1024\n", ""},
		{Compat24, "LimitRequestBody -1\n", "LimitRequestBody requires a non-negative integer."},
		{Compat24, "LimitRequestBody 10k\n", "LimitRequestBody requires a non-negative integer."},
		{Compat24, "LimitRequestBody 99999999999999999999\n", "LimitRequestBody argument is not parsable."},
		{Compat24, "LimitRequestBody\n", "LimitRequestBody takes one argument, Limit (in bytes) on maximum size of request message body"},
		{Compat24, "LimitXMLRequestBody -5\n", "LimitXMLRequestBody requires a non-negative integer."},
		{Compat24, "LimitRequestLine -1\n", `LimitRequestLine "-1" must be a non-negative integer`},
		{Compat24, "LimitRequestFields -1\n", `LimitRequestFields "-1" must be a non-negative integer (0 = no limit)`},
		{Compat24, "LimitRequestFieldSize -1\n", `LimitRequestFieldsize "-1" must be a non-negative integer`},
		{Compat24, "<Directory /srv/www>\nLimitRequestLine 100\n</Directory>\n", "LimitRequestLine not allowed in <Directory> context"},
		{Compat24, "HttpProtocolOptions Strict Unsafe\n", "HttpProtocolOptions 'Strict' and 'Unsafe' are mutually exclusive"},
		{Compat24, "HttpProtocolOptions RegisteredMethods\nHttpProtocolOptions LenientMethods\n", "'RegisteredMethods' and 'LenientMethods' are mutually exclusive"},
		{Compat24, "HttpProtocolOptions Sloppy\n", "HttpProtocolOptions accepts 'Unsafe' or 'Strict' (default)"},
		{Compat24, "HttpProtocolOptions Unsafe\n", "HttpProtocolOptions Unsafe lets Apache read"},
		{Compat24, "StrictHostCheck maybe\n", "StrictHostCheck must be On or Off"},
		{Compat24, "ServerName www.example.com:70000\n", `The port number "www.example.com:70000" is outside the appropriate range (i.e., 1..65535).`},
	}
	for _, tt := range tests {
		_, err := buildText(t, tt.conf, Options{Semantics: tt.sem, Modules: fragmentModules()})
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s %q: %v", tt.sem, tt.conf, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s %q: got %v, want %q", tt.sem, tt.conf, err, tt.err)
		}
	}
}

// LimitXMLRequestBody refuses only what mod_dav's handler reads: inert
// without mod_dav, refused where it is loaded.
func TestLimitXMLRequestBodyNeedsDAV(t *testing.T) {
	if _, err := buildText(t, "LimitXMLRequestBody 100\n", Options{Semantics: Compat24, Modules: fragmentModules()}); err != nil {
		t.Errorf("without mod_dav: %v", err)
	}
	_, err := buildText(t, "LimitXMLRequestBody 100\n", Options{Semantics: Compat24, Modules: fragmentModules("dav_module")})
	if err == nil || !strings.Contains(err.Error(), "mod_dav's handler reads") {
		t.Errorf("with mod_dav: %v", err)
	}
}

// Request limits: a virtual host takes the main server's as they are
// where it is read (ap_init_virtual_host), its own when it sets them;
// HttpProtocolOptions and StrictHostCheck merge per setting.
func TestServerLimitsMerge(t *testing.T) {
	conf := `LimitRequestLine 100
HttpProtocolOptions RegisteredMethods
<VirtualHost *:80>
ServerName a.test
LimitRequestFields 5
</VirtualHost>
LimitRequestLine 150
StrictHostCheck On
<VirtualHost *:80>
ServerName b.test:8080
HttpProtocolOptions LenientMethods
</VirtualHost>
`
	cfg, err := buildText(t, conf, Options{Semantics: Compat24, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	main := cfg.Limits
	if main.RequestLine != 150 || main.Fields != 100 || main.StrictHostCheck != 1 || !main.Protocol.Registered() {
		t.Errorf("main: %+v", main)
	}
	a, b := cfg.VHosts[0].Config.Limits, cfg.VHosts[1].Config.Limits
	if a.RequestLine != 100 || a.Fields != 5 || a.StrictHostCheck != 1 || !a.Protocol.Registered() {
		t.Errorf("a.test: %+v", a)
	}
	if b.RequestLine != 150 || b.Fields != 100 || b.Protocol.Registered() || b.Port != 8080 || b.Name != "b.test" {
		t.Errorf("b.test: %+v", b)
	}
}

// LimitRequestBody merges as merge_core_dir_configs does: a section that
// sets it replaces what it inherits, one that does not keeps it.
func TestDirLimitsMerge(t *testing.T) {
	base := &DirLimits{Body: 100}
	if m := MergeDirLimits(base, &DirLimits{Body: -1}); m.Body != 100 {
		t.Errorf("unset: %+v", m)
	}
	if m := MergeDirLimits(base, &DirLimits{Body: 0}); m.Body != 0 {
		t.Errorf("LimitRequestBody 0: %+v", m)
	}
	if MergeDirLimits(nil, base) != base || MergeDirLimits(base, nil) != base {
		t.Error("merging with nil")
	}
}

// StrictHostCheck On needs the main server's name wherever it would be
// matched (no virtual host, or one without a ServerName): without
// ServerName Apache derives it from its machine's host name, which
// orderly cannot know, so the line is refused rather than answering 400
// to every request.
func TestStrictHostCheckNeedsName(t *testing.T) {
	tests := []struct {
		conf, err string
	}{
		{"StrictHostCheck On\n", "StrictHostCheck On with no ServerName"},
		{"ServerName www.example.test\nStrictHostCheck On\n", ""},
		{"StrictHostCheck On\n<VirtualHost *:80>\nServerName a.test\n</VirtualHost>\n", ""},
		{"<VirtualHost *:80>\nStrictHostCheck On\n</VirtualHost>\n", "StrictHostCheck On with no ServerName"},
		{"StrictHostCheck Off\n", ""},
	}
	for _, tt := range tests {
		_, err := buildText(t, tt.conf, Options{Semantics: Compat24, Modules: fragmentModules()})
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.conf, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: got %v, want %q", tt.conf, err, tt.err)
		}
	}
}
