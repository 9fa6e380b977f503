package differential

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestAdminPageInChromium loads the admin page of a running orderly in
// headless Chromium (Debian's) during a cutover — a scope moved to the
// native policy, a legacy rule demoted, traffic that disagrees — and
// checks what it shows after its script ran: the scopes with mode and
// share, every rule with counters and a verdict, filtered and sorted as
// the address asks, and the latest disagreements with both trails. It
// saves a screenshot (ORDERLY_ARTIFACTS, or the test's directory).
func TestAdminPageInChromium(t *testing.T) {
	apachetest.Require(t)
	chromium := apachetest.RequireTool(t, "chromium", "chromium")
	_, l := inlineCase(t, "admin", scopesCase)
	native := filepath.Join(l.Extra, "native.conf")
	backend := apachetest.Start(t, apachetest.Options{DocumentRoot: l.DocRoot, Include: []string{native}, RemoteIP: true})
	metrics, admin := freePort(t), freePort(t)
	front := orderlyFront{metrics: metrics, admin: admin, extra: fmt.Sprintf(`native {
  files = [%q]
}
scope "admin" {
  path            = "/admin"
  enforce         = "native"
  shadow          = "legacy"
  enforce_percent = 100
}
`, native)}
	addr, stop := front.start(t, l, backend.Addr)
	defer stop()
	for _, ip := range []string{"10.1.2.3", "10.1.2.4", "172.16.5.5", "192.168.1.1", "192.168.1.2", "192.168.1.3"} {
		if _, err := apachetest.Do(addr, apachetest.Request{Method: "GET", Target: "/admin/", ClientIP: ip}); err != nil {
			t.Fatal(err)
		}
	}
	text := scrapeMetrics(t, metrics)
	deny, order := ruleID(t, text, "Deny from all"), ruleID(t, text, "Order deny,allow")
	// Demote the Order line (deny,allow is the default: deleting it
	// changes nothing), by a reload.
	writeFrontConfig(t, front, l, backend.Addr, addr, func(hcl string) string {
		return strings.Replace(hcl, `semantics     = "2.4-compat"`, `semantics     = "2.4-compat"
  demote        = ["`+order+`"]`, 1)
	})
	reload(t, admin)

	// Filter on "legacy.conf".
	dom := runChromium(t, chromium, "--dump-dom", "http://"+admin+"/#q=legacy.conf")
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	if g := nodeText(doc, "generation"); g != "2" {
		t.Errorf("generation %q, want 2 after the reload", g)
	}
	scopes := tableRows(doc, "scopes")
	if len(scopes) != 2 || strings.Join(scopes[0][:7], "|") != "admin|any|/admin|enforce|native|legacy|100%" ||
		strings.Join(scopes[1][:7], "|") != "default|any|any|enforce|legacy|none|100%" {
		t.Errorf("scopes table: %q", scopes)
	}
	if got := scopes[0][7]; got != "6" {
		t.Errorf("scope admin: %s requests in the last hour, want 6", got)
	}
	var rules, visible [][]string
	for _, r := range tableRows(doc, "rules") {
		if len(r) < 9 {
			continue // a section's title row, or the fold of its settings
		}
		rules = append(rules, r)
		if r[len(r)-1] != "hidden" {
			visible = append(visible, r)
		}
	}
	// legacy.conf's Deny, Allow and the section's default show; its Order
	// line is a setting, folded into the section; native.conf's rules and
	// the built-in default are filtered out.
	if len(rules) < 6 || len(visible) != 3 {
		t.Fatalf("%d rules, %d shown after filtering on legacy.conf:\n%q", len(rules), len(visible), rules)
	}
	for _, r := range visible {
		if !strings.HasPrefix(r[1], "legacy.conf:") {
			t.Errorf("filtered on legacy.conf, shows %q", r)
		}
	}
	// Deny from all matched every request (legacy is evaluated beside
	// native on each), would have decided the three it refuses, and was
	// necessary to them: needed.
	found := false
	for _, r := range rules {
		if strings.HasPrefix(r[0], order) && (r[7] != "demoted" || r[2] != "Order deny,allow" || r[len(r)-1] != "hidden") {
			t.Errorf("the demoted Order line, a folded setting: %q", r)
		}
		if strings.HasPrefix(r[0], deny) {
			found = true
			if r[2] != "Deny from all" || r[3] != "6" || r[4] != "3" || r[5] != "3" || r[6] == "never" || r[7] != "needed" || r[8] != "explain" {
				t.Errorf("Deny from all row: %q", r)
			}
		}
	}
	if !found {
		t.Errorf("no row for rule %s", deny)
	}
	dis := tableRows(doc, "disagreements")
	// 172.16.5.5 newly denied; three of 192.168/16 newly allowed, by the
	// same rule: two groups.
	if len(dis) != 2 {
		t.Fatalf("disagreements: %q", dis)
	}
	for _, r := range dis {
		if r[0] != "admin" || r[1] != "policy" || !strings.Contains(r[8], "native: ") || !strings.Contains(r[8], "legacy: ") {
			t.Errorf("disagreement row: %q", r)
		}
		if r[2] == "would_newly_allow" && (r[3] != deny || r[4] != "3") {
			t.Errorf("the newly allowed requests are not three under Deny from all (%s): %q", deny, r)
		}
	}
	if s := nodeText(doc, "summary-disagreements"); s != "4 disagreements in the last hour" {
		t.Errorf("summary: %q", s)
	}

	dir := os.Getenv("ORDERLY_ARTIFACTS")
	if dir == "" {
		dir = l.Dir
	}
	os.MkdirAll(dir, 0o755)
	shot := filepath.Join(dir, "admin-page.png")
	runChromium(t, chromium, "--screenshot="+shot, "--window-size=1400,1100", "http://"+admin+"/")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	if b.Dx() != 1400 || len(colours) < 8 {
		t.Errorf("screenshot %v with %d colours: not the page", b, len(colours))
	}
	t.Logf("screenshot: %s", shot)
}

// runChromium runs headless Chromium on one page with no network beyond
// it and returns what it printed.
func runChromium(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=3000"}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// tableRows returns the text of each body row's cells of the table with
// the id, and "hidden" as a last cell when the row is hidden.
func tableRows(doc *html.Node, id string) [][]string {
	var table *html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "table" && attr(n, "id") == id {
			table = n
		}
		for c := n.FirstChild; c != nil && table == nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if table == nil {
		return nil
	}
	var rows [][]string
	var walk func(*html.Node, bool)
	walk = func(n *html.Node, inBody bool) {
		if n.Type == html.ElementNode && n.Data == "tbody" {
			inBody = true
		}
		if inBody && n.Type == html.ElementNode && n.Data == "tr" {
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "td" {
					cells = append(cells, strings.Join(strings.Fields(text(c)), " "))
				}
			}
			if hasAttr(n, "hidden") {
				cells = append(cells, "hidden")
			}
			rows = append(rows, cells)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(table, false)
	return rows
}

// nodeText is the text of the element with the id.
func nodeText(doc *html.Node, id string) string {
	var out string
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && attr(n, "id") == id {
			out = strings.TrimSpace(text(n))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	return out
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
		b.WriteByte(' ')
	}
	return b.String()
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}
