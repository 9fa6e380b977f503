package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// compose.yaml is checked by docker-compose itself (config validates it
// against the Compose schema), then each service's mounts are laid out in a
// temporary directory as the container would see them, and the real
// programs read them there: the orderly binary the Dockerfile builds, with
// its own configuration loader; promtool; Debian's Apache 2.4.

const composeFile = "compose.yaml"

type composeProject struct {
	Services map[string]composeService `json:"services"`
}

type composeService struct {
	Image string `json:"image"`
	Build *struct {
		Context, Dockerfile string
	} `json:"build"`
	Command   []string                   `json:"command"`
	Ports     []json.RawMessage          `json:"ports"`
	Volumes   []json.RawMessage          `json:"volumes"`
	ReadOnly  bool                       `json:"read_only"`
	CapDrop   []string                   `json:"cap_drop"`
	DependsOn map[string]json.RawMessage `json:"depends_on"`
	// StopGracePeriod is how long compose waits after SIGTERM before
	// SIGKILL ("" is 10s).
	StopGracePeriod string `json:"stop_grace_period"`
}

// imageVar is the variable that names orderly's image in compose.yaml (and
// kubernetes/kustomization.yaml's images: entry the same default:
// TestImageDefault in kubernetes/).
const imageVar = "ORDERLY_IMAGE"

// mount is a volume of a service: a bind mount of a host path, or a named
// volume.
type mount struct {
	source, target string
	bind, readOnly bool
}

// mounts reads a service's volumes in either form docker-compose config
// writes: "source:target[:mode]" (version 1) or the long form (version 2).
func (s composeService) mounts() ([]mount, error) {
	var out []mount
	for _, raw := range s.Volumes {
		var short string
		if json.Unmarshal(raw, &short) == nil {
			f := strings.Split(short, ":")
			if len(f) < 2 {
				return nil, fmt.Errorf("volume %q: want source:target", short)
			}
			m := mount{source: f[0], target: f[1], bind: filepath.IsAbs(f[0])}
			m.readOnly = len(f) > 2 && slices.Contains(strings.Split(f[2], ","), "ro")
			out = append(out, m)
			continue
		}
		var long struct {
			Type, Source, Target string
			ReadOnly             bool `json:"read_only"`
		}
		if err := json.Unmarshal(raw, &long); err != nil {
			return nil, fmt.Errorf("volume %s: %v", raw, err)
		}
		out = append(out, mount{source: long.Source, target: long.Target, bind: long.Type == "bind", readOnly: long.ReadOnly})
	}
	return out, nil
}

// containerPorts returns the container side of a service's ports.
func (s composeService) containerPorts() ([]int, error) {
	var out []int
	for _, raw := range s.Ports {
		var short string
		if json.Unmarshal(raw, &short) == nil {
			short, _, _ = strings.Cut(short, "/")
			n, err := strconv.Atoi(short[strings.LastIndexByte(short, ':')+1:])
			if err != nil {
				return nil, fmt.Errorf("port %q: %v", short, err)
			}
			out = append(out, n)
			continue
		}
		var long struct{ Target int }
		if err := json.Unmarshal(raw, &long); err != nil || long.Target == 0 {
			return nil, fmt.Errorf("port %s: no target", raw)
		}
		out = append(out, long.Target)
	}
	return out, nil
}

// yamlToJSON converts YAML to JSON with Python's yaml module, which
// docker-compose (Debian's, in Python) needs anyway: the server's module
// has no YAML library, and this test adds none.
func yamlToJSON(t *testing.T, y []byte) []byte {
	t.Helper()
	cmd := exec.Command("python3", "-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)")
	cmd.Stdin = bytes.NewReader(y)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := fmt.Sprintf("python3 with its yaml module (Debian package python3-yaml): %v\n%s", err, stderr.String())
		var missing *exec.Error
		if errors.As(err, &missing) || strings.Contains(stderr.String(), "No module named") {
			if apachetest.CI() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		t.Fatal(msg)
	}
	return out
}

// composeConfig runs docker-compose config, which validates compose.yaml
// and writes it out resolved (absolute paths, defaults filled in), and
// decodes what it wrote. env is added to the environment, from which
// imageVar is removed first.
func composeConfig(t *testing.T, env ...string) composeProject {
	t.Helper()
	tool := apachetest.RequireTool(t, "docker-compose", "docker-compose")
	cmd := exec.Command(tool, "-f", composeFile, "config")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, imageVar+"=") }), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker-compose -f %s config: %v\n%s", composeFile, err, stderr.String())
	}
	var p composeProject
	if err := json.Unmarshal(yamlToJSON(t, out), &p); err != nil {
		t.Fatalf("docker-compose config output: %v", err)
	}
	for _, name := range []string{"orderly", "httpd", "prometheus"} {
		if _, ok := p.Services[name]; !ok {
			t.Fatalf("%s has no service %s", composeFile, name)
		}
	}
	return p
}

// layOut copies a service's bind mounts under root, at their targets: the
// files as the container sees them.
func layOut(t *testing.T, root string, s composeService) []mount {
	t.Helper()
	ms, err := s.mounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		dst := filepath.Join(root, m.target)
		if !m.bind {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fi, err := os.Stat(m.source)
		if err != nil {
			t.Fatalf("mount %s -> %s: %v", m.source, m.target, err)
		}
		if fi.IsDir() {
			err = os.CopyFS(dst, os.DirFS(m.source))
		} else if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			var b []byte
			if b, err = os.ReadFile(m.source); err == nil {
				err = os.WriteFile(dst, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return ms
}

// mountOf returns the mount a container path is under.
func mountOf(ms []mount, p string) (mount, string, bool) {
	for _, m := range ms {
		if rel, err := filepath.Rel(m.target, p); err == nil && !strings.HasPrefix(rel, "..") {
			return m, rel, true
		}
	}
	return mount{}, "", false
}

// flagValue returns the value of -name in a command line.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func portOf(t *testing.T, what, hostport string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	n, err2 := strconv.Atoi(p)
	if err != nil || err2 != nil {
		t.Fatalf("%s %q: want host:port", what, hostport)
	}
	return n
}

// hclStrings reads the string attributes of an orderly.hcl, by dotted
// name, block labels included (listen, metrics.listen, backend.httpd.url,
// legacy.path_map./var/www/html).
func hclStrings(t *testing.T, file string) map[string]string {
	t.Helper()
	f, diags := hclparse.NewParser().ParseHCLFile(file)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	out := map[string]string{}
	var walk func(prefix string, b *hclsyntax.Body)
	walk = func(prefix string, b *hclsyntax.Body) {
		for name, a := range b.Attributes {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				continue // env(...) and the like
			}
			switch {
			case v.Type() == cty.String:
				out[prefix+name] = v.AsString()
			case v.Type().IsObjectType() || v.Type().IsMapType():
				for k, e := range v.AsValueMap() {
					if e.Type() == cty.String {
						out[prefix+name+"."+k] = e.AsString()
					}
				}
			}
		}
		for _, bl := range b.Blocks {
			walk(prefix+strings.Join(append([]string{bl.Type}, bl.Labels...), ".")+".", bl.Body)
		}
	}
	walk("", f.Body.(*hclsyntax.Body))
	return out
}

// TestCompose: the services and how they are built and hardened.
func TestCompose(t *testing.T) {
	p := composeConfig(t)
	o := p.Services["orderly"]
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if o.Build == nil || o.Build.Context != root || (o.Build.Dockerfile != "" && o.Build.Dockerfile != "Dockerfile") {
		t.Errorf("orderly is not built from the repository's Dockerfile: build %+v", o.Build)
	}
	stages, _ := readDockerfile(t)
	var cmd []string
	for _, c := range stages[len(stages)-1].all("CMD") {
		cmd = jsonArray(c.args)
	}
	if len(o.Command) > 0 && !slices.Equal(o.Command, cmd) {
		t.Errorf("orderly's command %q differs from the image's CMD %q", o.Command, cmd)
	}
	if !o.ReadOnly {
		t.Error("orderly's root file system is writable (read_only: true)")
	}
	if !slices.Contains(o.CapDrop, "ALL") {
		t.Errorf("orderly keeps capabilities: cap_drop %q", o.CapDrop)
	}
	if _, ok := o.DependsOn["httpd"]; !ok {
		t.Error("orderly does not depend on httpd")
	}
	if h := p.Services["httpd"]; h.Image != "httpd:2.4" || len(h.Ports) > 0 {
		t.Errorf("httpd: image %q, ports %s: want httpd:2.4 reachable only through orderly", h.Image, h.Ports)
	}
	if pr := p.Services["prometheus"]; !strings.HasPrefix(pr.Image, "prom/prometheus:") {
		t.Errorf("prometheus: image %q", pr.Image)
	}
}

// composeImageDefault matches orderly's image in compose.yaml as written.
var composeImageDefault = regexp.MustCompile(`(?m)^\s*image:\s*\$\{` + imageVar + `:-([^}\s]+)\}\s*$`)

// TestComposeImage: orderly's image is ${ORDERLY_IMAGE:-default}: the
// default without the variable, the variable's value with it.
func TestComposeImage(t *testing.T) {
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	m := composeImageDefault.FindAllStringSubmatch(string(b), -1)
	if len(m) != 1 {
		t.Fatalf("%s: %d images of the form ${%s:-default}, want orderly's", composeFile, len(m), imageVar)
	}
	def := m[0][1]
	if got := composeConfig(t).Services["orderly"].Image; got != def {
		t.Errorf("without %s, orderly's image is %q, want %q", imageVar, got, def)
	}
	const mine = "registry.example.com/orderly:1.2.3"
	if got := composeConfig(t, imageVar+"="+mine).Services["orderly"].Image; got != mine {
		t.Errorf("with %s=%s, orderly's image is %q", imageVar, mine, got)
	}
}

// TestComposeStopGrace: compose waits longer after SIGTERM than orderly's
// shutdown_grace, so that orderly drains before the SIGKILL.
func TestComposeStopGrace(t *testing.T) {
	p := composeConfig(t)
	grace := shutdownGrace(t, "compose/orderly.hcl")
	v := p.Services["orderly"].StopGracePeriod
	if v == "" {
		v = "10s" // compose's default
	}
	stop, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("orderly's stop_grace_period %q: %v", v, err)
	}
	t.Logf("compose/orderly.hcl shutdown_grace %s; stop_grace_period %s", grace, stop)
	if stop <= grace {
		t.Errorf("orderly's stop_grace_period %s is not above its shutdown_grace %s: compose kills it mid-drain", stop, grace)
	}
}

// TestComposeOrderlyConfig loads orderly's configuration, with the files
// compose mounts, in the binary the Dockerfile builds, decides requests
// with it, and checks that it agrees with the other services: the backend
// it names, the document root it walks (the one httpd serves), the ports
// Prometheus scrapes and the image exposes.
func TestComposeOrderlyConfig(t *testing.T) {
	p := composeConfig(t)
	bin := orderlyBinary(t)
	o := p.Services["orderly"]
	root := t.TempDir()
	ms := layOut(t, root, o)
	config := flagValue(o.Command, "-config")
	if config == "" {
		t.Fatalf("orderly's command %q has no -config", o.Command)
	}
	if m, _, ok := mountOf(ms, config); !ok || !m.readOnly {
		t.Errorf("%s is not on a read-only mount", config)
	}
	hclFile := filepath.Join(root, config)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ip", "203.0.113.50", "http://localhost/"}, "decision: ALLOW"},
		{[]string{"-ip", "192.0.2.7", "http://localhost/admin/"}, "decision: ALLOW"},
		{[]string{"-ip", "203.0.113.50", "http://localhost/admin/"}, "decision: DENY 403"},
		{[]string{"-ip", "192.0.2.7", "http://localhost/backup.sql"}, "decision: DENY 403"},
		{[]string{"-ip", "203.0.113.50", "-header", "Referer: http://www.example.com/", "http://localhost/images/logo.gif"}, "decision: ALLOW"},
		{[]string{"-ip", "203.0.113.50", "http://localhost/images/logo.gif"}, "decision: DENY 403"},
	} {
		args := append([]string{"explain", "-config", hclFile}, tc.args...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want+" ") {
			t.Errorf("orderly %s: %v; want %q\n%s", strings.Join(tc.args, " "), err, tc.want, out)
		}
	}

	cfg := hclStrings(t, hclFile)
	stages, _ := readDockerfile(t)
	var exposed []string
	for _, e := range stages[len(stages)-1].all("EXPOSE") {
		exposed = append(exposed, strings.Fields(e.args)...)
	}
	published, err := o.containerPorts()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"listen", "metrics.listen"} {
		port := portOf(t, k, cfg[k])
		if !slices.Contains(exposed, strconv.Itoa(port)) {
			t.Errorf("%s port %d is not one the Dockerfile EXPOSEs (%q)", k, port, exposed)
		}
		if !slices.Contains(published, port) {
			t.Errorf("%s port %d is not published (ports %d)", k, port, published)
		}
	}

	// The backend is the httpd service, on the port its configuration
	// listens on.
	u, err := url.Parse(cfg["backend.httpd.url"])
	if err != nil || u.Hostname() != "httpd" {
		t.Fatalf("backend url %q: want the httpd service", cfg["backend.httpd.url"])
	}
	h := p.Services["httpd"]
	hms, err := h.mounts()
	if err != nil {
		t.Fatal(err)
	}
	conf, ok := backendConf(t, hms)
	if !ok {
		t.Fatal("httpd does not mount compose/httpd.conf")
	}
	if listen := directive(conf, "Listen"); u.Port() != listen {
		t.Errorf("backend url port %s, httpd Listen %s", u.Port(), listen)
	}

	// path_map: orderly reads, where it is mounted for it, the directory
	// httpd serves at the path the legacy rules name.
	var mapped int
	for k, v := range cfg {
		legacyPath, ok := strings.CutPrefix(k, "legacy.path_map.")
		if !ok {
			continue
		}
		mapped++
		if !path.IsAbs(v) {
			v = path.Join(path.Dir(config), v)
		}
		om, orel, ok1 := mountOf(ms, v)
		hm, hrel, ok2 := mountOf(hms, legacyPath)
		if !ok1 || !ok2 || om.source != hm.source || orel != hrel {
			t.Errorf("path_map %s = %s: orderly reads %s, httpd serves %s: not the same files", legacyPath, v, filepath.Join(om.source, orel), filepath.Join(hm.source, hrel))
		}
		if dr := strings.Trim(directive(conf, "DocumentRoot"), `"`); dr != legacyPath {
			t.Errorf("path_map maps %s, httpd's DocumentRoot is %s", legacyPath, dr)
		}
	}
	if mapped == 0 {
		t.Error("no legacy.path_map: orderly would walk a document root httpd does not serve")
	}

	// Prometheus scrapes the metrics listener as job "orderly", the job
	// the rules' OrderlyDown expects.
	pr := p.Services["prometheus"]
	pms, err := pr.mounts()
	if err != nil {
		t.Fatal(err)
	}
	promConf := flagValue(pr.Command, "--config.file")
	pm, rel, ok := mountOf(pms, promConf)
	if !ok {
		t.Fatalf("prometheus: --config.file %s is not mounted", promConf)
	}
	var prom struct {
		ScrapeConfigs []struct {
			JobName       string `json:"job_name"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	b, err := os.ReadFile(filepath.Join(pm.source, rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(yamlToJSON(t, b), &prom); err != nil {
		t.Fatal(err)
	}
	want := net.JoinHostPort("orderly", strconv.Itoa(portOf(t, "metrics.listen", cfg["metrics.listen"])))
	var found bool
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			if sc.JobName == "orderly" && slices.Contains(st.Targets, want) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("prometheus.yml has no job orderly scraping %s", want)
	}
}

// backendConf returns the httpd.conf the httpd service mounts at the
// image's configuration path.
func backendConf(t *testing.T, ms []mount) (string, bool) {
	t.Helper()
	for _, m := range ms {
		if m.target == "/usr/local/apache2/conf/httpd.conf" {
			b, err := os.ReadFile(m.source)
			if err != nil {
				t.Fatal(err)
			}
			return string(b), true
		}
	}
	return "", false
}

// directive returns the argument of the first top-level-looking line
// "Name arg" in an Apache configuration.
func directive(conf, name string) string {
	m := regexp.MustCompile(`(?m)^\s*` + name + `\s+(\S+)`).FindStringSubmatch(conf)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestComposePrometheus: promtool checks prometheus.yml with the files
// compose mounts beside it, so the rule file it names must be there.
func TestComposePrometheus(t *testing.T) {
	p := composeConfig(t)
	tool := apachetest.RequireTool(t, "promtool", "prometheus")
	pr := p.Services["prometheus"]
	root := t.TempDir()
	ms := layOut(t, root, pr)
	promConf := flagValue(pr.Command, "--config.file")
	if promConf == "" {
		t.Fatalf("prometheus: no --config.file in %q", pr.Command)
	}
	out, err := exec.Command(tool, "check", "config", filepath.Join(root, promConf)).CombinedOutput()
	t.Logf("promtool check config:\n%s", out)
	if err != nil {
		t.Fatalf("promtool check config: %v", err)
	}
	if !regexp.MustCompile(`SUCCESS: [1-9]\d* rule files? found`).Match(out) {
		t.Error("prometheus.yml loads no rule file")
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ms, func(m mount) bool { return m.source == rules }) {
		t.Errorf("prometheus does not mount %s", rulesFile)
	}
}

var accessDirective = regexp.MustCompile(`(?mi)^\s*(Require|Order|Allow|Deny|Satisfy|AuthType)\s`)

// TestComposeBackend: Debian's Apache 2.4 accepts the backend's
// configuration (apache2 -t, with Debian's modules standing for the
// image's), and it has no access rules of its own.
func TestComposeBackend(t *testing.T) {
	p := composeConfig(t)
	ap := apachetest.Require(t)
	ms, err := p.Services["httpd"].mounts()
	if err != nil {
		t.Fatal(err)
	}
	conf, ok := backendConf(t, ms)
	if !ok {
		t.Fatal("httpd does not mount its configuration at /usr/local/apache2/conf/httpd.conf")
	}
	if m := accessDirective.FindString(conf); m != "" {
		t.Errorf("the backend's configuration has access rules (%q): orderly enforces them", strings.TrimSpace(m))
	}
	var src string
	for _, m := range ms {
		if m.target == "/usr/local/apache2/conf/httpd.conf" {
			src = m.source
		}
	}
	// -d: Debian's modules/ stands for the image's ServerRoot's.
	out, err := exec.Command(ap.Apache, "-d", filepath.Dir(ap.ModulesDir), "-f", src, "-t").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Syntax OK") {
		t.Errorf("apache2 -t -f %s: %v\n%s", src, err, out)
	}
}
