package policy_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/orderly-proxy/orderly/internal/decisiontable"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/walk"
)

// TestDecisionTable decides every row of the decision table (Order x which
// lists match x Satisfy, for the section or in <Limit GET> x Require x
// credentials x method) under both semantics: the 2.4 column is Apache
// 2.4's answer (internal/differential replays it on Apache), the 2.2
// column orderly's 2.2 model, which differs from 2.4 only where
// decisiontable.Differs22 says why.
func TestDecisionTable(t *testing.T) {
	rows, err := decisiontable.Load("../testdata/decisiontable.txt")
	if err != nil {
		t.Fatal(err)
	}
	engines := map[decisiontable.Config][2]*walk.Engine{}
	dir := t.TempDir()
	for i, c := range decisiontable.Configs() {
		var pair [2]*walk.Engine
		for k, sem := range []translate.Semantics{translate.Compat24, translate.Legacy22} {
			e, err := decisiontable.Engine(filepath.Join(dir, fmt.Sprintf("%d-%d", i, k)), c, sem)
			if err != nil {
				t.Fatalf("%s (%s): %v", c.Name(), sem, err)
			}
			pair[k] = e
		}
		engines[c] = pair
	}
	failed := 0
	for _, r := range rows {
		e := engines[r.Config]
		got24, got22 := decisiontable.Decide(e[0], r.Request), decisiontable.Decide(e[1], r.Request)
		if got24 != r.Want24 || got22 != r.Want22 {
			failed++
			if failed <= 20 {
				t.Errorf("%s | %s: 2.4-compat %d, 2.2 %d; want %d, %d", r.Config.Name(), r.Request.Name(), got24, got22, r.Want24, r.Want22)
			}
		}
		if why := decisiontable.Differs22(r); (why != "") != (r.Want22 != r.Want24) {
			t.Errorf("%s | %s: the table's 2.2 answer %d and 2.4 answer %d, Differs22 says %q", r.Config.Name(), r.Request.Name(), r.Want22, r.Want24, why)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d rows decided otherwise", failed, len(rows))
	}
}
