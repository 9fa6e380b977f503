package differential

import (
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// TestAdminPageDuringCutover runs `make demo-cutover` (scripts/
// demo-cutover.sh, with its own ports and directory) with DEMO_SNAPSHOTS,
// so that headless Chromium draws the admin page at three moments: in
// shadow with the draft's disagreements, after the fix, and with the
// native policy enforced for 50% of clients. It checks what each shows
// and keeps the screenshots and the DOMs (ORDERLY_ARTIFACTS, or the
// test's directory).
func TestAdminPageDuringCutover(t *testing.T) {
	apachetest.Require(t)
	apachetest.RequireTool(t, "chromium", "chromium")
	dir := os.Getenv("ORDERLY_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	shots := filepath.Join(dir, "cutover")
	os.RemoveAll(shots)
	// Apache's workers (www-data) read the demo's document root: not
	// under t.TempDir, which only its owner may enter.
	demo, err := os.MkdirTemp("", "orderly-cutover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(demo) })
	if err := os.Chmod(demo, 0o755); err != nil {
		t.Fatal(err)
	}
	port := func() string { return strings.TrimPrefix(freePort(t), "127.0.0.1:") }
	cmd := exec.Command("scripts/demo-cutover.sh")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "DEMO_DIR="+demo, "DEMO_SNAPSHOTS="+shots,
		"DEMO_PORT="+port(), "DEMO_BACKEND_PORT="+port(), "DEMO_METRICS_PORT="+port(), "DEMO_ADMIN_PORT="+port())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo-cutover: %v\n%s", err, out)
	}
	page := func(name string) *html.Node {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(shots, name+".html"))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	hourly := regexp.MustCompile(`^(\d+) disagreements in the last hour$`)

	// 1. Shadow: the draft newly allows /backup.sql, against the backend
	// and against the legacy policy, 41 times each (one a client, and the
	// request the demo shows).
	shadow := page("1-shadow")
	if g := nodeText(shadow, "generation"); g != "1" {
		t.Errorf("shadow: generation %q", g)
	}
	m := hourly.FindStringSubmatch(nodeText(shadow, "summary-disagreements"))
	if m == nil || m[1] == "0" {
		t.Errorf("shadow: summary %q, want disagreements", nodeText(shadow, "summary-disagreements"))
	}
	if s := nodeText(shadow, "summary-rollout"); !strings.Contains(s, "site: shadow, nothing enforced") {
		t.Errorf("shadow: rollout %q", s)
	}
	scope := tableRows(shadow, "scopes")
	if len(scope) != 1 || scope[0][3] != "shadow" || scope[0][6] != "0% (shadow)" || scope[0][8] != m[1] {
		t.Errorf("shadow: scopes %q", scope)
	}
	groups := tableRows(shadow, "disagreements")
	against := map[string]bool{}
	for _, g := range groups {
		against[g[1]] = true
		if g[0] != "site" || g[2] != "would_newly_allow" || g[4] != "41" || g[7] != "1" || !strings.Contains(g[8], "GET /backup.sql") {
			t.Errorf("shadow: disagreement group %q", g)
		}
	}
	if len(groups) != 2 || !against["backend"] || !against["policy"] {
		t.Errorf("shadow: disagreement groups %q, want one against the backend and one against legacy", groups)
	}
	verdicts := ruleVerdicts(shadow)
	// The Satisfy Any section's Deny from all: necessary to the 401s.
	if v := verdicts["legacy.conf:27 Deny from all"]; v != "needed" {
		t.Errorf("shadow: legacy.conf:27 Deny from all is %q, want needed", v)
	}
	if v := verdicts["legacy.conf:41 Deny from all"]; v != "can go" {
		t.Errorf("shadow: legacy.conf:41 Deny from all (<FilesMatch> with Order allow,deny) is %q, want can go", v)
	}
	if !strings.Contains(nodeText(shadow, "summary-retire"), "1 rules can go") {
		t.Errorf("shadow: retire summary %q", nodeText(shadow, "summary-retire"))
	}

	// 2. After the fix: a new generation, and no new disagreement: the
	// groups are the same, with the same last times.
	fixed := page("2-fixed")
	if g := nodeText(fixed, "generation"); g != "2" {
		t.Errorf("fixed: generation %q", g)
	}
	if got := tableRows(fixed, "disagreements"); strings.Join(flat(got), "|") != strings.Join(flat(groups), "|") {
		t.Errorf("fixed: the disagreements changed after the fix:\n%q\nwas\n%q", got, groups)
	}
	if s := nodeText(fixed, "summary-disagreements"); s != nodeText(shadow, "summary-disagreements") {
		t.Errorf("fixed: summary %q, was %q", s, nodeText(shadow, "summary-disagreements"))
	}
	fscope := tableRows(fixed, "scopes")
	if len(fscope) != 1 || atoi(t, fscope[0][7]) <= atoi(t, scope[0][7]) {
		t.Errorf("fixed: scopes %q: the requests of the last hour did not grow (were %s)", fscope, scope[0][7])
	}

	// 3. The rollout at 50%: enforced, half of the clients on native.
	half := page("3-rollout-50")
	if g := nodeText(half, "generation"); g != "4" {
		t.Errorf("rollout: generation %q, want 4 (shadow, fix, 10%%, 50%%)", g)
	}
	hs := tableRows(half, "scopes")
	if len(hs) != 1 || hs[0][3] != "enforce" || hs[0][4] != "native" || hs[0][5] != "legacy" || hs[0][6] != "50%" {
		t.Errorf("rollout: scopes %q", hs)
	}
	if s := nodeText(half, "summary-rollout"); s != "site: native enforced for 50% of clients, legacy for the rest" {
		t.Errorf("rollout: %q", s)
	}
	if got := tableRows(half, "disagreements"); strings.Join(flat(got), "|") != strings.Join(flat(groups), "|") {
		t.Errorf("rollout: new disagreements:\n%q", got)
	}
	if v := ruleVerdicts(half)["legacy.conf:41 Deny from all"]; v != "can go" {
		t.Errorf("rollout: legacy.conf:41 Deny from all is %q, want can go", v)
	}

	for _, name := range []string{"1-shadow", "2-fixed", "3-rollout-50"} {
		f, err := os.Open(filepath.Join(shots, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		// The disagreements' red (#d93025) in the hour's bars and the
		// verdicts' colours are drawn: the page, not a blank or an error.
		red := false
		b := img.Bounds()
		for y := b.Min.Y; y < b.Max.Y && !red; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if r>>8 == 0xd9 && g>>8 == 0x30 && bl>>8 == 0x25 {
					red = true
					break
				}
			}
		}
		if b.Dx() != 1400 || !red {
			t.Errorf("%s.png: %v, disagreement bars drawn: %v", name, b, red)
		}
	}
	t.Logf("screenshots and DOMs: %s", shots)
}

// ruleVerdicts maps "file:line directive" to the verdict the rules table
// shows.
func ruleVerdicts(doc *html.Node) map[string]string {
	out := map[string]string{}
	for _, r := range tableRows(doc, "rules") {
		if len(r) >= 9 {
			out[r[1]+" "+r[2]] = r[7]
		}
	}
	return out
}

func flat(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, strings.Join(r, ";"))
	}
	return out
}
