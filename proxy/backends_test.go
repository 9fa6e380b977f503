package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// TestSlowCheckWhileServing: a health check that gets no answer in time
// while the backend answers the requests orderly sends it (the backend
// is overloaded, or orderly itself is short of CPU) does not take the
// backend out; without requests answered it does, and so does a check the
// backend answers with a 5xx, traffic or not. make soak found it: on a
// loaded machine one check timed out, and the only backend, which was
// serving, was left out until the next check: 3,100 requests got 502.
func TestSlowCheckWhileServing(t *testing.T) {
	var slow, failing atomic.Bool
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			switch {
			case slow.Load():
				time.Sleep(300 * time.Millisecond)
			case failing.Load():
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		io.WriteString(w, "ok")
	}))
	defer backend.Close()
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory "+dir+">\nOrder allow,deny\nAllow from all\n</Directory>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "index.html"), nil, 0o644) // "/" is served, not refused by Options (no Indexes)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	pool := NewPool([]*url.URL{u}, HealthCheck{Path: "/health", Interval: 20 * time.Millisecond, Timeout: 100 * time.Millisecond, FailTimeout: time.Second})
	transport := NewTransport()
	front := httptest.NewServer(New(Config{Backend: u, Pool: pool}, walk.New(cfg, walk.OS, nil)))
	defer front.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go pool.Run(ctx, transport)

	get := func() int {
		resp, err := http.Get(front.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 s", what)
			}
		}
	}
	waitFor("ready", pool.Ready)

	// Checks time out for a second (several rounds) while requests are
	// answered: every request is served.
	slow.Store(true)
	bad := 0
	for start := time.Now(); time.Since(start) < time.Second; time.Sleep(5 * time.Millisecond) {
		if st := get(); st != http.StatusOK {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d requests failed while the backend answered them and only its checks were slow", bad)
	}
	// No traffic: the checks' timeouts take it out.
	waitFor("down with slow checks and no traffic", func() bool { return !pool.Ready() })
	slow.Store(false)
	waitFor("up again", pool.Ready)

	// A check answered 503 takes it out even while requests are answered.
	failing.Store(true)
	waitFor("down on a 503 check under traffic", func() bool { get(); return !pool.Ready() })
	if st := get(); st != http.StatusBadGateway {
		t.Errorf("after a 503 check: %d, want 502", st)
	}
}
