package gen

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate/directive"
)

var updateArgs = flag.Bool("update-args", false, "probe Apache for arguments each directive of the table accepts, and rewrite probed.go")

// candidates are the arguments tried for a directive, in order: the
// first Apache accepts (in the context probed, and on a real start) is
// the directive's. @EXTRA@ is an existing directory, @AUTH@/users an
// existing file.
var candidates = []string{
	"On", "Off", "10", "None", "text/html .gen", ".gen", "gen", "gen gen", "All",
	"Default", "@EXTRA@", "@AUTH@/users", "/gen @EXTRA@", `"gen text"`, "*",
	"1 2", "10 20", "env=gen", "gen=1", "^/gen /gen", "/gen", "gen .gen", "GET",
	"http://127.0.0.1/gen", "text/html", "*.gen", "gen gen gen", "Basic", "file",
	"/gen/ @EXTRA@/", "^/gen(.*) @EXTRA@$1", "gen 10", "Off 10", "On 10",
	"header=20-40,MinRate=500", "\"%{REQUEST_URI}\"", "\"gen\" \"gen\"",
	"s/gen/x/", "INCLUDES .gen", "gen.gen", "plain", "GET POST", "120",
	`"Google" gen`, "gen 1", "/gen gen", "gen @EXTRA@",
}

// pathLike names directives that take a path first.
var pathLike = regexp.MustCompile(`(?i)(file|root|dir$|path|db$|socket|lock)`)

// order returns the candidates for a directive, path-first for the names
// that look like they take one.
func order(name string) []string {
	if !pathLike.MatchString(name) {
		return candidates
	}
	var out []string
	out = append(out, "@EXTRA@", "@AUTH@/users")
	for _, c := range candidates {
		if c != "@EXTRA@" && c != "@AUTH@/users" {
			out = append(out, c)
		}
	}
	return out
}

// arity filters candidates by what Apache's message said about the
// number of arguments.
func arity(msg string, c string) bool {
	n := len(strings.Fields(strings.ReplaceAll(c, `"gen text"`, "x")))
	switch {
	case strings.Contains(msg, "must be On or Off"):
		return c == "On" || c == "Off"
	case strings.Contains(msg, "takes one argument"):
		return n == 1
	case strings.Contains(msg, "takes two arguments"):
		return n == 2
	case strings.Contains(msg, "takes three arguments"):
		return n == 3
	case strings.Contains(msg, "takes one or two arguments"):
		return n <= 2
	case strings.Contains(msg, "requires at least two arguments"):
		return n >= 2
	case strings.Contains(msg, "takes no arguments"):
		return false
	}
	return true
}

type probe struct {
	name, module string
	ctx          string // "server" or "dir"
	tried        []string
	left         []string
	ok           string
}

// TestProbeArguments (with -update-args) finds, for every directive of
// the table that a case can load and that the generator may write, an
// argument string Apache 2.4 accepts in each context it allows (server
// config; <Directory>), and writes them to probed.go. It runs apache2 -t
// on a configuration holding every pending directive, moves a directive
// the error names to its next candidate, and repeats; then it starts
// Apache on the result and drops, by halves, what makes it fail to start.
func TestProbeArguments(t *testing.T) {
	if !*updateArgs {
		t.Skip("run with -update-args to probe Apache and rewrite probed.go")
	}
	paths := apachetest.Require(t)
	dir := apachetest.TempDir(t)
	extra, auth := filepath.Join(dir, "extra"), filepath.Join(dir, "auth")
	for _, d := range []string{extra, auth} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(auth, "users"), []byte("u:"+SHA("p")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "probe.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opt := apachetest.Options{Include: []string{conf}, RemoteIP: true, AccessCompat: true, Modules: ExtraModules, DocumentRoot: extra}
	srv := apachetest.Start(t, opt)

	var probes []*probe
	for _, r := range directive.All() {
		if r.In&directive.V24 == 0 || r.Section() || r.Effect == directive.Reads || Unsafe(r.Name) || !Loadable(r.Module) {
			continue
		}
		for _, ctx := range []string{"server", "dir"} {
			c := directive.Server
			if ctx == "dir" {
				c = directive.Dir
			}
			if r.Where.Allows(c, 0) {
				probes = append(probes, &probe{name: r.Name, module: r.Module, ctx: ctx, left: slices.Clone(order(r.Name))})
			}
		}
	}
	expand := strings.NewReplacer("@EXTRA@", extra, "@AUTH@", auth)
	write := func(ps []*probe, arg func(*probe) string) map[int]*probe {
		var b strings.Builder
		lines := map[int]*probe{}
		line := 1
		for i, p := range ps {
			a := arg(p)
			if a == "" {
				continue
			}
			if p.ctx == "dir" {
				fmt.Fprintf(&b, "<Directory \"%s/d%d\">\n", extra, i)
				line++
			}
			fmt.Fprintf(&b, "%s %s\n", p.name, expand.Replace(a))
			lines[line] = p
			line++
			if p.ctx == "dir" {
				b.WriteString("</Directory>\n")
				line++
			}
		}
		if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return lines
	}
	syntax := regexp.MustCompile(`Syntax error on line (\d+) of ([^:]+):\n(.*)`)
	runs := 0
	for {
		lines := write(probes, func(p *probe) string {
			if p.ok != "" || len(p.left) == 0 {
				return ""
			}
			return p.left[0]
		})
		if len(lines) == 0 {
			break
		}
		cmd := exec.Command(paths.Apache, "-t", "-f", filepath.Join(srv.Dir, "httpd.conf"))
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
		out, err := cmd.CombinedOutput()
		runs++
		if err == nil {
			for _, p := range lines {
				p.ok = p.left[0]
			}
			break
		}
		m := syntax.FindStringSubmatch(string(out))
		if m == nil || m[2] != conf {
			t.Fatalf("apache2 -t: %v\n%s", err, out)
		}
		n, _ := strconv.Atoi(m[1])
		p := lines[n]
		if p == nil {
			t.Fatalf("apache2 -t names line %d, which holds no probe:\n%s", n, out)
		}
		p.tried = append(p.tried, p.left[0])
		rest := p.left[1:]
		p.left = p.left[:0:0]
		for _, c := range rest {
			if arity(m[3], c) {
				p.left = append(p.left, c)
			}
		}
	}
	t.Logf("%d runs of apache2 -t", runs)
	// Each on its own: what passed in company may have needed another
	// probe (FilterProtocol the filter a FilterDeclare declared).
	for _, p := range probes {
		if p.ok == "" {
			continue
		}
		write([]*probe{p}, func(p *probe) string { return p.ok })
		cmd := exec.Command(paths.Apache, "-t", "-f", filepath.Join(srv.Dir, "httpd.conf"))
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("%s %s (%s): refused on its own: %s", p.name, p.ok, p.ctx, strings.TrimSpace(string(out)))
			p.ok = ""
		}
	}
	// Start Apache on what passed, dropping by halves what keeps it from
	// starting (errors apache2 -t does not see: post_config and open_logs).
	var accepted []*probe
	for _, p := range probes {
		if p.ok != "" {
			accepted = append(accepted, p)
		}
	}
	starts := func(ps []*probe) bool {
		write(ps, func(p *probe) string { return p.ok })
		err := apachetest.TryFatal(t, func(tb testing.TB) { srv.Reload(tb, opt) })
		return err == nil
	}
	var bisect func(ps []*probe)
	bisect = func(ps []*probe) {
		if len(ps) == 0 || starts(ps) {
			return
		}
		if len(ps) == 1 {
			t.Logf("%s %s (%s): Apache does not start with it", ps[0].name, ps[0].ok, ps[0].ctx)
			ps[0].ok = ""
			return
		}
		bisect(ps[:len(ps)/2])
		bisect(ps[len(ps)/2:])
	}
	bisect(accepted)
	var final []*probe
	for _, p := range accepted {
		if p.ok != "" {
			final = append(final, p)
		}
	}
	if !starts(final) {
		t.Fatal("Apache does not start with every directive that starts alone")
	}

	byName := map[string]*[2]string{}
	var names []string
	for _, p := range final {
		e := byName[p.name]
		if e == nil {
			e = &[2]string{}
			byName[p.name] = e
			names = append(names, p.name)
		}
		if p.ctx == "server" {
			e[0] = p.ok
		} else {
			e[1] = p.ok
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("// Code generated by TestProbeArguments (go test ./internal/gen -run TestProbeArguments -update-args); DO NOT EDIT.\n\n")
	b.WriteString("package gen\n\n")
	fmt.Fprintf(&b, "// probed holds, for %d directives of the table, an argument string that\n", len(names))
	b.WriteString("// Apache 2.4 (Debian) accepts and starts with, with every module of\n")
	b.WriteString("// ExtraModules loaded: at the server level ([0]) and in <Directory> ([1]),\n")
	b.WriteString("// \"\" where the context is not allowed or no candidate passed. @EXTRA@ is\n")
	b.WriteString("// a directory, @AUTH@/users a file.\n")
	b.WriteString("var probed = map[string][2]string{\n")
	for _, n := range names {
		e := byName[n]
		fmt.Fprintf(&b, "\t%q: {%q, %q},\n", n, e[0], e[1])
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("probed.go", src, 0o644); err != nil {
		t.Fatal(err)
	}
	none := 0
	for _, p := range probes {
		if p.ok == "" {
			none++
		}
	}
	t.Logf("%d directives, %d probes, %d without an argument Apache accepts", len(names), len(probes), none)
}
