package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// okTransport answers every backend request 200 without a network, so
// that the benchmark measures orderly's request path, not a round trip.
type okTransport struct{}

func (okTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody, ContentLength: 0, Request: r}, nil
}

// BenchmarkServe is the whole request path (client, limits, target,
// scope, decide, answer or pass, account) for a request let through to
// the backend, one refused, and one in a shadow scope with a path.
func BenchmarkServe(b *testing.B) {
	dir := b.TempDir()
	root := filepath.Join(dir, "docroot")
	os.MkdirAll(filepath.Join(root, "private"), 0o755)
	os.WriteFile(filepath.Join(root, "private", "a.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(root, "open.txt"), []byte("x"), 0o644)
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory \""+root+"/private\">\nOrder deny,allow\nDeny from all\n</Directory>\n"), 0o644)
	c, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		b.Fatal(err)
	}
	backend, _ := url.Parse("http://127.0.0.1:1")
	for _, bc := range []struct {
		name, target string
		scopes       []Scope
		want         int
	}{
		{"pass", "/open.txt", nil, http.StatusOK},
		{"refuse", "/private/a.txt", nil, http.StatusForbidden},
		{"shadow-scope", "/private/a.txt", []Scope{{Name: "private", Path: "/private", Mode: ModeShadow}}, http.StatusOK},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := NewWith(Config{Backend: backend, Transport: okTransport{}, AccessLog: io.Discard, ErrorLog: io.Discard},
				&Policies{Legacy: walk.New(c, walk.OS, NewIdentity()), Scopes: bc.scopes})
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("GET", bc.target, nil)
				r.Host = "www.example.test"
				r.RemoteAddr = "192.0.2.7:1234"
				r.Header.Set("User-Agent", strings.Repeat("x", 8))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != bc.want {
					b.Fatalf("%s: %d, want %d", bc.target, w.Code, bc.want)
				}
			}
		})
	}
}
