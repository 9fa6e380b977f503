// Command orderly enforces legacy Apache httpd 2.2 access rules in front
// of an Apache 2.4 backend. See README.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	rpprof "runtime/pprof"

	"github.com/hashicorp/hcl/v2"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// version is set at build time with -ldflags "-X main.version=...".
var version string // unstamped: buildVersion in version.go

const usage = `usage: orderly <command> [flags]

commands:
  serve    -config orderly.hcl               run the proxy
  explain  -config orderly.hcl -ip ADDR URL  decide one request and show why
  init     [-o FILE] [-backend URL] [-listen ADDR] /etc/apache2|/etc/httpd|httpd.conf
                                             write a commented orderly.hcl for shadow mode, listing what serve would refuse
  check    -config orderly.hcl               load everything serve would and report every refusal (exit 0 or 2)
  lint     [-format text|json|sarif] [-fail-on info|warning|error] httpd.conf
                                             every rule of the 2.2 -> 2.4 upgrade catalogue that applies
  translate [-o DIR] [-keep-compat] httpd.conf  write the 2.4 configuration
  translate -backend-guard -orderly-addr ADDR,... [-guard-token-file F]
                                             write the backend guard: the 2.4 server answers only orderly
  retire   -config orderly.hcl [-metrics FILE|URL] [-prometheus URL -window 30d] [-format table|json]
                                             the legacy rules that can go, and why
  version                                    print the version
`

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "lint" || os.Args[1] == "translate") {
		batchGC()
	}
	// ORDERLY_CPUPROFILE=file writes a CPU profile of the whole command
	// (for lint and translate, whose speed is measured: make bench-translate).
	if path := os.Getenv("ORDERLY_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			rpprof.StartCPUProfile(f)
			code := run(os.Args[1:], os.Stdout, os.Stderr)
			rpprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "init":
		return cmdInit(args[1:], stdout, stderr)
	case "lint":
		return cmdLint(args[1:], stdout, stderr)
	case "retire":
		return cmdRetire(args[1:], stdout, stderr)
	case "translate":
		return cmdTranslate(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "orderly", version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "orderly: unknown command %q\n%s", args[0], usage)
	return 2
}

// printDiags prints HCL diagnostics as file:line:column: message.
func printDiags(w io.Writer, diags hcl.Diagnostics) {
	for _, d := range diags {
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			fmt.Fprintf(w, "%s:%d:%d: %s\n", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
		} else {
			fmt.Fprintf(w, "%s\n", msg)
		}
	}
}

// printErrs prints load errors, one file:line: message each.
func printErrs(w io.Writer, err error) {
	var el apacheconf.ErrorList
	if errors.As(err, &el) {
		for _, e := range el {
			fmt.Fprintln(w, e.Error())
		}
		return
	}
	fmt.Fprintln(w, err)
}
