package lint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// sarifOf lints the legacy22 golden configuration, extracted in dir (a
// new directory when dir is ""), with edit applied to its httpd.conf if
// not nil, and returns the directory and the SARIF text.
func sarifOf(t *testing.T, dir string, edit func(string) string) (string, []byte) {
	t.Helper()
	if dir == "" {
		dir, _ = extract(t, filepath.Join("testdata", "golden", "legacy22.txtar"))
	}
	conf := filepath.Join(dir, "httpd.conf")
	if edit != nil {
		b, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(conf, []byte(edit(string(b))), 0o644)
	}
	rep := lintFile(t, conf, Options{})
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, rep, SARIFOptions{BaseDir: dir, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return dir, buf.Bytes()
}

type obj = map[string]any

func get(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, p := range path {
		m, ok := v.(obj)
		if !ok {
			t.Fatalf("%s: not an object: %v", strings.Join(path, "."), v)
		}
		if v, ok = m[p]; !ok {
			t.Fatalf("missing property %s", strings.Join(path, "."))
		}
	}
	return v
}

func str(t *testing.T, v any, path ...string) string {
	t.Helper()
	s, ok := get(t, v, path...).(string)
	if !ok || s == "" {
		t.Fatalf("%s: want a non-empty string, got %v", strings.Join(path, "."), get(t, v, path...))
	}
	return s
}

func integer(t *testing.T, v any, path ...string) int {
	t.Helper()
	f, ok := get(t, v, path...).(float64)
	if !ok || f != float64(int(f)) {
		t.Fatalf("%s: want an integer, got %v", strings.Join(path, "."), get(t, v, path...))
	}
	return int(f)
}

func array(t *testing.T, v any, path ...string) []any {
	t.Helper()
	a, ok := get(t, v, path...).([]any)
	if !ok {
		t.Fatalf("%s: want an array", strings.Join(path, "."))
	}
	return a
}

var levels = map[string]bool{"none": true, "note": true, "warning": true, "error": true}

// TestSARIFStructure checks, property by property, what the SARIF 2.1.0
// schema requires and what GitHub code scanning reads: the log's $schema,
// version and runs; the driver's name, informationUri and rules (id,
// descriptions, help, defaultConfiguration.level, properties); every
// result's ruleId, ruleIndex (pointing at that rule), level, message,
// location (a relative URI under SRCROOT that names a real file, a region
// starting at line 1 or later) and fingerprint.
func TestSARIFStructure(t *testing.T) {
	dir, out := sarifOf(t, "", nil)
	var log obj
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if s := str(t, log, "$schema"); !strings.HasSuffix(s, "sarif-schema-2.1.0.json") {
		t.Errorf("$schema %q", s)
	}
	if v := str(t, log, "version"); v != "2.1.0" {
		t.Errorf("version %q", v)
	}
	runs := array(t, log, "runs")
	if len(runs) != 1 {
		t.Fatalf("%d runs", len(runs))
	}
	run := runs[0]
	if n := str(t, run, "tool", "driver", "name"); n != "orderly" {
		t.Errorf("driver name %q", n)
	}
	if u, err := url.Parse(str(t, run, "tool", "driver", "informationUri")); err != nil || !u.IsAbs() {
		t.Errorf("informationUri: %v", err)
	}
	base := str(t, run, "originalUriBaseIds", "SRCROOT", "uri")
	if !strings.HasPrefix(base, "file:///") || !strings.HasSuffix(base, "/") {
		t.Errorf("SRCROOT %q", base)
	}
	rules := array(t, run, "tool", "driver", "rules")
	if len(rules) != len(Rules()) {
		t.Errorf("%d rules, want %d", len(rules), len(Rules()))
	}
	seen := map[string]bool{}
	for i, r := range rules {
		id := str(t, r, "id")
		if id != Rules()[i].ID || seen[id] {
			t.Errorf("rule %d: id %s", i, id)
		}
		seen[id] = true
		str(t, r, "name")
		str(t, r, "shortDescription", "text")
		str(t, r, "fullDescription", "text")
		str(t, r, "help", "text")
		if l := str(t, r, "defaultConfiguration", "level"); !levels[l] || l != SARIFLevel(Rules()[i].Severity) {
			t.Errorf("%s: level %q", id, l)
		}
		if _, ok := get(t, r, "properties").(obj); !ok {
			t.Errorf("%s: properties is not an object", id)
		}
		array(t, r, "properties", "tags")
	}
	results := array(t, run, "results")
	if len(results) == 0 {
		t.Fatal("no results")
	}
	hexRe := regexp.MustCompile(`^[0-9a-f]{32}$`)
	fps := map[string]bool{}
	for _, res := range results {
		id := str(t, res, "ruleId")
		idx := integer(t, res, "ruleIndex")
		if idx < 0 || idx >= len(rules) || str(t, rules[idx], "id") != id {
			t.Errorf("result %s: ruleIndex %d", id, idx)
		}
		if l := str(t, res, "level"); !levels[l] {
			t.Errorf("result %s: level %q", id, l)
		}
		str(t, res, "message", "text")
		locs := array(t, res, "locations")
		if len(locs) != 1 {
			t.Fatalf("result %s: %d locations", id, len(locs))
		}
		uri := str(t, locs[0], "physicalLocation", "artifactLocation", "uri")
		if str(t, locs[0], "physicalLocation", "artifactLocation", "uriBaseId") != "SRCROOT" || strings.HasPrefix(uri, "/") || strings.Contains(uri, "..") {
			t.Errorf("result %s: uri %q is not relative to SRCROOT", id, uri)
		}
		p, err := url.PathUnescape(uri)
		if err != nil {
			t.Errorf("uri %q: %v", uri, err)
		} else if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("uri %q names no file: %v", uri, err)
		}
		if l := integer(t, locs[0], "physicalLocation", "region", "startLine"); l < 1 {
			t.Errorf("result %s: startLine %d", id, l)
		}
		if c := integer(t, locs[0], "physicalLocation", "region", "startColumn"); c < 1 {
			t.Errorf("result %s: startColumn %d", id, c)
		}
		fp := str(t, res, "partialFingerprints", FingerprintKey)
		if !hexRe.MatchString(fp) || fps[fp] {
			t.Errorf("result %s: fingerprint %q (bad or repeated)", id, fp)
		}
		fps[fp] = true
	}
}

type resultKey struct{ ruleID, fingerprint string }

func resultKeys(t *testing.T, out []byte) (map[resultKey]int, []any) {
	t.Helper()
	var log obj
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	run := array(t, log, "runs")[0]
	keys := map[resultKey]int{}
	for _, r := range array(t, run, "results") {
		loc := array(t, r, "locations")[0]
		keys[resultKey{str(t, r, "ruleId"), str(t, r, "partialFingerprints", FingerprintKey)}] = integer(t, loc, "physicalLocation", "region", "startLine")
	}
	return keys, array(t, run, "tool", "driver", "rules")
}

// TestSARIFStable: two runs give the same log; an edit elsewhere in the
// file (lines added above and between the findings) moves the lines but
// keeps every ruleId and fingerprint.
func TestSARIFStable(t *testing.T) {
	dir, a := sarifOf(t, "", nil)
	_, b := sarifOf(t, dir, nil)
	ka, ra := resultKeys(t, a)
	kb, rb := resultKeys(t, b)
	if len(ka) != len(kb) {
		t.Fatalf("two runs: %d and %d results", len(ka), len(kb))
	}
	for k, line := range ka {
		if kb[k] != line {
			t.Errorf("two runs differ on %v", k)
		}
	}
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		t.Error("rules differ between runs")
	}
	_, c := sarifOf(t, dir, func(s string) string {
		s = "# Edited: a comment and a directive added at the top.\nServerAdmin root@example.org\n\n" + s
		return strings.Replace(s, "HostnameLookups Off\n", "HostnameLookups Off\nServerSignature Off\nServerTokens Prod\n", 1)
	})
	kc, _ := resultKeys(t, c)
	moved := 0
	for k, line := range ka {
		l, ok := kc[k]
		if !ok {
			t.Errorf("after an edit elsewhere, %v is gone", k)
			continue
		}
		if l != line {
			moved++
		}
	}
	if moved == 0 {
		t.Error("the edit moved no finding: the test does not test")
	}
	if len(kc) != len(ka) {
		t.Errorf("after the edit: %d results, before: %d", len(kc), len(ka))
	}
}

// TestSARIFSchema validates the SARIF of every golden case against the
// official SARIF 2.1.0 JSON schema (testdata/sarif), with Python's
// jsonschema package. No Go JSON-schema validator is among the module's
// dependencies, so the test uses the one installed on the machine, and is
// skipped, saying so, when it is not there.
func TestSARIFSchema(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: SARIF schema validation skipped (TestSARIFStructure still checks the structure)")
	}
	if err := exec.Command(py, "-c", "import jsonschema").Run(); err != nil {
		t.Skip("python3 has no jsonschema package: SARIF schema validation skipped (TestSARIFStructure still checks the structure)")
	}
	// The official schema is not shipped with orderly (nothing fetched is
	// committed); point ORDERLY_SARIF_SCHEMA at a local copy of OASIS's
	// sarif-schema-2.1.0.json to validate against it.
	schema := os.Getenv("ORDERLY_SARIF_SCHEMA")
	if schema == "" {
		t.Skip("ORDERLY_SARIF_SCHEMA not set: schema validation skipped (TestSARIFStructure checks the structure)")
	}
	const script = `
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
cls.check_schema(schema)
errors = sorted(cls(schema).iter_errors(json.load(sys.stdin)), key=lambda e: list(e.absolute_path))
for e in errors[:20]:
    print("/".join(str(p) for p in e.absolute_path), e.message)
sys.exit(1 if errors else 0)
`
	archives, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	for _, archive := range archives {
		name := strings.TrimSuffix(filepath.Base(archive), ".txtar")
		t.Run(name, func(t *testing.T) {
			dir, _ := extract(t, archive)
			rep := lintFile(t, filepath.Join(dir, "httpd.conf"), Options{})
			var buf bytes.Buffer
			if err := WriteSARIF(&buf, rep, SARIFOptions{BaseDir: dir}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(py, "-c", script, schema)
			cmd.Stdin = &buf
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("SARIF does not validate against the 2.1.0 schema: %v\n%s", err, out)
			}
		})
	}
	// The validator must be able to fail: a log without runs is invalid.
	cmd := exec.Command(py, "-c", script, schema)
	cmd.Stdin = strings.NewReader(`{"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [{"level": "fatal"}]}]}`)
	if err := cmd.Run(); err == nil {
		t.Error("the schema check accepted an invalid log")
	}
}

// sarifByEncoder is WriteSARIF as encoding/json's Encoder writes the whole
// log, every result a sarifResult: what WriteSARIF writes, results and
// all, as TestWriteSARIFMatchesEncoder holds it to.
func sarifByEncoder(t *testing.T, r *Report, opt SARIFOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, &Report{}, opt); err != nil { // the log without results
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Abs(opt.BaseDir)
	if err != nil {
		t.Fatal(err)
	}
	ordinal := map[string]int{}
	for _, f := range r.Findings {
		loc := artifact(base, f.Pos.File)
		key := f.ID + "\x00" + loc.URI + "\x00" + normDirective(strings.ReplaceAll(f.Directive, base, "%SRCROOT%"))
		n := ordinal[key]
		ordinal[key] = n + 1
		sum := sha256.Sum256([]byte(key + "\x00" + strconv.Itoa(n)))
		log.Runs[0].Results = append(log.Runs[0].Results, sarifResult{
			RuleID:    f.ID,
			RuleIndex: ruleIndex[f.ID],
			Level:     SARIFLevel(f.Severity),
			Message:   sarifText{oneLine(f.Directive) + ": " + oneLine(f.Change) + " Fix: " + oneLine(f.Fix)},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
				ArtifactLocation: loc,
				Region:           sarifRegion{StartLine: max(f.Pos.Line, 1), StartColumn: max(f.Pos.Col, 1)},
			}}},
			PartialFingerprints: map[string]string{FingerprintKey: hex.EncodeToString(sum[:16])},
		})
	}
	buf.Reset()
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(log); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestWriteSARIFMatchesEncoder holds WriteSARIF, which writes the results
// itself, to the Encoder writing the whole log: for no finding, one, and
// more than a chunk's worth, in files under the base directory, outside
// it (with characters URIs escape) and in none, with directives that
// name the base directory or repeat (ordinals), texts on several lines
// and texts JSON escapes.
func TestWriteSARIFMatchesEncoder(t *testing.T) {
	base := t.TempDir()
	files := []string{filepath.Join(base, "httpd.conf"), filepath.Join(base, "sites", "a b%.conf"), "/etc/apache2/é.conf", filepath.Join(base, "www", ".htaccess")}
	texts := []string{"Order deny,allow", "Allow from 10.0.0.0/8", "Deny  from\tall", "<Directory \"" + base + "/www\">",
		"Require valid-user", "a \"quoted\" & <html> text\nover two lines", "\u2028 \xff"}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 9, 1300} {
		r := &Report{}
		for i := range n {
			rule := rules[rng.IntN(len(rules))]
			f := Finding{ID: rule.ID, Severity: rule.Severity,
				Pos:       apacheconf.Pos{File: files[(i/50)%len(files)], Line: i/3 + rng.IntN(2), Col: rng.IntN(3)},
				Directive: texts[rng.IntN(len(texts))], Change: texts[rng.IntN(len(texts))] + " " + rule.Change, Fix: rule.Fix}
			if i%512 == 0 {
				f.Pos.File = "" // no file, at the start of a chunk
			}
			r.Findings = append(r.Findings, f)
		}
		opt := SARIFOptions{BaseDir: base, Version: "test"}
		var got bytes.Buffer
		if err := WriteSARIF(&got, r, opt); err != nil {
			t.Fatal(err)
		}
		if want := sarifByEncoder(t, r, opt); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%d findings: WriteSARIF differs from the Encoder:\n%s\nwant:\n%s", n, head(got.String()), head(string(want)))
		}
	}
}
