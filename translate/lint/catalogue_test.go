package lint

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// The catalogue in docs/ is the rule table as lint reports it, every ID
// with an anchor SARIF's helpUri points to; -update writes it.
func TestCatalogueDoc(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# The upgrade catalogue\n\n")
	b.WriteString("Every finding `orderly lint` reports carries one of these IDs: the rules of the Apache 2.2 to 2.4\n")
	b.WriteString("upgrade document (BLD modules, DIR directives, BEH behaviour, AUTH access control, ERR errors) and\n")
	b.WriteString("orderly's own checks (ORD). SARIF output links each rule here (`helpUri`). `-only` and `-skip` take\n")
	b.WriteString("these IDs or a family (`AUTH-*`). This page is written from the rule table by\n")
	b.WriteString("`go test ./translate/lint -run TestCatalogueDoc -update`.\n")
	family := ""
	for _, r := range Rules() {
		if f, _, _ := strings.Cut(r.ID, "-"); f != family {
			family = f
			b.WriteString("\n## " + f + ": " + category(r.ID) + "\n")
		}
		b.WriteString("\n### " + r.ID + "\n\n")
		b.WriteString("**" + r.Short + "** (" + string(r.Severity) + ", " + r.Name + "; " + r.Source + ")\n\n")
		b.WriteString(r.Change + "\n\n")
		b.WriteString("Fix: " + r.Fix + "\n")
	}
	const path = "../../" + CatalogueDoc
	if *update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is out of date: run go test ./translate/lint -run TestCatalogueDoc -update and review the diff", CatalogueDoc)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(got), "\n### "+r.ID+"\n") || !strings.HasSuffix(HelpURI(r.ID), "#"+strings.ToLower(r.ID)) {
			t.Errorf("%s: no entry for its helpUri", r.ID)
		}
	}
}
