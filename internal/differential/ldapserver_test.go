package differential

import (
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/proxy/ldapauth/ldaptest"
)

// The differential tests of mod_ldap's server settings (issue 19) that
// the corpus cannot express: a slapd stopped between requests, a server
// that never answers, timing, reloads and metrics. Each configuration
// runs on real Apache 2.4 (the oracle) and through orderly, which must
// answer alike. The TLS settings are corpus cases 964-966.

// ldapSection protects /NAME/ with AuthBasicProvider ldap and url.
func ldapSection(name, url, require string) string {
	return fmt.Sprintf(`<Directory "@DOCROOT@/%[1]s">
    AuthType Basic
    AuthName "%[1]s"
    AuthBasicProvider ldap
    AuthLDAPURL "%[2]s"
    Require %[3]s
</Directory>
`, name, url, require)
}

// ldapPair is one configuration on the oracle and through orderly.
type ldapPair struct {
	oracle *apachetest.Server
	front  string // orderly's address
	l      apachetest.Layout
	f      orderlyFront
	stop   func()
}

// startLDAPPair lays out a case whose legacy.conf is conf and whose
// document root has index.html files in dirs, and starts the oracle and
// orderly (in front of a backend that answers 200) for it.
func startLDAPPair(t *testing.T, name, conf string, f orderlyFront, dirs ...string) *ldapPair {
	t.Helper()
	return startLDAPPairFiles(t, name, conf, "", f, dirs...)
}

// startLDAPPairFiles is startLDAPPair with more files of the case
// (txtar).
func startLDAPPairFiles(t *testing.T, name, conf, files string, f orderlyFront, dirs ...string) *ldapPair {
	t.Helper()
	txt := "-- modules --\nldap\nauthnz_ldap\n-- legacy.conf --\n" + conf + files
	for _, d := range dirs {
		txt += fmt.Sprintf("-- docroot/%s/index.html --\n%s\n", d, d)
	}
	// The requests are the test's own; a case must name one.
	txt += "-- requests --\nGET / 8.8.8.8\n"
	_, l := inlineCase(t, name, txt)
	p := &ldapPair{l: l, f: f}
	p.oracle = apachetest.Start(t, l.OracleOptions())
	p.front, p.stop = f.start(t, l, slowBackend(t, 0))
	t.Cleanup(p.stop)
	return p
}

// ask sends GET path with Basic credentials user:pw to addr and returns
// the status and how long the answer took.
func ask(t *testing.T, addr, path, user, pw string) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: path, ClientIP: "8.8.8.8", User: user, Password: pw, HasAuth: true})
	if err != nil {
		t.Fatalf("GET %s from %s: %v", path, addr, err)
	}
	return resp.Status, time.Since(start)
}

// both asks the oracle and orderly and fails the test unless each
// answers want.
func (p *ldapPair) both(t *testing.T, what, path, user, pw string, want int) {
	t.Helper()
	a, _ := ask(t, p.oracle.Addr, path, user, pw)
	o, _ := ask(t, p.front, path, user, pw)
	if a != want || o != want {
		t.Errorf("%s: Apache %d, orderly %d, want %d", what, a, o, want)
	}
}

// startSlapd runs the test directory's slapd and makes the cases laid
// out until the test ends name it.
func startSlapd(t *testing.T) *ldaptest.Server {
	t.Helper()
	s := ldaptest.Start(t)
	ca, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	apachetest.UseLDAP(t, apachetest.LDAPInfo{URL: s.URL, SURL: s.LDAPSURL, Base: s.BaseDN, BindDN: s.BindDN, BindPassword: s.BindPassword, CA: ca})
	return s
}

// TestLDAPCacheSettings: with slapd stopped after a successful login,
// mod_ldap's search cache grants the same user and password again within
// LDAPCacheTTL (the default, 600 s); LDAPCacheEntries 0, LDAPOpCacheEntries
// 0 (which turns every cache off too) and an expired LDAPCacheTTL make it
// a 500, as for a user never seen. Apache and orderly alike.
func TestLDAPCacheSettings(t *testing.T) {
	apachetest.Require(t)
	srv := startSlapd(t)
	section := ldapSection("ldap", "@LDAPURL@/ou=people,@LDAPBASE@?uid", "valid-user")
	for _, tc := range []struct {
		name, conf string
		wait       time.Duration // after slapd stops
		cached     int           // the status of the user who logged in
	}{
		{name: "default", cached: 200},
		{name: "search cache off", conf: "LDAPCacheEntries 0\n", cached: 500},
		{name: "op cache off", conf: "LDAPOpCacheEntries 0\n", cached: 500},
		{name: "ttl", conf: "LDAPCacheTTL 1\n", wait: 1500 * time.Millisecond, cached: 500},
		{name: "ttl not yet", conf: "LDAPCacheTTL 30\n", wait: 1500 * time.Millisecond, cached: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startLDAPPair(t, "ldapcache", "LDAPConnectionTimeout 2\nLDAPRetries 0\n"+tc.conf+section, orderlyFront{}, "ldap")
			p.both(t, "slapd up", "/ldap/", "alice", "alice-pw", 200)
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			defer srv.Restart(t)
			time.Sleep(tc.wait)
			p.both(t, "slapd down, the user who logged in", "/ldap/", "alice", "alice-pw", tc.cached)
			p.both(t, "slapd down, another user", "/ldap/", "bob", "bob-pw", 500)
			if t.Failed() {
				t.Logf("Apache's error log:\n%s", p.oracle.ErrorLog())
			}
		})
	}
}

// silentServer accepts connections and never answers: an LDAP server
// that hangs. It returns its address, and hangUp, which closes the
// connections it holds (they are closed when the test ends too).
func silentServer(t *testing.T) (addr string, hangUp func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	hangUp = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
		conns = nil
	}
	t.Cleanup(func() {
		ln.Close()
		hangUp()
	})
	return ln.Addr().String(), hangUp
}

// unreachableServer is an address whose connections never complete: a
// socket listening with a backlog of 0 whose one queued connection is
// never accepted, so that the kernel drops every later SYN (the client's
// connect waits, as for a host that drops packets).
func unreachableServer(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	// Fill the queue, then check that a connection now waits.
	for {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	return addr
}

// TestLDAPTimeoutSettings: an LDAP server that accepts connections and
// never answers is a 500 after the bounds the configuration sets, not
// after the defaults (LDAPTimeout 60 s, tried 4 times): LDAPTimeout
// bounds each bind, each of 1 + LDAPRetries tries, with LDAPRetryDelay
// between them. Apache and orderly answer alike, in the same time
// (measured here: 2.007 s and 2.003 s; 2.512 s and 2.505 s). A host
// whose connections never complete costs LDAPConnectionTimeout a try
// (2.039 s and 2.001 s for two tries of 1 s), and the next host of the
// URL's list is tried after it (1.032 s and 1.013 s).
//
// An LDAPS handshake that never completes is where they knowingly
// differ (proxy/ldapauth's package documentation): Apache 2.4.71 with
// OpenLDAP 2.5 waits for it without bound (more than 90 s, whatever
// LDAPConnectionTimeout and LDAPTimeout say), orderly bounds it by
// LDAPConnectionTimeout and answers 500. Both refuse; the test pins
// Apache's silence for a few seconds and orderly's 500.
func TestLDAPTimeoutSettings(t *testing.T) {
	apachetest.Require(t)
	srv := startSlapd(t)
	silent, hangUp := silentServer(t)
	unreachable := unreachableServer(t)
	for _, tc := range []struct {
		name, conf, url string
		min, max        time.Duration // Apache's and orderly's answer within
		want            int           // 0: 500
		apacheHangs     bool
	}{
		{name: "connection timeout", conf: "LDAPConnectionTimeout 1\nLDAPRetries 1\n", url: "ldap://" + unreachable, min: 2 * time.Second, max: 4 * time.Second},
		{name: "connection timeout, next host", conf: "LDAPConnectionTimeout 1\n", url: "ldap://" + unreachable + " " + srv.Addr, min: time.Second, max: 3 * time.Second, want: 200},
		{name: "ldap timeout", conf: "LDAPTimeout 1\nLDAPRetries 1\n", url: "ldap://" + silent, min: 2 * time.Second, max: 4 * time.Second},
		{name: "ldap timeout retry delay", conf: "LDAPTimeout 1\nLDAPRetries 1\nLDAPRetryDelay 500ms\n", url: "ldap://" + silent, min: 2500 * time.Millisecond, max: 5 * time.Second},
		{name: "ldaps handshake", conf: "LDAPConnectionTimeout 1\nLDAPTimeout 30\nLDAPRetries 0\n", url: "ldaps://" + silent, min: time.Second, max: 3 * time.Second, apacheHangs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startLDAPPair(t, "ldaptimeout", tc.conf+ldapSection("hang", tc.url+"/ou=people,@LDAPBASE@?uid", "valid-user"), orderlyFront{}, "hang")
			defer hangUp() // Apache's children wait in the handshake
			want := tc.want
			if want == 0 {
				want = 500
			}
			o, ot := ask(t, p.front, "/hang/", "alice", "alice-pw")
			if o != want || ot < tc.min || ot > tc.max {
				t.Errorf("orderly: %d after %v, want %d after %v to %v", o, ot.Round(time.Millisecond), want, tc.min, tc.max)
			}
			if tc.apacheHangs {
				start := time.Now()
				req, _ := http.NewRequest("GET", "http://"+p.oracle.Addr+"/hang/", nil)
				req.SetBasicAuth("alice", "alice-pw")
				resp, err := (&http.Client{Timeout: tc.max + time.Second}).Do(req)
				if err == nil {
					resp.Body.Close()
					t.Errorf("Apache answered after %v: it no longer waits for an LDAPS handshake without bound; orderly's bound is then a difference no more", time.Since(start).Round(time.Millisecond))
				}
				t.Logf("orderly 500 after %v; Apache no answer within %v", ot.Round(time.Millisecond), tc.max+time.Second)
				return
			}
			a, at := ask(t, p.oracle.Addr, "/hang/", "alice", "alice-pw")
			t.Logf("Apache %d after %v, orderly %d after %v", a, at.Round(time.Millisecond), o, ot.Round(time.Millisecond))
			if a != want || at < tc.min || at > tc.max {
				t.Errorf("Apache: %d after %v, want %d after %v to %v", a, at.Round(time.Millisecond), want, tc.min, tc.max)
			}
		})
	}
}

// ldapMetric is the value of the orderly_ldap_cache_* series name for
// the cache kind in a scrape.
func ldapMetric(t *testing.T, scrape, name, kind string) float64 {
	t.Helper()
	series := fmt.Sprintf(`orderly_ldap_cache_%s{cache=%q}`, name, kind)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(scrape)
	if m == nil {
		t.Fatalf("no series %s in the scrape", series)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestLDAPSettingsReload: a reload reads mod_ldap's settings again (a
// new LDAP client with the new LDAPCacheTTL), a bad value on reload is
// rejected at its line and the last good configuration keeps serving
// with its settings; the LDAP cache metrics count hits, misses and
// inserts of the search cache, its entries, and never go down across
// reloads.
func TestLDAPSettingsReload(t *testing.T) {
	apachetest.Require(t)
	srv := startSlapd(t)
	metrics, admin := freePort(t), freePort(t)
	conf := func(extra string) string {
		return "LDAPConnectionTimeout 2\nLDAPRetries 0\n" + extra + ldapSection("ldap", "@LDAPURL@/ou=people,@LDAPBASE@?uid", "ldap-group cn=staff,ou=groups,@LDAPBASE@")
	}
	_, l := inlineCase(t, "ldapreload", "-- modules --\nldap\nauthnz_ldap\n-- legacy.conf --\n"+conf("")+
		"-- docroot/ldap/index.html --\nldap\n-- requests --\nGET / 8.8.8.8\n")
	f := orderlyFront{metrics: metrics, admin: admin}
	addr, stop := f.start(t, l, slowBackend(t, 0))
	defer stop()
	status := func(what, user, pw string, want int) {
		t.Helper()
		if got, _ := ask(t, addr, "/ldap/", user, pw); got != want {
			t.Errorf("%s: %s answered %d, want %d", what, user, got, want)
		}
	}
	down := func(what string, wait time.Duration, want int) {
		t.Helper()
		if err := srv.Stop(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
		status(what, "alice", "alice-pw", want)
		srv.Restart(t)
	}
	reload := func(extra string) (int, string) {
		t.Helper()
		if err := os.WriteFile(l.Legacy, l.Expand([]byte(conf(extra))), 0o644); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post("http://"+admin+"/-/reload", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	scrape := scrapeMetrics(t, metrics)
	for _, k := range []string{"search", "compare", "dn_compare"} {
		for _, n := range []string{"hits_total", "misses_total", "inserts_total", "removes_total", "purges_total", "entries"} {
			if v := ldapMetric(t, scrape, n, k); v != 0 {
				t.Errorf("before any LDAP request, %s{cache=%q} is %v", n, k, v)
			}
		}
	}
	status("slapd up", "alice", "alice-pw", 200)
	status("slapd up, again", "alice", "alice-pw", 200)
	scrape = scrapeMetrics(t, metrics)
	// The first login misses the search cache and inserts alice's entry,
	// the second hits it; the group compare likewise.
	for _, k := range []string{"search", "compare"} {
		if ldapMetric(t, scrape, "misses_total", k) < 1 || ldapMetric(t, scrape, "inserts_total", k) < 1 || ldapMetric(t, scrape, "hits_total", k) < 1 || ldapMetric(t, scrape, "entries", k) < 1 {
			t.Errorf("after two logins, the %s cache's metrics:\n%s", k, grepLines(scrape, "orderly_ldap_cache_"))
		}
	}
	hits := ldapMetric(t, scrape, "hits_total", "search")
	down("default LDAPCacheTTL, slapd down", 1500*time.Millisecond, 200)

	if code, body := reload("LDAPCacheTTL 1\n"); code != 200 {
		t.Fatalf("reload with LDAPCacheTTL 1: %d %s", code, body)
	}
	scrape = scrapeMetrics(t, metrics)
	if ldapMetric(t, scrape, "hits_total", "search") < hits+1 {
		t.Errorf("search cache hits went from %v to %v across a reload", hits, ldapMetric(t, scrape, "hits_total", "search"))
	}
	if e := ldapMetric(t, scrape, "entries", "search"); e != 0 {
		t.Errorf("a reloaded configuration's caches start empty; %v search entries", e)
	}
	status("after the reload", "alice", "alice-pw", 200)
	down("LDAPCacheTTL 1, slapd down 1.5 s", 1500*time.Millisecond, 500)

	code, body := reload("LDAPCacheTTL 600\nLDAPTimeout x\n")
	if code == 200 || !strings.Contains(body, "legacy.conf:4: Timeout not numerical") {
		t.Errorf("reload with LDAPTimeout x: %d %s; want it rejected at legacy.conf:4", code, body)
	}
	status("after the rejected reload", "alice", "alice-pw", 200)
	down("the rejected reload's LDAPCacheTTL 600 not in force", 1500*time.Millisecond, 500)
}

// checkBoth runs apache2 -t and orderly check on a configuration whose
// lines after the LoadModule lines are text, and returns their verdicts:
// "ok", or "line N: message" for Apache, and orderly's output.
func checkBoth(t *testing.T, p apachetest.Paths, text string) (apache, ours string, oursCode int) {
	t.Helper()
	dir := apachetest.TempDir(t)
	conf := filepath.Join(dir, "httpd.conf")
	head := fmt.Sprintf("LoadModule mpm_event_module %[1]s/mod_mpm_event.so\nLoadModule authz_core_module %[1]s/mod_authz_core.so\nLoadModule ldap_module %[1]s/mod_ldap.so\nLoadModule authnz_ldap_module %[1]s/mod_authnz_ldap.so\nServerName 127.0.0.1\nPidFile %[2]s/pid\nErrorLog %[2]s/error.log\nDocumentRoot %[2]s\n", p.ModulesDir, dir)
	if err := os.WriteFile(conf, []byte(head+text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p.Apache, "-f", conf, "-t")
	cmd.Env = append(os.Environ(), "APACHE_RUN_DIR="+dir)
	out, _ := cmd.CombinedOutput()
	apache = "ok"
	if m := regexp.MustCompile(`Syntax error on line (\d+) of [^:\n]+:\n(.*)`).FindStringSubmatch(string(out)); m != nil {
		apache = "line " + m[1] + ": " + m[2]
	} else if !strings.Contains(string(out), "Syntax OK") {
		t.Fatalf("apache2 -t: %s", out)
	}
	hcl := filepath.Join(dir, "orderly.hcl")
	if err := os.WriteFile(hcl, []byte(fmt.Sprintf("listen = \"127.0.0.1:1\"\nbackend \"httpd\" {\n  url = \"http://127.0.0.1:1\"\n}\nlegacy {\n  files = [%q]\n  semantics = \"2.4-compat\"\n}\n", conf)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(binary, "check", "-config", hcl)
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		oursCode = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return apache, string(b), oursCode
}

// TestLDAPCertFiles: what Apache 2.4 with OpenLDAP makes of the
// LDAPTrustedGlobalCert lines orderly refuses or cannot use, and what
// orderly does with them:
//   - a file that does not exist: apache2 -t refuses the line ("Invalid
//     global certificate file path"), and orderly check does, at the same
//     line (the walk looks where legacy.path_map says orderly reads it);
//   - CA_DER: Apache starts and never uses the file (OpenLDAP takes PEM
//     files only; apr-util stops at the line), so LDAPS with the right
//     CA, in DER, fails (500); orderly refuses the line at load;
//   - CA_BASE64 naming a directory that holds the CA: Apache starts (the
//     path exists), and OpenLDAP cannot load it as a file: 500; orderly
//     likewise;
//   - no LDAPTrustedGlobalCert: the system's CAs, which did not sign the
//     test's slapd: 500, Apache and orderly alike.
func TestLDAPCertFiles(t *testing.T) {
	p := apachetest.Require(t)
	startSlapd(t)
	extra := apachetest.TempDir(t)
	apache, ours, code := checkBoth(t, p, "\nLDAPTrustedGlobalCert CA_BASE64 "+extra+"/missing.pem\n")
	if apache != "line 10: Invalid global certificate file path" || code != 2 || !strings.Contains(ours, "httpd.conf:10: Invalid global certificate file path") {
		t.Errorf("a missing CA file:\n apache2 -t: %s\n orderly check (exit %d): %s", apache, code, ours)
	}
	der := filepath.Join(extra, "ca.der")
	if err := os.WriteFile(der, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	apache, ours, code = checkBoth(t, p, "LDAPTrustedGlobalCert CA_DER "+der+"\n")
	if apache != "ok" || code != 2 || !strings.Contains(ours, "httpd.conf:9: LDAPTrustedGlobalCert CA_DER cannot be evaluated by orderly") {
		t.Errorf("CA_DER:\n apache2 -t: %s\n orderly check (exit %d): %s", apache, code, ours)
	}

	section := ldapSection("ldaps", "@LDAPSURL@/ou=people,@LDAPBASE@?uid", "valid-user")
	// CA_DER on Apache: the right CA, in DER, not used.
	_, l := inlineCase(t, "ldapder", "-- modules --\nldap\nauthnz_ldap\n-- legacy.conf --\nLDAPTrustedGlobalCert CA_DER @EXTRA@/ca.der\n"+section+
		"-- docroot/ldaps/index.html --\nldaps\n-- requests --\nGET / 8.8.8.8\n")
	pemCA, err := os.ReadFile(l.LDAPCA)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(pemCA)
	if blk == nil {
		t.Fatalf("%s holds no PEM block", l.LDAPCA)
	}
	if err := os.WriteFile(filepath.Join(l.Extra, "ca.der"), blk.Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	oracle := apachetest.Start(t, l.OracleOptions())
	if st, _ := ask(t, oracle.Addr, "/ldaps/", "alice", "alice-pw"); st != 500 {
		t.Errorf("Apache with the right CA as CA_DER: %d, want 500 (OpenLDAP does not read DER)", st)
	}
	oracle.Stop()

	for _, tc := range []struct{ name, conf string }{
		{"directory", "LDAPTrustedGlobalCert CA_BASE64 @EXTRA@/cadir\n"},
		{"no ca", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The directory holds the CA (a link to the case's @LDAPCA@).
			pr := startLDAPPairFiles(t, "ldapca", "LDAPRetries 0\n"+tc.conf+section, "-- extra/cadir/ca.pem@symlink --\n@LDAPCA@\n", orderlyFront{}, "ldaps")
			pr.both(t, tc.name, "/ldaps/", "alice", "alice-pw", 500)
		})
	}
}
