package differential

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// The exact comparison's controls. The backend maps every URL as the
// oracle does (mappingBackendOptions), so runCase compares the answers
// neither side refuses status for status; these show that it can fail
// where the classes cannot: a front that turns a 404 into a 200 must be
// caught on every such request and no other, and the backend of before,
// without the case's aliases, virtual hosts and redirects, must disagree.
// Since the backend refuses some requests itself now, a refusal must be
// orderly's: one the backend made is caught even where its status is the
// oracle's.

// exactControlCases are the cases the controls replay: aliases, virtual
// hosts with document roots of their own, DirectoryIndex, mod_dir's
// slash redirect of Alias targets, Redirect with several statuses.
var exactControlCases = []string{
	"047-alias-outside-docroot",
	"120-vhost-aliases-docroots",
	"127-directoryindex-several-denied",
	"307-phpmyadmin-debian-setup-libraries",
	"309-dokuwiki-debian-dual-ifmodule",
	"423-redirect-statuses",
	"425-redirect-vhosts",
}

// backendRefusalCases are cases where the backend, with the mapping but
// no access rules, refuses requests as the oracle does: Options
// FollowSymLinks and Indexes (403), .htaccess files Apache refuses (500).
var backendRefusalCases = []string{
	"150-options-followsymlinks",
	"153-options-indexes-autoindex",
	"335-htaccess-unwrapped-module-directives",
}

// replayCases runs the named cases of the corpus through fr on s.
func replayCases(t *testing.T, fr front, s *servers, names []string) ([]outcome, tally) {
	t.Helper()
	apachetest.Require(t)
	tmp := apachetest.TempDir(t)
	var tl tally
	var outs []outcome
	for _, name := range names {
		c, err := apachetest.LoadCase(filepath.Join(*corpusDir, name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, s.runCase(t, fr, c, filepath.Join(tmp, c.Name), &tl)...)
	}
	if tl.requests == 0 {
		t.Fatal("no request was replayed")
	}
	return outs, tl
}

// notFoundFront is orderly behind a proxy that answers 200 where orderly
// answered 404: a wrong status that the classes do not tell apart.
type notFoundFront struct{ orderlyFront }

func (f notFoundFront) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	inner, stop := f.orderlyFront.start(t, l, backend)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop()
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + inner)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
			pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
			pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
		},
		ModifyResponse: func(r *http.Response) error {
			if r.StatusCode == http.StatusNotFound {
				r.StatusCode, r.Status = http.StatusOK, "200 OK"
			}
			return nil
		},
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return ln.Addr().String(), func() { srv.Close(); stop() }
}

// TestControlExactStatus proves the exact comparison can fail: through a
// front that turns orderly's 404s into 200s, every request the oracle
// answered 404 must be a mismatch, "apache 404, front 200", and no other.
func TestControlExactStatus(t *testing.T) {
	var s servers
	outs, tl := replayCases(t, notFoundFront{}, &s, exactControlCases)
	notFound := 0
	for _, o := range outs {
		if o.want.Status != http.StatusNotFound {
			if o.mismatch != "" {
				t.Errorf("a mismatch where the oracle answered %d: %s", o.want.Status, o.mismatch)
			}
			continue
		}
		notFound++
		if !strings.Contains(o.mismatch, "apache 404, front 200") {
			t.Errorf("%s: the oracle answered 404, the front 200, and the harness reported %q", o.rq, o.mismatch)
		}
	}
	fmt.Printf("control exact-status: %d of %d requests answered 404 by the oracle and 200 by the front, %d reported (must be all)\n",
		notFound, tl.requests, tl.exactMismatches)
	if notFound == 0 {
		t.Fatal("the oracle answered no request of the control cases with 404: the control proves nothing")
	}
	if tl.exactMismatches != notFound {
		t.Errorf("%d exact mismatches reported, want %d", tl.exactMismatches, notFound)
	}
}

// TestControlExactMapless proves that the backend's mapping is what the
// exact comparison stands on: orderly in front of the backend of before,
// which has the case's document root but none of its aliases, virtual
// hosts' document roots, indexes or redirects, must disagree on the
// status of requests that agree by class.
func TestControlExactMapless(t *testing.T) {
	s := servers{mapless: true}
	_, tl := replayCases(t, orderlyFront{}, &s, exactControlCases)
	fmt.Printf("control exact-mapless: %d of %d requests disagree on the exact status (must be > 0), %d in all\n",
		tl.exactMismatches, tl.requests, len(tl.mismatches))
	if tl.exactMismatches == 0 {
		t.Fatalf("orderly in front of a backend without the cases' mapping agreed on every status: the exact comparison cannot fail")
	}
	for _, m := range tl.mismatches {
		t.Log(m)
	}
}

func TestNormalLocation(t *testing.T) {
	ports := []string{"41001", "41002"}
	tests := []struct{ loc, want string }{
		{"http://127.0.0.1:41001/x", "http://127.0.0.1/x"},
		{"https://127.0.0.1:41002/new?q=%20", "https://127.0.0.1/new?q=%20"},
		{"https://www.example.test:41002/secure/", "https://www.example.test/secure/"},
		{"http://[::1]:41001/a%2fb", "http://[::1]/a%2fb"},
		{"http://Example.TEST:41001/%7euser/", "http://Example.TEST/%7euser/"},
		// Not a port of the servers: a Host the request named, or the
		// configuration's.
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
		{"http://example.com/41001", "http://example.com/41001"},
		{"/relative:41001", "/relative:41001"},
		{"mailto:admin@example.com", "mailto:admin@example.com"},
		{"http://%zz", "http://%zz"},
	}
	for _, tt := range tests {
		if got := normalLocation(tt.loc, ports); got != tt.want {
			t.Errorf("normalLocation(%q) = %q, want %q", tt.loc, got, tt.want)
		}
	}
}

// TestControlBackendRefusal proves that a refusal must be orderly's own:
// orderly in shadow mode decides but forwards everything, so where the
// backend, which has the cases' Options, symbolic links and .htaccess
// files, refuses as the oracle does, the status agrees but the answer is
// the backend's, and the harness must report it.
func TestControlBackendRefusal(t *testing.T) {
	var s servers
	outs, tl := replayCases(t, orderlyFront{mode: "shadow"}, &s, backendRefusalCases)
	same := 0
	for _, o := range outs {
		if o.bypass && o.class == o.want.Class()+" from the backend" {
			same++ // the classes agree: only the Server field tells
		}
	}
	fmt.Printf("control backend-refusal: %d of %d requests refused by the backend as by the oracle, not by orderly, reported (must be > 0); %d bypasses in all\n",
		same, tl.requests, tl.bypasses)
	if same == 0 {
		t.Fatal("no refusal of the backend's own was reported: the harness cannot tell orderly's refusals from the backend's")
	}
}
