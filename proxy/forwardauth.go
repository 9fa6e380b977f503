package proxy

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// ForwardAuth returns the forward-auth endpoint: it decides the request
// that a front proxy describes and answers 200 to let it through, or the
// refusal to send the client (403, or 401 with WWW-Authenticate), with
// the same policy, scopes, logs and metrics as the proxy. It reads the
// conventions of:
//
//   - nginx auth_request: X-Original-URI, X-Original-Method and
//     X-Original-Protocol (set them with proxy_set_header; nginx passes
//     the client's headers);
//   - Traefik ForwardAuth and Caddy forward_auth: X-Forwarded-Uri,
//     X-Forwarded-Method, X-Forwarded-Host;
//   - Envoy ext_authz (HTTP service): the request's own method and path,
//     after pathPrefix (its path_prefix), and headers.
//
// The client address is X-Forwarded-For from a trusted proxy, as on the
// proxy listener: the front proxy must be in client_ip.trusted_proxies.
// On 200 the user that authenticated, if any, is in the user header
// (X-Remote-User), for the front proxy to pass on.
func (h *Handler) ForwardAuth(pathPrefix string) http.Handler {
	pathPrefix = strings.TrimSuffix(pathPrefix, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orig := r.Clone(r.Context())
		target := first(r.Header, "X-Original-Uri", "X-Forwarded-Uri")
		if target == "" {
			target = r.RequestURI
			if pathPrefix != "" {
				t, ok := strings.CutPrefix(target, pathPrefix)
				if !ok || t != "" && t[0] != '/' && t[0] != '?' {
					http.Error(w, "not under the forward-auth path prefix", http.StatusBadRequest)
					return
				}
				if t == "" || t[0] == '?' {
					t = "/" + t
				}
				target = t
			}
		}
		orig.RequestURI = target
		if u, err := url.ParseRequestURI(target); err == nil {
			orig.URL = u
		} else {
			orig.URL = &url.URL{Path: target}
		}
		if m := first(r.Header, "X-Original-Method", "X-Forwarded-Method"); m != "" {
			orig.Method = m
		}
		if host := first(r.Header, "X-Forwarded-Host", "X-Original-Host"); host != "" {
			orig.Host = host
		}
		if p := r.Header.Get("X-Original-Protocol"); p != "" {
			if major, minor, ok := http.ParseHTTPVersion(p); ok {
				orig.Proto, orig.ProtoMajor, orig.ProtoMinor = p, major, minor
			}
		}
		// What describes the request is not part of it; X-Forwarded-Host
		// and -Proto stay, as the legacy server behind a front saw them.
		for _, k := range []string{"X-Original-Uri", "X-Original-Method", "X-Original-Host", "X-Original-Protocol", "X-Forwarded-Uri", "X-Forwarded-Method"} {
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

func first(hd http.Header, names ...string) string {
	for _, n := range names {
		if v := hd.Get(n); v != "" {
			return v
		}
	}
	return ""
}
