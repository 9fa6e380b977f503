package main

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/proxy"
)

// reloader re-reads the HCL file and the legacy configuration and swaps
// the policy in force, on SIGHUP or POST /-/reload. A configuration with
// errors is rejected with its diagnostics and the previous one keeps
// serving. Rules that kept their ID keep their counters.
type reloader struct {
	path    string
	h       *proxy.Handler
	metrics *proxy.Metrics
	logger  *slog.Logger

	mu         sync.Mutex
	rc         *runtimeConfig // in force
	generation uint64
	loaded     time.Time // when the configuration in force was loaded
	lastErr    string    // the last reload's diagnostics, "" when it succeeded
}

// reload returns the diagnostics of a rejected configuration, or the
// settings that changed but take effect only on restart.
func (r *reloader) reload() (notes []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var diags bytes.Buffer
	rc, e, ok := setup(r.path, &diags)
	if !ok {
		r.metrics.Loaded(r.generation, false)
		msg := strings.TrimSpace(diags.String())
		r.lastErr = msg
		r.logger.Error("configuration reload rejected; the previous configuration keeps serving", "config", r.path, "errors", msg)
		return nil, fmt.Errorf("%s", msg)
	}
	old, _ := r.h.Policies()
	kept := e.Inherit(old)
	r.generation = r.h.SetPolicies(e)
	// The replaced configuration's LDAP connections: the new one has its
	// own clients, with the settings it reads.
	old.CloseLDAP()
	r.metrics.Loaded(r.generation, true)
	r.loaded, r.lastErr = time.Now(), ""
	notes = restartOnly(r.rc, rc)
	r.rc = rc
	r.logger.Info("configuration reloaded", "config", r.path, "generation", r.generation,
		"rules", len(e.Rules()), "rules_kept", kept)
	for _, n := range notes {
		r.logger.Warn("changed setting takes effect on restart", "setting", n)
	}
	return notes, nil
}

// restartOnly names the settings a reload does not apply.
func restartOnly(a, b *runtimeConfig) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	add("listen", a.Listen != b.Listen)
	add("backend", !slices.EqualFunc(a.Backends, b.Backends, func(x, y *url.URL) bool { return x.String() == y.String() }) ||
		!reflect.DeepEqual(a.Health, b.Health) || a.GuardToken != b.GuardToken || a.BackendTimeout != b.BackendTimeout)
	add("client_ip", !slices.Equal(a.TrustedProxies, b.TrustedProxies) || a.UserHeader != b.UserHeader || a.ForwardedTLS != b.ForwardedTLS)
	add("metrics.listen", a.MetricsListen != b.MetricsListen)
	add("admin", a.adminRuntime != b.adminRuntime)
	add("error_log", a.ErrorLog != b.ErrorLog)
	add("access_log", a.AccessLog != b.AccessLog)
	add("shadow_log", a.ShadowLog != b.ShadowLog)
	add("state_file", a.StateFile != b.StateFile)
	add("rule_header", a.RuleHeader != b.RuleHeader)
	add("resolver", a.resolverRuntime != b.resolverRuntime)
	add("tls", !reflect.DeepEqual(a.TLS, b.TLS))
	add("limits", a.Limits != b.Limits)
	add("forward_auth", a.forwardRuntime != b.forwardRuntime)
	add("shutdown_grace", a.ShutdownGrace != b.ShutdownGrace)
	return out
}

// serveReload is POST /-/reload: 200 with the generation in force, or 400
// with the diagnostics of the rejected configuration.
func (r *reloader) serveReload(w http.ResponseWriter, _ *http.Request) {
	notes, err := r.reload()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "reload rejected; the previous configuration keeps serving\n%v\n", err)
		return
	}
	r.mu.Lock()
	gen := r.generation
	r.mu.Unlock()
	fmt.Fprintf(w, "reloaded: generation %d\n", gen)
	for _, n := range notes {
		fmt.Fprintf(w, "changed %s takes effect on restart\n", n)
	}
}

// requireToken puts h behind the admin token when token is set:
// "Authorization: Bearer <token>", or Basic credentials whose password is
// the token (any user name), so that a browser can open the admin page.
func requireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var got string
		scheme, rest, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			got = rest
		case strings.EqualFold(scheme, "Basic"):
			if _, pw, ok := req.BasicAuth(); ok {
				got = pw
			}
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="orderly admin"`)
			w.Header().Add("WWW-Authenticate", `Basic realm="orderly admin (any user, the token as password)"`)
			http.Error(w, "admin token required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	})
}
