package retire

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/internal/gen"
	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/authfile"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

func load(t *testing.T, conf string) *translate.Config {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docroot"), 0o755)
	p := filepath.Join(dir, "legacy.conf")
	os.WriteFile(p, []byte(strings.ReplaceAll(conf, "@DOCROOT@", filepath.Join(dir, "docroot"))), 0o644)
	cfg, err := translate.Load([]string{p}, translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: filepath.Join(dir, "docroot")}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// static is Static bounded in time: a loop that never ends (a mutant's,
// make mutate) fails at once instead of at the test's timeout.
func static(cfg *translate.Config) []Finding {
	done := make(chan []Finding, 1)
	go func() { done <- Static(cfg) }()
	select {
	case fs := <-done:
		return fs
	case <-time.After(10 * time.Second):
		panic("Static did not return within 10 s")
	}
}

func TestStatic(t *testing.T) {
	tests := []struct {
		name string
		conf string
		want []string // "kind line" of each finding
	}{
		{"covered by an earlier subnet", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\nAllow from 10.1.2.3 10.9.0.0/16\n</Directory>", []string{"never-decides 5"}},
		{"one word still decides", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\nAllow from 10.1.2.3 192.168.1.1\n</Directory>", nil},
		{"later subnet, broader", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.1.0.0/16\nAllow from 10.0.0.0/8\n</Directory>", nil},
		{"deny list under Allow from all", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from 203.0.113.0/24\nAllow from all\n</Directory>", []string{"never-decides 3"}},
		{"allow list under Deny from all", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from 10.0.0.0/8\nDeny from all\n</Directory>", []string{"never-decides 3"}},
		{"allow,deny with a real deny list", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\nDeny from 203.0.113.0/24\n</Directory>", nil},
		{"only for the methods it covers", "<Directory @DOCROOT@>\nOrder deny,allow\n<Limit POST>\nAllow from all\n</Limit>\nDeny from 203.0.113.0/24\n</Directory>", nil},
		{"an earlier word only for POST", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\n<Limit POST>\nAllow from 10.0.0.0/8\n</Limit>\nAllow from 10.1.2.3\n</Directory>", nil},
		{"a Deny that decides every GET", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\n<Limit POST>\nDeny from 203.0.113.0/24\n</Limit>\nDeny from 203.0.113.5\n</Directory>", nil},
		{"an earlier word for every method", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\n<Limit GET POST>\nAllow from 10.0.0.0/8\n</Limit>\n<Limit GET>\nAllow from 10.1.2.3\n</Limit>\n</Directory>", []string{"never-decides 8"}},
		{"mutual-failure without Allow", "<Directory @DOCROOT@>\nOrder mutual-failure\nDeny from 203.0.113.0/24\n</Directory>", []string{"never-decides 3"}},
		{"duplicate line", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from env=lan\nAllow from env=lan\n</Directory>", []string{"never-decides 5"}},
		{"duplicate env=! line", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from env=!lan\nAllow from env=!lan\n</Directory>", []string{"never-decides 5"}},
		{"env= and env=! of one name", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from env=lan\nAllow from env=!lan\n</Directory>", nil},
		{"env= of another name", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from env=lan\nAllow from env=vpn\n</Directory>", nil},
		{"host in an earlier domain", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from .example.com\nAllow from www.example.com\n</Directory>", []string{"never-decides 5"}},
		{"domain under an earlier host", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from www.example.com\nAllow from .example.com\n</Directory>", nil},
		{"env word under an earlier domain", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from .example.com\nAllow from env=www.example.com\n</Directory>", nil},
		{"duplicate subnet", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\nAllow from 10.0.0.0/8\n</Directory>", []string{"never-decides 5"}},
		{"Satisfy Any without a Require", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\nSatisfy Any\n</Directory>", nil},
		{"host after an env word", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from env=example.com\nAllow from www.example.com\n</Directory>", nil},
		{"Satisfy Any opens the password", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\nAuthType Basic\nAuthName x\nAuthUserFile /dev/null\nRequire valid-user\nSatisfy Any\n</Directory>", []string{"permissive 3"}},
		{"Satisfy All keeps it", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\nAuthType Basic\nAuthName x\nAuthUserFile /dev/null\nRequire valid-user\nSatisfy All\n</Directory>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range static(load(t, tt.conf)) {
				got = append(got, fmt.Sprintf("%s %d", f.Kind, f.Line))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
		})
	}
}

// No rule Static calls dead ever decides: 300 generated configurations
// (internal/gen, the random differential's generator), each with its
// requests and random clients, decided by the engine that counts
// decisive hits.
//
// The cases are independent, and mostly wait on the file system
// (materialising each configuration, the walk's stats), so they run on a
// few goroutines at once.
func TestStaticSound(t *testing.T) {
	dir := t.TempDir()
	s := sumOverConfigs(300, 4*runtime.GOMAXPROCS(0), func(n uint64) []int {
		d, c := staticSound(t, dir, n)
		return []int{d, c}
	})
	dead, checked := s[0], s[1]
	if dead < 20 || checked != dead {
		t.Errorf("%d dead rules found, %d checked: the test proves too little", dead, checked)
	}
	t.Logf("%d rules called dead across 300 configurations, none decided a request", dead)
}

// sumOverConfigs runs check on the generated configurations 0 to n-1,
// workers at a time, and sums the counts each returns.
func sumOverConfigs(n uint64, workers int, check func(n uint64) []int) []int {
	var (
		mu  sync.Mutex
		sum []int
		wg  sync.WaitGroup
	)
	next := make(chan uint64)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range next {
				c := check(n)
				mu.Lock()
				for len(sum) < len(c) {
					sum = append(sum, 0)
				}
				for i, v := range c {
					sum[i] += v
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return sum
}

// staticSound checks generated configuration n and returns how many rules
// Static called dead, and how many of those it checked.
func staticSound(t *testing.T, dir string, n uint64) (dead, checked int) {
	c := gen.Generate(rand.New(rand.NewPCG(41, n)))
	l, err := c.Materialize(filepath.Join(dir, fmt.Sprint(n)))
	if err != nil {
		t.Error(err)
		return
	}
	cfg, err := translate.Load([]string{l.Legacy}, caseLoadOptions(c, l, nil))
	if err != nil {
		t.Error(err)
		return
	}
	findings := Static(cfg)
	e := walk.New(cfg, walk.OS, authfile.NewIdentity())
	r := rand.New(rand.NewPCG(42, n))
	for _, rq := range c.Requests {
		for range 8 {
			ip := rq.ClientIP
			if ip == "" || r.IntN(2) == 0 {
				ip = netip.AddrFrom4([4]byte{[]byte{10, 192, 203, 127}[r.IntN(4)], byte(r.IntN(256)), byte(r.IntN(4)), byte(r.IntN(256))}).String()
			}
			h := http.Header{}
			for _, kv := range rq.Header {
				h.Add(kv[0], kv[1])
			}
			req := &walk.Request{Method: []string{rq.Method, "GET", "POST", "PUT", "DELETE"}[r.IntN(5)], Target: rq.Target, Host: h.Get("Host"), Proto: "HTTP/1.1",
				Header: h, ClientAddr: netip.MustParseAddr(ip), Now: time.Now().UnixNano(),
				Auth: policy.Credentials{Present: rq.HasAuth, Basic: rq.HasAuth, User: rq.User, Password: rq.Password}}
			e.Decide(req, nil)
		}
	}
	for _, f := range findings {
		if f.Kind != "never-decides" {
			continue
		}
		dead++
		for _, rule := range cfg.Rules {
			if rule.ID == f.RuleID {
				checked++
				if _, d, _ := rule.Stats(); d != 0 {
					b, _ := os.ReadFile(l.Legacy)
					t.Errorf("case %d: %s:%d %q called dead, decided %d requests\n%s", n, f.File, f.Line, f.Text, d, b)
				}
			}
		}
	}
	return dead, checked
}

func TestFromMetrics(t *testing.T) {
	cfg := load(t, "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8 172.16.0.0/12\nAllow from 192.168.0.0/16\n</Directory>")
	id := map[string]string{}
	for _, r := range cfg.Rules {
		id[r.Text] = r.ID
	}
	text := fmt.Sprintf(`# TYPE orderly_rule_matches_total counter
orderly_rule_matches_total{rule_id=%q} 7
orderly_rule_matches_total{rule_id=%q} 3
orderly_rule_matches_total{rule_id=%q} 0
# TYPE orderly_rule_decisive_hits_total counter
orderly_rule_decisive_hits_total{rule_id=%q} 0
orderly_rule_decisive_hits_total{rule_id=%q} 3
orderly_rule_decisive_hits_total{rule_id=%q} 0
# TYPE orderly_rule_part_matches_total counter
orderly_rule_part_matches_total{rule_id=%q,part="10.0.0.0/8"} 3
orderly_rule_part_matches_total{rule_id=%q,part="172.16.0.0/12"} 0
orderly_rule_part_matches_total{rule_id=%q,part="192.168.0.0/16"} 0
`, id["Deny from all"], id["Allow from 10.0.0.0/8 172.16.0.0/12"], id["Allow from 192.168.0.0/16"],
		id["Deny from all"], id["Allow from 10.0.0.0/8 172.16.0.0/12"], id["Allow from 192.168.0.0/16"],
		id["Allow from 10.0.0.0/8 172.16.0.0/12"], id["Allow from 10.0.0.0/8 172.16.0.0/12"], id["Allow from 192.168.0.0/16"])
	fs, err := FromMetrics(cfg.Rules, nil, strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Kind+" "+f.Text)
		if f.Kind == "part-not-matched" && !strings.Contains(f.Why, `"172.16.0.0/12"`) {
			t.Errorf("part finding names the wrong word: %s", f.Why)
		}
	}
	// The word 192.168.0.0/16 is at zero too, but its whole line is: that
	// is the line's finding, not the word's.
	if want := "not-decisive Deny from all,part-not-matched Allow from 10.0.0.0/8 172.16.0.0/12,not-fired Allow from 192.168.0.0/16"; strings.Join(got, ",") != want {
		t.Errorf("findings %v, want %s", got, want)
	}
	if _, err := FromMetrics(cfg.Rules, nil, strings.NewReader("# TYPE up gauge\nup 1\n")); err == nil {
		t.Error("a scrape without orderly's rule series was accepted")
	}
}

// Each finding says why, naming the line that makes it dead.
func TestStaticWhy(t *testing.T) {
	tests := []struct {
		name string
		conf string
		line int
		why  string // the end of Why, after the file name
	}{
		{"covered by an earlier line", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\nAllow from 10.1.2.3\n</Directory>", 5,
			`:4 ("Allow from 10.0.0.0/8") matches every request it matches, and comes first`},
		{"covered by an earlier env word", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from all\nAllow from env=lan\nAllow from env=lan\n</Directory>", 5,
			`:4 ("Allow from env=lan") matches every request it matches, and comes first`},
		{"deny,allow with Allow from all", "<Directory @DOCROOT@>\nOrder deny,allow\nDeny from 203.0.113.0/24\nAllow from all\n</Directory>", 3,
			`can never decide a request: under Order deny,allow an Allow that matches wins, and `},
		{"allow,deny with Deny from all", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from 10.0.0.0/8\nDeny from all\n</Directory>", 3,
			`can never decide a request: under Order allow,deny a Deny that matches wins, and `},
		{"mutual-failure with Deny from all", "<Directory @DOCROOT@>\nOrder mutual-failure\nAllow from 10.0.0.0/8\nDeny from all\n</Directory>", 3,
			`can never decide a request: under Order mutual-failure a Deny that matches wins, and `},
		{"mutual-failure without Allow", "<Directory @DOCROOT@>\nOrder mutual-failure\nDeny from 203.0.113.0/24\n</Directory>", 3,
			"can never decide a request: under Order mutual-failure a Deny only decides for a client an Allow matched, and there is no Allow"},
		{"Satisfy Any", "<Directory @DOCROOT@>\nOrder allow,deny\nAllow from all\nAuthType Basic\nAuthName x\nAuthUserFile /dev/null\nRequire valid-user\nSatisfy Any\n</Directory>", 3,
			"with Satisfy Any this lets everyone in, so the section's Require (a password) is never asked for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := static(load(t, tt.conf))
			if len(fs) != 1 || fs[0].Line != tt.line || fs[0].Severity != Warning {
				t.Fatalf("findings %+v, want one warning at line %d", fs, tt.line)
			}
			f := fs[0]
			if !strings.Contains(f.Why, tt.why) || !strings.HasSuffix(f.File, "legacy.conf") || f.RuleID == "" {
				t.Errorf("finding %+v, want why with %q", f, tt.why)
			}
			if strings.Contains(tt.why, " wins, and ") {
				// The line that wins names itself with its text.
				if !strings.Contains(f.Why, `("Allow from all") matches everyone`) && !strings.Contains(f.Why, `("Deny from all") matches everyone`) {
					t.Errorf("why %q names no line that matches everyone", f.Why)
				}
			}
		})
	}
}

// caseLoadOptions are the options a generated case loads with: the
// oracle's modules where it names some (mod_rewrite), as the
// differential tells orderly.
func caseLoadOptions(c *apachetest.Case, l apachetest.Layout, omit map[string]bool) translate.LoadOptions {
	opt := translate.LoadOptions{Options: translate.Options{Semantics: translate.Compat24, DocumentRoot: l.DocRoot, Omit: omit}}
	if len(c.Modules) > 0 {
		opt.Modules = l.OracleOptions().LoadedModules()
	}
	return opt
}
