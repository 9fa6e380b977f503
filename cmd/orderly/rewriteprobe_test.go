package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// The start-up rewrite check finds a path a server-level rule refuses by
// itself, and warns where the backend does not refuse it too.
func TestRewriteProbe(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(conf, []byte("RewriteEngine On\nRewriteCond %{HTTP_USER_AGENT} bot\nRewriteRule ^/cond - [F]\nRewriteRule (^|/)\\. - [F]\nRewriteRule ^/old/(.*)$ - [G]\nRewriteRule !^/neg - [F]\n"), 0o644)
	cfg, err := translate.Load([]string{conf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}, Modules: append([]string{"rewrite_module"}, translate.FragmentModules...)})
	if err != nil {
		t.Fatal(err)
	}
	e := walk.New(cfg, walk.OS, proxy.NewIdentity())
	path, status, ok := rewriteProbe(e)
	if !ok || path != "/old/" || status != 410 {
		t.Fatalf("probe %q %d %v, want /old/ 410", path, status, ok)
	}
	for _, tt := range []struct {
		backend int
		want    string
	}{{410, "backend rewrite check passed"}, {404, "the backend does not refuse what the legacy rewrite rules refuse"}} {
		var seen string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r.URL.Path + " " + r.Header.Get("X-Forwarded-For") + " " + r.Header.Get(proxy.GuardHeader)
			w.WriteHeader(tt.backend)
		}))
		u, _ := url.Parse(srv.URL)
		var log bytes.Buffer
		probeRewrite(context.Background(), &runtimeConfig{Backend: u, GuardToken: "0123456789abcdef0123"}, e, slog.New(slog.NewTextHandler(&log, nil)))
		srv.Close()
		if !strings.Contains(log.String(), tt.want) || seen != "/old/ 192.0.2.2 0123456789abcdef0123" {
			t.Errorf("backend %d: log %q, request %q", tt.backend, log.String(), seen)
		}
	}
	// No rule to probe: nothing asked, nothing logged.
	os.WriteFile(conf, []byte("RewriteEngine On\nRewriteRule ^/a /b\nRewriteRule !^/n - [F]\nRewriteRule ^/both - [F]\nRewriteRule ^/bo - [G]\n"), 0o644)
	cfg, _ = translate.Load([]string{conf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}, Modules: append([]string{"rewrite_module"}, translate.FragmentModules...)})
	if _, _, ok := rewriteProbe(walk.New(cfg, walk.OS, proxy.NewIdentity())); ok {
		t.Error("a rule that does not refuse was probed")
	}
}
