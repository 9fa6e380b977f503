package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/orderly-proxy/orderly/proxy"
	"github.com/orderly-proxy/orderly/translate/rewrite"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// The rewrite check of the start-up probe (issue 16 item 4): orderly
// decides on the target the legacy rewrite rules map a request to, and
// forwards the request as sent, so the backend must run the same rules.
// Where a server-level rule refuses a path it names literally (no
// condition), orderly asks the backend for that path: a backend that
// does not refuse it too does not run the rules.

// rewriteProbeClient is the client address of the probe (TEST-NET-1).
const rewriteProbeClient = "192.0.2.2"

// rewriteProbe finds a request a server-level rewrite rule refuses by
// itself: its path and the status orderly decides (0, false for none).
func rewriteProbe(e *walk.Engine) (string, int, bool) {
	rw := e.Config().Rewrite
	if rw == nil {
		return "", 0, false
	}
	for _, r := range rw.Rules {
		if r.Flags&rewrite.FlagStatus == 0 || r.Negate || len(r.Conds) > 0 {
			continue
		}
		if !strings.HasPrefix(r.Pattern, "^/") {
			continue
		}
		re, err := regexp.Compile(r.Pattern[1:]) // LiteralPrefix is "" after a "^"
		if err != nil {
			continue
		}
		path, _ := re.LiteralPrefix()
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "?#% ") {
			continue
		}
		res := e.Decide(&walk.Request{Method: http.MethodGet, Target: path, Proto: "HTTP/1.1", Header: http.Header{},
			ClientAddr: netip.MustParseAddr(rewriteProbeClient), LocalAddr: netip.MustParseAddr("127.0.0.1"), Dry: true}, nil)
		if res.Rewritten != nil && res.Rewritten.Rule == r.Line && res.Status == r.Status {
			return path, res.Status, true
		}
	}
	return "", 0, false
}

// probeRewrite runs the rewrite check against the backend, logging a
// warning where the backend answers otherwise than the legacy rules.
func probeRewrite(ctx context.Context, rc *runtimeConfig, e *walk.Engine, logger *slog.Logger) {
	path, want, ok := rewriteProbe(e)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got, err := proxy.ProbePath(ctx, rc.Backend, rc.GuardToken, path, rewriteProbeClient, nil)
	switch {
	case err != nil:
		logger.Warn("backend rewrite check failed", "problem", "the backend did not answer", "path", path, "err", err)
	case got != want:
		logger.Warn("backend rewrite check failed", "problem", "the backend does not refuse what the legacy rewrite rules refuse: orderly decides on the target the rules map a request to and forwards the request as sent, so the backend must run the same rules (orderly translate keeps them)",
			"path", path, "legacy_status", want, "backend_status", got)
	default:
		logger.Info("backend rewrite check passed: the backend runs the legacy rewrite rules", "path", path, "status", got)
	}
}
