package main

// The server serve runs: open binds everything that can fail at start,
// run serves until the context ends, drain stops gracefully.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/orderly-proxy/orderly/internal/logwriter"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/proxy/ldapauth"
)

// server is the proxy with its side listeners (metrics, forward-auth,
// admin), its HTTPS listener and its log files, from open to close.
type server struct {
	path    string // the HCL file
	rc      *runtimeConfig
	pols    *proxy.Policies // as loaded at start
	logger  *slog.Logger
	started time.Time
	since   time.Time // when the rule counters started: started, or the state file's

	h         *proxy.Handler
	metrics   *proxy.Metrics
	transport *http.Transport
	pool      *proxy.Pool
	rl        *reloader
	hist      *scopeHistory       // nil without an admin listener
	logs      []*logFile          // the log files SIGUSR1 reopens
	writers   []*logwriter.Writer // the goroutines writing the error, access and shadow logs

	ln        net.Listener // the proxy's
	srv       *http.Server
	side      []*sideServer // metrics, forward_auth, admin
	https     *tlsServing   // nil without a tls block
	listening []slog.Attr   // every address served, for the start-up line
	draining  atomic.Bool

	// Set by run, undone by close.
	hup, usr1  chan os.Signal
	stopChecks context.CancelFunc
	histDone   chan struct{}
}

// sideServer is a metrics, forward-auth or admin listener.
type sideServer struct {
	ln  net.Listener
	srv *http.Server
}

// listenSide binds a metrics, admin or forward-auth listener; run serves
// it.
func listenSide(addr string, h http.Handler) (*sideServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &sideServer{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// openServer loads the configuration at path and the policies it names,
// restores the state file, and opens the log files and every listener:
// everything that can fail at start, printed to stderr (file:line for
// the configuration) before anything serves. It returns false when
// serve must exit 2, having closed what it opened.
func openServer(path string, logs *logFlags, started time.Time, stdout, stderr io.Writer) (*server, bool) {
	rc, pols, ok := setup(path, stderr)
	if !ok {
		return nil, false
	}
	s := &server{path: path, rc: rc, pols: pols, started: started, since: started}
	savedSince, err := restoreState(path, rc, pols)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, false
	}
	if !savedSince.IsZero() {
		s.since = savedSince
	}
	s.logger = logs.logger(stderr)
	fail := func(what string, err error) (*server, bool) {
		fmt.Fprintf(stderr, "%s: %s: %v\n", path, what, err)
		s.close()
		return nil, false
	}
	var outputs [3]io.Writer // error_log, access_log, shadow_log
	for i, l := range []struct{ name, path string }{{"error_log", rc.ErrorLog}, {"access_log", rc.AccessLog}, {"shadow_log", rc.ShadowLog}} {
		w, err := openOutput(l.path, stdout, stderr, &s.logs)
		if err != nil {
			return fail(l.name, err)
		}
		outputs[i] = w
	}
	s.logger.Debug("logs", "error_log", rc.ErrorLog, "access_log", rc.AccessLog, "shadow_log", rc.ShadowLog)
	for _, l := range rc.OnStderr {
		s.logger.Warn(`a log set to "stderr" shares the stream of orderly's own logs: set it to a file or "stdout"`, "setting", l.Setting, "at", l.At)
	}
	s.newHandler(outputs[0], outputs[1], outputs[2])
	if s.ln, err = net.Listen("tcp", rc.Listen); err != nil {
		return fail("listen", err)
	}
	s.listening = []slog.Attr{slog.String("proxy", s.ln.Addr().String())}
	if rc.MetricsListen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.metrics.Handler())
		if err := s.addSide("metrics", rc.MetricsListen, mux); err != nil {
			return fail("metrics listen", err)
		}
	}
	if rc.ForwardListen != "" {
		if err := s.addSide("forward_auth", rc.ForwardListen, s.h.ForwardAuth(rc.ForwardStyle, rc.ForwardPrefix)); err != nil {
			return fail("forward_auth listen", err)
		}
	}
	s.rl = &reloader{path: path, h: s.h, metrics: s.metrics, logger: s.logger, rc: rc, generation: 1, loaded: time.Now()}
	if rc.AdminListen != "" {
		s.hist = newScopeHistory(s.metrics, s.h)
		if err := s.addSide("admin", rc.AdminListen, s.adminHandler()); err != nil {
			return fail("admin listen", err)
		}
	}
	s.srv = &http.Server{
		Handler:           s.h,
		ReadHeaderTimeout: rc.Limits.ReadHeaderTimeout,
		ReadTimeout:       rc.Limits.ReadTimeout,
		WriteTimeout:      rc.Limits.WriteTimeout,
		IdleTimeout:       rc.Limits.IdleTimeout,
		MaxHeaderBytes:    rc.Limits.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	if s.https, err = startTLS(rc, s.h, s.srv, stderr, s.logger); err != nil { // tls.go; wraps srv.Handler
		return fail("tls", err)
	}
	return s, true
}

// newHandler builds the proxy handler, its metrics, transport and
// backend pool, writing the Apache-format logs to errLog, accessLog and
// shadowLog (nil: none) through a logwriter.Writer each, so that a
// request never waits on a log's file or stream nor on another request's
// line; each counts what it drops in orderly_log_lines_dropped_total.
func (s *server) newHandler(errLog, accessLog, shadowLog io.Writer) {
	rc := s.rc
	s.metrics = proxy.NewMetrics(func() []*policy.Rule {
		p, _ := s.h.Policies()
		return p.Rules()
	})
	outputs := [3]io.Writer{errLog, accessLog, shadowLog}
	for i, log := range []string{"error", "access", "shadow"} {
		if outputs[i] != nil {
			w := logwriter.New(outputs[i], 0, s.metrics.LogLinesDropped(log))
			s.writers = append(s.writers, w)
			outputs[i] = w
		}
	}
	s.metrics.CountingSince(s.since)
	s.metrics.SetLDAPStats(func() ldapauth.CacheStats {
		st := ldapCounters.Stats()
		p, _ := s.h.Policies()
		st.Add(p.LDAPCacheEntries())
		return st
	})
	// The health checks' transport; requests go through the handler's own
	// backend client, with the same timeout.
	s.transport = proxy.NewTransport()
	s.transport.ResponseHeaderTimeout = rc.BackendTimeout
	health := rc.Health
	if rc.GuardToken != "" {
		// Checks pass the backend guard as forwarded requests do.
		health.Header = http.Header{proxy.GuardHeader: {rc.GuardToken}}
	}
	s.pool = proxy.NewPool(rc.Backends, health)
	s.h = proxy.NewWith(proxy.Config{
		Backend:        rc.Backend,
		Pool:           s.pool,
		BackendTimeout: rc.BackendTimeout,
		MaxPerClient:   rc.Limits.MaxPerClient,
		MaxRequestLine: rc.Limits.MaxRequestLine,
		TrustedProxies: rc.TrustedProxies,
		ForwardedTLS:   rc.ForwardedTLS,
		UserHeader:     rc.UserHeader,
		ErrorLog:       outputs[0],
		AccessLog:      outputs[1],
		ShadowLog:      outputs[2],
		Mode:           rc.Mode,
		RuleHeader:     rc.RuleHeader,
		GuardToken:     rc.GuardToken,
		Logger:         s.logger,
		Metrics:        s.metrics,
		Resolver:       proxy.NewResolver(rc.ResolverAddr, rc.ResolverTimeout),
	}, s.pols)
}

// addSide binds a side listener named name (as the start-up line names
// it) serving h.
func (s *server) addSide(name, addr string, h http.Handler) error {
	side, err := listenSide(addr, h)
	if err != nil {
		return err
	}
	s.side = append(s.side, side)
	s.listening = append(s.listening, slog.String(name, side.ln.Addr().String()))
	return nil
}

// adminHandler is the admin listener's: health and readiness, then,
// behind the admin token, reload, the admin page and API, and pprof.
func (s *server) adminHandler() http.Handler {
	// Health and readiness answer without the token: kubelet and load
	// balancers cannot carry one, and they tell nothing secret.
	outer := http.NewServeMux()
	outer.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	outer.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		switch {
		case s.draining.Load():
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
		case !s.h.Ready():
			http.Error(w, "no backend answers its health check", http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "ready\n")
		}
	})
	mux := http.NewServeMux()
	outer.Handle("/", requireToken(s.rc.AdminToken, mux))
	mux.HandleFunc("POST /-/reload", s.rl.serveReload)
	mux.Handle("GET /{$}", adminPage{})
	(&adminAPI{h: s.h, rl: s.rl, hist: s.hist, started: s.started, since: s.since}).register(mux)
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return outer
}

// run serves until ctx is done (nil) or a listener fails (its error):
// SIGHUP reloads the configuration (as POST /-/reload does), SIGUSR1
// reopens the log files (after writing what was logged before it to the
// old ones), and the state file is saved every 30 seconds.
func (s *server) run(ctx context.Context) error {
	s.hup = make(chan os.Signal, 1)
	signal.Notify(s.hup, syscall.SIGHUP)
	go func() {
		for range s.hup {
			s.rl.reload()
		}
	}()
	s.usr1 = make(chan os.Signal, 1)
	signal.Notify(s.usr1, syscall.SIGUSR1)
	go func() {
		for range s.usr1 {
			for _, w := range s.writers {
				w.Flush()
			}
			for _, f := range s.logs {
				if err := f.Reopen(); err != nil {
					s.logger.Error("reopening a log file", "path", f.path, "err", err)
				}
			}
		}
	}()
	var checks context.Context
	checks, s.stopChecks = context.WithCancel(context.Background())
	go s.pool.Run(checks, s.transport)
	if s.hist != nil {
		s.histDone = make(chan struct{})
		go s.hist.run(s.histDone)
	}
	for _, side := range s.side {
		go side.srv.Serve(side.ln)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.h.Listener(s.ln)) }() // SetEnvIf: request heads as sent (proxy/rawhead.go)
	s.https.Serve(errc)
	if a := s.https.Addr(); a != "" {
		s.listening = append(s.listening, slog.String("https", a))
	}
	engine := s.pols.Legacy
	s.logger.Info("orderly serving", "listen", s.ln.Addr().String(), slog.Attr{Key: "listeners", Value: slog.GroupValue(s.listening...)}, "backend", s.rc.Backend.String(),
		"rules", len(engine.Config().Rules), "semantics", string(engine.Config().Semantics), "mode", string(s.rc.Mode), "version", version)
	go probeGuard(ctx, s.rc, s.metrics, s.logger) // guard.go
	go probeRewrite(ctx, s.rc, engine, s.logger)  // rewriteprobe.go
	s.logLoaded()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-errc:
			return err
		case <-tick.C:
			s.saveState()
		case <-ctx.Done():
			return nil
		}
	}
}

// logLoaded warns of what the policies loaded at start cannot decide as
// Apache would, and of demoted rule IDs no rule has, and lists the
// scopes.
func (s *server) logLoaded() {
	engine := s.pols.Legacy
	for _, p := range engine.Blind() {
		s.logger.Warn("orderly cannot read this Alias target: requests mapped into it are refused (403) until it is readable or mapped with legacy.path_map", "path", p)
	}
	for _, d := range engine.Config().Unfaithful {
		s.logger.Warn("orderly cannot decide as Apache would here; forwarding (legacy.forward_unfaithful)", "at", d.Pos.String(), "what", d.Text)
	}
	for _, d := range engine.Config().Differences {
		at := "(whole configuration)"
		if d.Pos.File != "" {
			at = d.Pos.String()
		}
		s.logger.Warn("2.2 and 2.4 with mod_access_compat decide differently here", "at", at, "what", d.Text)
	}
	known := map[string]bool{}
	for _, r := range engine.Config().Rules {
		known[r.ID] = true
	}
	for id := range s.rc.Demote {
		if !known[id] {
			s.logger.Warn("legacy.demote names no rule of the configuration files; it takes effect if an .htaccess rule has this ID", "rule_id", id, "at", s.rc.DemoteAt)
		}
	}
	for _, sc := range s.pols.InForce() {
		s.logger.Info("scope", "name", sc.Name, "host", sc.Host, "path", sc.Path, "mode", string(sc.Mode), "enforce", sc.Enforce, "shadow", sc.Shadow, "enforce_percent", sc.Percent)
	}
}

// drain stops serving gracefully: not ready any more (load balancers
// stop sending), no new connections, in-flight requests finish within
// shutdown_grace; then it saves the state file.
func (s *server) drain() {
	s.draining.Store(true)
	s.logger.Info("draining", "grace", s.rc.ShutdownGrace.String())
	shutdown, cancel := context.WithTimeout(context.Background(), s.rc.ShutdownGrace)
	defer cancel()
	if err := s.srv.Shutdown(shutdown); err != nil {
		s.logger.Warn("grace period over; closing the connections left", "err", err)
		s.srv.Close()
	}
	s.https.Shutdown(shutdown)
	for _, side := range s.side {
		side.srv.Shutdown(shutdown)
	}
	s.saveState()
}

// saveState writes the rule counters in force to the state file, if
// the configuration names one.
func (s *server) saveState() {
	if s.rc.StateFile == "" {
		return
	}
	p, _ := s.h.Policies()
	if err := saveState(s.rc.StateFile, append(p.Rules(), p.Unclaimed()...), s.since); err != nil {
		s.logger.Error("saving the state file", "path", s.rc.StateFile, "err", err)
	}
}

// close releases what open and run took: certificate maintenance, the
// signal handlers, the health checks, the scope history, the listeners
// not shut down, the log writers (once they have written every line
// queued) and the log files.
func (s *server) close() {
	s.https.Stop()
	if s.hup != nil {
		signal.Stop(s.hup)
		signal.Stop(s.usr1)
	}
	if s.stopChecks != nil {
		s.stopChecks()
	}
	if s.histDone != nil {
		close(s.histDone)
	}
	if s.ln != nil {
		s.ln.Close()
	}
	for _, side := range s.side {
		side.ln.Close()
	}
	for _, w := range s.writers {
		w.Close()
	}
	for _, f := range s.logs {
		f.Close()
	}
}
