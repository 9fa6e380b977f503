// Command orderly enforces legacy Apache httpd 2.2 access rules in front
// of an Apache 2.4 backend. See README.md.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	rpprof "runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// version is set at build time with -ldflags "-X main.version=...".
var version string // unstamped: buildVersion in version.go

const usage = `usage: orderly <command> [flags]

commands:
  serve    -config orderly.hcl               run the proxy
  explain  -config orderly.hcl -ip ADDR URL  decide one request and show why
  init     [-o FILE] [-backend URL] [-listen ADDR] /etc/apache2|/etc/httpd|httpd.conf
                                             write a commented orderly.hcl for shadow mode, listing what serve would refuse
  check    -config orderly.hcl               load everything serve would and report every refusal (exit 0 or 2)
  lint     [-format text|json|sarif] [-fail-on info|warning|error] httpd.conf
                                             every rule of the 2.2 -> 2.4 upgrade catalogue that applies
  translate [-o DIR] [-keep-compat] httpd.conf  write the 2.4 configuration
  translate -backend-guard -orderly-addr ADDR,... [-guard-token-file F]
                                             write the backend guard: the 2.4 server answers only orderly
  retire   -config orderly.hcl [-metrics FILE|URL] [-prometheus URL -window 30d] [-format table|json]
                                             the legacy rules that can go, and why
  version                                    print the version
`

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "lint" || os.Args[1] == "translate") {
		batchGC()
	}
	// ORDERLY_CPUPROFILE=file writes a CPU profile of the whole command
	// (for lint and translate, whose speed is measured: make bench-translate).
	if path := os.Getenv("ORDERLY_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			rpprof.StartCPUProfile(f)
			code := run(os.Args[1:], os.Stdout, os.Stderr)
			rpprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "init":
		return cmdInit(args[1:], stdout, stderr)
	case "lint":
		return cmdLint(args[1:], stdout, stderr)
	case "retire":
		return cmdRetire(args[1:], stdout, stderr)
	case "translate":
		return cmdTranslate(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "orderly", version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "orderly: unknown command %q\n%s", args[0], usage)
	return 2
}

// printDiags prints HCL diagnostics as file:line:column: message.
func printDiags(w io.Writer, diags hcl.Diagnostics) {
	for _, d := range diags {
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			fmt.Fprintf(w, "%s:%d:%d: %s\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
		} else {
			fmt.Fprintf(w, "%s\n", msg)
		}
	}
}

// printErrs prints load errors, one file:line: message each.
func printErrs(w io.Writer, err error) {
	var el apacheconf.ErrorList
	if errors.As(err, &el) {
		for _, e := range el {
			fmt.Fprintln(w, e.Error())
		}
		return
	}
	fmt.Fprintln(w, err)
}

// setup reads the HCL file and the policies it names: the legacy
// configuration (and, with rules demoted, the same without them) and the
// native one.
func setup(path string, stderr io.Writer) (*runtimeConfig, *proxy.Policies, bool) {
	rc, _, diags := loadConfig(path)
	if diags.HasErrors() {
		printDiags(stderr, diags)
		return nil, nil, false
	}
	p := &proxy.Policies{Scopes: rc.Scopes, Mode: rc.Mode, Demoted: rc.Demote}
	var ok bool
	if p.Legacy, ok = loadEngine(path, rc.LegacyFiles, rc.Legacy, rc.PathMap, rc, stderr); !ok {
		return nil, nil, false
	}
	if len(rc.Demote) > 0 {
		opt := rc.Legacy
		opt.Omit = rc.Demote
		if p.LegacyEnforced, ok = loadEngine(path, rc.LegacyFiles, opt, rc.PathMap, rc, stderr); !ok {
			return nil, nil, false
		}
	}
	if rc.Native != nil {
		if p.Native, ok = loadEngine(path, rc.NativeFiles, *rc.Native, rc.NativePathMap, rc, stderr); !ok {
			return nil, nil, false
		}
	}
	return rc, p, true
}

// loadEngine loads one configuration into a decision engine, printing
// what it refuses.
func loadEngine(path string, files []string, opt translate.LoadOptions, pathMap map[string]string, rc *runtimeConfig, stderr io.Writer) (*walk.Engine, bool) {
	e, err := buildEngine(path, files, opt, pathMap, rc)
	if err != nil {
		printErrs(stderr, err)
		return nil, false
	}
	return e, true
}

// buildEngine loads one configuration into a decision engine, or says
// why serve would refuse it: an apacheconf.ErrorList from the load, or
// one error (the document root, an IP-based virtual host, mod_ssl's CA
// list) already naming where.
func buildEngine(path string, files []string, opt translate.LoadOptions, pathMap map[string]string, rc *runtimeConfig) (*walk.Engine, error) {
	cfg, err := translate.Load(files, opt)
	if err != nil {
		return nil, err
	}
	var fsys walk.FS = walk.OS
	id := proxy.NewIdentity()
	if len(pathMap) > 0 {
		pm := walk.NewPathMap(walk.OS, pathMap)
		fsys, id.Map = pm, pm.Map
	}
	// The walk reads the document root as Apache does (directories,
	// files, .htaccess); without it orderly would decide blind.
	if fi, err := fsys.Stat(cfg.DocumentRoot); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("%s: document root %s: %v: orderly must read the files Apache serves to decide as it does", path, cfg.DocumentRoot, err)
	}
	if err := ipHosts(cfg, rc); err != nil {
		return nil, err
	}
	e := walk.New(cfg, fsys, id)
	if err := e.SSLError(); err != nil {
		// mod_ssl's CA list, which Apache would not start without.
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	e.SetLegacyAddress(rc.LegacyIP, rc.LegacyPort)
	return e, nil
}

// ipHosts refuses a configuration with an IP-based <VirtualHost> when
// legacy.address does not say which address of the legacy server the
// traffic stands for: Apache chooses such a host by the address the
// request came in on, which orderly cannot see behind a proxy, and would
// otherwise decide with the main server's rules.
func ipHosts(cfg *translate.Config, rc *runtimeConfig) error {
	if rc.LegacyIP.IsValid() {
		return nil
	}
	for _, v := range cfg.VHosts {
		for _, a := range v.Addrs {
			if !a.Wildcard {
				return fmt.Errorf("%s: <VirtualHost %s> is chosen by the address a request reaches the legacy server on: set legacy.address to the address (and port) this traffic stands for", v.Pos, a.IP)
			}
		}
	}
	return nil
}

const serveUsage = `usage: orderly serve [-config orderly.hcl] [-log.level debug|info|warn|error] [-log.format json|logfmt]

Runs the proxy. orderly's own logs go to standard error; the Apache-format
error log (error_log) to standard output unless the configuration names a
file. SIGHUP reloads the configuration, SIGUSR1 reopens the log files,
SIGTERM and SIGINT drain and stop.
`

// cmdServe runs the proxy until SIGINT or SIGTERM.
func cmdServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve runs the proxy until ctx is done.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveUsage, stderr)
	configPath := fs.String("config", "orderly.hcl", "configuration file")
	logs := addLogFlags(fs)
	started := time.Now()
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "orderly serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	rc, pols, ok := setup(*configPath, stderr)
	if !ok {
		return 2
	}
	engine := pols.Legacy
	// since is when the rule counters started: now, or the state file's.
	since := started
	if rc.StateFile != "" {
		saved, savedSince, err := loadState(rc.StateFile)
		if err != nil {
			fmt.Fprintf(stderr, "%s: state_file: %v\n", *configPath, err)
			return 2
		}
		pols.Restore(saved)
		if !savedSince.IsZero() {
			since = savedSince
		}
	}
	logger := logs.logger(stderr)
	var reopen []*logFile // SIGUSR1
	defer func() {
		for _, f := range reopen {
			f.Close()
		}
	}()
	var outputs [3]io.Writer // error_log, access_log, shadow_log
	for i, l := range []struct{ name, path string }{{"error_log", rc.ErrorLog}, {"access_log", rc.AccessLog}, {"shadow_log", rc.ShadowLog}} {
		w, err := openOutput(l.path, stdout, stderr, &reopen)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %s: %v\n", *configPath, l.name, err)
			return 2
		}
		outputs[i] = w
	}
	errLog, accessLog, shadowLog := outputs[0], outputs[1], outputs[2]
	logger.Debug("logs", "error_log", rc.ErrorLog, "access_log", rc.AccessLog, "shadow_log", rc.ShadowLog)
	for _, l := range rc.OnStderr {
		logger.Warn(`a log set to "stderr" shares the stream of orderly's own logs: set it to a file or "stdout"`, "setting", l.Setting, "at", l.At)
	}
	var h *proxy.Handler
	metrics := proxy.NewMetrics(func() []*policy.Rule {
		p, _ := h.Policies()
		return p.Rules()
	})
	metrics.CountingSince(since)
	transport := proxy.NewTransport()
	transport.ResponseHeaderTimeout = rc.BackendTimeout
	health := rc.Health
	if rc.GuardToken != "" {
		// Checks pass the backend guard as forwarded requests do.
		health.Header = http.Header{proxy.GuardHeader: {rc.GuardToken}}
	}
	pool := proxy.NewPool(rc.Backends, health)
	h = proxy.NewWith(proxy.Config{
		Backend:        rc.Backend,
		Pool:           pool,
		Transport:      transport,
		MaxPerClient:   rc.Limits.MaxPerClient,
		MaxRequestLine: rc.Limits.MaxRequestLine,
		TrustedProxies: rc.TrustedProxies,
		ForwardedTLS:   rc.ForwardedTLS,
		UserHeader:     rc.UserHeader,
		ErrorLog:       errLog,
		AccessLog:      accessLog,
		ShadowLog:      shadowLog,
		Mode:           rc.Mode,
		RuleHeader:     rc.RuleHeader,
		GuardToken:     rc.GuardToken,
		Logger:         logger,
		Metrics:        metrics,
		Resolver:       proxy.NewResolver(rc.ResolverAddr, rc.ResolverTimeout),
	}, pols)
	ln, err := net.Listen("tcp", rc.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "%s: listen: %v\n", *configPath, err)
		return 2
	}
	// listening is every address served, for the start-up line.
	listening := []slog.Attr{slog.String("proxy", ln.Addr().String())}
	var side []*http.Server
	if rc.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		srv, addr, err := listenSide(rc.MetricsListen, mux)
		if err != nil {
			fmt.Fprintf(stderr, "%s: metrics listen: %v\n", *configPath, err)
			return 2
		}
		side = append(side, srv)
		listening = append(listening, slog.String("metrics", addr))
	}
	if rc.ForwardListen != "" {
		srv, addr, err := listenSide(rc.ForwardListen, h.ForwardAuth(rc.ForwardStyle, rc.ForwardPrefix))
		if err != nil {
			fmt.Fprintf(stderr, "%s: forward_auth listen: %v\n", *configPath, err)
			return 2
		}
		side = append(side, srv)
		listening = append(listening, slog.String("forward_auth", addr))
	}
	rl := &reloader{path: *configPath, h: h, metrics: metrics, logger: logger, rc: rc, generation: 1, loaded: time.Now()}
	var draining atomic.Bool
	if rc.AdminListen != "" {
		// Health and readiness answer without the token: kubelet and load
		// balancers cannot carry one, and they tell nothing secret.
		outer := http.NewServeMux()
		outer.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
		outer.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
			switch {
			case draining.Load():
				http.Error(w, "shutting down", http.StatusServiceUnavailable)
			case !h.Ready():
				http.Error(w, "no backend answers its health check", http.StatusServiceUnavailable)
			default:
				io.WriteString(w, "ready\n")
			}
		})
		mux := http.NewServeMux()
		outer.Handle("/", requireToken(rc.AdminToken, mux))
		mux.HandleFunc("POST /-/reload", rl.serveReload)
		mux.Handle("GET /{$}", adminPage{})
		hist := newScopeHistory(metrics, h)
		done := make(chan struct{})
		defer close(done)
		go hist.run(done)
		(&adminAPI{h: h, rl: rl, hist: hist, started: started, since: since}).register(mux)
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		srv, addr, err := listenSide(rc.AdminListen, outer)
		if err != nil {
			fmt.Fprintf(stderr, "%s: admin listen: %v\n", *configPath, err)
			return 2
		}
		side = append(side, srv)
		listening = append(listening, slog.String("admin", addr))
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: rc.Limits.ReadHeaderTimeout,
		ReadTimeout:       rc.Limits.ReadTimeout,
		WriteTimeout:      rc.Limits.WriteTimeout,
		IdleTimeout:       rc.Limits.IdleTimeout,
		MaxHeaderBytes:    rc.Limits.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	https, err := startTLS(rc, h, srv, stderr, logger) // tls.go; wraps srv.Handler
	if err != nil {
		fmt.Fprintf(stderr, "%s: tls: %v\n", *configPath, err)
		return 2
	}
	defer https.Stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for range hup {
			rl.reload()
		}
	}()
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	go func() {
		for range usr1 {
			for _, f := range reopen {
				if err := f.Reopen(); err != nil {
					logger.Error("reopening a log file", "path", f.path, "err", err)
				}
			}
		}
	}()
	checks, stopChecks := context.WithCancel(context.Background())
	defer stopChecks()
	go pool.Run(checks, transport)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(h.Listener(ln)) }() // SetEnvIf: request heads as sent (proxy/rawhead.go)
	https.Serve(errc)
	if a := https.Addr(); a != "" {
		listening = append(listening, slog.String("https", a))
	}
	logger.Info("orderly serving", "listen", ln.Addr().String(), slog.Attr{Key: "listeners", Value: slog.GroupValue(listening...)}, "backend", rc.Backend.String(),
		"rules", len(engine.Config().Rules), "semantics", string(engine.Config().Semantics), "mode", string(rc.Mode), "version", version)
	go probeGuard(ctx, rc, metrics, logger)  // guard.go
	go probeRewrite(ctx, rc, engine, logger) // rewriteprobe.go
	for _, p := range engine.Blind() {
		logger.Warn("orderly cannot read this Alias target: requests mapped into it are refused (403) until it is readable or mapped with legacy.path_map", "path", p)
	}
	for _, d := range engine.Config().Unfaithful {
		logger.Warn("orderly cannot decide as Apache would here; forwarding (legacy.forward_unfaithful)", "at", d.Pos.String(), "what", d.Text)
	}
	for _, d := range engine.Config().Differences {
		at := "(whole configuration)"
		if d.Pos.File != "" {
			at = d.Pos.String()
		}
		logger.Warn("2.2 and 2.4 with mod_access_compat decide differently here", "at", at, "what", d.Text)
	}
	known := map[string]bool{}
	for _, r := range engine.Config().Rules {
		known[r.ID] = true
	}
	for id := range rc.Demote {
		if !known[id] {
			logger.Warn("legacy.demote names no rule of the configuration files; it takes effect if an .htaccess rule has this ID", "rule_id", id, "at", rc.DemoteAt)
		}
	}
	for _, s := range pols.InForce() {
		logger.Info("scope", "name", s.Name, "host", s.Host, "path", s.Path, "mode", string(s.Mode), "enforce", s.Enforce, "shadow", s.Shadow, "enforce_percent", s.Percent)
	}
	save := func() {
		if rc.StateFile == "" {
			return
		}
		p, _ := h.Policies()
		if err := saveState(rc.StateFile, append(p.Rules(), p.Unclaimed()...), since); err != nil {
			logger.Error("saving the state file", "path", rc.StateFile, "err", err)
		}
	}
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case err := <-errc:
			fmt.Fprintln(stderr, "serve:", err)
			save()
			return 1
		case <-tick.C:
			save()
		case <-ctx.Done():
			waiting = false
		}
	}
	// Drain: not ready any more (load balancers stop sending), no new
	// connections, in-flight requests finish within the grace period.
	draining.Store(true)
	logger.Info("draining", "grace", rc.ShutdownGrace.String())
	shutdown, cancel := context.WithTimeout(context.Background(), rc.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		logger.Warn("grace period over; closing the connections left", "err", err)
		srv.Close()
	}
	https.Shutdown(shutdown)
	for _, s := range side {
		s.Shutdown(shutdown)
	}
	save()
	return 0
}

// listenSide starts a metrics, admin or forward-auth listener and
// returns the address it listens on.
func listenSide(addr string, h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, ln.Addr().String(), nil
}

type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

// traceLog collects the steps of a decision for explain.
type traceLog struct{ events []policy.Event }

func (t *traceLog) Enabled() bool        { return true }
func (t *traceLog) Trace(e policy.Event) { t.events = append(t.events, e) }

const explainUsage = `usage: orderly explain [-config orderly.hcl] -ip ADDR [-method M] [-user U -password P]
                       [-header 'Name: value']... [-tls] [-cert chain.pem] [-policy legacy|native]
                       [-format text|json] URL

Decides one request as serve would and shows why: the sections that applied
in Apache's merge order and every rule evaluated, each with its rule ID (the
ID legacy.demote takes) and file:line.

Exit status: 0 decided (allowed or denied), 2 bad usage or a configuration
serve would refuse.
`

// cmdExplain decides one request and prints the decision with its trail.
func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explain", explainUsage, stderr)
	configPath := fs.String("config", "orderly.hcl", "configuration file")
	ip := fs.String("ip", "", "client address (required)")
	method := fs.String("method", "GET", "request method")
	user := fs.String("user", "", "Basic user name")
	password := fs.String("password", "", "Basic password")
	which := fs.String("policy", "legacy", `the policy to decide by: "legacy" or "native" (the native block)`)
	overTLS := fs.Bool("tls", false, "the request comes over TLS (an https:// URL does too)")
	certFile := fs.String("cert", "", "the client certificate chain (PEM, leaf first); implies -tls")
	var headers headerFlags
	fs.Var(&headers, "header", "extra request header 'Name: value' (repeatable)")
	format := fs.String("format", "text", `output format: "text" or "json"`)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 || *ip == "" {
		fmt.Fprintln(stderr, "orderly explain: want -ip ADDR and one URL")
		fs.Usage()
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "explain: -format %q: want \"text\" or \"json\"\n", *format)
		return 2
	}
	addr, err := netip.ParseAddr(*ip)
	if err != nil {
		fmt.Fprintf(stderr, "explain: -ip %q: %v\n", *ip, err)
		return 2
	}
	target := fs.Arg(0)
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		target = u.RequestURI()
		*overTLS = *overTLS || strings.EqualFold(u.Scheme, "https")
	}
	tlsInfo, err := explainTLS(*overTLS, *certFile) // explaintls.go
	if err != nil {
		fmt.Fprintf(stderr, "explain: -cert: %v\n", err)
		return 2
	}
	rc, pols, ok := setup(*configPath, stderr)
	if !ok {
		return 2
	}
	engine := pols.Legacy
	switch *which {
	case proxy.PolicyLegacy:
	case proxy.PolicyNative:
		if pols.Native == nil {
			fmt.Fprintf(stderr, "explain: -policy native: %s has no native block\n", *configPath)
			return 2
		}
		engine = pols.Native
	default:
		fmt.Fprintf(stderr, "explain: -policy %q: want legacy or native\n", *which)
		return 2
	}
	if rc.StateFile != "" {
		saved, _, err := loadState(rc.StateFile)
		if err != nil {
			fmt.Fprintf(stderr, "%s: state_file: %v\n", *configPath, err)
			return 2
		}
		pols.Restore(saved)
	}
	resolver := proxy.NewResolver(rc.ResolverAddr, rc.ResolverTimeout)
	hdr := http.Header{}
	// The fields in the order given, as spelled: SetEnvIf's header-name
	// regexes read them so (translate.Headers).
	var fields []translate.HeaderField
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			fmt.Fprintf(stderr, "explain: -header %q: want 'Name: value'\n", h)
			return 2
		}
		hdr.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		fields = append(fields, translate.HeaderField{Name: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	cred := policy.Credentials{}
	if *user != "" {
		cred = policy.Credentials{Present: true, Basic: true, User: *user, Password: *password}
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(*user+":"+*password)))
		kept := fields[:0]
		for _, f := range fields {
			if !strings.EqualFold(f.Name, "Authorization") {
				kept = append(kept, f)
			}
		}
		fields = append(kept, translate.HeaderField{Name: "Authorization", Value: hdr.Get("Authorization")})
	}
	req := &walk.Request{
		Method: *method, Target: target, Proto: "HTTP/1.1", Header: hdr, Headers: translate.MergeFields(fields), Host: hdr.Get("Host"),
		ClientAddr: addr, LocalAddr: netip.MustParseAddr("127.0.0.1"), Auth: cred,
		Resolver: resolver, TLSInfo: tlsInfo,
	}
	tl := &traceLog{}
	res := engine.Decide(req, tl)
	if *format == "json" {
		ex := newExplanation(*method, target, addr, *user, *which, res, tl.events, filepath.Dir(*configPath))
		ex.addSemantics(rc, engine.Config(), req, res)
		if err := ex.write(stdout); err != nil {
			fmt.Fprintf(stderr, "explain: %v\n", err)
			return 1
		}
		return 0
	}
	printExplain(stdout, *method, target, addr, *user, res, tl.events, filepath.Dir(*configPath))
	explainOther(stdout, rc, engine.Config(), req, res)
	for _, d := range engine.Config().Unfaithful {
		fmt.Fprintf(stdout, "not evaluated: %s: %s (legacy.forward_unfaithful: the backend must enforce it)\n", d.Pos, d.Text)
	}
	return 0
}

// printExplain writes the decision, the sections that applied in Apache's
// merge order, and every rule evaluated, each with file:line.
func printExplain(w io.Writer, method, target string, addr netip.Addr, user string, res walk.Result, events []policy.Event, base string) {
	rel := func(f string) string {
		if r, err := filepath.Rel(base, f); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return f
	}
	verdict := "ALLOW"
	if !res.Allowed() {
		verdict = fmt.Sprintf("DENY %d", res.Status)
	}
	who := addr.String()
	if user != "" {
		who += " as " + user
	}
	fmt.Fprintf(w, "request:  %s %s from %s\n", method, target, who)
	fmt.Fprintf(w, "decision: %s (%s layer)\n", verdict, res.Layer)
	if res.Layer == policy.LayerRequest {
		fmt.Fprintln(w, "rule:     none: Apache refuses the request line itself, before access control")
	} else {
		fmt.Fprintf(w, "rule:     %s\n", describeRule(res.Rule))
	}
	if res.URI != "" {
		fmt.Fprintf(w, "uri:      %s\n", res.URI)
	}
	if res.Filename != "" {
		fmt.Fprintf(w, "filename: %s\n", res.Filename)
	}
	if res.PathInfo != "" {
		fmt.Fprintf(w, "pathinfo: %s\n", res.PathInfo)
	}
	if res.Index != "" {
		fmt.Fprintf(w, "index:    %s (DirectoryIndex)\n", res.Index)
	}
	if rw := res.Rewritten; rw != nil {
		fmt.Fprintf(w, "rewrite:  %s rules, %s: %s -> %s (%s)\n", rw.Phase, rw.Action, rw.From, rw.To, describeRule(rw.Rule))
	}
	fmt.Fprintln(w, "sections, in Apache's merge order:")
	if len(res.Sections) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for i, s := range res.Sections {
		fmt.Fprintf(w, "  %d. %s:%d  %s\n", i+1, rel(s.Pos.File), s.Pos.Line, s)
	}
	from := func(sec *translate.Section) string {
		if sec == nil {
			return "Apache's defaults"
		}
		for i, s := range res.Sections {
			if s == sec {
				return fmt.Sprintf("section %d, %s", i+1, s)
			}
		}
		return sec.String()
	}
	if len(res.Sections) > 0 || res.Layer != policy.LayerRequest {
		fmt.Fprintf(w, "in force: Order/Allow/Deny/Satisfy from %s\n", from(res.CompatFrom))
		fmt.Fprintf(w, "          Require from %s\n", from(res.AuthzFrom))
	}
	fmt.Fprintln(w, "trail:")
	for _, e := range events {
		id, what := "", e.Text+" (Apache's default)"
		if e.Rule != nil {
			id, what = e.Rule.ID, ruleAt(e.Rule)
		}
		fmt.Fprintf(w, "  %-6s  %-12s  %-44s -> %s\n", e.Layer, id, what, e.Result)
	}
	for _, l := range res.Logs() {
		fmt.Fprintf(w, "log:      [%s:error] %s: %s\n", l.Module, l.Code, l.Message())
	}
}

// describeRule is a rule as explain shows it: its ID (the one
// legacy.demote takes) in brackets, file:line and text.
func describeRule(r *policy.Rule) string {
	if r == nil || r.Default || r.ID == "" {
		return ruleAt(r)
	}
	return "[" + r.ID + "] " + ruleAt(r)
}

// ruleAt is a rule's file:line and text.
func ruleAt(r *policy.Rule) string {
	switch {
	case r == nil:
		return "(Apache's default)"
	case r.Default:
		return r.Text
	}
	return fmt.Sprintf("%s:%d %s", r.File, r.Line, r.Text)
}

// explainOther decides the request again under the other semantics and
// says whether the answer differs: where it does, an upgrade that keeps
// mod_access_compat changes behaviour silently.
func explainOther(w io.Writer, rc *runtimeConfig, cfg *translate.Config, req *walk.Request, res walk.Result) {
	other, ores, err := decideOther(rc, cfg, req)
	fmt.Fprintf(w, "semantics: %s", cfg.Semantics)
	if err != nil {
		fmt.Fprintf(w, "; under %s the configuration does not load\n", other)
		return
	}
	verdict := func(r walk.Result) string {
		if r.Allowed() {
			return "ALLOW"
		}
		return fmt.Sprintf("DENY %d", r.Status)
	}
	if verdict(ores) == verdict(res) {
		fmt.Fprintf(w, "; %s decides the same\n", other)
	} else {
		fmt.Fprintf(w, "; under %s: %s (%s layer, %s): THE UPGRADE CHANGES THIS ANSWER\n", other, verdict(ores), ores.Layer, describeRule(ores.Rule))
	}
	for _, d := range cfg.Differences {
		fmt.Fprintf(w, "difference: %s: %s\n", differenceAt(rc, d), d.Text)
	}
}

// decideOther decides req again with the legacy configuration read under
// the semantics cfg is not read with (2.2 or 2.4-compat), which it
// returns; err says the configuration does not load so.
func decideOther(rc *runtimeConfig, cfg *translate.Config, req *walk.Request) (translate.Semantics, walk.Result, error) {
	other := translate.Compat24
	if cfg.Semantics == translate.Compat24 {
		other = translate.Legacy22
	}
	opt := rc.Legacy
	opt.Semantics = other
	ocfg, err := translate.Load(rc.LegacyFiles, opt)
	if err != nil {
		return other, walk.Result{}, err
	}
	var fsys walk.FS = walk.OS
	if len(rc.PathMap) > 0 {
		fsys = walk.NewPathMap(walk.OS, rc.PathMap)
	}
	oe := walk.New(ocfg, fsys, proxy.NewIdentity())
	oe.SetLegacyAddress(rc.LegacyIP, rc.LegacyPort)
	r2 := *req
	return other, oe.Decide(&r2, nil), nil
}

// differenceAt is where a difference between the semantics is, relative
// to the first legacy file's directory when below it.
func differenceAt(rc *runtimeConfig, d translate.Difference) string {
	if d.Pos.File == "" {
		return "(whole configuration)"
	}
	if r, err := filepath.Rel(filepath.Dir(rc.LegacyFiles[0]), d.Pos.File); err == nil && !strings.HasPrefix(r, "..") {
		return fmt.Sprintf("%s:%d", r, d.Pos.Line)
	}
	return d.Pos.String()
}
