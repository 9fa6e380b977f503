package proxy

import (
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// TestProxyDigest: AuthType Digest through the handler: a Digest
// challenge for a request without credentials and for a user Require
// refuses, the user header for one it lets in, and Authentication-Info on
// the backend's answers that are not errors (add_auth_info).
func TestProxyDigest(t *testing.T) {
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-Remote-User"))
		switch r.URL.Path {
		case "/private/missing.txt":
			w.WriteHeader(404)
		case "/private/bad.txt":
			w.WriteHeader(400)
		}
		io.WriteString(w, "backend")
	}))
	defer backend.Close()
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	os.MkdirAll(filepath.Join(root, "private"), 0o755)
	for _, f := range []string{"a.txt", "bad.txt"} {
		os.WriteFile(filepath.Join(root, "private", f), []byte("x"), 0o644)
	}
	ha1 := func(user, pw string) string { return fmt.Sprintf("%x", md5.Sum([]byte(user+":zone:"+pw))) }
	os.WriteFile(filepath.Join(dir, "digest"), []byte("alice:zone:"+ha1("alice", "ok")+"\nbob:zone:"+ha1("bob", "ok")+"\n"), 0o644)
	conf := `<Directory "` + root + `/private">
AuthType Digest
AuthName "zone"
AuthUserFile "` + dir + `/digest"
Require user alice
</Directory>`
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte(conf), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}, Modules: append([]string{"auth_digest_module"}, translate.FragmentModules...)})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	h := New(Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	defer front.Close()

	get := func(path, user, pw string) *http.Response {
		t.Helper()
		resp, err := http.Get(front.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if user == "" || resp.StatusCode != 401 {
			return resp
		}
		auth, ok := apachetest.DigestResponse(resp.Header.Get("WWW-Authenticate"), "GET", path, user, pw)
		if !ok {
			t.Fatalf("%s: no Digest challenge in %q", path, resp.Header.Get("WWW-Authenticate"))
		}
		req, _ := http.NewRequest("GET", front.URL+path, nil)
		req.Header.Set("Authorization", auth)
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := get("/private/a.txt", "", "")
	if c := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.HasPrefix(c, `Digest realm="zone", nonce="`) || !strings.Contains(c, `qop="auth"`) {
		t.Fatalf("no credentials: %d %q", resp.StatusCode, c)
	}
	if len(seen) != 0 {
		t.Fatal("a refused request reached the backend")
	}
	resp = get("/private/a.txt", "alice", "ok")
	if resp.StatusCode != 200 || len(seen) != 1 || seen[0] != "alice" {
		t.Fatalf("alice: %d, backend saw users %q", resp.StatusCode, seen)
	}
	if ai := resp.Header.Get("Authentication-Info"); !strings.Contains(ai, "rspauth=") {
		t.Errorf("alice: Authentication-Info %q", ai)
	}
	for _, p := range []string{"/private/missing.txt", "/private/bad.txt"} {
		if resp = get(p, "alice", "ok"); resp.Header.Get("Authentication-Info") != "" {
			t.Errorf("%s: %d with Authentication-Info %q: an error has none", p, resp.StatusCode, resp.Header.Get("Authentication-Info"))
		}
	}
	resp = get("/private/a.txt", "bob", "ok")
	if c := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || !strings.HasPrefix(c, `Digest realm="zone"`) {
		t.Errorf("bob, refused by Require: %d %q, want a Digest challenge", resp.StatusCode, c)
	}
	if resp = get("/private/a.txt", "alice", "wrong"); resp.StatusCode != 401 {
		t.Errorf("a wrong password: %d", resp.StatusCode)
	}
}
