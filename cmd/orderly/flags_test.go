package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every command's -h and -help print its synopsis and every flag, and
// exit 0; a flag it does not define exits 2.
func TestCommandHelp(t *testing.T) {
	tests := []struct {
		command string
		flags   []string
	}{
		{"serve", []string{"-config", "-log.level", "-log.format"}},
		{"explain", []string{"-config", "-ip", "-method", "-user", "-password", "-header", "-policy", "-tls", "-cert", "-format"}},
		{"init", []string{"-o", "-force", "-listen", "-backend", "-semantics", "-server-root", "-document-root", "-path-map", "-D", "-module"}},
		{"check", []string{"-config"}},
		{"lint", []string{"-format", "-fail-on", "-server-root", "-document-root", "-srcroot", "-semantics", "-only", "-skip", "-min-severity", "-D", "-module"}},
		{"translate", []string{"-o", "-diff", "-keep-compat", "-semantics", "-server-root", "-document-root", "-module", "-D", "-backend-guard", "-orderly-addr", "-guard-token-file"}},
		{"retire", []string{"-config", "-metrics", "-prometheus", "-window", "-format"}},
	}
	for _, tt := range tests {
		for _, help := range []string{"-h", "-help", "--help"} {
			t.Run(tt.command+" "+help, func(t *testing.T) {
				var out, errb bytes.Buffer
				if code := run([]string{tt.command, help}, &out, &errb); code != 0 {
					t.Errorf("exit %d, want 0", code)
				}
				got := errb.String()
				if !strings.HasPrefix(got, "usage: orderly "+tt.command+" ") {
					t.Errorf("usage does not start with the synopsis:\n%s", got)
				}
				for _, f := range tt.flags {
					if !strings.Contains(got, "\n  "+f+" ") && !strings.Contains(got, "\n  "+f+"\n") {
						t.Errorf("usage lacks %s:\n%s", f, got)
					}
				}
			})
		}
		t.Run(tt.command+" bad flag", func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{tt.command, "-no-such-flag"}, &out, &errb); code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errb.String(), "flag provided but not defined: -no-such-flag") {
				t.Errorf("stderr:\n%s", errb.String())
			}
			if out.Len() > 0 {
				t.Errorf("stdout:\n%s", out.String())
			}
		})
	}
}
