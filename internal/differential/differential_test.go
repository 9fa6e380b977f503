// Package differential holds orderly's proof: every case of the corpus in
// testdata/corpus runs on real Apache httpd 2.4 under mod_access_compat
// (the oracle) and through the orderly binary in front of a second Apache
// with the case's configuration but no access rules (the same URL
// mapping), and the answers are compared request by request, status for
// status. Controls show the comparison can fail and can pass: a
// pass-through front must disagree, a front that turns 404 into 200 must
// be caught, and so must a refusal the backend made instead of orderly
// (exact_test.go), and Apache itself as the front must agree fully.
package differential

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

var (
	corpusDir = flag.String("corpus", "../../testdata/corpus", "corpus directory")
	only      = flag.String("case", "", "run only cases whose name contains this")
	binary    string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if dir := os.Getenv(namespaceEnv); dir != "" {
		// Re-executed inside the private name service (names_test.go).
		os.Exit(runInNamespace(m, dir))
	}
	dir, err := os.MkdirTemp("", "orderly-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "orderly")
	cmd := exec.Command("go", "build", "-o", binary, "../../cmd/orderly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building orderly:", err)
		os.Exit(1)
	}
	code := reexecInNamespace(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// front is what the corpus is replayed through, in front of the backend.
type front interface {
	// start makes the front serve the case laid out at l; it returns the
	// address to send requests to and a function that stops it.
	start(t *testing.T, l apachetest.Layout, backend string) (addr string, stop func())
	// errorLog returns a function reading the front's error log so far,
	// or nil when the front writes none to compare.
	errorLog(l apachetest.Layout) func() string
}

func (orderlyFront) errorLog(l apachetest.Layout) func() string {
	return func() string {
		b, _ := os.ReadFile(filepath.Join(l.Dir, "orderly-error.log"))
		return string(b)
	}
}

func (passFront) errorLog(apachetest.Layout) func() string { return nil }

func (f *apacheFront) errorLog(apachetest.Layout) func() string { return f.srv.ErrorLog }

// accessCodes are the error-log codes of access control that orderly
// writes as Apache does (design.md, "Responses").
var accessCodes = regexp.MustCompile(`\b(AH01797|AH01630|AH01617|AH01618|AH01614|AH01627|AH00027|AH00028|AH01615|AH01619|AH01620|AH01629|AH01631|AH01665|AH02430|AH01796|AH00037|AH00032|AH01276|AH02219|AH02035|AH02227): `)

// logCodes lists the access-control codes in a piece of error log, sorted.
func logCodes(log string) string {
	var codes []string
	for _, m := range accessCodes.FindAllStringSubmatch(log, -1) {
		codes = append(codes, m[1])
	}
	sort.Strings(codes)
	return strings.Join(codes, " ")
}

// orderlyFront runs the orderly binary with an HCL file for the case.
type orderlyFront struct {
	metrics string // metrics listener address, if any
	admin   string // admin listener address, if any
	access  bool   // write an access log to access.log in the case's directory
	mode    string // "" is enforce
	legacy  string // legacy file orderly reads instead of the case's
	state   string // state_file
	extra   string // more HCL, appended
	backend string // the backend block, instead of one with the backend given to start
}

func freePort(t *testing.T) string {
	t.Helper()
	addr, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// pickedPorts are the addresses pickPort handed out in this process.
var pickedPorts sync.Map

// pickPort returns a free address on 127.0.0.1, never one it returned
// before: each is let go at once, and the kernel may hand a port out again
// to the next caller, where two listeners of one server would then
// collide.
func pickPort() (string, error) {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := ln.Addr().String()
		ln.Close()
		if _, taken := pickedPorts.LoadOrStore(addr, true); !taken {
			return addr, nil
		}
	}
}

func (f orderlyFront) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	t.Helper()
	addr, stop, err := f.launch(l, backend)
	if err != nil {
		t.Fatal(err)
	}
	return addr, stop
}

// config is the HCL of an orderly listening on addr in front of backend.
func (f orderlyFront) config(l apachetest.Layout, backend, addr string) string {
	legacy, mode := l.Legacy, "enforce"
	if f.legacy != "" {
		legacy = f.legacy
	}
	if f.mode != "" {
		mode = f.mode
	}
	// No active health checks: the harness has made sure the backend
	// answers before orderly starts, and a first check that a busy
	// machine answers late (or a site whose "GET /" Apache answers with
	// 500, corpus 919) would leave it out for the whole case, every
	// request answered 502 by orderly itself. The health checks have
	// tests of their own (lifecycle_test.go).
	block := fmt.Sprintf("backend \"httpd\" {\n  url = \"http://%s\"\n  health_check {\n    enabled = false\n  }\n}", backend)
	if f.backend != "" {
		block = f.backend
	}
	// orderly is told the modules the oracle loads: those decide what
	// <IfModule> reads and what some directives do (mod_autoindex
	// answers for Options Indexes, mod_negotiation for MultiViews).
	var mods []string
	for _, m := range l.OracleOptions().LoadedModules() {
		mods = append(mods, strconv.Quote(m))
	}
	hcl := fmt.Sprintf(`listen = %q
%s
legacy {
  files         = [%q]
  document_root = %q
  semantics     = "2.4-compat"
  modules       = [%s]
}
client_ip {
  trusted_proxies = ["127.0.0.1/32"]
}
mode      = %q
error_log = %q
`, addr, block, legacy, l.DocRoot, strings.Join(mods, ", "), mode, filepath.Join(l.Dir, "orderly-error.log"))
	if f.metrics != "" {
		hcl += fmt.Sprintf("metrics {\n  listen = %q\n}\n", f.metrics)
	}
	if f.state != "" {
		hcl += fmt.Sprintf("state_file = %q\n", f.state)
	}
	if f.access {
		hcl += fmt.Sprintf("access_log = %q\n", filepath.Join(l.Dir, "access.log"))
	}
	if f.admin != "" {
		hcl += fmt.Sprintf("admin {\n  listen = %q\n}\n", f.admin)
	}
	return frontTLSConfig(hcl+f.extra, l, addr) // ssl_test.go
}

// writeFrontConfig rewrites the configuration of the orderly started by
// f.start for a reload, edited by edit when it is not nil.
func writeFrontConfig(t *testing.T, f orderlyFront, l apachetest.Layout, backend, addr string, edit func(string) string) {
	t.Helper()
	hcl := f.config(l, backend, addr)
	if edit != nil {
		hcl = edit(hcl)
	}
	if err := os.WriteFile(filepath.Join(l.Dir, "orderly.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// launch starts orderly for the case laid out at l and waits until it
// listens; the error holds orderly's output when it does not.
// pid is the process ID of the orderly launched last.
var pid atomic.Int64

func (f orderlyFront) launch(l apachetest.Layout, backend string) (string, func(), error) {
	addr, err := pickPort()
	if err != nil {
		return "", nil, err
	}
	hclPath := filepath.Join(l.Dir, "orderly.hcl")
	tlsAddr, err := pickFrontTLS(l, addr) // ssl_test.go
	if err != nil {
		return "", nil, err
	}
	hcl := f.config(l, backend, addr)
	if err := os.WriteFile(hclPath, []byte(hcl), 0o644); err != nil {
		return "", nil, err
	}
	stop, err := serve(hclPath, filepath.Join(l.Dir, "orderly.out"), addr, f.metrics, f.admin, tlsAddr)
	if err != nil {
		return "", nil, err
	}
	return addr, stop, nil
}

// serve runs `orderly serve -config hclPath`, its output to outPath, and
// waits until every non-empty address of addrs listens. stop sends
// SIGTERM, then SIGKILL after 5 s; calling it again does nothing. The
// error holds orderly's output when it does not come up.
func serve(hclPath, outPath string, addrs ...string) (stop func(), err error) {
	out, err := os.Create(outPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "serve", "-config", hclPath)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid.Store(int64(cmd.Process.Pid))
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-exited
			}
			out.Close()
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if listening(addrs...) {
			return stop, nil
		}
		select {
		case err := <-exited:
			out.Close()
			b, _ := os.ReadFile(outPath)
			return nil, fmt.Errorf("orderly exited before serving (%v):\n%s", err, b)
		default:
		}
		if time.Now().After(deadline) {
			stop()
			b, _ := os.ReadFile(outPath)
			return nil, fmt.Errorf("orderly did not listen on %v:\n%s", addrs, b)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// listening reports whether every non-empty address accepts connections.
func listening(addrs ...string) bool {
	for _, a := range addrs {
		if a == "" {
			continue
		}
		c, err := net.DialTimeout("tcp", a, 100*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
	}
	return true
}

// tolerant is a front that refuses some requests itself, in ways of its
// own: tolerate says why a refusal that differs from Apache's answer is
// the front's and not orderly's ("" when it is not).
type tolerant interface {
	tolerate(want, got apachetest.Response) string
}

// passFront is the first control: a reverse proxy with no rules at all.
type passFront struct{}

func (passFront) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + backend)
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.URL.Path, pr.Out.URL.RawPath = pr.In.URL.Path, pr.In.URL.RawPath
	}}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	return ln.Addr().String(), func() { srv.Close() }
}

// apacheFront is the second control: Apache itself, with the legacy
// rules, as the front.
type apacheFront struct{ srv *apachetest.Server }

func (f *apacheFront) start(t *testing.T, l apachetest.Layout, backend string) (string, func()) {
	if f.srv == nil {
		f.srv = apachetest.Start(t, l.OracleOptions())
	} else {
		f.srv.Reload(t, l.OracleOptions())
	}
	return f.srv.Addr, func() {}
}

type tally struct {
	cases, requests, agree int
	bypasses               int // the oracle refused, the front let it through
	skipped                int // host-name cases not run: no private name service
	dnsQuestions           int // questions the private DNS server was asked
	mismatches             []string
	tolerated              []string // differences the front explains, refusals all
	logged                 int      // requests whose error-log lines were compared
	logMismatches          []string
	elapsed                time.Duration
	// Where the time went: reloading the two servers, starting and
	// stopping the front, and replaying the requests.
	reloading, starting, requesting time.Duration
	// tlsRenegotiation counts the requests mod_ssl refused in a TLS
	// renegotiation and orderly with 403 (ssl_test.go); tlsSkipped the
	// TLS requests of a front that has no TLS listener.
	tlsRenegotiation, tlsSkipped int
	// exact counts the requests whose answers were compared status for
	// status (and Location for Location), and agreed; exactMismatches
	// those that did not agree. byClass counts, by reason, those
	// compared by class only (classOnly).
	exact, exactMismatches int
	byClass                map[string]int
	statuses               map[int]int // the exact answers that agree, by status
	// perCase is, by case name, what replay saw of each case.
	perCase map[string]*caseTally
	// corpusRequests counts the requests of the cases replay selected.
	corpusRequests int
}

// caseTally is one case's share of a replay.
type caseTally struct {
	requests, refused, bypasses, disagree int
}

func (tl *tally) addExact(status int) {
	if tl.statuses == nil {
		tl.statuses = make(map[int]int)
	}
	tl.statuses[status]++
	tl.exact++
}

func (tl *tally) addByClass(why string) {
	if tl.byClass == nil {
		tl.byClass = make(map[string]int)
	}
	tl.byClass[why]++
}

// printExact prints how many answers were compared exactly and how many
// by class, and why, for the run summary of name.
func (tl *tally) printExact(name string) {
	n := 0
	for _, k := range tl.byClass {
		n += k
	}
	fmt.Printf("%s: %d requests compared by exact status (and Location), %d disagreeing; %d by class only:\n", name, tl.exact+tl.exactMismatches, tl.exactMismatches, n)
	codes := make([]int, 0, len(tl.statuses))
	for code := range tl.statuses {
		codes = append(codes, code)
	}
	sort.Ints(codes)
	var b strings.Builder
	for _, code := range codes {
		fmt.Fprintf(&b, " %d×%d", code, tl.statuses[code])
	}
	fmt.Printf("%s:   agreeing exactly:%s\n", name, b.String())
	whys := make([]string, 0, len(tl.byClass))
	for why := range tl.byClass {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	for _, why := range whys {
		fmt.Printf("%s:   %d by class: %s\n", name, tl.byClass[why], why)
	}
}

// refused reports whether a class is a refusal by access control.
func refused(class string) bool {
	return class == "403" || strings.HasPrefix(class, "401") || class == "400" || class == "500"
}

// servers are the oracle and the backend: started for the first case and
// gracefully reloaded for every later one.
type servers struct {
	oracle, backend *apachetest.Server
	oracleLog       int64 // how much of the oracle's error log was read
	// ports are the ports the oracle, the backend and the front listen
	// on, for the case in progress (locationPorts).
	ports []string
	// mapless makes the backend the one without the case's mapping
	// (backendOptions), for TestControlExactMapless.
	mapless bool
}

// answer is r as its exact comparison sees it: the status, and for a
// redirect its Location, without the port of one of the servers
// (normalLocation).
func (s *servers) answer(r apachetest.Response) string {
	if r.Status < 300 || r.Status > 399 || r.Location == "" {
		return strconv.Itoa(r.Status)
	}
	return strconv.Itoa(r.Status) + " " + normalLocation(r.Location, s.ports)
}

// locationPorts returns the ports of addrs ("" ignored).
func locationPorts(addrs ...string) []string {
	var ports []string
	for _, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err == nil {
			ports = append(ports, port)
		}
	}
	return ports
}

// normalLocation returns loc without its port when that is one of ports.
// The oracle, the backend and the front listen on ports of their own,
// where a deployment listens on 80 and 443, and a server names its own
// in a redirect where the request's Host had none (the oracle's TLS
// listener, a virtual host of its address, UseCanonicalPhysicalPort);
// on 80 and 443 the port is left out.
func normalLocation(loc string, ports []string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" || !slices.Contains(ports, u.Port()) {
		return loc
	}
	// The rest of loc stays as written, byte for byte.
	return strings.Replace(loc, "//"+u.Host, "//"+strings.TrimSuffix(u.Host, ":"+u.Port()), 1)
}

// backendAnswered reports whether the front passed on the backend's
// answer: orderly's own answers have no Server field, Apache's name it
// (and the pass-through control passes it on). It is false for Apache as
// the front.
func backendAnswered(fr front, got apachetest.Response) bool {
	switch fr.(type) {
	case orderlyFront, *lbFront, *tolerantOrderly, passFront:
		return strings.HasPrefix(got.Server, "Apache")
	}
	return false
}

// outcome is what became of one request of a case.
type outcome struct {
	rq    apachetest.Request
	want  apachetest.Response // the oracle's answer
	class string              // the front's class, or "error: ..."
	// mismatch and logMismatch describe a disagreement on the class and on
	// the error-log codes; empty when there is none.
	mismatch, logMismatch string
	bypass                bool // the oracle refused, the front let it through
}

// runCase lays c out in dir, and a copy without its access rules for the
// backend (apachetest.Case.WithoutAccess), points the oracle and the
// backend at them, starts fr in front of the backend, replays every
// request on both and compares the answers: a refusal by class (its
// status, a 401's realm), which must be the front's own; any other answer
// by exact status and, for a redirect, Location, except where classOnly
// says why not; and, where they agree, by the access-control codes each
// logged. It adds to tl and returns each request's outcome.
func (s *servers) runCase(t *testing.T, fr front, c *apachetest.Case, dir string, tl *tally) []outcome {
	t.Helper()
	// The case's host names, in the private name service (names_test.go);
	// outside it, a case that looks up names is refused.
	if !useNames(t, c) {
		tl.skipped++
		return nil
	}
	if names != nil {
		defer func() { tl.dnsQuestions += len(names.Asked()) }()
	}
	t0 := time.Now()
	l, err := c.Materialize(dir)
	if err != nil {
		t.Fatalf("%s: %v", c.Path, err)
	}
	// The backend's copy of the case, without its access rules unless the
	// case says it keeps them (apachetest.Case.Backend), is laid
	// out and the backend reloaded while the oracle reloads: writing a
	// case's files costs as much as a reload.
	backend := func(tb testing.TB) {
		bl, err := c.Backend().Materialize(filepath.Join(dir, "backend"))
		if err != nil {
			tb.Fatalf("%s: the backend's copy: %v", c.Path, err)
		}
		opt := mappingBackendOptions(bl)
		if s.mapless {
			opt = backendOptions(l)
		}
		if s.backend == nil {
			s.backend = apachetest.Start(tb, opt)
		} else {
			s.backend.Reload(tb, opt)
		}
	}
	if s.oracle == nil {
		s.oracle = apachetest.Start(t, l.OracleOptions())
		backend(t)
	} else {
		done := make(chan error, 1)
		go func() { done <- apachetest.TryFatal(t, backend) }()
		oracleErr := apachetest.TryFatal(t, func(tb testing.TB) { s.oracle.Reload(tb, l.OracleOptions()) })
		backendErr := <-done
		if oracleErr != nil {
			t.Fatal(oracleErr)
		}
		if backendErr != nil {
			t.Fatal(backendErr)
		}
	}
	t1 := time.Now()
	addr, stop := fr.start(t, l, s.backend.Addr)
	s.ports = locationPorts(s.oracle.Addr, s.oracle.TLSAddr, s.backend.Addr, addr, frontTLSAddr(fr, addr))
	t2 := time.Now()
	tl.reloading += t1.Sub(t0)
	tl.starting += t2.Sub(t1)
	defer func() {
		t3 := time.Now()
		tl.requesting += t3.Sub(t2)
		stop()
		tl.starting += time.Since(t3)
	}()
	tl.cases++
	frontLog := fr.errorLog(l)
	oracleLog := filepath.Join(s.oracle.Dir, "error.log")
	var outs []outcome
	for _, rq := range c.Requests {
		if rq.TLS && frontTLSAddr(fr, addr) == "" {
			tl.tlsSkipped++ // a front with no TLS listener (ssl_test.go)
			continue
		}
		s.oracleLog = fileSize(oracleLog)
		frontBefore := 0
		if frontLog != nil {
			frontBefore = len(frontLog())
		}
		want, err := doRequest(s.oracle.Addr, s.oracle.TLSAddr, l, rq) // ssl_test.go
		if err != nil {
			t.Fatalf("%s:%d: oracle: %v", c.Path, rq.Line, err)
		}
		if rq.Want != "" && !want.Matches(rq.Want) {
			t.Errorf("%s:%d: %s: the oracle answered %d, the case says want=%s", c.Path, rq.Line, rq, want.Status, rq.Want)
		}
		got, err := doRequest(addr, frontTLSAddr(fr, addr), l, rq)
		tl.requests++
		o := outcome{rq: rq, want: want, class: "error: " + fmt.Sprint(err)}
		if err == nil {
			o.class = got.Class()
		}
		if err == nil && refused(want.Class()) && backendAnswered(fr, got) {
			// The backend has the case's mapping, so it refuses some
			// requests too (Options, a symbolic link, an .htaccess
			// file it cannot read): a refusal must be orderly's own.
			o.class = fmt.Sprintf("%s from the backend", got.Class())
			o.bypass = true
			tl.bypasses++
			o.mismatch = fmt.Sprintf("%s:%d: %s: apache %d, front %d answered by the backend (Server: %s): orderly let it through", c.Path, rq.Line, rq, want.Status, got.Status, got.Server)
			tl.mismatches = append(tl.mismatches, o.mismatch)
			outs = append(outs, o)
			continue
		}
		renegotiation := err == nil && renegotiationRefusal(want, got)
		if renegotiation {
			o.class = want.Class()
			tl.tlsRenegotiation++
		}
		if o.class == want.Class() && err == nil && o.class == "other" {
			// Both answered without refusing: the backend maps the URL
			// as the oracle does, so the statuses are compared exactly,
			// and a redirect's Location too.
			w, g, why := s.compareExact(rq, want, got)
			switch {
			case w == g:
				tl.addExact(want.Status)
			case why != "":
				tl.addByClass(why)
			default:
				o.class = g
				if tf, ok := fr.(tolerant); ok {
					if why := tf.tolerate(want, got); why != "" {
						tl.tolerated = append(tl.tolerated, fmt.Sprintf("%s:%d: %s: apache %s, front %s: %s", c.Path, rq.Line, rq, w, g, why))
						outs = append(outs, o)
						continue
					}
				}
				o.mismatch = fmt.Sprintf("%s:%d: %s: apache %s, front %s", c.Path, rq.Line, rq, w, g)
				tl.mismatches = append(tl.mismatches, o.mismatch)
				tl.exactMismatches++
				outs = append(outs, o)
				continue
			}
		} else if o.class == want.Class() && err == nil && want.TLS == "" {
			tl.addExact(want.Status) // a refusal's class is its status (and a 401's realm)
		} else if renegotiation {
			tl.addByClass("mod_ssl refused in a TLS renegotiation, orderly (which cannot renegotiate) with 403")
		} else if o.class == want.Class() && err == nil {
			tl.addByClass("both refused at the TLS handshake: there is no status")
		}
		if o.class == want.Class() {
			tl.agree++
			if frontLog != nil {
				tl.logged++
				apache := readFrom(oracleLog, s.oracleLog)
				n := len(accessCodes.FindAllString(apache, -1))
				front := waitLog(func() string { return frontLog()[frontBefore:] }, func(s string) bool { return len(accessCodes.FindAllString(s, -1)) >= n })
				wl, gl := logCodes(apache), logCodes(front)
				if wl != gl {
					o.logMismatch = fmt.Sprintf("%s:%d: %s: apache logged [%s], front logged [%s]", c.Path, rq.Line, rq, wl, gl)
					tl.logMismatches = append(tl.logMismatches, o.logMismatch)
				}
			}
			outs = append(outs, o)
			continue
		}
		if tf, ok := fr.(tolerant); ok && err == nil && (refused(o.class) || got.Status == 405) {
			if why := tf.tolerate(want, got); why != "" {
				tl.tolerated = append(tl.tolerated, fmt.Sprintf("%s:%d: %s: apache %d, front %d: %s", c.Path, rq.Line, rq, want.Status, got.Status, why))
				outs = append(outs, o)
				continue
			}
		}
		if refused(want.Class()) && !refused(o.class) {
			tl.bypasses++
			o.bypass = true
		}
		o.mismatch = fmt.Sprintf("%s:%d: %s: apache %s (%d), front %s (%d)", c.Path, rq.Line, rq, want.Class(), want.Status, o.class, got.Status)
		tl.mismatches = append(tl.mismatches, o.mismatch)
		outs = append(outs, o)
	}
	return outs
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// logWait is how long a test waits for a line of orderly's logs to
// appear: orderly writes them from a goroutine of its own
// (internal/logwriter), so a line may land just after the response it
// is about.
const logWait = 5 * time.Second

// waitLog calls read until ok accepts what it returns or logWait has
// passed, and returns the last read: every test reading orderly's logs
// while it serves waits for the lines it expects through it.
func waitLog(read func() string, ok func(string) bool) string {
	s := read()
	for deadline := time.Now().Add(logWait); !ok(s) && time.Now().Before(deadline); s = read() {
		time.Sleep(5 * time.Millisecond)
	}
	return s
}

// readFrom returns what a file holds from offset off on, without reading
// what comes before (the oracle's error log grows over a whole run).
func readFrom(name string, off int64) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// replay runs the corpus through fr and compares with the oracle.
func replay(t *testing.T, fr front) tally {
	t.Helper()
	return replayMatching(t, fr, func(name string) bool { return *only == "" || strings.Contains(name, *only) })
}

// replayMatching is replay for the cases whose names match.
func replayMatching(t *testing.T, fr front, match func(name string) bool) tally {
	t.Helper()
	apachetest.Require(t)
	cases, err := apachetest.LoadCorpus(*corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var picked []*apachetest.Case
	for _, c := range cases {
		if match(c.Name) {
			picked = append(picked, c)
		}
	}
	// One slapd for the cases that authenticate against LDAP.
	startLDAP(t, picked)
	var tl tally
	start := time.Now()
	var s servers
	tmp := apachetest.TempDir(t)
	for _, c := range picked {
		tl.corpusRequests += len(c.Requests)
		outs := s.runCase(t, fr, c, filepath.Join(tmp, c.Name), &tl)
		ct := &caseTally{requests: len(outs)}
		for _, o := range outs {
			if refused(o.want.Class()) {
				ct.refused++
			}
			if o.bypass {
				ct.bypasses++
			}
			if o.mismatch != "" {
				ct.disagree++
			}
		}
		if tl.perCase == nil {
			tl.perCase = map[string]*caseTally{}
		}
		tl.perCase[c.Name] = ct
	}
	tl.elapsed = time.Since(start)
	return tl
}

func TestDifferential(t *testing.T) {
	tl := replay(t, orderlyFront{})
	for _, m := range tl.mismatches {
		t.Error(m)
	}
	for _, m := range tl.logMismatches {
		t.Error(m)
	}
	fmt.Printf("differential: error-log codes agree on %d/%d requests\n", tl.logged-len(tl.logMismatches), tl.logged)
	t.Logf("differential: %d/%d requests agree across %d cases (%d bypasses) in %v [%s]",
		tl.agree, tl.requests, tl.cases, tl.bypasses, tl.elapsed.Round(time.Millisecond), runtime.Version())
	fmt.Printf("differential: orderly agrees with Apache on %d/%d requests across %d cases, %d bypasses\n",
		tl.agree, tl.requests, tl.cases, tl.bypasses)
	tl.printExact("differential")
	fmt.Printf("differential: %.1f seconds: laying the cases out and reloading Apache %.1fs, orderly start/stop %.1fs, requests %.1fs\n",
		tl.elapsed.Seconds(), tl.reloading.Seconds(), tl.starting.Seconds(), tl.requesting.Seconds())
	if tl.tlsRenegotiation > 0 {
		fmt.Printf("differential: of which %d refused by mod_ssl in a TLS renegotiation (a per-directory SSLVerifyClient) and by orderly with 403\n", tl.tlsRenegotiation)
	}
	if names != nil {
		fmt.Printf("differential: private name service: %d DNS questions answered on 127.0.0.1, no interface but loopback\n", tl.dnsQuestions)
	}
	if tl.skipped > 0 {
		fmt.Printf("differential: %d host-name cases skipped (no private name service)\n", tl.skipped)
	}
	if tl.requests == 0 && tl.skipped > 0 {
		t.Skip("every case selected looks up host names, and there is no private name service")
	}
	if tl.requests == 0 {
		t.Fatal("no request was replayed")
	}
}

// TestControlPassThrough proves the comparison can fail, case by case: a
// front with no rules must be caught as a bypass in every case where
// Apache refuses a request that a server without the case's access rules
// serves (the backend, which maps URLs as the oracle does, answers for
// the front), or where the backend's own refusal passes through (its
// Server field says so). Every case with a refusal must be caught.
func TestControlPassThrough(t *testing.T) {
	tl := replay(t, passFront{})
	if tl.requests == 0 && tl.skipped > 0 {
		t.Skip("every case selected looks up host names, and there is no private name service")
	}
	fmt.Printf("control pass-through: agrees on %d/%d requests, %d bypasses (must be > 0)\n", tl.agree, tl.requests, tl.bypasses)
	if tl.bypasses == 0 || tl.agree == tl.requests {
		t.Fatalf("a pass-through front agreed with Apache on %d/%d requests: the harness cannot fail", tl.agree, tl.requests)
	}
	var caught, uncaught []string
	for name, ct := range tl.perCase {
		switch {
		case ct.refused == 0:
		case ct.bypasses > 0:
			caught = append(caught, name)
		default:
			uncaught = append(uncaught, name)
		}
	}
	sort.Strings(uncaught)
	fmt.Printf("control pass-through: caught in %d cases with refusals; %d cases refuse only what a rule-less server refuses too: %s\n",
		len(caught), len(uncaught), strings.Join(uncaught, " "))
	for _, name := range uncaught {
		if !passThroughExpected[name] {
			t.Errorf("control pass-through: case %s has refusals, and a front with no rules passed it: its refusals prove nothing", name)
		}
	}
}

// passThroughExpected are the cases the pass-through front may pass:
// none, since a refusal the rule-less backend makes (the Options, a
// broken .htaccess file, a Redirect's status) comes with Apache's Server
// field, which counts as a bypass (backendAnswered).
var passThroughExpected = map[string]bool{}

// TestControlApacheFront proves the comparison can pass: Apache itself as
// the front must run every request of every case, skip none, and agree
// on every answer and every error-log code.
func TestControlApacheFront(t *testing.T) {
	tl := replay(t, &apacheFront{})
	for _, m := range tl.mismatches {
		t.Error(m)
	}
	for _, m := range tl.logMismatches {
		t.Error(m)
	}
	fmt.Printf("control apache-front: agrees on %d/%d requests of %d, error-log codes on %d/%d\n",
		tl.agree, tl.requests, tl.corpusRequests, tl.logged-len(tl.logMismatches), tl.logged)
	if tl.requests == 0 || tl.requests != tl.corpusRequests || tl.skipped > 0 || tl.tlsSkipped > 0 {
		t.Errorf("control apache-front: %d of the corpus's %d requests ran (%d cases skipped, %d TLS requests skipped)",
			tl.requests, tl.corpusRequests, tl.skipped, tl.tlsSkipped)
	}
	if tl.logged != tl.agree {
		t.Errorf("control apache-front: error-log codes compared on %d of %d agreeing requests", tl.logged, tl.agree)
	}
}

// lyingLogFront is orderly as the front with an error log that names
// another code for each access refusal: the log-code comparison must
// catch it.
type lyingLogFront struct{ orderlyFront }

func (f lyingLogFront) errorLog(l apachetest.Layout) func() string {
	read := f.orderlyFront.errorLog(l)
	return func() string {
		return strings.NewReplacer("AH01797", "AH01630", "AH01630", "AH01797").Replace(read())
	}
}

// TestControlLogCodes proves the error-log comparison can fail: a front
// whose log swaps mod_access_compat's code for mod_authz_core's must be
// caught on every request Apache refused with either.
func TestControlLogCodes(t *testing.T) {
	// The classic access idioms (cases 0xx) are enough to show it.
	tl := replayMatching(t, lyingLogFront{}, func(name string) bool {
		return strings.HasPrefix(name, "0") && (*only == "" || strings.Contains(name, *only))
	})
	fmt.Printf("control log codes: %d of %d compared requests caught\n", len(tl.logMismatches), tl.logged)
	if len(tl.logMismatches) == 0 {
		t.Fatal("control log codes: a front that logs the wrong access code was not caught")
	}
}

// backendOptions configures a 2.4 backend behind orderly without the
// case's URL mapping: the case's document root and no access rules, and
// no .htaccess files either. It is the backend of the life-cycle tests
// (reloads, state, metrics, fail2ban, retirement), which compare no
// statuses, of TestControlExactMapless, and of a random configuration
// the oracle refuses.
//
// It loads the case's modules too, lists directories and follows every
// symbolic link: what the legacy Options refuse is orderly's to refuse.
func backendOptions(l apachetest.Layout) apachetest.Options {
	return apachetest.Options{DocumentRoot: l.DocRoot, Modules: l.Modules,
		Extra: "<Directory />\n    AllowOverride None\n    Options Indexes FollowSymLinks\n</Directory>\n"}
}

// mappingBackendOptions configures the backend of the corpus replay
// (runCase) for bl, the case laid out without its access rules
// (apachetest.Case.WithoutAccess): the oracle's configuration, its
// modules and mod_remoteip included, with no access rule, so that it maps
// every URL as the oracle does and its answers are compared status for
// status. It stays plain HTTP where the oracle has a TLS listener, with
// mod_ssl loaded for the legacy directives that need it.
func mappingBackendOptions(bl apachetest.Layout) apachetest.Options {
	o := bl.OracleOptions()
	if o.TLS != nil {
		o.TLS = nil
		o.Modules = append([]string{"socache_shmcb", "ssl"}, o.Modules...)
	}
	return o
}

// compareExact returns the oracle's answer and the front's as the exact
// comparison sees them (servers.answer) and, where they differ, why they
// are compared by class only (classOnly), "" when nothing explains it.
func (s *servers) compareExact(rq apachetest.Request, want, got apachetest.Response) (w, g, why string) {
	w, g = s.answer(want), s.answer(got)
	if w == g {
		return w, g, ""
	}
	d := difference{rq: rq, got: got, want: w, front: g}
	for _, e := range classOnly {
		if e.match(&d) {
			return w, g, e.why
		}
	}
	return w, g, ""
}

// A difference is a request whose answers differ in exact status or
// Location, as classOnly's entries see it.
type difference struct {
	rq          apachetest.Request
	got         apachetest.Response // the front's answer
	want, front string              // both answers as servers.answer has them
}

// classOnly lists the differences in exact status or Location that are
// explained: the answers are then compared by class only. Each says why;
// every one used is counted and printed in the run summary.
var classOnly = []struct {
	why   string
	match func(d *difference) bool
}{
	{
		why: "over TLS, a redirect the backend makes itself (mod_dir's slash) names http://: the backend is plain HTTP " +
			"behind orderly's TLS listener and Apache does not read X-Forwarded-Proto (a deployment sets ServerName " +
			"https://...); the status and the rest of the Location agree",
		match: func(d *difference) bool {
			return d.rq.TLS && strings.HasPrefix(d.got.Server, "Apache") &&
				strings.Replace(d.want, " https://", " http://", 1) == d.front
		},
	},
}
