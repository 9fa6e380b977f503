package differential

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/golden"
	"github.com/orderly-proxy/orderly/translate/lint"
)

var updateLintIDs = flag.Bool("update", false, "TestUpgradeLintIDs: rewrite testdata/upgrade/*/lint-ids from lint's findings")

// TestUpgradeLintIDs lints each whole configuration of testdata/upgrade
// as `orderly lint` does (with Debian's envvars in the environment, as
// apache2ctl has them) and compares the sorted set of the IDs it reports
// with the fixture's golden file lint-ids, one ID a line. -update rewrites
// the files; each must then have its line in testdata/upgrade/REVIEWED
// saying why the set is what it is (internal/golden).
func TestUpgradeLintIDs(t *testing.T) {
	reviewed := golden.Load(t, "../../testdata/upgrade")
	defer reviewed.Finish(t)
	for _, fx := range upgradeFixtures {
		t.Run(fx.name, func(t *testing.T) {
			src := filepath.Join("../../testdata/upgrade", fx.name)
			st := materializeUpgrade(t, fx, src)
			if fx.envvars != "" {
				for _, kv := range st.env {
					if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "APACHE_") {
						t.Setenv(k, v)
					}
				}
			}
			var opt lint.Options
			if fx.docRoot != "" {
				opt.DocumentRoot = filepath.Join(st.root, fx.docRoot)
			}
			rep, err := lint.Lint([]string{st.top()}, opt)
			if err != nil {
				t.Fatalf("lint: %v", err)
			}
			var ids []string
			for _, f := range rep.Findings {
				ids = append(ids, f.ID)
			}
			slices.Sort(ids)
			got := []byte(strings.Join(slices.Compact(ids), "\n") + "\n")
			file := filepath.Join(src, "lint-ids")
			want, err := os.ReadFile(file)
			if err != nil && !*updateLintIDs {
				t.Fatalf("%v (run with -update)", err)
			}
			if reviewed.Check(t, fx.name+"/lint-ids", got, want, *updateLintIDs) {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
