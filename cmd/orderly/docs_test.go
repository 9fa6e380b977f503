package main

// The documentation's checks (docs/maintainers.md, "Documentation"):
// every ```hcl block of README.md and docs/*.md is a configuration
// orderly loads, docs/metrics.md lists exactly the orderly_* metrics a
// live /metrics serves, the metrics the ```promql blocks name exist, and
// every relative link points to a file (and heading) that exists.

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/orderly-proxy/orderly/proxy"
)

// docFiles are README.md and docs/*.md, relative to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	if len(files) < 10 {
		t.Fatalf("found %d documentation files, want README.md and docs/*.md", len(files))
	}
	return files
}

// display is a documentation file's name as a reader knows it.
func display(path string) string { return strings.TrimPrefix(path, "../../") }

// A fenced block of a Markdown file: its info string, its text with the
// fence's indentation removed, the line of its opening fence, and the
// marker comment on the line before it, if any (<!-- hcl: base -->).
type fence struct {
	lang, text, marker string
	line               int
}

var (
	fenceOpen   = regexp.MustCompile("^(\\s*)```([A-Za-z0-9_-]*)\\s*$")
	hclMarker   = regexp.MustCompile(`^\s*<!--\s*hcl:\s*([a-z]+)\s*-->\s*$`)
	metricName  = regexp.MustCompile(`\borderly_[a-z0-9_]+`)
	mdLink      = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	inlineCode  = regexp.MustCompile("`[^`]*`")
	tableMetric = regexp.MustCompile("^\\| `(orderly_[a-z0-9_]+)` \\|")
)

func fences(t *testing.T, path string) []fence {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []fence
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := m[1]
		f := fence{lang: m[2], line: i + 1}
		if i > 0 {
			if mk := hclMarker.FindStringSubmatch(lines[i-1]); mk != nil {
				f.marker = mk[1]
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: fence never closed", display(path), f.line)
		}
		f.text = strings.Join(body, "\n") + "\n"
		out = append(out, f)
	}
	return out
}

// docBaseHCL is what a "<!-- hcl: base -->" block is added to: the least
// configuration orderly loads.
const docBaseHCL = `listen = "127.0.0.1:8080"
backend "httpd" {
  url = "http://127.0.0.1:8081"
}
legacy {
  files = ["legacy.conf"]
}
`

// TestDocHCLBlocks: every ```hcl block of the README and docs/ is a
// configuration orderly's own loader (loadConfig: HCL decoding and every
// check of config.go) accepts. A block is, by the comment on the line
// before its fence:
//   - no comment: a whole orderly.hcl, loaded as it is;
//   - <!-- hcl: base -->: a part, loaded added to docBaseHCL;
//   - <!-- hcl: syntax -->: a fragment that is not a configuration on its
//     own, parsed as HCL syntax only.
//
// The files a block names by a relative path that the loader reads
// (token files, a certificate and key, a CA root) are made in a
// temporary directory beside it; the legacy files are not read by
// loadConfig (check reads them), so they need not exist.
func TestDocHCLBlocks(t *testing.T) {
	n := 0
	for _, path := range docFiles(t) {
		for _, f := range fences(t, path) {
			if f.lang != "hcl" {
				continue
			}
			n++
			where := display(path) + ":" + strconv.Itoa(f.line)
			switch f.marker {
			case "syntax":
				if _, diags := hclsyntax.ParseConfig([]byte(f.text), where, hcl.InitialPos); diags.HasErrors() {
					t.Errorf("%s: %v", where, diags)
				}
			case "base", "":
				text := f.text
				if f.marker == "base" {
					text = docBaseHCL + text
				}
				loadDocHCL(t, where, text)
			default:
				t.Errorf("%s: unknown marker <!-- hcl: %s --> (want base or syntax)", where, f.marker)
			}
		}
	}
	if n < 4 {
		t.Fatalf("found %d hcl blocks in the documentation, want at least 4: the check would prove little", n)
	}
}

// loadDocHCL writes text as orderly.hcl in a temporary directory, with
// the files it names that the loader reads, and loads it.
func loadDocHCL(t *testing.T, where, text string) {
	t.Helper()
	dir := t.TempDir()
	f, diags := hclsyntax.ParseConfig([]byte(text), where, hcl.InitialPos)
	if diags.HasErrors() {
		t.Errorf("%s: %v", where, diags)
		return
	}
	var certPEM, keyPEM []byte
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for name, a := range b.Attributes {
			v, d := a.Expr.Value(nil)
			if d.HasErrors() || !v.Type().Equals(cty.String) || v.IsNull() {
				continue
			}
			p := v.AsString()
			if filepath.IsAbs(p) {
				continue
			}
			var content []byte
			switch name {
			case "token_file", "guard_token_file":
				content = []byte("0123456789abcdef0123456789abcdef\n")
			case "cert_file", "key_file", "ca_root":
				if certPEM == nil {
					certPEM, keyPEM = selfSigned(t)
				}
				content = certPEM
				if name == "key_file" {
					content = keyPEM
				}
			default:
				continue
			}
			full := filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, content, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, blk := range b.Blocks {
			walk(blk.Body)
		}
	}
	walk(f.Body.(*hclsyntax.Body))
	hclPath := filepath.Join(dir, "orderly.hcl")
	if err := os.WriteFile(hclPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, diags := loadConfig(hclPath); diags.HasErrors() {
		for _, d := range diags {
			line := 0
			if d.Subject != nil {
				line = d.Subject.Start.Line
			}
			t.Errorf("%s: block line %d: %s: %s", where, line, d.Summary, d.Detail)
		}
	}
}

// selfSigned returns a certificate for www.example.com and its key, PEM.
func selfSigned(t *testing.T) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "www.example.com"},
		DNSNames: []string{"www.example.com"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// scrapeLive serves a real handler wired as serve wires it (a backend
// pool, scopes with a native policy shadowing the legacy one), sends it
// traffic that makes every labelled series exist (an Allow word that
// matches, disagreements, a reload), and returns the metric families of
// its GET /metrics.
func scrapeLive(t *testing.T) map[string]string {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(backend.Close)
	legacy := `<Directory @DIR@/docroot>
    Order allow,deny
    Allow from all
</Directory>
<Directory @DIR@/docroot/admin>
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
`
	native := "<Directory @DIR@/docroot>\n    Require all granted\n</Directory>\n"
	hclText := strings.Replace(goodHCL, "http://127.0.0.1:1", backend.URL, 1) + nativeSiteScope
	dir := writeFiles(t, map[string]string{"orderly.hcl": hclText, "legacy.conf": legacy, "native.conf": native,
		"docroot/index.html": "x", "docroot/admin/index.html": "x"})
	path := filepath.Join(dir, "orderly.hcl")
	rc, pols, ok := setup(path, io.Discard)
	if !ok {
		t.Fatal("setup failed")
	}
	u, _ := url.Parse(backend.URL)
	metrics := proxy.NewMetrics(pols.Rules)
	metrics.CountingSince(time.Now())
	metrics.Loaded(1, true)
	pool := proxy.NewPool(rc.Backends, rc.Health)
	h := proxy.NewWith(proxy.Config{Backend: u, Pool: pool, TrustedProxies: rc.TrustedProxies, Metrics: metrics}, pols)
	rl := &reloader{path: path, h: h, metrics: metrics, logger: slog.New(slog.NewTextHandler(io.Discard, nil)), rc: rc, generation: 1, loaded: time.Now()}
	for _, c := range []string{"8.8.8.8", "10.1.2.3"} {
		for _, target := range []string{"/admin/", "/"} {
			r := httptest.NewRequest("GET", target, nil)
			r.RemoteAddr = "127.0.0.1:40000"
			r.Header.Set("X-Forwarded-For", c)
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	if _, err := rl.reload(); err != nil {
		t.Fatalf("reload: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler()) // as serve does (main.go)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	fams := map[string]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			fams[f[2]] = f[3]
		}
	}
	if fams["orderly_requests_total"] == "" || fams["orderly_shadow_disagreements_total"] == "" || fams["go_goroutines"] == "" {
		t.Fatalf("the scrape lacks orderly's, or the Go collector's, metrics: %v", fams)
	}
	return fams
}

// TestDocMetrics: the metrics table of docs/metrics.md lists each
// orderly_* metric a live scrape has, once, and nothing else; every
// orderly_* name the page mentions is one the scrape has.
func TestDocMetrics(t *testing.T) {
	fams := scrapeLive(t)
	const page = "../../docs/metrics.md"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := tableMetric.FindStringSubmatch(line); m != nil {
			listed[m[1]]++
		}
	}
	if len(listed) < 20 {
		t.Fatalf("docs/metrics.md: %d metrics in its table; want the whole table", len(listed))
	}
	for name, n := range listed {
		if n > 1 {
			t.Errorf("docs/metrics.md lists %s %d times", name, n)
		}
		if fams[name] == "" {
			t.Errorf("docs/metrics.md lists %s, which a live /metrics does not have", name)
		}
	}
	var names []string
	for name := range fams {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasPrefix(name, "orderly_") && listed[name] == 0 {
			t.Errorf("%s (%s) is served on /metrics but not listed in docs/metrics.md", name, fams[name])
		}
	}
	for _, name := range metricName.FindAllString(string(b), -1) {
		if fams[name] == "" && fams[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")] == "" {
			t.Errorf("docs/metrics.md mentions %s, which a live /metrics does not have", name)
		}
	}
}

// TestDocPromQL: the orderly_* metrics the ```promql blocks of the README
// and docs/ name are served (deploy's TestReadmeQueries checks the
// README's labels too).
func TestDocPromQL(t *testing.T) {
	fams := scrapeLive(t)
	for _, path := range docFiles(t) {
		for _, f := range fences(t, path) {
			if f.lang != "promql" {
				continue
			}
			for _, name := range metricName.FindAllString(f.text, -1) {
				if fams[name] == "" {
					t.Errorf("%s:%d: the query names %s, which orderly does not serve", display(path), f.line, name)
				}
			}
		}
	}
}

// TestDocLinks: every relative link of the README and docs/ points to a
// file that exists and, with a #fragment into a Markdown file, to one of
// its headings (GitHub's anchors).
func TestDocLinks(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	n := 0
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				where := display(path) + ":" + strconv.Itoa(i+1)
				file, frag, _ := strings.Cut(target, "#")
				abs, _ := filepath.Abs(path)
				dest := abs
				if file != "" {
					dest = filepath.Join(filepath.Dir(abs), file)
				}
				rel, _ := filepath.Rel(repo, dest)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: %s does not exist", where, target, rel)
					continue
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if anchors[dest] == nil {
					anchors[dest] = headingAnchors(t, dest)
				}
				if !anchors[dest][frag] {
					t.Errorf("%s: link %s: %s has no heading #%s", where, target, rel, frag)
				}
			}
		}
	}
	if n < 30 {
		t.Fatalf("found %d relative links; want the README's and docs/'s", n)
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings:
// lower case, punctuation but - and _ dropped, spaces made -, a repeated
// anchor numbered -1, -2...
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var a strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				a.WriteRune(r)
			}
		}
		s := a.String()
		if k := seen[s]; k > 0 {
			out[s+"-"+strconv.Itoa(k)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}
