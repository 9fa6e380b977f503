package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run fails on a failed test, a failed package, a skip the allow-list
// does not name, or no test at all; a listed skip (or a subtest of a
// listed test) passes and is printed with its reason.
func TestReport(t *testing.T) {
	allow := map[string]string{"TestGen": "a generator"}
	tests := []struct {
		name, in string
		text     bool
		want     int
		says     string
	}{
		{"all pass", `{"Action":"pass","Package":"p","Test":"TestA"}`, false, 0, "1 passed, 0 failed, 0 skipped"},
		{"a failure", `{"Action":"output","Package":"p","Test":"TestA","Output":"boom\n"}
{"Action":"fail","Package":"p","Test":"TestA"}`, false, 1, "boom"},
		{"a package failure", `{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"q"}`, false, 1, "failed packages: q"},
		{"an allowed skip", `{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"skip","Package":"p","Test":"TestGen/sub"}`, false, 0, "skipped (allowed: a generator): TestGen/sub"},
		{"a silent skip", `{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"skip","Package":"p","Test":"TestB"}`, false, 1, "SKIPPED, not on the allow-list: TestB"},
		{"nothing ran", `{"Action":"skip","Package":"p","Test":"TestGen"}`, false, 1, "no test ran"},
		{"text", "=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- SKIP: TestB (0.00s)\nok  \tp\t0.1s\n", true, 1, "1 passed, 0 failed, 1 skipped"},
		{"text failure", "--- FAIL: TestA (0.00s)\nFAIL\tp\t0.1s\n", true, 1, "failed packages: p"},
	}
	for _, tt := range tests {
		r := &report{skipped: map[string]bool{}, output: map[string]*strings.Builder{}}
		var out strings.Builder
		if tt.text {
			r.readText(strings.NewReader(tt.in), &out)
		} else {
			r.readJSON(strings.NewReader(tt.in), &out, false)
		}
		if got := r.finish(&out, allow); got != tt.want || !strings.Contains(out.String(), tt.says) {
			t.Errorf("%s: exit %d, output:\n%s\nwant exit %d and %q", tt.name, got, out.String(), tt.want, tt.says)
		}
	}
}

// The repository's allow-list reads, and gives every skip a reason.
func TestAllowList(t *testing.T) {
	allow, err := readAllow("../../../testdata/skips.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(allow) == 0 {
		t.Fatal("the allow-list is empty")
	}
	bad := filepath.Join(t.TempDir(), "skips.txt")
	os.WriteFile(bad, []byte("TestX\n"), 0o644)
	if _, err := readAllow(bad); err == nil {
		t.Error("a line with no reason was accepted")
	}
}
