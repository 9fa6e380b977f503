// Package swar tests eight bytes at a time, held in a uint64 ("SIMD
// within a register"): for the passes over whole files and reports that
// look for a few bytes among megabytes.
package swar

// Ones has 1 in every byte; c*Ones has c in every byte.
const Ones = 0x0101010101010101

const (
	highs = 0x8080808080808080
	lows  = 0x7f7f7f7f7f7f7f7f
)

// Load returns the eight bytes of s from i, the first in the lowest bits
// (the compiler makes it one load). s must have them.
func Load[T string | []byte](s T, i int) uint64 {
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// Zero returns the high bit of each zero byte of x, exactly, and no other
// bit: x^(c*Ones) gives the bytes equal to c.
func Zero(x uint64) uint64 {
	return ^((x&lows + lows) | x) & highs
}

// HasLess reports whether a byte of x is below c, for c up to 0x80. A
// byte below c borrows into its high bit when c is taken from it, and had
// that bit clear; a borrow can set a byte's high bit above it too, but
// only above a true one, so the answer is exact.
func HasLess(x uint64, c byte) bool {
	return (x-uint64(c)*Ones)&^x&highs != 0
}
