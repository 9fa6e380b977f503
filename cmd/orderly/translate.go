package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orderly-proxy/orderly/translate"
)

// cmdTranslate writes the 2.4 configuration of a 2.2 one:
// orderly translate [-o DIR] [-keep-compat] [-semantics 2.2|2.4-compat] httpd.conf...
func cmdTranslate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "directory to write the 2.4 configuration to, with the same layout (default: print to standard output)")
	keep := fs.Bool("keep-compat", false, "keep mod_access_compat loaded")
	sem := fs.String("semantics", string(translate.Legacy22), `what the legacy rules mean: "2.2" or "2.4-compat"`)
	serverRoot := fs.String("server-root", "", "ServerRoot for relative paths")
	docRoot := fs.String("document-root", "", "DocumentRoot when the files set none")
	var modules, defines listFlag
	fs.Var(&modules, "module", "a module to treat as loaded, by identifier (rewrite_module); repeatable. A configuration without LoadModule lines is otherwise read with Debian's default modules")
	fs.Var(&defines, "D", "a -D name for <IfDefine>; repeatable")
	guard := addGuardFlags(fs) // guard.go
	if err := fs.Parse(args); err != nil {
		return 2
	}
	guardText, err := guard.config()
	if err != nil {
		fmt.Fprintln(stderr, "translate:", err)
		return 2
	}
	if fs.NArg() == 0 && guardText != "" {
		if err := guard.write(guardText, *out, false, stdout); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
		return 0
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: orderly translate [-o DIR] [-keep-compat] [-semantics 2.2|2.4-compat] httpd.conf...\n       orderly translate -backend-guard -orderly-addr ADDR[,ADDR...] [-guard-token-file F] [-trusted-proxies ADDR,...] [-o DIR] [httpd.conf...]")
		return 2
	}
	s := translate.Semantics(*sem)
	if s != translate.Legacy22 && s != translate.Compat24 {
		fmt.Fprintf(stderr, "translate: -semantics %q: want \"2.2\" or \"2.4-compat\"\n", *sem)
		return 2
	}
	var files []string
	for _, f := range fs.Args() {
		// Absolute, so that included files land beside them under -o.
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		files = append(files, f)
	}
	dr := *docRoot
	if dr == "" {
		dr = "/var/www/html"
	}
	conv, err := translate.Convert(files, translate.ConvertOptions{
		LoadOptions: translate.LoadOptions{Options: translate.Options{Semantics: s, ServerRoot: *serverRoot, DocumentRoot: dr, ForwardUnfaithful: true},
			Modules: modules, Defines: defines.set()},
		KeepCompat: *keep,
	})
	if err != nil {
		printErrs(stderr, err)
		return 2
	}
	base := commonDir(files)
	names := make([]string, 0, len(conv.Files))
	for f := range conv.Files {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if *out == "" {
			fmt.Fprintf(stdout, "# ==== %s\n", f)
			stdout.Write(conv.Files[f])
			continue
		}
		rel, err := filepath.Rel(base, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			// Outside the configuration's directory (an .htaccess file
			// under a document root): under DIR by its absolute path.
			abs, _ := filepath.Abs(f)
			rel = strings.TrimPrefix(abs, "/")
		}
		dst := filepath.Join(*out, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
		if err := os.WriteFile(dst, conv.Files[f], 0o644); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
	}
	if guardText != "" {
		if err := guard.write(guardText, *out, true, stdout); err != nil {
			fmt.Fprintln(stderr, "translate:", err)
			return 2
		}
	}
	for _, r := range conv.Reviews {
		fmt.Fprintf(stderr, "%s: DIR-10 needs review: %s\n", r.Pos, r.Text)
	}
	fmt.Fprintf(stderr, "translate: %d sections translated, %d left for review, %d directives renamed or removed\n", conv.Changes-len(conv.Reviews), len(conv.Reviews), conv.Renamed)
	return 0
}

func commonDir(files []string) string {
	if len(files) == 0 {
		return "."
	}
	d := filepath.Dir(files[0])
	for _, f := range files[1:] {
		for !strings.HasPrefix(filepath.Dir(f)+"/", d+"/") && d != "/" && d != "." {
			d = filepath.Dir(d)
		}
	}
	return d
}
