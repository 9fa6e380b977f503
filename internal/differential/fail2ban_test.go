package differential

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
)

// apacheAuthFilter is Debian fail2ban's stock filter for Apache's
// authentication and access failures (filter.d/apache-auth.conf, which
// reads the line prefix from apache-common.conf).
const apacheAuthFilter = "/etc/fail2ban/filter.d/apache-auth.conf"

// TestFail2banApacheAuth is issue #7 item 5: the error-log lines orderly
// writes for refusals keep fail2ban working. The same requests go to real
// Apache 2.4 with the legacy rules and to orderly (the binary) in front of
// a rule-less Apache; Debian's fail2ban-regex with the stock apache-auth
// filter then reads both error logs. Each failure comes from a client
// address of its own, so what fail2ban matched can be told apart per
// failure: AH01797 (Order/Allow/Deny), AH01630 (Require), AH01617 (wrong
// password) and AH01618 (unknown user) each match exactly once in both
// logs, for the right client; the requests that are not failures (a
// first 401 without credentials, a good password, an allowed address)
// match nothing in either; orderly's [orderly:info] lines (the deciding
// rule) match nothing.
func TestFail2banApacheAuth(t *testing.T) {
	paths := apachetest.Require(t)
	f2b := apachetest.RequireTool(t, "fail2ban-regex", "fail2ban")
	if _, err := os.Stat(apacheAuthFilter); err != nil {
		t.Fatalf("fail2ban-regex is installed but its stock filter is not: %v", err)
	}
	c, l := inlineCase(t, "fail2ban", `-- legacy.conf --
<Directory "@DOCROOT@/lan">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/staff">
    Require ip 10.0.0.0/8
</Directory>
<Directory "@DOCROOT@/private">
    AuthType Basic
    AuthName "private"
    AuthUserFile "@AUTH@/htpasswd"
    Require valid-user
</Directory>
-- docroot/lan/index.html --
lan
-- docroot/staff/index.html --
staff
-- docroot/private/index.html --
private
-- requests --
GET /lan/ 192.0.2.11 want=403
GET /lan/ 2001:db8::11 want=403
GET /staff/ 192.0.2.12 want=403
GET /private/ 192.0.2.13 u=alice:wrong want=401
GET /private/ 192.0.2.14 u=mallory:secret want=401
GET /private/ 192.0.2.15 want=401
GET /private/ 192.0.2.16 u=alice:secret want=200
GET /lan/ 10.1.2.3 want=200
GET /staff/ 10.1.2.4 want=200
`)
	// The password file is made by htpasswd from apache2-utils, as an
	// operator makes it; Apache and orderly read the same file.
	paths.AddUser(t, filepath.Join(l.Auth, "htpasswd"), "alice", "secret")
	// What each client's requests must leave in the log, as fail2ban sees
	// it: the Apache code of the one line it matches, "" for none.
	want := map[string]string{
		"192.0.2.11":   "AH01797",
		"2001:db8::11": "AH01797",
		"192.0.2.12":   "AH01630",
		"192.0.2.13":   "AH01617",
		"192.0.2.14":   "AH01618",
		"192.0.2.15":   "",
		"192.0.2.16":   "",
		"10.1.2.3":     "",
		"10.1.2.4":     "",
	}

	oracle := apachetest.Start(t, l.OracleOptions())
	backend := apachetest.Start(t, backendOptions(l))
	addr, stopOrderly := orderlyFront{}.start(t, l, backend.Addr)
	stop := sync.OnceFunc(stopOrderly)
	defer stop()
	oracleLog := filepath.Join(oracle.Dir, "error.log")
	oracleFrom := fileSize(oracleLog) // past Apache's start-up lines
	orderlyLog := filepath.Join(l.Dir, "orderly-error.log")
	for _, rq := range c.Requests {
		for _, s := range []struct{ name, addr string }{{"apache", oracle.Addr}, {"orderly", addr}} {
			r, err := apachetest.Do(s.addr, rq)
			if err != nil {
				t.Fatalf("%s: %s: %v", s.name, rq, err)
			}
			if !r.Matches(rq.Want) {
				t.Errorf("%s: %s: answered %d", s.name, rq, r.Status)
			}
		}
	}
	stop() // stopping writes every line orderly queued and closes the file
	apacheText := filepath.Join(l.Dir, "apache-error.log")
	if err := os.WriteFile(apacheText, []byte(readFrom(oracleLog, oracleFrom)), 0o644); err != nil {
		t.Fatal(err)
	}

	results := map[string]fail2banResult{}
	for _, s := range []struct{ name, log string }{{"apache", apacheText}, {"orderly", orderlyLog}} {
		res := runFail2ban(t, f2b, s.log)
		results[s.name] = res
		got := map[string][]string{}
		for _, m := range res.matched {
			got[m.client] = append(got[m.client], m.code)
		}
		for client, code := range want {
			switch {
			case code == "" && len(got[client]) > 0:
				t.Errorf("%s: fail2ban matched %v for %s, a request that is no failure", s.name, got[client], client)
			case code != "" && (len(got[client]) != 1 || got[client][0] != code):
				t.Errorf("%s: fail2ban matched %v for %s, want exactly [%s]", s.name, got[client], client, code)
			}
			delete(got, client)
		}
		for client, codes := range got {
			t.Errorf("%s: fail2ban matched %v for %s, a client that sent nothing", s.name, codes, client)
		}
		if t.Failed() {
			b, _ := os.ReadFile(s.log)
			t.Logf("%s error log:\n%s\nfail2ban-regex:\n%s", s.name, b, res.summary)
		}
	}
	a, o := results["apache"], results["orderly"]
	if a.matchedLines != o.matchedLines || o.matchedLines != 5 {
		t.Errorf("fail2ban-regex matched %d lines of Apache's log and %d of orderly's, want 5 in both", a.matchedLines, o.matchedLines)
	}
	// Every line orderly wrote that fail2ban missed is its own
	// [orderly:info] note, one per refusal orderly answered (the two
	// 401s without a log line included: no credentials, which Apache
	// does not log either, and none of the allowed requests).
	orderlyText, _ := os.ReadFile(orderlyLog)
	notes := strings.Count(string(orderlyText), "] [orderly:info] ")
	if o.lines != o.matchedLines+notes || o.ignored != 0 || notes != 6 {
		t.Errorf("orderly's log: %d lines, %d matched, %d ignored, %d [orderly:info] notes; want 5 matched and 6 notes, nothing else", o.lines, o.matchedLines, o.ignored, notes)
	}
	fmt.Printf("fail2ban: apache-auth matches %d/%d lines of Apache's error log and %d/%d of orderly's (the rest: %d [orderly:info] notes)\n",
		a.matchedLines, a.lines, o.matchedLines, o.lines, notes)
}

// fail2banResult is what fail2ban-regex reported for one log.
type fail2banResult struct {
	lines, ignored, matchedLines int
	matched                      []fail2banMatch
	summary                      string
}

type fail2banMatch struct{ client, code string }

var (
	fail2banLines = regexp.MustCompile(`(?m)^Lines: (\d+) lines, (\d+) ignored, (\d+) matched, (\d+) missed`)
	// An Apache 2.4 error-log line: the client and the code.
	errorLogClient = regexp.MustCompile(`\] \[client (\S+?)(?::\d+)?\] (AH\d+):`)
)

// runFail2ban runs fail2ban-regex with the stock apache-auth filter on a
// log twice: once for its summary (the "Lines:" count), once with
// "-o msg" for the lines its failregex matched, from which it takes each
// line's client (as the log writes it) and code.
func runFail2ban(t *testing.T, f2b, log string) fail2banResult {
	t.Helper()
	run := func(args ...string) string {
		cmd := exec.Command(f2b, append(args, log, apacheAuthFilter)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fail2ban-regex %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	var res fail2banResult
	res.summary = run("--print-no-missed")
	m := fail2banLines.FindStringSubmatch(res.summary)
	if m == nil {
		t.Fatalf("fail2ban-regex on %s: no \"Lines:\" summary in:\n%s", log, res.summary)
	}
	res.lines, _ = strconv.Atoi(m[1])
	res.ignored, _ = strconv.Atoi(m[2])
	res.matchedLines, _ = strconv.Atoi(m[3])
	for _, line := range strings.Split(strings.TrimSpace(run("-o", "msg")), "\n") {
		if line == "" {
			continue
		}
		cm := errorLogClient.FindStringSubmatch(line)
		if cm == nil {
			t.Errorf("fail2ban-regex matched a line that names no client and code: %s", line)
			continue
		}
		res.matched = append(res.matched, fail2banMatch{client: cm[1], code: cm[2]})
	}
	if len(res.matched) != res.matchedLines {
		t.Errorf("fail2ban-regex on %s: summary says %d matched, -o msg printed %d", log, res.matchedLines, len(res.matched))
	}
	return res
}
