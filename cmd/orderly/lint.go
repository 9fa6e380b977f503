package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/lint"
)

const lintUsage = `usage: orderly lint [-format text|json|sarif] [-fail-on warning|error] [-server-root DIR]
                   [-document-root DIR] [-D NAME]... [-module NAME]... [-srcroot DIR] httpd.conf...

Reports what an Apache 2.2 configuration (with its includes and the .htaccess
files under its document roots) must change for 2.4, one finding per
occurrence, each with its rule ID (shared/docs/rule-catalogue.md, ORD-* for
orderly's own checks), severity, file:line:column and fix.

Exit status: 0 no finding at or above -fail-on, 1 findings at or above it,
2 bad usage or a configuration that cannot be read.

`

// listFlag collects a repeated flag.
type listFlag []string

func (f *listFlag) String() string { return strings.Join(*f, ",") }
func (f *listFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty value")
	}
	*f = append(*f, v)
	return nil
}

// cmdLint implements "orderly lint".
func cmdLint(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, lintUsage)
		fs.PrintDefaults()
	}
	format := fs.String("format", "text", "output format: text, json or sarif")
	failOn := fs.String("fail-on", "error", "exit 1 when a finding has this severity or a higher one: info, warning or error")
	serverRoot := fs.String("server-root", "", "server root for relative paths when the configuration sets no ServerRoot (default: the directory of the first file)")
	docRoot := fs.String("document-root", "", "the main server's document root when the configuration sets none")
	srcRoot := fs.String("srcroot", ".", "SARIF: the directory artifact URIs are relative to (uriBaseId SRCROOT)")
	sem := fs.String("semantics", "auto", `how orderly serve is to read the rules, for what it would refuse (ORD-14): "2.2", "2.4-compat", or "auto" (2.4-compat when the configuration is written for 2.4)`)
	var defines, modules listFlag
	fs.Var(&defines, "D", "a -D name for <IfDefine> (repeatable)")
	fs.Var(&modules, "module", "a module to treat as loaded beyond the LoadModule lines, e.g. rewrite_module (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch *format {
	case "text", "json", "sarif":
	default:
		fmt.Fprintf(stderr, "orderly lint: unknown -format %q (want text, json or sarif)\n", *format)
		return 2
	}
	switch *sem {
	case "auto":
		*sem = ""
	case "2.2", "2.4-compat":
	default:
		fmt.Fprintf(stderr, "orderly lint: -semantics %q: want 2.2, 2.4-compat or auto\n", *sem)
		return 2
	}
	fail, err := lint.ParseSeverity(*failOn)
	if err != nil {
		fmt.Fprintf(stderr, "orderly lint: -fail-on: %v\n", err)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "orderly lint: no configuration file given")
		fs.Usage()
		return 2
	}
	rep, err := lint.Lint(fs.Args(), lint.Options{
		ServerRoot:   *serverRoot,
		DocumentRoot: *docRoot,
		Defines:      defines,
		Modules:      modules,
		Semantics:    *sem,
	})
	if err != nil {
		var el apacheconf.ErrorList
		if errors.As(err, &el) {
			for _, e := range el {
				fmt.Fprintln(stderr, e.Error())
			}
		} else {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	switch *format {
	case "json":
		err = lint.WriteJSON(stdout, rep)
	case "sarif":
		err = lint.WriteSARIF(stdout, rep, lint.SARIFOptions{BaseDir: *srcRoot, Version: version})
	default:
		err = lint.WriteText(stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "orderly lint: %v\n", err)
		return 2
	}
	if rep.Count(fail) > 0 {
		return 1
	}
	return 0
}

// set returns the names as a set, nil if there are none.
func (f listFlag) set() map[string]bool {
	if len(f) == 0 {
		return nil
	}
	m := make(map[string]bool, len(f))
	for _, v := range f {
		m[v] = true
	}
	return m
}
