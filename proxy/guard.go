package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The backend guard: Apache 2.4 configuration that makes the backend
// answer only requests that come through orderly (issue #7 item 8), and
// the start-up probe that checks it. Both halves live here so that the
// configuration GuardConfig writes and what ProbeGuard expects of it
// cannot drift apart.
//
// Checked on Apache 2.4 (TestBackendGuard in internal/differential):
//   - After mod_remoteip has taken the client address from
//     X-Forwarded-For, "Require ip" and ap_expr's -R and REMOTE_ADDR see
//     that client, not the proxy; only %{CONN_REMOTE_ADDR} is the
//     connection's peer. So the guard tests CONN_REMOTE_ADDR.
//   - RemoteIPTrustedProxy leaves private client addresses (10/8,
//     172.16/12, 192.168/16, 127/8, ...) in the header and logs the
//     proxy instead (mod_remoteip.c, remoteip_modify_request), which
//     breaks every intranet rule; orderly has already decided which
//     address is the client's, so the guard uses RemoteIPInternalProxy.
//   - A "Require" inside <Location /> replaces the Require rules the
//     backend's own <Directory> sections set (AuthMerging Off), so it
//     would open what the backend itself refuses. An <If> section that
//     matches only the requests to refuse leaves the others alone.
//   - With mod_access_compat, "Satisfy Any" and an Allow that matches
//     skip Require altogether; the guard's <If> sets "Satisfy All".

const (
	// GuardHeader carries the guard token from orderly to the backend.
	// orderly removes any copy a client sends.
	GuardHeader = "X-Orderly-Guard"
	// GuardProbePath is the path of the start-up probe. It names no file;
	// without a guard the backend answers 404.
	GuardProbePath = "/orderly-guard-probe"
	// GuardProbeClient is the client address the probe sends in
	// X-Forwarded-For (TEST-NET-1, RFC 5737): the guard refuses the probe
	// path for it, so a 403 shows that the backend took the client
	// address from orderly's header.
	GuardProbeClient = "192.0.2.1"
	// guardProbeOther is the control: any other address gets the
	// backend's ordinary answer.
	guardProbeOther = "192.0.2.2"
	// MinGuardToken is the shortest token accepted.
	MinGuardToken = 16
)

// GuardOptions describe the backend guard to write.
type GuardOptions struct {
	// Orderly lists orderly's addresses as the backend sees them
	// (addresses or prefixes): the only peers whose requests are answered
	// and whose X-Forwarded-For is believed.
	Orderly []netip.Prefix
	// TrustedProxies are proxies in front of orderly (orderly's
	// client_ip.trusted_proxies): X-Forwarded-For entries they added are
	// believed too, so that the backend logs the same client orderly
	// decided on. They are not allowed to connect.
	TrustedProxies []netip.Prefix
	// Token, when set, must arrive in GuardHeader as well.
	Token string
	// ModulesDir is where mod_remoteip.so is, for the LoadModule line
	// written when the module is not loaded yet.
	ModulesDir string
}

// ValidGuardToken reports why tok cannot be a guard token, or nil: it
// must be at least MinGuardToken characters of [A-Za-z0-9._~+/=-], so
// that it is a header value and a quoted ap_expr string as it is.
func ValidGuardToken(tok string) error {
	if len(tok) < MinGuardToken {
		return fmt.Errorf("the guard token must be at least %d characters", MinGuardToken)
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._~+/=-", c) >= 0) {
			return fmt.Errorf("the guard token may hold only letters, digits and ._~+/=- (as from openssl rand -hex 32 or -base64 32), not %q", c)
		}
	}
	return nil
}

// GuardConfig returns the Apache 2.4 configuration of the backend guard,
// to be included last in the backend's server configuration.
func GuardConfig(opt GuardOptions) (string, error) {
	if len(opt.Orderly) == 0 {
		return "", fmt.Errorf("no orderly address: the guard needs the addresses orderly connects to the backend from")
	}
	if opt.Token != "" {
		if err := ValidGuardToken(opt.Token); err != nil {
			return "", err
		}
	}
	dir := opt.ModulesDir
	if dir == "" {
		dir = "/usr/lib/apache2/modules"
	}
	if strings.ContainsAny(dir, "\"\\\n\r") {
		return "", fmt.Errorf("modules directory %q cannot be quoted in an Apache configuration", dir)
	}
	var names, peers, proxies []string
	for _, p := range opt.Orderly {
		p = p.Masked()
		names = append(names, prefixText(p))
		peers = append(peers, fmt.Sprintf("%%{CONN_REMOTE_ADDR} -ipmatch '%s'", p))
		proxies = append(proxies, prefixText(p))
	}
	for _, p := range opt.TrustedProxies {
		proxies = append(proxies, prefixText(p.Masked()))
	}
	refuse := "!(" + strings.Join(peers, " || ") + ")"
	what := "connect from orderly (" + strings.Join(names, ", ") + ")"
	if opt.Token != "" {
		refuse += " || req_novary('" + GuardHeader + "') != '" + opt.Token + "'"
		what = "connect from orderly (" + strings.Join(names, ", ") + ") with its token in " + GuardHeader
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Backend guard, written by orderly translate -backend-guard.
# This Apache 2.4 server answers only requests that %s,
# and takes the client address from the X-Forwarded-For header orderly sends.
# Include this file last in the server configuration, after every LoadModule.
`, what)
	if opt.Token != "" {
		b.WriteString("# It holds the token: keep it readable by root only.\n")
	}
	fmt.Fprintf(&b, `
<IfModule !remoteip_module>
    LoadModule remoteip_module "%s/mod_remoteip.so"
</IfModule>
RemoteIPHeader X-Forwarded-For
# Internal, not Trusted: RemoteIPTrustedProxy ignores private client
# addresses (10/8, 192.168/16, ...) in the header and logs orderly instead.
RemoteIPInternalProxy %s

# Refuse what does not come through orderly. CONN_REMOTE_ADDR is the
# connection's peer; "Require ip" would see the address from X-Forwarded-For.
# An <If> leaves this server's own Require rules in force for the rest, and
# Satisfy All keeps a "Satisfy Any" section from skipping the refusal.
<If "%s">
    <IfModule access_compat_module>
        Satisfy All
    </IfModule>
    Require all denied
</If>

# orderly's start-up probe: %s from %s (sent by orderly in
# X-Forwarded-For) is refused, which shows that the address orderly sends is
# the one this server uses.
<If "%%{REQUEST_URI} == '%s' && -R '%s'">
    <IfModule access_compat_module>
        Satisfy All
    </IfModule>
    Require all denied
</If>
`, strings.TrimSuffix(dir, "/"), strings.Join(proxies, " "), refuse, GuardProbePath, GuardProbeClient, GuardProbePath, GuardProbeClient)
	return b.String(), nil
}

// prefixText writes a single address without its /32 or /128.
func prefixText(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
}

// GuardReport is what the start-up probe found.
type GuardReport struct {
	// Answers: the backend did not refuse orderly's own request (the
	// control, with the token when one is set).
	Answers bool
	// ForwardedFor: the backend refused the probe path for the client
	// address orderly sent in X-Forwarded-For, so it uses that address.
	ForwardedFor bool
	// TokenChecked: a token is set, so lock-down could be tested.
	TokenChecked bool
	// LockedDown: a request without the token was refused.
	LockedDown bool
	// Status of the control, the X-Forwarded-For probe and the request
	// without the token (0 when not sent).
	ControlStatus, ForwardedForStatus, BypassStatus int
}

// OK reports whether the probe proved the backend locked down.
func (r GuardReport) OK() bool {
	return r.Answers && r.ForwardedFor && r.TokenChecked && r.LockedDown
}

// Problems returns what the probe found wrong, one sentence each; none
// when OK.
func (r GuardReport) Problems() []string {
	var out []string
	if !r.Answers {
		out = append(out, fmt.Sprintf("the backend refuses orderly's own requests (%d for %s with orderly's token): check orderly's addresses and the token in the backend's guard, and that the backend does not refuse this path itself", r.ControlStatus, GuardProbePath))
		return out
	}
	if !r.ForwardedFor {
		out = append(out, fmt.Sprintf("the backend does not use the client address orderly sends in X-Forwarded-For (%s from %s answered %d, want 403): the backend guard (orderly translate -backend-guard) is not installed or does not list orderly's address; the backend's own Require ip rules and logs see orderly instead of the client", GuardProbePath, GuardProbeClient, r.ForwardedForStatus))
	}
	switch {
	case !r.TokenChecked:
		out = append(out, "backend.guard_token_file is not set, so orderly cannot tell whether the backend refuses requests that bypass orderly (a probe from orderly always comes from orderly's address): anyone who can reach the backend directly may bypass every legacy rule; set guard_token_file and install the guard with the same token (orderly translate -backend-guard -guard-token-file)")
	case !r.LockedDown:
		out = append(out, fmt.Sprintf("the backend answered %d to a request without orderly's guard token: anyone who can reach it directly bypasses every legacy rule; install the guard with the same token (orderly translate -backend-guard -guard-token-file)", r.BypassStatus))
	}
	return out
}

// ProbeGuard checks the backend guard from orderly's side, with three
// requests for GuardProbePath on connections of their own: the control
// (X-Forwarded-For guardProbeOther, with the token when set) must not get
// 403; the same from GuardProbeClient must (the guard's probe rule); and,
// when a token is set, the control without the token must get 403. The
// clients the probe names are documentation addresses (RFC 5737), never
// orderly's own: the backend logs each refusal as AH01630 for that
// client, and a fail2ban watching the backend's log must not ban orderly
// for its probes. tr is cloned (nil: NewTransport). An error means the
// backend could not be asked.
func ProbeGuard(ctx context.Context, backend *url.URL, token string, tr *http.Transport) (GuardReport, error) {
	if tr == nil {
		tr = NewTransport()
	}
	tr = tr.Clone()
	tr.DisableKeepAlives = true
	u := *backend
	u.Path, u.RawPath, u.RawQuery = GuardProbePath, "", ""
	get := func(xff string, withToken bool) (int, error) {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		tok := ""
		if withToken {
			tok = token
		}
		return probeGet(ctx, tr, &u, xff, tok, "orderly-guard-probe")
	}
	defer tr.CloseIdleConnections()
	var r GuardReport
	var err error
	if r.ControlStatus, err = get(guardProbeOther, token != ""); err != nil {
		return r, err
	}
	r.Answers = r.ControlStatus != http.StatusForbidden
	if r.ForwardedForStatus, err = get(GuardProbeClient, token != ""); err != nil {
		return r, err
	}
	r.ForwardedFor = r.ForwardedForStatus == http.StatusForbidden
	if token == "" {
		return r, nil
	}
	r.TokenChecked = true
	if r.BypassStatus, err = get(guardProbeOther, false); err != nil {
		return r, err
	}
	r.LockedDown = r.BypassStatus == http.StatusForbidden
	return r, nil
}

// newGuardGauge registers orderly_backend_guard_ok, 0 until a probe
// proves the guard.
func newGuardGauge(reg *prometheus.Registry) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "orderly_backend_guard_ok",
		Help: "Whether the start-up probe proved the backend locked down (1): it answers orderly, uses the client address orderly sends in X-Forwarded-For, and refuses a request without orderly's guard token. 0 before the probe, when it failed, and always without backend.guard_token_file.",
	})
	reg.MustRegister(g)
	return g
}

// GuardChecked records the probe's result in orderly_backend_guard_ok.
func (m *Metrics) GuardChecked(r GuardReport) {
	if m == nil {
		return
	}
	v := 0.0
	if r.OK() {
		v = 1
	}
	m.guardOK.Set(v)
}

// ProbePath asks the backend for path as orderly forwards requests (with
// the guard token, when one is set, and client in X-Forwarded-For) and
// returns its status: the start-up check that the backend runs the
// legacy rewrite rules orderly decides by.
func ProbePath(ctx context.Context, backend *url.URL, token, path, client string, tr *http.Transport) (int, error) {
	if tr == nil {
		tr = NewTransport()
	}
	tr = tr.Clone()
	tr.DisableKeepAlives = true
	defer tr.CloseIdleConnections()
	u := *backend
	u.Path, u.RawPath, u.RawQuery = path, "", ""
	return probeGet(ctx, tr, &u, client, token, "orderly-rewrite-probe")
}

// probeGet sends one probe: a GET of u from client (X-Forwarded-For),
// with the guard token when one is given; its status.
func probeGet(ctx context.Context, tr *http.Transport, u *url.URL, client, token, agent string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Forwarded-For", client)
	req.Header.Set("User-Agent", agent)
	if token != "" {
		req.Header.Set(GuardHeader, token)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}
