package differential

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

var (
	securityDir   = flag.String("security", "../../testdata/security", "security corpus directory")
	securityTable = flag.Bool("security-table", false, "log every trick's answers (TestSecurityCorpus)")
)

// The peers tricks come from: 127.0.0.1 is the trusted proxy of orderly
// (orderlyFront) and of both servers' mod_remoteip (RemoteIPInternalProxy),
// 127.0.0.2 a client nobody trusts.
const (
	trustedPeer   = "127.0.0.1"
	untrustedPeer = "127.0.0.2"
)

// Limits of one trick's connection: the whole exchange, and the silence
// after which the server is taken to have said all it will (a connection
// left open after a pipelined or smuggled request).
const (
	trickTimeout = 4 * time.Second
	trickIdle    = 300 * time.Millisecond
)

// TestSecurityCorpus sends every trick of testdata/security/tricks.txtar
// byte for byte to real Apache 2.4 with the legacy rules of site.txtar
// (the oracle, under mod_access_compat, mod_remoteip trusting 127.0.0.1)
// and to orderly in front of a second Apache with the very same rules (the
// backend), from the same peer, and then reads both access logs, where
// every request is marked by its X-Trick-ID. The backend's status alone
// cannot show a bypass, since it enforces the rules too; what can:
//
//   - the backend logged a request it refused (401, 403): orderly forwarded
//     what it should have refused itself, or changed the request so that
//     it means another resource, host or client (where the oracle served
//     the same client, path and host, orderly only changed a header on
//     the way, such as a field the client named in Connection: reported,
//     not failed);
//   - the backend served a request the oracle refused;
//   - the backend saw another client, path (%U) or virtual host (%v) than
//     the oracle did for the same request;
//   - the backend logged a request the oracle never processed (smuggled,
//     tunnelled) for another client than the untrusted peer;
//   - the backend logged a request without a known X-Trick-ID.
//
// Zero bypasses is the pass condition. A trick's "# apache: NNN" is
// checked against the oracle, so a trick that stops meaning what it says
// fails. A trick orderly refuses while Apache serves it (over-strict) is
// reported, not failed; when this was written they were:
//
//   - method/trace: Apache answers TRACE itself (200, the request echoed)
//     whatever the rules; orderly refuses it (403).
//   - form/absolute-https: an https:// target on the plain listener; Apache
//     picks the virtual host by the Host header, orderly answers 400 (Go's
//     server has dropped that header; proxy/requestform.go).
//   - xff/trusted-decimal, xff/trusted-hex: mod_remoteip reads entries
//     with getaddrinfo, so 167837955 and 0x0a.1.2.3 are 10.1.2.3; orderly
//     answers 400 to an entry that is not an address.
//   - smuggling/te-identity-chunked: Apache reads "Transfer-Encoding:
//     identity, chunked" as chunked, Go's server answers 501.
//
// Also reported, not failed: requests Apache refuses before access
// control (400) that orderly forwards and the backend refuses in turn or
// serves as the rules allow (host names such as "a..", "a:80:80" and
// "a%2eb", which orderly decides on the default host; two equal
// Content-Length fields; a bare LF after Transfer-Encoding; a lower-case
// "post", 501 on both), a request that lost a header the client named in
// Connection (its Authorization: the backend, with the rules, asks for
// credentials, while orderly has authenticated it), and requests the
// backend refused before it read X-Trick-ID (GET *, an over-long field).
//
// The untrusted peer is a real source address (127.0.0.2), not a header:
// orderly trusts only 127.0.0.1, so a spoofed X-Forwarded-For from it must
// change nothing, and the chains from the trusted peer check that orderly
// reads the header as mod_remoteip does.
//
// The servers load mod_http2 with Protocols h2c http/1.1, as Debian's
// http2.conf sets it: a backend that switched to h2c through orderly would
// take HTTP/2 requests orderly never sees (upgrade/h2c: it does not, since
// the proxy sends Connection: Upgrade alone and mod_http2 wants
// HTTP2-Settings named there too).
//
// Run with -args -security-table to log every trick's answers.
func TestSecurityCorpus(t *testing.T) {
	sec := startSecurity(t)
	front := orderlyFront{backend: fmt.Sprintf("backend \"httpd\" {\n  url = \"http://%s\"\n  health_check {\n    enabled = false\n  }\n}", sec.backend.Addr)}
	addr, stop := front.start(t, sec.layout, "")
	defer stop()
	rep := sec.run(t, sec.tricks, addr)
	for _, tr := range sec.tricks {
		if tr.Apache == 0 {
			continue
		}
		if r := rep.results[tr.Name]; len(r.oracle.statuses) == 0 || r.oracle.statuses[0] != tr.Apache {
			t.Errorf("%s: the oracle answered %v, the trick says # apache: %d", tr.Name, r.oracle.statuses, tr.Apache)
		}
	}
	// The backend is up throughout: a 502 is orderly failing to forward,
	// or worse, taking the backend out of service for every client
	// because one client's request body was malformed.
	for _, tr := range sec.tricks {
		if slices.Contains(rep.results[tr.Name].front.statuses, 502) {
			t.Errorf("%s: orderly answered 502 %v with the backend up", tr.Name, rep.results[tr.Name].front.statuses)
		}
	}
	for _, b := range rep.bypasses {
		t.Errorf("BYPASS: %s", b)
	}
	for _, tr := range sec.tricks {
		if !*securityTable && !t.Failed() {
			break
		}
		r := rep.results[tr.Name]
		t.Logf("%-46s %-9s apache %-12s orderly %-12s backend %s", tr.Name, peerName(tr), statusList(r.oracle), statusList(r.front), entryList(r.backend))
	}
	for _, n := range rep.notes {
		t.Logf("note: %s", n)
	}
	for _, n := range rep.overStrict {
		t.Logf("over-strict: %s", n)
	}
	if len(rep.bypasses) > 0 {
		out, _ := os.ReadFile(filepath.Join(sec.layout.Dir, "orderly.out"))
		t.Logf("orderly's output:\n%s", out)
	}
	fmt.Printf("security: %d tricks in %d categories, %d forwarded, %d bypasses, %d over-strict (%d requests the backend logged, %v)\n",
		len(sec.tricks), rep.categories, rep.forwarded, len(rep.bypasses), len(rep.overStrict), rep.backendLines, rep.elapsed.Round(time.Millisecond))
}

// TestSecurityControl proves the check can fail: a plain reverse proxy in
// front of the same backend lets tricks through, and they are counted,
// the allowed one too, since the plain proxy loses the client's address
// (the backend refuses the trusted proxy's 127.0.0.1).
func TestSecurityControl(t *testing.T) {
	sec := startSecurity(t)
	addr, stop := passFront{}.start(t, sec.layout, sec.backend.Addr)
	defer stop()
	var some []trick
	for _, tr := range sec.tricks {
		switch tr.Name {
		case "path/baseline-denied", "path/pct-letter", "xff/untrusted-spoof", "host/intranet", "path/baseline-allowed":
			some = append(some, tr)
		}
	}
	rep := sec.run(t, some, addr)
	fmt.Printf("security control pass-through: %d tricks, %d forwarded, %d bypasses (must be %d)\n", len(some), rep.forwarded, len(rep.bypasses), len(some))
	if len(some) != 5 || len(rep.bypasses) != len(some) {
		t.Errorf("a pass-through front: %d bypasses counted for %d tricks, want one each:\n%s", len(rep.bypasses), len(some), strings.Join(rep.bypasses, "\n"))
	}
}

// security is the oracle and the backend, both with the site's rules.
type security struct {
	tricks          []trick
	layout          apachetest.Layout
	oracle, backend *apachetest.Server
}

func startSecurity(t *testing.T) *security {
	t.Helper()
	paths := apachetest.Require(t)
	tricks, err := loadTricks(filepath.Join(*securityDir, "tricks.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := apachetest.LoadCase(filepath.Join(*securityDir, "site.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if !useNames(t, c) {
		t.Skip("the site looks up host names, and there is no private name service")
	}
	l, err := c.Materialize(filepath.Join(apachetest.TempDir(t), "site"))
	if err != nil {
		t.Fatal(err)
	}
	h2 := filepath.Join(paths.ModulesDir, "mod_http2.so")
	if _, err := os.Stat(h2); err != nil {
		t.Fatalf("mod_http2 (package apache2): %v", err)
	}
	opt := l.OracleOptions()
	// Each request's marker, as the server saw it: %a is the client after
	// mod_remoteip, %v the virtual host, %U the decoded path (of the
	// original request, before any DirectoryIndex redirect).
	opt.Extra = fmt.Sprintf("LoadModule http2_module %q\nProtocols h2c http/1.1\n"+
		"LogFormat \"%%{X-Trick-ID}i\\t%%>s\\t%%a\\t%%v\\t%%m\\t%%U\\t%%r\" trick\nCustomLog trick.log trick\n", h2)
	sec := &security{tricks: tricks, layout: l}
	sec.oracle = apachetest.Start(t, opt)
	sec.backend = apachetest.Start(t, opt)
	// The site means what its comment says.
	for _, rq := range c.Requests {
		resp, err := apachetest.Do(sec.oracle.Addr, rq)
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Matches(rq.Want) {
			t.Errorf("%s:%d: %s: the oracle answered %d", c.Path, rq.Line, rq, resp.Status)
		}
	}
	return sec
}

// wireResult is what came back on a trick's connection.
type wireResult struct {
	statuses []int // the status of every response, in order
	err      error // a failure to connect or to send (a server may close early)
}

// securityReport is the verdict on a run of tricks.
type securityReport struct {
	results    map[string]*trickResult
	bypasses   []string
	notes      []string
	overStrict []string
	forwarded  int // tricks of which the backend logged at least one request
	categories int
	// backendLines is how many requests the backend logged.
	backendLines int
	elapsed      time.Duration
}

type trickResult struct {
	oracle, front wireResult
	backend       []logEntry // what the backend logged for the trick
}

// run sends each trick to the oracle and to front at the same time, then
// judges from the two access logs.
func (s *security) run(t *testing.T, tricks []trick, front string) *securityReport {
	t.Helper()
	start := time.Now()
	oracleLog, backendLog := filepath.Join(s.oracle.Dir, "trick.log"), filepath.Join(s.backend.Dir, "trick.log")
	oracleOff, backendOff := fileSize(oracleLog), fileSize(backendLog)
	rep := &securityReport{results: map[string]*trickResult{}}
	cats := map[string]bool{}
	for _, tr := range tricks {
		cats[tr.Category] = true
		r := &trickResult{}
		rep.results[tr.Name] = r
		var wg sync.WaitGroup
		wg.Go(func() { r.oracle = sendTrick(s.oracle.Addr, tr) })
		r.front = sendTrick(front, tr)
		wg.Wait()
	}
	rep.categories = len(cats)
	// Apache writes a request's log line after its response: wait until
	// neither log grows.
	settle(oracleLog, backendLog)
	oracle := parseTrickLog(readFrom(oracleLog, oracleOff))
	backend := parseTrickLog(readFrom(backendLog, backendOff))
	rep.backendLines = len(backend)
	judge(tricks, oracle, backend, rep)
	rep.elapsed = time.Since(start)
	return rep
}

// settle waits until the files have not grown for 200 ms (at most 5 s).
func settle(names ...string) {
	size := func() (n int64) {
		for _, f := range names {
			n += fileSize(f)
		}
		return n
	}
	last := size()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		n := size()
		if n == last {
			return
		}
		last = n
	}
}

var statusLine = regexp.MustCompile(`(?m)^HTTP/[0-9]\.[0-9] ([0-9]{3})`)

// sendTrick sends a trick on a new connection from its peer address and
// reads until the server closes, falls silent or the time is up.
func sendTrick(addr string, tr trick) wireResult {
	local := untrustedPeer
	if tr.Trusted {
		local = trustedPeer
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: trickTimeout}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return wireResult{err: err}
	}
	defer c.Close()
	deadline := time.Now().Add(trickTimeout)
	var got []byte
	buf := make([]byte, 64<<10)
	read := func(until time.Time) error {
		c.SetReadDeadline(until)
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		return err
	}
	var res wireResult
	for i, seg := range tr.Segments {
		c.SetWriteDeadline(deadline)
		if _, err := c.Write(seg); err != nil {
			res.err = err
			break
		}
		if i == len(tr.Segments)-1 {
			break
		}
		// @@await@@: the head of a response first.
		for !bytes.Contains(got, []byte("\r\n\r\n")) {
			if err := read(deadline); err != nil {
				break
			}
		}
	}
	for {
		until := deadline
		if len(got) > 0 {
			if idle := time.Now().Add(trickIdle); idle.Before(deadline) {
				until = idle
			}
		}
		if read(until) != nil {
			break
		}
	}
	for _, m := range statusLine.FindAllSubmatch(got, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		res.statuses = append(res.statuses, n)
	}
	return res
}

// A logEntry is one line of a server's trick.log.
type logEntry struct {
	id            string // X-Trick-ID, "-" when absent
	status        int
	client, vhost string
	method, uri   string
	line          string
}

func parseTrickLog(s string) []logEntry {
	var es []logEntry
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 7)
		for len(f) < 7 {
			f = append(f, "")
		}
		st, _ := strconv.Atoi(f[1])
		es = append(es, logEntry{id: f[0], status: st, client: f[2], vhost: f[3], method: f[4], uri: f[5], line: line})
	}
	return es
}

// refusal reports whether a status is access control's refusal.
func refusal(st int) bool { return st == 401 || st == 403 }

// served reports whether Apache got past access control and answered.
func served(st int) bool { return st > 0 && st < 400 || st == 404 || st == 405 }

// judge applies the rules of TestSecurityCorpus's comment.
func judge(tricks []trick, oracle, backend []logEntry, rep *securityReport) {
	byName := map[string]trick{}
	for _, tr := range tricks {
		byName[tr.Name] = tr
	}
	oracleByID := map[string][]logEntry{}
	for _, e := range oracle {
		oracleByID[e.id] = append(oracleByID[e.id], e)
	}
	seen := map[string]int{}
	for _, e := range backend {
		k := seen[e.id]
		seen[e.id]++
		name, _, _ := strings.Cut(e.id, "+")
		tr, ok := byName[name]
		if !ok {
			msg := fmt.Sprintf("a request without a known X-Trick-ID reached the backend: %s", e.line)
			if e.status < 400 || refusal(e.status) {
				rep.bypasses = append(rep.bypasses, msg)
			} else {
				rep.notes = append(rep.notes, msg)
			}
			continue
		}
		r := rep.results[name]
		r.backend = append(r.backend, e)
		var o *logEntry
		if oes := oracleByID[e.id]; k < len(oes) {
			o = &oes[k]
		}
		same := o != nil && sameRequest(*o, e)
		where := fmt.Sprintf("%s (%s): backend logged %q", name, peerName(tr), e.line)
		switch {
		case refusal(e.status) && same && !refusal(o.status):
			rep.notes = append(rep.notes, fmt.Sprintf("%s; Apache answered %d to the same client, path and host: orderly changed a header on the way", where, o.status))
		case refusal(e.status):
			rep.bypasses = append(rep.bypasses, fmt.Sprintf("%s: the front forwarded what the rules refuse%s", where, oracleSaw(o)))
		case o != nil && refusal(o.status):
			rep.bypasses = append(rep.bypasses, fmt.Sprintf("%s: the backend served what Apache refuses%s", where, oracleSaw(o)))
		case o != nil && !served(o.status):
			// Apache refused it before access control (400, 413, 501, ...);
			// the backend's own rules judged what orderly sent it.
			rep.notes = append(rep.notes, fmt.Sprintf("%s: forwarded what Apache refuses at the protocol level (%d)", where, o.status))
		case o != nil && !same:
			rep.bypasses = append(rep.bypasses, fmt.Sprintf("%s: the backend saw another request than Apache%s", where, oracleSaw(o)))
		case o == nil && !tr.Trusted && e.client != untrustedPeer:
			rep.bypasses = append(rep.bypasses, fmt.Sprintf("%s: the backend took the client to be %s, the peer was %s, and Apache never processed this request", where, e.client, untrustedPeer))
		case o == nil:
			rep.notes = append(rep.notes, fmt.Sprintf("%s: forwarded a request Apache did not process as such (Apache answered %v)", where, rep.results[name].oracle.statuses))
		}
	}
	for _, tr := range tricks {
		r := rep.results[tr.Name]
		if len(r.backend) > 0 {
			rep.forwarded++
		}
		main := oracleByID[tr.Name]
		reached := slices.ContainsFunc(r.backend, func(e logEntry) bool { return e.id == tr.Name })
		if len(main) == 0 || reached || !served(main[0].status) {
			continue
		}
		if len(r.front.statuses) == 0 || r.front.statuses[0] != main[0].status {
			rep.overStrict = append(rep.overStrict, fmt.Sprintf("%s (%s): orderly answered %s, Apache %d", tr.Name, peerName(tr), statusList(r.front), main[0].status))
		}
	}
}

// sameRequest reports whether the oracle and the backend took a request
// to mean the same: the same virtual host, path (mod_dir rewrites a
// directory's path to its index in place, which one of them may not have
// reached) and client (unless the server answered 400 before mod_remoteip
// ran, which leaves the client at the peer).
func sameRequest(o, e logEntry) bool {
	index := func(u string) string {
		if strings.HasSuffix(u, "/index.html") {
			return strings.TrimSuffix(u, "index.html")
		}
		return u
	}
	return o.vhost == e.vhost && index(o.uri) == index(e.uri) &&
		(o.client == e.client || o.status == 400 || e.status == 400)
}

func oracleSaw(o *logEntry) string {
	if o == nil {
		return "; Apache never processed this request"
	}
	return fmt.Sprintf("; Apache logged %q", o.line)
}

func peerName(tr trick) string {
	if tr.Trusted {
		return "trusted"
	}
	return "untrusted"
}

func statusList(w wireResult) string {
	if len(w.statuses) == 0 {
		if w.err != nil {
			return "none (" + w.err.Error() + ")"
		}
		return "none"
	}
	var s []string
	for _, st := range w.statuses {
		s = append(s, strconv.Itoa(st))
	}
	return strings.Join(s, ",")
}

func entryList(es []logEntry) string {
	if len(es) == 0 {
		return "-"
	}
	var s []string
	for _, e := range es {
		s = append(s, fmt.Sprintf("%d %s %s %s", e.status, e.client, e.vhost, e.uri))
	}
	return strings.Join(s, "; ")
}
