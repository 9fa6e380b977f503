package authfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
)

// The geometry of an SDBM database as apr-util writes it
// (dbm/sdbm/sdbm_private.h: DBLKSIZ, PBLKSIZ; sdbm_tune.h: BYTESIZ).
const (
	sdbmPageSize  = 1024 // bytes in a page of the .pag file
	sdbmDirBlock  = 4096 // bytes in a block of the .dir file
	sdbmMaxDirLen = 1 << 27
)

// ErrSDBMMalformed marks an SDBM database whose .pag or .dir file is not
// in the form apr-util writes: truncated, or with a page whose entries
// are out of bounds or out of order, or a key stored where its hash does
// not lead.
var ErrSDBMMalformed = errors.New("malformed SDBM database")

// SDBM is a read-only SDBM database: the DBM format built into apr-util
// (dbm/sdbm/ of apr-util 1.x, apr 2), which AuthDBMType SDBM names. It is
// immutable and safe for concurrent use.
//
// A database is two files. NAME.pag is a sequence of 1024-byte pages;
// each page begins with a count n of 16-bit offsets and the offsets
// themselves, which alternate between the start of a key and the start
// of its value, the pairs being packed from the end of the page
// downwards (sdbm_pair.c). NAME.dir is a bitmap: bit d is set when the
// page of node d of the binary trie of hash prefixes has been split. A key
// is found by hashing it (sdbm_hash.c) and walking the trie from the root
// along the bits of the hash, low bit first, while the bit of the current
// node is set; the page is then the hash masked to the bits used
// (getpage in sdbm.c). Pages the .pag file does not reach are empty.
//
// The offsets are in the byte order of the machine that wrote the file;
// SDBM reads them little-endian, as x86 and ARM write them.
type SDBM struct {
	pag []byte
	dir []byte
	// unsignedChar is set when the keys are laid out by the hash of a
	// platform where C's char is unsigned (ARM, for one): sdbm_hash adds
	// the bytes of the key as chars, which x86 sign-extends.
	unsignedChar bool
	n            int // number of pairs
}

// ParseSDBM returns the database whose .pag and .dir files hold pag and
// dir. It checks the whole database, and returns an error wrapping
// ErrSDBMMalformed for a file apr-util would not have written:
//
//   - a .pag file whose length is not a multiple of 1024, or a .dir file
//     whose length is not a multiple of 4096 (apr-util writes whole pages
//     and blocks; a shorter file is a truncated copy), or a .dir of 128
//     MiB or more;
//   - a page whose count is negative or odd, or whose offsets are not in
//     order, or point into the offsets themselves or past the page (what
//     chkpage of sdbm_pair.c refuses, and a little more);
//   - an empty key, which apr_sdbm_store refuses to write;
//   - a key on a page that the hash of the key does not lead to, or a key
//     twice on its page: apr_sdbm_fetch would never find that pair, though
//     apr_sdbm_nextkey lists it.
//
// Where apr-util returns an error only for the lookups that reach a bad
// page, ParseSDBM refuses the whole database, so that a damaged file
// fails closed rather than losing some of its users.
func ParseSDBM(pag, dir []byte) (*SDBM, error) {
	if len(pag)%sdbmPageSize != 0 {
		return nil, fmt.Errorf("%w: .pag file of %d bytes, not a whole number of %d-byte pages (truncated?)", ErrSDBMMalformed, len(pag), sdbmPageSize)
	}
	if len(dir)%sdbmDirBlock != 0 {
		return nil, fmt.Errorf("%w: .dir file of %d bytes, not a whole number of %d-byte blocks (truncated?)", ErrSDBMMalformed, len(dir), sdbmDirBlock)
	}
	if len(dir) >= sdbmMaxDirLen {
		// Its bits would let the walk of getpage use hash bit 31 and
		// beyond, where the C code shifts an int too far.
		return nil, fmt.Errorf("%w: .dir file of %d bytes, too large", ErrSDBMMalformed, len(dir))
	}
	db := &SDBM{pag: pag, dir: dir}
	for p := range len(pag) / sdbmPageSize {
		n, err := checkPage(db.page(int64(p)))
		if err != nil {
			return nil, fmt.Errorf("%w: page %d: %v", ErrSDBMMalformed, p, err)
		}
		db.n += n
	}
	// Every key must be where its hash leads: try the hash of a signed
	// char first, then that of an unsigned one. They differ only for keys
	// with bytes of 0x80 and above.
	err := db.checkPlacement()
	if err != nil {
		db.unsignedChar = true
		if db.checkPlacement() != nil {
			return nil, err
		}
	}
	return db, nil
}

// page returns page p of the .pag file, or nil if the file does not reach
// it.
func (db *SDBM) page(p int64) []byte {
	off := p * sdbmPageSize
	if p < 0 || off >= int64(len(db.pag)) {
		return nil
	}
	return db.pag[off : off+sdbmPageSize]
}

// entry returns offset i of page pg (0 being the count).
func entry(pg []byte, i int) int {
	return int(int16(binary.LittleEndian.Uint16(pg[2*i:])))
}

// checkPage checks the index of a page and returns its number of pairs.
func checkPage(pg []byte) (int, error) {
	n := entry(pg, 0)
	switch {
	case n < 0 || n%2 != 0:
		return 0, fmt.Errorf("bad count %d", n)
	case (n+1)*2 > sdbmPageSize:
		return 0, fmt.Errorf("count %d too large for a page", n)
	}
	end := sdbmPageSize
	for i := 1; i <= n; i += 2 {
		k, v := entry(pg, i), entry(pg, i+1)
		switch {
		case k < (n+1)*2 || k > end:
			return 0, fmt.Errorf("key %d: offset %d out of bounds", i/2, k)
		case k == end:
			return 0, fmt.Errorf("key %d: empty", i/2)
		case v < (n+1)*2 || v > k:
			return 0, fmt.Errorf("value %d: offset %d out of bounds", i/2, v)
		}
		end = v
	}
	return n / 2, nil
}

// pair returns pair j of page pg, which checkPage accepted.
func pair(pg []byte, j int) (key, val []byte) {
	end := sdbmPageSize
	if j > 0 {
		end = entry(pg, 2*j)
	}
	k, v := entry(pg, 2*j+1), entry(pg, 2*j+2)
	return pg[k:end], pg[v:k]
}

// checkPlacement checks that each key is on the page its hash leads to,
// and on it once.
func (db *SDBM) checkPlacement() error {
	for p := range len(db.pag) / sdbmPageSize {
		pg := db.page(int64(p))
		n := entry(pg, 0) / 2
		for j := range n {
			key, _ := pair(pg, j)
			if want := db.pageOf(key); want != int64(p) {
				return fmt.Errorf("%w: page %d holds key %q, which hashes to page %d", ErrSDBMMalformed, p, key, want)
			}
			for i := range j {
				if k, _ := pair(pg, i); string(k) == string(key) {
					return fmt.Errorf("%w: page %d holds key %q twice", ErrSDBMMalformed, p, key)
				}
			}
		}
	}
	return nil
}

// sdbmHash is sdbm_hash of sdbm_hash.c: n = c + 65599*n over the bytes c
// of the key, each taken as a C char, signed (as on x86) unless unsigned
// is set. Only the low 31 bits are ever used, so 32-bit arithmetic gives
// the bits of the C long that matter.
func sdbmHash(key []byte, unsigned bool) uint32 {
	var n uint32
	for _, c := range key {
		if unsigned {
			n = uint32(c) + 65599*n
		} else {
			n = uint32(int32(int8(c))) + 65599*n
		}
	}
	return n
}

// pageOf returns the page key belongs on, walking the split bits of the
// .dir file as getpage of sdbm.c does.
func (db *SDBM) pageOf(key []byte) int64 {
	h := sdbmHash(key, db.unsignedChar)
	maxbno := int64(len(db.dir)) * 8
	var dbit int64
	hbit := 0
	for dbit < maxbno && db.dir[dbit/8]&(1<<(dbit%8)) != 0 {
		// ParseSDBM keeps maxbno at most 2^30, so hbit stays below 31.
		if h&(1<<hbit) != 0 {
			dbit = 2*dbit + 2
		} else {
			dbit = 2*dbit + 1
		}
		hbit++
	}
	return int64(h & (1<<hbit - 1))
}

// Lookup returns the value of key, as apr_sdbm_fetch finds it. An empty
// key is never found (apr_sdbm_fetch refuses it).
func (db *SDBM) Lookup(key string) (string, bool) {
	if db == nil || key == "" {
		return "", false
	}
	pg := db.page(db.pageOf([]byte(key)))
	if pg == nil {
		return "", false // a page past the end reads as zeros
	}
	for j := range entry(pg, 0) / 2 {
		if k, v := pair(pg, j); string(k) == key {
			return string(v), true
		}
	}
	return "", false
}

// All returns the pairs of the database in the order of
// apr_sdbm_firstkey and apr_sdbm_nextkey: page by page, and on each page
// in the order of its index.
func (db *SDBM) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if db == nil {
			return
		}
		for p := range len(db.pag) / sdbmPageSize {
			pg := db.page(int64(p))
			for j := range entry(pg, 0) / 2 {
				k, v := pair(pg, j)
				if !yield(string(k), string(v)) {
					return
				}
			}
		}
	}
}

// Len returns the number of pairs in the database.
func (db *SDBM) Len() int {
	if db == nil {
		return 0
	}
	return db.n
}
