package proxy

import (
	"bufio"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// Bodies stream both ways: a large upload reaches the backend whole, and a
// response the backend flushes piece by piece reaches the client before
// the backend has finished.
func TestStreaming(t *testing.T) {
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			h := sha256.New()
			n, _ := io.Copy(h, r.Body)
			w.Header().Set("X-Len", itoa(n))
			w.Write(h.Sum(nil))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "second\n")
	}))
	defer backend.Close()
	dir := t.TempDir()
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory "+dir+">\nOrder allow,deny\nAllow from all\n</Directory>\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: dir}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(backend.URL)
	front := httptest.NewServer(New(Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, walk.New(cfg, walk.OS, nil)))
	defer front.Close()

	const size = 32 << 20
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 1<<16)
		for i := range buf {
			buf[i] = byte(i)
		}
		for sent := 0; sent < size; sent += len(buf) {
			pw.Write(buf)
		}
		pw.Close()
	}()
	resp, err := http.Post(front.URL+"/upload", "application/octet-stream", pr)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Len") != itoa(size) {
		t.Errorf("backend received %s bytes, want %d", resp.Header.Get("X-Len"), size)
	}

	resp, err = http.Get(front.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if l != "first\n" {
			t.Errorf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Error("the flushed part did not reach the client while the backend was still writing")
	}
	close(release)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
