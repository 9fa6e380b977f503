package walk

import (
	"net"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/digest"
)

// digestScope is mod_auth_digest's configuration in force where AuthType
// is Digest: the innermost section's AuthDigest* lines over the module's
// defaults (it has no merger), the AuthName of the merged configuration,
// and AuthDigestProvider's names resolved as AuthBasicProvider's are
// ("file" by default).
func (e *Engine) digestScope(a *accum, l *policy.Layers) *policy.DigestScope {
	cfg := digest.NewConfig(l.AuthName)
	cfg.HasAuthName = l.HasAuthName
	if a.digest != nil {
		for _, line := range a.digest.Lines {
			// The builder checked each line (translate: digestDirective).
			_ = cfg.Set(line.Name, line.Args...)
		}
	}
	names := cfg.Providers
	if len(names) == 0 {
		names = []string{"file"}
	}
	b := *a
	b.providers = names
	ps := e.providers(&b)
	key := strconv.Quote(l.AuthName) + strconv.FormatBool(l.HasAuthName)
	if a.digest != nil {
		for _, line := range a.digest.Lines {
			key += "|" + strings.ToLower(line.Name) + "=" + strings.Join(line.Args, " ")
		}
	}
	for _, p := range ps {
		key += "|" + p.Name + ":" + p.File
	}
	return &policy.DigestScope{Config: &cfg, Providers: ps, Key: key}
}

// digestRequest is what Digest authentication reads of req, made once,
// from the initial request (path is its decoded, normalised path):
// subrequests read the main request's.
func (req *Request) digestRequest(path string) *policy.DigestRequest {
	d := &req.digest
	if req.digestDone {
		return d
	}
	req.digestDone = true
	d.Method, d.URI, d.Path, d.Now = req.Method, req.Target, path, req.Now
	d.Authorization, d.HasAuthorization = digest.FieldValue(req.Header)
	d.DefaultPort = 80
	if req.TLS {
		d.DefaultPort = 443
	}
	// UseCanonicalName Off (the default): the Host field's name and port.
	// A Host without a colon has no port, and SplitHostPort would only
	// make its error: most requests are spared it, and Atoi's.
	host, port := req.Host, ""
	if strings.IndexByte(req.Host, ':') >= 0 {
		if h, p, err := net.SplitHostPort(req.Host); err == nil {
			host, port = h, p
		}
	}
	d.ServerName = strings.ToLower(host)
	d.ServerPort = d.DefaultPort
	if port != "" {
		if n, err := strconv.Atoi(port); err == nil && n > 0 {
			d.ServerPort = n
		}
	}
	return d
}
