package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// cannedBackend answers every request it reads on its connections with
// answer, allocating nothing per request, so that what a benchmark
// counts is orderly's. It serves requests without a body only.
func cannedBackend(tb testing.TB, answer []byte) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if err := skipHead(br); err != nil {
						return
					}
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	tb.Cleanup(func() { ln.Close() })
	return ln
}

// skipHead reads one message's head, up to and including its empty line.
func skipHead(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
	}
}

// BenchmarkServeLoopback is one allowed GET the way orderly serve
// handles it under load: a client's keep-alive connection to an
// http.Server running the handler, which walks a document root five
// directories deep (AllowOverride All, as 2.2 has it by default: an
// .htaccess stat in each directory, none there), decides under a
// <Location /> of 10,000 Deny from lines, and forwards the request with
// the backend client over loopback to a backend that answers 200 with
// 1 KiB. The client and the backend allocate nothing per request: the
// allocations counted are net/http's server and orderly's.
func BenchmarkServeLoopback(b *testing.B) {
	dir := b.TempDir()
	root := filepath.Join(dir, "htdocs")
	deep := filepath.Join(root, "a", "b", "c", "d")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "1k.txt"), bytes.Repeat([]byte("x"), 1024), 0o644); err != nil {
		b.Fatal(err)
	}
	var conf strings.Builder
	conf.WriteString("<Location />\nOrder deny,allow\n")
	for i := range 10000 {
		conf.WriteString("Deny from 10." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255) + ".1\n")
	}
	conf.WriteString("</Location>\n")
	cf := filepath.Join(dir, "legacy.conf")
	if err := os.WriteFile(cf, []byte(conf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	c, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Legacy22, DocumentRoot: root}})
	if err != nil {
		b.Fatal(err)
	}

	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1024\r\n\r\n" + strings.Repeat("x", 1024))
	backend, _ := url.Parse("http://" + cannedBackend(b, answer).Addr().String())
	h := NewWith(Config{Backend: backend, AccessLog: io.Discard, ErrorLog: io.Discard},
		&Policies{Legacy: walk.New(c, walk.OS, NewIdentity())})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := []byte("GET /a/b/c/d/1k.txt HTTP/1.1\r\nHost: www.example.test\r\nUser-Agent: wrk\r\n\r\n")
	br := bufio.NewReader(conn)
	body := make([]byte, 1024)
	status := []byte("HTTP/1.1 200 ")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		line, err := br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.HasPrefix(line, status) {
			b.Fatalf("answer %q", line)
		}
		if err := skipHead(br); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(br, body); err != nil {
			b.Fatal(err)
		}
	}
}
