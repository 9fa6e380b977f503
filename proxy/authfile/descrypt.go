package authfile

// This file implements the traditional DES-based crypt(3) of Unix, the
// format of htpasswd -d and the Unix default of htpasswd before httpd
// 2.2.18. No maintained pure-Go implementation is served by the Go module
// proxy, and the standard library's crypto/des can't be used: crypt(3)
// alters the cipher itself.
//
// The algorithm is that of the crypt(3) of Seventh Edition Unix (1979),
// described by Robert Morris and Ken Thompson in "Password Security: A
// Case History" (Communications of the ACM 22(11), 1979), and kept
// unchanged by every Unix since, including glibc and libxcrypt:
//
//   - the key is the first 8 bytes of the password, each shifted left by
//     one bit, so that only its low 7 bits count;
//   - the two salt characters give 12 bits; where bit k is set (k = 0 is
//     the lowest bit of the first character), outputs k and k+24 of the
//     DES expansion function E are swapped;
//   - a block of zero bits is encrypted 25 times in a row with this DES;
//   - the result is the salt followed by the 64 bits of the last block, 6
//     at a time from the most significant, padded with two zero bits, as
//     11 characters of the alphabet ./0-9A-Za-z.
//
// DES itself is as specified in FIPS PUB 46-3; the tables below are
// copied from it.

import (
	"crypto/subtle"
	"math/bits"

	"github.com/tg123/go-htpasswd"
)

// cryptAlphabet is the alphabet of crypt(3) in the order of its values.
const cryptAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// cryptValue returns the value of c in cryptAlphabet and whether c is in
// it.
func cryptValue(c byte) (uint32, bool) {
	switch {
	case c >= 'a' && c <= 'z':
		return uint32(c-'a') + 38, true
	case c >= 'A' && c <= 'Z':
		return uint32(c-'A') + 12, true
	case c >= '.' && c <= '9':
		return uint32(c - '.'), true
	}
	return 0, false
}

// isCryptText reports whether s is made of characters of cryptAlphabet
// only. (The bcrypt alphabet is the same set in another order.)
func isCryptText(s string) bool {
	for i := 0; i < len(s); i++ {
		if _, ok := cryptValue(s[i]); !ok {
			return false
		}
	}
	return true
}

// Permuted choice 1, FIPS 46-3 appendix 1: 56 of the 64 key bits.
var pc1 = [56]uint8{
	57, 49, 41, 33, 25, 17, 9,
	1, 58, 50, 42, 34, 26, 18,
	10, 2, 59, 51, 43, 35, 27,
	19, 11, 3, 60, 52, 44, 36,
	63, 55, 47, 39, 31, 23, 15,
	7, 62, 54, 46, 38, 30, 22,
	14, 6, 61, 53, 45, 37, 29,
	21, 13, 5, 28, 20, 12, 4,
}

// Permuted choice 2: 48 of the 56 bits of C and D.
var pc2 = [48]uint8{
	14, 17, 11, 24, 1, 5,
	3, 28, 15, 6, 21, 10,
	23, 19, 12, 4, 26, 8,
	16, 7, 27, 20, 13, 2,
	41, 52, 31, 37, 47, 55,
	30, 40, 51, 45, 33, 48,
	44, 49, 39, 56, 34, 53,
	46, 42, 50, 36, 29, 32,
}

// Left shifts of C and D before each of the 16 rounds.
var keyShifts = [16]uint8{1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1}

// The permutation P applied to the output of the S-boxes.
var pPerm = [32]uint8{
	16, 7, 20, 21, 29, 12, 28, 17,
	1, 15, 23, 26, 5, 18, 31, 10,
	2, 8, 24, 14, 32, 27, 3, 9,
	19, 13, 30, 6, 22, 11, 4, 25,
}

// The final permutation, the inverse of the initial permutation IP.
var finalPerm = [64]uint8{
	40, 8, 48, 16, 56, 24, 64, 32,
	39, 7, 47, 15, 55, 23, 63, 31,
	38, 6, 46, 14, 54, 22, 62, 30,
	37, 5, 45, 13, 53, 21, 61, 29,
	36, 4, 44, 12, 52, 20, 60, 28,
	35, 3, 43, 11, 51, 19, 59, 27,
	34, 2, 42, 10, 50, 18, 58, 26,
	33, 1, 41, 9, 49, 17, 57, 25,
}

// The S-boxes S1 to S8, each as 4 rows of 16.
var sBoxes = [8][64]uint8{
	{
		14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7,
		0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8,
		4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0,
		15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13,
	},
	{
		15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10,
		3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5,
		0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15,
		13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9,
	},
	{
		10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8,
		13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1,
		13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7,
		1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12,
	},
	{
		7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15,
		13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9,
		10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4,
		3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14,
	},
	{
		2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9,
		14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6,
		4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14,
		11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3,
	},
	{
		12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11,
		10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8,
		9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6,
		4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13,
	},
	{
		4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1,
		13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6,
		1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2,
		6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12,
	},
	{
		13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7,
		1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2,
		7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8,
		2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11,
	},
}

// spBoxes[i][x] is P applied to the output of S-box i+1 for the 6-bit
// input x, in its place among the 32 output bits.
var spBoxes = func() (sp [8][64]uint32) {
	for i := range sp {
		for x := range uint32(64) {
			row := x>>4&2 | x&1
			col := x >> 1 & 0xf
			s := uint64(sBoxes[i][row*16+col]) << (28 - 4*i)
			sp[i][x] = uint32(permute(s, 32, pPerm[:]))
		}
	}
	return sp
}()

// permute returns the bits of the n-bit value in that table names, as a
// len(table)-bit value. Bits are numbered from 1, the most significant,
// as in FIPS 46-3.
func permute(in uint64, n int, table []uint8) uint64 {
	var out uint64
	for _, p := range table {
		out = out<<1 | in>>(n-int(p))&1
	}
	return out
}

// desCrypt returns the traditional crypt(3) of password with the salt
// made of salt0 and salt1, which must be in cryptAlphabet.
func desCrypt(password string, salt0, salt1 byte) [13]byte {
	// The key: 7 bits of each of the first 8 bytes, up to a NUL.
	var key uint64
	for i := 0; i < 8 && i < len(password) && password[i] != 0; i++ {
		key |= uint64(password[i]<<1) << (56 - 8*i)
	}

	// The key schedule, each 48-bit subkey split in two 24-bit halves.
	var ks [16][2]uint32
	cd := permute(key, 64, pc1[:])
	c, d := uint32(cd>>28), uint32(cd&0x0fffffff)
	for i, s := range keyShifts {
		c = (c<<s | c>>(28-s)) & 0x0fffffff
		d = (d<<s | d>>(28-s)) & 0x0fffffff
		k := permute(uint64(c)<<28|uint64(d), 56, pc2[:])
		ks[i] = [2]uint32{uint32(k >> 24), uint32(k & 0xffffff)}
	}

	// Bit 23-k of saltMask is salt bit k: outputs k and k+24 of E, which
	// are bit 23-k of the two halves below, are swapped.
	v0, _ := cryptValue(salt0)
	v1, _ := cryptValue(salt1)
	var saltMask uint32
	for k := range 12 {
		if (v0|v1<<6)>>k&1 != 0 {
			saltMask |= 1 << (23 - k)
		}
	}

	// The initial permutation of a zero block is a zero block, and the
	// final permutation of one encryption is undone by the initial one of
	// the next, so only the last final permutation is done.
	var l, r uint32
	for range 25 {
		for i := range ks {
			l, r = r, l^feistel(r, ks[i][0], ks[i][1], saltMask)
		}
		l, r = r, l
	}
	sum := permute(uint64(l)<<32|uint64(r), 64, finalPerm[:])

	var out [13]byte
	out[0], out[1] = salt0, salt1
	for i := range 10 {
		out[2+i] = cryptAlphabet[sum>>(58-6*i)&0x3f]
	}
	out[12] = cryptAlphabet[sum<<2&0x3f]
	return out
}

// feistel is the DES round function f(R, K) with the expansion E altered
// by saltMask; ka and kb are the halves of the subkey K.
func feistel(r, ka, kb, saltMask uint32) uint32 {
	// E takes 8 overlapping groups of 6 bits; group i is bits 4i to 4i+5
	// of R, numbered cyclically from 1 (so bit 0 is bit 32). Rotating R
	// left by 4i+5 brings that group to the lowest 6 bits.
	a := (bits.RotateLeft32(r, 5)&0x3f)<<18 | (bits.RotateLeft32(r, 9)&0x3f)<<12 |
		(bits.RotateLeft32(r, 13)&0x3f)<<6 | bits.RotateLeft32(r, 17)&0x3f
	b := (bits.RotateLeft32(r, 21)&0x3f)<<18 | (bits.RotateLeft32(r, 25)&0x3f)<<12 |
		(bits.RotateLeft32(r, 29)&0x3f)<<6 | bits.RotateLeft32(r, 1)&0x3f
	t := (a ^ b) & saltMask
	a ^= t ^ ka
	b ^= t ^ kb
	return spBoxes[0][a>>18] | spBoxes[1][a>>12&0x3f] | spBoxes[2][a>>6&0x3f] | spBoxes[3][a&0x3f] |
		spBoxes[4][b>>18] | spBoxes[5][b>>12&0x3f] | spBoxes[6][b>>6&0x3f] | spBoxes[7][b&0x3f]
}

// desPassword is a traditional DES crypt(3) hash.
type desPassword [13]byte

// acceptDES is the htpasswd.PasswdParser of traditional DES crypt(3): it
// accepts a hash of 13 characters of cryptAlphabet.
func acceptDES(hash string) (htpasswd.EncodedPasswd, error) {
	if len(hash) != 13 || !isCryptText(hash) {
		return nil, nil
	}
	var p desPassword
	copy(p[:], hash)
	return &p, nil
}

// MatchesPassword reports whether pw hashes to p; the comparison takes
// the same time wherever the hashes differ.
func (p *desPassword) MatchesPassword(pw string) bool {
	sum := desCrypt(pw, p[0], p[1])
	return subtle.ConstantTimeCompare(sum[:], p[:]) == 1
}
