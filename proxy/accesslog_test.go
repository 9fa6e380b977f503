package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// Every orderly refusal names the rule that decided it: in the access
// log (with the decision and the policy generation), in one more
// error-log line after Apache's own, and in the optional response header.
func TestDecidingRuleLogged(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "backend")
	}))
	defer backend.Close()
	cfg, root := privateDir(t, "Order deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n")
	var deny, allow string
	for _, r := range cfg.Rules {
		switch r.Text {
		case "Deny from all":
			deny = r.ID
		case "Allow from 10.0.0.0/8":
			allow = r.ID
		}
	}
	u, _ := url.Parse(backend.URL)
	var errlog, access bytes.Buffer
	h := New(Config{Backend: u, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		ErrorLog: &errlog, AccessLog: &access, RuleHeader: "X-Orderly-Rule"}, walk.New(cfg, walk.OS, NewIdentity()))
	front := httptest.NewServer(h)
	defer front.Close()
	do := func(xff, ua string) *http.Response {
		req, _ := http.NewRequest("GET", front.URL+"/private/a.txt?q=1", nil)
		req.Header.Set("X-Forwarded-For", xff)
		req.Header.Set("User-Agent", ua)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}

	resp := do("8.8.8.8", `curl "x"`)
	if resp.StatusCode != 403 || resp.Header.Get("X-Orderly-Rule") != deny {
		t.Errorf("refusal: %d, X-Orderly-Rule %q, want 403 and %s", resp.StatusCode, resp.Header.Get("X-Orderly-Rule"), deny)
	}
	if resp := do("10.1.2.3", "ua"); resp.StatusCode != 200 || resp.Header.Get("X-Orderly-Rule") != "" {
		t.Errorf("pass: %d, X-Orderly-Rule %q (only refusals carry it)", resp.StatusCode, resp.Header.Get("X-Orderly-Rule"))
	}
	h.SetEngine(walk.New(cfg, walk.OS, NewIdentity()))
	do("10.1.2.3", "ua")

	lines := strings.Split(strings.TrimSuffix(access.String(), "\n"), "\n")
	want := []*regexp.Regexp{
		regexp.MustCompile(`^8\.8\.8\.8 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [-+]\d{4}\] "GET /private/a\.txt\?q=1 HTTP/1\.1" 403 \d+ "-" "curl \\"x\\"" rule=` + deny + ` decision=deny generation=1 scope=default policy=legacy$`),
		regexp.MustCompile(`^10\.1\.2\.3 - - \[[^]]+\] "GET /private/a\.txt\?q=1 HTTP/1\.1" 200 7 "-" "ua" rule=` + allow + ` decision=allow generation=1 scope=default policy=legacy$`),
		regexp.MustCompile(` 200 7 "-" "ua" rule=` + allow + ` decision=allow generation=2 scope=default policy=legacy$`),
	}
	if len(lines) != len(want) {
		t.Fatalf("access log:\n%s", access.String())
	}
	for i, re := range want {
		if !re.MatchString(lines[i]) {
			t.Errorf("access log line %d:\n%s\nwant %s", i+1, lines[i], re)
		}
	}
	// Apache's line first, untouched; then orderly's.
	el := strings.Split(strings.TrimSuffix(errlog.String(), "\n"), "\n")
	if len(el) != 2 || !strings.HasSuffix(el[0], "AH01797: client denied by server configuration: "+root+"/private/a.txt") ||
		!strings.Contains(el[1], "[orderly:info]") || !strings.HasSuffix(el[1], "orderly refused (403) by rule "+deny+": legacy.conf:3: Deny from all") {
		t.Errorf("error log:\n%s", errlog.String())
	}
}

// privateDir loads a legacy configuration whose <Directory> docroot/private
// (holding a.txt) has the directives given, under 2.4-compat semantics.
func privateDir(t *testing.T, directives string) (*translate.Config, string) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "docroot")
	os.MkdirAll(filepath.Join(root, "private"), 0o755)
	os.WriteFile(filepath.Join(root, "private", "a.txt"), []byte("x"), 0o644)
	cf := filepath.Join(dir, "legacy.conf")
	os.WriteFile(cf, []byte("<Directory \""+root+"/private\">\n"+directives+"</Directory>\n"), 0o644)
	cfg, err := translate.Load([]string{cf}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: root}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, root
}

func TestAppendEscaped(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:       `plain`,
		`say "hi"\`:   `say \"hi\"\\`,
		"line\nbreak": `line\nbreak`,
		"tab\there":   `tab\there`,
		"bell\x07é":   `bell\x07\xc3\xa9`,
		"\x1b[31mred": `\x1b[31mred`,
	} {
		if got := string(appendEscaped(nil, in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
