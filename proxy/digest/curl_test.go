package digest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// exchangeLog is what the test server saw: each request's Authorization
// and the outcome.
type exchangeLog struct {
	mu      sync.Mutex
	entries []logged
}

type logged struct {
	auth   string
	status int
	reason Reason
}

func (l *exchangeLog) add(e logged) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

func (l *exchangeLog) take() []logged {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries
	l.entries = nil
	return e
}

// digestServer serves "ok" to requests that Authenticate grants, with the
// users of users() in realm "R".
func digestServer(t *testing.T, cfg Config) (*httptest.Server, *exchangeLog) {
	s := newTestServer(t, 0)
	log := &exchangeLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, _ := net.SplitHostPort(r.Host)
		p, _ := strconv.Atoi(port)
		auth, has := FieldValue(r.Header)
		res := s.Authenticate(&cfg, &Request{Method: r.Method, URI: r.RequestURI, Path: r.URL.Path,
			ServerName: host, ServerPort: p, Authorization: auth, HasAuthorization: has}, users(t))
		log.add(logged{auth, res.Status, res.Reason})
		switch res.Status {
		case 200:
			w.Header().Set("Authentication-Info", res.AuthInfo)
			if r.URL.Path == "/redirect" {
				http.Redirect(w, r, "/b?q=1", http.StatusFound)
				return
			}
			w.Write([]byte("ok\n"))
		case 401:
			w.Header().Set("WWW-Authenticate", res.Challenge)
			w.WriteHeader(401)
		default:
			w.WriteHeader(res.Status)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// curl runs curl with args and returns the status of each URL (the
// arguments starting with http://), whose bodies it discards.
func curl(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	all := []string{"-s", "-w", "%{http_code}\\n"}
	for _, a := range args {
		if strings.HasPrefix(a, "http://") {
			all = append(all, "-o", "/dev/null")
		}
		all = append(all, a)
	}
	args = all
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("curl %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

func TestCurl(t *testing.T) {
	bin := apachetest.RequireTool(t, "curl", "curl")

	t.Run("passwords and nonce reuse", func(t *testing.T) {
		srv, log := digestServer(t, NewConfig("R"))
		if got := curl(t, bin, "--digest", "-u", "alice:secret", srv.URL+"/a"); strings.Join(got, " ") != "200" {
			t.Fatalf("good password: %v", got)
		}
		if e := log.take(); len(e) != 2 || e[0].reason != NoCredentials || e[1].status != 200 {
			t.Fatalf("good password exchange: %+v", e)
		}
		if got := curl(t, bin, "--digest", "-u", "alice:wrong", srv.URL+"/a"); strings.Join(got, " ") != "401" {
			t.Fatalf("bad password: %v", got)
		}
		if e := log.take(); len(e) != 2 || e[1].reason != PasswordMismatch {
			t.Fatalf("bad password exchange: %+v", e)
		}
		// A redirect: curl reuses the nonce for the second request of
		// the transfer, with nc 2, without a new challenge.
		if got := curl(t, bin, "-L", "--digest", "-u", "alice:secret", srv.URL+"/redirect"); strings.Join(got, " ") != "200" {
			t.Fatalf("two requests: %v", got)
		}
		e := log.take()
		if len(e) != 3 || e[2].status != 200 {
			t.Fatalf("two requests: %+v", e)
		}
		c1, _ := Parse(e[1].auth)
		c2, _ := Parse(e[2].auth)
		if c1.Nonce != c2.Nonce || c1.NC != "00000001" || c2.NC != "00000002" || c2.URI != "/b?q=1" {
			t.Fatalf("nonce reuse: %+v\n%+v", c1, c2)
		}
	})

	t.Run("nc check refuses a replay", func(t *testing.T) {
		cfg := NewConfig("R")
		cfg.NcCheck = true
		srv, log := digestServer(t, cfg)
		if got := curl(t, bin, "-L", "--digest", "-u", "alice:secret", srv.URL+"/redirect"); strings.Join(got, " ") != "200" {
			t.Fatalf("two requests: %v", got)
		}
		e := log.take()
		if len(e) != 3 || e[1].status != 200 || e[2].status != 200 {
			t.Fatalf("exchange: %+v", e)
		}
		if c, _ := Parse(e[2].auth); c.NC != "00000002" || c.Opaque != "1" {
			t.Fatalf("second request: %+v", c)
		}
		// The second request again, as captured.
		if got := curl(t, bin, "-H", "Authorization: "+e[2].auth, srv.URL+"/b?q=1"); strings.Join(got, " ") != "401" {
			t.Fatalf("replay: %v", got)
		}
		if r := log.take(); len(r) != 1 || r[0].reason != Replay {
			t.Fatalf("replay: %+v", r)
		}
		// Without the nc check, the same replay passes (Apache's default).
		srv2, log2 := digestServer(t, NewConfig("R"))
		curl(t, bin, "--digest", "-u", "alice:secret", srv2.URL+"/a")
		e = log2.take()
		if got := curl(t, bin, "-H", "Authorization: "+e[1].auth, srv2.URL+"/a"); strings.Join(got, " ") != "200" {
			t.Fatalf("replay without nc check: %v", got)
		}
	})

	t.Run("MD5-sess as curl computes it", func(t *testing.T) {
		// Apache refuses MD5-sess, so this server is not Authenticate:
		// it checks curl's MD5-sess response against SessionHA1.
		var got *Credentials
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, st := Parse(r.Header.Get("Authorization"))
			if st != Valid {
				w.Header().Set("WWW-Authenticate", `Digest realm="R", nonce="`+vNonce+`", algorithm=MD5-sess, qop="auth"`)
				w.WriteHeader(401)
				return
			}
			got = c
			ha1 := SessionHA1(HA1("alice", "R", "secret"), c.Nonce, c.CNonce)
			if c.Response != ResponseDigest(ha1, c.Nonce, c.NC, c.CNonce, c.QOP, r.Method, c.URI) {
				w.WriteHeader(403)
				return
			}
			w.Write([]byte("ok\n"))
		}))
		defer srv.Close()
		if st := curl(t, bin, "--digest", "-u", "alice:secret", srv.URL+"/sess"); strings.Join(st, " ") != "200" {
			t.Fatalf("MD5-sess: %v (%+v)", st, got)
		}
		if got == nil || !equalFoldASCII(got.Algorithm, "MD5-sess") {
			t.Fatalf("curl did not use MD5-sess: %+v", got)
		}
	})
}
