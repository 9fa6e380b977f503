package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

const initUsage = `usage: orderly init [-o FILE] [-force] [-listen ADDR] [-backend URL]
                   [-semantics 2.2|2.4-compat] [-server-root DIR] [-document-root DIR]
                   [-path-map LEGACY=LOCAL]... [-D NAME]... [-module NAME]... PATH

Writes a commented orderly.hcl that runs orderly in shadow mode in front of
the new Apache 2.4 backend, for the 2.2 configuration at PATH: a directory
(/etc/apache2: apache2.conf; /etc/httpd: conf/httpd.conf; otherwise
httpd.conf or apache2.conf in it) or the main file itself. It loads the
configuration as serve would and lists, at the end of the file and on
standard error, everything serve would refuse, each as file:line: why.
Then: orderly check -config FILE, and orderly serve -config FILE.

Exit status: 0 written (even with refusals listed), 2 bad usage, a PATH
that is missing or cannot be read, or an existing FILE without -force.

`

// initTree is what init found in a 2.2 configuration tree: facts read
// from its directives, for the comments and attributes of the file it
// writes. What the rules decide is left to translate.Load.
type initTree struct {
	main     string // the main file
	layout   string // "debian", "rhel" or "" (the main file's directory)
	root     string // the server root the files resolve against
	rootFrom string // where root comes from
	rootSet  bool   // the files set ServerRoot themselves
	docRoot  string // the main server's document root
	docFrom  string
	fragment bool       // no LoadModule line: orderly assumes modules
	modules  []initItem // LoadModule lines
	vhosts   []initItem // <VirtualHost> sections with their roots
	env      []initItem // ${NAME} references to unset variables
	envvars  string     // Debian's envvars file, if there is one
	ipHost   string     // the first address of an IP-based <VirtualHost>
	ipHostAt apacheconf.Pos
}

// initItem is one line of a list in the comments: what, and where.
type initItem struct {
	text string
	pos  apacheconf.Pos
}

// initMain finds the main file of the tree at path.
func initMain(path string) (main, layout string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	if !fi.IsDir() {
		switch {
		case filepath.Base(abs) == "apache2.conf":
			layout = "debian"
		case filepath.Base(abs) == "httpd.conf" && filepath.Base(filepath.Dir(abs)) == "conf":
			layout = "rhel"
		}
		return abs, layout, nil
	}
	for _, c := range []struct{ name, layout string }{
		{"apache2.conf", "debian"}, {"conf/httpd.conf", "rhel"}, {"httpd.conf", ""},
	} {
		p := filepath.Join(abs, c.name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, c.layout, nil
		}
	}
	return "", "", fmt.Errorf("no apache2.conf, conf/httpd.conf or httpd.conf in the directory")
}

// defaultRoot is the server root of a layout when the files set none.
func defaultRoot(main, layout string) (string, string) {
	switch layout {
	case "debian":
		return filepath.Dir(main), "Debian's layout: the directory of apache2.conf"
	case "rhel":
		return filepath.Dir(filepath.Dir(main)), "Red Hat's layout: the directory above conf/httpd.conf"
	}
	return filepath.Dir(main), "the directory of the main file"
}

// defaultDocRoot is the document root compiled into the layout's 2.2
// server, used when the files set none.
func defaultDocRoot(root, layout string) (string, string) {
	switch layout {
	case "debian":
		return "/var/www", "Debian's Apache 2.2 compiled-in DocumentRoot"
	case "rhel":
		return "/var/www/html", "Red Hat's Apache 2.2 compiled-in DocumentRoot"
	}
	return filepath.Join(root, "htdocs"), "Apache 2.2's compiled-in DocumentRoot (PREFIX/htdocs), with the server root as prefix"
}

// inspect reads the tree's directives (syntax, Include, <IfModule>) for
// the facts init writes down. A tree that does not parse is an error.
func (t *initTree) inspect(opt translate.LoadOptions) error {
	read := func(mods []string) ([]*apacheconf.Directive, error) {
		m := map[string]bool{}
		for _, n := range mods {
			m[n] = true
		}
		version := opt.Version
		if version == "" {
			version = translate.DefaultVersion(opt.Semantics)
		}
		return apacheconf.Load(t.main, apacheconf.Options{ServerRoot: t.root, Defines: opt.Defines, Modules: m, Version: version})
	}
	ds, err := read(opt.Modules)
	if err != nil {
		return err
	}
	loads := false
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		loads = loads || d.Is("LoadModule")
		return nil
	})
	if !loads {
		// A fragment: serve assumes a stock server's modules, and so
		// does this reading.
		t.fragment = true
		if len(opt.Modules) == 0 {
			mods := translate.FragmentModules
			if opt.Semantics == translate.Legacy22 {
				mods = translate.FragmentModules22
			}
			if ds, err = read(mods); err != nil {
				return err
			}
		}
	}
	ref := regexp.MustCompile(`\$\{([^}]+)\}`)
	envSeen := map[string]int{}
	for _, d := range ds {
		switch {
		case d.Is("ServerRoot") && len(d.Args) == 1:
			t.root, t.rootSet = filepath.Clean(resolveIn(t.root, d.Args[0])), true
			t.rootFrom = fmt.Sprintf("ServerRoot at %s", t.rel(d.Pos))
		case d.Is("DocumentRoot") && len(d.Args) == 1:
			t.docRoot = filepath.Clean(resolveIn(t.root, d.Args[0]))
			t.docFrom = fmt.Sprintf("DocumentRoot at %s", t.rel(d.Pos))
		case d.Is("VirtualHost"):
			name, doc := "(no ServerName)", "(the main server's DocumentRoot)"
			for _, c := range d.Block {
				switch {
				case c.Is("ServerName") && len(c.Args) > 0:
					name = c.Args[0]
				case c.Is("DocumentRoot") && len(c.Args) == 1:
					doc = filepath.Clean(resolveIn(t.root, c.Args[0]))
				}
			}
			t.vhosts = append(t.vhosts, initItem{fmt.Sprintf("<VirtualHost %s>  %s  %s", strings.Join(d.Args, " "), name, doc), d.Pos})
			for _, a := range d.Args {
				host := a
				if i := strings.LastIndexByte(a, ':'); i >= 0 && !strings.HasSuffix(a, "]") {
					host = a[:i]
				}
				if host != "*" && host != "_default_" && t.ipHost == "" {
					t.ipHost, t.ipHostAt = a, d.Pos
				}
			}
		}
	}
	apacheconf.Walk(ds, func(d *apacheconf.Directive, _ []*apacheconf.Directive) error {
		if d.Is("LoadModule") && len(d.Args) > 0 {
			t.modules = append(t.modules, initItem{d.Args[0], d.Pos})
		}
		for _, a := range d.Args {
			for _, m := range ref.FindAllStringSubmatch(a, -1) {
				if _, ok := os.LookupEnv(m[1]); ok {
					continue
				}
				if i, ok := envSeen[m[1]]; ok {
					if !slices.Contains(strings.Fields(t.env[i].text), d.Name) {
						t.env[i].text += " " + d.Name
					}
					continue
				}
				envSeen[m[1]] = len(t.env)
				t.env = append(t.env, initItem{"${" + m[1] + "}  " + d.Name, d.Pos})
			}
		}
		return nil
	})
	if p := filepath.Join(filepath.Dir(t.main), "envvars"); t.layout == "debian" {
		if _, err := os.Stat(p); err == nil {
			t.envvars = p
		}
	}
	return nil
}

// resolveIn is p relative to the server root root.
func resolveIn(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// rel names a position relative to the server root, for comments.
func (t *initTree) rel(p apacheconf.Pos) string {
	f := p.File
	if r, err := filepath.Rel(t.root, f); err == nil && !strings.HasPrefix(r, "..") {
		f = r
	}
	return fmt.Sprintf("%s:%d", f, p.Line)
}

// envvarsValues reads the NAME=value lines of Debian's envvars (export
// lines, $SUFFIX as for the default instance: empty).
func envvarsValues(path string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	line := regexp.MustCompile(`^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if m := line.FindStringSubmatch(sc.Text()); m != nil {
			v := strings.Trim(strings.TrimSpace(m[2]), `"'`)
			v = strings.NewReplacer("${SUFFIX}", "", "$SUFFIX", "").Replace(v)
			out[m[1]] = v
		}
	}
	return out
}

// logOnly are directives whose paths do not bear on what orderly
// decides: a ${NAME} left unresolved there changes no decision.
var logOnly = map[string]bool{
	"errorlog": true, "customlog": true, "transferlog": true, "lockfile": true, "pidfile": true,
	"user": true, "group": true, "mutex": true, "defaultruntimedir": true, "scriptsock": true,
	"scriptlog": true, "rewritelog": true, "rewritelock": true, "sslmutex": true,
	"sslsessioncache": true, "sslstaplingcache": true, "coredumpdirectory": true,
}

// hclString quotes s as an HCL string literal (no template sequences).
func hclString(s string) string {
	q := strconv.Quote(s)
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(q)
}

// hclList writes ss as an HCL list, an attribute's value at indent,
// folded to lines of about 80 columns.
func hclList(ss []string, indent string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = hclString(s)
	}
	if one := "[" + strings.Join(q, ", ") + "]"; len(indent)+len(one) < 64 {
		return one
	}
	var b strings.Builder
	b.WriteString("[\n")
	line := ""
	for _, s := range q {
		if line != "" && len(indent)+2+len(line)+len(s)+2 > 80 {
			b.WriteString(indent + "  " + strings.TrimSuffix(line, " ") + "\n")
			line = ""
		}
		line += s + ", "
	}
	b.WriteString(indent + "  " + strings.TrimSuffix(line, " ") + "\n" + indent + "]")
	return b.String()
}

// initParams are init's flags.
type initParams struct {
	path, out, listen, backend, semantics string
	serverRoot, docRoot                   string
	pathMap                               map[string]string
	defines, modules                      []string
}

func cmdInit(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("init", initUsage, stderr)
	var p initParams
	fs.StringVar(&p.out, "o", "", `file to write ("" or "-": standard output)`)
	force := fs.Bool("force", false, "overwrite -o FILE if it exists")
	fs.StringVar(&p.listen, "listen", "127.0.0.1:8080", "where orderly listens for clients")
	fs.StringVar(&p.backend, "backend", "http://127.0.0.1:8081", "the new Apache 2.4 server's URL")
	fs.StringVar(&p.semantics, "semantics", string(translate.Legacy22), `what the legacy rules mean: "2.2" or "2.4-compat"`)
	fs.StringVar(&p.serverRoot, "server-root", "", "server root when the files set no ServerRoot (default: from the layout)")
	fs.StringVar(&p.docRoot, "document-root", "", "the main server's document root when the files set none (default: the layout's compiled-in one)")
	var pathMap, defines, modules listFlag
	fs.Var(&pathMap, "path-map", "LEGACY=LOCAL: orderly reads the legacy path prefix LEGACY at LOCAL (legacy.path_map; repeatable)")
	fs.Var(&defines, "D", "a -D name for <IfDefine> (repeatable)")
	fs.Var(&modules, "module", "a module to treat as loaded beyond the LoadModule lines, e.g. mpm_prefork_module (repeatable)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "orderly init: want one PATH: a 2.2 configuration directory (/etc/apache2, /etc/httpd) or its main file")
		fs.Usage()
		return 2
	}
	p.path, p.defines, p.modules = fs.Arg(0), defines, modules
	switch translate.Semantics(p.semantics) {
	case translate.Legacy22, translate.Compat24:
	default:
		fmt.Fprintf(stderr, "orderly init: -semantics %q: want 2.2 or 2.4-compat\n", p.semantics)
		return 2
	}
	for _, m := range pathMap {
		k, v, ok := strings.Cut(m, "=")
		if !ok || !filepath.IsAbs(k) || v == "" {
			fmt.Fprintf(stderr, "orderly init: -path-map %q: want LEGACY=LOCAL, LEGACY an absolute path\n", m)
			return 2
		}
		if p.pathMap == nil {
			p.pathMap = map[string]string{}
		}
		p.pathMap[filepath.Clean(k)] = v
	}
	toStdout := p.out == "" || p.out == "-"
	if !toStdout && !*force {
		if _, err := os.Lstat(p.out); err == nil {
			fmt.Fprintf(stderr, "orderly init: %s exists; -force overwrites it\n", p.out)
			return 2
		}
	}
	text, refusals, ok := initConfig(p, stderr)
	if !ok {
		fmt.Fprintf(stderr, "orderly init: %s: nothing written\n", p.path)
		return 2
	}
	dest := "standard output"
	if toStdout {
		io.WriteString(stdout, text)
	} else {
		if err := os.WriteFile(p.out, []byte(text), 0o644); err != nil {
			fmt.Fprintf(stderr, "orderly init: %v\n", err)
			return 2
		}
		dest = p.out
	}
	fmt.Fprintf(stderr, "orderly init: wrote %s: shadow mode in front of %s\n", dest, p.backend)
	fmt.Fprintln(stderr, "orderly init: WARNING: client_ip.trusted_proxies is empty: X-Forwarded-For is ignored and every request is decided by its peer's address; list the proxies in front of orderly, and only those")
	if len(refusals) == 0 {
		fmt.Fprintln(stderr, "orderly init: serve would start; next: orderly check -config", configArg(p.out))
		return 0
	}
	fmt.Fprintf(stderr, "orderly init: serve would refuse %d thing(s), listed at the end of the file:\n", len(refusals))
	for _, r := range refusals {
		fmt.Fprintln(stderr, "  "+r)
	}
	if p.semantics == string(translate.Legacy22) && slices.ContainsFunc(refusals, written24) {
		fmt.Fprintln(stderr, "orderly init: the tree has Apache 2.4 forms: if it is written for 2.4, run init with -semantics 2.4-compat")
	}
	return 0
}

// configArg is the file to name in "next: orderly check -config".
func configArg(out string) string {
	if out == "" || out == "-" {
		return "orderly.hcl"
	}
	return out
}

// initConfig writes the configuration for p and loads it as serve would:
// the text, with every refusal listed at its end, and the refusals.
func initConfig(p initParams, stderr io.Writer) (string, []string, bool) {
	main, layout, err := initMain(p.path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Fprintf(stderr, "%s: %v\n", p.path, err)
		return "", nil, false
	}
	t := &initTree{main: main, layout: layout}
	t.root, t.rootFrom = defaultRoot(main, layout)
	if p.serverRoot != "" {
		t.root, t.rootFrom = absPath(p.serverRoot), "-server-root"
	}
	opt := translate.LoadOptions{Options: translate.Options{Semantics: translate.Semantics(p.semantics)}, Defines: map[string]bool{}, Modules: p.modules}
	for _, d := range p.defines {
		opt.Defines[d] = true
	}
	if err := t.inspect(opt); err != nil {
		printErrs(stderr, err)
		fmt.Fprintf(stderr, "orderly init: %s: the configuration cannot be read\n", main)
		return "", nil, false
	}
	if t.docRoot == "" {
		t.docRoot, t.docFrom = defaultDocRoot(t.root, layout)
		if p.docRoot != "" {
			t.docRoot, t.docFrom = absPath(p.docRoot), "-document-root"
		}
	}
	text := t.write(p)
	// Load what was written as serve would, and list what it refuses.
	where := p.out
	if where == "" || where == "-" {
		where = "orderly.hcl"
	}
	where = absPath(where)
	f, diags := hclparse.NewParser().ParseHCL([]byte(text), where)
	if !diags.HasErrors() {
		var rc *runtimeConfig
		rc, diags = decodeConfig(f, where)
		if !diags.HasErrors() {
			refusals, loaded := initRefusals(where, rc)
			return text + refusalComments(refusals, loaded), refusals, true
		}
	}
	// A flag's value the configuration refuses (-listen, -backend).
	printDiags(stderr, diags)
	return "", nil, false
}

// absPath is p made absolute.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// initRefusals loads the legacy configuration of rc as serve does and
// reads its .htaccess files as check does: each refusal as check reports
// it, and whether the configuration loaded (serve reads the .htaccess
// files only then).
func initRefusals(path string, rc *runtimeConfig) ([]string, bool) {
	e, err := buildEngine(path, rc.LegacyFiles, rc.Legacy, rc.PathMap, rc)
	if err != nil {
		var el apacheconf.ErrorList
		if !errors.As(err, &el) {
			return []string{err.Error()}, false
		}
		var out []string
		for _, e := range el {
			out = append(out, e.Error())
		}
		return out, false
	}
	return htaccessRefusals(e), true
}

// refusalComments lists the refusals as the file's closing comment.
func refusalComments(refusals []string, loaded bool) string {
	var b strings.Builder
	b.WriteString("\n# What serve refuses, and why")
	if len(refusals) == 0 {
		b.WriteString(": nothing. orderly loaded the configuration as\n# serve does and read every .htaccess file below the document roots.\n")
		return b.String()
	}
	fmt.Fprintf(&b, " (%d). serve does not start until each is fixed, but for\n", len(refusals))
	b.WriteString("# an .htaccess file's: that one answers 500 for its directory and below.\n")
	b.WriteString("# `orderly check -config` lists them again.\n")
	unfaithful := false
	for _, r := range refusals {
		b.WriteString("#   " + r + "\n")
		unfaithful = unfaithful || strings.Contains(r, "forward_unfaithful")
	}
	if !loaded {
		b.WriteString("# serve stops at these: it reads the .htaccess files below the document roots\n")
		b.WriteString("# only once the configuration loads, so check again after fixing them.\n")
	}
	if slices.ContainsFunc(refusals, written24) {
		b.WriteString("# Apache 2.4 forms under semantics \"2.2\": if the tree is written for 2.4,\n")
		b.WriteString("# run init again with -semantics 2.4-compat.\n")
	}
	if unfaithful {
		b.WriteString("# Directives orderly does not evaluate: in shadow mode the backend decides\n")
		b.WriteString("# anyway, so legacy.forward_unfaithful = true lets serve start and forward\n")
		b.WriteString("# those requests unevaluated (check lists them as \"forwarded, not evaluated\").\n")
	}
	return b.String()
}

// written24 reports whether a refusal is of a 2.4 form read as 2.2.
func written24(refusal string) bool {
	return strings.Contains(refusal, "unknown to 2.2")
}

// write renders the configuration's text, but for the refusals.
func (t *initTree) write(p initParams) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# orderly.hcl for shadow mode in front of the new Apache 2.4 backend, written by\n")
	w("# `orderly init %s` from the Apache 2.2 configuration %s.\n", p.path, t.main)
	w("#\n# The path from a real site to shadow mode (docs/init.md):\n")
	w("#   orderly init -o orderly.hcl %s   # this file; review every WARNING\n", p.path)
	w("#   orderly check -config orderly.hcl   # loads what serve loads: exit 0, or each refusal\n")
	w("#   orderly serve -config orderly.hcl\n\n")

	w("# Where clients connect: point the traffic of the site here.\n")
	w("listen = %s\n\n", hclString(p.listen))

	w("# Shadow mode: orderly forwards every request as received, decides it by the\n")
	w("# legacy rules anyway and compares with the backend's answer; it never refuses\n")
	w("# a request itself. Disagreements are counted per rule and scope\n")
	w("# (orderly_shadow_disagreements_total) and sampled in shadow_log. The comparison\n")
	w("# means something only while the backend still enforces the 2.2 rules (2.4 with\n")
	w("# mod_access_compat, or the output of `orderly translate`). Once the\n")
	w("# disagreements are explained: mode = \"enforce\".\n")
	w("mode       = \"shadow\"\n")
	w("shadow_log = \"shadow.jsonl\"  # relative to this file's directory\n\n")

	w("backend \"httpd\" {\n")
	w("  url = %s  # the new Apache 2.4 server\n", hclString(p.backend))
	w("}\n\n")

	w("legacy {\n")
	w("  # The 2.2 configuration's main file; every Include is followed from it.\n")
	w("  files = [%s]\n\n", hclString(t.main))
	w("  # ServerRoot, for relative Include, AuthUserFile, AuthGroupFile, DocumentRoot.\n")
	if t.rootSet {
		w("  # The files set it (%s); this is the same.\n", t.rootFrom)
	} else {
		w("  # The files set none: %s.\n", t.rootFrom)
	}
	w("  server_root = %s\n\n", hclString(t.root))
	w("  # The main server's DocumentRoot (%s).\n", t.docFrom)
	if !strings.HasPrefix(t.docFrom, "DocumentRoot at") {
		w("  # The files set none; orderly uses this only then.\n")
	}
	mapped := false
	for k := range p.pathMap {
		mapped = mapped || t.docRoot == k || strings.HasPrefix(t.docRoot, k+"/")
	}
	if fi, err := os.Stat(t.docRoot); !mapped && (err != nil || !fi.IsDir()) {
		w("  # WARNING: %s is not a directory here: orderly must read the files Apache\n", t.docRoot)
		w("  # serves (directories, .htaccess) to decide as it does; map it with path_map.\n")
	}
	w("  document_root = %s\n", hclString(t.docRoot))
	if len(t.vhosts) > 0 {
		w("  # Virtual hosts, with their own document roots (set in the files; nothing to set here):\n")
		for _, v := range t.vhosts {
			w("  #   %s: %s\n", t.rel(v.pos), v.text)
		}
	}
	if t.ipHost != "" {
		w("  # WARNING: <VirtualHost %s> (%s) is chosen by the address a request\n", t.ipHost, t.rel(t.ipHostAt))
		w("  # reaches the legacy server on, which orderly cannot see behind a proxy: serve\n")
		w("  # refuses to start until address says which ip:port this traffic stands for.\n")
		w("  # address = %s\n", hclString(t.ipHost))
	}
	w("\n  # What the rules mean: \"2.2\" (what Apache 2.2 did with them) or \"2.4-compat\"\n")
	w("  # (what Apache 2.4 does with them under mod_access_compat). `orderly explain`\n")
	w("  # shows where the two differ.\n")
	w("  semantics = %s\n", hclString(p.semantics))
	if len(p.defines) > 0 {
		w("\n  # -D names for <IfDefine>, as the 2.2 server was started with.\n")
		w("  defines = %s\n", hclList(p.defines, "  "))
	} else {
		w("\n  # -D names the 2.2 server is started with, for <IfDefine> (apache2ctl -S, the init script):\n")
		w("  # defines = [\"SSL\"]\n")
	}
	t.writeModules(w, p)
	t.writeEnv(w)
	w("\n  # path_map: where orderly reads the paths the configuration names (document\n")
	w("  # roots, .htaccess files, Alias targets, password and group files). Needed when\n")
	w("  # orderly cannot read them at those paths: it runs on another host or in a\n")
	w("  # container, or the content moved with the new 2.4 backend (/var/www now at\n")
	w("  # /srv/www). Map each legacy prefix to where orderly reads it:\n")
	if len(p.pathMap) > 0 {
		keys := make([]string, 0, len(p.pathMap))
		for k := range p.pathMap {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w("  path_map = {\n")
		for _, k := range keys {
			w("    %s = %s\n", hclString(k), hclString(p.pathMap[k]))
		}
		w("  }\n")
	} else {
		w("  # path_map = { %s = \"/mnt/legacy%s\" }\n", hclString(t.docRoot), strings.ReplaceAll(t.docRoot, `"`, `\"`))
	}
	w("}\n\n")

	w("# WARNING: trusted proxies are left for you. X-Forwarded-For is believed only\n")
	w("# from the peers listed here; with none, every request is decided by the address\n")
	w("# of whoever connects to orderly. If a load balancer or CDN stands in front of\n")
	w("# orderly, list its addresses, and only those: a client that can reach orderly\n")
	w("# directly from a listed address can claim to be anyone, and Allow/Deny from\n")
	w("# address rules then decide nothing.\n")
	w("client_ip {\n")
	w("  trusted_proxies = []  # e.g. [\"10.0.0.0/24\"]\n")
	w("}\n\n")

	w("# Rule hit counters and the shadow disagreements: GET /metrics.\n")
	w("metrics {\n  listen = \"127.0.0.1:9100\"\n}\n\n")
	w("# The admin page (what is in force, the disagreements), health, reload.\n")
	w("admin {\n  listen = \"127.0.0.1:9101\"\n}\n")
	return b.String()
}

// writeModules writes what init knows of the modules.
func (t *initTree) writeModules(w func(string, ...any), p initParams) {
	switch {
	case len(p.modules) > 0:
		w("\n  # Modules treated as loaded beyond the LoadModule lines (-module).\n")
		w("  modules = %s\n", hclList(p.modules, "  "))
	case t.fragment:
		mods := translate.FragmentModules
		if p.semantics == string(translate.Legacy22) {
			mods = translate.FragmentModules22
		}
		w("\n  # The files load no module (no LoadModule line): orderly reads <IfModule> as if\n")
		w("  # the stock server's modules were loaded, these. Edit to the 2.2 server's\n")
		w("  # (apache2ctl -M, httpd -M).\n")
		w("  modules = %s\n", hclList(mods, "  "))
	default:
		w("\n  # Modules: the files load these, and orderly reads <IfModule> by them:\n")
		for _, m := range t.modules {
			w("  #   %-24s %s\n", m.text, t.rel(m.pos))
		}
		w("  # Name here only those compiled into the 2.2 server (httpd -l), such as its MPM:\n")
		w("  # modules = [\"mpm_prefork_module\"]\n")
	}
}

// writeEnv writes the environment variables the files use and this
// environment does not set.
func (t *initTree) writeEnv(w func(string, ...any)) {
	if len(t.env) == 0 {
		return
	}
	vals := map[string]string{}
	if t.envvars != "" {
		vals = envvarsValues(t.envvars)
	}
	matters := false
	w("\n  # The files name these environment variables, unset here; httpd and orderly\n")
	w("  # read ${NAME} from their environment, and use the text as written without it:\n")
	for _, e := range t.env {
		f := strings.Fields(e.text)
		name := strings.TrimSuffix(strings.TrimPrefix(f[0], "${"), "}")
		extra := ""
		if v, ok := vals[name]; ok {
			extra = fmt.Sprintf(" (envvars: %s)", v)
		}
		w("  #   %s first at %s, in %s%s\n", f[0], t.rel(e.pos), strings.Join(f[1:], ", "), extra)
		for _, d := range f[1:] {
			matters = matters || !logOnly[strings.ToLower(d)]
		}
	}
	switch {
	case matters && t.envvars != "":
		w("  # WARNING: some name paths that decide requests: run check and serve with\n")
		w("  # %s sourced, as apache2ctl does.\n", t.envvars)
	case matters:
		w("  # WARNING: some name paths that decide requests: set them for check and serve.\n")
	default:
		w("  # They name logs, locks and the user only: no decision depends on them.\n")
	}
}
