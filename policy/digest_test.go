package policy

import "testing"

// fakeDigest answers Digest authentication from a table of results by
// user, counting the checks.
type fakeDigest struct {
	fakeIdentity
	results map[string]DigestResult
	checks  *int
}

func (f fakeDigest) CheckDigest(s *DigestScope, l *Layers, r *DigestRequest) DigestResult {
	*f.checks++
	return f.results[r.Authorization]
}

func (f fakeDigest) DigestChallenge(s *DigestScope, l *Layers, r *DigestRequest) string {
	return `Digest realm="` + l.AuthName + `", nonce="new"`
}

func TestAuthenticateDigest(t *testing.T) {
	results := map[string]DigestResult{
		"alice":   {Status: 0, User: "alice", AuthInfo: `rspauth="x"`},
		"bob":     {Status: 0, User: "bob"},
		"wrong":   {Status: 401, Challenge: `Digest realm="R", nonce="n1"`, Code: "AH01794", Message: "user alice: password mismatch: /x"},
		"baduri":  {Status: 400, Code: "AH01786", Message: "uri mismatch"},
		"nofile":  {Status: 500, Code: "AH01622", Message: "Could not open password file: /nope"},
		"noheadr": {Status: 401, Challenge: `Digest realm="R", nonce="n2"`},
	}
	for _, tc := range []struct {
		auth      string
		require   *Node
		status    int
		user      string
		layer     Layer
		code      string
		challenge string
		authInfo  string
	}{
		{auth: "alice", status: 0, user: "alice", layer: LayerAuthz, authInfo: `rspauth="x"`},
		{auth: "wrong", status: 401, layer: LayerAuthn, code: "AH01794", challenge: `Digest realm="R", nonce="n1"`},
		{auth: "noheadr", status: 401, layer: LayerAuthn, challenge: `Digest realm="R", nonce="n2"`},
		{auth: "baduri", status: 400, layer: LayerRequest, code: "AH01786"},
		{auth: "nofile", status: 500, layer: LayerConfig, code: "AH01622"},
		// Refused by Require after Digest: a new Digest challenge.
		{auth: "bob", require: leaf("u", ProvUser, "alice"), status: 401, user: "bob", layer: LayerAuthz, code: "AH01631", challenge: `Digest realm="R", nonce="new"`},
	} {
		checks := 0
		id := fakeDigest{fakeIdentity: testID, results: results, checks: &checks}
		req := leaf("v", ProvValidUser)
		if tc.require != nil {
			req = tc.require
		}
		l := &Layers{Compat: DefaultCompat, AuthType: "Digest", AuthName: "R", HasAuthName: true, Digest: &DigestScope{Key: "k"}, Authz: anyOf(req).Compile()}
		dr := &DigestRequest{Authorization: tc.auth, HasAuthorization: true}
		d := Decide(l, &Request{URI: "/x", Digest: dr}, id, nil)
		if d.Status != tc.status || d.User != tc.user || d.Layer != tc.layer || d.Challenge != tc.challenge || d.AuthInfo != tc.authInfo {
			t.Errorf("%s: status %d user %q layer %v challenge %q info %q, want %d %q %v %q %q", tc.auth, d.Status, d.User, d.Layer, d.Challenge, d.AuthInfo, tc.status, tc.user, tc.layer, tc.challenge, tc.authInfo)
		}
		logs := d.Logs()
		code := ""
		if len(logs) > 0 {
			code = logs[len(logs)-1].Code
		}
		if code != tc.code {
			t.Errorf("%s: log %v, want code %q", tc.auth, logs, tc.code)
		}
		if tc.code == "AH01622" && (logs[0].Module != "auth_digest" || logs[0].Message() != "Could not open password file: /nope") {
			t.Errorf("%s: log line %+v", tc.auth, logs[0])
		}
		if tc.status == 401 && d.Realm != "R" {
			t.Errorf("%s: realm %q", tc.auth, d.Realm)
		}
		// The same request decided again (a subrequest, a counterfactual)
		// is not checked again: its nonce count counts once.
		Decide(l, &Request{URI: "/x", Digest: dr}, id, nil)
		if checks != 1 {
			t.Errorf("%s: %d checks, want 1", tc.auth, checks)
		}
		// Another scope that authenticates otherwise checks again.
		l2 := *l
		l2.Digest = &DigestScope{Key: "other"}
		Decide(&l2, &Request{URI: "/x", Digest: dr}, id, nil)
		if checks != 2 {
			t.Errorf("%s: %d checks after another scope, want 2", tc.auth, checks)
		}
	}
}

// Without a DigestChecker, or without what Digest reads of the request,
// AuthType Digest is a module that is not there: 500 (AH01796).
func TestAuthenticateDigestUnavailable(t *testing.T) {
	l := &Layers{Compat: DefaultCompat, AuthType: "Digest", AuthName: "R", HasAuthName: true, Digest: &DigestScope{}, Authz: anyOf(leaf("v", ProvValidUser)).Compile()}
	checks := 0
	for name, tc := range map[string]struct {
		id Identity
		r  *Request
	}{
		"no checker": {testID, &Request{URI: "/x", Digest: &DigestRequest{}}},
		"no request": {fakeDigest{fakeIdentity: testID, checks: &checks}, &Request{URI: "/x"}},
	} {
		d := Decide(l, tc.r, tc.id, nil)
		logs := d.Logs()
		if d.Status != 500 || d.Layer != LayerConfig || len(logs) == 0 || logs[len(logs)-1].Code != "AH01796" {
			t.Errorf("%s: %d %v %v, want 500 with AH01796", name, d.Status, d.Layer, logs)
		}
	}
	// No DigestScope: AuthType Digest without mod_auth_digest's
	// configuration is the module not loaded.
	l.Digest = nil
	if d := Decide(l, &Request{URI: "/x", Digest: &DigestRequest{}}, fakeDigest{fakeIdentity: testID, checks: &checks}, nil); d.Status != 500 {
		t.Errorf("no scope: %d, want 500", d.Status)
	}
}

// 2.2: Digest authenticates too, and a refusal by Require challenges
// for Digest.
func TestAuthenticateDigest22(t *testing.T) {
	checks := 0
	id := fakeDigest{fakeIdentity: testID, results: map[string]DigestResult{"bob": {User: "bob"}}, checks: &checks}
	l := &Layers{Compat: DefaultCompat, AuthType: "digest", AuthName: "R", HasAuthName: true, Digest: &DigestScope{Key: "k"},
		Legacy: &Legacy22{Requires: []Require22{{Words: []string{"user", "alice"}, Methods: AllMethods}}, UserAuthoritative: true, GroupAuthoritative: true}}
	d := Decide(l, &Request{URI: "/x", Digest: &DigestRequest{Authorization: "bob", HasAuthorization: true}}, id, nil)
	if d.Status != 401 || d.Challenge != `Digest realm="R", nonce="new"` || checks != 1 {
		t.Errorf("2.2: %d %q after %d checks, want 401 with a Digest challenge", d.Status, d.Challenge, checks)
	}
}

func TestDigestRemembered(t *testing.T) {
	var r DigestRequest
	a, b := &DigestScope{Key: "a"}, &DigestScope{Key: "b"}
	if _, ok := r.Remembered(a); ok {
		t.Error("a fresh request remembers an answer")
	}
	r.Remember(a, DigestResult{User: "u"})
	if res, ok := r.Remembered(&DigestScope{Key: "a"}); !ok || res.User != "u" {
		t.Errorf("same key: %v %v", res, ok)
	}
	if _, ok := r.Remembered(b); ok {
		t.Error("another key remembered")
	}
	var empty DigestRequest
	empty.Remember(&DigestScope{}, DigestResult{User: "x"})
	if _, ok := empty.Remembered(&DigestScope{}); !ok {
		t.Error("an empty key is a key")
	}
}

// A Basic scope refused by Require challenges for Basic, whatever the
// Identity can do.
func TestBasicRefusalNoDigestChallenge(t *testing.T) {
	checks := 0
	id := fakeDigest{fakeIdentity: testID, checks: &checks}
	l := &Layers{Compat: DefaultCompat, AuthType: "Basic", AuthName: "R", HasAuthName: true, UserFile: "/etc/users", Authz: anyOf(leaf("u", ProvUser, "bob")).Compile()}
	d := Decide(l, &Request{URI: "/x", Digest: &DigestRequest{}, Auth: Credentials{Present: true, Basic: true, User: "alice", Password: "wonderland"}}, id, nil)
	if d.Status != 401 || d.Challenge != "" || d.Realm != "R" || checks != 0 {
		t.Errorf("%d challenge %q realm %q after %d digest checks", d.Status, d.Challenge, d.Realm, checks)
	}
	l.Legacy = &Legacy22{Requires: []Require22{{Words: []string{"user", "bob"}, Methods: AllMethods}}, UserAuthoritative: true, GroupAuthoritative: true}
	d = Decide(l, &Request{URI: "/x", Digest: &DigestRequest{}, Auth: Credentials{Present: true, Basic: true, User: "alice", Password: "wonderland"}}, id, nil)
	if d.Status != 401 || d.Challenge != "" {
		t.Errorf("2.2: %d challenge %q", d.Status, d.Challenge)
	}
}
