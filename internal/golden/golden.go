// Package golden holds golden files to review. Each directory of golden
// outputs has a REVIEWED file: one line per golden output, its SHA-256,
// its name and why it is what it is. A test compares its output with the
// golden one as before, and the golden one with its REVIEWED line: a
// golden output that -update rewrote fails the test until a person has
// read the diff (printed by -update) and written the new hash with the
// reason into REVIEWED. So no golden changes without saying why.
//
// REVIEWED's format, one golden a line ("#" starts a comment):
//
//	<sha256 hex>  <name>  <why>
package golden

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Reviewed is a directory's REVIEWED file.
type Reviewed struct {
	path string
	sums map[string]string // name -> sha256 hex
	seen map[string]bool
}

// Load reads dir/REVIEWED.
func Load(t testing.TB, dir string) *Reviewed {
	t.Helper()
	r := &Reviewed{path: filepath.Join(dir, "REVIEWED"), sums: map[string]string{}, seen: map[string]bool{}}
	data, err := os.ReadFile(r.path)
	if err != nil {
		t.Fatalf("golden: %v (each golden output needs a line: sha256, name, why)", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || len(f[0]) != 64 {
			t.Fatalf("%s:%d: want \"<sha256>  <name>  <why>\"", r.path, n)
		}
		r.sums[f[1]] = f[0]
	}
	return r
}

// Sum is the hex SHA-256 of data, as REVIEWED writes it.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Check compares got with the golden output want (nil: none yet) of
// name. Without update a difference fails the test. With update it prints
// the diff and returns true: the caller writes got as the new golden
// output. Either way, the golden output that stands (got when updating)
// must be the one REVIEWED names, or the test fails with the line to
// write once the diff is reviewed.
func (r *Reviewed) Check(t testing.TB, name string, got, want []byte, update bool) bool {
	t.Helper()
	r.seen[name] = true
	write := false
	stands := want
	switch {
	case bytes.Equal(got, want):
	case update:
		fmt.Printf("golden %s changed:\n%s\n", name, Diff(want, got))
		write, stands = true, got
	default:
		t.Errorf("golden %s: the output differs (run with -update and review the diff):\n%s", name, Diff(want, got))
		return false
	}
	if sum := Sum(stands); r.sums[name] != sum {
		what := "changed"
		if r.sums[name] == "" {
			what = "is new"
		}
		t.Errorf("golden %s %s without its line in %s saying why: once the diff is reviewed, write\n%s  %s  <why>", name, what, r.path, sum, name)
	}
	return write
}

// Finish fails the test for REVIEWED lines of golden outputs no test
// checked (a golden file removed or renamed).
func (r *Reviewed) Finish(t testing.TB) {
	t.Helper()
	var stale []string
	for name := range r.sums {
		if !r.seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		t.Errorf("%s names %s, which no test checks: remove the line", r.path, name)
	}
}

// Diff is a line diff of a and b: the lines only one of them has, around
// the first difference, marked - (a) and + (b).
func Diff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	i := 0
	for i < len(al) && i < len(bl) && al[i] == bl[i] {
		i++
	}
	j, k := len(al)-1, len(bl)-1
	for j >= i && k >= i && al[j] == bl[k] {
		j--
		k--
	}
	var out strings.Builder
	fmt.Fprintf(&out, "@@ line %d @@\n", i+1)
	const most = 40
	n := 0
	for x := i; x <= j && n < most; x++ {
		out.WriteString("-" + al[x] + "\n")
		n++
	}
	for x := i; x <= k && n < most; x++ {
		out.WriteString("+" + bl[x] + "\n")
		n++
	}
	if n == most {
		out.WriteString("...\n")
	}
	return out.String()
}
