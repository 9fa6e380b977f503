package walk

import (
	"net/http"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/digest"
	"github.com/orderly-proxy/orderly/translate"
)

// TestDigestScope: the innermost AuthDigest* lines over the module's
// defaults, the merged AuthName, and AuthDigestProvider's names resolved
// ("file" by default); scopes that authenticate alike share a key.
func TestDigestScope(t *testing.T) {
	str := func(s string) *string { return &s }
	e := &Engine{cfg: &translate.Config{ProviderAliases: map[string]*translate.ProviderAlias{
		"staff": {Name: "staff", Base: "file", Conf: &translate.DirConf{UserFile: str("/etc/staff")}},
	}}}
	lines := &translate.DigestDir{Lines: []translate.DigestLine{
		{Name: "AuthDigestNonceLifetime", Args: []string{"60"}},
		{Name: "AuthDigestProvider", Args: []string{"staff", "file"}},
		{Name: "AuthDigestDomain", Args: []string{"/a/", "/b/"}},
		{Name: "AuthDigestNcCheck", Args: []string{"On"}},
	}}
	a := accum{userFile: str("/etc/users"), digest: lines}
	l := &policy.Layers{AuthName: "Area", HasAuthName: true}
	s := e.digestScope(&a, l)
	cfg := s.Config.(*digest.Config)
	if cfg.AuthName != "Area" || !cfg.HasAuthName || cfg.NonceLifetime != 60*time.Second || !cfg.NcCheck || len(cfg.Domain) != 2 {
		t.Errorf("config %+v", cfg)
	}
	want := []policy.AuthnProvider{{Name: "staff", Kind: policy.ProviderFile, File: "/etc/staff"}, {Name: "file", Kind: policy.ProviderFile, File: "/etc/users"}}
	if len(s.Providers) != 2 || s.Providers[0] != want[0] || s.Providers[1] != want[1] {
		t.Errorf("providers %+v, want %+v", s.Providers, want)
	}
	def := e.digestScope(&accum{userFile: str("/etc/users")}, &policy.Layers{AuthName: "Area"})
	dc := def.Config.(*digest.Config)
	if dc.HasAuthName || dc.NonceLifetime != digest.DefaultNonceLifetime || dc.NcCheck {
		t.Errorf("defaults %+v", dc)
	}
	if len(def.Providers) != 1 || def.Providers[0] != (policy.AuthnProvider{Name: "file", Kind: policy.ProviderFile, File: "/etc/users"}) {
		t.Errorf("default providers %+v", def.Providers)
	}
	keys := map[string]string{}
	for name, sc := range map[string]*policy.DigestScope{
		"full":         s,
		"same again":   e.digestScope(&a, &policy.Layers{AuthName: "Area", HasAuthName: true}),
		"defaults":     def,
		"other realm":  e.digestScope(&a, &policy.Layers{AuthName: "Other", HasAuthName: true}),
		"no AuthName":  e.digestScope(&a, &policy.Layers{AuthName: "Area"}),
		"other file":   e.digestScope(&accum{userFile: str("/etc/other"), digest: lines}, l),
		"other option": e.digestScope(&accum{userFile: str("/etc/users"), digest: &translate.DigestDir{Lines: lines.Lines[:3]}}, l),
	} {
		keys[name] = sc.Key
	}
	if keys["full"] != keys["same again"] {
		t.Errorf("the same scope has two keys: %q %q", keys["full"], keys["same again"])
	}
	seen := map[string]string{}
	for name, k := range keys {
		if name == "same again" {
			continue
		}
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share the key %q", name, other, k)
		}
		seen[k] = name
	}
}

// TestDigestRequest: what Digest reads of a request, made once from the
// initial request.
func TestDigestRequest(t *testing.T) {
	for _, tc := range []struct {
		host       string
		tls        bool
		name       string
		port, dflt int
	}{
		{"WWW.Example.org", false, "www.example.org", 80, 80},
		{"www.example.org:8080", false, "www.example.org", 8080, 80},
		{"www.example.org:0", false, "www.example.org", 80, 80},
		{"www.example.org", true, "www.example.org", 443, 443},
		{"[::1]:8443", true, "::1", 8443, 443},
		{"", false, "", 80, 80},
		{"www.example.org:", false, "www.example.org", 80, 80},
		{"www.example.org:x", false, "www.example.org", 80, 80},
		{"www.example.org:-8", false, "www.example.org", 80, 80},
		{"A:b:8080", false, "a:b:8080", 80, 80},
		{":8080", false, "", 8080, 80},
	} {
		h := http.Header{}
		h.Add("Authorization", `Digest username="a"`)
		h.Add("Authorization", `realm="b"`)
		req := &Request{Method: "POST", Target: "/a%20b?q", Host: tc.host, TLS: tc.tls, Header: h, Now: 42}
		d := req.digestRequest("/a b")
		if d.ServerName != tc.name || d.ServerPort != tc.port || d.DefaultPort != tc.dflt {
			t.Errorf("%q: %q %d %d, want %q %d %d", tc.host, d.ServerName, d.ServerPort, d.DefaultPort, tc.name, tc.port, tc.dflt)
		}
		if d.Method != "POST" || d.URI != "/a%20b?q" || d.Path != "/a b" || d.Now != 42 || !d.HasAuthorization || d.Authorization != `Digest username="a", realm="b"` {
			t.Errorf("%q: %+v", tc.host, d)
		}
		if again := req.digestRequest("/index.html"); again != d || again.Path != "/a b" {
			t.Errorf("a subrequest made another: %+v", again)
		}
	}
	none := (&Request{Header: http.Header{}}).digestRequest("/")
	if none.HasAuthorization {
		t.Error("no Authorization field, yet HasAuthorization")
	}
	// A Host without a port, as most are, costs no allocation.
	req := &Request{Method: "GET", Target: "/", Host: "www.example.org", Header: http.Header{}}
	if n := testing.AllocsPerRun(100, func() {
		req.digestDone = false
		if d := req.digestRequest("/"); d.ServerPort != 80 {
			t.Fatal(d.ServerPort)
		}
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
