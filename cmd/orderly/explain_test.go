package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/orderly-proxy/orderly/internal/golden"
)

var update = flag.Bool("update", false, "update golden files")

// TestExplainGolden runs orderly explain for each case in
// testdata/explain/*.txtar (legacy.conf, docroot/..., auth/..., an "args"
// file with one invocation a line) and compares the output with the
// case's "want" file. Run with -update to rewrite the golden output, and
// review the diff.
func TestExplainGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/explain/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden cases")
	}
	reviewed := golden.Load(t, "testdata/explain")
	defer reviewed.Finish(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var args, want []byte
			for _, f := range ar.Files {
				switch f.Name {
				case "args":
					args = f.Data
					continue
				case "want":
					want = f.Data
					continue
				}
				p := filepath.Join(dir, f.Name)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if strings.HasSuffix(f.Name, "/") {
					os.MkdirAll(p, 0o755)
					continue
				}
				data := bytes.ReplaceAll(f.Data, []byte("@DIR@"), []byte(dir))
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			hcl := "listen = \"127.0.0.1:0\"\nbackend \"httpd\" {\n  url = \"http://127.0.0.1:1\"\n}\nlegacy {\n  files = [\"legacy.conf\"]\n  document_root = \"docroot\"\n  semantics = \"2.4-compat\"\n}\n"
			os.WriteFile(filepath.Join(dir, "orderly.hcl"), []byte(hcl), 0o644)
			var got bytes.Buffer
			for _, line := range strings.Split(strings.TrimSpace(string(args)), "\n") {
				fields := strings.Fields(line)
				got.WriteString("$ orderly explain " + line + "\n")
				var out, errb bytes.Buffer
				code := run(append([]string{"explain", "-config", filepath.Join(dir, "orderly.hcl")}, fields...), &out, &errb)
				got.Write(out.Bytes())
				got.Write(errb.Bytes())
				if code != 0 {
					got.WriteString("exit " + strconv.Itoa(code) + "\n")
				}
				got.WriteString("\n")
			}
			out := stableIDs(bytes.ReplaceAll(got.Bytes(), []byte(dir), []byte("@DIR@")))
			if reviewed.Check(t, filepath.Base(file), out, want, *update) {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = out
					}
				}
				if want == nil {
					ar.Files = append(ar.Files, txtar.File{Name: "want", Data: out})
				}
				os.WriteFile(file, txtar.Format(ar), 0o644)
			}
		})
	}
}

// explainedID matches a rule ID as explain prints it.
var explainedID = regexp.MustCompile(`\b[0-9a-f]{12}\b`)

// stableIDs replaces each rule ID in out with <ruleNNNNNN>, numbered by
// first appearance, of the same width: an ID hashes the paths of the
// rule's sections, which hold the test's temporary directory, and the
// numbering still shows which lines are the same rule.
func stableIDs(out []byte) []byte {
	seen := map[string]string{}
	return explainedID.ReplaceAllFunc(out, func(id []byte) []byte {
		r, ok := seen[string(id)]
		if !ok {
			r = fmt.Sprintf("<rule%06d>", len(seen)+1)
			seen[string(id)] = r
		}
		return []byte(r)
	})
}
