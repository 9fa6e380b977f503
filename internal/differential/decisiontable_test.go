package differential

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/internal/decisiontable"
	"github.com/orderly-proxy/orderly/translate"
)

var (
	decisionTable = flag.String("decision-table", "../../testdata/decisiontable.txt", "the decision table (internal/decisiontable)")
	updateTable   = flag.Bool("update-table", false, "TestDecisionTable: rewrite the decision table from Apache's answers (2.4) and orderly's 2.2 model")
)

// TestDecisionTable replays every row of the decision table on Apache 2.4
// (mod_access_compat): its 2.4 column must be what Apache answers, so
// that package policy's tests, which decide the same rows, are held to
// Apache. With -update-table it rewrites the table: the 2.4 column from
// Apache, the 2.2 column from orderly's 2.2 model, which may differ from
// 2.4 only where decisiontable.Differs22 says why.
func TestDecisionTable(t *testing.T) {
	apachetest.Require(t)
	var rows []decisiontable.Row
	if *updateTable {
		rows = decisiontable.Rows()
	} else {
		var err error
		if rows, err = decisiontable.Load(*decisionTable); err != nil {
			t.Fatal(err)
		}
	}
	tmp := apachetest.TempDir(t)
	var oracle *apachetest.Server
	checked, differ := 0, 0
	for i, c := range decisiontable.Configs() {
		cs := &apachetest.Case{
			Name:   fmt.Sprintf("table-%d", i),
			Legacy: []byte(decisiontable.Section("@DOCROOT@", "@AUTH@", c)),
			Files: []txtar.File{
				{Name: "docroot/index.html", Data: []byte("top\n")},
				{Name: "docroot/" + decisiontable.Dir + "/index.html", Data: []byte("table\n")},
				{Name: "auth/users", Data: []byte(decisiontable.Users)},
				{Name: "auth/groups", Data: []byte(decisiontable.Groups)},
			},
		}
		dir := filepath.Join(tmp, fmt.Sprint(i%2))
		os.RemoveAll(dir)
		l, err := cs.Materialize(dir)
		if err != nil {
			t.Fatal(err)
		}
		if oracle == nil {
			oracle = apachetest.Start(t, l.OracleOptions())
		} else {
			oracle.Reload(t, l.OracleOptions())
		}
		var e22 interface {
			decide(decisiontable.Request) int
		}
		if *updateTable {
			eng, err := decisiontable.Engine(filepath.Join(tmp, "orderly", fmt.Sprint(i)), c, translate.Legacy22)
			if err != nil {
				t.Fatalf("%s: %v", c.Name(), err)
			}
			e22 = engineFunc(func(r decisiontable.Request) int { return decisiontable.Decide(eng, r) })
		}
		for j := range rows {
			r := &rows[j]
			if r.Config != c {
				continue
			}
			q := apachetest.Request{Method: r.Request.Method, Target: decisiontable.Path, ClientIP: r.Request.IP,
				User: r.Request.User, Password: r.Request.Password, HasAuth: r.Request.User != ""}
			got, err := apachetest.Do(oracle.Addr, q)
			if err != nil {
				t.Fatalf("%s | %s: %v", c.Name(), r.Request.Name(), err)
			}
			checked++
			if *updateTable {
				r.Want24, r.Want22 = got.Status, e22.decide(r.Request)
				if r.Want22 != r.Want24 {
					differ++
				}
				continue
			}
			if got.Status != r.Want24 {
				t.Errorf("%s | %s: Apache answers %d, the table says %d", c.Name(), r.Request.Name(), got.Status, r.Want24)
			}
		}
	}
	if *updateTable {
		old, _ := os.ReadFile(*decisionTable)
		data := decisiontable.Format(rows)
		if !bytes.Equal(old, data) {
			if err := os.WriteFile(*decisionTable, data, 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("decision table: rewrote %s (review the diff)\n", *decisionTable)
		}
		fmt.Printf("decision table: %d rows from Apache, %d where orderly's 2.2 model differs\n", checked, differ)
		return
	}
	if checked != len(rows) {
		t.Errorf("decision table: %d rows replayed of %d", checked, len(rows))
	}
	fmt.Printf("decision table: %d rows, every one Apache's answer\n", checked)
}

type engineFunc func(decisiontable.Request) int

func (f engineFunc) decide(r decisiontable.Request) int { return f(r) }
