package lint

import (
	"cmp"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/orderly-proxy/orderly/internal/par"
)

// A findingList collects findings in blocks that are never moved: a big
// report (tens of thousands of findings) is not copied into an ever larger
// slice as it grows, and is put in order once, by [findingList.sorted].
type findingList struct {
	blocks [][]Finding
	n      int
}

// Block sizes: small for the usual configuration, larger for a big one.
const firstBlock, maxBlock = 64, 4096

func (fl *findingList) add(f Finding) {
	last := len(fl.blocks) - 1
	if last < 0 || len(fl.blocks[last]) == cap(fl.blocks[last]) {
		size := firstBlock
		if last >= 0 {
			size = min(2*cap(fl.blocks[last]), maxBlock)
		}
		fl.blocks = append(fl.blocks, make([]Finding, 0, size))
		last++
	}
	fl.blocks[last] = append(fl.blocks[last], f)
	fl.n++
}

// findingKey is what findings are ordered by, computed once per finding
// rather than in every comparison: the file's index in the files read
// (from 1; 0 for a file not read), the position, the rule's index in the
// catalogue, and seq, the order in which the finding was reported, which
// breaks ties and so makes the sort stable.
type findingKey struct {
	file, line, col, rule, seq int
}

// sorted returns the findings in the order the files were read, then by
// position, then by rule; findings that tie keep the order they were
// reported in.
func (fl *findingList) sorted(files []string) []Finding {
	if fl.n == 0 {
		return nil
	}
	fileIndex := make(map[string]int, len(files))
	for i, f := range files {
		fileIndex[f] = i + 1
	}
	all := make([]*Finding, 0, fl.n)
	for _, b := range fl.blocks {
		for i := range b {
			all = append(all, &b[i])
		}
	}
	// Findings come in runs from one file and one rule: look each up
	// once per run.
	var lastFile, lastID string
	var file, rule int
	key := func(seq int) findingKey {
		f := all[seq]
		if seq == 0 || f.Pos.File != lastFile {
			lastFile, file = f.Pos.File, fileIndex[f.Pos.File]
		}
		if seq == 0 || f.ID != lastID {
			lastID, rule = f.ID, ruleIndex[f.ID]
		}
		return findingKey{file, f.Pos.Line, f.Pos.Col, rule, seq}
	}
	out := make([]Finding, len(all))
	if p, ok := packing(len(all), key); ok {
		// One integer per finding sorts several times faster than
		// keys compared field by field.
		packed := make([]uint64, len(all))
		for i := range all {
			packed[i] = p.pack(key(i))
		}
		sortKeys(packed, bits.Len(uint(runtime.GOMAXPROCS(0)-1)))
		// A big report is megabytes of findings: copied on every core.
		const part = 4096
		par.Do((len(packed)+part-1)/part, func(c int) {
			for i := c * part; i < min((c+1)*part, len(packed)); i++ {
				out[i] = *all[packed[i]&p.seqMask]
			}
		})
		return out
	}
	keys := make([]findingKey, len(all))
	for i := range all {
		keys[i] = key(i)
	}
	slices.SortFunc(keys, func(a, b findingKey) int {
		if c := cmp.Compare(a.file, b.file); c != 0 {
			return c
		}
		if a.file == 0 { // files not read (none in practice): by name
			if c := strings.Compare(all[a.seq].Pos.File, all[b.seq].Pos.File); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col), cmp.Compare(a.rule, b.rule), cmp.Compare(a.seq, b.seq))
	})
	for i, k := range keys {
		out[i] = *all[k.seq]
	}
	return out
}

// sortKeys sorts keys, its halves apart on two cores, theirs on two more,
// and so on down levels deep, for a report of tens of thousands of
// findings; then merges them.
func sortKeys(keys []uint64, levels int) {
	if levels <= 0 || len(keys) < 1<<13 {
		slices.Sort(keys)
		return
	}
	half := len(keys) / 2
	var wg sync.WaitGroup
	wg.Go(func() { sortKeys(keys[:half], levels-1) })
	sortKeys(keys[half:], levels-1)
	wg.Wait()
	merged := make([]uint64, 0, len(keys))
	a, b := keys[:half], keys[half:]
	for len(a) > 0 && len(b) > 0 {
		if a[0] <= b[0] {
			merged, a = append(merged, a[0]), a[1:]
		} else {
			merged, b = append(merged, b[0]), b[1:]
		}
	}
	merged = append(append(merged, a...), b...)
	copy(keys, merged)
}

// A keyPacking lays the fields of a findingKey out in one integer, most
// significant first, each in as many bits as its largest value needs, so
// that the integers order as the keys do.
type keyPacking struct {
	shift   [4]uint // of file, line, col, rule; seq is in the lowest bits
	seqMask uint64
}

// packing returns the packing for the n keys key(0) ... key(n-1), if there
// is one: no field is negative, no file is unknown (its findings are
// ordered by file name) and the fields fit in 64 bits together (they do
// but for absurd positions).
func packing(n int, key func(seq int) findingKey) (keyPacking, bool) {
	var top findingKey
	for i := range n {
		k := key(i)
		if k.file <= 0 || k.line < 0 || k.col < 0 {
			return keyPacking{}, false
		}
		top = findingKey{max(top.file, k.file), max(top.line, k.line), max(top.col, k.col), max(top.rule, k.rule), max(top.seq, k.seq)}
	}
	widths := [5]uint{}
	total := uint(0)
	for i, v := range [5]int{top.file, top.line, top.col, top.rule, top.seq} {
		widths[i] = uint(bits.Len(uint(v)))
		total += widths[i]
	}
	if total > 64 {
		return keyPacking{}, false
	}
	p := keyPacking{seqMask: 1<<widths[4] - 1}
	at := widths[4]
	for i := 3; i >= 0; i-- {
		p.shift[i] = at
		at += widths[i]
	}
	return p, true
}

func (p keyPacking) pack(k findingKey) uint64 {
	return uint64(k.file)<<p.shift[0] | uint64(k.line)<<p.shift[1] | uint64(k.col)<<p.shift[2] | uint64(k.rule)<<p.shift[3] | uint64(k.seq)
}
