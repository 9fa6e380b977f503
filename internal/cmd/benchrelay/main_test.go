package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync/atomic"
	"testing"
)

// TestRelayForwards checks that the relay answers with the backend's
// status, headers and body, and that it keeps one backend connection for
// sequential requests.
func TestRelayForwards(t *testing.T) {
	var conns atomic.Int32
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "body of "+r.URL.Path)
	}))
	backend.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	backend.Start()
	defer backend.Close()
	front := httptest.NewServer(newRelay(backend.Listener.Addr().String(), "", os.Stat))
	defer front.Close()
	for _, p := range []string{"/a", "/b/c", "/a"} {
		resp, err := http.Get(front.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot || resp.Header.Get("X-Path") != p || string(body) != "body of "+p {
			t.Errorf("GET %s: %d %q %q", p, resp.StatusCode, resp.Header.Get("X-Path"), body)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("backend connections: %d, want 1 (kept alive)", n)
	}
}

// TestRelayBackendDown answers 502 when the backend cannot be reached.
func TestRelayBackendDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rec := httptest.NewRecorder()
	newRelay(addr, "", os.Stat).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusBadGateway {
		t.Errorf("status %d, want 502", rec.Code)
	}
}

// TestWalkStats checks the stat calls the walk makes: the file, then
// .htaccess from "/" down to the file's directory.
func TestWalkStats(t *testing.T) {
	for _, tc := range []struct {
		docroot, url string
		want         []string
	}{
		{"/srv/www", "/1k.txt", []string{"/srv/www/1k.txt", "/.htaccess", "/srv/.htaccess", "/srv/www/.htaccess"}},
		{"/srv/www/", "/a/../b/x.html", []string{"/srv/www/b/x.html", "/.htaccess", "/srv/.htaccess", "/srv/www/.htaccess", "/srv/www/b/.htaccess"}},
		{"/d", "/", []string{"/d/", "/.htaccess", "/d/.htaccess"}},
	} {
		var got []string
		rl := newRelay("127.0.0.1:1", tc.docroot, func(name string) (os.FileInfo, error) {
			got = append(got, name)
			return nil, os.ErrNotExist
		})
		rl.walk(tc.url)
		if !slices.Equal(got, tc.want) {
			t.Errorf("walk(%q) under %q: %q, want %q", tc.url, tc.docroot, got, tc.want)
		}
	}
}
