package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lintTestDir writes files (with @DIR@ replaced by the directory) into a
// new directory.
func lintTestDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(body, "@DIR@", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	// lint22 is a 2.2 configuration with errors (KeepAlive 5, Order
	// without mod_access_compat, no MPM), warnings and infos.
	lint22 = `LoadModule authz_host_module modules/mod_authz_host.so
KeepAlive 5
DocumentRoot @DIR@/www
<Directory @DIR@/www>
    AllowOverride None
    Order allow,deny
    Allow from all
</Directory>
`
	// lintWarn has warnings and infos, no error.
	lintWarn = `LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authz_core_module modules/mod_authz_core.so
DefaultType text/plain
MaxClients 150
`
	// lintClean has no finding at all.
	lintClean = `LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule authz_host_module modules/mod_authz_host.so
<Directory /srv/www>
    Require all granted
</Directory>
`
)

func TestCmdLintExitCodes(t *testing.T) {
	dir := lintTestDir(t, map[string]string{
		"22.conf": lint22, "warn.conf": lintWarn, "clean.conf": lintClean, "www/index.html": "x",
		"bad.conf": "LoadModule mime_module modules/mod_mime.so\n<Directory /srv>\nRequire all granted\n",
	})
	p := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  []string // substrings
		stderr  []string
		noStdio bool
	}{
		{"errors fail", []string{p("22.conf")}, 1, []string{p("22.conf") + ":2:1: DIR-07 error: KeepAlive 5: ", p("22.conf") + ":6:5: ERR-02 error: Order allow,deny: "}, nil, false},
		{"warnings pass by default", []string{p("warn.conf")}, 0, []string{"DIR-03 warning", "DIR-02 info"}, nil, false},
		{"warnings fail with -fail-on warning", []string{"-fail-on", "warning", p("warn.conf")}, 1, []string{"DIR-03 warning"}, nil, false},
		{"infos pass with -fail-on warning", []string{"-fail-on", "warning", "-format", "json", p("clean.conf")}, 0, []string{"[]"}, nil, false},
		{"clean", []string{p("clean.conf")}, 0, nil, nil, true},
		{"two files", []string{p("clean.conf"), p("warn.conf")}, 0, []string{"warn.conf:3:1: DIR-03"}, nil, false},
		{"unclosed section", []string{p("bad.conf")}, 2, nil, []string{p("bad.conf") + ":2: <Directory> was not closed."}, false},
		{"missing file", []string{p("nope.conf")}, 2, nil, []string{"nope.conf"}, false},
		{"no file", []string{}, 2, nil, []string{"no configuration file given"}, false},
		{"bad format", []string{"-format", "xml", p("clean.conf")}, 2, nil, []string{`unknown -format "xml"`}, false},
		{"bad fail-on", []string{"-fail-on", "fatal", p("clean.conf")}, 2, nil, []string{"-fail-on"}, false},
		{"bad flag", []string{"-nope", p("clean.conf")}, 2, nil, []string{"flag provided but not defined: -nope"}, false},
		{"help", []string{"-h"}, 0, nil, []string{"usage: orderly lint"}, false},
		{"summary", []string{p("22.conf")}, 1, []string{"\nlint: ", " findings (", "lint: by rule: "}, nil, false},
		{"only a family", []string{"-only", "ERR-*", p("22.conf")}, 1, []string{"ERR-02 error"}, nil, false},
		{"skip what fails", []string{"-skip", "ERR-*,DIR-07", "-only", "ERR-*,DIR-07", p("22.conf")}, 0, nil, nil, true},
		{"min severity", []string{"-min-severity", "warning", p("warn.conf")}, 0, []string{"DIR-03 warning"}, nil, false},
		{"min severity error", []string{"-min-severity", "error", p("warn.conf")}, 0, nil, nil, true},
		{"bad rule ID", []string{"-only", "NOPE-9", p("warn.conf")}, 2, nil, []string{`-only: no rule "NOPE-9"`}, false},
		{"bad min severity", []string{"-min-severity", "loud", p("warn.conf")}, 2, nil, []string{"-min-severity"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cmdLint(tt.args, &out, &errb)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errb.String())
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errb.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errb.String())
				}
			}
			if tt.noStdio && out.Len()+errb.Len() > 0 {
				t.Errorf("output on a clean configuration:\n%s%s", out.String(), errb.String())
			}
		})
	}
}

func TestCmdLintFormats(t *testing.T) {
	dir := lintTestDir(t, map[string]string{"httpd.conf": lint22, "www/.htaccess": "Options -Indexes\n", "extra/x.conf": "KeepAlive 7\n"})
	conf := filepath.Join(dir, "httpd.conf")

	var out, errb bytes.Buffer
	if code := cmdLint([]string{"-format", "json", conf}, &out, &errb); code != 1 {
		t.Fatalf("json: exit %d: %s", code, errb.String())
	}
	var findings []map[string]any
	if err := json.Unmarshal(out.Bytes(), &findings); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if len(findings) == 0 {
		t.Fatal("json: no findings")
	}
	for _, f := range findings {
		for _, k := range []string{"id", "severity", "file", "line", "column", "directive", "change", "fix"} {
			if _, ok := f[k]; !ok {
				t.Errorf("json finding without %q: %v", k, f)
			}
		}
	}

	out.Reset()
	if code := cmdLint([]string{"-format", "sarif", "-srcroot", dir, conf}, &out, &errb); code != 1 {
		t.Fatalf("sarif: exit %d: %s", code, errb.String())
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name    string
					Version string
					Rules   []struct{ ID string }
				}
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI       string
							URIBaseID string `json:"uriBaseId"`
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatalf("sarif: %v", err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "orderly" || log.Runs[0].Tool.Driver.Version != version {
		t.Fatalf("sarif header: %+v", log)
	}
	run := log.Runs[0]
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("ruleIndex %d for %s", r.RuleIndex, r.RuleID)
		}
		loc := r.Locations[0].PhysicalLocation.ArtifactLocation
		if loc.URIBaseID != "SRCROOT" || (loc.URI != "httpd.conf" && loc.URI != "www/.htaccess") {
			t.Errorf("location %+v", loc)
		}
	}

	// -D, -module, -server-root and -document-root reach the linter.
	dir2 := lintTestDir(t, map[string]string{
		"conf/httpd.conf":    "LoadModule mime_module modules/mod_mime.so\n<IfDefine EXTRA>\nInclude extra/x.conf\n</IfDefine>\n<IfModule mod_filter.c>\nAddOutputFilterByType DEFLATE text/html\n</IfModule>\n",
		"extra/x.conf":       "KeepAlive 7\n",
		"docs/sub/.htaccess": "Options -Indexes\n",
	})
	out.Reset()
	errb.Reset()
	code := cmdLint([]string{"-D", "EXTRA", "-module", "filter_module", "-server-root", dir2, "-document-root", filepath.Join(dir2, "docs"), filepath.Join(dir2, "conf", "httpd.conf")}, &out, &errb)
	if code != 1 {
		t.Fatalf("options: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"x.conf:1:1: DIR-07 error", "DIR-13 info", "sub/.htaccess:1:1: DIR-04 error"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("options: output lacks %q:\n%s", want, out.String())
		}
	}
}
