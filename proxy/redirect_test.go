package proxy

import "testing"

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
