package lint

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// TestFindingListSorted checks findingList.sorted against a stable sort of
// the findings by file (in the order read, unread files first by name),
// line, column and rule: with small keys (packed in one integer), with an
// unread file, and with positions too large to pack.
func TestFindingListSorted(t *testing.T) {
	files := []string{"/c/httpd.conf", "/a/extra.conf", "/b/.htaccess"}
	ids := make([]string, 0, len(rules))
	for _, r := range rules {
		ids = append(ids, r.ID)
	}
	for _, tc := range []struct {
		name    string
		files   []string // where findings are
		maxLine int
	}{
		{"packed", files, 50},
		{"unread file", append(slices.Clone(files), "/z/unread", "/0/unread"), 50},
		{"huge lines", files, 1 << 62},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var fl findingList
			var want []Finding
			for i := range 10000 {
				id := ids[rng.IntN(len(ids))]
				r, _ := RuleByID(id)
				f := Finding{ID: id, Severity: r.Severity, Directive: fmt.Sprint(i),
					Pos: apacheconf.Pos{File: tc.files[rng.IntN(len(tc.files))], Line: rng.IntN(tc.maxLine), Col: rng.IntN(3)}}
				fl.add(record{pos: f.Pos, rule: ruleIndex[id], directive: f.Directive})
				want = append(want, f)
			}
			index := map[string]int{}
			for i, f := range files {
				index[f] = i + 1
			}
			slices.SortStableFunc(want, func(a, b Finding) int {
				return cmp.Or(cmp.Compare(index[a.Pos.File], index[b.Pos.File]), strings.Compare(a.Pos.File, b.Pos.File),
					cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(ruleIndex[a.ID], ruleIndex[b.ID]))
			})
			if got := fl.sorted(files); !reflect.DeepEqual(got, want) {
				t.Error("findings out of order")
			}
		})
	}
	var empty findingList
	if got := empty.sorted(files); got != nil {
		t.Errorf("no findings: %v, want nil", got)
	}
}

// TestRadixSort holds radixSort to a stable sort by the bits it sorts,
// on keys with many ties, whose lowest bits it leaves in the order given,
// and on all the bits of keys as large as they come.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 1000, 40000} {
		for _, tc := range []struct{ from, to uint }{{0, 64}, {12, 40}, {17, 18}, {20, 20}} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = rng.Uint64()>>(64-tc.to)&^(1<<tc.from-1) | uint64(i)&(1<<tc.from-1)
				if i%3 > 0 {
					keys[i] = keys[i-1]&^(1<<tc.from-1) | uint64(i)&(1<<tc.from-1) // a tie
				}
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>tc.from, b>>tc.from) })
			if got := radixSort(keys, tc.from, tc.to); !slices.Equal(got, want) {
				t.Fatalf("%d keys, bits %d to %d: not sorted", n, tc.from, tc.to)
			}
		}
	}
}
