// Package decisiontable is the access-decision table: Order, which of
// Allow and Deny match the client, Satisfy (for the whole section or in
// <Limit GET>), Require valid-user and the credentials sent, by method.
// Its 2.4 column is what Apache 2.4 answers with mod_access_compat
// (internal/differential's TestDecisionTable replays every row on real
// Apache and rewrites the column with -update-table); its 2.2 column is
// orderly's Apache 2.2 model, held to the 2.4 column except where
// apache-access-semantics.md documents a difference (Differs22). Package
// policy's tests decide every row (policy/decisiontable_test.go).
package decisiontable

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy/authfile"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// A Config is one <Directory> section of the table.
type Config struct {
	Order   string // "allow,deny", "deny,allow" or "mutual-failure"
	Satisfy string // "", "all" or "any"
	InLimit bool   // Satisfy inside <Limit GET> (only GET's is set)
	Require string // "" none, else what follows "Require" (AuthType Basic)
	DenyAll bool   // Deny from all, else Deny from two ranges
}

// Name is the configuration's key in the table file.
func (c Config) Name() string {
	s := c.Satisfy
	if s == "" {
		s = "unset"
	}
	if c.InLimit {
		s += "@GET"
	}
	r := "no-require"
	if c.Require != "" {
		r = strings.ReplaceAll(c.Require, " ", "=")
	}
	d := "deny-ranges"
	if c.DenyAll {
		d = "deny-all"
	}
	return strings.Join([]string{c.Order, s, r, d}, " ")
}

// Body is the section's contents; authDir holds the users file.
func (c Config) Body(authDir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    Order %s\n", c.Order)
	b.WriteString("    Allow from 10.0.0.0/8\n")
	if c.DenyAll {
		b.WriteString("    Deny from all\n")
	} else {
		b.WriteString("    Deny from 10.1.0.0/16 192.168.0.0/16\n")
	}
	if c.Require != "" {
		b.WriteString("    AuthType Basic\n    AuthName \"Table\"\n")
		fmt.Fprintf(&b, "    AuthUserFile %q\n", authDir+"/users")
		fmt.Fprintf(&b, "    AuthGroupFile %q\n", authDir+"/groups")
		fmt.Fprintf(&b, "    Require %s\n", c.Require)
	}
	switch {
	case c.Satisfy != "" && c.InLimit:
		fmt.Fprintf(&b, "    <Limit GET>\n        Satisfy %s\n    </Limit>\n", c.Satisfy)
	case c.Satisfy != "":
		fmt.Fprintf(&b, "    Satisfy %s\n", c.Satisfy)
	}
	return b.String()
}

// Users is the users file every configuration names: alice, password
// wonderland, and bob, password builder; Groups its group file, where
// alice alone is in admins.
const (
	Users  = "alice:{SHA}tiY7sUhYKUwI5L3866kDY+ENcrQ=\nbob:{SHA}9SMYoF5RilWWASry7TjeaKwmpGg=\n"
	Groups = "admins: alice\nstaff: bob\n"
)

// Path is the URL every request asks for, Dir the directory (under the
// document root) the configuration is a <Directory> section of.
const (
	Path = "/t/index.html"
	Dir  = "t"
)

// Configs are the table's configurations, in its order.
func Configs() []Config {
	var cs []Config
	for _, order := range []string{"allow,deny", "deny,allow", "mutual-failure"} {
		for _, sat := range []struct {
			s       string
			inLimit bool
		}{{"", false}, {"all", false}, {"any", false}, {"all", true}, {"any", true}} {
			for _, req := range []string{"", "valid-user", "user alice", "group admins"} {
				for _, denyAll := range []bool{false, true} {
					cs = append(cs, Config{Order: order, Satisfy: sat.s, InLimit: sat.inLimit, Require: req, DenyAll: denyAll})
				}
			}
		}
	}
	return cs
}

// A Request is one request of the table: a client that both lists match
// (10.1.2.3 with the ranges), only Allow (10.2.3.4), only Deny
// (192.168.1.1) or neither (8.8.8.8), with no credentials, alice's, a
// wrong password, or bob's (a valid user, not alice, not in admins).
type Request struct {
	Method, IP, User, Password string
}

// Name is the request's key in the table file.
func (r Request) Name() string {
	u := "-"
	if r.User != "" {
		u = r.User + ":" + r.Password
	}
	return r.Method + " " + r.IP + " " + u
}

// Requests are every configuration's requests, in the table's order.
func Requests() []Request {
	var rs []Request
	for _, m := range []string{"GET", "POST"} {
		for _, ip := range []string{"10.1.2.3", "10.2.3.4", "192.168.1.1", "8.8.8.8"} {
			for _, cred := range [][2]string{{"", ""}, {"alice", "wonderland"}, {"alice", "wrong"}, {"bob", "builder"}} {
				rs = append(rs, Request{Method: m, IP: ip, User: cred[0], Password: cred[1]})
			}
		}
	}
	return rs
}

// A Row is one request to one configuration and its answers: 200, 401 or
// 403.
type Row struct {
	Config         Config
	Request        Request
	Want24, Want22 int
}

// Rows are the table's rows with no answers yet.
func Rows() []Row {
	var rows []Row
	for _, c := range Configs() {
		for _, r := range Requests() {
			rows = append(rows, Row{Config: c, Request: r})
		}
	}
	return rows
}

// Format writes rows as the table file.
func Format(rows []Row) []byte {
	var b bytes.Buffer
	b.WriteString("# The decision table (internal/decisiontable). One row per line:\n")
	b.WriteString("# order satisfy require deny | method client credentials | 2.4 2.2\n")
	b.WriteString("# The 2.4 column is Apache 2.4's answer (go test ./internal/differential\n")
	b.WriteString("# -run TestDecisionTable -args -update-table); the 2.2 column orderly's\n")
	b.WriteString("# 2.2 model, equal to 2.4's but where Differs22 says why.\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s | %s | %d %d\n", r.Config.Name(), r.Request.Name(), r.Want24, r.Want22)
	}
	return b.Bytes()
}

// Load reads the table file and returns its rows, in the order of Rows,
// with their answers; a row missing from the file, or a line of no row,
// is an error.
func Load(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	want := map[string][2]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndex(line, " | ")
		if i < 0 {
			return nil, fmt.Errorf("%s:%d: no answers", path, n)
		}
		f := strings.Fields(line[i+3:])
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want two answers", path, n)
		}
		a, err1 := strconv.Atoi(f[0])
		b, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: answers %q", path, n, line[i+3:])
		}
		want[line[:i]] = [2]int{a, b}
	}
	rows := Rows()
	for i := range rows {
		k := rows[i].Config.Name() + " | " + rows[i].Request.Name()
		w, ok := want[k]
		if !ok {
			return nil, fmt.Errorf("%s: no row %q", path, k)
		}
		rows[i].Want24, rows[i].Want22 = w[0], w[1]
		delete(want, k)
	}
	for k := range want {
		return nil, fmt.Errorf("%s: a row of no configuration: %q", path, k)
	}
	return rows, nil
}

// Differs22 says why Apache 2.2 answers r otherwise than 2.4, "" where it
// answers the same (apache-access-semantics.md): a Satisfy Any that no
// Require applies to grants a client Order/Allow/Deny refuses under 2.4
// (access_compat's own check fails, and with no Require authorization
// grants) and is 403 under 2.2, where Satisfy Any only lets
// authentication stand in for host access.
func Differs22(r Row) string {
	satisfyAny := r.Config.Satisfy == "any" && (!r.Config.InLimit || r.Request.Method == "GET")
	if satisfyAny && r.Config.Require == "" && !HostAllowed(r.Config, r.Request.IP) {
		return "Satisfy Any with no Require: 2.4 grants what host access refuses, 2.2 answers 403"
	}
	return ""
}

// HostAllowed is Order/Allow/Deny for the table's lists, written from
// mod_access_compat's documentation, apart from the code under test:
// allow,deny and mutual-failure need an Allow match and no Deny match;
// deny,allow refuses only a Deny match with no Allow match.
func HostAllowed(c Config, ip string) bool {
	allow := ip == "10.1.2.3" || ip == "10.2.3.4"
	deny := c.DenyAll || ip == "10.1.2.3" || ip == "192.168.1.1"
	if c.Order == "deny,allow" {
		return !deny || allow
	}
	return allow && !deny
}

// Engine builds orderly's engine for c under semantics sem, writing its
// files under dir: legacy.conf, the document root (docroot/t/index.html)
// and the users file (auth/users).
func Engine(dir string, c Config, sem translate.Semantics) (*walk.Engine, error) {
	root, auth := filepath.Join(dir, "docroot"), filepath.Join(dir, "auth")
	for _, d := range []string{filepath.Join(root, Dir), auth} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		filepath.Join(root, "index.html"):      "top\n",
		filepath.Join(root, Dir, "index.html"): "table\n",
		filepath.Join(auth, "users"):           Users,
		filepath.Join(auth, "groups"):          Groups,
		filepath.Join(dir, "legacy.conf"):      Section(root, auth, c),
	}
	for name, text := range files {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	cfg, err := translate.Load([]string{filepath.Join(dir, "legacy.conf")}, translate.LoadOptions{
		Options: translate.Options{Semantics: sem, DocumentRoot: root},
	})
	if err != nil {
		return nil, err
	}
	return walk.New(cfg, walk.OS, authfile.NewIdentity()), nil
}

// Section is the configuration c as a <Directory> section of the
// document root's directory Dir.
func Section(root, authDir string, c Config) string {
	return fmt.Sprintf("<Directory %q>\n%s</Directory>\n", root+"/"+Dir, c.Body(authDir))
}

// Decide decides r by e as an answer: 200 where access control allows.
func Decide(e *walk.Engine, r Request) int {
	wr := &walk.Request{
		Method: r.Method, Target: Path, Proto: "HTTP/1.1", Header: http.Header{},
		ClientAddr: netip.MustParseAddr(r.IP), LocalAddr: netip.MustParseAddr("127.0.0.1"),
	}
	if r.User != "" {
		wr.Auth = policy.Credentials{Present: true, Basic: true, User: r.User, Password: r.Password}
	}
	res := e.Decide(wr, nil)
	if res.Status == 0 {
		return http.StatusOK
	}
	return res.Status
}
