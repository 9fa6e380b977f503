package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/lint"
)

const lintUsage = `usage: orderly lint [-format text|json|sarif] [-fail-on warning|error] [-server-root DIR]
                   [-only IDS] [-skip IDS] [-min-severity info|warning|error]
                   [-document-root DIR] [-D NAME]... [-module NAME]... [-srcroot DIR] httpd.conf...

Reports what an Apache 2.2 configuration (with its includes and the .htaccess
files under its document roots) must change for 2.4, one finding per
occurrence, each with its rule ID (docs/catalogue.md; ORD-* for orderly's own checks),
severity, file:line:column and fix; text output ends with a summary by
severity and by rule. -only and -skip take rule IDs (DIR-10) or families
(AUTH-*), comma-separated.

Exit status: 0 no finding shown at or above -fail-on, 1 findings at or above
it, 2 bad usage or a configuration that cannot be read.

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
	fs := newFlagSet("lint", lintUsage, stderr)
	format := fs.String("format", "text", "output format: text, json or sarif")
	failOn := fs.String("fail-on", "error", "exit 1 when a finding has this severity or a higher one: info, warning or error")
	serverRoot := fs.String("server-root", "", "server root for relative paths when the configuration sets no ServerRoot (default: the directory of the first file)")
	docRoot := fs.String("document-root", "", "the main server's document root when the configuration sets none")
	srcRoot := fs.String("srcroot", ".", "SARIF: the directory artifact URIs are relative to (uriBaseId SRCROOT)")
	sem := fs.String("semantics", "auto", `how orderly serve is to read the rules, for what it would refuse (ORD-14): "2.2", "2.4-compat", or "auto" (2.4-compat when the configuration is written for 2.4)`)
	only := fs.String("only", "", "report only these rule IDs or families (DIR-10,AUTH-*)")
	skip := fs.String("skip", "", "leave out these rule IDs or families")
	minSev := fs.String("min-severity", "info", "leave out findings less severe than this: info, warning or error")
	var defines, modules listFlag
	fs.Var(&defines, "D", "a -D name for <IfDefine> (repeatable)")
	fs.Var(&modules, "module", "a module to treat as loaded beyond the LoadModule lines, e.g. rewrite_module (repeatable)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
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
	var filter lint.Filter
	if filter.MinSeverity, err = lint.ParseSeverity(*minSev); err != nil {
		fmt.Fprintf(stderr, "orderly lint: -min-severity: %v\n", err)
		return 2
	}
	for _, l := range []struct {
		name, value string
		into        *[]string
	}{{"only", *only, &filter.Only}, {"skip", *skip, &filter.Skip}} {
		if l.value == "" {
			continue
		}
		if *l.into, err = lint.ParseIDs(l.value); err != nil {
			fmt.Fprintf(stderr, "orderly lint: -%s: %v\n", l.name, err)
			return 2
		}
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "orderly lint: no configuration file given")
		fs.Usage()
		return 2
	}
	stop := progress(stderr, "orderly lint: reading the configuration, its includes and .htaccess files")
	rep, err := lint.Lint(fs.Args(), lint.Options{
		ServerRoot:   *serverRoot,
		DocumentRoot: *docRoot,
		Defines:      defines,
		Modules:      modules,
		Semantics:    *sem,
	})
	stop()
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
	if *format != "text" {
		filter.Apply(rep)
	}
	switch *format {
	case "json":
		err = lint.WriteJSON(stdout, rep)
	case "sarif":
		err = lint.WriteSARIF(stdout, rep, lint.SARIFOptions{BaseDir: *srcRoot, Version: version})
	default:
		filter.Apply(rep)
		if err = lint.WriteText(stdout, rep); err == nil && len(rep.Findings) > 0 {
			err = lint.WriteSummary(stdout, rep) // a clean configuration prints nothing
		}
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

// progress prints what is under way once it has taken a second, then
// every ten seconds, and how long it took when stop is called after that;
// stop reports nothing for what finished within the second.
func progress(w io.Writer, what string) (stop func()) {
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan bool)
	go func() {
		shown := false
		t := time.NewTimer(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				finished <- shown
				return
			case <-t.C:
				fmt.Fprintf(w, "%s (%s)...\n", what, time.Since(start).Round(time.Second))
				shown = true
				t.Reset(10 * time.Second)
			}
		}
	}()
	return func() {
		close(done)
		if <-finished {
			fmt.Fprintf(w, "%s: done in %s\n", strings.SplitN(what, ":", 2)[0], time.Since(start).Round(100*time.Millisecond))
		}
	}
}
