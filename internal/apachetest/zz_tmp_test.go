package apachetest

import (
	"os"
	"testing"
)

func TestZZMaterialize(t *testing.T) {
	cs, err := LoadCorpus("../../testdata/corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Name == os.Getenv("ZZCASE") {
			l, err := c.Materialize("/tmp/m-" + c.Name)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(l.Legacy, l.DocRoot)
		}
	}
}
