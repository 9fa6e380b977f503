package lint

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"

	"github.com/orderly-proxy/orderly/internal/par"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// A record is a finding as a check reports it: its rule by index in the
// catalogue, which gives the ID and the severity, and its texts. It is
// smaller than a [Finding] (88 bytes rather than 128): a big report holds
// tens of thousands of them until [findingList.sorted] makes the Findings,
// once, in order.
type record struct {
	pos                    apacheconf.Pos
	rule                   int
	directive, change, fix string
}

// finding returns the Finding that r is.
func (r *record) finding() Finding {
	rule := &rules[r.rule]
	return Finding{ID: rule.ID, Severity: rule.Severity, Pos: r.pos, Directive: r.directive, Change: r.change, Fix: r.fix}
}

// A findingList collects records in blocks that are never moved: a big
// report (tens of thousands of findings) is not copied into an ever larger
// slice as it grows, and is put in order once, by [findingList.sorted].
type findingList struct {
	blocks [][]record
	n      int
}

// Block sizes: small for the usual configuration, larger for a big one.
// A record's sequence number is its block's index in the list followed by
// its index in the block, in blockBits bits: it orders the records as
// they were reported and says where each is.
const firstBlock, blockBits = 64, 12

// maxBlock is the capacity of the largest blocks.
const maxBlock = 1 << blockBits

// add appends r to the list, in a new block when the last is full.
func (fl *findingList) add(r record) {
	last := len(fl.blocks) - 1
	if last < 0 || len(fl.blocks[last]) == cap(fl.blocks[last]) {
		size := firstBlock
		if last >= 0 {
			size = min(2*cap(fl.blocks[last]), maxBlock)
		}
		fl.blocks = append(fl.blocks, make([]record, 0, size))
		last++
	}
	fl.blocks[last] = append(fl.blocks[last], r)
	fl.n++
}

// at returns the record with sequence number seq.
func (fl *findingList) at(seq int) *record {
	return &fl.blocks[seq>>blockBits][seq&(maxBlock-1)]
}

// findingKey is what findings are ordered by, computed once per finding
// rather than in every comparison: the file's index in the files read
// (from 1; 0 for a file not read), the position, the rule's index in the
// catalogue, and seq, the record's sequence number, which breaks ties and
// so makes the sort stable.
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
	// One pass over the records: each one's file (findings come in runs
	// from one file: looked up once per run), kept in packed until the
	// keys are packed there, and the largest field of any key.
	packed := make([]uint64, 0, fl.n)
	var top findingKey
	packable := true
	lastFile, file := "", -1
	fl.each(func(seq int, r *record) {
		if file < 0 || r.pos.File != lastFile {
			lastFile, file = r.pos.File, fileIndex[r.pos.File]
		}
		packed = append(packed, uint64(file))
		packable = packable && file > 0 && r.pos.Line >= 0 && r.pos.Col >= 0
		top = findingKey{max(top.file, file), max(top.line, r.pos.Line), max(top.col, r.pos.Col), max(top.rule, r.rule), seq}
	})
	out := make([]Finding, fl.n)
	if p, ok := packing(top); ok && packable {
		// One integer per finding sorts several times faster than
		// keys compared field by field.
		i := 0
		fl.each(func(seq int, r *record) {
			packed[i] = p.pack(findingKey{int(packed[i]), r.pos.Line, r.pos.Col, r.rule, seq})
			i++
		})
		packed = radixSort(packed, p.shift[3], p.width)
		// A big report is megabytes of findings: made on every core.
		const part = 4096
		par.Do((len(packed)+part-1)/part, func(c int) {
			for i := c * part; i < min((c+1)*part, len(packed)); i++ {
				out[i] = fl.at(int(packed[i] & p.seqMask)).finding()
			}
		})
		return out
	}
	keys := make([]findingKey, 0, fl.n)
	fl.each(func(seq int, r *record) {
		keys = append(keys, findingKey{int(packed[len(keys)]), r.pos.Line, r.pos.Col, r.rule, seq})
	})
	slices.SortFunc(keys, func(a, b findingKey) int {
		if c := cmp.Compare(a.file, b.file); c != 0 {
			return c
		}
		if a.file == 0 { // files not read (none in practice): by name
			if c := strings.Compare(fl.at(a.seq).pos.File, fl.at(b.seq).pos.File); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col), cmp.Compare(a.rule, b.rule), cmp.Compare(a.seq, b.seq))
	})
	for i, k := range keys {
		out[i] = fl.at(k.seq).finding()
	}
	return out
}

// each calls fn with every record and its sequence number, in the order
// they were reported.
func (fl *findingList) each(fn func(seq int, r *record)) {
	for b, block := range fl.blocks {
		for i := range block {
			fn(b<<blockBits|i, &block[i])
		}
	}
}

// radixBits is how many bits of the keys radixSort orders in one pass.
const radixBits = 8

// radixSort sorts keys by their bits from bit from (counted from the
// lowest) up to bit to, eight at a time, lowest first; keys equal in
// those bits keep their order. It returns the sorted keys: keys, or a
// slice of the same length it made. Keys whose lowest bits say where
// they came from, in order, are sorted without sorting those bits.
func radixSort(keys []uint64, from, to uint) []uint64 {
	if len(keys) == 0 {
		return keys
	}
	var tmp []uint64
	for shift := from; shift < to; shift += radixBits {
		var count [1 << radixBits]int
		for _, k := range keys {
			count[k>>shift&(1<<radixBits-1)]++
		}
		if count[keys[0]>>shift&(1<<radixBits-1)] == len(keys) {
			continue // every key has the same digit: nothing moves
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		if tmp == nil {
			tmp = make([]uint64, len(keys))
		}
		for _, k := range keys {
			d := k >> shift & (1<<radixBits - 1)
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}

// A keyPacking lays the fields of a findingKey out in one integer, most
// significant first, each in as many bits as its largest value needs, so
// that the integers order as the keys do.
type keyPacking struct {
	shift   [4]uint // of file, line, col, rule; seq is in the lowest bits
	width   uint    // of all the fields
	seqMask uint64
}

// packing returns the packing for keys whose fields are at most top's,
// if they fit in 64 bits together (they do but for absurd positions).
func packing(top findingKey) (keyPacking, bool) {
	widths := [5]uint{}
	total := uint(0)
	for i, v := range [5]int{top.file, top.line, top.col, top.rule, top.seq} {
		widths[i] = uint(bits.Len(uint(v)))
		total += widths[i]
	}
	if total > 64 {
		return keyPacking{}, false
	}
	p := keyPacking{width: total, seqMask: 1<<widths[4] - 1}
	at := widths[4]
	for i := 3; i >= 0; i-- {
		p.shift[i] = at
		at += widths[i]
	}
	return p, true
}

// pack returns k laid out in one integer.
func (p keyPacking) pack(k findingKey) uint64 {
	return uint64(k.file)<<p.shift[0] | uint64(k.line)<<p.shift[1] | uint64(k.col)<<p.shift[2] | uint64(k.rule)<<p.shift[3] | uint64(k.seq)
}
