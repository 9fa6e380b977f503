package authfile

import (
	"sync"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/digest"
)

// digestServer is the Identity's mod_auth_digest: its secret, drawn when
// first needed, and its table of clients, for the life of the Identity
// (Apache keeps them across graceful restarts).
type digestServer struct {
	once sync.Once
	srv  *digest.Server
	err  error
}

func (id *Identity) digestServer() (*digest.Server, error) {
	d := &id.digest
	d.once.Do(func() { d.srv, d.err = digest.NewServer(digest.Options{}) })
	return d.srv, d.err
}

// CheckDigest implements policy.DigestChecker: Digest authentication as
// mod_auth_digest decides it, the AuthDigestProvider list read as
// mod_authn_file reads htdigest files.
func (id *Identity) CheckDigest(s *policy.DigestScope, l *policy.Layers, r *policy.DigestRequest) policy.DigestResult {
	srv, err := id.digestServer()
	cfg, ok := s.Config.(*digest.Config)
	if err != nil || !ok {
		return policy.DigestResult{Status: 500}
	}
	req := id.digestRequest(r)
	return digestResult(srv.Authenticate(cfg, &req, id.digestLookup(s)))
}

// DigestChallenge implements policy.DigestChecker.
func (id *Identity) DigestChallenge(s *policy.DigestScope, l *policy.Layers, r *policy.DigestRequest) string {
	srv, err := id.digestServer()
	cfg, ok := s.Config.(*digest.Config)
	if err != nil || !ok {
		return ""
	}
	req := id.digestRequest(r)
	return srv.Challenge(cfg, &req).Challenge
}

func (id *Identity) digestRequest(r *policy.DigestRequest) digest.Request {
	req := digest.Request{
		Method: r.Method, URI: r.URI, Path: r.Path, ServerName: r.ServerName, ServerPort: r.ServerPort,
		DefaultPort: r.DefaultPort, Authorization: r.Authorization, HasAuthorization: r.HasAuthorization,
	}
	if r.Now != 0 {
		req.Time = time.Unix(0, r.Now)
	}
	return req
}

// digestLookup is the scope's providers as one Lookup: each file
// provider reads its htdigest file (the load refuses other providers).
func (id *Identity) digestLookup(s *policy.DigestScope) digest.Lookup {
	ls := make([]digest.Lookup, 0, len(s.Providers))
	for _, p := range s.Providers {
		file := p.File
		if file != "" {
			file = id.path(file)
		}
		ls = append(ls, digest.HTDigestFile(file))
	}
	return digest.Providers(ls...)
}

func digestResult(res digest.Result) policy.DigestResult {
	out := policy.DigestResult{Status: res.Status, User: res.User, Challenge: res.Challenge, AuthInfo: res.AuthInfo}
	if res.Status == 200 {
		out.Status = 0
	}
	for _, e := range res.Logs {
		if e.Level != "info" {
			out.Code, out.Message = e.Code, e.Message
		}
	}
	return out
}

// Identity decides Digest authentication as policy asks.
var _ policy.DigestChecker = (*Identity)(nil)
