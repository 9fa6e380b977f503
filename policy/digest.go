package policy

// DigestScope is mod_auth_digest's configuration in force for a request
// (AuthType Digest), as the walk merged it: Config is the protocol's
// configuration (proxy/digest's Config), which policy only passes on to
// the DigestChecker, and Providers are AuthDigestProvider's names,
// aliases resolved ("file" with the AuthUserFile in force by default).
type DigestScope struct {
	Config    any
	Providers []AuthnProvider
	// Key is the same for scopes that authenticate alike (the realm, the
	// settings, the providers): a request is authenticated once per key,
	// however many configurations decide it (subrequests, the
	// counterfactuals of necessity, a shadow policy beside the enforced
	// one), so that a nonce count is counted once, as Apache counts it.
	Key string
}

// DigestRequest is what Digest authentication reads of a request: the
// initial request's, for its subrequests and internal redirects too
// (mod_auth_digest keeps the header it parsed on the main request).
type DigestRequest struct {
	Method string // the request method, for H(A2)
	// URI is the request-target as sent (r->unparsed_uri); Path the
	// normalised, decoded path (r->parsed_uri.path).
	URI, Path string
	// ServerName and ServerPort are ap_get_server_name and
	// ap_get_server_port; DefaultPort 80, or 443 over TLS.
	ServerName              string
	ServerPort, DefaultPort int
	// Authorization is the Authorization field and HasAuthorization
	// whether the request has one.
	Authorization    string
	HasAuthorization bool
	Now              int64 // unix nanoseconds

	// done and result keep the first answer for a scope's Key.
	done   string
	result DigestResult
	has    bool
}

// Remember keeps res as the answer of s for this request.
func (r *DigestRequest) Remember(s *DigestScope, res DigestResult) {
	r.done, r.result, r.has = s.Key, res, true
}

// Remembered returns the answer kept for s, if any.
func (r *DigestRequest) Remembered(s *DigestScope) (DigestResult, bool) {
	if r.has && r.done == s.Key {
		return r.result, true
	}
	return DigestResult{}, false
}

// DigestResult is the outcome of Digest authentication.
type DigestResult struct {
	Status int // 0 when granted, else 400, 401 or 500
	User   string
	// Challenge is the WWW-Authenticate value of a 401; AuthInfo the
	// Authentication-Info value of a granted request.
	Challenge, AuthInfo string
	// Code and Message are the error-log line that says why ("" none).
	Code, Message string
}

// DigestChecker is what an Identity adds to decide Digest
// authentication (mod_auth_digest): it holds the server's secret and
// its table of clients. An Identity without it answers AuthType Digest
// as a module not loaded (500).
type DigestChecker interface {
	// CheckDigest authenticates r in scope s (authenticate_digest_user).
	CheckDigest(s *DigestScope, l *Layers, r *DigestRequest) DigestResult
	// DigestChallenge is the challenge of a 401 that authorization
	// answers after Digest authentication (note_digest_auth_failure).
	DigestChallenge(s *DigestScope, l *Layers, r *DigestRequest) string
}

// authenticateDigest is check_user_id for AuthType Digest.
func authenticateDigest(l *Layers, r *Request, id Identity, d *Decision) int {
	dc, ok := id.(DigestChecker)
	if !ok || l.Digest == nil || r.Digest == nil {
		d.Layer = LayerConfig
		d.log(LogLine{Module: "authn_core", Code: "AH01796", Subject: l.AuthType})
		return 500
	}
	res, ok := r.Digest.Remembered(l.Digest)
	if !ok {
		res = dc.CheckDigest(l.Digest, l, r.Digest)
		r.Digest.Remember(l.Digest, res)
	}
	if res.Code != "" {
		d.log(LogLine{Module: "auth_digest", Code: res.Code, Subject: res.Message})
	}
	switch res.Status {
	case 0:
		d.User, d.AuthInfo = res.User, res.AuthInfo
		return 0
	case 401:
		d.Realm, d.Challenge = l.AuthName, res.Challenge
		return 401
	case 400:
		d.Layer = LayerRequest
		return 400
	}
	d.Layer = LayerConfig
	return 500
}

// digestChallenge sets the challenge of a 401 that authorization answers
// where Digest authenticated the request.
func digestChallenge(l *Layers, c *evalCtx, d *Decision) {
	if dc, ok := c.id.(DigestChecker); ok && l.Digest != nil && c.req.Digest != nil {
		d.Challenge = dc.DigestChallenge(l.Digest, l, c.req.Digest)
	}
}
