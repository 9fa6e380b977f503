package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that serve's goroutines and the test can
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serving is an orderly serve running in the test's process.
type serving struct {
	stdout, stderr syncBuffer
	stop           context.CancelFunc
	code           chan int
	once           sync.Once
}

// startServe runs serve with the files (orderly.hcl among them) and
// args, and waits for its start-up line.
func startServe(t *testing.T, files map[string]string, args ...string) *serving {
	t.Helper()
	dir := writeFiles(t, files)
	ctx, stop := context.WithCancel(context.Background())
	s := &serving{stop: stop, code: make(chan int, 1)}
	args = append([]string{"-config", filepath.Join(dir, "orderly.hcl")}, args...)
	go func() { s.code <- serve(ctx, args, &s.stdout, &s.stderr) }()
	t.Cleanup(func() { s.shutdown(t) })
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(s.stderr.String(), "orderly serving"); {
		select {
		case code := <-s.code:
			t.Fatalf("serve exited %d before serving:\n%s", code, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start-up line in 10 s:\n%s", s.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}

// shutdown stops serve and checks that it exits 0; calls after the
// first do nothing.
func (s *serving) shutdown(t *testing.T) {
	t.Helper()
	s.once.Do(func() {
		s.stop()
		select {
		case code := <-s.code:
			if code != 0 {
				t.Errorf("serve exited %d:\n%s", code, s.stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop in 10 s")
		}
	})
}

// startLine is the JSON start-up line on serve's standard error.
func (s *serving) startLine(t *testing.T) map[string]any {
	t.Helper()
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "orderly serving" {
			return rec
		}
	}
	t.Fatalf("no JSON start-up line:\n%s", s.stderr.String())
	return nil
}

// serveFiles is a configuration whose /admin/ is refused to all.
func serveFiles(extra string) map[string]string {
	return map[string]string{
		"orderly.hcl":              goodHCL + extra,
		"legacy.conf":              "<Directory @DIR@/docroot/admin>\nOrder deny,allow\nDeny from all\n</Directory>\n",
		"docroot/admin/index.html": "x",
	}
}

// The start-up line names every listener with the address it listens on.
func TestServeListeners(t *testing.T) {
	cert, key := serverCert(t)
	tests := []struct {
		name  string
		extra string
		want  []string // listeners
	}{
		{"proxy only", "", []string{"proxy"}},
		{"every listener", `metrics {
  listen = "127.0.0.1:0"
}
admin {
  listen = "127.0.0.1:0"
}
forward_auth {
  listen = "127.0.0.1:0"
  style  = "nginx"
}
tls {
  listen    = "127.0.0.2:0"
  cert_file = "cert.pem"
  key_file  = "key.pem"
}
`, []string{"proxy", "metrics", "admin", "forward_auth", "https"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := serveFiles(tt.extra)
			files["cert.pem"], files["key.pem"] = cert, key
			s := startServe(t, files)
			got, _ := s.startLine(t)["listeners"].(map[string]any)
			if len(got) != len(tt.want) {
				t.Errorf("listeners %v, want %v", got, tt.want)
			}
			for _, name := range tt.want {
				addr, _ := got[name].(string)
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					t.Errorf("listener %s at %q: %v", name, addr, err)
					continue
				}
				c.Close()
			}
		})
	}
}

// orderly's own logs go to standard error and the Apache-format error
// log to standard output: by default, a refusal's AH01797 line never
// lands among the JSON lines. error_log = "stderr" is warned about, with
// where it is set.
func TestServeLogStreams(t *testing.T) {
	tests := []struct {
		name       string
		extra      string
		refusalOn  string // "stdout" or "stderr"
		warnedLine int    // the line of error_log in orderly.hcl; 0 for no warning
	}{
		{"default", "", "stdout", 0},
		{"stdout", "error_log = \"stdout\"\n", "stdout", 0},
		{"stderr, warned", "error_log = \"stderr\"\n", "stderr", 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServe(t, serveFiles(tt.extra))
			addr, _ := s.startLine(t)["listen"].(string)
			resp, err := http.Get("http://" + addr + "/admin/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("GET /admin/: %d, want 403", resp.StatusCode)
			}
			s.shutdown(t)
			out, errOut := s.stdout.String(), s.stderr.String()
			if on := map[string]string{"stdout": out, "stderr": errOut}[tt.refusalOn]; !strings.Contains(on, "AH01797") {
				t.Errorf("no AH01797 line on %s:\nstdout:\n%s\nstderr:\n%s", tt.refusalOn, out, errOut)
			}
			if tt.refusalOn == "stdout" {
				for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
					if !json.Valid([]byte(line)) {
						t.Errorf("standard error holds a line that is not JSON: %q", line)
					}
				}
			}
			warned := strings.Contains(errOut, `"setting":"error_log"`)
			if want := tt.warnedLine != 0; warned != want {
				t.Errorf("warned %v, want %v:\n%s", warned, want, errOut)
			}
			if warned && !strings.Contains(errOut, "orderly.hcl:13") {
				t.Errorf("the warning does not say where error_log is set:\n%s", errOut)
			}
		})
	}
}

// -log.level and -log.format shape orderly's own logs; bad values exit 2.
func TestServeLogFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		started bool   // the start-up line (info) is written
		want    string // a substring of standard error
		absent  string // not a substring of standard error
		json    bool   // every line is JSON
	}{
		{"defaults", nil, true, `"msg":"orderly serving"`, "DEBUG", true},
		{"logfmt", []string{"-log.format", "logfmt"}, true, `msg="orderly serving"`, "{", false},
		{"logfmt listeners", []string{"-log.format", "logfmt"}, true, "listeners.proxy=127.0.0.1:", "{", false},
		{"debug", []string{"-log.level", "debug"}, true, `"level":"DEBUG","msg":"logs","error_log":"stdout"`, "", true},
		{"info", []string{"-log.level", "info"}, true, `"level":"INFO"`, "DEBUG", true},
		{"warn", []string{"-log.level", "warn"}, false, `"level":"WARN"`, "INFO", true},
		{"error", []string{"-log.level", "error", "-log.format", "json"}, false, "", "WARN", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, serveFiles(""))
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // serve starts, logs, and drains at once
			var out, errb syncBuffer
			code := serve(ctx, append([]string{"-config", filepath.Join(dir, "orderly.hcl")}, tt.args...), &out, &errb)
			got := errb.String()
			if code != 0 {
				t.Fatalf("exit %d:\n%s", code, got)
			}
			if started := strings.Contains(got, "orderly serving"); started != tt.started {
				t.Errorf("start-up line written %v, want %v:\n%s", started, tt.started, got)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("standard error lacks %q:\n%s", tt.want, got)
			}
			if tt.absent != "" && strings.Contains(got, tt.absent) {
				t.Errorf("standard error holds %q:\n%s", tt.absent, got)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if line != "" && json.Valid([]byte(line)) != tt.json {
					t.Errorf("line %q: JSON %v, want %v", line, !tt.json, tt.json)
				}
			}
		})
	}
	for _, args := range [][]string{{"-log.level", "trace"}, {"-log.format", "text"}, {"-log.level"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"serve"}, args...), &out, &errb); code != 2 {
			t.Errorf("serve %v: exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), "-log.") {
			t.Errorf("serve %v: stderr does not name the flag:\n%s", args, errb.String())
		}
	}
}

// serverCert is a self-signed certificate for 127.0.0.2 and its key, as
// PEM.
func serverCert(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orderly test"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.2")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}
