package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// The forward-auth conventions: which headers describe the request.
const (
	// AuthNginx is nginx auth_request: X-Original-URI, X-Original-Method,
	// X-Original-Protocol and X-Forwarded-Host, as proxy_set_header sets
	// them.
	AuthNginx = "nginx"
	// AuthForwarded is Traefik ForwardAuth and Caddy forward_auth:
	// X-Forwarded-Uri, X-Forwarded-Method and X-Forwarded-Host.
	AuthForwarded = "forwarded"
	// AuthEnvoy is Envoy ext_authz's HTTP service: the request's own
	// method and path, after the path prefix.
	AuthEnvoy = "envoy"
)

// ForwardAuth returns the forward-auth endpoint: it decides the request
// that a front proxy describes, in the convention style names, and
// answers 200 to let it through, or the refusal to send the client (403,
// or 401 with WWW-Authenticate), with the same policy, scopes, logs and
// metrics as the proxy. One convention only: a front proxy passes the
// client's own headers on, so a header of another convention may be the
// client's, and is never read (nor is the request's own path, but in
// Envoy's). A request missing its convention's headers gets 400.
//
// The client address is X-Forwarded-For from a trusted proxy, as on the
// proxy listener: the front proxy must be in client_ip.trusted_proxies.
// On 200 the user that authenticated, if any, is in the user header
// (X-Remote-User), for the front proxy to pass on.
func (h *Handler) ForwardAuth(style, pathPrefix string) http.Handler {
	pathPrefix = strings.TrimSuffix(pathPrefix, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orig := r.Clone(r.Context())
		var target, method, host string
		switch style {
		case AuthNginx:
			target, method, host = r.Header.Get("X-Original-Uri"), r.Header.Get("X-Original-Method"), r.Header.Get("X-Forwarded-Host")
			if p := r.Header.Get("X-Original-Protocol"); p != "" {
				if major, minor, ok := http.ParseHTTPVersion(p); ok {
					orig.Proto, orig.ProtoMajor, orig.ProtoMinor = p, major, minor
				}
			}
		case AuthForwarded:
			target, method, host = r.Header.Get("X-Forwarded-Uri"), r.Header.Get("X-Forwarded-Method"), r.Header.Get("X-Forwarded-Host")
		case AuthEnvoy:
			t, ok := strings.CutPrefix(r.RequestURI, pathPrefix)
			if !ok || t != "" && t[0] != '/' && t[0] != '?' {
				http.Error(w, "not under the forward-auth path prefix", http.StatusBadRequest)
				return
			}
			if t == "" || t[0] == '?' {
				t = "/" + t
			}
			target = t
		}
		if target == "" || style != AuthEnvoy && host == "" {
			// Without its host the request would be decided for whichever
			// virtual host this endpoint's own name selects.
			http.Error(w, "the request to decide is not described (forward_auth style "+style+": its URI and X-Forwarded-Host)", http.StatusBadRequest)
			return
		}
		orig.RequestURI = target
		if u, err := url.ParseRequestURI(target); err == nil {
			orig.URL = u
		} else {
			orig.URL = &url.URL{Path: target}
		}
		if method != "" {
			orig.Method = method
		}
		if host != "" {
			orig.Host = host
		}
		// What describes the request is not part of it; X-Forwarded-Host
		// and -Proto stay, as the legacy server behind a front saw them.
		orig = describeBody(orig)
		for _, k := range []string{"X-Original-Uri", "X-Original-Method", "X-Original-Host", "X-Original-Protocol", "X-Forwarded-Uri", "X-Forwarded-Method", originalLength, originalEncoding} {
			orig.Header.Del(k)
		}
		h.serve(w, orig, true)
	})
}

// grant answers a forward-auth request that is let through.
func (h *Handler) grant(w http.ResponseWriter, res *walk.Result) {
	if res.Allowed() && res.User != "" {
		w.Header().Set(h.cfg.UserHeader, res.User)
	}
	w.WriteHeader(http.StatusOK)
}
