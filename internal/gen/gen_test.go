package gen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate"
)

func newRand(seed, n uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, n)) }

// TestDeterministic: a seed gives the same case, byte for byte; another
// seed gives another case.
func TestDeterministic(t *testing.T) {
	for n := range uint64(50) {
		a := Archive(Generate(newRand(42, n)))
		b := Archive(Generate(newRand(42, n)))
		if !bytes.Equal(a, b) {
			t.Fatalf("seed 42/%d: two runs differ:\n%s\n---\n%s", n, a, b)
		}
		if c := Archive(Generate(newRand(43, n))); bytes.Equal(a, c) {
			t.Errorf("seeds 42/%d and 43/%d gave the same case", n, n)
		}
	}
}

// TestShape: 8-15 requests, a Require or Allow somewhere, no host names,
// no AllowOverride other than None, and the archive parses back as a
// corpus case with the same contents.
func TestShape(t *testing.T) {
	for n := range uint64(300) {
		c := Generate(newRand(7, n))
		if k := len(c.Requests); k < 8 || k > 15 {
			t.Errorf("case %d: %d requests, want 8-15", n, k)
		}
		conf := string(c.Legacy)
		for _, line := range strings.Split(conf, "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && strings.EqualFold(f[0], "AllowOverride") && (len(f) != 2 || f[1] != "None") {
				t.Errorf("case %d: %q", n, line)
			}
		}
		data := Archive(c)
		back, err := apachetest.ParseCase("gen.txtar", data)
		if err != nil {
			t.Fatalf("case %d: the archive does not parse: %v\n%s", n, err, data)
		}
		if string(back.Legacy) != conf || len(back.Requests) != len(c.Requests) || len(back.Files) != len(c.Files) {
			t.Fatalf("case %d: the archive does not round-trip:\n%s", n, data)
		}
		for i, rq := range back.Requests {
			orig := c.Requests[i]
			if rq.Method != orig.Method || rq.Target != orig.Target || rq.ClientIP != orig.ClientIP ||
				rq.User != orig.User || rq.Password != orig.Password || fmt.Sprint(rq.Header) != fmt.Sprint(orig.Header) {
				t.Fatalf("case %d request %d: %q does not round-trip (%+v vs %+v)", n, i, rq.Text, rq, orig)
			}
		}
	}
}

// TestLoads: every generated configuration loads in orderly's own loader.
// (That Apache accepts them is checked by TestRandomDifferential, which
// fails with the configuration when the oracle does not start.)
func TestLoads(t *testing.T) {
	dir := t.TempDir()
	for n := range uint64(500) {
		c := Generate(newRand(11, n))
		l, err := c.Materialize(filepath.Join(dir, fmt.Sprint(n)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = translate.Load([]string{l.Legacy}, translate.LoadOptions{Options: translate.Options{
			Semantics: translate.Compat24, DocumentRoot: l.DocRoot,
		}})
		if err != nil {
			b, _ := os.ReadFile(l.Legacy)
			t.Fatalf("case %d does not load: %v\n%s", n, err, b)
		}
	}
}

func TestSHA(t *testing.T) {
	// htpasswd -bs u password
	if got, want := SHA("password"), "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="; got != want {
		t.Errorf("SHA(password) = %s, want %s", got, want)
	}
}
