// Command benchrelay is the floor that make bench-peers measures orderly
// against: the least a reverse proxy built as issue 20 requires orderly to
// be built can cost. It serves clients with net/http's server, as orderly
// does, and forwards every request to one backend over pooled keep-alive
// connections, writing with (*http.Request).Write and reading with
// http.ReadResponse on the handler's goroutine, as orderly's backend
// client does. It decides nothing, logs nothing and counts nothing.
//
// With -docroot it also makes the file-system calls of Apache's
// per-request walk that orderly keeps: a stat of the file the URL maps to,
// then one of .htaccess in "/" and in every directory down to the file's.
//
//	benchrelay -listen 127.0.0.1:8080 -backend 127.0.0.1:8081 [-docroot DIR]
//
// It is a measuring instrument, not a proxy to deploy: it forwards the
// client's request as it came, with no hop-by-hop handling.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve clients on")
	backend := flag.String("backend", "", "backend address, host:port")
	docroot := flag.String("docroot", "", "document root to walk as Apache does (empty: no walk)")
	flag.Parse()
	if *backend == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: benchrelay -listen ADDR -backend HOST:PORT [-docroot DIR]")
		os.Exit(2)
	}
	log.Fatal(http.ListenAndServe(*listen, newRelay(*backend, *docroot, os.Stat)))
}

// relay is the handler: a pool of idle backend connections and, when
// docroot is set, the walk's stat calls.
type relay struct {
	backend string
	docroot string
	stat    func(string) (os.FileInfo, error)

	mu   sync.Mutex
	idle []*backendConn
}

// backendConn is one keep-alive connection to the backend with its
// buffers.
type backendConn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
}

func newRelay(backend, docroot string, stat func(string) (os.FileInfo, error)) *relay {
	return &relay{backend: backend, docroot: strings.TrimSuffix(docroot, "/"), stat: stat}
}

// ServeHTTP walks (with -docroot), forwards r and copies the answer back;
// a connection that failed is closed, one that answered goes back to the
// pool.
func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rl.docroot != "" {
		rl.walk(r.URL.Path)
	}
	bc, err := rl.get()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "http", rl.backend
	if err := out.Write(bc.bw); err == nil {
		err = bc.bw.Flush()
	}
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(bc.br, out)
	}
	if err != nil {
		bc.conn.Close()
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	// Through a plain io.Writer: the response's ReadFrom would write the
	// head and the body in two system calls where orderly makes one.
	_, err = io.Copy(struct{ io.Writer }{w}, resp.Body)
	resp.Body.Close()
	if err != nil || resp.Close {
		bc.conn.Close()
		return
	}
	rl.mu.Lock()
	rl.idle = append(rl.idle, bc)
	rl.mu.Unlock()
}

// walk makes the stat calls of Apache's directory walk for urlPath under
// the document root (FollowSymLinks in force, AllowOverride not None):
// the whole path first, then .htaccess in "/" and in each directory
// below it. The results are not used: what is measured is their cost.
func (rl *relay) walk(urlPath string) {
	file := rl.docroot + path.Clean("/"+urlPath)
	rl.stat(file)
	dir := "/"
	for {
		rl.stat(dir + ".htaccess")
		i := strings.IndexByte(file[len(dir):], '/')
		if i < 0 {
			return
		}
		dir = file[:len(dir)+i+1]
	}
}

// get takes an idle connection or dials a new one.
func (rl *relay) get() (*backendConn, error) {
	rl.mu.Lock()
	if n := len(rl.idle); n > 0 {
		bc := rl.idle[n-1]
		rl.idle = rl.idle[:n-1]
		rl.mu.Unlock()
		return bc, nil
	}
	rl.mu.Unlock()
	c, err := net.Dial("tcp", rl.backend)
	if err != nil {
		return nil, err
	}
	return &backendConn{conn: c, br: bufio.NewReader(c), bw: bufio.NewWriter(c)}, nil
}
