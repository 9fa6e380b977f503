package proxy

import "net/http"

// badForm reports whether Apache would refuse r with 400, or read it
// otherwise than Go's server did, before access control looks at it:
//
//   - an absolute-form target whose scheme is not the listener's (https
//     on the plain listener, http under TLS, ftp, ...). Apache takes the
//     host from the target only when the scheme is its own and otherwise
//     picks the virtual host by the Host header (ap_parse_uri), which
//     Go's server has already replaced by the target's host: deciding on
//     that host would let "GET https://open.example/ HTTP/1.1" with
//     "Host: closed.example" through where Apache refuses it
//     (TestSecurityCorpus, form/absolute-https-host-header). orderly
//     refuses it instead (Apache answers other schemes 400 too);
//   - an HTTP/1.1 (or later) request with an empty Host: Apache answers
//     400, and the backend would pick its virtual host by the address
//     orderly connects to, not the one orderly decided on.
func badForm(r *http.Request) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if r.URL != nil && r.URL.Scheme != "" && r.URL.Scheme != scheme {
		return true
	}
	return r.ProtoAtLeast(1, 1) && r.Host == "" && r.Method != http.MethodConnect
}
