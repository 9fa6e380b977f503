package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderly-proxy/orderly/policy"
)

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if rules, since, err := loadState(path); err != nil || rules != nil || !since.IsZero() {
		t.Fatalf("missing file: %v %v, want an empty state", rules, err)
	}
	first, last := time.Unix(1764000000, 5), time.Unix(1764000100, 7)
	a := &policy.Rule{ID: "a"}
	a.Restore(5, 2, first, last)
	a.AddNecessary(3)
	b := &policy.Rule{ID: "b"}
	b.AddCovered(policy.MethodGet, 7)
	b.AddCovered(2, 1)
	started := time.Unix(1763000000, 0)
	if err := saveState(path, []*policy.Rule{a, b}, started); err != nil {
		t.Fatal(err)
	}
	rules, since, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if !since.Equal(started) {
		t.Errorf("counting since %v, want %v", since, started)
	}
	if len(rules) != 2 || rules[0].ID != "a" || rules[1].ID != "b" {
		t.Fatalf("rules %v", rules)
	}
	m, d, l := rules[0].Stats()
	if m != 5 || d != 2 || !l.Equal(last) || !rules[0].FirstHit().Equal(first) {
		t.Errorf("a: %d %d %v %v", m, d, rules[0].FirstHit(), l)
	}
	if m, d, l := rules[1].Stats(); m != 0 || d != 0 || !l.IsZero() || !rules[1].FirstHit().IsZero() {
		t.Errorf("b: %d %d %v", m, d, l)
	}
	if n := rules[0].Necessary(); n != 3 {
		t.Errorf("a: necessary %d, want 3", n)
	}
	if c := rules[1].Covered(); c == nil || c[policy.MethodGet] != 7 || c[2] != 1 || rules[0].Covered() != nil {
		t.Errorf("coverage %v and %v, want GET 7 and POST 1 for b, none for a", rules[1].Covered(), rules[0].Covered())
	}
	// No temporary file left beside it.
	if es, _ := os.ReadDir(filepath.Dir(path)); len(es) != 1 {
		t.Errorf("files beside the state: %v", es)
	}
	for _, bad := range []string{"{", `{"version":2,"rules":{}}`} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, _, err := loadState(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
