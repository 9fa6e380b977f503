package proxy

import (
	"strings"
	"testing"
)

// A redirect is answered with its Location; an ErrorDocument URL too.
func TestRedirectProxy(t *testing.T) {
	f := newLimitsFront(t, `Redirect permanent /old /new
ErrorDocument 403 http://example.com/denied
<Directory "@DOCROOT@/private">
    Order allow,deny
    Deny from all
</Directory>
`)
	if st, loc := f.raw(t, "GET /old/x?q=1 HTTP/1.1\r\nHost: www.example.org:8080\r\nConnection: close\r\n\r\n"); st != 301 || loc != "http://www.example.org:8080/new/x?q=1" {
		t.Errorf("redirect: %d %q", st, loc)
	}
	if st, loc := f.raw(t, "GET /private/a.html HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"); st != 302 || loc != "http://example.com/denied" {
		t.Errorf("ErrorDocument: %d %q", st, loc)
	}
	if n := len(f.backendRead()); n != 0 {
		t.Errorf("the backend saw %d requests", n)
	}
}

// The scheme of a redirect orderly answers is the client's: https behind
// a TLS-terminating proxy whose X-Forwarded-Proto orderly believes
// (forwarded_tls, from a trusted proxy), as Apache answered over TLS.
func TestRedirectForwardedScheme(t *testing.T) {
	tests := []struct {
		name      string
		forwarded bool
		header    string
		want      string
	}{
		{"plain", true, "", "http://h/new"},
		{"forwarded https", true, "X-Forwarded-Proto: https\r\n", "https://h/new"},
		{"forwarded https, port 443", true, "X-Forwarded-Proto: https\r\n", "https://h/new"},
		{"forwarded http", true, "X-Forwarded-Proto: http\r\n", "http://h/new"},
		{"without forwarded_tls", false, "X-Forwarded-Proto: https\r\n", "http://h/new"},
	}
	for _, tt := range tests {
		f := newLimitsFrontWith(t, "Redirect /old /new\n", func(c *Config) { c.ForwardedTLS = tt.forwarded })
		host := "h"
		if strings.Contains(tt.name, "443") {
			host = "h:443"
		}
		st, loc := f.raw(t, "GET /old HTTP/1.1\r\nHost: "+host+"\r\n"+tt.header+"Connection: close\r\n\r\n")
		if st != 302 || loc != tt.want {
			t.Errorf("%s: %d %q, want 302 %q", tt.name, st, loc, tt.want)
		}
	}
}
