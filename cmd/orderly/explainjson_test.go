package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate"
)

// explainDir is a configuration whose /admin/ only 10.0.0.0/8 reaches,
// and the rule IDs of its lines by text.
func explainDir(t *testing.T) (dir string, ids map[string]string) {
	t.Helper()
	legacy := "<Directory @DIR@/docroot/admin>\nOrder deny,allow\nDeny from all\nAllow from 10.0.0.0/8\n</Directory>\n"
	dir = writeFiles(t, map[string]string{"orderly.hcl": goodHCL, "legacy.conf": legacy, "docroot/admin/index.html": "x", "docroot/index.html": "x"})
	rc, _, diags := loadConfig(filepath.Join(dir, "orderly.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg, err := translate.Load(rc.LegacyFiles, rc.Legacy)
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]string{}
	for _, r := range cfg.Rules {
		ids[r.Text] = r.ID
	}
	return dir, ids
}

// explain shows each rule with the ID legacy.demote takes.
func TestExplainRuleIDs(t *testing.T) {
	dir, ids := explainDir(t)
	tests := []struct {
		ip   string
		want []string // lines of the output, after rule IDs are filled in
	}{
		{"203.0.113.50", []string{
			"rule:     [" + ids["Deny from all"] + "] legacy.conf:3 Deny from all",
			"  compat  " + ids["Order deny,allow"] + "  legacy.conf:2 Order deny,allow",
			"  compat  " + ids["Allow from 10.0.0.0/8"] + "  legacy.conf:4 Allow from 10.0.0.0/8",
			"  compat                Satisfy (Apache's default)",
		}},
		{"10.1.2.3", []string{"rule:     [" + ids["Allow from 10.0.0.0/8"] + "] legacy.conf:4 Allow from 10.0.0.0/8"}},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-ip", tt.ip, "/admin/"}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), "\n"+w) {
					t.Errorf("no line starting %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// explain -format json: the documented fields, with the decision, the
// rule IDs and the trail.
func TestExplainJSON(t *testing.T) {
	dir, ids := explainDir(t)
	explain := func(t *testing.T, args ...string) explanation {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl"), "-format", "json"}, args...), &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		// The top-level fields are the documented ones: those always
		// present, and the optional ones.
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &fields); err != nil {
			t.Fatalf("%v:\n%s", err, out.String())
		}
		always := []string{"request", "policy", "verdict", "status", "layer", "rule", "sections", "compat_from", "require_from", "trail", "logs", "semantics", "differences", "not_evaluated"}
		optional := []string{"uri", "filename", "path_info", "index", "rewrite"}
		for _, k := range always {
			if _, ok := fields[k]; !ok {
				t.Errorf("no field %q", k)
			}
		}
		for k := range fields {
			if !slices.Contains(always, k) && !slices.Contains(optional, k) {
				t.Errorf("undocumented field %q", k)
			}
		}
		var ex explanation
		dec := json.NewDecoder(&out)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ex); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	tests := []struct {
		ip, target        string
		verdict           string
		status            int
		ruleID            string
		trail             int // events
		logs              int
		compatFromSection bool
	}{
		{"203.0.113.50", "/admin/", "deny", 403, ids["Deny from all"], 5, 1, true},
		{"10.1.2.3", "http://example.com/admin/", "allow", 0, ids["Allow from 10.0.0.0/8"], 5, 0, true},
		{"203.0.113.50", "/index.html", "allow", 0, "", 5, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.ip+" "+tt.target, func(t *testing.T) {
			ex := explain(t, "-ip", tt.ip, tt.target)
			if ex.Request.Client != tt.ip || ex.Request.Method != "GET" || ex.Policy != "legacy" {
				t.Errorf("request %+v, policy %q", ex.Request, ex.Policy)
			}
			if ex.Verdict != tt.verdict || ex.Status != tt.status || ex.Layer != "compat" {
				t.Errorf("verdict %q %d (%s layer), want %q %d (compat)", ex.Verdict, ex.Status, ex.Layer, tt.verdict, tt.status)
			}
			switch {
			case ex.Rule == nil:
				t.Error("no rule")
			case tt.ruleID == "" && !ex.Rule.Default:
				t.Errorf("rule %+v, want Apache's default", ex.Rule)
			case tt.ruleID != "" && (ex.Rule.ID != tt.ruleID || ex.Rule.File != "legacy.conf" || ex.Rule.Line == 0):
				t.Errorf("rule %+v, want ID %s in legacy.conf", ex.Rule, tt.ruleID)
			}
			if len(ex.Trail) != tt.trail {
				t.Errorf("%d trail events, want %d: %+v", len(ex.Trail), tt.trail, ex.Trail)
			}
			for _, e := range ex.Trail {
				if e.Directive == "" || e.Result == "" || (e.Rule != nil && e.Rule.ID != ids[e.Directive]) {
					t.Errorf("trail event %+v (rule %+v)", e, e.Rule)
				}
			}
			if len(ex.Logs) != tt.logs || (tt.logs > 0 && !strings.Contains(ex.Logs[0], "AH01797")) {
				t.Errorf("logs %q", ex.Logs)
			}
			if (ex.CompatFrom != nil) != tt.compatFromSection || ex.RequireFrom != nil {
				t.Errorf("compat from %+v, require from %+v", ex.CompatFrom, ex.RequireFrom)
			}
			if tt.compatFromSection && (len(ex.Sections) != 1 || *ex.CompatFrom != ex.Sections[0] || ex.Sections[0].Line != 1) {
				t.Errorf("sections %+v, compat from %+v", ex.Sections, ex.CompatFrom)
			}
			if s := ex.Semantics; s.InForce != "2.4-compat" || s.Other != "2.2" || !s.OtherLoads || !s.Same || s.OtherVerdict != tt.verdict {
				t.Errorf("semantics %+v", s)
			}
			if ex.NotEvaluated == nil || ex.Differences == nil {
				t.Error("a list is null")
			}
		})
	}
}

// A bad -format exits 2 before anything is loaded.
func TestExplainBadFormat(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"explain", "-config", "nowhere.hcl", "-ip", "10.1.2.3", "-format", "yaml", "/"}, &out, &errb); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), `-format "yaml"`) || out.Len() > 0 {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}
