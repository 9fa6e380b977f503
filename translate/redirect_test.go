package translate

import (
	"strings"
	"testing"
)

// The directives of redirect.go read as Apache reads them: their
// argument errors in Apache's words.
func TestRedirectArguments(t *testing.T) {
	tests := []struct {
		sem  Semantics
		conf string
		err  string // "" for none
	}{
		{Compat24, "Redirect /a\n", "URL to redirect to is missing"},
		{Compat24, "Redirect /a b\n", "Redirect to non-URL"},
		{Compat24, "Redirect bogus /a http://x/\n", "Redirect: invalid first argument (of three)"},
		{Compat24, "Redirect gone /a http://x/\n", "Redirect URL not valid for this status"},
		{Compat24, "Redirect 301 /a\n", "URL to redirect to is missing"},
		{Compat24, "Redirect\n", "Redirect takes one, two or three arguments"},
		{Legacy22, "Redirect /a\n", "Redirect takes two or three arguments"},
		{Compat24, "Redirect 200 /a\n", "a redirect status outside 300-599"},
		{Compat24, "Redirect gone\n", "a server-level Redirect with a status and no URL-path"},
		{Compat24, "RedirectMatch ^/(a http://x/\n", "Regular expression could not be compiled."},
		{Compat24, "RedirectPermanent /a\n", "RedirectPermanent takes two arguments"},
		{Compat24, "<Location /x>\nRedirect http://example.com/%{REQUEST_URI}\n</Location>\n", "ap_expr variables"},
		{Compat24, "ErrorDocument 999 http://x/\n", "Unsupported HTTP response code 999"},
		{Legacy22, "ErrorDocument 418 http://x/\n", ""},
		{Compat24, "ErrorDocument 418 http://x/\n", "Unsupported HTTP response code 418"},
		{Compat24, "UseCanonicalName DNS\n", "UseCanonicalName DNS builds redirect URLs"},
		{Compat24, "UseCanonicalName Sometimes\n", "parameter must be 'on', 'off', or 'dns'"},
		{Compat24, "RedirectRelative maybe\n", "RedirectRelative must be On or Off"},
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

// Server-level redirects of a virtual host: its own before the main
// server's (merge_alias_config).
func TestServerRedirectsMerge(t *testing.T) {
	conf := `Redirect /main http://example.com/main
<VirtualHost *:80>
ServerName b.test:8080
Redirect /own http://example.com/own
</VirtualHost>
`
	cfg, err := buildText(t, conf, Options{Semantics: Compat24, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.VHosts[0].Config.Redirects
	if len(b) != 2 || b[0].Path != "/own" || b[1].Path != "/main" || len(cfg.Redirects) != 1 {
		t.Errorf("redirects: host %+v, main %+v", b, cfg.Redirects)
	}
}

// The forms of Redirect: 2.4's one-argument form in a directory context,
// a status alone, the list form; 2.2 knows only the list form.
func TestRedirectForms(t *testing.T) {
	tests := []struct {
		sem    Semantics
		line   string
		expr   bool
		status int
		path   string
		url    string
	}{
		{Compat24, "Redirect /a http://x/b", false, 302, "/a", "http://x/b"},
		{Compat24, "Redirect permanent /a /b", false, 301, "/a", "/b"},
		{Compat24, "Redirect 303 /a http://x/", false, 303, "/a", "http://x/"},
		{Compat24, "Redirect gone /a", false, 410, "/a", ""},
		{Compat24, "Redirect 404 /a", false, 404, "/a", ""},
		{Compat24, "Redirect http://x/c", true, 302, "", "http://x/c"},
		{Compat24, "Redirect 301 /elsewhere", true, 301, "", "/elsewhere"},
		{Compat24, "Redirect gone", true, 410, "", ""},
		{Compat24, "RedirectMatch 301 http://x/", true, 301, "", "http://x/"},
		{Compat24, "RedirectTemp /a http://x/", false, 302, "/a", "http://x/"},
		{Legacy22, "Redirect 404 /a", false, 404, "/a", ""},
		{Legacy22, "Redirect gone /a", false, 410, "/a", ""},
		{Legacy22, "RedirectPermanent /a http://x/", false, 301, "/a", "http://x/"},
	}
	for _, tt := range tests {
		cfg, err := buildText(t, "<Location /a>\n"+tt.line+"\n</Location>\n", Options{Semantics: tt.sem, Modules: fragmentModules()})
		if err != nil {
			t.Errorf("%s %q: %v", tt.sem, tt.line, err)
			continue
		}
		l := cfg.Locations[0].Conf.Redirects
		var r *Redirect
		switch {
		case tt.expr:
			r = l.Expr
		case len(l.Redirects) == 1:
			r = l.Redirects[0]
		}
		if r == nil || r.Status != tt.status || r.Path != tt.path || r.URL != tt.url {
			t.Errorf("%s %q: %+v, want status %d path %q url %q (expr %v)", tt.sem, tt.line, r, tt.status, tt.path, tt.url, tt.expr)
		}
	}
}

// ErrorDocument: a URL where Apache redirects, none for a local document
// or a message, none at all for 401 (AH00113); a later section's entry
// for a status replaces an earlier one's.
func TestErrorDocuments(t *testing.T) {
	conf := `ErrorDocument 403 http://example.com/denied
ErrorDocument 401 http://example.com/login
ErrorDocument 404 /missing.html
ErrorDocument 500 "Sorry"
ErrorDocument 410 mailto:x@example.com
<Directory /srv/www/a>
ErrorDocument 403 "Go away"
</Directory>
`
	cfg, err := buildText(t, conf, Options{Semantics: Compat24, Modules: fragmentModules()})
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Defaults.Redirects
	for status, want := range map[int]string{403: "http://example.com/denied", 401: "", 404: "", 500: "", 410: "mailto:x@example.com"} {
		if got := l.ErrorURL(status); got != want {
			t.Errorf("ErrorURL(%d) = %q, want %q", status, got, want)
		}
	}
	if got := MergeDirRedirects(l, cfg.Dirs[0].Conf.Redirects).ErrorURL(403); got != "" {
		t.Errorf("merged with <Directory>: ErrorURL(403) = %q, want none", got)
	}
}

// Merged, a deeper section's redirects come first; RedirectRelative and
// UseCanonicalName are inherited where unset.
func TestDirRedirectsMerge(t *testing.T) {
	base := &DirRedirects{Relative: -1, Canonical: 1, Redirects: []*Redirect{{Path: "/base"}}}
	add := &DirRedirects{Relative: 1, Redirects: []*Redirect{{Path: "/add"}}}
	m := MergeDirRedirects(base, add)
	if m.Relative != 1 || m.Canonical != 1 || len(m.Redirects) != 2 || m.Redirects[0].Path != "/add" {
		t.Errorf("merge: %+v", m)
	}
	if MergeDirRedirects(nil, add) != add || MergeDirRedirects(base, nil) != base {
		t.Error("merging with nil")
	}
}
