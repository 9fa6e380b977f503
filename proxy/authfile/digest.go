package authfile

import (
	"errors"
	"fmt"
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

// digestLookup is the scope's providers as one Lookup, as get_hash of
// mod_auth_digest asks them: each file provider reads its htdigest file
// (mod_authn_file), each dbm provider its AuthDBMUserFile
// (mod_authn_dbm); the load refuses other providers.
func (id *Identity) digestLookup(s *policy.DigestScope) digest.Lookup {
	ls := make([]digest.Lookup, 0, len(s.Providers))
	for _, p := range s.Providers {
		if p.Kind == policy.ProviderDBM {
			ls = append(ls, id.dbmLookup(p.File, p.DBMType))
			continue
		}
		file := p.File
		if file != "" {
			file = id.path(file)
		}
		ls = append(ls, digest.HTDigestFile(file))
	}
	return digest.Providers(ls...)
}

// dbmLookup is get_dbm_realm_hash of mod_authn_dbm (2.4) for the
// AuthDBMUserFile file of type dbmType: the record under the key
// "user:realm", its value up to the first ':'. A file that cannot be
// opened (none set, missing, of a type orderly does not read) fails as
// fetch_dbm_value fails, with AH10285 (AH10284 for a type apr-util does
// not know): Apache answers 500.
func (id *Identity) dbmLookup(file, dbmType string) digest.Lookup {
	return func(user, realm string) (string, bool, error) {
		hash, found, err := id.DBMRealmHash(file, dbmType, user, realm)
		if err != nil {
			code := "AH10285"
			msg := fmt.Sprintf("could not open dbm (type %s) file: %s: %v", dbmType, file, err)
			if _, kerr := id.store.dbmKindOf(dbmType); kerr != nil {
				code = "AH10284"
				msg = fmt.Sprintf("could not load '%s' dbm library: %v", dbmType, err)
			}
			return "", false, &digest.ProviderError{Code: code, Err: errors.New(msg)}
		}
		return hash, found, nil
	}
}

// DBMRealmHash returns the H(A1) of user in realm in the DBM file of the
// given AuthDBMType ("" = default), as mod_authn_dbm's get_realm_hash
// finds it (see DBMHashes.RealmHash), and whether the file has it. A file
// of "" is an AuthDBMUserFile not set, which fails as one that cannot
// be opened.
func (id *Identity) DBMRealmHash(file, dbmType, user, realm string) (hash string, found bool, err error) {
	if file == "" {
		return "", false, errNoDBMFile
	}
	h, err := id.store.DBMHashes(id.path(file), dbmType)
	if err != nil {
		return "", false, err
	}
	hash, found = h.RealmHash(user, realm)
	return hash, found, nil
}

// errNoDBMFile is the error of a dbm provider without AuthDBMUserFile:
// apr_dbm_open is given no name, which it cannot open.
var errNoDBMFile = errors.New("AuthDBMUserFile not set")

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
