package importrules

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/orderly-proxy/orderly"

// deps returns the packages of this module that pkg depends on, tests
// included (go list -deps -test), itself and its test variants excepted.
func deps(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, pkg := range pkgs {
		cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}", pkg)
		cmd.Dir = "../.."
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			p, _, _ := strings.Cut(line, " ") // "pkg [pkg.test]" for a test variant
			if p == pkg || p == pkg+".test" || p == pkg+"_test" || !strings.HasPrefix(p, module+"/") || slices.Contains(out[pkg], p) {
				continue
			}
			out[pkg] = append(out[pkg], p)
		}
	}
	return out
}

// all returns every package of the module.
func all(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = "../.."
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	return strings.Fields(string(b))
}

func under(p, dir string) bool {
	return p == module+"/"+dir || strings.HasPrefix(p, module+"/"+dir+"/")
}

// TestImportRules holds the rules, every package's tests included:
//   - policy, the decision engine, imports nothing of orderly's;
//   - translate/directive, the directive table, only the syntax and
//     internal helpers;
//   - translate/apacheconf, the syntax, imports only the standard library
//     and internal helpers;
//   - nothing in translate/ imports proxy (proxy/authfile, the reader of
//     Apache's password and group files, proxy/digest, mod_auth_digest's
//     protocol and its configuration's values, and proxy/ldapauth,
//     mod_authnz_ldap's configuration and client, are below both);
//   - translate, the model, imports neither translate/convert (the 2.4
//     writer) nor translate/lint (the findings), which are above it;
//   - translate/convert imports neither translate/lint nor translate/walk
//     (the request-time walk);
//   - nothing imports cmd/.
//
// The one exception is listed in allowed with its reason; an exception no
// longer needed fails the test too, so that the list only shrinks.
func TestImportRules(t *testing.T) {
	pkgs := all(t)
	d := deps(t, pkgs...)
	type dep struct{ from, to string }
	allowed := map[dep]string{
		// TestDecisionTable decides every row of the decision table
		// through the whole stack (translate, walk); it belongs with
		// internal/decisiontable, and moves there once policy's mutation
		// kill rate is measured without it.
		{module + "/policy", module + "/internal/decisiontable"}: "policy's decision-table test",
		// apacheconf's tests compare its messages with Apache's through
		// internal/apachetest, which reads the directive table.
		{module + "/translate/apacheconf", module + "/translate/directive"}: "apacheconf's tests, through internal/apachetest",
	}
	used := map[dep]bool{}
	check := func(from, to, rule string) {
		if _, ok := allowed[dep{from, to}]; ok {
			used[dep{from, to}] = true
			return
		}
		// What an allowed import brings along is allowed with it.
		for a := range allowed {
			if a.from == from && slices.Contains(d[from], a.to) && slices.Contains(d[a.to], to) {
				used[a] = true
				return
			}
		}
		t.Errorf("%s imports %s: %s", from, to, rule)
	}
	for _, p := range pkgs {
		for _, q := range d[p] {
			switch {
			case p == module+"/policy":
				check(p, q, "policy imports nothing of orderly's")
			case p == module+"/translate/directive" && !under(q, "internal") && q != module+"/translate/apacheconf":
				check(p, q, "the directive table is below the model: it reads only the syntax (in its tests)")
			case p == module+"/translate/apacheconf" && !under(q, "internal"):
				check(p, q, "the syntax imports only the standard library and internal helpers")
			case under(p, "translate") && under(q, "proxy") && q != module+"/proxy/authfile" && q != module+"/proxy/digest" && q != module+"/proxy/ldapauth":
				check(p, q, "nothing in translate/ imports proxy")
			case p == module+"/translate" && (under(q, "translate/convert") || under(q, "translate/lint")):
				check(p, q, "translate does not import translate/convert or translate/lint")
			case under(p, "translate/convert") && (under(q, "translate/lint") || under(q, "translate/walk")):
				check(p, q, "translate/convert does not import translate/lint or translate/walk")
			case under(q, "cmd"):
				check(p, q, "nothing imports cmd/")
			}
		}
	}
	for a, why := range allowed {
		if !used[a] {
			t.Errorf("the exception %s -> %s (%s) is no longer needed: delete it", a.from, a.to, why)
		}
	}
}
