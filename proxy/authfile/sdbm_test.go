package authfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sdbmWriter builds SDBM databases in memory as apr_sdbm_store of
// apr-util writes them (sdbm.c: getpage, makroom, setdbit; sdbm_pair.c:
// fitpair, putpair, splpage), for tests: TestSDBMWriterMatchesHttxt2dbm
// checks that it writes the bytes httxt2dbm writes.
type sdbmWriter struct {
	pages    map[int64][]byte
	dir      []byte
	unsigned bool // hash bytes as unsigned chars (ARM) instead of signed (x86)
}

func newSDBMWriter(unsigned bool) *sdbmWriter {
	return &sdbmWriter{pages: make(map[int64][]byte), unsigned: unsigned}
}

func (w *sdbmWriter) getdbit(d int64) bool {
	return d/8 < int64(len(w.dir)) && w.dir[d/8]&(1<<(d%8)) != 0
}

// setdbit sets bit d, growing the .dir file by whole blocks.
func (w *sdbmWriter) setdbit(d int64) {
	for int64(len(w.dir)) <= d/8 {
		w.dir = append(w.dir, make([]byte, sdbmDirBlock)...)
	}
	w.dir[d/8] |= 1 << (d % 8)
}

func (w *sdbmWriter) page(p int64) []byte {
	if pg := w.pages[p]; pg != nil {
		return pg
	}
	pg := make([]byte, sdbmPageSize)
	w.pages[p] = pg
	return pg
}

func ino(pg []byte, i int) int { return int(int16(binary.LittleEndian.Uint16(pg[2*i:]))) }

func setIno(pg []byte, i, v int) { binary.LittleEndian.PutUint16(pg[2*i:], uint16(int16(v))) }

func fitpair(pg []byte, need int) bool {
	n := ino(pg, 0)
	off := sdbmPageSize
	if n > 0 {
		off = ino(pg, n)
	}
	return need+4 <= off-(n+1)*2
}

func putpair(pg []byte, key, val []byte) {
	n := ino(pg, 0)
	off := sdbmPageSize
	if n > 0 {
		off = ino(pg, n)
	}
	off -= len(key)
	copy(pg[off:], key)
	setIno(pg, n+1, off)
	off -= len(val)
	copy(pg[off:], val)
	setIno(pg, n+2, off)
	setIno(pg, 0, n+2)
}

// store adds a pair whose key is not yet in the database.
func (w *sdbmWriter) store(key, val string) error {
	need := len(key) + len(val)
	if key == "" || need > 1008 {
		return fmt.Errorf("pair %q too big or empty", key)
	}
	h := sdbmHash([]byte(key), w.unsigned)
	var dbit int64
	hbit := 0
	maxbno := int64(len(w.dir)) * 8
	for dbit < maxbno && w.getdbit(dbit) {
		if h&(1<<hbit) != 0 {
			dbit = 2*dbit + 2
		} else {
			dbit = 2*dbit + 1
		}
		hbit++
	}
	curbit, hmask := dbit, int64(1)<<hbit-1
	pagbno := int64(h) & hmask
	pg := w.page(pagbno)
	if !fitpair(pg, need) {
		for range 10 { // SPLTMAX
			sbit := hmask + 1
			cur := bytes.Clone(pg)
			clear(pg)
			twin := make([]byte, sdbmPageSize)
			end := sdbmPageSize
			for j := range ino(cur, 0) / 2 {
				k, v := cur[ino(cur, 2*j+1):end], cur[ino(cur, 2*j+2):ino(cur, 2*j+1)]
				if int64(sdbmHash(k, w.unsigned))&sbit != 0 {
					putpair(twin, k, v)
				} else {
					putpair(pg, k, v)
				}
				end = ino(cur, 2*j+2)
			}
			newp := (int64(h) & hmask) | sbit
			w.pages[newp] = twin
			if int64(h)&sbit != 0 {
				pagbno, pg = newp, twin
			}
			w.setdbit(curbit)
			if fitpair(pg, need) {
				break
			}
			if int64(h)&sbit != 0 {
				curbit = 2*curbit + 2
			} else {
				curbit = 2*curbit + 1
			}
			hmask |= sbit
		}
		if !fitpair(pg, need) {
			return fmt.Errorf("no room for %q after SPLTMAX splits", key)
		}
	}
	putpair(pg, []byte(key), []byte(val))
	return nil
}

// files returns the .pag and .dir files.
func (w *sdbmWriter) files() (pag, dir []byte) {
	var last int64 = -1
	for p := range w.pages {
		last = max(last, p)
	}
	pag = make([]byte, (last+1)*sdbmPageSize)
	for p, pg := range w.pages {
		copy(pag[p*sdbmPageSize:], pg)
	}
	return pag, bytes.Clone(w.dir)
}

// buildSDBM returns the files of a database of pairs, stored in order.
func buildSDBM(t testing.TB, unsigned bool, pairs [][2]string) (pag, dir []byte) {
	t.Helper()
	w := newSDBMWriter(unsigned)
	for _, p := range pairs {
		if err := w.store(p[0], p[1]); err != nil {
			t.Fatal(err)
		}
	}
	return w.files()
}

// testPairs returns n distinct pairs, with keys of all kinds: ASCII,
// UTF-8 and Latin-1 (bytes of 0x80 and above, hashed differently by
// signed and unsigned chars) and some long ones.
func testPairs(n int, seed uint64) [][2]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"user", "jürgen", "日本", "o'brien", "x", "a.b-c_d", "\xff\xfe", "caf\xe9"}
	var pairs [][2]string
	seen := make(map[string]bool)
	for i := 0; len(pairs) < n; i++ {
		key := fmt.Sprintf("%s%d", words[rng.IntN(len(words))], i)
		if rng.IntN(50) == 0 {
			key += strings.Repeat("k", rng.IntN(300))
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		val := fmt.Sprintf("%s:g%d,all:comment-%d", secretHashes["apr1"], i%7, i)
		if rng.IntN(40) == 0 {
			val = strings.Repeat("v", rng.IntN(400))
		}
		pairs = append(pairs, [2]string{key, val})
	}
	return pairs
}

// checkSDBM checks that db holds exactly pairs, by lookup and by
// iteration, and finds none of absent.
func checkSDBM(t *testing.T, db *SDBM, pairs [][2]string, absent []string) {
	t.Helper()
	if db.Len() != len(pairs) {
		t.Errorf("Len() = %d, want %d", db.Len(), len(pairs))
	}
	want := make(map[string]string, len(pairs))
	for _, p := range pairs {
		want[p[0]] = p[1]
		if v, ok := db.Lookup(p[0]); !ok || v != p[1] {
			t.Fatalf("Lookup(%q) = %q, %v; want %q", p[0], v, ok, p[1])
		}
	}
	n := 0
	for k, v := range db.All() {
		n++
		if w, ok := want[k]; !ok || w != v {
			t.Fatalf("All() yields %q = %q, want %q (in the database: %v)", k, v, w, ok)
		}
	}
	if n != len(pairs) {
		t.Errorf("All() yields %d pairs, want %d", n, len(pairs))
	}
	for _, k := range absent {
		if v, ok := db.Lookup(k); ok {
			t.Errorf("Lookup(%q) of an absent key = %q", k, v)
		}
	}
}

// absentKeys are keys none of the test databases holds.
var absentKeys = []string{"", "nobody", "user", "USER1", "user1 ", "jürgen", "\x00", strings.Repeat("z", 2000)}

func TestSDBMEmpty(t *testing.T) {
	db, err := ParseSDBM(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSDBM(t, db, nil, absentKeys)
	// A page of zeros (a hole) and a block of zero bits: still empty.
	db, err = ParseSDBM(make([]byte, 3*sdbmPageSize), make([]byte, sdbmDirBlock))
	if err != nil {
		t.Fatal(err)
	}
	checkSDBM(t, db, nil, absentKeys)
	var nilDB *SDBM
	checkSDBM(t, nilDB, nil, absentKeys)
}

// TestSDBMWriter checks databases of many sizes made by sdbmWriter, with
// the hash of signed chars and of unsigned ones: ParseSDBM finds out
// which one laid out the keys.
func TestSDBMWriter(t *testing.T) {
	for _, unsigned := range []bool{false, true} {
		for _, n := range []int{1, 10, 100, 1000, 5000} {
			t.Run(fmt.Sprintf("unsigned=%v/%d", unsigned, n), func(t *testing.T) {
				pairs := testPairs(n, uint64(n))
				pag, dir := buildSDBM(t, unsigned, pairs)
				db, err := ParseSDBM(pag, dir)
				if err != nil {
					t.Fatal(err)
				}
				if n >= 1000 && (len(dir) == 0 || len(pag) < 100*sdbmPageSize) {
					t.Fatalf("%d pairs in %d pages and %d bytes of .dir: no splits?", n, len(pag)/sdbmPageSize, len(dir))
				}
				// The two hashes differ by a multiple of 256 (of 512
				// for an even number of bytes of 0x80 and above): the
				// pages of 5000 pairs tell them apart.
				if n == 5000 && db.unsignedChar != unsigned {
					t.Errorf("unsignedChar = %v, want %v", db.unsignedChar, unsigned)
				}
				checkSDBM(t, db, pairs, absentKeys)
			})
		}
	}
}

// TestSDBMWriterMatchesHttxt2dbm checks sdbmWriter, and so the reading of
// the format, against apr-util: httxt2dbm -f SDBM, given the same pairs
// in the same order, writes the same bytes. The keys include UTF-8, whose
// bytes x86 hashes as negative chars.
func TestSDBMWriterMatchesHttxt2dbm(t *testing.T) {
	httxt2dbm := needTool(t, "httxt2dbm")
	var pairs [][2]string
	var text strings.Builder
	for _, p := range testPairs(5000, 7) {
		if strings.ContainsAny(p[0]+p[1], " \t\r\n\v\f#") || len(p[0])+len(p[1]) > 1000 {
			continue // httxt2dbm splits on white space
		}
		pairs = append(pairs, p)
		fmt.Fprintf(&text, "%s %s\n", p[0], p[1])
	}
	dir := t.TempDir()
	txt, out := filepath.Join(dir, "pairs.txt"), filepath.Join(dir, "db")
	if err := os.WriteFile(txt, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(httxt2dbm, "-f", "SDBM", "-i", txt, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("httxt2dbm: %v\n%s", err, b)
	}
	gotPag, gotDir := readSDBMFiles(t, out)
	wantPag, wantDir := buildSDBM(t, false, pairs)
	if !bytes.Equal(gotPag, wantPag) || !bytes.Equal(gotDir, wantDir) {
		t.Errorf("httxt2dbm wrote %d+%d bytes that differ from sdbmWriter's %d+%d", len(gotPag), len(gotDir), len(wantPag), len(wantDir))
	}
	// With the hash of unsigned chars, the layout differs: the test
	// tells the two apart.
	if armPag, _ := buildSDBM(t, true, pairs); bytes.Equal(armPag, gotPag) {
		t.Error("the hash of unsigned chars gives the same layout: the keys do not test the sign of chars")
	}
	db, err := ParseSDBM(gotPag, gotDir)
	if err != nil {
		t.Fatal(err)
	}
	checkSDBM(t, db, pairs, absentKeys)
}

func readSDBMFiles(t testing.TB, base string) (pag, dir []byte) {
	t.Helper()
	pag, err := os.ReadFile(base + ".pag")
	if err != nil {
		t.Fatal(err)
	}
	dir, err = os.ReadFile(base + ".dir")
	if err != nil {
		t.Fatal(err)
	}
	return pag, dir
}

// TestSDBMMalformed checks that damaged databases give errors wrapping
// ErrSDBMMalformed, and no panic.
func TestSDBMMalformed(t *testing.T) {
	pairs := testPairs(2000, 3)
	pag, dir := buildSDBM(t, false, pairs)
	if _, err := ParseSDBM(pag, dir); err != nil {
		t.Fatal(err)
	}
	// pageWith returns the first page with at least n pairs.
	pageWith := func(n int) int {
		for p := range len(pag) / sdbmPageSize {
			if ino(pag[p*sdbmPageSize:], 0) >= 2*n {
				return p
			}
		}
		t.Fatalf("no page with %d pairs", n)
		return 0
	}
	p := pageWith(3)
	pg := func(b []byte) []byte { return b[p*sdbmPageSize : (p+1)*sdbmPageSize] }
	n := ino(pg(pag), 0)
	tests := []struct {
		name     string
		pag, dir func() []byte
	}{
		{"pag truncated by a byte", func() []byte { return pag[:len(pag)-1] }, nil},
		{"pag truncated mid-page", func() []byte { return pag[:len(pag)-sdbmPageSize/2] }, nil},
		{"pag with a byte more", func() []byte { return append(bytes.Clone(pag), 0) }, nil},
		{"dir truncated by a byte", nil, func() []byte { return dir[:len(dir)-1] }},
		{"dir truncated mid-block", nil, func() []byte { return dir[:sdbmDirBlock/2] }},
		{"dir too large", nil, func() []byte { return make([]byte, sdbmMaxDirLen) }},
		{"negative count", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 0, -2); return b }, nil},
		{"odd count", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 0, n-1); return b }, nil},
		{"count past the page", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 0, 600); return b }, nil},
		{"count over the data", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 0, n+2); return b }, nil},
		{"key offset past the page", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 1, 2000); return b }, nil},
		{"key offset into the index", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 3, 2); return b }, nil},
		{"value offset after its key", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 2, ino(pg(b), 1)+1); return b }, nil},
		{"empty key", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 3, ino(pg(b), 2)); return b }, nil},
		{"negative offset", func() []byte { b := bytes.Clone(pag); setIno(pg(b), 4, -5); return b }, nil},
		{"key on the wrong page", func() []byte {
			b := bytes.Clone(pag)
			q := (p + 1) % (len(pag) / sdbmPageSize)
			copy(b[q*sdbmPageSize:(q+1)*sdbmPageSize], pg(pag)) // page p twice
			return b
		}, nil},
		{"split bit cleared", nil, func() []byte { b := bytes.Clone(dir); b[0] &^= 1; return b }},
		{"split bits all set", nil, func() []byte {
			b := bytes.Clone(dir)
			for i := range b {
				b[i] = 0xff
			}
			return b
		}},
	}
	// Hand-made pages: a key twice on its page (apr_dbm_store replaces
	// a key), and a key on page 0 of a split database whose hash leads
	// to page 1.
	twice := make([]byte, sdbmPageSize)
	putpair(twice, []byte("alice"), []byte("1"))
	putpair(twice, []byte("bob"), []byte("2"))
	putpair(twice, []byte("alice"), []byte("3"))
	odd := "a"
	for sdbmHash([]byte(odd), false)&1 == 0 {
		odd += "a"
	}
	wrong := make([]byte, 2*sdbmPageSize)
	putpair(wrong, []byte(odd), []byte("x"))
	split := make([]byte, sdbmDirBlock)
	split[0] = 1
	if _, err := ParseSDBM(wrong, nil); err != nil {
		t.Fatalf("%q on page 0 of an unsplit database: %v", odd, err)
	}
	tests = append(tests, []struct {
		name     string
		pag, dir func() []byte
	}{
		{"key twice on its page", func() []byte { return twice }, func() []byte { return nil }},
		{"key on the other half of a split", func() []byte { return wrong }, func() []byte { return split }},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg, dr := pag, dir
			if tt.pag != nil {
				pg = tt.pag()
			}
			if tt.dir != nil {
				dr = tt.dir()
			}
			db, err := ParseSDBM(pg, dr)
			if !errors.Is(err, ErrSDBMMalformed) || db != nil {
				t.Errorf("ParseSDBM = %v, %v; want an ErrSDBMMalformed", db, err)
			}
		})
	}
}

// TestSDBMRandomDamage flips bytes of a database at random: ParseSDBM
// never panics, and a database it accepts is consistent.
func TestSDBMRandomDamage(t *testing.T) {
	pag, dir := buildSDBM(t, false, testPairs(500, 9))
	rng := rand.New(rand.NewPCG(5, 6))
	accepted := 0
	for range 1500 {
		p, d := bytes.Clone(pag), bytes.Clone(dir)
		for range 1 + rng.IntN(3) {
			if len(d) > 0 && rng.IntN(8) == 0 {
				d[rng.IntN(len(d))] ^= byte(1 << rng.IntN(8))
			} else {
				p[rng.IntN(len(p))] ^= byte(1 << rng.IntN(8))
			}
		}
		if db := checkConsistent(t, p, d); db != nil {
			accepted++
		}
	}
	t.Logf("%d of 1500 damaged databases accepted (damage in values or free space)", accepted)
}

// checkConsistent parses pag and dir and, if they are accepted, checks
// that every pair iteration yields is found by lookup with the same
// value. It returns the database, or nil.
func checkConsistent(t testing.TB, pag, dir []byte) *SDBM {
	db, err := ParseSDBM(pag, dir)
	if err != nil {
		if !errors.Is(err, ErrSDBMMalformed) || db != nil {
			t.Fatalf("ParseSDBM = %v, %v", db, err)
		}
		return nil
	}
	n := 0
	for k, v := range db.All() {
		n++
		if got, ok := db.Lookup(k); !ok || got != v {
			t.Fatalf("All() yields %q = %q, Lookup gives %q, %v", k, v, got, ok)
		}
	}
	if n != db.Len() {
		t.Fatalf("All() yields %d pairs, Len() = %d", n, db.Len())
	}
	return db
}

func FuzzSDBM(f *testing.F) {
	for i, n := range []int{0, 1, 5, 30, 120} {
		pag, dir := buildSDBM(f, i%2 == 1, testPairs(n, uint64(i)))
		f.Add(pag, dir, false)
	}
	f.Add([]byte{4, 0, 0xfb, 3, 0xf0, 3}, []byte{1}, true)
	f.Add([]byte{2, 0, 0xff, 0x03, 0x00, 0x04}, []byte{}, true)
	f.Fuzz(func(t *testing.T, pag, dir []byte, pad bool) {
		if len(pag) > 64*sdbmPageSize || len(dir) > 2*sdbmDirBlock {
			return
		}
		if pad {
			// Round up to whole pages and blocks, so that the fuzzer
			// gets past the length checks.
			pag = append(pag, make([]byte, (sdbmPageSize-len(pag)%sdbmPageSize)%sdbmPageSize)...)
			dir = append(dir, make([]byte, (sdbmDirBlock-len(dir)%sdbmDirBlock)%sdbmDirBlock)...)
		}
		db := checkConsistent(t, pag, dir)
		if db == nil {
			return
		}
		u, uerrs := usersFromSDBM("fuzz", db)
		g, _ := groupsFromSDBM("fuzz", db)
		nul := 0
		for k := range db.All() {
			if strings.IndexByte(k, 0) >= 0 {
				nul++
			} else if _, ok := u.users[k]; !ok || !g.Has(k) {
				t.Fatalf("user %q of the database not found in Users or Groups", k)
			}
		}
		if u.Len()+nul != db.Len() || len(uerrs) != u.Unsupported()+nul {
			t.Fatalf("Users of %d records: %d users, %d errors, %d unsupported, %d keys with NUL", db.Len(), u.Len(), len(uerrs), u.Unsupported(), nul)
		}
	})
}
