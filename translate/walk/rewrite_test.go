package walk

import (
	"os"

	"github.com/orderly-proxy/orderly/translate"
	"path/filepath"
	"strings"
	"testing"
)

func rewriteEngine(t testing.TB, conf string, files ...string) (*Engine, string) {
	t.Helper()
	return engineMods(t, translate.Compat24, append([]string{"rewrite_module"}, translate.FragmentModules...), conf, files...)
}

// Where mod_rewrite's rules run in the walk, and what their outcome does
// to the decision (apache-access-semantics are checked against Apache in
// the differential corpus, cases 500-502; these pin each step).
func TestRewriteWalk(t *testing.T) {
	conf := `RewriteEngine On
RewriteRule ^/f(/|$) - [F]
RewriteRule ^/g(/|$) - [G]
RewriteRule ^/r451 - [R=451]
RewriteRule ^/away http://elsewhere.test/ [R=301]
RewriteRule ^/via/(.*)$ /private/$1 [PT]
RewriteRule ^/file/(.*)$ @DOCROOT@/private/$1 [L]
RewriteRule ^/up/(.*)$ /../../$1 [L]
RewriteRule ^/env/ - [E=ok:1]
RewriteRule ^/q$ /index.html?a=%{HTTP:X-Q} [PT]
RewriteCond %{REMOTE_ADDR} !^10\.
RewriteRule ^/lan/ - [F]
Redirect /private/moved http://x.test/
<Directory "@DOCROOT@">
    AllowOverride All
    Options FollowSymLinks
</Directory>
<Directory "@DOCROOT@/private">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/env">
    Order deny,allow
    Deny from all
    Allow from env=ok
</Directory>
`
	e, root := rewriteEngine(t, conf, "private/a.html", "env/a.html", "lan/a.html", "app/index.php", "app/style.css", "app/secret.inc",
		"loop/a.html", "end/a.html", "nosym/a.html", "dir/sub/index.html", "pe/target.html")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/.htaccess", "RewriteEngine On\nRewriteBase /app/\nRewriteCond %{REQUEST_FILENAME} !-f\nRewriteRule ^(.*)$ secret.inc?p=$1 [QSA]\n<Files secret.inc>\nOrder allow,deny\nAllow from 10.0.0.0/8\n</Files>\n")
	write("loop/.htaccess", "RewriteEngine On\nRewriteRule ^(.*)$ x$1\n")
	write("end/.htaccess", "RewriteEngine On\nRewriteRule ^(.*)$ x$1 [END]\n")
	write("nosym/.htaccess", "Options -FollowSymLinks\nRewriteEngine On\n")
	write("dir/.htaccess", "RewriteEngine On\nRewriteRule ^sub/index\\.html$ - [F]\n")
	write("pe/.htaccess", "RewriteEngine On\nRewriteRule ^go$ target.html [E=ok:1]\n<Files target.html>\nOrder deny,allow\nDeny from all\nAllow from env=REDIRECT_ok\n</Files>\n")
	for _, tt := range []struct {
		target, ip string
		header     map[string]string
		want       int
		action     string // Rewritten.Action, "" for none
	}{
		{target: "/index.html", ip: "8.8.8.8"},
		{target: "/f", ip: "8.8.8.8", want: 403, action: "status"},
		{target: "/f/x", ip: "10.0.0.1", want: 403, action: "status"},
		{target: "/fx", ip: "8.8.8.8", want: 0},
		{target: "/g/x", ip: "8.8.8.8", want: 410, action: "status"},
		{target: "/r451", ip: "8.8.8.8", want: 451, action: "status"},
		{target: "/away", ip: "8.8.8.8", want: 0, action: "redirect"},
		{target: "/via/a.html", ip: "8.8.8.8", want: 403, action: "passthrough"},
		{target: "/via/a.html", ip: "10.1.1.1", want: 0, action: "passthrough"},
		{target: "/via/moved", ip: "8.8.8.8", want: 302, action: "passthrough"},
		{target: "/file/a.html", ip: "8.8.8.8", want: 403, action: "file"},
		{target: "/file/a.html", ip: "10.1.1.1", want: 0, action: "file"},
		{target: "/up/etc/passwd", ip: "8.8.8.8", want: 403, action: "status"},
		{target: "/env/a.html", ip: "8.8.8.8", want: 0},
		{target: "/q", ip: "8.8.8.8", header: map[string]string{"X-Q": "ok"}, want: 0, action: "passthrough"},
		{target: "/q", ip: "8.8.8.8", header: map[string]string{"X-Q": "a b"}, want: 403, action: "status"},
		{target: "/lan/a.html", ip: "8.8.8.8", want: 403, action: "status"},
		{target: "/lan/a.html", ip: "10.9.9.9", want: 0},
		{target: "/app/style.css", ip: "8.8.8.8", want: 0},
		{target: "/app/route", ip: "8.8.8.8", want: 403, action: "internal redirect"},
		{target: "/app/route", ip: "10.2.2.2", want: 0, action: "internal redirect"},
		{target: "/loop/a.html", ip: "8.8.8.8", want: 500, action: "internal redirect"},
		{target: "/end/a.html", ip: "8.8.8.8", want: 0, action: "internal redirect"},
		{target: "/nosym/a.html", ip: "8.8.8.8", want: 403},
		{target: "/dir/sub/", ip: "8.8.8.8", want: 403, action: "status"},
		{target: "/dir/sub", ip: "8.8.8.8", want: 0},
		{target: "/pe/go", ip: "8.8.8.8", want: 0, action: "internal redirect"},
		{target: "/pe/target.html", ip: "8.8.8.8", want: 403},
	} {
		res := decide(e, req{target: tt.target, ip: tt.ip, header: tt.header})
		action := ""
		if res.Rewritten != nil {
			action = res.Rewritten.Action
		}
		if res.Status != tt.want || action != tt.action {
			t.Errorf("%s from %s: %d (%q), want %d (%q)", tt.target, tt.ip, res.Status, action, tt.want, tt.action)
		}
	}
}

// The rules' lines count their hits, and the rule that answers is the
// decision's.
func TestRewriteRuleHits(t *testing.T) {
	e, _ := rewriteEngine(t, "RewriteEngine On\nRewriteCond %{HTTP_USER_AGENT} bot [NC]\nRewriteRule .* - [F]\nRewriteRule ^/old$ /index.html\n")
	res := decide(e, req{target: "/x", ip: "8.8.8.8", header: map[string]string{"User-Agent": "SomeBot"}})
	if res.Status != 403 || res.Rule == nil || !strings.Contains(res.Rule.Text, "RewriteRule .* - [F]") {
		t.Fatalf("status %d rule %v", res.Status, res.Rule)
	}
	decide(e, req{target: "/old", ip: "8.8.8.8"})
	decide(e, req{target: "/x", ip: "8.8.8.8"})
	hits, decisive := map[string]uint64{}, map[string]uint64{}
	for _, r := range e.Rules() {
		hits[r.Text], decisive[r.Text], _ = r.Stats()
	}
	if hits["RewriteRule .* - [F]"] != 1 || hits["RewriteRule ^/old$ /index.html"] != 1 || decisive["RewriteRule .* - [F]"] != 1 || decisive["RewriteRule ^/old$ /index.html"] != 0 {
		t.Errorf("hits %v, decisive %v", hits, decisive)
	}
}

// Virtual hosts inherit the main server's engine state but not its rules,
// unless RewriteOptions Inherit says so.
func TestRewriteVirtualHosts(t *testing.T) {
	conf := `RewriteEngine On
RewriteRule ^/main - [F]
<VirtualHost *:80>
    ServerName plain.test
    RewriteRule ^/own - [F]
</VirtualHost>
<VirtualHost *:80>
    ServerName inherit.test
    RewriteOptions Inherit
    RewriteRule ^/own - [F]
</VirtualHost>
<VirtualHost *:80>
    ServerName off.test
    RewriteEngine Off
    RewriteRule ^/own - [F]
</VirtualHost>
`
	e, _ := rewriteEngine(t, conf)
	for _, tt := range []struct {
		host, target string
		want         int
	}{
		{"plain.test", "/own", 403},
		{"plain.test", "/main", 0},
		{"inherit.test", "/own", 403},
		{"inherit.test", "/main", 403},
		{"off.test", "/own", 0},
	} {
		if res := decide(e, req{target: tt.target, ip: "8.8.8.8", header: map[string]string{"Host": tt.host}}); res.Status != tt.want {
			t.Errorf("%s%s: %d, want %d", tt.host, tt.target, res.Status, tt.want)
		}
	}
}
