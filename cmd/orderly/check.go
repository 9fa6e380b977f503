package main

import (
	"fmt"
	"io"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// checkDirLimit bounds the directories check visits under each
// configuration's roots in search of .htaccess files.
const checkDirLimit = 200000

const checkUsage = `usage: orderly check [-config orderly.hcl]

Loads everything serve would load and reads every .htaccess file below the
document roots, reporting each refusal as file:line: message.

Exit status: 0 serve would start, 2 a refusal or bad usage.
`

// cmdCheck loads everything serve would load (the HCL file, the legacy
// and native configurations, the document roots) and reads every
// .htaccess file below the roots as a request would, reporting each
// refusal as file:line: message: exit 0 when serve would start and no
// .htaccess file answers 500, 2 otherwise. For pipelines.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", checkUsage, stderr)
	configPath := fs.String("config", "orderly.hcl", "configuration file")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "orderly check: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	rc, pols, ok := setup(*configPath, stderr)
	if !ok {
		fmt.Fprintf(stderr, "orderly check: %s: serve would refuse to start\n", *configPath)
		return 2
	}
	bad := 0
	for _, e := range []*walk.Engine{pols.Legacy, pols.Native} {
		if e == nil {
			continue
		}
		lines := htaccessRefusals(e)
		for _, line := range lines {
			bad++
			fmt.Fprintln(stderr, line)
		}
		for _, u := range e.Config().Unfaithful {
			fmt.Fprintf(stdout, "forwarded, not evaluated: %s: %s (legacy.forward_unfaithful)\n", u.Pos, u.Text)
		}
	}
	for _, l := range rc.OnStderr {
		fmt.Fprintln(stderr, "warning:", l)
	}
	if bad > 0 {
		fmt.Fprintf(stderr, "orderly check: %s: %d refusal(s)\n", *configPath, bad)
		return 2
	}
	fmt.Fprintf(stdout, "orderly check: %s: serve would start; every .htaccess file below the document roots loads\n", *configPath)
	return 0
}

// htaccessRefusals reads every .htaccess file below the engine's roots as
// a request would: each refusal as file:line: message and who answers 500,
// and a last line when the search stopped early.
func htaccessRefusals(e *walk.Engine) []string {
	var lines []string
	roots := e.Roots()
	errs, truncated := e.CheckHtaccess(roots, checkDirLimit)
	seen := map[string]bool{}
	for _, err := range errs {
		line := err.Error()
		if seen[line] {
			continue
		}
		seen[line] = true
		who := "Apache and orderly answer"
		if err.Own {
			who = "orderly answers (it does not evaluate this, and fails closed; legacy.forward_unfaithful forwards it)"
		}
		lines = append(lines, fmt.Sprintf("%s (.htaccess: %s 500 for this directory and below)", line, who))
	}
	if truncated {
		lines = append(lines, fmt.Sprintf("orderly check: stopped after %d directories under %v; the .htaccess files beyond were not read", checkDirLimit, roots))
	}
	return lines
}
